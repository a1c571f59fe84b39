"""Ops along a dim with a 1-D index: index_select, index_add, index_copy and index_fill (each
with its in-place variant).
"""
from ... import _dtype
from ..._dispatch import apply, apply_inplace
from ..._tensor import Tensor
from ...autograd.node import Node
from .._common import stored_scalar, xp_of
from ..registry import tensor_method
from ._common import _cast_values, _check_nonnegative_bounds, _check_source_dtype, _grad_as, _write
from .index_nodes import _indexed, _scatter_into_zeros
from .parsing import Index
from ...amp.autocast_mode import autocast_function

__all__ = ["index_select", "index_add", "index_copy", "index_fill"]


def _vector_index(self, dim, index, name):
    """``(dim, index array)`` for the ops that take a 1-D index along ``dim``."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32 or int64 for index")
    if index._data.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    d = self._wrap_dim(dim)
    arr = index._data.reshape(-1)
    if index._device is not self._device:
        arr = self._device._backend.asarray(arr, None, self._device)
    return d, arr


def _dim_key(dim, arr):
    return (slice(None),) * dim + (arr, Ellipsis)


def _check_select_bounds(x, dim, idx, ndim):
    """PyTorch's errors for ``index_select`` indices outside ``x.shape[dim]``: its kernel for
    ``dim == 1`` of a matrix (or more) names the first bad index, the others say less."""
    size = x.shape[dim]
    if not idx.size:
        return
    if ndim >= 2 and size == 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    bad = (idx >= size) | (idx < 0)
    if bool(bad.any()):
        if ndim >= 2 and dim == 1:
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(idx[bad].reshape(-1)[0])} "
                               f"axis_dim={size}")
        raise IndexError("index out of range in self")


def _check_add_bounds(x, dim, idx):
    """PyTorch's ``index_add``: a vector (or scalar) checks every index; a matrix or more checks them
    only when it has elements to add into."""
    if x.ndim <= 1:
        if idx.size and bool(((idx >= x.shape[dim]) | (idx < 0)).any()):
            raise IndexError("index out of range in self")
    elif x.size:
        _check_nonnegative_bounds(idx, x.shape[dim], dim)


class IndexSelectBackward0(Node):
    def forward(ctx, a, dim, idx):
        x = a._data
        if x.ndim == 0:
            x = x.reshape(1)
        _check_select_bounds(x, dim, idx, a._data.ndim)
        ctx.in_shape, ctx.index = a._data.shape, Index(_dim_key(dim, idx))
        out = xp_of(a).take(x, idx, axis=dim)
        return out.reshape(()) if a._data.ndim == 0 else out

    def backward(ctx, grad):
        if not ctx.in_shape:
            return _scatter_into_zeros(grad.reshape(1), (1,), ctx.index).reshape(())
        return _scatter_into_zeros(grad, ctx.in_shape, ctx.index)


@tensor_method("index_select")
def index_select(input, dim, index, *, out=None):
    """The entries ``index`` (a 1-D integer tensor) along ``dim``."""
    d, arr = _vector_index(input, dim, index, "index_select")
    from .._common import write_out
    return write_out(apply(IndexSelectBackward0, input, d, arr), out)


class IndexAddBackward0(Node):
    def forward(ctx, a, source, dim, idx, alpha=1):
        x = a._data.copy()
        _check_add_bounds(x, dim, idx)
        ctx.dim, ctx.idx, ctx.alpha = dim, idx, alpha
        ctx.source_meta = (source._data.shape, source._dtype)
        if not x.size:
            return x
        v = _cast_values(source, a._dtype)
        if alpha != 1:
            v = v * alpha
        _write(xp_of(a), x, _dim_key(dim, idx), v, True)
        return x

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gs = None
        if need[1]:
            gs = apply(IndexSelectBackward0, grad, ctx.dim, ctx.idx)
            if ctx.alpha != 1:
                gs = gs * ctx.alpha
            gs = _grad_as(gs.reshape(ctx.source_meta[0]), ctx.source_meta[1])
        return grad if need[0] else None, gs


def _source_checks(self, dim, index, source, name):
    d, arr = _vector_index(self, dim, index, name)
    if not isinstance(source, Tensor):
        raise TypeError(f"{name}(): argument 'source' must be Tensor, not {type(source).__name__}")
    _check_source_dtype(self, source, "index_add_(): self ({self}) and source ({src}) must have the same scalar type"
                        if name == "index_add_" else
                        "index_copy_(): self and source expected to have the same dtype, but got (self) {self} and "
                        "(source) {src}")
    x, s = self._data.shape, source._data.shape
    sdim = s[d] if len(s) > d else 1
    if arr.size != sdim:
        raise RuntimeError(f"{name}(): Number of indices ({arr.size}) should be equal to source.size(dim): "
                           f"({sdim}), for dim: {d}")
    if len(s) != len(x) or any(s[i] != x[i] for i in range(len(x)) if i != d):
        if len(s) or len(x) > 1:
            raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified "
                               f"dimension. Got self.shape = {list(x)} source.shape = {list(s)}")
    return d, arr


@tensor_method("index_add")
def index_add(input, dim, index, source, *, alpha=1):
    """``input`` with ``alpha * source`` added at entries ``index`` along ``dim`` (repeats add up)."""
    d, arr = _source_checks(input, dim, index, source, "index_add_")
    return apply(IndexAddBackward0, input, source, d, arr, alpha)


@tensor_method("index_add_")
def index_add_(self, dim, index, source, *, alpha=1):
    d, arr = _source_checks(self, dim, index, source, "index_add_")
    return apply_inplace(IndexAddBackward0, self, source, d, arr, alpha)


def _wrap_index(idx, size, dim, name):
    """Negative entries wrapped; IndexError for the out-of-range ones."""
    if idx.size:
        bad = (idx >= size) | (idx < -size)
        if bad.any():
            raise IndexError(f"{name}index {int(idx[bad].reshape(-1)[0])} is out of bounds for dimension {dim} "
                             f"with size {size}")
    return idx


class IndexCopyBackward0(Node):
    def forward(ctx, a, source, dim, idx):
        x = a._data.copy()
        _check_nonnegative_bounds(idx, x.shape[dim], dim, IndexError, "index_copy_(): ")
        ctx.dim, ctx.idx = dim, idx
        ctx.source_meta = (source._data.shape, source._dtype)
        _write(xp_of(a), x, _dim_key(dim, idx), _cast_values(source, a._dtype))
        return x

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        ga = apply(IndexFillBackward0, grad, 0, ctx.dim, ctx.idx) if need[0] else None
        gs = None
        if need[1]:
            gs = apply(IndexSelectBackward0, grad, ctx.dim, ctx.idx)
            gs = _grad_as(gs.reshape(ctx.source_meta[0]), ctx.source_meta[1])
        return ga, gs


@tensor_method("index_copy")
@autocast_function("index_copy")
def index_copy(input, dim, index, source):
    """``input`` with entries ``index`` along ``dim`` replaced by the slices of ``source``."""
    d, arr = _source_checks(input, dim, index, source, "index_copy_")
    return apply(IndexCopyBackward0, input, source, d, arr)


@tensor_method("index_copy_")
def index_copy_(self, dim, index, source):
    d, arr = _source_checks(self, dim, index, source, "index_copy_")
    return apply_inplace(IndexCopyBackward0, self, source, d, arr)


class IndexFillBackward0(Node):
    """``index_fill`` with a number."""

    def forward(ctx, a, value, dim, idx):
        x = a._data.copy()
        if x.ndim >= 2 and not x.size:   # PyTorch checks no index of an empty matrix
            ctx.dim, ctx.idx = dim, idx[:0]
            return x
        ctx.dim, ctx.idx = dim, _wrap_index(idx, x.shape[dim], dim, "")
        ctx.value_dtype = value._dtype if isinstance(value, Tensor) else None
        _write(xp_of(a), x, _dim_key(dim, idx), _cast_values(value, a._dtype))
        return x

    def backward(ctx, grad):
        return apply(IndexFillBackward0, grad, 0, ctx.dim, ctx.idx)


class IndexFillBackward1(IndexFillBackward0):
    """``index_fill`` with a 0-d tensor."""

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        ga = apply(IndexFillBackward0, grad, 0, ctx.dim, ctx.idx) if need[0] else None
        gv = None
        if need[1]:
            gv = _grad_as(_indexed(grad, Index(_dim_key(ctx.dim, ctx.idx))).sum(), ctx.value_dtype)
        return ga, gv


def _fill_args(self, dim, index, value, name):
    d, arr = _vector_index(self, dim, index, name)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"{name} only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        return IndexFillBackward1, d, arr
    return IndexFillBackward0, d, arr


@tensor_method("index_fill")
def index_fill(input, dim, index, value):
    """``input`` with entries ``index`` along ``dim`` set to ``value``."""
    cls, d, arr = _fill_args(input, dim, index, value, "index_fill_")
    if cls is IndexFillBackward0:
        value = stored_scalar(value, input._dtype)
    return apply(cls, input, value, d, arr)


@tensor_method("index_fill_")
def index_fill_(self, dim, index, value):
    cls, d, arr = _fill_args(self, dim, index, value, "index_fill_")
    if cls is IndexFillBackward0:
        value = stored_scalar(value, self._dtype)
    return apply_inplace(cls, self, value, d, arr)
