"""Indexing: ``__getitem__``/``__setitem__``, index_put, gather/scatter, index_select/add/copy/fill,
masked_fill/select/scatter, take, put, nonzero, and the in-place writes copy_, fill_, zero_.

An index is parsed once into an :class:`Index`. Basic indexes (ints, slices, None, Ellipsis)
give views; indexes with tensors, lists or bools copy (``IndexBackward0``), and their
backward accumulates into zeros so that repeated indices add up. Integer indices mixed with
tensor indices are applied first, as PyTorch does (this differs from NumPy when the
integer and the tensor index are not next to each other).
"""
import contextlib
import numbers
import warnings

import numpy as np

from .. import _dtype
from .._dispatch import apply, apply_inplace, apply_view
from .._tensor import Tensor, _grad_edge
from ..autograd.node import Node, next_sequence_nr
from ._common import quiet_errors, sum_to_shape, xp_of
from .registry import tensor_method
from .shape import (AliasBackward0, Key, SelectBackward0, SliceBackward0, UnsqueezeBackward0,
                    ViewScatterBackward0, _broadcast_pair)

__all__ = ["index_select", "gather", "scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy",
           "index_fill", "index_put", "masked_fill", "masked_select", "masked_scatter", "take",
           "take_along_dim", "put", "nonzero", "argwhere"]

_NULL_CONTEXT = contextlib.nullcontext()
_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single "
            "memory location. Please clone() the tensor before performing the operation.")


def _on_device(t):
    ctx = t._device._ctx
    return _NULL_CONTEXT if ctx is None else ctx


# ----------------------------------------------------------------------------- parsing
class Index:
    """A parsed index: ``array[pre][post]``.

    ``pre`` holds the integer indices of an advanced index (applied first, like PyTorch), or is
    None. Basic indexes have ``advanced`` False, ``post`` a NumPy basic index ending in
    Ellipsis and ``view_cls`` the graph node PyTorch names for that view."""

    __slots__ = ("pre", "post", "advanced", "view_cls", "reshape_only")

    def __init__(self, post, advanced=True, pre=None, view_cls=None, reshape_only=False):
        self.pre, self.post, self.advanced = pre, post, advanced
        self.view_cls, self.reshape_only = view_cls, reshape_only

    def target(self, x):
        """The part of ``x`` that ``post`` indexes (a view)."""
        return x if self.pre is None else x[self.pre]

    def take(self, x):
        return self.target(x)[self.post]


_BAD_INDEX = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
              "indices (got {})")


def _as_tuple_key(key):
    if type(key) is tuple:
        return key
    if isinstance(key, list) and any(isinstance(k, (Tensor, list, tuple, slice)) or k is None or k is Ellipsis
                                     for k in key):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated; use "
                      "x[tuple(seq)] instead of x[seq].", UserWarning, stacklevel=3)
        return tuple(key)
    return (key,)


def _index_array(self, k):
    """A tensor/array/list index as ``(kind, value, dims consumed)`` with the value on self's device."""
    if isinstance(k, Tensor):
        dt = k._dtype
        arr = k._data
        if dt is _dtype.uint8:
            warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                          "instead.", UserWarning, stacklevel=4)
            arr = arr.astype(bool)
            dt = _dtype.bool
        if dt._category == 2:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if k._device is not self._device:
            arr = self._device._backend.asarray(arr, None, self._device)
    else:
        arr = np.asarray(k)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype(np.int64)
        if arr.dtype.kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if self._device.type != "cpu":
            arr = self._device._backend.asarray(arr, None, self._device)
    if arr.dtype == bool:
        if arr.ndim == 0:
            return "adv", bool(arr), 0
        return "mask", arr, arr.ndim
    if arr.ndim == 0 and isinstance(k, Tensor):
        return "int", int(arr), 1
    return "adv", arr, 1


def _convert(self, k):
    """One index item as ``(kind, value, dims consumed)``."""
    if k is None:
        return "none", None, 0
    if k is Ellipsis:
        return "ellipsis", k, 0
    if isinstance(k, (bool, np.bool_)):
        return "adv", bool(k), 0
    if isinstance(k, int):
        return "int", k, 1
    if isinstance(k, slice):
        start, stop, step = k.start, k.stop, k.step
        if not (_plain(start) and _plain(stop) and _plain(step)):
            start, stop, step = (None if v is None else _as_int(v) for v in (start, stop, step))
        elif step is None:
            return "slice", k, 1
        if step is not None and step <= 0:
            if step == 0:
                raise ValueError("slice step cannot be zero")
            raise ValueError("step must be greater than zero")
        return "slice", slice(start, stop, step), 1
    if isinstance(k, (Tensor, list, tuple, np.ndarray)):
        return _index_array(self, k)
    if isinstance(k, np.integer):
        return "int", int(k), 1
    raise IndexError(_BAD_INDEX.format(type(k).__name__))


