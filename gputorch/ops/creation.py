"""Tensor creation: from data (tensor, as_tensor, from_numpy), filled (zeros, ones, full, empty,
their ``*_like`` and ``Tensor.new_*`` forms, empty_strided), ranges (arange, linspace, logspace)
and eye.

Random sampling lives in ``sampling.py``; DLPack exchange in ``gputorch/utils/dlpack.py``.
"""
import array
import collections.abc
import math
import numbers
import warnings

import numpy as np

from .. import _dtype
from .._tracing import STATE as _TRACE
from .._device import device as Device
from .._tensor import Tensor
from ._common import quiet_errors, stored_scalar
from .conversion import resolve_device
from .registry import tensor_method
from .._bfloat16 import check_device as check_bfloat16_device

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
           "zeros_like", "ones_like", "full_like", "empty_like", "empty_strided",
           "arange", "linspace", "logspace", "eye", "scalar_tensor", "frombuffer"]

_PY_SCALARS = frozenset((bool, int, float))


# ---------------------------------------------------------------- sizes
def _sizes(size, name="size"):
    """``(2, 3)``, ``((2, 3),)``, ``([2, 3],)`` or ``(Size,)`` -> a tuple of non-negative ints."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, bool) or not hasattr(s, "__index__") or (
                isinstance(s, Tensor) and s._dtype._category != 1):
            raise TypeError(f"{name} must be a tuple of ints, but got an element of type {type(s).__name__}")
        out.append(s.__index__())
    for s in out:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out}")
    return tuple(out)


def _size_arg(sizes, size):
    """Sizes given positionally (any form ``_sizes`` takes) or as the ``size=`` keyword."""
    if size is not None:
        if sizes:
            raise TypeError("size given both positionally and as a keyword")
        sizes = (size,)
    return _sizes(sizes)


def _on_device(dev, make, *args):
    """Run the array-making function ``make(xp, *args)`` with ``dev`` current."""
    ctx = dev._ctx
    if ctx is None:
        return make(dev.backend.xp, *args)
    with ctx:
        return make(dev.backend.xp, *args)


def _leaf(arr, dev, dt, requires_grad):
    if dt is _dtype.bfloat16:
        check_bfloat16_device(dev)
    t = Tensor._make(arr, dev, dt)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _write_out(out, result):
    """Factories' ``out=``: ``out`` takes the result's values (and shape, if it differs)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"out must be a Tensor, not {type(out).__name__}")
    if out._device is not result._device:
        raise RuntimeError(f"Expected out tensor to be on device {result._device}, but got {out._device}")
    if out._data.shape == result._data.shape:
        out._data[...] = result._data.astype(out._dtype.np, copy=False)
    else:
        out._data = result._data.astype(out._dtype.np, copy=False)
    out._vc[0] += 1
    return out


# ---------------------------------------------------------------- from data
def _scalar_dtype(x):
    t = type(x)
    if t is float:
        return _dtype.get_default_dtype()
    if t is int:
        return _dtype.int64
    if t is bool:
        return _dtype.bool
    if isinstance(x, (np.ndarray, np.generic)):
        return _numpy_dtype(x.dtype)
    if isinstance(x, numbers.Integral):
        return _dtype.int64
    if isinstance(x, numbers.Real):
        return _dtype.get_default_dtype()
    if isinstance(x, numbers.Complex):
        return _dtype.get_default_dtype().to_complex()
    return None


def _numpy_dtype(np_dtype):
    d = _dtype._BY_NP.get(np_dtype)
    if d is None:
        raise TypeError(f"can't convert np.ndarray of type numpy.{np_dtype.type.__name__}. The only "
                        "supported types are: complex128, complex64, float64, float32, float16, int64, "
                        "int32, int16, int8, uint8, and bool.")
    return d


