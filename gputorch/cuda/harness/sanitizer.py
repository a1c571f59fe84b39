"""Running harness launches under AddressSanitizer / ThreadSanitizer / UBSan, in a subprocess.

A sanitizer's runtime must be the first library a process loads, so a sanitized kernel
module cannot be loaded into the test process. A launch of a kernel from
``RawModule(..., sanitizer="address"|"thread"|"undefined")`` therefore

1. compiles the module here (threads mode, ``-fsanitize=...``, cached like any build),
2. checks and marshals the arguments here (with the signature from the module's plain
   build), pickles the launch (grid, block, shared_mem, block subset, argument bytes, the
   arrays' contents) and runs ``sanitizer_child.py`` (standard library only: it starts in
   milliseconds even under ThreadSanitizer) with the sanitizer runtime in ``LD_PRELOAD``;
   each array gets a buffer of exactly its size there,
3. copies the arrays back into the caller's arrays (so results can be checked as usual),
4. raises :class:`SanitizerError` with the sanitizer's report when it found something (or a
   :class:`LaunchError` when the launch itself failed).

Arrays must be passed to the kernel directly: device pointers hidden inside arrays (pointer
tables) do not survive the trip to another process.
"""
import os
import pickle
import re
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import compiler as _compiler
from .compiler import HarnessError

__all__ = ["SanitizerError", "sanitizer_problem", "runtime_library", "runtime_loaded", "run_launch"]

_RUNTIMES = {"address": "libasan.so", "thread": "libtsan.so", "undefined": "libubsan.so"}
_REPORT = re.compile(r"ERROR: AddressSanitizer|WARNING: ThreadSanitizer|ThreadSanitizer: reported|"
                     r"runtime error:|ERROR: LeakSanitizer|AddressSanitizer:DEADLYSIGNAL|ThreadSanitizer:DEADLYSIGNAL")


class SanitizerError(HarnessError):
    """A sanitizer reported an error in a kernel launch; the message holds its report."""

    def __init__(self, message, report=""):
        super().__init__(message)
        self.report = report


@lru_cache(maxsize=None)
def runtime_library(sanitizer):
    """The path of the sanitizer's shared runtime (from the compiler), or None."""
    try:
        out = subprocess.run([_compiler.compiler(), f"-print-file-name={_RUNTIMES[sanitizer]}"], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    path = out.stdout.strip()
    return path if os.path.isabs(path) and os.path.exists(path) else None


def runtime_loaded(sanitizer):
    """Whether this process already runs with the sanitizer's runtime (e.g. the subprocess)."""
    name = _RUNTIMES[sanitizer].split(".")[0]
    try:
        with open("/proc/self/maps") as f:
            return any(name + ".so" in line for line in f)
    except OSError:
        return False


def _environment(sanitizer):
    env = dict(os.environ)
    lib = runtime_library(sanitizer)
    env["LD_PRELOAD"] = lib + (" " + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    env["PYTHONMALLOC"] = "malloc"
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0:halt_on_error=1:abort_on_error=0:allocator_may_return_null=1")
    env.setdefault("TSAN_OPTIONS", "halt_on_error=0:exitcode=66:report_signal_unsafe=0:history_size=4")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    return env


@lru_cache(maxsize=None)
def sanitizer_problem(sanitizer):
    """None when launches can run under `sanitizer` here, else why not (for pytest skips)."""
    if sanitizer not in _RUNTIMES:
        return f"unknown sanitizer {sanitizer!r}"
    problem = _compiler.toolchain_problem()
    if problem:
        return problem
    if runtime_library(sanitizer) is None:
        return f"the compiler has no {_RUNTIMES[sanitizer]} (install the sanitizer runtime, e.g. libasan8/libtsan2)"
    try:
        out = subprocess.run([sys.executable, "-c", "import ctypes, pickle"], env=_environment(sanitizer),
                             capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        return f"python cannot start with {_RUNTIMES[sanitizer]} preloaded: {e}"
    if out.returncode != 0:
        return f"python cannot start with {_RUNTIMES[sanitizer]} preloaded: {out.stderr.strip()[-500:]}"
    return None


def run_launch(kernel, grid, block, args, shared_mem, subset, timeout):
    """Run one launch of a sanitized kernel in a subprocess (see the module docstring)."""
    from .launcher import LaunchError, _load
    module = kernel.module
    problem = sanitizer_problem(module.sanitizer)
    if problem:
        raise HarnessError(f"cannot run kernel '{kernel.name}' under the {module.sanitizer} sanitizer: {problem}")
    so_path, info = _compiler.build(module.code, options=module.options, name_expressions=module.name_expressions,
                                    filename=module.filename, variant="threads", sanitizer=module.sanitizer)
    # The argument checks need the kernel's signature: the plain build of the same source has it.
    plain, _, _ = _load(module.code, module.options, module.name_expressions, module.filename, "fibers", None)
    index, codes, entry = plain.entries[kernel.name]
    values = kernel.marshal(codes, entry, args)
    packed = []
    for a, code, v in zip(args, codes, values):
        if isinstance(a, np.ndarray) and code[:2] in ("p:", "P:"):
            if not a.flags.c_contiguous:
                raise ValueError(f"kernel '{kernel.name}': sanitized launches copy arrays to a subprocess; pass "
                                 f"C-contiguous arrays")
            packed.append(("array", a.view(np.ndarray).tobytes()))
        elif isinstance(v, int):
            packed.append(("pointer", v))
        else:
            packed.append(("value", v))
    job = {"so": str(so_path), "index": index, "grid": grid, "block": block, "shared_mem": shared_mem,
           "blocks": None if subset is None else [int(b) for b in subset], "args": packed, "timeout": timeout}
    child = Path(__file__).resolve().with_name("sanitizer_child.py")
    with tempfile.TemporaryDirectory(prefix="gputorch-sanitize-") as tmp:
        job_path, result_path = Path(tmp) / "job.pkl", Path(tmp) / "result.pkl"
        job_path.write_bytes(pickle.dumps(job))
        proc = subprocess.run([sys.executable, str(child), str(job_path), str(result_path)],
                              env=_environment(module.sanitizer), capture_output=True, text=True,
                              timeout=timeout + 60)
        result = pickle.loads(result_path.read_bytes()) if result_path.exists() else None
    report = proc.stderr
    if result is not None:
        arrays = iter(result["arrays"])
        for a, (kind, _) in zip(args, packed):
            if kind == "array":
                data = next(arrays)
                if a.flags.writeable:
                    np.copyto(a, np.frombuffer(data, dtype=a.dtype).reshape(a.shape), casting="no")
    tool = {"address": "AddressSanitizer", "thread": "ThreadSanitizer", "undefined": "UndefinedBehaviorSanitizer"}
    if _REPORT.search(report) or proc.returncode != 0:
        raise SanitizerError(f"{tool[module.sanitizer]} reported an error in kernel '{kernel.name}' "
                             f"(launch grid {grid}, block {block}, shared_mem={shared_mem}; exit status "
                             f"{proc.returncode}):\n{_trim(report)}", report)
    if result is not None and result["rc"]:
        raise LaunchError(f"kernel '{kernel.name}' ({entry['file']}:{entry['line']}) failed: {result['error']}")


def _trim(report, limit=12000):
    lines = [ln for ln in report.splitlines() if ln.strip()]
    text = "\n".join(lines)
    return text if len(text) <= limit else text[:limit] + "\n... (report truncated)"
