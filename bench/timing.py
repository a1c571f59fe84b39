"""Timing for the benchmarks: warm up, calibrate, repeat, report the median and the best.

``measure(fn)`` calls ``fn()`` (one benchmark step) until it is warm, picks how many
calls make one sample last about ``sample_s`` seconds, then takes ``repeat``
samples. Per-call times are reported in microseconds: the median of the samples
(the headline figure, robust to a busy machine) and the best (the floor).
"""
import gc
import os
import statistics
import sys
import time

__all__ = ["measure", "framework_sync", "limit_threads", "run_alone", "use_clock", "clock_name", "now"]

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

# The clock samples are read from: wall time (the default), or this process's CPU time, which on a
# shared machine leaves out the time other processes held the core (only meaningful for one-thread
# CPU runs: with several threads it adds theirs up, and a GPU's work is not the process's).
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = {"name": "wall", "read": time.perf_counter}


def use_clock(name):
    """Read samples from the ``"wall"`` or ``"cpu"`` clock from now on."""
    if name not in CLOCKS:
        raise ValueError(f"clock must be one of {sorted(CLOCKS)}, got {name!r}")
    _clock["name"], _clock["read"] = name, CLOCKS[name]


def clock_name():
    return _clock["name"]


def now():
    """The current reading of the benchmarks' clock, in seconds."""
    return _clock["read"]()


def limit_threads(n):
    """Give NumPy's BLAS and torch's OpenMP pool ``n`` threads each (0: the libraries' defaults).

    Must run before NumPy or torch is imported: the pools are sized when they load. On a
    small shared machine two pools of "all cores" each oversubscribe it, and a spinning
    pool can slow the other by an order of magnitude, so the benchmarks pin both.
    """
    if n <= 0:
        return
    loaded = [m for m in ("numpy", "torch") if m in sys.modules]
    if loaded:
        raise RuntimeError(f"limit_threads({n}) must run before {' and '.join(loaded)} is imported")
    for var in THREAD_VARIABLES:
        os.environ[var] = str(n)


def _time_calls(fn, number, sync):
    start = now()
    for _ in range(number):
        fn()
    sync()
    return now() - start


def measure(fn, *, sample_s=0.05, repeat=7, warmup_s=0.05, sync=lambda: None):
    """Microseconds per call of ``fn``: ``{"median_us", "best_us", "number", "repeat"}``.

    ``sync`` is called at the end of each sample (a device synchronisation for GPU work,
    so queued kernels are counted).
    """
    # Warm-up: caches, lazily built kernels, allocator pools.
    deadline = time.perf_counter() + warmup_s
    calls = 0
    while calls < 3 or time.perf_counter() < deadline:
        fn()
        calls += 1
    sync()
    # Calibrate: grow the number of calls per sample until one sample takes sample_s.
    number = 1
    while True:
        elapsed = _time_calls(fn, number, sync)
        if elapsed >= sample_s or number >= 1_000_000:
            break
        number = max(number * 2, int(number * sample_s / max(elapsed, 1e-9) * 1.1))
    samples = []
    for _ in range(repeat):
        gc.collect()
        samples.append(_time_calls(fn, number, sync) / number * 1e6)
    return {"median_us": statistics.median(samples), "best_us": min(samples), "number": number,
            "repeat": repeat}


def framework_sync(fw, device):
    """A zero-argument function that waits for ``device``'s queued work under framework ``fw``."""
    if not str(device).startswith("cuda"):
        return lambda: None
    cuda_sync = getattr(fw.cuda, "synchronize", None)
    if cuda_sync is not None:
        return cuda_sync
    dev = fw.device(device)
    return lambda: dev.backend.synchronize(dev)


def frameworks():
    """[(name, module)]: gputorch always, torch when it can be imported."""
    import gputorch
    found = [("gputorch", gputorch)]
    try:
        import torch
    except ImportError:
        pass
    else:
        found.append(("torch", torch))
    return found


def _usable(fw, device):
    return not device.startswith("cuda") or fw.cuda.is_available()


def run_cases(cases, device="cpu", quick=False):
    """Measure each ``(name, builder, kwargs)`` case on every framework: ``builder(fw, device,
    **kwargs)`` returns a zero-argument step. Returns one result row (a dict) per case."""
    timing = {"sample_s": 0.01, "repeat": 3, "warmup_s": 0.01} if quick else {}
    rows = []
    fws = frameworks()
    for case_name, builder, kwargs in cases:
        row = {"benchmark": case_name, "device": device}
        for fw_name, fw in fws:
            if not _usable(fw, device):
                row[fw_name] = {"error": f"{device} not available"}
                continue
            try:
                step = builder(fw, device, **kwargs)
                row[fw_name] = measure(step, sync=framework_sync(fw, device), **timing)
            except Exception as e:  # an op not written yet, or a bug: report it, keep going
                row[fw_name] = error_result(e)
        rows.append(add_ratio(row))
    return rows


def error_result(exc):
    """The result entry of a case that raised ``exc`` (reported in the table, the run goes on)."""
    return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}"}


def add_ratio(row):
    """``row`` with ``"ratio"``: gputorch's median time over torch's, when both were measured."""
    g, t = row.get("gputorch", {}), row.get("torch", {})
    if "median_us" in g and "median_us" in t:
        row["ratio"] = g["median_us"] / t["median_us"]
    return row


def format_table(rows, unit="us", value=lambda result: f"{result['median_us']:.1f}", ratio="gputorch/torch"):
    """Markdown table: benchmark | device | gputorch (unit) | torch (unit) | ratio column.

    ``value(result)`` formats a measured result (default: the median in microseconds).
    """
    def cell(result):
        if result is None:
            return "n/a"
        if "error" in result:
            return f"error ({result['error']})"
        return value(result)

    lines = [f"| benchmark | device | gputorch ({unit}) | torch ({unit}) | {ratio} |",
             "| --- | --- | ---: | ---: | ---: |"]
    for r in rows:
        shown = f"{r['ratio']:.2f}x" if "ratio" in r else "n/a"
        lines.append(f"| {r['benchmark']} | {r['device']} | {cell(r.get('gputorch'))} | "
                     f"{cell(r.get('torch'))} | {shown} |")
    return "\n".join(lines)


def run_alone(title, run, format_table, argv=None):
    """The command line of one benchmark module run alone (``python bench/NAME.py``):
    ``--device``, ``--quick`` and ``--threads`` as in run_all.py; prints the module's table."""
    import argparse
    parser = argparse.ArgumentParser(description=title)
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:N")
    parser.add_argument("--quick", action="store_true", help="short samples: a smoke run, not figures")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for NumPy's BLAS and torch (default 1; 0 = library defaults)")
    add_clock_option(parser)
    args = parser.parse_args(argv)
    limit_threads(args.threads)
    use_clock(args.clock)
    print(f"## {title}\n")
    print(format_table(run(device=args.device, quick=args.quick)))


def add_clock_option(parser):
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="wall (default) or cpu: this process's CPU time, which leaves out what other "
                             "processes took on a shared machine (one-thread CPU runs only)")