def _other_sequence(data):
    """Whether ``data`` is a sequence other than list/tuple/range that PyTorch also reads element by
    element (``collections.deque``, ``array.array``, ``UserList``, ...); strings are not."""
    return (isinstance(data, (collections.abc.Sequence, array.array))
            and not isinstance(data, (str, bytes, bytearray, memoryview)))


def _infer_dtype(data):
    """PyTorch's dtype for ``data``: the promotion of its elements' types (Python bools, ints
    and floats give bool, int64 and the default float; NumPy values and tensors keep theirs).
    None for an empty sequence."""
    if isinstance(data, Tensor):
        return data._dtype
    d = _scalar_dtype(data)
    if d is not None:
        return d
    if isinstance(data, (list, tuple, range)) or _other_sequence(data):
        types = set(map(type, data))
        if types <= _PY_SCALARS:      # the common flat case, decided without a Python loop
            if not types:
                return None
            return (_dtype.get_default_dtype() if float in types else
                    _dtype.int64 if int in types else _dtype.bool)
        best = None
        for item in data:
            d = _infer_dtype(item)
            if d is not None:
                best = d if best is None else _dtype._PROMOTE[best, d]
        return best
    if isinstance(data, str):
        raise ValueError(f"too many dimensions '{type(data).__name__}'")
    np_dtype = getattr(data, "dtype", None)
    if isinstance(np_dtype, np.dtype):      # CuPy arrays and other array objects
        return _numpy_dtype(np_dtype)
    if hasattr(data, "__array__") or hasattr(data, "__array_interface__"):
        return _numpy_dtype(np.asarray(data).dtype)
    raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")


def _has_tensor(data):
    for x in data:
        if isinstance(x, Tensor) or (isinstance(x, (list, tuple)) and _has_tensor(x)):
            return True
    return False


def _scalars_from_tensors(data):
    """Nested sequences with one-element tensors replaced by their Python values."""
    out = []
    for x in data:
        if isinstance(x, Tensor):
            if x._data.size != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
            out.append(x.item())
        elif isinstance(x, (list, tuple)):
            out.append(_scalars_from_tensors(x))
        else:
            out.append(x)
    return out


def _ragged_error(data, dim=0):
    """The ValueError for nested sequences of unequal lengths."""
    if not isinstance(data, (list, tuple)) or not data:
        return None
    first = data[0]
    if isinstance(first, (list, tuple)):
        for item in data[1:]:
            if not isinstance(item, (list, tuple)):
                return TypeError("not a sequence")
            if len(item) != len(first):
                return ValueError(f"expected sequence of length {len(first)} at dim {dim + 1} "
                                  f"(got {len(item)})")
    for item in data:
        err = _ragged_error(item, dim + 1)
        if err is not None:
            return err
    return None


def _sequence_array(data, inferred, target):
    """A NumPy array of dtype ``target`` from numbers or nested sequences, converted as PyTorch
    does: floats truncate into ints, negative ints wrap into unsigned ones, and values that do
    not fit an integer dtype raise."""
    if isinstance(data, (list, tuple)) and _has_tensor(data):
        data = _scalars_from_tensors(data)
    direct = target is inferred or target._category != 1
    build = target if direct else (_dtype.float64 if inferred.is_floating_point else inferred)
    try:
        with quiet_errors():
            arr = np.array(data, dtype=build.np)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    except (ValueError, TypeError) as e:
        err = _ragged_error(data)
        if err is not None:
            raise err from None
        raise RuntimeError(f"Could not convert the data to a tensor: {e}") from None
    if direct:
        return arr
    info = np.iinfo(target.np)
    lowest = -int(info.max) if info.min == 0 else int(info.min)
    overflow = RuntimeError(f"value cannot be converted to type {target.name} without overflow")
    if arr.size and not bool(((arr >= lowest) & (arr <= info.max)).all()):
        raise overflow
    # an unsigned dtype takes negative integers (they wrap around) but no negative float
    if info.min == 0 and inferred.is_floating_point and arr.size and bool((arr < 0).any()) \
            and _has_negative_float(data):
        raise overflow
    return arr.astype(target.np)


