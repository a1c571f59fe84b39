"""``RawModule`` / ``RawKernel`` for the CPU execution harness (the launch API of CuPy's).

Arguments follow CuPy's rules, checked against the kernel's C++ parameter types (which the
compiled module reports itself, so template instantiations are checked too):

* pointer parameters take arrays (NumPy arrays, simulated CuPy arrays; their data pointer is
  passed), ``None`` (a null pointer) or an integer address; an array whose dtype cannot be
  what the pointer points to (a float64 array for ``float*``) is a TypeError;
* scalar parameters take NumPy scalars of exactly the parameter's type (``np.int32`` for
  ``int``, ``np.float32`` for ``float``, ``np.float16`` for ``__half``, a ``np.void`` of the
  right size for a struct), a size-one NumPy array of that type, Python ``int``/``bool``
  for integer parameters (CuPy passes them as int64, which a narrower integer parameter
  reads correctly only when the value fits: the value is range-checked) and Python
  ``float`` for ``double`` only (CuPy passes it as float64, which a ``float`` parameter
  would misread).

Anything else raises TypeError naming the kernel, the parameter, and both types.
"""
import array
import ctypes
import os
import threading

import numpy as np

from . import compiler as _compiler
from .compiler import HarnessError

__all__ = ["RawModule", "RawKernel", "LaunchError", "MAX_DYNAMIC_SHARED_DEFAULT"]

MAX_DYNAMIC_SHARED_DEFAULT = 48 * 1024   # without opting in (max_dynamic_shared_size_bytes)
MAX_SHARED_OPT_IN = 227 * 1024           # sm_90's per-block limit
_LAUNCH_LOCK = threading.RLock()         # fiber mode installs process-wide fault handlers
_LOADED = {}


class LaunchError(HarnessError):
    """A launch failed: invalid configuration, a fault, a divergent barrier, a warp-mask misuse, a deadlock."""


class _LaunchConfig(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint32 * 3), ("block", ctypes.c_uint32 * 3), ("shared_mem", ctypes.c_uint64),
                ("blocks", ctypes.c_void_p), ("nblocks", ctypes.c_uint64), ("stack_size", ctypes.c_uint64),
                ("timeout_s", ctypes.c_double)]


_CONFIG = _LaunchConfig()           # reused under _LAUNCH_LOCK
_CONFIG_REF = ctypes.byref(_CONFIG)
_ERROR = ctypes.create_string_buffer(4096)
_STACK_SIZE = int(os.environ.get("GPUTORCH_HARNESS_STACK", 0) or 0)
_TIMEOUT = float(os.environ.get("GPUTORCH_HARNESS_TIMEOUT", 300.0))

_SCALARS = {
    "b1": (np.dtype(np.bool_), "bool"), "i1": (np.dtype(np.int8), "signed char"),
    "u1": (np.dtype(np.uint8), "unsigned char"), "i2": (np.dtype(np.int16), "short"),
    "u2": (np.dtype(np.uint16), "unsigned short"), "i4": (np.dtype(np.int32), "int"),
    "u4": (np.dtype(np.uint32), "unsigned int"), "i8": (np.dtype(np.int64), "long long"),
    "u8": (np.dtype(np.uint64), "unsigned long long"), "f2": (np.dtype(np.float16), "__half"),
    "f4": (np.dtype(np.float32), "float"), "f8": (np.dtype(np.float64), "double"),
}


def type_name(code):
    """The C++ spelling of a parameter type code (see harness_runtime.h ``type_code``)."""
    if code[:2] in ("p:", "P:"):
        return ("const " if code[0] == "P" else "") + type_name(code[2:]) + "*"
    if code == "v":
        return "void"
    if code == "h2":
        return "__half2"
    if code in _SCALARS:
        return _SCALARS[code][1]
    return f"a {code[1:]}-byte struct"


def _numpy_name(value):
    if isinstance(value, np.ndarray):
        return f"{type(value).__module__.split('.')[0]}.ndarray of dtype {value.dtype}"
    if isinstance(value, np.generic):
        return f"numpy.{type(value).__name__}"
    return type(value).__name__