def _plain(v):
    return v is None or type(v) is int


def _as_int(v):
    try:
        return v.__index__()
    except (AttributeError, TypeError):
        raise TypeError("slice indices must be integers or None or have an __index__ method") from None


def _check_bounds(arr, size, dim):
    if arr.size == 0:
        return
    bad = (arr >= size) | (arr < -size)
    if bad.any():
        value = int(arr[bad].reshape(-1)[0])
        raise IndexError(f"index {value} is out of bounds for dimension {dim} with size {size}")


def parse_index(self, key):
    """Parse ``key`` (anything ``tensor[key]`` accepts) against ``self``'s shape."""
    items = [_convert(self, k) for k in _as_tuple_key(key)]
    shape = self._data.shape
    ndim = len(shape)
    consumed = 0
    ellipses = 0
    for kind, _, n in items:
        consumed += n
        ellipses += kind == "ellipsis"
    if consumed > ndim:
        if ndim == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                             "in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    dim = 0
    advanced = has_int = False
    view_cls = AliasBackward0
    reshape_only = True
    post = []
    for kind, value, n in items:
        if kind == "int":
            size = shape[dim]
            if value >= size or value < -size:
                raise IndexError(f"index {value} is out of bounds for dimension {dim} with size {size}")
            has_int = True
            view_cls, reshape_only = SelectBackward0, False
        elif kind == "slice":
            view_cls = SliceBackward0
            reshape_only = reshape_only and value == slice(None)
        elif kind == "none":
            view_cls = UnsqueezeBackward0
        elif kind == "ellipsis":
            dim += ndim - consumed
        elif kind == "mask":
            sub = shape[dim:dim + n]
            if value.shape != sub:
                bad = next(i for i in range(n) if value.shape[i] != sub[i])
                raise IndexError(f"The shape of the mask {list(value.shape)} at index {bad} does not match the "
                                 f"shape of the indexed tensor {list(shape)} at index {dim + bad}")
            advanced = True
        else:
            if value is not True and value is not False:
                _check_bounds(value, shape[dim], dim)
            advanced = True
        dim += n
        post.append(value)
    if not advanced:
        if ellipses == 0:
            post.append(Ellipsis)
        return Index(tuple(post), False, None, view_cls, reshape_only)
    if not has_int:
        return Index(tuple(post))
    pre, rest = [], []
    for kind, value, n in items:
        if kind == "int":
            pre.append(value)
        else:
            rest.append(value)
            if kind == "ellipsis":
                pre.append(Ellipsis)
            else:
                pre.extend([slice(None)] * n)
    if ellipses == 0:
        pre.append(Ellipsis)
    return Index(tuple(rest), True, tuple(pre))


def _parse(self, key):
    with _on_device(self):
        return parse_index(self, key)


def _indexed(t, index):
    """``t`` indexed by a parsed ``index`` (a view for basic indexes)."""
    if index.advanced:
        return apply(IndexBackward0, t, index)
    return apply_view(index.view_cls, t, Key(index.post, index.reshape_only))


def _scatter_into_zeros(grad, shape, index, accumulate=True):
    """Zeros of ``shape`` with ``grad`` written (or added) at ``index``; differentiable in ``grad``."""
    with _on_device(grad):
        z = Tensor._make(xp_of(grad).zeros(shape, grad._data.dtype), grad._device, grad._dtype)
    return apply_inplace(IndexPutBackward0, z, grad, index=index, accumulate=accumulate, inplace=True)


def _write(xp, target, key, value, accumulate=False):
    """``target[key] = value`` (or ``+=`` with repeated indices adding up), with PyTorch's errors."""
    try:
        with quiet_errors():
            if accumulate:
                xp.add.at(target, key, value)
            else:
                target[key] = value
    except ValueError as e:
        if "read-only" in str(e):
            raise RuntimeError(_OVERLAP) from None
        if "broadcast" not in str(e) and "shape mismatch" not in str(e):
            raise
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(getattr(value, 'shape', ()))} cannot be "
                           f"broadcast to indexing result of shape {list(target[key].shape)}") from None


