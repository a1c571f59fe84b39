"""Per-op overhead: microseconds per step on tiny tensors, where the framework (dispatch,
graph recording, the backward engine), not the arithmetic, is what is measured; and
one small MLP training step, where the arithmetic starts to count.

Every case is written once against the PyTorch API and run on gputorch and, when it
can be imported, on torch in the same process, so the ratio gputorch/torch compares
like with like on the same machine at the same moment.

Run alone: ``python bench/autograd_overhead.py [--device cpu|cuda] [--quick]``, or with
every other benchmark through ``python bench/run_all.py``.
"""
import os
import sys

if __package__ in (None, ""):  # run as a script: benchmark this checkout, import timing.py beside us
    sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.path.dirname(__file__)]

from timing import format_table, run_alone, run_cases  # noqa: E402

TITLE = "Autograd overhead (microseconds per step, median of repeats)"


# --- cases: each builds its inputs on `device` and returns a zero-argument step -----------------

def _leaves(fw, device, n, count):
    """`count` float32 leaf tensors of `n` elements in [1, 2) that require grad."""
    import numpy as np  # imported late: see timing.limit_threads
    rng = np.random.default_rng(0)
    return [fw.tensor(rng.uniform(1, 2, size=n).astype(np.float32), device=device, requires_grad=True)
            for _ in range(count)]


def _clear(*tensors):
    for t in tensors:
        t.grad = None


def add_mul_sum(fw, device, n=1, backward=True):
    """((a * b) + a).sum(): 3 ops forward, 3 backward."""
    a, b = _leaves(fw, device, n, 2)

    def step():
        loss = ((a * b) + a).sum()
        if backward:
            loss.backward()
            _clear(a, b)
    return step


def chain10(a, b):
    """Ten elementwise ops (arithmetic and pointwise, no kinks)."""
    y = a * b
    y = y + a
    y = y * 0.5
    y = y - b
    y = y.exp()
    y = y * a
    y = y.tanh()
    y = y + 1.0
    y = y / b
    return y.sigmoid()


def elementwise_chain(fw, device, n=1, backward=True, no_grad=False):
    """chain10(a, b).sum(): 11 ops forward, 11 backward nodes."""
    a, b = _leaves(fw, device, n, 2)
    if no_grad:
        def step():
            with fw.no_grad():
                chain10(a, b).sum()
        return step

    def step():
        loss = chain10(a, b).sum()
        if backward:
            loss.backward()
            _clear(a, b)
    return step


def mlp_step(fw, device, sizes=(784, 256, 256, 10), batch=128, lr=0.01):
    """One SGD training step of an MLP written with raw tensors (no nn/optim): forward with
    ``@``/relu, cross-entropy via logsumexp against one-hot targets, backward, in-place update."""
    import numpy as np
    rng = np.random.default_rng(0)
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        w = rng.standard_normal((n_in, n_out)).astype(np.float32) * np.float32((2.0 / n_in) ** 0.5)
        params.append(fw.tensor(w, device=device, requires_grad=True))
        params.append(fw.zeros(n_out, device=device, requires_grad=True))
    x = fw.tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32), device=device)
    labels = rng.integers(0, sizes[-1], size=batch)
    onehot = fw.tensor(np.eye(sizes[-1], dtype=np.float32)[labels], device=device)

    def step():
        h = x
        for i in range(0, len(params) - 2, 2):
            h = (h @ params[i] + params[i + 1]).relu()
        logits = h @ params[-2] + params[-1]
        log_probs = logits - logits.logsumexp(dim=1, keepdim=True)
        loss = -(log_probs * onehot).sum() / batch
        loss.backward()
        with fw.no_grad():
            for p in params:
                p.sub_(p.grad * lr)
                p.grad = None
    return step


# (name, builder, keyword arguments for the builder)
CASES = [
    ("((a*b)+a).sum() fwd+bwd, 1 elem", add_mul_sum, {"n": 1}),
    ("((a*b)+a).sum() fwd only, 1 elem", add_mul_sum, {"n": 1, "backward": False}),
    ("10-op chain fwd+bwd, 1 elem", elementwise_chain, {"n": 1}),
    ("10-op chain fwd only, 1 elem", elementwise_chain, {"n": 1, "backward": False}),
    ("10-op chain fwd under no_grad, 1 elem", elementwise_chain, {"n": 1, "no_grad": True}),
    ("10-op chain fwd+bwd, 1000 elem", elementwise_chain, {"n": 1000}),
    ("10-op chain fwd only, 1000 elem", elementwise_chain, {"n": 1000, "backward": False}),
    ("MLP 784-256-256-10 SGD step, batch 128", mlp_step, {}),
]


def run(device="cpu", quick=False):
    """Measure every case on every framework; returns a list of result rows (dicts)."""
    return run_cases(CASES, device, quick)


def main(argv=None):
    run_alone(TITLE, run, format_table, argv)


if __name__ == "__main__":
    main()