def _pointee_accepts(code, dtype):
    """Whether an array of `dtype` can be what a pointer to `code` points at."""
    if code.startswith(("p:", "P:")):
        return dtype.itemsize == 8 and dtype.kind in "iu"   # a table of pointers
    if code in ("f2", "f4", "f8"):
        return dtype == _SCALARS[code][0]
    if code in _SCALARS:  # integers and bool: the same size; signedness and bool may differ
        return dtype.itemsize == _SCALARS[code][0].itemsize and dtype.kind in "iub"
    return True  # void, structs, vector types: any


def _array_address(a):
    return a.__array_interface__["data"][0]


class _Module:
    """A compiled, loaded harness module."""

    def __init__(self, so_path, info):
        self.path = so_path
        self.info = info
        self.lib = ctypes.CDLL(str(so_path), mode=os.RTLD_LOCAL)
        self.lib.harness_kernel_signature.restype = ctypes.c_char_p
        self.lib.harness_kernel_signature.argtypes = [ctypes.c_int]
        self.lib.harness_launch_kernel.restype = ctypes.c_int
        self.lib.harness_launch_kernel.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_LaunchConfig),
                                                   ctypes.c_char_p, ctypes.c_ulonglong]
        self.entries = {}
        for i, e in enumerate(info["entries"]):
            sig = self.lib.harness_kernel_signature(i).decode()
            codes = [c for c in sig.split(";") if c]
            self.entries[e["expr"]] = (i, codes, e)


def _load(code, options, name_expressions, filename, mode, sanitizer):
    key = (code, tuple(options), tuple(name_expressions), filename, mode, sanitizer)
    module = _LOADED.get(key)
    if module is None:
        so_path, info = _compiler.build(code, options=options, name_expressions=name_expressions, filename=filename,
                                        variant=mode, sanitizer=sanitizer)
        if sanitizer:
            from .sanitizer import runtime_loaded
            if not runtime_loaded(sanitizer):
                return None, so_path, info
        module = _LOADED[key] = _Module(so_path, info)
    return module, module.path, module.info


def _dim3(value, what, kernel):
    if isinstance(value, (int, np.integer)):
        value = (int(value),)
    try:
        dims = tuple(int(v) for v in value)
    except TypeError:
        raise TypeError(f"kernel '{kernel}': {what} must be an int or a tuple of up to 3 ints, got {value!r}") from None
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"kernel '{kernel}': {what} must have 1 to 3 dimensions, got {value!r}")
    return dims + (1,) * (3 - len(dims))


class RawModule:
    """Kernels compiled from CUDA C source for the CPU (``cupy.RawModule``'s interface).

    ``RawModule(code=..., options=(...), name_expressions=[...])``; ``get_function(name)``
    returns a :class:`RawKernel` for an ``extern "C"`` kernel or one of the name
    expressions (template instantiations such as ``"softmax<float, 128>"``).

    Harness-only keywords: ``filename`` (the name compiler errors and launch errors show;
    a ``#line 1 "file"`` directive at the top of `code` works as well and also helps
    NVRTC), ``mode`` ("fibers", the default, or "threads"; default from
    ``GPUTORCH_HARNESS_MODE``) and ``sanitizer`` (None, "address", "thread" or
    "undefined": the kernels are built with that sanitizer and every launch runs in a
    subprocess that preloads its runtime; see ``sanitizer.py``).
    """

    def __init__(self, code=None, path=None, options=(), backend="nvrtc", translate_cucomplex=False,
                 enable_cooperative_groups=False, name_expressions=None, jitify=False, *, filename=None,
                 mode=None, sanitizer=None):
        if code is None:
            if path is None:
                raise TypeError("RawModule needs code= (CUDA C source); the CPU harness cannot load a cubin/ptx path")
            if str(path).endswith((".cubin", ".ptx", ".fatbin")):
                raise ValueError(f"the CPU execution harness cannot run {path}: pass the CUDA C source as code=")
            with open(path) as f:
                code = f.read()
            filename = filename or str(path)
        mode = mode or os.environ.get("GPUTORCH_HARNESS_MODE", "fibers")
        if mode not in ("fibers", "threads"):
            raise ValueError(f"mode must be 'fibers' or 'threads', got {mode!r}")
        if sanitizer not in (None, "address", "thread", "undefined"):
            raise ValueError(f"sanitizer must be None, 'address', 'thread' or 'undefined', got {sanitizer!r}")
        if sanitizer:
            mode = "threads"
        self.code = code
        self.options = tuple(options or ())
        self.name_expressions = tuple(name_expressions or ())
        self.filename = filename
        self.mode = mode
        self.sanitizer = sanitizer
        self.backend = backend
        self._module = None
        self._info = None

    def compile(self):
        """Compile now (otherwise done by the first ``get_function``); returns self."""
        if self._info is None:
            self._module, self._path, self._info = _load(self.code, self.options, self.name_expressions,
                                                         self.filename, self.mode, self.sanitizer)
        return self

    @property
    def kernel_names(self):
        """The names ``get_function`` accepts."""
        self.compile()
        return [e["expr"] for e in self._info["entries"]]

    def get_function(self, name):
        self.compile()
        names = [e["expr"] for e in self._info["entries"]]
        if name not in names:
            entry_names = {e["name"] for e in self._info["entries"] if e["extern_c"]}
            others = sorted(set(self._info["kernels"]) - entry_names)
            hint = ""
            if "<" in name or others:
                hint = ("; template instantiations and kernels without extern \"C\" are reachable only through "
                        f"name_expressions (given: {list(self.name_expressions)})")
            raise LaunchError(f"CUDA_ERROR_NOT_FOUND: named symbol not found: no kernel {name!r} in "
                              f"{self._info['filename']} (kernels: {', '.join(names) or 'none'}){hint}")
        return RawKernel._from_module(self, name)