def _cast_values(values, dt):
    """The array (or Python scalar) to write into a tensor of dtype ``dt``."""
    if isinstance(values, Tensor):
        v = values._data
        return v if v.dtype == dt.np else v.astype(dt.np)
    return values


def _reduce_to(g, shape):
    """``g`` summed down to ``shape``, which may have extra leading size-1 dims (values assigned by index)."""
    extra = len(shape) - g._data.ndim
    if extra > 0:
        g = g.reshape((1,) * extra + g._data.shape)
    return sum_to_shape(g, tuple(shape))


def _grad_as(g, dt):
    return g if g._dtype is dt else g.to(dt)


# ----------------------------------------------------------------------------- get / put nodes
class IndexBackward0(Node):
    """``input[index]`` for an advanced index (a copy)."""

    def forward(ctx, a, index):
        ctx.in_shape, ctx.index = a._data.shape, index
        return index.take(a._data)

    def backward(ctx, grad):
        return _scatter_into_zeros(grad, ctx.in_shape, ctx.index)


class IndexPutBackward0(Node):
    """Write (or add, with ``accumulate``) ``values`` at ``index``; in place or into a copy."""

    def forward(ctx, a, values, index, accumulate=False, inplace=False):
        ctx.index, ctx.accumulate = index, accumulate
        ctx.values_meta = (values._data.shape, values._dtype) if isinstance(values, Tensor) else None
        x = a._data if inplace else a._data.copy()
        _write(xp_of(a), index.target(x), index.post, _cast_values(values, a._dtype), accumulate)
        return x

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        index = ctx.index
        out = [None]
        if need[0]:
            out[0] = grad if ctx.accumulate else apply(IndexPutBackward0, grad, 0, index=index)
        if ctx.values_meta is not None:
            shape, dt = ctx.values_meta
            out.append(_grad_as(_reduce_to(_indexed(grad, index), shape), dt) if need[1] else None)
        return tuple(out)


@tensor_method("__getitem__")
def getitem(self, key):
    """``self[key]``: a view for basic indexes, a copy for advanced ones."""
    if type(key) is int and self._data.ndim:
        size = self._data.shape[0]
        if key >= size or key < -size:
            raise IndexError(f"index {key} is out of bounds for dimension 0 with size {size}")
        return apply_view(SelectBackward0, self, Key((key, Ellipsis)))
    if type(key) is slice and key.step is None and _plain(key.start) and _plain(key.stop) and self._data.ndim:
        return apply_view(SliceBackward0, self, Key((key, Ellipsis), key == _FULL))
    return _indexed(self, _parse(self, key))


_FULL = slice(None)


@tensor_method("__setitem__")
def setitem(self, key, value):
    """``self[key] = value`` (a number or a tensor broadcast to the indexed shape), in place."""
    index = _parse(self, key)
    if not isinstance(value, (Tensor, numbers.Number)):
        from .creation import tensor
        value = tensor(value, dtype=self._dtype, device=self._device)
    elif isinstance(value, Tensor):
        if value._device is not self._device and value._data.ndim:
            value = value.to(self._device)
        if not index.advanced:
            _check_expandable(self._data[index.post].shape, value._data.shape)
        elif value._dtype is not self._dtype and not (value._data.ndim == 0 and _is_single_mask(index)):
            _check_same_dtype(self, value)
    apply_inplace(IndexPutBackward0, self, value, index=index, inplace=True)


def _check_expandable(shape, value_shape):
    """PyTorch's error when ``value_shape`` does not broadcast to ``shape`` (basic-index assignment;
    leading size-1 dims of the value are dropped first)."""
    vs = list(value_shape)
    while len(vs) > len(shape) and vs[0] == 1:
        vs.pop(0)
    if len(vs) > len(shape):
        raise RuntimeError(f"expand: the number of sizes provided ({len(shape)}) must be greater or equal to "
                           f"the number of dimensions in the tensor ({len(vs)})")
    lead = len(shape) - len(vs)
    for i, v in enumerate(vs):
        if v != 1 and v != shape[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({shape[lead + i]}) must match the existing size "
                               f"({v}) at non-singleton dimension {lead + i}.  Target sizes: {list(shape)}.  "
                               f"Tensor sizes: {vs}")


