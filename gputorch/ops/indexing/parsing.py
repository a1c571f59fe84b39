"""Parsing an index: what ``tensor[key]`` accepts, turned once into an :class:`Index`.

Basic indexes (ints, slices, None, Ellipsis) give views; indexes with tensors, lists or bools
are advanced (a copy). Integer indices mixed with tensor indices are applied first, as PyTorch
does (this differs from NumPy when the integer and the tensor index are not next to each other).
"""
import warnings

import numpy as np

from ... import _dtype
from ..._tensor import Tensor
from ..shape import AliasBackward0, SelectBackward0, SliceBackward0, UnsqueezeBackward0
from ._common import _on_device


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
        return "slice", slice(start, stop, step), 1   # a step below 1 is refused after the index count
    if isinstance(k, (Tensor, list, tuple, np.ndarray)):
        return _index_array(self, k)
    if isinstance(k, range):   # as a list of its integers
        return _index_array(self, np.arange(k.start, k.stop, k.step, dtype=np.int64))
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
    for kind, value, _ in items:
        if kind == "slice" and value.step is not None and value.step <= 0:
            raise ValueError("slice step cannot be zero" if value.step == 0 else "step must be greater than zero")
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
    _check_index_shapes(items)
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


def _check_index_shapes(items):
    """PyTorch's IndexError when the index tensors' shapes do not broadcast together (checked here,
    as NumPy and CuPy raise different errors for it). A mask stands for its ``nonzero()`` columns,
    a bool for a 0- or 1-element index."""
    shapes = []
    for kind, value, n in items:
        if kind == "adv":
            shapes.append((int(value),) if isinstance(value, bool) else value.shape)
        elif kind == "mask":
            shapes.append(None)
    if len(shapes) < 2:
        return
    if None in shapes:
        masks = iter([(int(value.sum()),) * n for kind, value, n in items if kind == "mask"])
        shapes = [s for shape in shapes for s in ([shape] if shape is not None else [(c,) for c in next(masks)])]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        listed = ", ".join(str(list(s)) for s in shapes)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together with shapes "
                         f"{listed}") from None


def _parse(self, key):
    with _on_device(self):
        return parse_index(self, key)
