"""Limiting values: clamp/clip (number or tensor bounds), clamp_min, clamp_max, and nan_to_num
(NaN and infinities replaced by finite numbers), each with its in-place variant.
"""
from ... import _dtype
from ..._dispatch import apply, apply_inplace
from ..._tensor import Tensor
from ...autograd.node import Node
from .._common import check_operand, grad_for, quiet_errors, stored_scalar, write_out, xp_of
from ..registry import tensor_method
from ..._type_info import finfo

__all__ = ["clamp", "clip", "clamp_min", "clamp_max", "nan_to_num",
           "clamp_", "clip_", "clamp_min_", "clamp_max_", "nan_to_num_"]


# ================================================================ clamping
def _clamp_dtype(a, bounds):
    present = [b for b in bounds if b is not None]
    return _dtype.result_dtype((a, *present)) if present else a._dtype


def _clip(xp, x, lo, hi):
    if lo is None:
        return xp.minimum(x, hi)
    if hi is None:
        return xp.maximum(x, lo)
    return xp.clip(x, lo, hi)


class ClampBackward1(Node):
    """clamp with Python-number bounds (either may be None)."""

    def forward(ctx, a, lo, hi):
        dt = _clamp_dtype(a, (lo, hi))
        x = a._data if dt is a._dtype else a._data.astype(dt.np)
        ctx.save_for_backward(a)
        ctx.lo, ctx.hi = lo, hi
        return _clip(xp_of(a), x, lo, hi)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        lo, hi = ctx.lo, ctx.hi
        if lo is None:
            keep = a <= hi
        elif hi is None:
            keep = a >= lo
        else:
            keep = (a >= lo) & (a <= hi)
        return grad * keep


class ClampBackward0(Node):
    """clamp with Tensor bounds (either may be None): gradients flow to the bound that was taken."""

    def forward(ctx, a, lo, hi):
        xp = xp_of(a)
        arrays, dt = _promoted_arrays(a, lo, hi)
        ctx.save_for_backward(a, lo, hi)
        return _clip(xp, *arrays)

    def backward(ctx, grad):
        a, lo, hi = ctx.saved_values
        need = ctx.needs_input_grad
        out = []
        if lo is not None and hi is not None:
            ga = grad * ((a >= lo) & (a <= hi))
            glo = grad * ((a < lo) & (lo < hi))
            ghi = grad * ((a > hi) | (hi < lo))
        elif lo is not None:
            ga, glo, ghi = grad * (a >= lo), grad * (a < lo), None
        else:
            ga, glo, ghi = grad * (a <= hi), None, grad * (a > hi)
        out.append(grad_for(ga, a) if need[0] else None)
        for bound, g in ((lo, glo), (hi, ghi)):
            if bound is not None:
                out.append(grad_for(g, bound) if need[len(out)] else None)
        return tuple(out)


class ClampMinBackward0(Node):
    def forward(ctx, a, lo):
        dt = _clamp_dtype(a, (lo,))
        ctx.save_for_backward(a)
        ctx.lo = lo
        x = a._data if dt is a._dtype else a._data.astype(dt.np)
        return xp_of(a).maximum(x, lo)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * (a >= ctx.lo)


class ClampMinBackward1(Node):
    def forward(ctx, a, lo):
        (x, y), _ = _promoted_arrays(a, lo)
        ctx.save_for_backward(a, lo)
        return xp_of(a).maximum(x, y)

    def backward(ctx, grad):
        a, lo = ctx.saved_values
        need = ctx.needs_input_grad
        return (grad_for(grad * (a >= lo), a) if need[0] else None,
                grad_for(grad * (a < lo), lo) if need[1] else None)


class ClampMaxBackward0(Node):
    def forward(ctx, a, hi):
        dt = _clamp_dtype(a, (hi,))
        ctx.save_for_backward(a)
        ctx.hi = hi
        x = a._data if dt is a._dtype else a._data.astype(dt.np)
        return xp_of(a).minimum(x, hi)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * (a <= ctx.hi)


class ClampMaxBackward1(Node):
    def forward(ctx, a, hi):
        (x, y), _ = _promoted_arrays(a, hi)
        ctx.save_for_backward(a, hi)
        return xp_of(a).minimum(x, y)

    def backward(ctx, grad):
        a, hi = ctx.saved_values
        need = ctx.needs_input_grad
        return (grad_for(grad * (a <= hi), a) if need[0] else None,
                grad_for(grad * (a > hi), hi) if need[1] else None)


def _promoted_arrays(*tensors):
    """The arrays of ``tensors`` (None entries kept) cast to their promoted dtype, and that dtype."""
    present = [t for t in tensors if t is not None]
    dt = _dtype.result_dtype(present)
    return [None if t is None else (t._data if t._dtype is dt else t._data.astype(dt.np))
            for t in tensors], dt