def _is_single_mask(index):
    arrays = [k for k in index.post if hasattr(k, "dtype")]
    return index.pre is None and len(arrays) == 1 and arrays[0].dtype == bool


def _put_indices(self, indices):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not {type(indices).__name__}")
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return _parse(self, tuple(indices))


def _check_same_dtype(self, values):
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' must be Tensor, not {type(values).__name__}")
    if values._dtype is not self._dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_legacy(self._dtype)} for the destination and {_legacy(values._dtype)} for the source.")


def _legacy(dt):
    """PyTorch's ScalarType name of ``dt`` ("Float", "Long", ...), as its error messages print it."""
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
            "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}[dt.name]


def _c_name(dt):
    """The C type name of ``dt`` ("float", "long int", ...), as some PyTorch messages print it."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}[dt.name]


def _check_source_dtype(self, source, message):
    if isinstance(source, Tensor) and source._dtype is not self._dtype:
        raise RuntimeError(message.format(self=_legacy(self._dtype), src=_legacy(source._dtype)))


@tensor_method("index_put_")
def index_put_(self, indices, values, accumulate=False):
    """``self[indices] = values`` (``+=`` with repeats adding up when ``accumulate``), in place."""
    index = _put_indices(self, indices)
    _check_same_dtype(self, values)
    return apply_inplace(IndexPutBackward0, self, values, index=index, accumulate=accumulate, inplace=True)


@tensor_method("index_put")
def index_put(input, indices, values, accumulate=False):
    """Out-of-place ``index_put_``."""
    index = _put_indices(input, indices)
    _check_same_dtype(input, values)
    return apply(IndexPutBackward0, input, values, index=index, accumulate=accumulate)


# ----------------------------------------------------------------------------- copy_, fill_, zero_
def _check_broadcastable_into(shape, src_shape):
    if len(src_shape) > len(shape):
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{list(_broadcast_pair(shape, src_shape))}")
    lead = len(shape) - len(src_shape)
    for i, s in enumerate(src_shape):
        if s != 1 and s != shape[lead + i]:
            raise RuntimeError(f"The size of tensor a ({shape[lead + i]}) must match the size of tensor b ({s}) "
                               f"at non-singleton dimension {lead + i}")


class CopyBackwards(Node):
    def forward(ctx, a, src):
        ctx.src_meta = (src._data.shape, src._dtype)
        x = a._data
        _write(xp_of(a), x, Ellipsis, src._data)
        return x

    def backward(ctx, grad):
        from .creation import zeros_like
        need = ctx.needs_input_grad
        shape, dt = ctx.src_meta
        return (zeros_like(grad) if need[0] else None,
                _grad_as(sum_to_shape(grad, shape), dt) if need[1] else None)


@tensor_method("copy_")
def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast, converted to this dtype and device) into ``self``."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
    _check_broadcastable_into(self._data.shape, src._data.shape)
    if src._device is not self._device:
        src = src.to(self._device)
    return apply_inplace(CopyBackwards, self, src)


class FillBackward2(Node):
    """``fill_`` with a number."""

    def forward(ctx, a, value):
        x = a._data
        _write(xp_of(a), x, Ellipsis, value)
        return x

    def backward(ctx, grad):
        from .creation import zeros_like
        return zeros_like(grad)


class FillBackward3(Node):
    """``fill_`` with a 0-d tensor (the gradient of the value is the sum)."""

    def forward(ctx, a, value):
        ctx.value_dtype = value._dtype
        x = a._data
        _write(xp_of(a), x, Ellipsis, value._data)
        return x

    def backward(ctx, grad):
        from .creation import zeros_like
        need = ctx.needs_input_grad
        return (zeros_like(grad) if need[0] else None,
                _grad_as(grad.sum(), ctx.value_dtype) if need[1] else None)


class ZeroBackward0(Node):
    def forward(ctx, a):
        x = a._data
        _write(xp_of(a), x, Ellipsis, 0)
        return x

    def backward(ctx, grad):
        from .creation import zeros_like
        return zeros_like(grad)


@tensor_method("fill_")
def fill_(self, value):
    """Set every element to ``value`` (a number or a 0-d tensor)."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        return apply_inplace(FillBackward3, self, value)
    return apply_inplace(FillBackward2, self, value)


