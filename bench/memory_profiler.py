"""The memory profiler's overhead: a training step with the profiler off and on.

The issue's bar: with the profiler on, a training step costs at most 10% more; with it off,
nothing (each hook point is one check of an empty list; compare ``autograd_overhead.py`` across
versions for that). Cases: the MLP step of ``training_step.py`` with Adam, the CNN step of
``cnn_step.py``, and a 10-op chain on one-element tensors (the worst case: all framework
overhead, no arithmetic), each measured in alternating samples off/on so that a change in
machine load hits both alike; the on/off column is the median of the per-round ratios.

gputorch only (PyTorch has no equivalent to compare with). Run alone:
``python bench/memory_profiler.py [--device cpu|cuda] [--quick] [--threads N]``, or through
``python bench/run_all.py``.
"""
import gc
import os
import statistics
import sys

if __package__ in (None, ""):  # run as a script: benchmark this checkout, import timing.py beside us
    sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.path.dirname(__file__)]

from timing import framework_sync, now, run_alone  # noqa: E402

TITLE = "Memory profiler overhead (microseconds per training step, gputorch, profiler off vs on)"


def _mlp_adam(fw, device, sizes=(784, 256, 256, 10), batch=128):
    import numpy as np
    nn = fw.nn
    fw.manual_seed(0)
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(n_in, n_out), nn.ReLU()]
    model = nn.Sequential(*layers[:-1]).to(device)
    opt = fw.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    x = fw.tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32), device=device)
    y = fw.tensor(rng.integers(0, sizes[-1], batch), device=device)

    def step():
        opt.zero_grad()
        fw.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return model, opt, step


def _cnn_adam(fw, device):
    import cnn_step
    model = cnn_step._model(fw, device)
    opt = fw.optim.Adam(model.parameters(), lr=1e-3)
    x, y = cnn_step._batch(fw, device)

    def step():
        opt.zero_grad()
        fw.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return model, opt, step


def _chain_sgd(fw, device):
    """Ten elementwise ops on one-element tensors, backward, SGD: per-op overhead only."""
    a = fw.nn.Parameter(fw.full((1,), 1.5, device=device))
    b = fw.nn.Parameter(fw.full((1,), 1.25, device=device))
    opt = fw.optim.SGD([a, b], lr=1e-3)

    def step():
        opt.zero_grad()
        y = a * b
        y = y + a
        y = y * 0.5
        y = y - b
        y = y.exp()
        y = y * a
        y = y.tanh()
        y = y + 1.0
        y = y * b
        y = y.sum()
        y.backward()
        opt.step()
    return None, opt, step


CASES = [
    ("MLP 784-256-256-10, batch 128, Adam", _mlp_adam),
    ("CNN (2 conv, 2 pool, linear), batch 64, Adam", _cnn_adam),
    ("10-op chain on 1 element, fwd+bwd+SGD (worst case)", _chain_sgd),
]


def _calibrate(fn, sync, sample_s):
    for _ in range(3):
        fn()
    sync()
    number = 1
    while True:
        start = now()
        for _ in range(number):
            fn()
        sync()
        elapsed = now() - start
        if elapsed >= sample_s or number >= 100_000:
            return number
        number = max(number * 2, int(number * sample_s / max(elapsed, 1e-9) * 1.1))


def _sample(fn, sync, number):
    gc.collect()
    start = now()
    for _ in range(number):
        fn()
    sync()
    return (now() - start) / number * 1e6


def run(device="cpu", quick=False):
    import gputorch as fw
    from gputorch.profiler import MemoryProfiler
    sample_s, repeat = (0.01, 3) if quick else (0.2, 9)
    sync = framework_sync(fw, device)
    rows = []
    for name, builder in CASES:
        row = {"benchmark": name, "device": device}
        try:
            model, opt, step = builder(fw, device)
            number = _calibrate(step, sync, sample_s)
            off, on = [], []
            for _ in range(repeat):
                off.append(_sample(step, sync, number))
                prof = MemoryProfiler(model=model, optimizer=opt, scan_existing=False).start()
                try:
                    step()                                  # first step under the profiler: untimed
                    on.append(_sample(step, sync, number))
                finally:
                    prof.stop()
            report = prof.report()
            row["off"] = {"median_us": statistics.median(off), "best_us": min(off), "samples_us": off}
            row["on"] = {"median_us": statistics.median(on), "best_us": min(on), "samples_us": on}
            row["ratio"] = statistics.median(b / a for a, b in zip(off, on))
            row["peak_bytes"] = report.peak_bytes
            row["number"] = number
        except Exception as e:  # a missing op or a bug: report it, keep going
            row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
        rows.append(row)
    return rows


def format_table(rows):
    """Markdown table: benchmark | device | off | on | on/off (median of per-round ratios)."""
    lines = ["| benchmark | device | profiler off (us) | profiler on (us) | on/off | peak tracked |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['benchmark']} | {r['device']} | error ({r['error']}) | | | |")
            continue
        lines.append(f"| {r['benchmark']} | {r['device']} | {r['off']['median_us']:.1f} | "
                     f"{r['on']['median_us']:.1f} | {r['ratio']:.3f}x | {r['peak_bytes']} B |")
    return "\n".join(lines)


def main(argv=None):
    run_alone(TITLE, run, format_table, argv)


if __name__ == "__main__":
    main()
