"""Views with a new shape: view (also ``view(dtype)``), reshape (a copy when the strides do not
allow a view), view_as, reshape_as, flatten, ravel, unflatten, squeeze, unsqueeze,
atleast_1d/2d/3d, and the deprecated out-of-place resize/resize_as.
"""
import warnings

from ... import _dtype
from ..._dispatch import apply, apply_view
from ..._tensor import Tensor
from ..registry import tensor_method
from ._common import infer_shape
from .view_nodes import (SqueezeBackward0, SqueezeBackward1, SqueezeBackward2, UnsafeViewBackward0,
                         UnsqueezeBackward0, ViewBackward0, sub_view)

__all__ = ["reshape", "flatten", "ravel", "unflatten", "squeeze", "unsqueeze", "atleast_1d", "atleast_2d",
           "atleast_3d"]


def _viewable(shape, strides, new_shape):
    """Whether an array with ``shape`` and ``strides`` can be seen as ``new_shape`` without a copy.

    The input's dims are merged into runs that are laid out one after the other in memory;
    ``new_shape`` (size-1 dims aside) must split each run exactly."""
    runs = []
    last_stride = None
    for size, stride in zip(shape, strides):
        if size == 1:
            continue
        if size == 0:
            return True
        if runs and last_stride == size * stride:
            runs[-1] *= size
        else:
            runs.append(size)
        last_stride = stride
    i, acc = 0, 1
    for size in new_shape:
        if size == 1:
            continue
        acc *= size
        if acc == runs[i]:
            i, acc = i + 1, 1
        elif acc > runs[i]:
            return False
    return True


@tensor_method("view")
def view(self, *shape):
    """A view with a new shape (one dim may be -1); the strides must allow it.
    ``view(dtype)`` reinterprets the elements (no gradient)."""
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        return _view_dtype(self, shape[0])
    x = self._data
    shape = infer_shape(shape, x.size)
    if not _viewable(x.shape, x.strides, shape):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension "
            "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return apply_view(ViewBackward0, self, shape)


def _view_dtype(self, dt):
    x = self._data
    if dt.itemsize != self._dtype.itemsize and x.ndim and x.strides[-1] != self._dtype.itemsize:
        raise RuntimeError(f"self.stride(-1) must be 1 to view {self._dtype} as {dt} (different element sizes)")
    try:
        out = x.view(dt.np)
    except ValueError as e:
        raise RuntimeError(f"cannot view {self._dtype} tensor of shape {list(self.shape)} as {dt}: {e}") from None
    t = Tensor._make(out, self._device, dt)
    t._vc = self._vc
    t._base = self if self._base is None else self._base
    return t


@tensor_method("reshape")
def reshape(input, *shape):
    """Like ``view`` when the strides allow it, else a copy."""
    x = input._data
    shape = infer_shape(shape, x.size)
    if _viewable(x.shape, x.strides, shape):
        return apply_view(ViewBackward0, input, shape)
    return apply(UnsafeViewBackward0, input, shape)


@tensor_method("view_as")
def view_as(self, other):
    return view(self, other._data.shape)


@tensor_method("reshape_as")
def reshape_as(self, other):
    return reshape(self, other._data.shape)


@tensor_method("flatten")
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one (a view when the strides allow it)."""
    shape = input._data.shape
    start, end = input._wrap_dim(start_dim), input._wrap_dim(end_dim)
    if not shape:
        return reshape(input, (1,))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    merged = 1
    for size in shape[start:end + 1]:
        merged *= size   # not -1: an empty tensor leaves -1 undetermined
    return reshape(input, shape[:start] + (merged,) + shape[end + 1:])


@tensor_method("ravel")
def ravel(input):
    """The elements as a 1-D tensor in row-major order (a view when the strides allow it)."""
    return reshape(input, (-1,))


@tensor_method("unflatten")
def unflatten(input, dim, sizes):
    """Split dim ``dim`` into ``sizes`` (one entry may be -1)."""
    d = input._wrap_dim(dim)
    shape = input._data.shape
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        sizes = infer_shape(sizes, shape[d])
    except RuntimeError:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
                           f"{dim} ({shape[d]}) in the input tensor") from None
    return view(input, shape[:d] + sizes + shape[d + 1:])


@tensor_method("squeeze")
def squeeze(input, dim=None):
    """Remove size-1 dims (all of them, or those among ``dim``: an int or a tuple)."""
    shape = input._data.shape
    if dim is None:
        return apply_view(SqueezeBackward0, input, tuple(s for s in shape if s != 1))
    if isinstance(dim, (tuple, list)):
        dims = {input._wrap_dim(d) for d in dim}
        cls = SqueezeBackward2
    else:
        dims = {input._wrap_dim(dim)}
        cls = SqueezeBackward1
    return apply_view(cls, input, tuple(s for i, s in enumerate(shape) if s != 1 or i not in dims))


@tensor_method("unsqueeze")
def unsqueeze(input, dim):
    """Insert a size-1 dim at ``dim``."""
    d = input._wrap_dim(dim, input._data.ndim + 1)
    return sub_view(UnsqueezeBackward0, input, (slice(None),) * d + (None,), True)


def _atleast(ndim, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        return tuple(_atleast(ndim, (t,)) for t in tensors[0])
    if len(tensors) != 1:
        return tuple(_atleast(ndim, (t,)) for t in tensors)
    t = tensors[0]
    shape = t._data.shape
    if len(shape) >= ndim:
        return t
    if ndim == 3 and len(shape) == 2:
        return unsqueeze(t, 2)
    if ndim == 3 and len(shape) == 1:
        return reshape(t, (1, shape[0], 1))
    return reshape(t, (1,) * (ndim - len(shape)) + shape)


def atleast_1d(*tensors):
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    return _atleast(3, tensors)


@tensor_method("resize")
def resize(self, *sizes):
    """Deprecated (it warns, as PyTorch does): ``self`` reshaped to ``sizes``, which must keep the
    number of elements (the in-place ``resize_`` may change it)."""
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    shape = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else tuple(sizes)
    numel = 1
    for n in shape:
        numel *= n
    if numel != self.numel():
        wanted = "x".join(map(str, shape))
        have = "x".join(map(str, self._data.shape))
        raise RuntimeError(f"requested resize to {wanted} ({numel} elements in total), but the given tensor has a "
                           f"size of {have} ({self.numel()} elements). autograd's resize can only change the shape "
                           f"of a given tensor, while preserving the number of elements. ")
    return reshape(self, shape)


@tensor_method("resize_as")
def resize_as(self, the_template, *, memory_format=None):
    """Deprecated: ``self.resize(the_template.size())``."""
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return resize(self, the_template._data.shape)