@tensor_method("zero_")
def zero_(self):
    return apply_inplace(ZeroBackward0, self)


# ----------------------------------------------------------------------------- masks
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
        return xp.where(mask._data, v, x)

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
    _broadcast_pair(mask._data.shape, self._data.shape)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        return MaskedFillBackward1
    if not isinstance(value, (numbers.Number, np.bool_)):
        raise TypeError(f"masked_fill(): argument 'value' must be Number or Tensor, not {type(value).__name__}")
    return MaskedFillBackward0


@tensor_method("masked_fill")
def masked_fill(input, mask, value):
    """``value`` where ``mask`` is True, ``input`` elsewhere (``mask`` and ``input`` broadcast)."""
    return apply(_masked_fill_args(input, mask, value, "masked_fill_"), input, mask, value)


@tensor_method("masked_fill_")
def masked_fill_(self, mask, value):
    return apply_inplace(_masked_fill_args(self, mask, value, "masked_fill_"), self, mask, value)


class MaskedSelectBackward0(Node):
    def forward(ctx, a, mask):
        xp = xp_of(a)
        shape = _broadcast_pair(a._data.shape, mask._data.shape)
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
    from ._common import write_out
    return write_out(apply(MaskedSelectBackward0, input, mask), out)


class MaskedScatterBackward0(Node):
    def forward(ctx, a, mask, source):
        xp = xp_of(a)
        shape = _broadcast_pair(a._data.shape, mask._data.shape)
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
                from .creation import zeros
                from .shape import cat
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


# ----------------------------------------------------------------------------- along a dim
def _check_index_dtype(index, name, what="index"):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for {what}")


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


def _check_nonnegative_bounds(arr, size, dim, exc=RuntimeError, prefix=""):
    if arr.size == 0:
        return
    bad = (arr >= size) | (arr < 0)
    if bad.any():
        value = int(arr[bad].reshape(-1)[0])
        raise exc(f"{prefix}index {value} is out of bounds for dimension {dim} with size {size}")


class IndexSelectBackward0(Node):
    def forward(ctx, a, dim, idx):
        x = a._data
        if x.ndim == 0:
            x = x.reshape(1)
        size = x.shape[dim]
        if idx.size and bool(((idx >= size) | (idx < 0)).any()):
            raise IndexError("index out of range in self")
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
    from ._common import write_out
    return write_out(apply(IndexSelectBackward0, input, d, arr), out)


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
    from ._common import write_out
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
    return apply(cls, input, src, d, arr, reduce)


@tensor_method("scatter_")
def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    src = value if src is None else src
    cls, d, arr = _scatter_args(self, dim, index, src, reduce, "scatter_")
    return apply_inplace(cls, self, src, d, arr, reduce)


@tensor_method("scatter_add")
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


class IndexAddBackward0(Node):
    def forward(ctx, a, source, dim, idx, alpha=1):
        x = a._data.copy()
        _check_nonnegative_bounds(idx, x.shape[dim], dim)
        ctx.dim, ctx.idx, ctx.alpha = dim, idx, alpha
        ctx.source_meta = (source._data.shape, source._dtype)
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
    return apply(cls, input, value, d, arr)


@tensor_method("index_fill_")
def index_fill_(self, dim, index, value):
    cls, d, arr = _fill_args(self, dim, index, value, "index_fill_")
    return apply_inplace(cls, self, value, d, arr)


# ----------------------------------------------------------------------------- flat indexing
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


def take_along_dim(input, indices, dim=None, *, out=None):
    """Pick values along ``dim`` at ``indices`` (broadcast against ``input`` in the other dims);
    over the flattened input when ``dim`` is None."""
    from ._common import write_out
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
    shape = list(_broadcast_pair(a, b))
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


# ----------------------------------------------------------------------------- scatter_reduce
_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


