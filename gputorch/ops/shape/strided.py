"""Views with given strides: as_strided (any sizes, strides and offset into the tensor's storage) and
unfold (sliding windows along one dim); as_strided_scatter (a copy with such a view replaced); and
the queries ``Tensor.is_set_to`` (whether two tensors are the same view of the same memory) and
``is_same_size``.

Strides and offsets count elements, as in PyTorch. A tensor's storage is the array owning its
memory (``.base`` followed to its end), flattened.
"""
import numpy as np

from ..._dispatch import apply_view
from ..._tensor import Tensor
from ...backends.base import elements_share_memory
from ...autograd.node import Node
from .._common import require_tensor, xp_of
from ..registry import tensor_method

__all__ = ["as_strided", "as_strided_scatter", "is_same_size", "slice_inverse"]


def _storage(t):
    """``(flat, offset)``: the flat array of the memory that owns tensor ``t``'s elements, and where
    ``t`` starts in it (in elements)."""
    root = t._storage_root()
    if root.dtype != t._data.dtype:   # a view with another dtype: its own memory is the storage
        root = t._data
    return root.reshape(-1), (_address(t._data) - _address(root)) // t._data.dtype.itemsize


def _address(a):
    iface = getattr(a, "__array_interface__", None) or getattr(a, "__cuda_array_interface__", None)
    return a.offset if iface is None else iface["data"][0]   # a meta array: its byte offset


def _positions(size, stride, offset):
    """Host int64 array of shape ``size``: the storage position of each element."""
    pos = np.full(size, offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        pos = pos + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return pos


def _element_strides(array):
    return tuple(s // array.dtype.itemsize for s in array.strides)


class AsStridedBackward0(Node):
    """``input`` seen through ``(size, stride, offset)`` of its storage. The gradient is summed into a
    zero storage at the view's positions and read back at the input's positions (so elements the
    view shows twice get both gradients)."""

    def forward(ctx, a, size, stride, offset):
        x = a._data
        flat, start = _storage(a)
        ctx.storage_size = flat.size
        ctx.in_geometry = (x.shape, _element_strides(x), start)
        ctx.input_overlaps = elements_share_memory(x)   # an expanded input: its elements share locations
        ctx.out_geometry = (size, stride, offset)
        item = x.dtype.itemsize
        return xp_of(a).lib.stride_tricks.as_strided(flat[offset:], size, tuple(s * item for s in stride))

    def backward(ctx, grad):
        from ..creation import ones, tensor, zeros
        dev = grad._device
        out_pos = tensor(_positions(*ctx.out_geometry).reshape(-1), device=dev)
        in_pos = tensor(_positions(*ctx.in_geometry), device=dev)
        storage = zeros(ctx.storage_size, dtype=grad._dtype, device=dev).index_add(0, out_pos, grad.reshape(-1))
        if ctx.input_overlaps:   # input elements sharing a location share its gradient, as in PyTorch
            flat_pos = in_pos.reshape(-1)
            count = zeros(ctx.storage_size, dtype=grad._dtype, device=dev).index_add(
                0, flat_pos, ones(flat_pos.shape, dtype=grad._dtype, device=dev))
            storage = storage / count.clamp(min=1)
        return storage.take(in_pos)


@tensor_method("as_strided")
def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with sizes ``size`` and element strides ``stride``, starting at
    element ``storage_offset`` (by default where ``input`` starts). Elements may repeat."""
    size = tuple(int(n) for n in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    flat, start = _storage(input)
    offset = start if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    numel = int(np.prod(size, dtype=np.int64))
    needed = offset + (1 + sum((n - 1) * s for n, s in zip(size, stride)) if numel else 0)
    if numel and needed > flat.size:
        item = input._dtype.itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
                           f"and itemsize {item} requiring a storage size of {needed * item} are out of bounds "
                           f"for storage of size {flat.size * item}")
    return apply_view(AsStridedBackward0, input, size, stride, offset)


@tensor_method("slice_inverse")
def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """The tensor that ``input`` is the slice ``start:end:step`` along ``dim`` of: a view of
    ``input``'s storage with ``src``'s sizes, strides and storage offset (``src`` only gives the
    layout; its values are not read). As in PyTorch, ``dim``, ``start``, ``end`` and ``step`` are
    taken for the signature's sake and the layout comes from ``src`` alone, so the result reaches
    outside ``input`` only where ``input`` really is a slice of a larger storage (otherwise the
    out-of-bounds RuntimeError of ``as_strided``)."""
    require_tensor("slice_inverse", input)
    require_tensor("slice_inverse", src, "src", 2)
    return as_strided(input, src.shape, src.stride(), src.storage_offset())


@tensor_method("as_strided_scatter")
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` whose view ``as_strided(size, stride, storage_offset)`` holds ``src``."""
    from .slicing import scatter_into
    return scatter_into(input, lambda t: as_strided(t, size, stride, storage_offset), src)


class UnfoldBackward0(Node):
    """Windows of ``size`` elements every ``step`` along ``dim``, as a new last dim (a strided view).
    The gradient adds each window's gradient back into the positions it covers."""

    def forward(ctx, a, dim, size, step):
        x = a._data if a._data.ndim else a._data.reshape(1)
        ctx.in_shape, ctx.dim, ctx.size, ctx.step = a._data.shape, dim, size, step
        n = x.shape[dim]
        count = (n - size) // step + 1
        ctx.count = count
        shape = x.shape[:dim] + (count,) + x.shape[dim + 1:] + (size,)
        strides = x.strides[:dim] + (x.strides[dim] * step,) + x.strides[dim + 1:] + (x.strides[dim],)
        if not a._data.ndim:
            shape, strides = (size,), (x.strides[0],)
        return xp_of(a).lib.stride_tricks.as_strided(x, shape, strides)

    def backward(ctx, grad):
        from ..creation import tensor, zeros
        dim, size, step = ctx.dim, ctx.size, ctx.step
        if not ctx.in_shape:
            return grad.sum().reshape(()) if size else zeros((), dtype=grad._dtype, device=grad._device)
        in_shape = ctx.in_shape
        where = (np.arange(ctx.count)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
        windows = grad.movedim(-1, dim + 1).reshape(in_shape[:dim] + (ctx.count * size,) + in_shape[dim + 1:])
        return zeros(in_shape, dtype=grad._dtype, device=grad._device).index_add(
            dim, tensor(where, device=grad._device), windows)


@tensor_method("unfold")
def unfold(self, dimension, size, step):
    """A view of all windows of ``size`` elements, ``step`` apart, along dim ``dimension``: that dim
    becomes the number of windows and a new last dim of ``size`` holds each window."""
    d = self._wrap_dim(dimension)
    size, step = int(size), int(step)
    n = self._data.shape[d] if self._data.ndim else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return apply_view(UnfoldBackward0, self, d, size, step)


@tensor_method("is_set_to")
def is_set_to(self, tensor):
    """Whether ``self`` and ``tensor`` are the same view of the same memory: same device, start,
    sizes and strides."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
    a, b = self._data, tensor._data
    return (self._device == tensor._device and a.shape == b.shape and a.strides == b.strides
            and a.dtype == b.dtype and _address(a) == _address(b))


@tensor_method("is_same_size")
def is_same_size(input, other):
    """Whether ``input`` and ``other`` have the same shape."""
    require_tensor("is_same_size", input)
    if not isinstance(other, Tensor):
        raise TypeError(f"is_same_size(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    return input._data.shape == other._data.shape
