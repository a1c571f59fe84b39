"""Compile-only checks of the kernels, without a GPU.

- :func:`compile_family` compiles one family (every template instantiation in its name
  expressions) with NVRTC for one architecture, through ctypes. NVRTC comes from the
  ``nvidia-cuda-nvrtc-cu12`` wheel (CUDA 12 still targets sm_70; CUDA 13 starts at sm_75), or
  from a toolkit's ``libnvrtc`` when the wheel is missing.
- :func:`resource_usage` compiles a family with ``nvcc --cubin --resource-usage`` where nvcc
  exists and reports registers, stack, shared memory and spills per kernel (CUDA 13's nvcc
  builds sm_75 and newer only).

Nothing here needs CuPy or a driver. ``python -m gputorch.cuda.kernels.nvrtc`` runs both checks
for every family and prints a table.
"""
import ctypes
import functools
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from ._source import FAMILIES, KERNEL_DIR, load_all_families

__all__ = ["ARCHS", "NvrtcUnavailable", "load_nvrtc", "nvrtc_version", "compile_family", "check_all",
           "resource_usage", "occupancy", "cuda_include_dir"]

ARCHS = ("sm_70", "sm_80", "sm_90")


class NvrtcUnavailable(RuntimeError):
    """No NVRTC library could be loaded."""


class CompileResult:
    """Outcome of compiling one family for one architecture."""

    def __init__(self, family, arch, ok, log, seconds, lowered=None, cubin_size=0):
        self.family, self.arch, self.ok, self.log = family, arch, ok, log
        self.seconds, self.lowered, self.cubin_size = seconds, lowered or {}, cubin_size

    def errors(self):
        """``[(file, line, message)]`` of the errors in the log."""
        return [(m.group(1), int(m.group(2)), m.group(3))
                for m in re.finditer(r'([^\s"()]+)\((\d+)\): (?:catastrophic )?error:? ?([^\n]*)', self.log)]

    def __repr__(self):
        return f"<{self.family} {self.arch}: {'ok' if self.ok else 'FAILED'} in {self.seconds:.2f} s>"


# ---------------------------------------------------------------------------- the library
def _candidates():
    try:
        import nvidia.cuda_nvrtc
        for root in nvidia.cuda_nvrtc.__path__:
            yield from sorted(glob.glob(os.path.join(root, "lib", "libnvrtc.so.*")))
            yield from sorted(glob.glob(os.path.join(root, "bin", "nvrtc64_*.dll")))
    except ImportError:
        pass
    for root in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root:
            yield from sorted(glob.glob(os.path.join(root, "lib64", "libnvrtc.so*")))
    yield "libnvrtc.so"


_lib = [None]


def load_nvrtc():
    """The NVRTC library (cached); raises :class:`NvrtcUnavailable` when none loads."""
    if _lib[0] is not None:
        return _lib[0]
    tried = []
    for path in _candidates():
        if "alt" in os.path.basename(path) or path in tried:
            continue
        tried.append(path)
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        _declare(lib)
        _lib[0] = lib
        return lib
    raise NvrtcUnavailable(f"no NVRTC library could be loaded (tried {tried}); "
                           "install nvidia-cuda-nvrtc-cu12")


def _declare(lib):
    c = ctypes
    lib.nvrtcGetErrorString.restype = c.c_char_p
    lib.nvrtcGetErrorString.argtypes = [c.c_int]
    lib.nvrtcVersion.argtypes = [c.POINTER(c.c_int), c.POINTER(c.c_int)]
    lib.nvrtcCreateProgram.argtypes = [c.POINTER(c.c_void_p), c.c_char_p, c.c_char_p, c.c_int,
                                       c.POINTER(c.c_char_p), c.POINTER(c.c_char_p)]
    lib.nvrtcAddNameExpression.argtypes = [c.c_void_p, c.c_char_p]
    lib.nvrtcCompileProgram.argtypes = [c.c_void_p, c.c_int, c.POINTER(c.c_char_p)]
    lib.nvrtcGetProgramLogSize.argtypes = [c.c_void_p, c.POINTER(c.c_size_t)]
    lib.nvrtcGetProgramLog.argtypes = [c.c_void_p, c.c_char_p]
    lib.nvrtcGetCUBINSize.argtypes = [c.c_void_p, c.POINTER(c.c_size_t)]
    lib.nvrtcGetLoweredName.argtypes = [c.c_void_p, c.c_char_p, c.POINTER(c.c_char_p)]
    lib.nvrtcDestroyProgram.argtypes = [c.POINTER(c.c_void_p)]