class NanToNumBackward0(Node):
    def forward(ctx, a, nan, posinf, neginf):
        x = a._data
        if a._dtype._category != 2:
            return x.copy()
        ctx.save_for_backward(a)
        xp = xp_of(a)
        with quiet_errors():
            return xp.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * a.isfinite()


def _clamp_node(name, input, min, max):
    if min is None and max is None:
        raise RuntimeError(f"torch.{name}: At least one of 'min' or 'max' must not be None")
    tensor_bounds = isinstance(min, Tensor) or isinstance(max, Tensor)
    if tensor_bounds:
        for bound in (min, max):
            if bound is not None and not isinstance(bound, Tensor):
                raise TypeError(f"{name}(): received an invalid combination of arguments: min and max "
                                f"must both be Tensors (or None) or both be Numbers (or None), got "
                                f"{type(min).__name__} and {type(max).__name__}")
        return ClampBackward0
    for bound, arg in ((min, "min"), (max, "max")):
        if bound is not None:
            check_operand(name, bound, arg)
    return ClampBackward1


def _stored_bound(input, bound):
    """A number bound that leaves ``input``'s dtype unchanged, as that dtype stores it (PyTorch wraps
    -1 into 255 for uint8 and refuses values that overflow); tensors and None pass unchanged."""
    if bound is None or isinstance(bound, Tensor) or _dtype.result_dtype((input, bound)) is not input._dtype:
        return bound
    return stored_scalar(bound, input._dtype)


def _mixed_bounds(min, max):
    """A tensor bound beside a number bound: a 0-d tensor is read as a number (PyTorch's argument
    parser does the same); any other tensor stays, and ``_clamp_node`` refuses the mix."""
    if (min is None or max is None) or isinstance(min, Tensor) == isinstance(max, Tensor):
        return min, max
    return tuple(b.item() if isinstance(b, Tensor) and b._data.ndim == 0 else b for b in (min, max))


@tensor_method("clamp", "clip")
def clamp(input, min=None, max=None, *, out=None):
    """Limit ``input`` to ``[min, max]``; the bounds are numbers or tensors (broadcast), either may be None.
    With ``min > max`` every element becomes ``max``."""
    min, max = _mixed_bounds(min, max)
    cls = _clamp_node("clamp", input, min, max)
    return write_out(apply(cls, input, _stored_bound(input, min), _stored_bound(input, max)), out)


clip = clamp


@tensor_method("clamp_", "clip_")
def clamp_(self, min=None, max=None):
    cls = _clamp_node("clamp", self, min, max)   # in place, PyTorch refuses mixed bounds even if 0-d
    return apply_inplace(cls, self, _stored_bound(self, min), _stored_bound(self, max))


clip_ = clamp_


@tensor_method("clamp_min")
def clamp_min(input, min, *, out=None):
    if isinstance(min, Tensor):
        return write_out(apply(ClampMinBackward1, input, min), out)
    check_operand("clamp_min", min, "min")
    min = _stored_bound(input, min)
    return write_out(apply(ClampMinBackward0, input, min), out)


@tensor_method("clamp_min_")
def clamp_min_(self, min):
    if isinstance(min, Tensor):
        return apply_inplace(ClampMinBackward1, self, min)
    check_operand("clamp_min_", min, "min")
    min = _stored_bound(self, min)
    return apply_inplace(ClampMinBackward0, self, min)


@tensor_method("clamp_max")
def clamp_max(input, max, *, out=None):
    if isinstance(max, Tensor):
        return write_out(apply(ClampMaxBackward1, input, max), out)
    check_operand("clamp_max", max, "max")
    max = _stored_bound(input, max)
    return write_out(apply(ClampMaxBackward0, input, max), out)


@tensor_method("clamp_max_")
def clamp_max_(self, max):
    if isinstance(max, Tensor):
        return apply_inplace(ClampMaxBackward1, self, max)
    check_operand("clamp_max_", max, "max")
    max = _stored_bound(self, max)
    return apply_inplace(ClampMaxBackward0, self, max)


def _nan_to_num_args(input, posinf, neginf):
    if input._dtype._category == 2:
        import numpy as np
        info = finfo(input._dtype)
        posinf = float(info.max) if posinf is None else posinf
        neginf = float(info.min) if neginf is None else neginf
    return posinf, neginf


@tensor_method("nan_to_num")
def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """NaN -> ``nan``, +inf -> ``posinf`` (default: largest finite), -inf -> ``neginf`` (default: lowest)."""
    posinf, neginf = _nan_to_num_args(input, posinf, neginf)
    return write_out(apply(NanToNumBackward0, input, nan, posinf, neginf), out)


@tensor_method("nan_to_num_")
def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    posinf, neginf = _nan_to_num_args(self, posinf, neginf)
    return apply_inplace(NanToNumBackward0, self, nan, posinf, neginf)
