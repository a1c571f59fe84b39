"""Sign and rounding: sign, sgn, floor, ceil, trunc/fix, round (also to ``decimals`` digits) and
frac, each with its in-place variant. All but frac are piecewise constant: zero gradient.
Integer inputs keep their dtype; bool inputs are refused like in PyTorch.
"""
from ... import _dtype
from ..._dispatch import apply, apply_inplace
from ...autograd.node import Node
from .._common import quiet_errors, write_out, xp_of
from ..registry import tensor_method
from ._common import _not_implemented, define_unary_ops

__all__ = ["sign", "sgn", "floor", "ceil", "round", "trunc", "fix", "frac",
           "floor_", "ceil_", "round_", "trunc_", "fix_", "frac_"]


def _zeros(grad):
    """The zero gradient of ops that are piecewise constant (rounding, sign)."""
    from ..creation import zeros_like
    return zeros_like(grad)


# ================================================================ sign and rounding
class SignBackward0(Node):
    def forward(ctx, a):
        x = a._data
        if a._dtype is _dtype.bool:
            return x.copy()
        if a._dtype._category == 1:
            return xp_of(a).sign(x)
        # (x > 0) - (x < 0): 0 for NaN, as PyTorch
        pos = (x > 0).astype(x.dtype)
        pos -= x < 0
        return pos

    def backward(ctx, grad):
        return _zeros(grad)


class SgnBackward0(SignBackward0):
    """``sign`` for real tensors; ``s = z / |z|`` (0 where ``z`` is 0) for complex ones, whose
    gradient (PyTorch's conjugate-Wirtinger convention) is ``(g - s Re(conj(g) s)) / |z|``, 0 where
    ``z`` is 0: only the part of ``g`` that turns ``s`` along the unit circle moves it."""

    saves_result = True

    def forward(ctx, a):
        ctx.complex = a._dtype.is_complex
        if not ctx.complex:
            return SignBackward0.forward(ctx, a)
        ctx.save_for_backward(a)
        x = a._data
        size = xp_of(a).abs(x)
        return x / (size + (size == 0))

    def backward(ctx, grad):
        if not ctx.complex:
            return _zeros(grad)
        (a,) = ctx.saved_values
        s = ctx.saved_result
        size = a.abs()
        zero = size == 0
        along = grad - s * (grad.conj() * s).real
        return along / (size + zero) * ~zero


def _rounding_input(op, a):
    if a._dtype is _dtype.bool:
        raise _not_implemented(op, a)
    return a._data


class FloorBackward0(Node):
    def forward(ctx, a):
        x = _rounding_input("floor", a)
        return xp_of(a).floor(x) if a._dtype._category == 2 else x.copy()

    def backward(ctx, grad):
        return _zeros(grad)


class CeilBackward0(Node):
    def forward(ctx, a):
        x = _rounding_input("ceil", a)
        return xp_of(a).ceil(x) if a._dtype._category == 2 else x.copy()

    def backward(ctx, grad):
        return _zeros(grad)


class TruncBackward0(Node):
    def forward(ctx, a):
        x = _rounding_input("trunc", a)
        return xp_of(a).trunc(x) if a._dtype._category == 2 else x.copy()

    def backward(ctx, grad):
        return _zeros(grad)


class RoundBackward0(Node):
    """Round half to even."""

    def forward(ctx, a):
        x = _rounding_input("round", a)
        return xp_of(a).rint(x) if a._dtype._category == 2 else x.copy()

    def backward(ctx, grad):
        return _zeros(grad)


class RoundBackward1(Node):
    """Round half to even at ``decimals`` digits: ``rint(x * 10**d) / 10**d`` in the input dtype."""

    def forward(ctx, a, decimals):
        if a._dtype._category != 2:
            raise _not_implemented("round", a)
        xp = xp_of(a)
        with quiet_errors():
            if decimals > 0:
                scale = 10.0 ** decimals
                r = a._data * scale
                xp.rint(r, out=r)
                r /= scale
            else:
                scale = 10.0 ** -decimals
                r = a._data / scale
                xp.rint(r, out=r)
                r *= scale
        return r

    def backward(ctx, grad):
        return _zeros(grad)


class FracBackward0(Node):
    def forward(ctx, a):
        if a._dtype._category != 2:
            raise _not_implemented("frac", a)
        x = a._data
        with quiet_errors():
            return x - xp_of(a).trunc(x)

    def backward(ctx, grad):
        return grad


_UNARY = [
    # (node, names of the function/method, names of the in-place method)
    (SignBackward0, ("sign",), ("sign_",)),
    (SgnBackward0, ("sgn",), ("sgn_",)),
    (FloorBackward0, ("floor",), ("floor_",)),
    (CeilBackward0, ("ceil",), ("ceil_",)),
    (TruncBackward0, ("trunc", "fix"), ("trunc_", "fix_")),
    (FracBackward0, ("frac",), ("frac_",)),
]

define_unary_ops(_UNARY, globals())


@tensor_method("round")
def round(input, *, decimals=0, out=None):
    """Round half to even, to ``decimals`` decimal digits (negative: tens, hundreds, ...)."""
    if decimals == 0:
        return write_out(apply(RoundBackward0, input), out)
    return write_out(apply(RoundBackward1, input, int(decimals)), out)


@tensor_method("round_")
def round_(self, *, decimals=0):
    if decimals == 0:
        return apply_inplace(RoundBackward0, self)
    return apply_inplace(RoundBackward1, self, int(decimals))
