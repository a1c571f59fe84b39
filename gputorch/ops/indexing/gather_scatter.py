"""Picking and writing along a dim with an index of the input's rank: gather, take_along_dim,
scatter (a source tensor or a number; ``reduce="add"/"multiply"``) and scatter_add. The
checks and keys here are shared with ``scatter_reduction``.
"""
import numbers
import warnings

import numpy as np

from ... import _dtype
from ..._dispatch import apply, apply_inplace
from ..._tensor import Tensor
from ...autograd.node import Node
from .._common import quiet_errors, stored_scalar, xp_of
from ..registry import tensor_method
from ..._broadcast import broadcast_pair
from ..shape import Key, SliceBackward0, ViewScatterBackward0
from ._common import (_cast_values, _check_nonnegative_bounds, _check_source_dtype, _grad_as, _on_device,
                      _write)
from .index_nodes import IndexBackward0, IndexPutBackward0, _scatter_into_zeros
from .parsing import Index
from ...amp.autocast_mode import autocast_function

__all__ = ["gather", "scatter", "scatter_add", "take_along_dim"]


def _check_index_dtype(index, name, what="index"):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for {what}")


def _along_key(xp, idx, dim):
    """The advanced index that picks ``x[i][j][idx[i][j][k]]`` style entries along ``dim``."""
    key = []
    ndim = idx.ndim
    for d in range(ndim):
        if d == dim:
            key.append(idx)
        else:
            shape = [1] * ndim
            shape[d] = idx.shape[d]
            key.append(xp.arange(idx.shape[d]).reshape(shape))
    return tuple(key)


_SCATTER_DTYPE = "scatter(): Expected self.dtype to be equal to src.dtype"


def _gather_checks(self, dim, index, name, src=None):
    _check_index_dtype(index, name)
    x = self._data
    d = self._wrap_dim(dim)
    ishape = index._data.shape
    if index._data.ndim != x.ndim and not (x.ndim <= 1 and index._data.ndim <= 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as "
                           f"{'self' if src is not None else 'input'} tensor")
    if src is not None and index._data.ndim != src._data.ndim and not (src._data.ndim <= 1 and index._data.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    bigger = [i for i in range(min(len(ishape), x.ndim)) if i != d and ishape[i] > x.shape[i]]
    too_big_src = src is not None and any(ishape[i] > src._data.shape[i] for i in range(len(ishape)))
    if src is None and bigger:
        raise RuntimeError(f"Size does not match at dimension {bigger[0]} expected index {list(ishape)} to be no "
                           f"larger than self {list(x.shape)} apart from dimension {d}")
    if bigger or too_big_src:
        raise RuntimeError(f"Expected index {list(ishape)} to be no larger than self {list(x.shape)} apart from "
                           f"dimension {d} and to be no larger size than src {list(src._data.shape)}")
    arr = index._data
    if index._device is not self._device:
        arr = self._device._backend.asarray(arr, None, self._device)
    return d, arr


class GatherBackward0(Node):
    def forward(ctx, a, dim, idx):
        x = a._data
        _check_nonnegative_bounds(idx, x.shape[dim], dim)
        ctx.in_shape, ctx.index = x.shape, Index(_along_key(xp_of(a), idx, dim))
        return x[ctx.index.post]

    def backward(ctx, grad):
        return _scatter_into_zeros(grad, ctx.in_shape, ctx.index)


@tensor_method("gather")
def gather(input, dim, index, *, sparse_grad=False, out=None):
    """``out[i][j] = input[index[i][j]][j]`` (for dim 0), for any number of dims."""
    d, arr = _gather_checks(input, dim, index, "gather")
    from .._common import write_out
    if input._data.ndim == 0 or arr.ndim == 0:
        result = apply(GatherBackward0, input.reshape(-1), 0, arr.reshape(-1)).reshape(arr.shape)
    else:
        result = apply(GatherBackward0, input, d, arr)
    return write_out(result, out)


def _src_part(src, ishape):
    """The leading ``ishape`` block of ``src`` (what scatter reads)."""
    if src.shape == ishape:
        return src
    return src[tuple(slice(0, s) for s in ishape)]


class ScatterBackward0(Node):
    """``scatter`` (or ``scatter_add`` / ``scatter(reduce=)``) with a source tensor."""

    def forward(ctx, a, src, dim, idx, reduce=None):
        xp = xp_of(a)
        x = a._data.copy()
        _check_nonnegative_bounds(idx, x.shape[dim] if x.ndim else 1, dim)
        index = Index(_along_key(xp, idx, dim))
        ctx.index, ctx.reduce = index, reduce
        ctx.src_meta = (src._data.shape, src._dtype)
        ctx.ishape = idx.shape
        part = _src_part(_cast_values(src, a._dtype), idx.shape)
        if reduce is None:
            _write(xp, x, index.post, part)
        elif reduce == "add":
            _write(xp, x, index.post, part, True)
        else:
            with quiet_errors():
                xp.multiply.at(x, index.post, part)
        return x

    def backward(ctx, grad):
        if ctx.reduce == "multiply":
            raise RuntimeError("scatter(reduce='multiply') is not differentiable in gputorch; use scatter_reduce")
        need = ctx.needs_input_grad
        ga = gs = None
        if need[0]:
            ga = grad if ctx.reduce == "add" else apply(IndexPutBackward0, grad, 0, index=ctx.index)
        if need[1]:
            shape, dt = ctx.src_meta
            gs = _pad_to(apply(IndexBackward0, grad, ctx.index), shape, ctx.ishape)
            gs = _grad_as(gs, dt)
        return ga, gs


class ScatterAddBackward0(ScatterBackward0):
    pass


def _pad_to(g, shape, ishape):
    """``g`` (of ``ishape``) placed in the leading block of zeros of ``shape``."""
    if tuple(shape) == tuple(ishape):
        return g
    return apply(ViewScatterBackward0, g, tuple(shape), Key(tuple(slice(0, s) for s in ishape)), SliceBackward0)


class ScatterBackward1(Node):
    """``scatter`` with a number."""

    def forward(ctx, a, value, dim, idx, reduce=None):
        xp = xp_of(a)
        x = a._data.copy()
        _check_nonnegative_bounds(idx, x.shape[dim] if x.ndim else 1, dim)
        index = Index(_along_key(xp, idx, dim))
        ctx.index, ctx.reduce = index, reduce
        v = xp.asarray(value, dtype=x.dtype)
        if reduce is None:
            _write(xp, x, index.post, v)
        elif reduce == "add":
            _write(xp, x, index.post, xp.broadcast_to(v, idx.shape), True)
        else:
            with quiet_errors():
                xp.multiply.at(x, index.post, xp.broadcast_to(v, idx.shape))
        return x

    def backward(ctx, grad):
        if ctx.reduce == "add":
            return grad
        if ctx.reduce == "multiply":
            raise RuntimeError("scatter(reduce='multiply') is not differentiable in gputorch; use scatter_reduce")
        return apply(IndexPutBackward0, grad, 0, index=ctx.index)


def _scatter_args(self, dim, index, src, reduce, name):
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
    if isinstance(src, Tensor):
        d, arr = _gather_checks(self, dim, index, name, src)
        _check_source_dtype(self, src, _SCATTER_DTYPE)
        if reduce is not None:
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed "
                          "in a future PyTorch release. Use torch.scatter_reduce instead for more reduction "
                          "options.", UserWarning, stacklevel=3)
        return ScatterBackward0, d, arr
    if not isinstance(src, (numbers.Number, np.bool_)):
        raise TypeError(f"{name}(): argument 'src' must be Tensor or Number, not {type(src).__name__}")
    d, arr = _gather_checks(self, dim, index, name, None)
    return ScatterBackward1, d, arr


