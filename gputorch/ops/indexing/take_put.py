"""Indexing the flattened tensor: take and put / put_ (with ``accumulate``).
"""
import numpy as np

from ... import _dtype
from ..._dispatch import apply, apply_inplace
from ..._tensor import Tensor
from ...autograd.node import Node
from .._common import xp_of
from ..registry import tensor_method
from ._common import _cast_values, _check_source_dtype, _grad_as, _write
from .index_nodes import IndexBackward0, IndexPutBackward0, _scatter_into_zeros
from .parsing import Index

__all__ = ["take", "put"]


class TakeBackward0(Node):
    def forward(ctx, a, idx):
        x = a._data
        n = x.size
        if idx.size:
            bad = (idx >= n) | (idx < -n)
            if bad.any():
                raise IndexError(f"out of range: tried to access index {int(idx[bad].reshape(-1)[0])} on a tensor "
                                 f"of {n} elements.")
        ctx.in_shape, ctx.index = x.shape, Index((idx,))
        return x.reshape(-1)[idx]

    def backward(ctx, grad):
        return _scatter_into_zeros(grad, (int(np.prod(ctx.in_shape)),), ctx.index).reshape(ctx.in_shape)


def _flat_index(self, index, name):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._dtype is not _dtype.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {index._dtype.name.capitalize()}")
    arr = index._data
    if index._device is not self._device:
        arr = self._device._backend.asarray(arr, None, self._device)
    return arr


@tensor_method("take")
def take(input, index):
    """The elements at ``index`` of the flattened ``input``, in the shape of ``index``."""
    return apply(TakeBackward0, input, _flat_index(input, index, "take"))


class PutBackward0(Node):
    def forward(ctx, a, source, idx, accumulate):
        x = a._data.copy()
        n = x.size
        if idx.size:
            bad = (idx >= n) | (idx < -n)
            if bad.any():
                raise IndexError(f"out of range: tried to access index {int(idx[bad].reshape(-1)[0])} on a tensor "
                                 f"of {n} elements.")
        if source._data.size != idx.size:
            raise RuntimeError(f"put_(): Expected source and index to have the same number of elements, but got "
                               f"source.numel() = {source._data.size}, index.numel() = {idx.size}")
        ctx.in_shape, ctx.index, ctx.accumulate = x.shape, Index((idx.reshape(-1),)), accumulate
        ctx.source_meta = (source._data.shape, source._dtype)
        flat = x.reshape(-1)
        _write(xp_of(a), flat, ctx.index.post, _cast_values(source, a._dtype).reshape(-1), accumulate)
        return flat.reshape(x.shape)

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        flat = grad.reshape(-1)
        ga = gs = None
        if need[0]:
            ga = grad if ctx.accumulate else apply(IndexPutBackward0, flat, 0, index=ctx.index).reshape(ctx.in_shape)
        if need[1]:
            gs = _grad_as(apply(IndexBackward0, flat, ctx.index).reshape(ctx.source_meta[0]), ctx.source_meta[1])
        return ga, gs


_PUT_DTYPE = ("put_(): self and source expected to have the same dtype, but got self.dtype = {self} and "
              "source.dtype = {src}")


@tensor_method("put")
def put(input, index, source, accumulate=False):
    """``input`` with ``source`` written (or added) at ``index`` of its flattened view."""
    _check_source_dtype(input, source, _PUT_DTYPE)
    return apply(PutBackward0, input, source, _flat_index(input, index, "put_"), accumulate)


@tensor_method("put_")
def put_(self, index, source, accumulate=False):
    _check_source_dtype(self, source, _PUT_DTYPE)
    return apply_inplace(PutBackward0, self, source, _flat_index(self, index, "put_"), accumulate)
