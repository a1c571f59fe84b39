"""The error functions erf, erfc and erfinv (the series and approximations live in
``special_math``), each with its in-place variant.
"""
import math

from ...autograd.node import Node
from .. import special_math
from .._common import xp_of
from ._common import _floating, define_unary_ops

__all__ = ["erf", "erfc", "erfinv", "erf_", "erfc_"]


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0


# ================================================================ error functions
class ErfBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return special_math.erf(_floating(a), xp_of(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * (-(a * a)).exp() * _TWO_OVER_SQRT_PI


class ErfcBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return special_math.erfc(_floating(a), xp_of(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * (-(a * a)).exp() * -_TWO_OVER_SQRT_PI


class ErfinvBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        return special_math.erfinv(_floating(a), xp_of(a))

    def backward(ctx, grad):
        r = ctx.saved_result
        return grad * (r * r).exp() * _SQRT_PI_OVER_TWO


_UNARY = [
    # (node, names of the function/method, names of the in-place method)
    (ErfBackward0, ("erf",), ("erf_",)),
    (ErfcBackward0, ("erfc",), ("erfc_",)),
    (ErfinvBackward0, ("erfinv",), ("erfinv_",)),
]

define_unary_ops(_UNARY, globals())
