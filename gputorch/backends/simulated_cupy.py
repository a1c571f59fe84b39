"""A stand-in for the part of CuPy that the CUDA backend uses, for tests without a GPU.

Switched on by ``GPUTORCH_SIMULATE_CUDA=N`` (N simulated devices). It is as strict as CuPy, so
that code which would fail on a GPU fails here:

* the module has only the names of CuPy (``simulated_cupy_api.py``, generated from the installed
  CuPy by ``simulated_cupy_apigen.py``), and its functions and ufuncs take only CuPy's
  parameters (``cupy.clip(a, min=...)`` or ``cupy.exp(a, where=...)`` is a TypeError);
* arrays (``simulated_cupy_array.ndarray``) are not NumPy arrays: ``numpy.asarray`` of one, or a
  host array mixed into a device op, is a TypeError; ``.get()``, ``asnumpy`` and DLPack lead
  to the host; results are device arrays (0-d ones where NumPy returns scalars);
* like CuPy, every operation checks that its array arguments live on the *current* device, so a
  missing device switch in gputorch fails here exactly as it would on a multi-GPU machine.

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
* streams and events (``cuda.Stream``, ``cuda.get_current_stream``, ``cuda.Event``): kernels run
  synchronously, so only the simulated NCCL's collectives (``cuda.nccl``, built on MPI) are ever in
  flight on a stream;
* stream capture and CUDA graphs (``Stream.begin_capture``/``end_capture``/``is_capturing``,
  ``cuda.Graph``, ``cuda.using_allocator``): while a stream captures, work is recorded into the
  graph instead of run, and what CuPy refuses during capture is refused
  (``simulated_cupy_graph.py``).
"""
import inspect as _inspect
import os

import numpy as _np

from . import simulated_cupy_graph as _graph

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
        _graph.synchronize_stream(None)

    streamCaptureModeGlobal, streamCaptureModeThreadLocal, streamCaptureModeRelaxed = 0, 1, 2

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
        _graph.synchronize_stream(None)

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
from . import simulated_cupy_api as _api  # noqa: E402
from . import simulated_cupy_semantics as _semantics  # noqa: E402
from . import simulated_cupy_memory as _memory, simulated_cupy_kernels as _kernels  # noqa: E402

_memory.install(cuda, _runtime)
_kernels.install(cuda)
from . import simulated_cupy_nccl as _nccl  # noqa: E402
cuda.nccl = _nccl


from .simulated_cupy_array import (ndarray, check_current as _check_current,  # noqa: E402
                                   flatten_arrays as _flatten_arrays, reject_host as _reject_host,
                                   unwrap as _unwrap, wrap as _wrap, call as _call, new as _new)


def _copied(name, source, arrays, **kwargs):
    """A copy of ``source`` (device buffers behind ``arrays``, or a host snapshot) in a new buffer of
    the current device: a memcpy, recorded when the current stream captures."""
    result = _graph.run(name, lambda: _np.array(source, copy=True, **kwargs), arrays, kind="memcpy")
    return _new(result, _runtime.getDevice())


def asarray(obj, dtype=None, order=None, *, copy=None, blocking=False):
    """``cupy.asarray``: ``obj`` itself when it is an array of this device with that dtype; host data
    (NumPy arrays, scalars, lists) is copied to the current device."""
    if isinstance(obj, ndarray):
        if obj._device_id != _runtime.getDevice():
            return _copied("memcpyPeer", obj._a, [obj], dtype=dtype, order=order or "K")
        return obj if dtype is None or obj.dtype == dtype else obj.astype(dtype)
    if isinstance(obj, (list, tuple)) and _flatten_arrays(obj, []):
        return array(obj, dtype=dtype)
    host = _np.array(obj, dtype=dtype, copy=True, order=order or "K")
    _graph.host_to_device("cupy.asarray", host)
    return _copied("memcpyHtoD", host, [], order="K")


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    arrays = []
    if isinstance(obj, ndarray):
        arrays = [obj]
        obj = obj._a
    elif isinstance(obj, (list, tuple)) and _flatten_arrays(obj, []):
        arrays = [asarray(x) for x in obj]
        obj = [x._a for x in arrays]
    else:
        obj = _np.array(obj, dtype=dtype, copy=True, order=order, ndmin=ndmin)
        _graph.host_to_device("cupy.array", obj)
    return _copied("memcpyHtoD" if not arrays else "memcpyDtoD", obj, arrays, dtype=dtype, order=order,
                   ndmin=ndmin)


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
    """A host copy of a device array (other objects go through ``numpy.asarray``)."""
    if isinstance(a, ndarray):
        return a.get(order=order, out=out)
    result = _np.asarray(a, order=order)
    if out is not None:
        _np.copyto(out, result)
        return out
    return result


