"""Private helpers shared by the indexing modules: running on a tensor's device, writing values
at an index with PyTorch's errors, casting values and gradients, checking index bounds, and the
dtype names PyTorch's messages print.
"""
import contextlib

from ..._dispatch import OVERLAP_MESSAGE
from ...backends.base import elements_share_memory
from ..._tensor import Tensor
from .._common import quiet_errors


_NULL_CONTEXT = contextlib.nullcontext()
_OVERLAP = OVERLAP_MESSAGE


def _on_device(t):
    ctx = t._device._ctx
    return _NULL_CONTEXT if ctx is None else ctx


def _write(xp, target, key, value, accumulate=False):
    """``target[key] = value`` (or ``+=`` with repeated indices adding up), with PyTorch's errors."""
    if elements_share_memory(target):
        raise RuntimeError(_OVERLAP)
    try:
        with quiet_errors():
            if accumulate:
                xp.add.at(target, key, value)
            else:
                target[key] = value
    except ValueError as e:
        if "read-only" in str(e):
            if target.size == 0:   # nothing to write into an empty expanded tensor
                return
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


def _grad_as(g, dt):
    return g if g._dtype is dt else g.to(dt)


def _legacy(dt):
    """PyTorch's ScalarType name of ``dt`` ("Float", "Long", ...), as its error messages print it."""
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int",
            "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}[dt.name]


def _c_name(dt):
    """The C type name of ``dt`` ("float", "long int", ...), as some PyTorch messages print it."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}[dt.name]


def _check_source_dtype(self, source, message):
    if isinstance(source, Tensor) and source._dtype is not self._dtype:
        raise RuntimeError(message.format(self=_legacy(self._dtype), src=_legacy(source._dtype)))


def _check_nonnegative_bounds(arr, size, dim, exc=RuntimeError, prefix=""):
    if arr.size == 0:
        return
    bad = (arr >= size) | (arr < 0)
    if bad.any():
        value = int(arr[bad].reshape(-1)[0])
        raise exc(f"{prefix}index {value} is out of bounds for dimension {dim} with size {size}")