@tensor_method("scatter")
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """``input`` with ``src[i][j]`` (or ``value``) written at ``[index[i][j]][j]`` (for dim 0)."""
    src = value if src is None else src
    cls, d, arr = _scatter_args(input, dim, index, src, reduce, "scatter")
    if cls is ScatterBackward1:
        src = stored_scalar(src, input._dtype)
    return apply(cls, input, src, d, arr, reduce)


@tensor_method("scatter_")
def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    src = value if src is None else src
    cls, d, arr = _scatter_args(self, dim, index, src, reduce, "scatter_")
    if cls is ScatterBackward1:
        src = stored_scalar(src, self._dtype)
    return apply_inplace(cls, self, src, d, arr, reduce)


@tensor_method("scatter_add")
@autocast_function("scatter_add")
def scatter_add(input, dim, index, src):
    """``input`` with ``src`` added at the positions ``index`` gives along ``dim`` (repeats add up)."""
    d, arr = _gather_checks(input, dim, index, "scatter_add", src)
    _check_source_dtype(input, src, _SCATTER_DTYPE)
    return apply(ScatterAddBackward0, input, src, d, arr, "add")


@tensor_method("scatter_add_")
def scatter_add_(self, dim, index, src):
    d, arr = _gather_checks(self, dim, index, "scatter_add_", src)
    _check_source_dtype(self, src, _SCATTER_DTYPE)
    return apply_inplace(ScatterAddBackward0, self, src, d, arr, "add")


def take_along_dim(input, indices, dim=None, *, out=None):
    """Pick values along ``dim`` at ``indices`` (broadcast against ``input`` in the other dims);
    over the flattened input when ``dim`` is None."""
    from .._common import write_out
    _check_index_dtype(indices, "torch.take_along_dim")
    if dim is None:
        return write_out(gather(input.reshape(-1), 0, _wrapped(indices.reshape(-1), input._data.size)), out)
    if input._data.ndim != indices._data.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input._data.ndim} dimensions for input, and {indices._data.ndim} dimensions "
                           f"for indices")
    d = input._wrap_dim(dim)
    a, b = list(input._data.shape), list(indices._data.shape)
    a[d] = b[d] = 1
    shape = list(broadcast_pair(a, b))
    shape_in, shape_idx = shape.copy(), shape.copy()
    shape_in[d], shape_idx[d] = input._data.shape[d], indices._data.shape[d]
    idx = _wrapped(indices.expand(shape_idx), input._data.shape[d])
    return write_out(gather(input.expand(shape_in), d, idx), out)


tensor_method("take_along_dim")(take_along_dim)


def _wrapped(index, size):
    """An index tensor with negative entries counted from the end."""
    arr = index._data
    with _on_device(index):
        if arr.size == 0 or not bool((arr < 0).any()):
            return index
        return Tensor._make(xp_of(index).where(arr < 0, arr + size, arr), index._device, index._dtype)