def nvrtc_version():
    lib = load_nvrtc()
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def cuda_include_dir():
    """A directory holding ``cuda_fp16.h`` (a CUDA toolkit's headers), or None."""
    roots = [os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"]
    try:
        import nvidia.cuda_runtime
        roots += list(nvidia.cuda_runtime.__path__)
    except ImportError:
        pass
    for root in roots:
        if root and os.path.isfile(os.path.join(root, "include", "cuda_fp16.h")):
            return os.path.join(root, "include")
    return None


def _check(lib, status, what):
    if status != 0:
        raise RuntimeError(f"{what}: {lib.nvrtcGetErrorString(status).decode()}")


# ---------------------------------------------------------------------------- compiling
def compile_family(family, arch="sm_80", extra_options=()):
    """Compile ``family`` (a name or a Family) for ``arch`` with NVRTC; a :class:`CompileResult`
    whose ``lowered`` maps each name expression to its mangled kernel name."""
    lib = load_nvrtc()
    fam = FAMILIES[family] if isinstance(family, str) else family
    include = cuda_include_dir()
    options = list(fam.compile_options()) + [f"-arch={arch}"] + list(extra_options)
    if include:
        options.append(f"-I{include}")
    prog = ctypes.c_void_p()
    start = time.perf_counter()
    _check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), fam.source().encode(), fam.filename.encode(),
                                       0, None, None), "nvrtcCreateProgram")
    try:
        for name in fam.names:
            _check(lib, lib.nvrtcAddNameExpression(prog, name.encode()), f"nvrtcAddNameExpression({name})")
        encoded = [o.encode() for o in options]
        status = lib.nvrtcCompileProgram(prog, len(encoded), (ctypes.c_char_p * len(encoded))(*encoded))
        seconds = time.perf_counter() - start
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, buf)
        log = buf.value.decode(errors="replace")
        if status != 0:
            return CompileResult(fam.name, arch, False, log or lib.nvrtcGetErrorString(status).decode(), seconds)
        lowered = {}
        for name in fam.names:
            out = ctypes.c_char_p()
            _check(lib, lib.nvrtcGetLoweredName(prog, name.encode(), ctypes.byref(out)), f"lowered name {name}")
            lowered[name] = out.value.decode()
        cubin = ctypes.c_size_t()
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(cubin))
        return CompileResult(fam.name, arch, True, log, seconds, lowered, cubin.value)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def _cache_root():
    return os.environ.get("GPUTORCH_NVRTC_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache")), "gputorch", "nvrtc")


def _sources_digest(fam, extra):
    h = hashlib.sha256()
    h.update(fam.source().encode())
    for header in sorted(fam.path.parent.glob("*.cuh")):
        h.update(header.read_bytes())
    h.update(json.dumps(extra).encode())
    return h.hexdigest()[:24]


def _remember(path, data):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        pass


def _recall(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _cache_file(fam, arch):
    """Where a successful compile of ``fam`` for ``arch`` is remembered: keyed by the sources (the
    family's file and every header next to it), the name expressions, the options and NVRTC's
    version, under ``$GPUTORCH_NVRTC_CACHE`` (default ``~/.cache/gputorch/nvrtc``)."""
    digest = _sources_digest(fam, [list(fam.names), list(fam.compile_options()), arch, nvrtc_version(),
                                   cuda_include_dir()])
    return os.path.join(_cache_root(), f"{fam.name}-{arch}-{digest}.json")


def compile_family_cached(family, arch="sm_80"):
    """:func:`compile_family`, remembering successful results on disk (a failure is always
    compiled again)."""
    fam = FAMILIES[family] if isinstance(family, str) else family
    path = _cache_file(fam, arch)
    d = _recall(path)
    if d is not None and {"log", "lowered", "cubin_size"} <= set(d):
        return CompileResult(fam.name, arch, True, d["log"], 0.0, d["lowered"], d["cubin_size"])
    result = compile_family(fam, arch)
    if result.ok:
        _remember(path, {"log": result.log, "lowered": result.lowered, "cubin_size": result.cubin_size})
    return result


def check_all(archs=ARCHS, families=None, workers=None, cached=True):
    """Compile every family (or those named) for every architecture, in parallel threads (NVRTC
    runs outside the GIL); a list of :class:`CompileResult`."""
    from concurrent.futures import ThreadPoolExecutor
    load_all_families()
    jobs = [(fam, arch) for fam in (families or list(FAMILIES)) for arch in archs]
    compile_one = compile_family_cached if cached else compile_family
    with ThreadPoolExecutor(workers or max(1, min(len(jobs), os.cpu_count() or 1))) as pool:
        return list(pool.map(lambda job: compile_one(*job), jobs))


# ---------------------------------------------------------------------------- nvcc resource usage
_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\d+)'")
_PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:, used \d+ barriers)?(?:, (\d+) bytes smem)?")


