"""Storages: the memory block a tensor views, as PyTorch's files describe it.

A PyTorch checkpoint stores each storage (a flat run of elements) once, and each tensor as
``(storage, storage_offset, size, stride)``. A gputorch tensor's array is a view of an owner
array (``.base`` followed to its end); that owner, flattened in memory order, is the storage.
"""
from .._tensor import Tensor
from ..ops._common import xp_of


def owner_array(array):
    """The array owning ``array``'s memory (through NumPy's ``as_strided`` wrappers, which are
    not arrays but keep the array in their own ``.base``)."""
    base = array.base
    while base is not None:
        if getattr(base, "dtype", None) is None:
            inner = getattr(base, "base", None)
            if inner is None or getattr(inner, "dtype", None) is None:
                return array
            base = inner
        array = base
        base = array.base
    return array


def contiguous_strides(size):
    """Row-major element strides of ``size`` (PyTorch's: a dimension of 0 or 1 counts as 1)."""
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class StorageView:
    """Where a tensor lives: ``flat`` (its storage: a 1-D array, in memory order, on the tensor's
    device), ``key`` (identifies the storage among the tensors being saved), ``offset`` and
    ``stride`` in elements."""
    __slots__ = ("flat", "key", "offset", "stride")

    def __init__(self, flat, key, offset, stride):
        self.flat, self.key, self.offset, self.stride = flat, key, offset, stride


def storage_view(t):
    """The storage ``t`` views. A tensor whose layout PyTorch cannot describe (negative strides,
    a dtype other than its owner's, an owner that is no dense block) gets a storage of its own:
    a contiguous copy of its elements."""
    data = t._data
    item = t._dtype.itemsize
    owner = owner_array(data)
    dense = owner.flags.c_contiguous or owner.flags.f_contiguous
    if data.size and dense and owner.dtype == data.dtype and all(s >= 0 and s % item == 0 for s in data.strides):
        start = Tensor._array_address(data) - Tensor._array_address(owner)
        if start >= 0 and start % item == 0:
            flat = owner.reshape(-1) if owner.flags.c_contiguous else owner.T.reshape(-1)
            key = (str(t._device), Tensor._array_address(owner), owner.size, t._dtype.name)
            return StorageView(flat, key, start // item, tuple(s // item for s in data.strides))
    flat = data.copy().reshape(-1)
    return StorageView(flat, ("copy", id(flat)), 0, contiguous_strides(data.shape))


def view_of(storage, offset, size, stride):
    """The array with ``size`` and element ``stride`` starting ``offset`` elements into the 1-D
    tensor ``storage`` (a view of its array). Raises RuntimeError when that reaches outside it."""
    flat = storage._data
    if not (type(offset) is int and offset >= 0 and all(type(n) is int and n >= 0 for n in size)
            and all(type(s) is int and s >= 0 for s in stride) and len(size) == len(stride)):
        raise RuntimeError(f"invalid tensor layout in checkpoint: storage_offset={offset!r}, size={size!r}, "
                           f"stride={stride!r}")
    numel = 1
    for n in size:
        numel *= n
    extent = 0 if numel == 0 else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if extent > flat.size or (numel == 0 and offset > flat.size):
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset} "
                           f"need a storage of {extent} elements, but the checkpoint's storage has {flat.size}")
    if stride == contiguous_strides(size) or numel == 0:
        return flat[offset:offset + numel].reshape(size)
    return xp_of(storage).lib.stride_tricks.as_strided(flat[offset:], size,
                                                       tuple(s * flat.itemsize for s in stride))