def _has_negative_float(data):
    if isinstance(data, (list, tuple)):
        return any(_has_negative_float(item) for item in data)
    return isinstance(data, (float, np.floating)) and data < 0


def _host_data(data, dtype):
    """``(array, dtype, fresh)``: the data as a NumPy (or device) array of the final dtype;
    ``fresh`` says whether the array is new (else it may alias ``data``)."""
    if isinstance(data, np.ndarray) or hasattr(data, "__cuda_array_interface__"):
        dt = dtype or _numpy_dtype(np.dtype(data.dtype).newbyteorder("="))
        if data.dtype.byteorder not in "=|":
            data = data.astype(data.dtype.newbyteorder("="))
        return data, dt, False
    if (hasattr(data, "__array__") or hasattr(data, "__array_interface__")) and \
            not isinstance(data, np.generic):
        arr = np.asarray(data)
        return arr, dtype or _numpy_dtype(arr.dtype), False
    inferred = _infer_dtype(data) or _dtype.get_default_dtype()
    dt = dtype or inferred
    if isinstance(data, range):
        data = list(data)
    return _sequence_array(data, inferred, dt), dt, True


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of ``data`` (numbers, nested sequences, NumPy arrays,
    tensors). The dtype is inferred as PyTorch does unless ``dtype`` is given."""
    dtype = None if dtype is None else _dtype.to_dtype(dtype)
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.clone()."
                      "detach() or sourceTensor.clone().detach().requires_grad_(True), rather than "
                      "gputorch.tensor(sourceTensor).", UserWarning, stacklevel=2)
        dev = resolve_device(device if device is not None else data._device)
        src = data.detach().to(device=dev, dtype=dtype or data._dtype)
        arr = src._data
        if arr is data._data or not arr.flags.c_contiguous:
            arr = _on_device(dev, lambda xp, a: xp.ascontiguousarray(a).copy(), arr)
        return _leaf(arr, dev, src._dtype, requires_grad)
    dev = resolve_device(device)
    host, dt, fresh = _host_data(data, dtype)
    arr = dev.backend.asarray(host, dt.np, dev) if host.dtype != dt.np or dev.type != "cpu" \
        or not isinstance(host, np.ndarray) else host
    if not fresh and (arr is host or (type(arr) is np.ndarray and np.may_share_memory(arr, host))):
        arr = _on_device(dev, lambda xp, a: xp.array(a, copy=True, order="C"), arr)
    elif not arr.flags.c_contiguous:
        arr = _on_device(dev, lambda xp, a: xp.ascontiguousarray(a), arr)
    return _leaf(arr, dev, dt, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor``, but shares memory with ``data`` (a tensor, a NumPy array or a CuPy
    array) when its dtype and device already match; never records a copy warning."""
    dtype = None if dtype is None else _dtype.to_dtype(dtype)
    if isinstance(data, Tensor):
        return data.to(device=device if device is not None else data._device,
                       dtype=dtype if dtype is not None else data._dtype)
    if isinstance(data, np.ndarray) or hasattr(data, "__cuda_array_interface__"):
        on_gpu = not isinstance(data, np.ndarray)
        dev = resolve_device(device if device is not None or not on_gpu else _array_device(data))
        dt = dtype if dtype is not None else _numpy_dtype(np.dtype(data.dtype))
        if dt.np == data.dtype and str(dev) == str(_array_device(data)):
            if isinstance(data, np.ndarray):
                _check_numpy_strides(data)
                return Tensor._make(data, dev, dt)
            return Tensor._make(dev.backend.asarray(data, dt.np, dev), dev, dt)
        arr = dev.backend.asarray(data, dt.np, dev)
        if arr is data:
            arr = arr.copy()
        return Tensor._make(arr, dev, dt)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``as_tensor`` with NumPy's ``copy`` semantics: True always copies, False never does."""
    if copy:
        t = tensor(obj, dtype=dtype, device=device) if not isinstance(obj, Tensor) else \
            obj.detach().to(device=device or obj._device, dtype=dtype or obj._dtype, copy=True)
    else:
        t = as_tensor(obj, dtype=dtype, device=device)
        if copy is False and isinstance(obj, (np.ndarray, Tensor)) and not _shares(t, obj):
            raise ValueError("can't alias the data: the requested dtype or device differs")
    if requires_grad:
        t.requires_grad_(True)
    return t


