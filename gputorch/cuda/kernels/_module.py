"""Compiling and launching the kernels: one CuPy ``RawModule`` per family and device, compiled
on first use (CuPy caches the binaries on disk, so a later process only loads them).

A compile error becomes :class:`KernelCompileError`, naming the kernel file and line; a failed
launch becomes :class:`KernelLaunchError`, naming the kernel.
"""
import os
import re
import time

from ._source import FAMILIES, load_all_families

__all__ = ["KernelCompileError", "KernelLaunchError", "use_cupy", "function", "precompile"]

_state = {"cupy": None}
_modules = {}      # (family name, device id) -> RawModule
_functions = {}    # (family name, kernel name, device id) -> Kernel


class KernelCompileError(RuntimeError):
    """A kernel source failed to compile; ``file`` and ``line`` locate the first error."""

    def __init__(self, message, file=None, line=None, log=""):
        super().__init__(message)
        self.file, self.line, self.log = file, line, log


class KernelLaunchError(RuntimeError):
    """A kernel launch failed (bad configuration, illegal address, out of memory, ...)."""


def use_cupy(cp):
    """Set the CuPy module (real or simulated) that compiles and launches the kernels."""
    _state["cupy"] = cp
    _modules.clear()
    _functions.clear()


def _cupy():
    cp = _state["cupy"]
    if cp is None:
        from ...backends.cuda import BACKEND
        cp = BACKEND._require()
        _state["cupy"] = cp
    return cp


def _include_options():
    """``-I`` for a CUDA toolkit's headers (cuda_fp16.h) when one is found; CuPy adds its own."""
    found = []
    for root in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and os.path.isfile(os.path.join(root, "include", "cuda_fp16.h")):
            found.append(f"-I{os.path.join(root, 'include')}")
            break
    return tuple(found)


# NVRTC reports "file.cu(12): error: ...", g++ (the CPU harness) "file.cu:12:5: error: ...".
_ERROR_AT = re.compile(r'([^\s"():]+\.cuh?)(?:\((\d+)\)|:(\d+)(?::\d+)?): (?:catastrophic |fatal )?error[^\n]*')


def compile_error(family, exc):
    """A :class:`KernelCompileError` for ``family`` from a compiler exception (or log text)."""
    log = str(exc)
    match = _ERROR_AT.search(log)
    if match:
        file, line = match.group(1), int(match.group(2) or match.group(3))
        where = f"{file}, line {line}: {match.group(0)[match.group(0).find('error'):]}"
    else:
        file, line = str(FAMILIES[family].path), None
        where = file
    return KernelCompileError(f"compiling CUDA kernels of {FAMILIES[family].filename} failed at {where}\n{log}",
                              file, line, log)


def _module(family, device):
    key = (family, device)
    mod = _modules.get(key)
    if mod is None:
        fam = FAMILIES[family]
        cp = _cupy()
        try:
            mod = cp.RawModule(code=fam.source(), options=fam.compile_options(_include_options()),
                               name_expressions=list(fam.names))
        except Exception as e:   # CuPy's CompileException, or the simulator's
            raise compile_error(family, e) from None
        _modules[key] = mod
    return mod


class Kernel:
    """A compiled kernel, called like ``cupy.RawKernel``: ``kernel(grid, block, args, shared_mem=0)``."""

    __slots__ = ("family", "name", "_fn")

    def __init__(self, family, name, fn):
        self.family, self.name, self._fn = family, name, fn

    def __call__(self, grid, block, args, shared_mem=0):
        try:
            self._fn(grid, block, args, shared_mem=shared_mem)
        except (KernelCompileError, TypeError, ValueError):
            raise
        except Exception as e:
            raise KernelLaunchError(f"CUDA kernel {self.name} ({FAMILIES[self.family].filename}) failed: "
                                    f"{type(e).__name__}: {e}") from e

    def __repr__(self):
        return f"<kernel {self.name} of {FAMILIES[self.family].filename}>"


def function(family, name):
    """The kernel ``name`` (a name expression of ``family``) on the current device."""
    cp = _cupy()
    device = cp.cuda.runtime.getDevice()
    key = (family, name, device)
    k = _functions.get(key)
    if k is None:
        mod = _module(family, device)
        try:
            fn = mod.get_function(name)
        except Exception as e:
            if "not found" in str(e).lower() or isinstance(e, (KeyError, AttributeError)):
                raise
            raise compile_error(family, e) from None
        k = _functions[key] = Kernel(family, name, fn)
    return k


def precompile(families=None, verbose=True):
    """Compile every kernel (or those of ``families``) for the current device now, instead of on
    first use; returns ``{family: seconds}`` and, with ``verbose``, prints the times."""
    load_all_families()
    names = list(FAMILIES) if families is None else list(families)
    times = {}
    start_all = time.perf_counter()
    for fam in names:
        start = time.perf_counter()
        for name in FAMILIES[fam].names:
            function(fam, name)
        times[fam] = time.perf_counter() - start
    total = time.perf_counter() - start_all
    if verbose:
        count = sum(len(FAMILIES[f].names) for f in names)
        print(f"gputorch: compiled {count} CUDA kernels from {len(names)} files in {total:.2f} s")
        for fam in names:
            print(f"  {FAMILIES[fam].filename:20s} {len(FAMILIES[fam].names):4d} kernels  {times[fam]:7.2f} s")
    return times