def _instantiation_source(fam):
    """A translation unit that instantiates every kernel of ``fam`` (by taking their addresses)."""
    refs = ",\n  ".join(f"(void*)&{name}" for name in fam.names)
    return f'#include "{fam.path.as_posix()}"\nvoid* gputorch_instantiate_{fam.name}[] = {{\n  {refs}\n}};\n'


def _demangle(names):
    tool = shutil.which("cu++filt") or shutil.which("c++filt")
    if not tool or not names:
        return {n: n for n in names}
    out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
    return {n: (d or n) for n, d in zip(names, out)}


@functools.lru_cache(maxsize=None)
def _nvcc_version(nvcc):
    return subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout


def resource_usage(family, arch="sm_80", nvcc=None, cached=True):
    """``{kernel: {"registers", "stack", "spill_stores", "spill_loads", "smem"}}`` from
    ``nvcc --cubin --resource-usage`` for ``family`` on ``arch``; None when nvcc is missing.
    Raises RuntimeError when nvcc fails. Results are remembered on disk like NVRTC's."""
    nvcc = nvcc or shutil.which("nvcc")
    if nvcc is None:
        return None
    fam = FAMILIES[family] if isinstance(family, str) else family
    path = os.path.join(_cache_root(), f"nvcc-{fam.name}-{arch}-"
                        f"{_sources_digest(fam, [list(fam.names), list(fam.options), arch, _nvcc_version(nvcc)])}.json")
    if cached:
        usage = _recall(path)
        if usage is not None:
            return usage
    usage = _nvcc_usage(fam, arch, nvcc)
    _remember(path, usage)
    return usage


def _nvcc_usage(fam, arch, nvcc):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, f"{fam.name}_instances.cu")
        with open(src, "w") as f:
            f.write(_instantiation_source(fam))
        cmd = [nvcc, "--cubin", f"-arch={arch}", "--resource-usage", "-std=c++17", f"-I{KERNEL_DIR}",
               *fam.options, "-o", os.path.join(tmp, "out.cubin"), src]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"nvcc failed for {fam.filename} ({arch}):\n{proc.stderr}")
    usage, current = {}, None
    for line in (proc.stdout + proc.stderr).splitlines():
        m = _ENTRY.search(line)
        if m:
            current = m.group(1)
            usage[current] = {"registers": 0, "stack": 0, "spill_stores": 0, "spill_loads": 0, "smem": 0}
            continue
        if current is None:
            continue
        m = _PROPS.search(line)
        if m:
            usage[current].update(stack=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
        m = _USED.search(line)
        if m:
            usage[current]["registers"] = int(m.group(1))
            usage[current]["smem"] = int(m.group(2) or 0)
    names = _demangle(list(usage))
    return {names[k]: v for k, v in usage.items()}


def occupancy(registers, threads_per_block, smem=0, arch="sm_80"):
    """Theoretical occupancy (resident warps / maximum warps per SM) of a kernel using
    ``registers`` per thread and ``smem`` bytes of shared memory per block."""
    max_warps = {"sm_70": 64, "sm_75": 32, "sm_80": 64, "sm_86": 48, "sm_89": 48, "sm_90": 64}.get(arch, 64)
    max_blocks = {"sm_75": 16, "sm_86": 16, "sm_89": 24}.get(arch, 32)
    smem_per_sm = {"sm_70": 96, "sm_75": 64, "sm_80": 164, "sm_86": 100, "sm_89": 100, "sm_90": 228}.get(arch, 96)
    warps = (threads_per_block + 31) // 32
    regs_per_warp = ((max(registers, 1) * 32 + 255) // 256) * 256
    by_regs = (65536 // regs_per_warp) // warps if regs_per_warp else max_blocks
    by_smem = (smem_per_sm * 1024) // smem if smem else max_blocks
    by_warps = max_warps // warps
    resident = max(0, min(by_regs, by_smem, by_warps, max_blocks))
    return resident * warps / max_warps


def main(argv=None):
    load_all_families()
    try:
        major, minor = nvrtc_version()
        print(f"NVRTC {major}.{minor}")
        for r in check_all():
            print(f"  {r.family:15s} {r.arch}  {'ok' if r.ok else 'FAILED'}  {len(r.lowered):4d} kernels  "
                  f"{r.seconds:6.2f} s")
            if not r.ok:
                print(r.log)
    except NvrtcUnavailable as e:
        print(f"NVRTC unavailable: {e}")
    if shutil.which("nvcc"):
        for fam in FAMILIES.values():
            usage = resource_usage(fam, "sm_80")
            worst = max(usage.values(), key=lambda u: u["registers"]) if usage else None
            spills = sum(u["spill_stores"] + u["spill_loads"] for u in usage.values())
            print(f"  nvcc sm_80 {fam.filename:20s} max registers {worst['registers'] if worst else 0:3d}  "
                  f"spill bytes {spills}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