class ScatterReduceBackward0(Node):
    def forward(ctx, a, src, dim, idx, reduce, include_self):
        xp = xp_of(a)
        x = a._data.copy()
        _check_nonnegative_bounds(idx, x.shape[dim], dim)
        index = Index(_along_key(xp, idx, dim))
        key = index.post
        part = _src_part(_cast_values(src, a._dtype), idx.shape)
        dt = x.dtype
        ctx.index, ctx.reduce, ctx.include_self = index, reduce, include_self
        ctx.src_meta, ctx.ishape = (src._data.shape, src._dtype), idx.shape
        ctx.save_for_backward(a, src)
        hit = xp.zeros(x.shape, bool)
        hit[key] = True
        ctx.hit = Tensor._make(hit, a._device, _dtype.bool)
        if not include_self:
            x[key] = _identity(xp, reduce, dt)
        with quiet_errors():
            if reduce in ("sum", "mean"):
                xp.add.at(x, key, part)
            elif reduce == "prod":
                xp.multiply.at(x, key, part)
            elif reduce == "amax":
                xp.maximum.at(x, key, part)
            else:
                xp.minimum.at(x, key, part)
            if reduce == "mean":
                count = xp.full(x.shape, 1 if include_self else 0, dt)
                xp.add.at(count, key, 1)
                count = xp.maximum(count, 1)
                ctx.count = Tensor._make(count, a._device, a._dtype)
                x = x / count if dt.kind == "f" else x // count
        return x

    saves_result = True

    def backward(ctx, grad):
        a, src = ctx.saved_tensors
        result = ctx.saved_result
        index, reduce = ctx.index, ctx.reduce
        need = ctx.needs_input_grad
        shape, dt = ctx.src_meta
        ga = gs = None
        src_part = src if tuple(shape) == tuple(ctx.ishape) else _indexed(src, Index(tuple(
            slice(0, s) for s in ctx.ishape)))
        if reduce == "sum":
            ga = grad
            gs = _indexed(grad, index)
        elif reduce == "mean":
            ga = grad / ctx.count
            gs = _indexed(ga, index)
        elif reduce == "prod":
            ga = grad * result / a
            gs = _indexed(grad * result, index) / src_part
        else:
            self_tie, src_tie, ties = _ties(a, src_part, result, index, ctx.include_self, grad._dtype)
            share = grad / ties
            ga = share * self_tie
            gs = _indexed(share, index) * src_tie
        if not ctx.include_self and ga is not None:
            ga = ga.masked_fill(ctx.hit, 0)
        if gs is not None:
            gs = _grad_as(_pad_to(gs, shape, ctx.ishape), dt)
        return (ga if need[0] else None), (gs if need[1] else None)


def _ties(a, src_part, result, index, include_self, dt):
    """For amax/amin: which self and src elements equal the result, and how many tie per position
    (at least 1), as constant tensors of dtype ``dt``."""
    xp = xp_of(a)
    with _on_device(a):
        r = result._data
        self_tie = (a._data == r).astype(dt.np)
        src_tie = (src_part._data == index.take(r)).astype(dt.np)
        ties = self_tie.copy() if include_self else xp.zeros(r.shape, dt.np)
        xp.add.at(ties, index.post, src_tie)
        ties[ties == 0] = 1
    dev = a._device
    return Tensor._make(self_tie, dev, dt), Tensor._make(src_tie, dev, dt), Tensor._make(ties, dev, dt)


def _identity(xp, reduce, dt):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dt.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    if dt.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dt)
    return info.min if reduce == "amax" else info.max


