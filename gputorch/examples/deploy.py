"""Deploying a model: train the MNIST-1D CNN, trace it, export it to ONNX and serve it with ONNX
Runtime, then compare accuracy and latency per batch of the four ways to run it: gputorch eager,
the traced module (``gputorch.jit``), ONNX Runtime, and PyTorch (the same weights, when torch is
installed).

Needs the ``demo`` extra (the data) and the ``onnx`` extra (export and ONNX Runtime)::

    python -m gputorch.examples.deploy [--steps 2000] [--batch 1 100 1000] [--out cnn.onnx]
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

import gputorch as torch
from gputorch.examples.mnist1d import CNN, load_mnist1d, train


def _latency_us(fn, repeat=30):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e6


def _torch_cnn(model):
    """The same CNN in PyTorch with the trained weights, or None without torch."""
    try:
        import torch as real_torch
    except ImportError:
        return None
    from torch import nn as tnn

    class TorchCNN(tnn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = tnn.Conv1d(1, 25, 5, stride=2, padding=1)
            self.conv2 = tnn.Conv1d(25, 25, 3, stride=2, padding=1)
            self.conv3 = tnn.Conv1d(25, 25, 3, stride=2, padding=1)
            self.linear = tnn.Linear(125, 10)

        def forward(self, x):
            h = x.view(x.shape[0], 1, x.shape[-1])
            h = self.conv3(self.conv2(self.conv1(h).relu()).relu()).relu()
            return self.linear(h.flatten(1))
    twin = TorchCNN()
    twin.load_state_dict({k: real_torch.tensor(v.detach().cpu().numpy()) for k, v in model.state_dict().items()})
    return twin.eval()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="Adam steps of training (default 2000)")
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 100, 1000], help="batch sizes to time")
    parser.add_argument("--out", default=None, help="where to write the ONNX file (default: a temporary file)")
    args = parser.parse_args(argv)
    try:
        import onnxruntime as ort
    except ImportError:
        sys.exit("this example serves the model with ONNX Runtime: pip install 'gputorch[onnx]'")
    data = load_mnist1d()
    torch.manual_seed(0)
    model = CNN()
    print(f"training the MNIST-1D CNN for {args.steps} steps")
    train(model, data, "cpu", steps=args.steps, log_every=max(args.steps // 4, 1))
    model.eval()
    x_test, y_test = data[2], data[3]
    example = torch.tensor(x_test[:2])
    path = args.out or os.path.join(tempfile.mkdtemp(), "mnist1d_cnn.onnx")
    torch.onnx.export(model, example, path, input_names=["x"], output_names=["logits"],
                      dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
    print(f"exported {path} ({os.path.getsize(path) / 1024:.1f} KiB)")
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    twin = _torch_cnn(model)
    traces = {}   # a traced module fixes its input's shape: one trace per batch size

    def run_traced(x):
        if x.shape not in traces:
            traces[x.shape] = torch.jit.trace(model, torch.tensor(x))
        return traces[x.shape](torch.tensor(x)).detach().numpy()
    runners = {"gputorch eager": lambda x: model(torch.tensor(x)).detach().numpy(),
               "gputorch traced": run_traced,
               "ONNX Runtime": lambda x: session.run(None, {"x": x})[0]}
    if twin is not None:
        import torch as real_torch
        runners["PyTorch eager"] = lambda x: twin(real_torch.tensor(x)).detach().numpy()
    reference = runners["gputorch eager"](x_test)
    rows = {}
    for _ in range(2):   # two rounds over every runner: the first round also warms up the machine
        for name, run in runners.items():
            context = real_torch.no_grad() if name.startswith("PyTorch") else torch.no_grad()
            with context:
                logits = run(x_test)
                times = [_latency_us(lambda b=b: run(x_test[:b])) for b in args.batch]
            accuracy = float((logits.argmax(1) == y_test).mean())
            best = rows.get(name, (None, None, times))[2]
            rows[name] = (accuracy, float(np.abs(logits - reference).max()), [min(a, b) for a, b in zip(times, best)])
    print(f"\n{'runner':<18}{'accuracy':>10}{'max |diff|':>12}" + "".join(f"{f'batch {b} (us)':>18}"
                                                                      for b in args.batch))
    for name, (accuracy, diff, times) in rows.items():
        print(f"{name:<18}{accuracy:>10.1%}{diff:>12.2e}" + "".join(f"{t:>18.1f}" for t in times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
