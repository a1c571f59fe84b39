"""Compiling kernel modules for the CPU execution harness, with an on-disk cache.

A module is compiled in two g++ steps: preprocess the kernel source with the harness shim
force-included (``g++ -E``), then rewrite the result (see ``source.py``) and compile it into
a shared object. Both the shared object and a small JSON description are cached under
``$GPUTORCH_HARNESS_CACHE`` (default ``~/.cache/gputorch/harness``), keyed by a hash of the
source, the options, the build variant and the harness headers; files are written to a
temporary name and renamed, so concurrent processes (pytest-xdist, CI jobs) share the cache
safely.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from . import source as _source

HERE = Path(__file__).resolve().parent
HEADERS = ("cuda_runtime_shim.h", "harness_runtime.h", "fiber_switch.h")
SANITIZER_FLAGS = {
    "address": ["-fsanitize=address", "-fno-omit-frame-pointer"],
    "thread": ["-fsanitize=thread"],
    "undefined": ["-fsanitize=undefined", "-fno-sanitize-recover=all"],
}


class HarnessError(RuntimeError):
    """Base class of the harness's errors."""


class CompileError(HarnessError):
    """The kernel source does not compile; the message names the file and line."""


def cache_dir():
    d = os.environ.get("GPUTORCH_HARNESS_CACHE")
    path = Path(d) if d else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gputorch" / "harness"
    path.mkdir(parents=True, exist_ok=True)
    return path


def compiler():
    return os.environ.get("GPUTORCH_HARNESS_CXX", "g++")


@lru_cache(maxsize=None)
def cuda_include_dir():
    """A directory holding the CUDA toolkit's cuda_fp16.h, or None."""
    candidates = [os.environ.get("GPUTORCH_HARNESS_CUDA_INCLUDE")]
    for var in ("CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"):
        if os.environ.get(var):
            candidates.append(os.path.join(os.environ[var], "include"))
    candidates.append("/usr/local/cuda/include")
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(str(Path(nvcc).resolve().parent.parent / "include"))
    try:  # the CUDA runtime wheel (nvidia-cuda-runtime-cu12) ships the headers too
        import nvidia.cuda_runtime as _rt
        candidates.append(str(Path(list(_rt.__path__)[0]) / "include"))
    except Exception:
        pass
    for c in candidates:
        if c and (Path(c) / "cuda_fp16.h").is_file():
            return c
    return None