class RawKernel:
    """One kernel of the CPU execution harness, called like ``cupy.RawKernel``.

    ``kernel(grid, block, args, shared_mem=0)``; harness-only keywords: ``blocks`` (run only
    these blocks of the grid: linear indices or (x, y, z) tuples; for >2^31-element index
    math, see ``virtual_array``), ``stack_size`` (fiber stack bytes) and ``timeout`` (seconds,
    default ``GPUTORCH_HARNESS_TIMEOUT`` or 300: a fiber-mode launch that runs longer fails;
    a thread-mode one aborts the process, since OS threads cannot be stopped).
    ``RawKernel(code, name, options=...)`` compiles a single-kernel module.
    """

    def __init__(self, code, name, options=(), backend="nvrtc", translate_cucomplex=False,
                 enable_cooperative_groups=False, jitify=False, *, filename=None, mode=None, sanitizer=None):
        module = RawModule(code=code, options=options, filename=filename, mode=mode, sanitizer=sanitizer,
                           name_expressions=() if _plain_name(name) else (name,))
        self._bind(module, name)

    @classmethod
    def _from_module(cls, module, name):
        self = cls.__new__(cls)
        self._bind(module, name)
        return self

    def _bind(self, module, name):
        self.module = module
        self.name = name
        self.max_dynamic_shared_size_bytes = MAX_DYNAMIC_SHARED_DEFAULT
        self._resolved = None

    def _resolve(self):
        if self._resolved is None:
            m = self.module.compile()
            entries = m._info["entries"]
            e = next((e for e in entries if e["expr"] == self.name), None)
            if e is None:
                m.get_function(self.name)  # raises the not-found error
            self._resolved = (m._module, e)
        return self._resolved

    @property
    def param_types(self):
        """The kernel's parameter types as C++ spellings (from the compiled module)."""
        module, e = self._resolve()
        if module is None:
            return None
        return [type_name(c) for c in module.entries[self.name][1]]

    @property
    def attributes(self):
        module, e = self._resolve()
        return {"max_threads_per_block": e["max_threads"] or 1024,
                "max_dynamic_shared_size_bytes": self.max_dynamic_shared_size_bytes}

    def __repr__(self):
        sanitizer = f", {self.module.sanitizer}" if self.module.sanitizer else ""
        return f"<harness RawKernel {self.name!r} ({self.module.mode}{sanitizer})>"

    # ------------------------------------------------------------------ launching

    def __call__(self, grid, block, args, *, shared_mem=0, stream=None, enable_cooperative_groups=False,
                 blocks=None, stack_size=0, timeout=None):
        if timeout is None:
            timeout = _TIMEOUT
        grid3 = _dim3(grid, "grid", self.name)
        block3 = _dim3(block, "block", self.name)
        module, e = self._resolve()
        self._check_config(grid3, block3, int(shared_mem), e)
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"kernel '{self.name}': args must be a tuple, got {type(args).__name__}")
        subset = self._block_subset(blocks, grid3)
        if module is None:  # sanitized build: the launch runs in a subprocess
            from .sanitizer import run_launch
            return run_launch(self, grid3, block3, tuple(args), int(shared_mem), subset, timeout)
        index, codes, _ = module.entries[self.name]
        self._launch(module, index, codes, e, grid3, block3, tuple(args), int(shared_mem), subset, stack_size,
                     timeout)

    def _check_config(self, grid, block, shared_mem, entry):
        problem = None
        threads = block[0] * block[1] * block[2]
        if min(grid) <= 0 or min(block) <= 0:
            problem = "grid and block dimensions must be positive (an empty launch is invalid on CUDA)"
        elif grid[0] > 2**31 - 1 or grid[1] > 65535 or grid[2] > 65535:
            problem = "grid dimensions exceed (2147483647, 65535, 65535)"
        elif block[0] > 1024 or block[1] > 1024 or block[2] > 64 or threads > 1024:
            problem = "block dimensions exceed (1024, 1024, 64) or 1024 threads"
        elif entry["max_threads"] and threads > entry["max_threads"]:
            problem = f"{threads} threads per block exceed the kernel's __launch_bounds__({entry['max_threads']})"
        elif shared_mem < 0:
            problem = "shared_mem must not be negative"
        elif shared_mem > self.max_dynamic_shared_size_bytes:
            problem = (f"shared_mem={shared_mem} bytes exceeds max_dynamic_shared_size_bytes="
                       f"{self.max_dynamic_shared_size_bytes} (raise it, like cudaFuncSetAttribute, up to "
                       f"{MAX_SHARED_OPT_IN})")
        elif shared_mem > MAX_SHARED_OPT_IN:
            problem = f"shared_mem={shared_mem} bytes exceeds the device limit of {MAX_SHARED_OPT_IN}"
        if problem:
            raise LaunchError(f"CUDA_ERROR_INVALID_VALUE: kernel '{self.name}' launched with grid {grid}, block "
                              f"{block}, shared_mem={shared_mem}: {problem}")

    def _block_subset(self, blocks, grid):
        if blocks is None:
            return None
        total = grid[0] * grid[1] * grid[2]
        linear = []
        for b in blocks:
            if isinstance(b, (tuple, list)):
                x, y, z = (tuple(int(v) for v in b) + (0, 0))[:3]
                if not (0 <= x < grid[0] and 0 <= y < grid[1] and 0 <= z < grid[2]):
                    raise ValueError(f"kernel '{self.name}': block {tuple(b)} is outside the grid {grid}")
                linear.append(x + grid[0] * (y + grid[1] * z))
            else:
                b = int(b)
                if not 0 <= b < total:
                    raise ValueError(f"kernel '{self.name}': block index {b} is outside the grid {grid} "
                                     f"({total} blocks)")
                linear.append(b)
        return np.asarray(linear, dtype=np.uint64)

    def _arg_error(self, i, entry, codes, value, extra=""):
        params = entry.get("params") or []
        pname = params[i] if i < len(params) and params[i] else None
        which = f"argument {i}" + (f" '{pname}'" if pname else "")
        expected = type_name(codes[i])
        hint = ""
        if codes[i] in _SCALARS:
            hint = f" (pass numpy.{_SCALARS[codes[i]][0].name}(...))"
        return TypeError(f"kernel '{self.name}': {which} has C++ type {expected}{hint}, but got "
                         f"{_numpy_name(value)}{extra}")

    def marshal(self, codes, entry, args, *, allow_host_arrays=True):
        """Argument bytes for a launch: a list of (bytes, None) or (None, address) per parameter."""
        if len(args) != len(codes):
            raise TypeError(f"kernel '{self.name}': takes {len(codes)} argument(s) "
                            f"({', '.join(type_name(c) for c in codes)}), but {len(args)} were given")
        out = []
        for i, (code, value) in enumerate(zip(codes, args)):
            if code[:2] in ("p:", "P:"):
                out.append(self._pointer_arg(i, code, entry, codes, value))
            else:
                out.append(self._scalar_arg(i, code, entry, codes, value))
        return out

    def _pointer_arg(self, i, code, entry, codes, value):
        if value is None:
            return 0
        if isinstance(value, np.ndarray):
            if not _pointee_accepts(code[2:], value.dtype):
                raise self._arg_error(i, entry, codes, value)
            return _array_address(value)
        if isinstance(value, (bool, np.bool_)):
            raise self._arg_error(i, entry, codes, value)
        if isinstance(value, (int, np.integer)):
            if isinstance(value, np.integer) and value.dtype.itemsize != 8:
                raise self._arg_error(i, entry, codes, value)
            return int(value) & (2**64 - 1)
        ptr = getattr(value, "ptr", None)
        if isinstance(ptr, int):
            return ptr
        raise self._arg_error(i, entry, codes, value)

    def _scalar_arg(self, i, code, entry, codes, value):
        if code in _SCALARS:
            dtype = _SCALARS[code][0]
            if isinstance(value, np.ndarray) and value.size == 1 and value.dtype == dtype:
                return value.reshape(()).tobytes()
            if isinstance(value, np.generic):
                if value.dtype != dtype:
                    raise self._arg_error(i, entry, codes, value)
                return value.tobytes()
            if isinstance(value, (bool, int)) and code != "f2" and code[0] in "iub":
                info = np.iinfo(dtype) if code[0] != "b" else None
                v = int(value)
                if info is not None and not info.min <= v <= info.max:
                    raise self._arg_error(i, entry, codes, value, f" {v}, which does not fit")
                if info is None and v not in (0, 1):
                    raise self._arg_error(i, entry, codes, value, f" {v}")
                return np.asarray(v, dtype=dtype).tobytes()
            if isinstance(value, float) and code == "f8":
                return np.float64(value).tobytes()
            extra = ""
            if isinstance(value, float):
                extra = " (CuPy passes a Python float as a float64)"
            elif isinstance(value, int):
                extra = " (CuPy passes a Python int as an int64)"
            raise self._arg_error(i, entry, codes, value, extra)
        size = 4 if code == "h2" else int(code[1:])
        if isinstance(value, np.generic) and value.dtype.itemsize == size and (
                value.dtype.kind == "V" or code == "h2"):
            return value.tobytes()
        if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.itemsize == size:
            return value.tobytes()
        raise self._arg_error(i, entry, codes, value,
                              f" (a {size}-byte value is needed: a numpy.void of a structured dtype)")

    def _launch(self, module, index, codes, entry, grid, block, args, shared_mem, subset, stack_size, timeout):
        values = self.marshal(codes, entry, args)
        chunks, offsets, total = [], [], 0
        for v in values:  # each argument in its own 16-byte aligned slot of one buffer
            data = v.to_bytes(8, "little") if isinstance(v, int) else v
            pad = -len(data) % 16 or (16 if not data else 0)
            offsets.append(total)
            chunks.append(data + bytes(pad))
            total += len(data) + pad
        buf = ctypes.create_string_buffer(b"".join(chunks), max(total, 16))
        base = ctypes.addressof(buf)
        ptrs = array.array("Q", [base + off for off in offsets] or [0])
        with _LAUNCH_LOCK:
            cfg = _CONFIG
            cfg.grid[:] = grid
            cfg.block[:] = block
            cfg.shared_mem = shared_mem
            cfg.blocks = None if subset is None else subset.ctypes.data
            cfg.nblocks = 0 if subset is None else subset.size
            cfg.stack_size = int(stack_size or _STACK_SIZE)
            cfg.timeout_s = float(timeout)
            rc = module.lib.harness_launch_kernel(index, ptrs.buffer_info()[0], _CONFIG_REF, _ERROR, len(_ERROR))
            if rc:
                message = _ERROR.value.decode(errors="replace")
        if rc:
            raise LaunchError(f"kernel '{self.name}' ({entry['file']}:{entry['line']}) failed: {message}")


def _plain_name(name):
    return name.replace("_", "a").isalnum()
