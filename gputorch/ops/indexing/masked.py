"""Boolean masks: masked_fill, masked_select and masked_scatter (mask and input broadcast), and
nonzero/argwhere, the positions of the non-zero elements.
"""
import numbers

import numpy as np

from ... import _dtype
from ..._dispatch import apply, apply_inplace
from ..._tensor import Tensor
from ...autograd.node import Node
from .._common import quiet_errors, stored_scalar, sum_to_shape, xp_of
from ..registry import tensor_method
from ..._broadcast import broadcast_pair
from ._common import _c_name, _cast_values, _check_source_dtype, _grad_as, _on_device, _write
from .index_nodes import _scatter_into_zeros
from .parsing import Index

__all__ = ["masked_fill", "masked_select", "masked_scatter", "nonzero", "argwhere"]


def _check_mask(mask, name):
    if not isinstance(mask, Tensor):
        raise TypeError(f"{name}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    if mask._dtype is not _dtype.bool:
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype {_c_name(mask._dtype)}")


def _invert(mask):
    with _on_device(mask):
        return Tensor._make(~mask._data, mask._device, _dtype.bool)


class MaskedFillBackward0(Node):
    """``masked_fill`` with a number."""

    def forward(ctx, a, mask, value):
        ctx.in_shape, ctx.mask = a._data.shape, mask
        x = a._data
        xp = xp_of(a)
        with quiet_errors():
            v = _cast_values(value, a._dtype) if isinstance(value, Tensor) else xp.asarray(value, dtype=x.dtype)
        return a._device._backend.fill_where(mask._data, v, x)

    def backward(ctx, grad):
        return sum_to_shape(grad.masked_fill(ctx.mask, 0), ctx.in_shape), None


class MaskedFillBackward1(MaskedFillBackward0):
    """``masked_fill`` with a 0-d tensor (its gradient sums the masked positions)."""

    def forward(ctx, a, mask, value):
        ctx.value_dtype = value._dtype
        return MaskedFillBackward0.forward(ctx, a, mask, value)

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        ga = sum_to_shape(grad.masked_fill(ctx.mask, 0), ctx.in_shape) if need[0] else None
        gv = _grad_as(grad.masked_fill(_invert(ctx.mask), 0).sum(), ctx.value_dtype) if need[2] else None
        return ga, None, gv


def _masked_fill_args(self, mask, value, name):
    _check_mask(mask, name)
    broadcast_pair(mask._data.shape, self._data.shape)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        if self._dtype._category != 2:   # PyTorch reads the value and checks that it fits the integers
            stored_scalar(value.item(), self._dtype)
        return MaskedFillBackward1
    if not isinstance(value, (numbers.Number, np.bool_)):
        raise TypeError(f"masked_fill(): argument 'value' must be Number or Tensor, not {type(value).__name__}")
    return MaskedFillBackward0


@tensor_method("masked_fill")
def masked_fill(input, mask, value):
    """``value`` where ``mask`` is True, ``input`` elsewhere (``mask`` and ``input`` broadcast)."""
    cls = _masked_fill_args(input, mask, value, "masked_fill_")
    return apply(cls, input, mask, value if cls is MaskedFillBackward1 else stored_scalar(value, input._dtype))


@tensor_method("masked_fill_")
def masked_fill_(self, mask, value):
    cls = _masked_fill_args(self, mask, value, "masked_fill_")
    return apply_inplace(cls, self, mask, value if cls is MaskedFillBackward1 else stored_scalar(value, self._dtype))


class MaskedSelectBackward0(Node):
    def forward(ctx, a, mask):
        xp = xp_of(a)
        shape = broadcast_pair(a._data.shape, mask._data.shape)
        ctx.in_shape, ctx.shape = a._data.shape, shape
        m = xp.broadcast_to(mask._data, shape)
        ctx.index = Index((m,))
        return xp.broadcast_to(a._data, shape)[m]

    def backward(ctx, grad):
        return sum_to_shape(_scatter_into_zeros(grad, ctx.shape, ctx.index, False), ctx.in_shape), None


@tensor_method("masked_select")
def masked_select(input, mask, *, out=None):
    """The elements of ``input`` where ``mask`` is True, as a 1-D tensor (both broadcast)."""
    _check_mask(mask, "masked_select")
    from .._common import write_out
    return write_out(apply(MaskedSelectBackward0, input, mask), out)


class MaskedScatterBackward0(Node):
    def forward(ctx, a, mask, source):
        xp = xp_of(a)
        shape = broadcast_pair(a._data.shape, mask._data.shape)
        m = xp.broadcast_to(mask._data, shape)
        count = int(m.sum())
        if count > source._data.size:
            raise RuntimeError("Number of elements of source < number of ones in mask")
        ctx.in_shape, ctx.mask, ctx.count = a._data.shape, mask, count
        ctx.source_meta = (source._data.shape, source._dtype)
        x = xp.broadcast_to(a._data, shape).copy()
        _write(xp, x, m, _cast_values(source, a._dtype).reshape(-1)[:count])
        return x

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        ga = sum_to_shape(grad.masked_fill(ctx.mask, 0), ctx.in_shape) if need[0] else None
        gs = None
        if need[2]:
            shape, dt = ctx.source_meta
            numel = int(np.prod(shape))
            picked = grad.masked_select(ctx.mask)
            if numel > ctx.count:
                from ..creation import zeros
                from ..shape import cat
                picked = cat([picked, zeros(numel - ctx.count, dtype=grad._dtype, device=grad._device)])
            gs = _grad_as(picked.reshape(shape), dt)
        return ga, None, gs


_MASKED_SCATTER_DTYPE = "masked_scatter: expected self and source to have same dtypes but got{self} and {src}"


@tensor_method("masked_scatter")
def masked_scatter(input, mask, source):
    """``input`` with the positions where ``mask`` is True filled by consecutive elements of ``source``."""
    _check_mask(mask, "masked_scatter_")
    _check_source_dtype(input, source, _MASKED_SCATTER_DTYPE)
    return apply(MaskedScatterBackward0, input, mask, source)


@tensor_method("masked_scatter_")
def masked_scatter_(self, mask, source):
    _check_mask(mask, "masked_scatter_")
    _check_source_dtype(self, source, _MASKED_SCATTER_DTYPE)
    return apply_inplace(MaskedScatterBackward0, self, mask, source)


@tensor_method("nonzero")
def nonzero(input, *, as_tuple=False, out=None):
    """The indices of the non-zero elements: an (n, ndim) int64 tensor, or one 1-D tensor per dim."""
    x = input._data
    xp = xp_of(input)
    dev = input._device
    with _on_device(input):
        if x.ndim == 0:
            found = xp.nonzero(x.reshape(1))[0]
            if as_tuple:
                return (Tensor._make(found.astype(np.int64), dev, _dtype.int64),)
            return Tensor._make(xp.zeros((found.size, 0), np.int64), dev, _dtype.int64)
        parts = [p.astype(np.int64) for p in xp.nonzero(x)]
        if as_tuple:
            return tuple(Tensor._make(p, dev, _dtype.int64) for p in parts)
        result = Tensor._make(xp.stack(parts, axis=1), dev, _dtype.int64)
    from .._common import write_out
    return write_out(result, out)


@tensor_method("nonzero_static")
def nonzero_static(input, *, size, fill_value=-1):
    """``nonzero(input)`` with exactly ``size`` rows: the first ``size`` indices, or all of them
    followed by rows of ``fill_value`` (a fixed shape, for compiled code)."""
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = nonzero(input)
    xp = xp_of(input)
    with _on_device(input):
        rows = found._data[:size]
        pad = xp.full((size - rows.shape[0], rows.shape[1]), fill_value, dtype=np.int64)
        return Tensor._make(xp.concatenate([rows, pad], axis=0), input._device, _dtype.int64)


@tensor_method("argwhere")
def argwhere(input):
    """``nonzero(input)``: an (n, ndim) tensor of the indices of the non-zero elements."""
    return nonzero(input)