def get_array_module(*args):
    """This module when an argument is a device array, else NumPy (as ``cupy.get_array_module``)."""
    import sys
    return sys.modules[__name__] if any(isinstance(a, ndarray) for a in args) else _np


_SIMULATED_SUBMODULES = {"linalg": _np.linalg, "fft": _np.fft, "random": _np.random}


class _Namespace:
    """``xp.linalg``, ``xp.fft``, ``xp.random``, ``xp.lib.stride_tricks``: the names CuPy's submodule
    has, served by NumPy's with device checks and wrapping."""

    def __init__(self, path, module):
        self._path = path
        self._module = module

    def __getattr__(self, name):
        if self._path == "lib" and name == "stride_tricks":
            return _Namespace("lib.stride_tricks", _np.lib.stride_tricks)
        table = _api.SUBMODULES.get(self._path, {})
        if name not in table:
            raise AttributeError(f"module 'cupy.{self._path}' has no attribute {name!r} (CuPy {_api.VERSION})")
        value = _semantics.OVERRIDES.get(f"{self._path}.{name}") or getattr(self._module, name)
        return _adapt(f"cupy.{self._path}.{name}", value, table[name])

    def __repr__(self):
        return f"<simulated module 'cupy.{self._path}'>"


_signatures = {}
_PARAM_KINDS = {"p": _inspect.Parameter.POSITIONAL_ONLY, "a": _inspect.Parameter.POSITIONAL_OR_KEYWORD,
                "v": _inspect.Parameter.VAR_POSITIONAL, "k": _inspect.Parameter.KEYWORD_ONLY,
                "w": _inspect.Parameter.VAR_KEYWORD}


def _signature(qualname, spec):
    """An ``inspect.Signature`` built from a generated parameter spec (see simulated_cupy_apigen)."""
    sig = _signatures.get(qualname)
    if sig is None:
        params = []
        for p in spec:
            code, name = p.split(":", 1)
            default = None if "=" in code else _inspect.Parameter.empty
            params.append(_inspect.Parameter(name, _PARAM_KINDS[code[0]], default=default))
        sig = _signatures[qualname] = _inspect.Signature(params)
    return sig


def _check_call(qualname, spec, args, kwargs):
    """A TypeError, like CuPy's, when ``args``/``kwargs`` do not fit CuPy's signature of the function."""
    if spec is None:
        return
    try:
        _signature(qualname, spec).bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{qualname}(): {e} (CuPy {_api.VERSION}'s signature: "
                        f"{qualname}{_signature(qualname, spec)})") from None


# Functions of CuPy that take host data (or only look at dtypes and shapes).
_HOST_INPUTS_ALLOWED = {"asarray", "array", "asanyarray", "asnumpy", "from_dlpack", "result_type", "can_cast",
                        "min_scalar_type", "ndim", "shape", "size", "isscalar", "iscomplexobj", "isrealobj"}


