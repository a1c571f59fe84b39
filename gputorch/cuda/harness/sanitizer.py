"""Running harness launches under AddressSanitizer / ThreadSanitizer / UBSan, in a subprocess.

A sanitizer's runtime must be the first library a process loads, so a sanitized kernel
module cannot be loaded into the test process. A launch of a kernel from
``RawModule(..., sanitizer="address"|"thread"|"undefined")`` therefore

1. compiles the module here (threads mode, ``-fsanitize=...``, cached like any build),
2. pickles the launch (grid, block, shared_mem, block subset, the arguments: arrays as host
   copies, scalars as they are) and runs ``python -m gputorch.cuda.harness.sanitizer`` with
   the sanitizer runtime in ``LD_PRELOAD``,
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
    root = str(Path(__file__).resolve().parents[3])  # the directory holding the gputorch package
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
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
        out = subprocess.run([sys.executable, "-c", "import numpy"], env=_environment(sanitizer), capture_output=True,
                             text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        return f"python cannot start with {_RUNTIMES[sanitizer]} preloaded: {e}"
    if out.returncode != 0:
        return f"python cannot start with {_RUNTIMES[sanitizer]} preloaded: {out.stderr.strip()[-500:]}"
    return None


def run_launch(kernel, grid, block, args, shared_mem, subset, timeout):
    """Run one launch of a sanitized kernel in a subprocess (see the module docstring)."""
    module = kernel.module
    problem = sanitizer_problem(module.sanitizer)
    if problem:
        raise HarnessError(f"cannot run kernel '{kernel.name}' under the {module.sanitizer} sanitizer: {problem}")
    so_path, info = _compiler.build(module.code, options=module.options, name_expressions=module.name_expressions,
                                    filename=module.filename, variant="threads", sanitizer=module.sanitizer)
    packed = []
    for a in args:
        if isinstance(a, np.ndarray):
            if not a.flags.c_contiguous:
                raise ValueError(f"kernel '{kernel.name}': sanitized launches copy arrays to a subprocess; pass "
                                 f"C-contiguous arrays")
            packed.append(("array", a.view(np.ndarray)))
        else:
            packed.append(("value", a))
    job = {"so": str(so_path), "info": info, "name": kernel.name, "grid": grid, "block": block,
           "shared_mem": shared_mem, "blocks": None if subset is None else subset.tolist(), "args": packed,
           "max_dynamic_shared": kernel.max_dynamic_shared_size_bytes, "timeout": timeout}
    with tempfile.TemporaryDirectory(prefix="gputorch-sanitize-") as tmp:
        job_path, result_path = Path(tmp) / "job.pkl", Path(tmp) / "result.pkl"
        job_path.write_bytes(pickle.dumps(job))
        proc = subprocess.run([sys.executable, "-m", "gputorch.cuda.harness.sanitizer", str(job_path),
                               str(result_path)], env=_environment(module.sanitizer), capture_output=True, text=True,
                              timeout=timeout + 60)
        result = pickle.loads(result_path.read_bytes()) if result_path.exists() else None
    report = proc.stderr
    if result is not None:
        for a, (kind, value) in zip(args, result["args"]):
            if kind == "array" and isinstance(a, np.ndarray) and a.flags.writeable:
                np.copyto(a, value.reshape(a.shape), casting="no")
    tool = {"address": "AddressSanitizer", "thread": "ThreadSanitizer", "undefined": "UndefinedBehaviorSanitizer"}
    if _REPORT.search(report) or (proc.returncode != 0 and (result is None or result.get("error") is None)):
        raise SanitizerError(f"{tool[module.sanitizer]} reported an error in kernel '{kernel.name}' "
                             f"(launch grid {grid}, block {block}, shared_mem={shared_mem}; exit status "
                             f"{proc.returncode}):\n{_trim(report)}", report)
    if result is not None and result.get("error"):
        from .launcher import LaunchError
        kind, message = result["error"]
        raise {"TypeError": TypeError, "ValueError": ValueError}.get(kind, LaunchError)(message)


def _trim(report, limit=12000):
    lines = [ln for ln in report.splitlines() if ln.strip()]
    text = "\n".join(lines)
    return text if len(text) <= limit else text[:limit] + "\n... (report truncated)"


def _child(job_path, result_path):
    from .launcher import LaunchError, RawKernel, _Module
    job = pickle.loads(Path(job_path).read_bytes())
    module = _Module(job["so"], job["info"])
    kernel = RawKernel.__new__(RawKernel)
    kernel.name = job["name"]
    kernel.max_dynamic_shared_size_bytes = job["max_dynamic_shared"]
    index, codes, entry = module.entries[job["name"]]
    args = tuple(v for _, v in job["args"])
    subset = None if job["blocks"] is None else np.asarray(job["blocks"], dtype=np.uint64)
    error = None
    try:
        kernel._launch(module, index, codes, entry, job["grid"], job["block"], args, job["shared_mem"], subset, 0,
                       job["timeout"])
    except (LaunchError, TypeError, ValueError) as e:
        error = (type(e).__name__, str(e))
    Path(result_path).write_bytes(pickle.dumps({"args": job["args"], "error": error}))


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