def _shares(t, obj):
    data = obj._data if isinstance(obj, Tensor) else obj
    return t._data is data or (isinstance(data, np.ndarray) and isinstance(t._data, np.ndarray)
                               and np.may_share_memory(t._data, data))


def _array_device(arr):
    """The gputorch device of a NumPy ("cpu") or CuPy ("cuda:N") array."""
    index = getattr(getattr(arr, "device", None), "id", None)
    return "cpu" if isinstance(arr, np.ndarray) or index is None else f"cuda:{index}"


def _check_numpy_strides(arr):
    if any(s < 0 for s in arr.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative strides "
            "are not currently supported. (You can probably work around this by making a copy of your "
            "array  with array.copy().) ")
    if any(s % arr.itemsize for s in arr.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. Copy the "
                         "numpy array to reallocate the memory.")


def from_numpy(ndarray):
    """A CPU tensor sharing memory with a NumPy array (writes to one show in the other)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if ndarray.dtype.byteorder not in "=|":
        raise ValueError("given numpy array has byte order different from the native byte order. "
                         "Conversion between byte orders is currently not supported.")
    dt = _numpy_dtype(ndarray.dtype)
    _check_numpy_strides(ndarray)
    if not ndarray.flags.writeable:
        warnings.warn("The given NumPy array is not writable, and gputorch does not support non-writable "
                      "tensors. This means writing to this tensor will result in undefined behavior. You "
                      "may want to copy the array to protect its data or make it writable before "
                      "converting it to a tensor.", UserWarning, stacklevel=2)
    return Tensor._make(ndarray, Device("cpu"), dt)


# ---------------------------------------------------------------- filled tensors
def _fill(xp, fill, size, np_dtype):
    if fill is None:
        return xp.empty(size, np_dtype)
    if fill == 0:
        return xp.zeros(size, np_dtype)
    with quiet_errors():
        return xp.full(size, fill, np_dtype)


def _factory(fill, size, dtype, device, requires_grad, out=None):
    if out is not None and dtype is None:
        dtype = out._dtype
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    dev = resolve_device(device if device is not None or out is None else out._device)
    t = _leaf(_on_device(dev, _fill, fill, size, dt.np), dev, dt, requires_grad)
    return t if out is None else _write_out(out, t)


def _fill_value(value):
    if isinstance(value, Tensor):
        if value._data.size != 1:
            raise RuntimeError(f"fill_value must be a scalar, got a tensor with {value._data.size} elements")
        return value.item()
    if not isinstance(value, (numbers.Number, np.bool_)):
        raise TypeError(f"fill_value must be a number, not {type(value).__name__}")
    return value


def zeros(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A tensor of zeros: ``zeros(2, 3)``, ``zeros((2, 3))``, ``zeros([2, 3])``, ``zeros(t.shape)``,
    ``zeros(size=(2, 3))``."""
    return _factory(0, _size_arg(sizes, size), dtype, device, requires_grad, out)