def _adapt(qualname, value, entry):
    kind, spec = entry
    if kind == "ufunc" and isinstance(value, _np.ufunc):
        return _UfuncProxy(qualname, value, spec)
    if kind == "function" and callable(value) and not isinstance(value, type):
        host_ok = qualname.rsplit(".", 1)[-1] in _HOST_INPUTS_ALLOWED

        def wrapper(*args, **kwargs):
            _check_call(qualname, spec, args, kwargs)
            if not host_ok:  # ufunc.at's indices, like array indices, may be host data
                checked = [a for i, a in enumerate(args) if not (i == 1 and qualname.endswith(".at"))]
                _reject_host(checked + [v for k, v in kwargs.items() if k != "indices"], qualname)
            return _call(value, args, kwargs, qualname)
        wrapper.__name__ = qualname.rsplit(".", 1)[-1]
        wrapper.__qualname__ = qualname
        return wrapper
    return value


# Names CuPy has that NumPy spells differently or lacks; the rest of CuPy's extras (ElementwiseKernel,
# fuse, ...) are not simulated and raise AttributeError.
_ALIASES = {"asfarray": lambda a, dtype=_np.float64: asarray(a, dtype=dtype if _np.dtype(dtype).kind in "fc"
                                                              else _np.float64)}


def __getattr__(name):
    entry = _api.NAMES.get(name)
    if entry is None:
        raise AttributeError(f"module 'cupy' has no attribute {name!r} (the simulated CuPy has only the names of "
                             f"CuPy {_api.VERSION}; see gputorch/backends/simulated_cupy_api.py)")
    if name in _SIMULATED_SUBMODULES:
        return _Namespace(name, _SIMULATED_SUBMODULES[name])
    if name == "lib":
        return _Namespace("lib", _np.lib)
    if name in _ALIASES:
        return _ALIASES[name]
    value = getattr(_np, name, _MISSING)
    if name in _semantics.OVERRIDES:
        if entry[0] == "ufunc":
            return _UfuncProxy(f"cupy.{name}", value, entry[1], impl=_semantics.OVERRIDES[name])
        return _adapt(f"cupy.{name}", _semantics.OVERRIDES[name], entry)
    if value is _MISSING or entry[0] == "module":
        raise AttributeError(f"cupy.{name} is not simulated (the simulated CuPy stands in for the part of CuPy "
                             f"that gputorch uses)")
    return _adapt(f"cupy.{name}", value, entry)


_MISSING = object()


class _UfuncProxy:
    """A CuPy ufunc: NumPy's, with CuPy's keywords and methods, device checks, and results on the
    current device."""

    def __init__(self, qualname, ufunc, spec, impl=None):
        self._qualname = qualname
        self._ufunc = ufunc
        self._impl = ufunc if impl is None else impl   # CuPy's arithmetic where it differs from NumPy's
        self.nin, self.nout, self._keywords = spec
        self.nargs = self.nin + self.nout
        self.__name__ = ufunc.__name__

    def __call__(self, *args, **kwargs):
        if len(args) > self.nargs:
            raise TypeError(f"{self._qualname}: takes at most {self.nargs} positional arguments, got {len(args)}")
        if len(args) < self.nin:
            raise TypeError(f"{self._qualname}: takes {self.nin} input(s), got {len(args)}")
        if self._keywords is not None:
            wrong = sorted(set(kwargs) - set(self._keywords))
            if wrong:
                raise TypeError(f"Wrong arguments {wrong} for {self._qualname} (CuPy's ufuncs take only "
                                f"{', '.join(self._keywords)})")
        _reject_host(list(args) + list(kwargs.values()), self._qualname)
        return _call(self._impl, args, kwargs, self._qualname)

    def __getattr__(self, name):
        spec = _api.UFUNC_METHODS.get(name, _MISSING)
        if spec is _MISSING:
            raise AttributeError(f"CuPy's ufunc {self._qualname} has no attribute {name!r}")
        method = _adapt(f"{self._qualname}.{name}", getattr(self._ufunc, name), ("function", spec))
        if name not in ("accumulate", "at"):
            return method

        def checked(*args, **kwargs):
            _semantics.check_ufunc_method(f"{self._qualname}.{name}", self.__name__, name, args)
            return method(*args, **kwargs)
        return checked

    def __repr__(self):
        return f"<simulated ufunc '{self._qualname}'>"