@tensor_method("scatter_reduce")
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Reduce ``src`` into ``input`` at the positions ``index`` gives along ``dim``; ``reduce`` is one of
    "sum", "prod", "mean", "amax", "amin" (``include_self``: whether ``input``'s values take part)."""
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d, arr = _gather_checks(input, dim, index, "scatter_reduce", src)
    _check_source_dtype(input, src, _SCATTER_DTYPE)
    return apply(ScatterReduceBackward0, input, src, d, arr, reduce, include_self)


@tensor_method("scatter_reduce_")
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d, arr = _gather_checks(self, dim, index, "scatter_reduce_", src)
    _check_source_dtype(self, src, _SCATTER_DTYPE)
    return apply_inplace(ScatterReduceBackward0, self, src, d, arr, reduce, include_self)


# ----------------------------------------------------------------------------- nonzero
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
    from ._common import write_out
    return write_out(result, out)


@tensor_method("argwhere")
def argwhere(input):
    """``nonzero(input)``: an (n, ndim) tensor of the indices of the non-zero elements."""
    return nonzero(input)


# ----------------------------------------------------------------------------- in-place ops on views
class AsStridedBackward0(Node):
    """The history of a view as a function of its base: the base's elements at ``index``.

    Made by :func:`inplace_on_view` (never by a forward): for the view that an in-place op
    modified, and for that view's old value as the op's input."""

    def __init__(self, base_edge, base_shape, index):
        self.next_functions = (base_edge,)
        self.in_shape, self.index = base_shape, index
        self._sequence_nr = next_sequence_nr()

    def backward(ctx, grad):
        return _scatter_into_zeros(grad, ctx.in_shape, ctx.index, False)


class CopySlices(Node):
    """The base's new grad_fn after an in-place op ``fn`` on one of its views.

    The gradient of the viewed region goes back through ``fn`` (to the view's old value, which
    lies in the base's old value, and to ``fn``'s other inputs); the rest passes unchanged."""

    def __init__(self, fn, base_edge, index):
        self.fn, self.index = fn, index
        self.next_functions = (base_edge,) + tuple(fn.next_functions[1:])
        self._sequence_nr = next_sequence_nr()

    def backward(ctx, grad):
        index = ctx.index
        grads = ctx.fn.apply((_indexed(grad, index),))
        base_grad = None
        if ctx.needs_input_grad[0]:
            region = grads[0] if grads and grads[0] is not None else 0
            base_grad = apply(IndexPutBackward0, grad, region, index=index)
        return (base_grad,) + tuple(grads[1:])

    def _release_saved(self):
        self.fn._release_saved()


_MULTI_OUTPUT_VIEWS = ("SplitBackward0", "SplitWithSizesBackward0", "UnbindBackward0")


def inplace_on_view(cls, view, args, params):
    """``apply_inplace`` for a view of another tensor while a graph is recorded (PyTorch's CopySlices):
    the op runs on the view's memory, the base gets a :class:`CopySlices` grad_fn and the view
    becomes a view of the base's new value."""
    base = view._base
    fn_name = type(view._grad_fn).__name__
    if fn_name in _MULTI_OUTPUT_VIEWS:
        raise RuntimeError(
            f"Output {view._output_nr} of {fn_name[:-len('Backward0')]} is a view and is being modified inplace. "
            "This view is the "
            "output of a function that returns multiple views. Such functions do not allow the output views to "
            "be modified inplace. You should replace the inplace operation by an out-of-place one.")
    if view._dtype is not base._dtype:
        raise RuntimeError("in-place operation with autograd on a view with another dtype than its base "
                           "(view(dtype)) is not supported by gputorch")
    with _on_device(base):
        index = _position_in_base(xp_of(base), view._data, base._data)
    base_edge = _grad_edge(base)
    alias = view._detached_alias()
    alias._base = None
    if base._requires_grad:
        alias._grad_fn = AsStridedBackward0(base_edge, base._data.shape, index)
        alias._requires_grad = True
    before = alias._grad_fn
    apply_inplace(cls, alias, *args, **params)
    fn = alias._grad_fn
    if fn is None or fn is before:   # nothing recorded (a non-float result)
        return view
    base._grad_fn = CopySlices(fn, base_edge, index)
    base._output_nr = 0
    base._requires_grad = True
    view._grad_fn = AsStridedBackward0((base._grad_fn, 0), base._data.shape, index)
    view._output_nr = 0
    view._requires_grad = True
    return view


def _position_in_base(xp, v, b):
    """The advanced index (one array per base dim) of each element of view array ``v`` in base ``b``.

    Works from memory offsets, so ``b`` must be dense (a permutation of a contiguous layout)."""
    item = b.itemsize
    dims = [d for d in range(b.ndim) if b.shape[d] != 1]
    dims.sort(key=lambda d: -b.strides[d])
    expected = item
    for d in reversed(dims):
        if b.strides[d] != expected:
            raise RuntimeError("in-place operation on a view of a tensor that requires grad is not supported by "
                               "gputorch when the base tensor is not dense; use the out-of-place op or write to "
                               "the base tensor")
        expected *= b.shape[d]
    offsets = xp.asarray((Tensor._array_address(v) - Tensor._array_address(b)) // item, dtype=np.int64)
    for d in range(v.ndim):
        shape = [1] * v.ndim
        shape[d] = v.shape[d]
        offsets = offsets + xp.arange(v.shape[d], dtype=np.int64).reshape(shape) * (v.strides[d] // item)
    index = [None] * b.ndim
    for d in dims:
        step = b.strides[d] // item
        index[d] = offsets // step
        offsets = offsets % step
    for d in range(b.ndim):
        if index[d] is None:
            index[d] = xp.zeros(v.shape, dtype=np.int64)
    return Index(tuple(index))