def ones(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _factory(1, _size_arg(sizes, size), dtype, device, requires_grad, out)


def empty(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    """An uninitialised tensor."""
    return _factory(None, _size_arg(sizes, size), dtype, device, requires_grad, out)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """A tensor filled with ``fill_value``; its dtype is inferred from the value unless given
    (bool, int64 or the default float)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    fill_value = _fill_value(fill_value)
    if dtype is None and out is None:
        dtype = _dtype.scalar_dtype(fill_value)
    if dtype is not None:
        fill_value = stored_scalar(fill_value, _dtype.to_dtype(dtype))
    return _factory(fill_value, _sizes((size,)), dtype, device, requires_grad, out)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=None):
    """A 0-d tensor holding the number ``s``, in the default float dtype unless ``dtype`` is given
    (an int or a bool makes a float tensor too, unlike ``full``)."""
    if isinstance(s, Tensor) or not isinstance(s, numbers.Number):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not {type(s).__name__}")
    return full((), s, dtype=_dtype.get_default_dtype() if dtype is None else dtype, device=device,
                requires_grad=requires_grad)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-d CPU tensor sharing memory with ``buffer`` (any object of the buffer protocol): ``count``
    elements of ``dtype`` (-1: all) from byte ``offset``. A read-only buffer gives a tensor that
    must not be written (PyTorch's warning)."""
    dt = _dtype.to_dtype(dtype)
    size = memoryview(buffer).nbytes
    item = dt.itemsize
    if count == 0 or size == 0:
        raise ValueError(f"both buffer length ({size}) and count ({count}) must not be 0")
    if offset < 0 or offset >= size:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({size} "
                         f"bytes) minus 1")
    if count < 0:
        if (size - offset) % item:
            raise ValueError(f"buffer length ({size - offset} bytes) after offset ({offset} bytes) must be a multiple "
                             f"of element size ({item})")
        count = (size - offset) // item
    elif offset + count * item > size:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset ({offset} bytes) must not be "
                         f"greater than actual buffer length ({size} bytes)")
    arr = np.frombuffer(buffer, dtype=dt.np, count=count, offset=offset)
    if not arr.flags.writeable:
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor. You "
                      "may want to copy the buffer to protect its data or make it writable before converting it to "
                      "a tensor.", stacklevel=2)
    result = Tensor._make(arr, Device("cpu"), dt)
    if requires_grad:
        result.requires_grad_(True)
    return result


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
    """``full`` of ``input``'s shape (and dtype and device unless given); the value is checked and
    stored as ``full`` stores it (uint8 and -1 -> 255)."""
    fill = stored_scalar(_fill_value(fill_value), _dtype.to_dtype(dtype) if dtype is not None else input._dtype)
    return _like(fill, input, dtype, device, requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor with the given element strides (a view of a flat buffer)."""
    size, stride = _sizes((size,)), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    dev = resolve_device(device)
    extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))

    def make(xp, itemsize=dt.itemsize):
        flat = xp.empty(extent, dt.np)
        return xp.lib.stride_tricks.as_strided(flat, size, tuple(s * itemsize for s in stride))
    return _leaf(_on_device(dev, make), dev, dt, requires_grad)


# ---------------------------------------------------------------- Tensor.new_*
def _new_size(size):
    return _sizes(size)


@tensor_method("new_zeros")
def new_zeros(self, *size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Zeros with this tensor's dtype and device unless given."""
    return _factory(0, _new_size(size), dtype or self._dtype, device or self._device, requires_grad)


@tensor_method("new_ones")
def new_ones(self, *size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _factory(1, _new_size(size), dtype or self._dtype, device or self._device, requires_grad)


@tensor_method("new_empty")
def new_empty(self, *size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _factory(None, _new_size(size), dtype or self._dtype, device or self._device, requires_grad)


@tensor_method("new_full")
def new_full(self, size, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    dt = _dtype.to_dtype(dtype) if dtype is not None else self._dtype
    return _factory(stored_scalar(_fill_value(fill_value), dt), _sizes((size,)), dt,
                    device or self._device, requires_grad)


@tensor_method("new_empty_strided")
def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                      pin_memory=False):
    return empty_strided(size, stride, dtype=dtype or self._dtype, device=device or self._device,
                         requires_grad=requires_grad)


@tensor_method("new_tensor")
def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A copy of ``data`` with this tensor's dtype and device unless given."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.clone()."
                      "detach() or sourceTensor.clone().detach().requires_grad_(True), rather than "
                      "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        data = data.detach()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tensor(data, dtype=dtype or self._dtype, device=device or self._device,
                      requires_grad=requires_grad)


# ---------------------------------------------------------------- ranges
def _number(x, name):
    if isinstance(x, Tensor):
        if x._data.size != 1:
            raise RuntimeError(f"{name} must be a scalar, got a tensor with {x._data.size} elements")
        return x.item()
    if isinstance(x, np.generic):
        return x.item()
    if not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a number, not {type(x).__name__}")
    return x


def _check_float_requires_grad(dt, requires_grad):
    if requires_grad and dt._category < 2:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")


def _not_implemented(op, dt):
    from .._tensor import _LEGACY_NAMES
    return NotImplementedError(f'"{op}" not implemented for \'{_LEGACY_NAMES[dt]}\'')


def _check_step_sign(start, end, step):
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """Values ``start, start + step, ...`` below ``end`` (``arange(end)`` starts at 0).

    The dtype is int64 when every bound is an integer, else the default float dtype;
    the length is ``ceil((end - start) / step)``.
    """
    if end is None:
        start, end = 0, start
    start, end, step = _number(start, "start"), _number(end, "end"), _number(step, "step")
    if dtype is None:
        dtype = out._dtype if out is not None else (
            _dtype.get_default_dtype() if any(isinstance(v, float) for v in (start, end, step))
            else _dtype.int64)
    dt = _dtype.to_dtype(dtype)
    if dt is _dtype.bool:
        raise _not_implemented("arange_cpu", dt)
    _check_float_requires_grad(dt, requires_grad)
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    _check_step_sign(start, end, step)   # on the given bounds, before an integer dtype truncates them
    if dt.is_floating_point:
        first, delta = float(start), float(step)
    else:   # integer results count from the truncated start by the truncated step
        first, delta = int(start), int(step)
        if dt is _dtype.int64:      # and int64 also truncates the end before sizing
            if delta == 0:          # a fractional step that truncates to 0 (PyTorch: ValueError here)
                raise ValueError("step must be nonzero")
            start, end, step = first, int(end), delta
    _check_step_sign(start, end, step)
    if all(isinstance(v, int) for v in (start, end, step)):
        length = max(0, -((start - end) // step))
    else:
        length = max(0, math.ceil((end - start) / step))
    if length >= 1 << 62:
        raise RuntimeError("invalid size, possible overflow?")
    dev = resolve_device(device if device is not None or out is None else out._device)

    def make(xp):
        acc = np.float64 if dt.is_floating_point else np.int64
        return (first + xp.arange(length, dtype=acc) * delta).astype(dt.np, copy=False)
    with quiet_errors():
        t = _leaf(_on_device(dev, make), dev, dt, requires_grad)
    if _TRACE.graph is not None and out is None:   # a traced model's positions: replayable, sizable
        _TRACE.graph.record_creation("arange", dict(start=start, end=end, step=step, dtype=dt, device=dev), t)
    return t if out is None else _write_out(out, t)


def _linspace_array(xp, start, end, steps, np_dtype):
    """PyTorch's linspace: the first half counts up from ``start``, the second half down from
    ``end`` (both ends exact), in the dtype's precision (float64 for integer dtypes)."""
    np_dtype = np.dtype(np_dtype)
    work = np.float64 if np_dtype.kind != "f" else np.float32 if np_dtype.itemsize < 4 else np_dtype.type
    if np_dtype.kind != "f":
        start, end = int(start), int(end)
    if steps == 1:
        return xp.full(1, start, dtype=work)
    s, e = work(start), work(end)
    step = (e - s) / work(steps - 1)
    if work is np.float32:
        # PyTorch's CPU kernel fuses the multiply-add (one rounding); float64 arithmetic on the float32
        # operands, rounded once, gives the same values.
        idx = xp.arange(steps, dtype=np.float64)
        up = (np.float64(s) + np.float64(step) * idx).astype(np.float32)
        down = (np.float64(e) - np.float64(step) * (steps - 1 - idx)).astype(np.float32)
    else:
        idx = xp.arange(steps, dtype=work)
        up = s + step * idx
        down = e - step * (work(steps - 1) - idx)
    return xp.where(idx < steps // 2, up, down)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    start, end = _number(start, "start"), _number(end, "end")
    steps = _check_steps(steps)
    dt = _dtype.to_dtype(dtype) if dtype is not None else (
        out._dtype if out is not None else _dtype.get_default_dtype())
    if dt is _dtype.bool:
        raise _not_implemented("linspace_cpu", dt)
    _check_ends_fit(start, end, steps, dt)
    _check_float_requires_grad(dt, requires_grad)
    dev = resolve_device(device if device is not None or out is None else out._device)

    def make(xp):
        with quiet_errors():
            return _linspace_array(xp, start, end, steps, dt.np).astype(dt.np, copy=False)
    t = _leaf(_on_device(dev, make), dev, dt, requires_grad)
    return t if out is None else _write_out(out, t)


def _check_ends_fit(start, end, steps, dt):
    """PyTorch stores ``start`` and ``end`` in the result's dtype before stepping (when there are two
    steps or more): a value that does not fit (-3.5 in uint8, 300 in int8, 1e40 in float32) is its
    overflow error."""
    if steps >= 2 and dt._category in (1, 2):
        stored_scalar(start, dt)
        stored_scalar(end, dt)


def _check_steps(steps):
    if isinstance(steps, Tensor):
        steps = steps.item()
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"steps must be an int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return int(steps)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``base ** linspace(start, end, steps)``."""
    start, end, base = _number(start, "start"), _number(end, "end"), _number(base, "base")
    steps = _check_steps(steps)
    dt = _dtype.to_dtype(dtype) if dtype is not None else (
        out._dtype if out is not None else _dtype.get_default_dtype())
    if dt is _dtype.bool:
        raise _not_implemented("logspace_cpu", dt)
    _check_ends_fit(start, end, steps, dt)
    _check_float_requires_grad(dt, requires_grad)
    dev = resolve_device(device if device is not None or out is None else out._device)
    if steps == 1 and dt._category == 1:   # PyTorch fills ``base ** start``, checked like any fill value
        value = stored_scalar(float(base) ** float(start), dt)
        return full((1,), value, dtype=dt, device=dev, requires_grad=requires_grad, out=out)

    def make(xp):
        with quiet_errors():
            exponents = _linspace_array(xp, start, end, steps, np.float64)
            if dt._category == 1:   # integer dtypes: whole exponents, powers wrapped into the dtype
                powers = xp.power(np.float64(base), xp.floor(exponents))
                return powers.astype(np.int64).astype(dt.np)
            return xp.power(np.float64(base), exponents).astype(dt.np)
    t = _leaf(_on_device(dev, make), dev, dt, requires_grad)
    return t if out is None else _write_out(out, t)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False):
    """A 2-D tensor with ones on the diagonal: ``n`` rows and ``m`` (default ``n``) columns."""
    n = int(n)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    m = n if m is None else int(m)
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    dt = _dtype.to_dtype(dtype) if dtype is not None else (
        out._dtype if out is not None else _dtype.get_default_dtype())
    _check_float_requires_grad(dt, requires_grad)
    dev = resolve_device(device if device is not None or out is None else out._device)
    t = _leaf(_on_device(dev, lambda xp: xp.eye(n, m, dtype=dt.np)), dev, dt, requires_grad)
    return t if out is None else _write_out(out, t)
