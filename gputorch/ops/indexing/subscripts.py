"""``tensor[key]`` (``__getitem__``: a view for basic indexes, a copy for advanced ones),
``tensor[key] = value`` (``__setitem__``, in place) and index_put / index_put_.
"""
import numbers

from ..._dispatch import _check_inplace_allowed, apply, apply_inplace, apply_view
from ..._tensor import Tensor
from ...autograd.grad_mode import is_grad_enabled
from ..registry import tensor_method
from ..shape import Key, SelectBackward0, SliceBackward0
from .._common import stored_scalar
from ._common import _legacy
from .index_nodes import IndexPutBackward0, _indexed
from .parsing import _parse, _plain
from ...amp.autocast_mode import autocast_function

__all__ = ["index_put"]


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
    """``self[key] = value`` (a number or a tensor broadcast to the indexed shape), in place.

    PyTorch's checks come in its order: a number's range, the basic index (ints, slices), autograd's
    in-place rules, then the index tensors."""
    if isinstance(value, numbers.Number) and not isinstance(value, Tensor):
        if isinstance(value, int) and not -(1 << 63) <= value < (1 << 63):
            raise ValueError("Overflow when unpacking long long")
        if self._dtype._category == 1:   # floats are assigned without a range check (inf beyond the range)
            value = stored_scalar(value, self._dtype)
    try:
        index = _parse(self, key)
    except IndexError as e:   # the index tensors are checked after autograd's rules, the basic index before
        if str(e).startswith(("The shape of the mask", "shape mismatch")) and is_grad_enabled():
            _check_inplace_allowed(self)
        raise
    if is_grad_enabled():
        _check_inplace_allowed(self)
    if not isinstance(value, (Tensor, numbers.Number)):
        from ..creation import tensor
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


@tensor_method("index_put_")
def index_put_(self, indices, values, accumulate=False):
    """``self[indices] = values`` (``+=`` with repeats adding up when ``accumulate``), in place."""
    index = _put_indices(self, indices)
    _check_same_dtype(self, values)
    return apply_inplace(IndexPutBackward0, self, values, index=index, accumulate=accumulate, inplace=True)


@tensor_method("index_put")
@autocast_function("index_put")
def index_put(input, indices, values, accumulate=False):
    """Out-of-place ``index_put_``."""
    index = _put_indices(input, indices)
    _check_same_dtype(input, values)
    return apply(IndexPutBackward0, input, values, index=index, accumulate=accumulate)
