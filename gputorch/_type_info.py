"""``finfo`` and ``iinfo``: the numeric limits of floating-point and integer dtypes.

Attributes are Python numbers, as in PyTorch: ``finfo`` has bits, eps, max, min, tiny
(= smallest_normal), resolution and dtype (the dtype's name as a string); ``iinfo`` has bits, max,
min and dtype.
"""
import numpy as np

from . import _dtype

__all__ = ["finfo", "iinfo"]

_PYTHON_TYPES = {float: _dtype.float64, int: _dtype.int64, bool: _dtype.bool}


def _read_dtype(who, value):
    """The gputorch dtype named by ``value`` (a gputorch dtype or Python's float/int/bool)."""
    if isinstance(value, _dtype.dtype):
        return value
    if value in _PYTHON_TYPES:
        return _PYTHON_TYPES[value]
    raise TypeError(f"{who}(): argument 'type' (position 1) must be torch.dtype, not {type(value).__name__}")


def _ml_dtypes_finfo(dt):
    """The limits of a dtype NumPy does not know (bfloat16), from ``ml_dtypes``."""
    import ml_dtypes
    return ml_dtypes.finfo(_dtype.require_numpy_dtype(dt))


class finfo:
    """Limits of a floating-point dtype (the default dtype when none is given; a complex dtype's
    parts)."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):  # noqa: A002 - PyTorch's argument name
        dt = _dtype.get_default_dtype() if type is None else _read_dtype("finfo", type)
        dt = dt.to_real()   # a complex dtype: the limits of its parts, as in PyTorch
        if not dt.is_floating_point:
            raise TypeError(f"torch.finfo() requires a floating point input type, got {dt}. "
                            "Use torch.iinfo to handle integer types")
        info = np.finfo(dt.np) if dt.np.kind == "f" else _ml_dtypes_finfo(dt)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = dt.name

    def __eq__(self, other):
        if not isinstance(other, finfo):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in finfo.__slots__)

    __hash__ = None   # PyTorch's finfo is unhashable

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):  # noqa: A002 - PyTorch's argument name
        dt = _read_dtype("iinfo", type)
        if dt is _dtype.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if dt._category != 1:
            raise TypeError(f"torch.iinfo() requires an integer input type, got {dt}. "
                            "Use torch.finfo to handle floating point types")
        info = np.iinfo(dt.np)
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = dt.name

    def __eq__(self, other):
        if not isinstance(other, iinfo):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in iinfo.__slots__)

    __hash__ = None

    def __repr__(self):
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"
