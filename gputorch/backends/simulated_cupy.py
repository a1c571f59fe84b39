"""A stand-in for the part of CuPy that the CUDA backend uses, for tests without a GPU.

Switched on by ``GPUTORCH_SIMULATE_CUDA=N`` (N simulated devices). Arrays are NumPy
arrays tagged with the device they live on; like CuPy, every operation checks
that its array arguments live on the *current* device, so a missing device
switch in gputorch fails here exactly as it would on a multi-GPU machine.
Users get the real CuPy; this module exists for tests only.

Besides arrays it provides what the CUDA backend uses of CuPy:

* ``RawModule`` / ``RawKernel``: CUDA C kernels compiled with g++ and run on the CPU by the
  execution harness (``gputorch.cuda.harness``); launches check, like CuPy would fail on a
  GPU, that array arguments are device arrays of the current device;
* the memory pool's counters (``get_default_memory_pool()``: ``used_bytes``, ``total_bytes``,
  ``free_bytes``, ``n_free_blocks``, ``free_all_blocks``, ``set_limit``): the live simulated
  arrays' buffers, rounded up to 512 bytes like CuPy's pool, per device; freed buffers stay
  cached (counted in ``total_bytes``) until ``free_all_blocks``; an allocation beyond the
  simulated device memory raises ``cuda.memory.OutOfMemoryError``;
* ``cuda.runtime.memGetInfo()``: (free, total) of a simulated device of
  ``GPUTORCH_SIMULATE_CUDA_MEMORY`` bytes (default 16 GiB; suffixes K, M, G accepted);
* streams and events as no-ops (``cuda.Stream``, ``cuda.get_current_stream``, ``cuda.Event``).
"""
import os
import weakref

import numpy as _np

__all__ = ["ndarray", "asarray", "array", "asnumpy", "cuda", "get_array_module", "RawModule", "RawKernel",
           "get_default_memory_pool", "get_default_pinned_memory_pool"]


def _device_count():
    return int(os.environ.get("GPUTORCH_SIMULATE_CUDA", "0") or 0)


class _Runtime:
    """``cupy.cuda.runtime``: the current device of this (single-threaded) process."""

    def __init__(self):
        self._current = 0

    def getDeviceCount(self):
        return _device_count()

    def getDevice(self):
        return self._current

    def setDevice(self, index):
        if not 0 <= index < _device_count():
            raise CUDARuntimeError(f"cudaErrorInvalidDevice: invalid device ordinal {index}")
        self._current = index

    def deviceSynchronize(self):
        pass

    def memGetInfo(self):
        """(free, total) bytes of the current simulated device."""
        total = _device_memory()
        pool = _pools.pool(self._current)
        return max(total - pool.used - pool.cached_bytes, 0), total

    def getDeviceProperties(self, index):
        return {"name": b"Simulated CUDA device", "totalGlobalMem": _device_memory(), "major": 8, "minor": 0,
                "multiProcessorCount": 108, "sharedMemPerBlock": 49152, "sharedMemPerBlockOptin": 232448,
                "maxThreadsPerBlock": 1024, "warpSize": 32, "clockRate": 1410000, "memoryClockRate": 1215000,
                "memoryBusWidth": 5120, "l2CacheSize": 41943040}

    def runtimeGetVersion(self):
        return 12090

    def driverGetVersion(self):
        return 12090


class CUDARuntimeError(RuntimeError):
    pass


class Device:
    """``cupy.cuda.Device``: a context manager that makes a device current."""

    def __init__(self, device=None):
        self.id = _runtime.getDevice() if device is None else int(device)
        self._prev = []

    def __enter__(self):
        self._prev.append(_runtime.getDevice())
        _runtime.setDevice(self.id)
        return self

    def __exit__(self, *exc):
        _runtime.setDevice(self._prev.pop())
        return False

    def use(self):
        _runtime.setDevice(self.id)

    def synchronize(self):
        pass

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


class _CudaNamespace:
    Device = Device
    runtime = None

    class runtime_errors:
        CUDARuntimeError = CUDARuntimeError


_runtime = _Runtime()
cuda = _CudaNamespace()
cuda.runtime = _runtime

from .simulated_cupy_memory import (MemoryPointer as _MemoryPointer, device_memory as _device_memory,  # noqa: E402
                                    get_default_memory_pool, get_default_pinned_memory_pool, pools as _pools)
from .simulated_cupy_kernels import RawKernel, RawModule  # noqa: E402
from . import simulated_cupy_memory as _memory, simulated_cupy_kernels as _kernels  # noqa: E402

_memory.install(cuda, _runtime)
_kernels.install(cuda)