@lru_cache(maxsize=None)
def compiler_version():
    try:
        out = subprocess.run([compiler(), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.splitlines()[0] if out.returncode == 0 and out.stdout else None


def toolchain_problem():
    """None when kernels can be compiled here, else the reason they cannot."""
    if compiler_version() is None:
        return f"no C++ compiler ({compiler()!r}; set GPUTORCH_HARNESS_CXX)"
    if cuda_include_dir() is None:
        return "the CUDA toolkit headers (cuda_fp16.h) were not found; set GPUTORCH_HARNESS_CUDA_INCLUDE"
    return None


@lru_cache(maxsize=None)
def _headers_digest():
    h = hashlib.sha256()
    for name in HEADERS + ("source.py", "compiler.py"):
        h.update((HERE / name).read_bytes())
    return h.hexdigest()


def translate_options(options):
    """g++ flags for NVRTC/nvcc options: macros and include paths are kept, -arch sets __CUDA_ARCH__."""
    flags = []
    options = list(options or ())
    i = 0
    while i < len(options):
        opt = str(options[i])
        i += 1
        m = re.fullmatch(r"(?:-D|--define-macro=?)(.*)", opt)
        if m:
            value = m.group(1) or (options[i] if i < len(options) else "")
            if not m.group(1):
                i += 1
            flags.append("-D" + value)
            continue
        m = re.fullmatch(r"(?:-I|--include-path=?)(.*)", opt)
        if m:
            value = m.group(1) or (options[i] if i < len(options) else "")
            if not m.group(1):
                i += 1
            flags.append("-I" + value)
            continue
        m = re.fullmatch(r"(?:-arch|--gpu-architecture)[= ]?(?:sm_|compute_)(\d+)a?", opt)
        if m:
            flags.append(f"-D__CUDA_ARCH__={int(m.group(1)) * 10}")
            continue
        if opt in ("-arch", "--gpu-architecture") and i < len(options):
            m = re.fullmatch(r"(?:sm_|compute_)(\d+)a?", str(options[i]))
            i += 1
            if m:
                flags.append(f"-D__CUDA_ARCH__={int(m.group(1)) * 10}")
            continue
        if opt in ("--use_fast_math", "-use_fast_math"):
            flags.append("-D__USE_FAST_MATH__=1")
        # other NVRTC options (-std=, -lineinfo, --fmad, -G, ...) have no CPU meaning
    return flags


def _build_flags(variant, sanitizer):
    flags = ["-std=c++20", "-fPIC", "-shared", "-fvisibility=hidden", "-fno-strict-aliasing", "-ffp-contract=off",
             "-fno-math-errno", "-fdiagnostics-plain-output", "-fno-diagnostics-color"]
    if sanitizer:
        flags += ["-O1", "-g", "-DHARNESS_THREADS", "-pthread"] + SANITIZER_FLAGS[sanitizer]
    elif variant == "threads":
        flags += ["-O2", "-DHARNESS_THREADS", "-pthread"]
    else:
        flags += ["-O2"]
    return flags


def _include_flags(user_flags):
    return [f for f in user_flags if f.startswith("-I")] + ["-I" + str(HERE), "-I" + cuda_include_dir()]


_ERROR_LINE = re.compile(r"^(?P<loc>[^\s:][^:]*:\d+(?::\d+)?): (?P<kind>fatal error|error): (?P<msg>.*)$", re.M)


def _compile_error(stderr, filename):
    errors = [f"{m.group('loc')}: {m.group('kind')}: {m.group('msg')}" for m in _ERROR_LINE.finditer(stderr)]
    head = "\n".join(errors[:8]) if errors else stderr.strip()[-4000:]
    more = f"\n... and {len(errors) - 8} more error(s)" if len(errors) > 8 else ""
    tail = stderr.strip()
    if len(tail) > 6000:
        tail = tail[:6000] + "\n..."
    return CompileError(f"failed to compile {filename} for the CPU execution harness:\n{head}{more}\n\n"
                        f"full compiler output:\n{tail}")


def _remember(error, path):
    """Cache a compile error that names a source location (not one from a crash or a full disk)."""
    if _ERROR_LINE.search(str(error)):
        _write_atomic(path, str(error))
    return error


def _write_atomic(path, data):
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def build(code, *, options=(), name_expressions=(), filename=None, variant="fibers", sanitizer=None):
    """Compile a kernel module (or find it in the cache).

    Returns ``(so_path, info)``; ``info`` is the JSON description: ``entries`` (one per
    callable kernel: ``expr``, ``name``, ``extern_c``, ``params``, ``param_types``,
    ``max_threads``, ``file``, ``line``), ``templates`` (template kernels by name) and
    ``filename``.
    """
    problem = toolchain_problem()
    if problem:
        raise HarnessError(f"the CPU execution harness cannot compile kernels: {problem}")
    user_flags = translate_options(options)
    name_expressions = list(name_expressions or ())
    key_text = json.dumps([code, user_flags, name_expressions, filename, variant, sanitizer, compiler_version(),
                           cuda_include_dir(), _headers_digest()])
    key = hashlib.sha256(key_text.encode()).hexdigest()[:32]
    cdir = cache_dir()
    so_path = cdir / f"{key}.so"
    info_path = cdir / f"{key}.json"
    error_path = cdir / f"{key}.error"
    if so_path.is_file() and info_path.is_file():
        try:
            return so_path, json.loads(info_path.read_text())
        except ValueError:
            pass
    if error_path.is_file():  # compile errors are cached too: the inputs are the same
        raise CompileError(error_path.read_text())
    src_path = cdir / f"{key}.cu"
    shown = filename or str(src_path)
    escaped = shown.replace("\\", "\\\\").replace('"', '\\"')
    _write_atomic(src_path, f'#line 1 "{escaped}"\n{code}')  # kept: the file compiler messages point at
    macros = [f for f in user_flags if f.startswith("-D")]
    flags = _build_flags(variant, sanitizer)
    pre = subprocess.run([compiler(), "-E", *flags, *macros, *_include_flags(user_flags), "-include",
                          "cuda_runtime_shim.h", "-x", "c++", str(src_path)],
                         capture_output=True, text=True)
    if pre.returncode != 0:
        raise _remember(_compile_error(pre.stderr, shown), error_path)
    text = pre.stdout
    kernels = _source.find_kernels(text)
    by_name = {k.name: k for k in kernels}
    entries = []
    for k in kernels:
        if k.extern_c and not k.template:
            entries.append((k.qualified, k))
    for expr in name_expressions:
        base = re.sub(r"<.*", "", expr).strip().split("::")[-1]
        entries.append((expr, by_name.get(base)))
    try:
        body = _source.rewrite(text)
    except _source.SourceError as e:
        raise CompileError(f"failed to translate {shown} for the CPU execution harness: {e}") from None
    body += _source.entry_points(entries)
    fd, ii_path = tempfile.mkstemp(dir=cdir, prefix=f"{key}.", suffix=".ii")
    with os.fdopen(fd, "w") as f:
        f.write(body)
    fd, tmp_so = tempfile.mkstemp(dir=cdir, prefix=f"{key}.", suffix=".so.tmp")
    os.close(fd)
    try:
        proc = subprocess.run([compiler(), *flags, "-x", "c++-cpp-output", ii_path, "-o", tmp_so],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise _remember(_compile_error(proc.stderr, shown), error_path)
        info = {
            "filename": shown,
            "entries": [{"expr": expr, "name": k.name if k else expr, "extern_c": bool(k and k.extern_c),
                         "params": k.params if k else None, "param_types": k.param_types if k else None,
                         "max_threads": k.max_threads if k and not k.template else 0,
                         "file": k.file if k else shown, "line": k.line if k else 0}
                        for expr, k in entries],
            "kernels": [k.name for k in kernels],
        }
        os.replace(tmp_so, so_path)
        _write_atomic(info_path, json.dumps(info))
    finally:
        for p in (tmp_so, ii_path):
            if os.path.exists(p):
                os.unlink(p)
    return so_path, info
