"""A small CNN training step against PyTorch (the issue's CNN target: within 2x of PyTorch on the CPU).

Model (MNIST-sized, float32, batch 64)::

    input 64x1x28x28 -> Conv2d(1, 32, 3, padding=1) -> ReLU -> MaxPool2d(2)
                     -> Conv2d(32, 64, 3, padding=1) -> ReLU -> MaxPool2d(2)
                     -> Flatten -> Linear(64*7*7, 10) -> cross_entropy;  optim.Adam(lr=1e-3)

Cases: the full training step (zero_grad, forward, backward, Adam step), the forward alone under
``no_grad``, and the two hot layers alone (the second convolution and the first max pooling,
forward + backward). Every case is written once against the PyTorch API and run on gputorch and,
when it can be imported, on torch in the same process, with the same number of threads
(``--threads``, default 1 as in ``run_all.py``; 0 = the libraries' defaults, every core for
NumPy's BLAS and for torch's intra-op pool). The two frameworks' samples alternate (gputorch,
torch, gputorch, ...), so a busy machine slows both alike; the ratio column is the median of the
per-round ratios.

Run alone: ``python bench/cnn_step.py [--device cpu|cuda] [--quick] [--threads N]``, or through
``python bench/run_all.py``.
"""
import gc
import os
import statistics
import sys


if __package__ in (None, ""):  # run as a script: benchmark this checkout, import timing.py beside us
    sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.path.dirname(__file__)]

from timing import _usable, framework_sync, frameworks, now, run_alone  # noqa: E402

TITLE = "CNN training step, batch 64, float32 (microseconds per step, median of repeats)"

BATCH = 64


def _model(fw, device):
    nn = fw.nn
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 10),
    ).to(device)


def _batch(fw, device):
    import numpy as np
    rng = np.random.default_rng(0)
    x = fw.tensor(rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32), device=device)
    y = fw.tensor(rng.integers(0, 10, size=BATCH), device=device)
    return x, y


def train_step(fw, device):
    """zero_grad + forward + cross_entropy + backward + Adam step."""
    model = _model(fw, device)
    opt = fw.optim.Adam(model.parameters(), lr=1e-3)
    x, y = _batch(fw, device)
    F = fw.nn.functional

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return step


def forward_no_grad(fw, device):
    model = _model(fw, device)
    x, _ = _batch(fw, device)

    def step():
        with fw.no_grad():
            model(x)
    return step


def _layer_step(fw, device, layer, shape):
    import numpy as np
    rng = np.random.default_rng(0)
    x = fw.tensor(rng.standard_normal(shape).astype(np.float32), device=device, requires_grad=True)
    layer = layer.to(device)
    params = list(layer.parameters())

    def step():
        layer(x).sum().backward()
        x.grad = None
        for p in params:
            p.grad = None
    return step


def conv_layer(fw, device):
    """Conv2d(32, 64, 3, padding=1) on 64x32x14x14, forward + backward (input and weight grads)."""
    return _layer_step(fw, device, fw.nn.Conv2d(32, 64, 3, padding=1), (BATCH, 32, 14, 14))


def pool_layer(fw, device):
    """MaxPool2d(2) on 64x32x28x28, forward + backward."""
    return _layer_step(fw, device, fw.nn.MaxPool2d(2), (BATCH, 32, 28, 28))


CASES = [
    ("CNN train step (Adam), batch 64", train_step),
    ("CNN forward under no_grad, batch 64", forward_no_grad),
    ("Conv2d(32,64,3,pad 1) fwd+bwd, 64x32x14x14", conv_layer),
    ("MaxPool2d(2) fwd+bwd, 64x32x28x28", pool_layer),
]


def _calibrate(fn, sync, sample_s):
    """How many calls make one sample last about ``sample_s`` seconds (after a warm-up)."""
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


def measure_interleaved(steps, syncs, sample_s, repeat):
    """Time several frameworks' steps in alternating samples, so that a change in machine load hits
    them alike; ``{name: {"median_us", "best_us", "number", "repeat"}}`` plus the per-round ratios."""
    numbers = {name: _calibrate(fn, syncs[name], sample_s) for name, fn in steps.items()}
    samples = {name: [] for name in steps}
    for _ in range(repeat):
        for name, fn in steps.items():
            gc.collect()
            start = now()
            for _ in range(numbers[name]):
                fn()
            syncs[name]()
            samples[name].append((now() - start) / numbers[name] * 1e6)
    return {name: {"median_us": statistics.median(v), "best_us": min(v), "number": numbers[name],
                   "repeat": repeat, "samples_us": v} for name, v in samples.items()}


def run(device="cpu", quick=False):
    """Measure every case on every framework (samples interleaved); returns a list of result rows."""
    sample_s, repeat = (0.01, 3) if quick else (0.25, 9)
    rows = []
    fws = frameworks()
    for case_name, builder in CASES:
        row = {"benchmark": case_name, "device": device}
        steps, syncs = {}, {}
        for fw_name, fw in fws:
            if not _usable(fw, device):
                row[fw_name] = {"error": f"{device} not available"}
                continue
            try:
                step = builder(fw, device)
                step()
                steps[fw_name], syncs[fw_name] = step, framework_sync(fw, device)
            except Exception as e:  # a missing op or a bug: report it, keep going
                row[fw_name] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"}
        if steps:
            row.update(measure_interleaved(steps, syncs, sample_s, repeat))
        g, t = row.get("gputorch", {}), row.get("torch", {})
        if "median_us" in g and "median_us" in t:
            row["ratio"] = statistics.median(a / b for a, b in zip(g["samples_us"], t["samples_us"]))
            row["ratio_best"] = g["best_us"] / t["best_us"]
        rows.append(row)
    return rows


def format_table(rows):
    """Markdown table: benchmark | gputorch | torch | gputorch/torch (the median of the per-round ratios of
    interleaved samples) | best/best (ratio of the fastest samples)."""
    def cell(result):
        if result is None:
            return "n/a"
        if "error" in result:
            return f"error ({result['error']})"
        return f"{result['median_us']:.0f}"

    lines = ["| benchmark | device | gputorch (us) | torch (us) | gputorch/torch | best/best |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for r in rows:
        ratio = f"{r['ratio']:.2f}x" if "ratio" in r else "n/a"
        best = f"{r['ratio_best']:.2f}x" if "ratio_best" in r else "n/a"
        lines.append(f"| {r['benchmark']} | {r['device']} | {cell(r.get('gputorch'))} | "
                     f"{cell(r.get('torch'))} | {ratio} | {best} |")
    return "\n".join(lines)


def main(argv=None):
    run_alone(TITLE, run, format_table, argv)


if __name__ == "__main__":
    main()
