"""Exponentials, logarithms and roots: exp, exp2, expm1, log, log2, log10, log1p, sqrt and
rsqrt, each with its in-place variant. exp, sqrt and rsqrt differentiate through their output.
"""
import math

from ...autograd.node import Node
from .._common import array_rule, quiet_errors, xp_of
from ._common import _compute_dtype_array, _floating, define_unary_ops

__all__ = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
           "exp_", "exp2_", "expm1_", "log_", "log2_", "log10_", "log1p_", "sqrt_", "rsqrt_"]


_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


# ================================================================ exponentials and logarithms
class ExpBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        with quiet_errors():
            return xp_of(a).exp(_floating(a))

    def backward(ctx, grad):
        result = ctx.saved_result
        fast = array_rule(_times, grad, result)
        return grad * result if fast is None else fast


def _times(g, y):
    return g * y


class Exp2Backward0(Node):
    saves_result = True

    def forward(ctx, a):
        with quiet_errors():
            return xp_of(a).exp2(_floating(a))

    def backward(ctx, grad):
        return grad * ctx.saved_result * _LN2


class Expm1Backward0(Node):
    saves_result = True

    def forward(ctx, a):
        with quiet_errors():
            return xp_of(a).expm1(_floating(a))

    def backward(ctx, grad):
        return grad * (ctx.saved_result + 1)


class LogBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).log(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad / a


class Log2Backward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).log2(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad / (a * _LN2)


class Log10Backward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).log10(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad / (a * _LN10)


class Log1PBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).log1p(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad / (a + 1)


# ================================================================ roots
class SqrtBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        with quiet_errors():
            return xp_of(a).sqrt(_floating(a))

    def backward(ctx, grad):
        return grad / (2 * ctx.saved_result)


class RsqrtBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        xp = xp_of(a)
        x, back = _compute_dtype_array(a)
        with quiet_errors():
            r = xp.sqrt(x)
            xp.reciprocal(r, out=r)
        return r if back is None else r.astype(back)

    def backward(ctx, grad):
        return -0.5 * grad * ctx.saved_result ** 3


_UNARY = [
    # (node, names of the function/method, names of the in-place method)
    (ExpBackward0, ("exp",), ("exp_",)),
    (Exp2Backward0, ("exp2",), ("exp2_",)),
    (Expm1Backward0, ("expm1",), ("expm1_",)),
    (LogBackward0, ("log",), ("log_",)),
    (Log2Backward0, ("log2",), ("log2_",)),
    (Log10Backward0, ("log10",), ("log10_",)),
    (Log1PBackward0, ("log1p",), ("log1p_",)),
    (SqrtBackward0, ("sqrt",), ("sqrt_",)),
    (RsqrtBackward0, ("rsqrt",), ("rsqrt_",)),
]

define_unary_ops(_UNARY, globals())
