"""Training steps written with nn/optim, the same code for gputorch and PyTorch.

The MLP case is issue 3's target: 784-256-256-10, batch 128, SGD with momentum,
at or below PyTorch's time on the CPU (the framework overhead is what there is to win,
hand-written NumPy does the arithmetic in 0.92x of PyTorch).

Run alone: ``python bench/training_step.py [--device cpu|cuda] [--quick]``.
"""
import os
import sys

if __package__ in (None, ""):
    sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.path.dirname(__file__)]

from timing import format_table, run_alone, run_cases  # noqa: E402

TITLE = "Training steps with nn and optim (microseconds per step, median of repeats)"


def _batch(fw, device, shape, classes, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    x = fw.tensor(rng.standard_normal(shape).astype(np.float32), device=device)
    y = fw.tensor(rng.integers(0, classes, shape[0]), device=device)
    return x, y


def mlp_sgd_step(fw, device, sizes=(784, 256, 256, 10), batch=128):
    """Linear/ReLU MLP, cross-entropy, SGD(momentum=0.9)."""
    nn = fw.nn
    fw.manual_seed(0)
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(n_in, n_out), nn.ReLU()]
    model = nn.Sequential(*layers[:-1]).to(device)
    opt = fw.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x, y = _batch(fw, device, (batch, sizes[0]), sizes[-1])

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    return step


def transformer_block_step(fw, device, batch=16, seq=64, d_model=128, heads=4):
    """One TransformerEncoderLayer (batch_first, dropout 0) with AdamW on a regression loss."""
    nn = fw.nn
    fw.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model, dropout=0.0,
                                       batch_first=True).to(device)
    opt = fw.optim.AdamW(layer.parameters(), lr=1e-3)
    x, _ = _batch(fw, device, (batch, seq, d_model), 2)

    def step():
        opt.zero_grad()
        layer(x).square().mean().backward()
        opt.step()
    return step


CASES = [
    ("MLP 784-256-256-10, batch 128, SGD momentum", mlp_sgd_step, {}),
    ("TransformerEncoderLayer d=128 h=4 seq=64 batch 16, AdamW", transformer_block_step, {}),
]


def run(device="cpu", quick=False):
    return run_cases(CASES, device, quick)


def main(argv=None):
    run_alone(TITLE, run, format_table, argv)


if __name__ == "__main__":
    main()
