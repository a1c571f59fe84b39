"""Tensor creation: tensor, as_tensor, from_numpy, zeros/ones/full/empty (and *_like)."""
import numbers

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .conversion import resolve_device

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty",
           "zeros_like", "ones_like", "full_like", "empty_like"]


def _sizes(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"size must be a tuple of ints, got an element of type {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(int(s) for s in size)


def _infer_dtype(data):
    """PyTorch's dtype for Python data: bool, int64 or the default float; NumPy keeps its own."""
    if isinstance(data, Tensor):
        return data._dtype
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        if data.dtype.kind == "f" and data.dtype.itemsize > 8:
            return _dtype.float64
        return _dtype.from_numpy_dtype(data.dtype)
    if isinstance(data, bool):
        return _dtype.bool
    if isinstance(data, numbers.Integral):
        return _dtype.int64
    if isinstance(data, numbers.Real):
        return _dtype.get_default_dtype()
    if isinstance(data, numbers.Complex):
        raise TypeError("gputorch has no complex dtypes")
    if isinstance(data, (list, tuple)):
        best = None
        for item in data:
            d = _infer_dtype(item)
            best = d if best is None else _dtype._PROMOTE[best, d] if d._category != best._category \
                or d.is_floating_point else _wider(best, d)
        return best or _dtype.get_default_dtype()
    if hasattr(data, "__array__") or hasattr(data, "__dlpack__") or hasattr(data, "__cuda_array_interface__"):
        return _infer_dtype(np.asarray(data))
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _wider(a, b):
    return _dtype._PROMOTE[a, b]


def _to_host(data):
    """Nested lists/tuples of numbers or tensors -> a NumPy array."""
    if isinstance(data, Tensor):
        return data._device.backend.to_numpy(data._data)
    if isinstance(data, (list, tuple)):
        if any(isinstance(x, Tensor) for x in data):
            return np.array([_to_host(x) for x in data])
        try:
            return np.array(data)
        except ValueError as e:
            raise ValueError(f"expected a sequence of equal-length sequences ({e})") from None
    return np.asarray(data)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of ``data`` (nested lists, numbers, NumPy arrays, tensors)."""
    if isinstance(data, Tensor):
        import warnings
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.clone()."
                      "detach() or sourceTensor.clone().detach().requires_grad_(True), rather than "
                      "gputorch.tensor(sourceTensor).", UserWarning, stacklevel=2)
    dt = _dtype.to_dtype(dtype) if dtype is not None else _infer_dtype(data)
    if device is None and isinstance(data, Tensor):
        device = data._device
    dev = resolve_device(device)
    host = _to_host(data) if not _is_device_array(data) else data
    arr = dev.backend.asarray(host, dt.np, dev)
    if arr is host or (isinstance(data, np.ndarray) and np.shares_memory(arr, data)):
        arr = arr.copy()
    t = Tensor._make(arr, dev, dt)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _is_device_array(data):
    return hasattr(data, "__cuda_array_interface__")


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with ``data`` when dtype and device already match."""
    if isinstance(data, Tensor):
        return data.to(device=device if device is not None else data._device,
                       dtype=dtype if dtype is not None else data._dtype)
    if isinstance(data, np.ndarray):
        dt = _dtype.to_dtype(dtype) if dtype is not None else _infer_dtype(data)
        dev = resolve_device(device)
        arr = dev.backend.asarray(data, dt.np, dev)
        return Tensor._make(arr, dev, dt)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray):
    """A CPU tensor sharing memory with a NumPy array."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dt = _dtype.from_numpy_dtype(ndarray.dtype)
    if not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. "
                         "Conversion between byte orders is currently not supported.")
    return Tensor._make(ndarray, resolve_device("cpu"), dt)


def _factory(fill, size, dtype, device, requires_grad):
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    dev = resolve_device(device)
    xp = dev.backend.xp
    ctx = dev._ctx
    if ctx is None:
        arr = _fill(xp, fill, size, dt)
    else:
        with ctx:
            arr = _fill(xp, fill, size, dt)
    t = Tensor._make(arr, dev, dt)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _fill(xp, fill, size, dt):
    if fill is None:
        return xp.empty(size, dt.np)
    if fill == 0:
        return xp.zeros(size, dt.np)
    return xp.full(size, fill, dt.np)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _factory(0, _sizes(size), dtype, device, requires_grad)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _factory(1, _sizes(size), dtype, device, requires_grad)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    return _factory(None, _sizes(size), dtype, device, requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A tensor filled with ``fill_value``; the dtype is inferred from it when not given."""
    if dtype is None:
        dtype = _dtype.scalar_dtype(fill_value)
    return _factory(fill_value, _sizes((size,) if isinstance(size, int) else (tuple(size),)),
                    dtype, device, requires_grad)


def _like(fill, input, dtype, device, requires_grad):
    return _factory(fill, input._data.shape, dtype if dtype is not None else input._dtype,
                    device if device is not None else input._device, requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _like(0, input, dtype, device, requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _like(1, input, dtype, device, requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _like(None, input, dtype, device, requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _like(fill_value, input, dtype, device, requires_grad)
