"""Trigonometric and hyperbolic functions: sin, cos, tan, their inverses (asin/arcsin, acos/arccos,
atan/arctan), sinh, cosh, tanh and their inverses (asinh/arcsinh, acosh/arccosh, atanh/arctanh), each
with its in-place variant. (atan2 takes two inputs: see ``binary.py``.)
"""
import math

from ...autograd.node import Node
from .._common import quiet_errors, xp_of
from ..activation_backward import tanh_backward
from ..registry import tensor_method
from ._common import _floating, define_unary_ops

__all__ = ["sin", "cos", "tan", "asin", "arcsin", "acos", "arccos", "atan", "arctan", "sinh", "cosh", "tanh",
           "sin_", "cos_", "tan_", "asin_", "arcsin_", "acos_", "arccos_", "atan_", "arctan_",
           "sinh_", "cosh_", "tanh_", "asinh", "arcsinh", "acosh", "arccosh", "atanh", "arctanh",
           "asinh_", "arcsinh_", "acosh_", "arccosh_", "atanh_", "arctanh_", "deg2rad", "rad2deg",
           "deg2rad_", "rad2deg_"]


# ================================================================ trigonometric
class SinBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).sin(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * a.cos()


class CosBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).cos(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * -a.sin()


class TanBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        with quiet_errors():
            return xp_of(a).tan(_floating(a))

    def backward(ctx, grad):
        r = ctx.saved_result
        return grad * (1 + r * r)


class AsinBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).arcsin(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * (1 - a * a).rsqrt()


class AcosBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).arccos(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * -(1 - a * a).rsqrt()


class AtanBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).arctan(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad / (a * a + 1)


# ================================================================ hyperbolic
class SinhBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).sinh(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * a.cosh()


class CoshBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).cosh(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * a.sinh()


class TanhBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        return xp_of(a).tanh(_floating(a))

    def backward(ctx, grad):
        return tanh_backward(grad, ctx.saved_result)


class AsinhBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).arcsinh(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * (a * a + 1).rsqrt()


class AcoshBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).arccosh(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        if a._dtype.is_complex:   # the branch of arccosh itself: sqrt(a - 1) sqrt(a + 1), not sqrt(a^2 - 1)
            return grad / ((a - 1).sqrt() * (a + 1).sqrt())
        # PyTorch's a*a - 1: +0 at a = -1 (a gradient of +inf as at a = 1), where (a-1)(a+1) is -0 (-inf)
        return grad * (a * a - 1).rsqrt()


class AtanhBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).arctanh(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * (1 - a * a).reciprocal()


_UNARY = [
    # (node, names of the function/method, names of the in-place method)
    (SinBackward0, ("sin",), ("sin_",)),
    (CosBackward0, ("cos",), ("cos_",)),
    (TanBackward0, ("tan",), ("tan_",)),
    (AsinBackward0, ("asin", "arcsin"), ("asin_", "arcsin_")),
    (AcosBackward0, ("acos", "arccos"), ("acos_", "arccos_")),
    (AtanBackward0, ("atan", "arctan"), ("atan_", "arctan_")),
    (SinhBackward0, ("sinh",), ("sinh_",)),
    (CoshBackward0, ("cosh",), ("cosh_",)),
    (TanhBackward0, ("tanh",), ("tanh_",)),
    (AsinhBackward0, ("asinh", "arcsinh"), ("asinh_", "arcsinh_")),
    (AcoshBackward0, ("acosh", "arccosh"), ("acosh_", "arccosh_")),
    (AtanhBackward0, ("atanh", "arctanh"), ("atanh_", "arctanh_")),
]

define_unary_ops(_UNARY, globals())


@tensor_method("deg2rad")
def deg2rad(input):
    """Degrees to radians (integers and bools give the default float dtype); a composite, so
    differentiable."""
    return input * (math.pi / 180.0)


@tensor_method("rad2deg")
def rad2deg(input):
    """Radians to degrees (integers and bools give the default float dtype)."""
    return input * (180.0 / math.pi)


@tensor_method("deg2rad_")
def deg2rad_(self):
    """In-place degrees to radians (a floating tensor: an integer one cannot hold the result)."""
    return self.mul_(math.pi / 180.0)


@tensor_method("rad2deg_")
def rad2deg_(self):
    """In-place radians to degrees (a floating tensor)."""
    return self.mul_(180.0 / math.pi)