def _check_current(arrays):
    current = _runtime.getDevice()
    for a in arrays:
        if isinstance(a, ndarray) and a._device_id != current:
            raise ValueError(
                f"Array device must be same as the current device: array device = {a._device_id} "
                f"while current = {current}")


class ndarray(_np.ndarray):
    """A NumPy array that remembers its (simulated) device."""

    _device_id = 0

    def __array_finalize__(self, obj):
        self._device_id = getattr(obj, "_device_id", _runtime._current)
        _pools.track(self)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _check_current(inputs)
        _check_current(kwargs.get("out", ()))
        args = [x.view(_np.ndarray) if isinstance(x, ndarray) else x for x in inputs]
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(o.view(_np.ndarray) if isinstance(o, ndarray) else o for o in out)
        result = getattr(ufunc, method)(*args, **kwargs)
        return _wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        return _call(func, args, kwargs)

    @property
    def device(self):
        return Device(self._device_id)

    @property
    def data(self):
        """``cupy.cuda.MemoryPointer``-like: ``.ptr`` is the address of the first element."""
        return _MemoryPointer(self.__array_interface__["data"][0], self._device_id)

    def get(self, stream=None):
        """Copy to the host as a plain NumPy array."""
        return _np.array(self.view(_np.ndarray), copy=True)

    def __reduce__(self):  # pickling copies to the host like CuPy forbids; tests never pickle these
        raise TypeError("simulated CUDA arrays cannot be pickled; copy them to the host first")


def _flatten_arrays(obj, found):
    if isinstance(obj, ndarray):
        found.append(obj)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _flatten_arrays(x, found)
    return found


def _unwrap(obj):
    if isinstance(obj, ndarray):
        return obj.view(_np.ndarray)
    if isinstance(obj, list):
        return [_unwrap(x) for x in obj]
    if isinstance(obj, tuple):
        return tuple(_unwrap(x) for x in obj)
    return obj


def _wrap(result):
    """Results land on the current device."""
    if isinstance(result, _np.ndarray):
        out = result.view(ndarray)
        out._device_id = _runtime.getDevice()
        return out
    if isinstance(result, tuple):
        return tuple(_wrap(r) for r in result)
    if isinstance(result, list):
        return [_wrap(r) for r in result]
    return result


def _call(func, args, kwargs):
    _check_current(_flatten_arrays(list(args) + list(kwargs.values()), []))
    return _wrap(func(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))


def asarray(obj, dtype=None, order=None):
    if isinstance(obj, ndarray):
        if obj._device_id != _runtime.getDevice():
            return _wrap(_np.array(obj.view(_np.ndarray), dtype=dtype, copy=True))
        return obj if dtype is None or obj.dtype == dtype else obj.astype(dtype)
    return _wrap(_np.array(obj, dtype=dtype, copy=True, order=order or "K"))


def array(obj, dtype=None, copy=True, order="K", ndmin=0):
    return _wrap(_np.array(obj.view(_np.ndarray) if isinstance(obj, ndarray) else obj, dtype=dtype,
                           copy=True, order=order, ndmin=ndmin))


def asnumpy(a, stream=None):
    if isinstance(a, ndarray):
        return _np.array(a.view(_np.ndarray), copy=True)
    return _np.asarray(a)


def get_array_module(*args):
    import sys
    return sys.modules[__name__]


class _Submodule:
    """``xp.linalg``, ``xp.random`` ...: the NumPy submodule with device checks and wrapping."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        return _adapt(getattr(self._module, name))


def _adapt(value):
    if callable(value) and not isinstance(value, type):
        def wrapper(*args, **kwargs):
            return _call(value, args, kwargs)
        wrapper.__name__ = getattr(value, "__name__", "function")
        return wrapper
    return value


_SUBMODULES = {"linalg": _np.linalg, "fft": _np.fft}
_PASSTHROUGH = {"ndarray", "dtype", "float16", "float32", "float64", "int8", "int16", "int32",
                "int64", "uint8", "bool_", "inf", "nan", "pi", "e", "newaxis", "finfo", "iinfo",
                "result_type", "promote_types", "can_cast", "errstate", "integer", "floating",
                "number", "generic"}


def __getattr__(name):
    if name in _SUBMODULES:
        return _Submodule(_SUBMODULES[name])
    value = getattr(_np, name)
    if name in _PASSTHROUGH or isinstance(value, type):
        return value
    if isinstance(value, _np.ufunc):
        return _UfuncProxy(value)
    return _adapt(value)


class _UfuncProxy:
    """A ufunc whose calls check devices and whose results land on the current device."""

    def __init__(self, ufunc):
        self._ufunc = ufunc

    def __call__(self, *args, **kwargs):
        return _call(self._ufunc, args, kwargs)

    def __getattr__(self, name):
        attr = getattr(self._ufunc, name)
        return _adapt(attr) if callable(attr) else attr
