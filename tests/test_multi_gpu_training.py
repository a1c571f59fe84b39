"""Training on a GPU that is not the current one, and models split over two GPUs.

Runs with two CUDA devices (real GPUs, or GPUTORCH_SIMULATE_CUDA=2). Every step runs with
``cuda:0`` current while the work is on ``cuda:1``: the forward pass, the backward pass
(each node, hooks, gradient accumulation), the optimizer and gradient clipping must all put
their array code on the tensors' own device.
"""
import numpy as np
import pytest

import gputorch
from gputorch import nn
import gputorch.nn.functional as F
from gputorch.utils.checkpoint import checkpoint
from tests._helpers import assert_close

pytestmark = pytest.mark.skipif(gputorch.cuda.device_count() < 2, reason="needs two CUDA devices")


class ConvBlock(nn.Module):
    """(N, 3, 8, 8) -> (N, 8, 16): conv, batch norm, ReLU, dropout, as a sequence of 16 tokens."""

    def __init__(self, dropout=0.2):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        h = self.drop(F.relu(self.bn(self.conv(x))))
        h = F.max_pool2d(h, 2)                       # (N, 8, 4, 4)
        return h.flatten(2).transpose(1, 2)          # (N, 16, 8)


class SeqHead(nn.Module):
    """(N, 16, 8) -> (N, 5): self-attention, layer norm, LSTM, linear on the last step."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.norm = nn.LayerNorm(8)
        self.lstm = nn.LSTM(8, 12, batch_first=True)
        self.fc = nn.Linear(12, 5)

    def forward(self, h):
        a, _ = self.attn(h, h, h, need_weights=False)
        h = self.norm(h + a)
        out, _ = self.lstm(h)
        return self.fc(out[:, -1])


class Net(nn.Module):
    def __init__(self, dropout=0.2):
        super().__init__()
        self.features = ConvBlock(dropout)
        self.head = SeqHead()

    def forward(self, x):
        return self.head(self.features(x))


class SplitNet(Net):
    """The same network with its halves on two devices and a ``.to()`` between them."""

    def __init__(self, first, second, dropout=0.0):
        super().__init__(dropout)
        self.first, self.second = first, second
        self.features.to(first)
        self.head.to(second)

    def forward(self, x):
        return self.head(self.features(x.to(self.first)).to(self.second))


OPTIMIZERS = pytest.mark.parametrize("make_opt", [
    lambda p: gputorch.optim.Adam(p, lr=1e-2),
    lambda p: gputorch.optim.SGD(p, lr=0.1, momentum=0.9),
], ids=["adam", "sgd"])


def _batch(seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((4, 3, 8, 8)).astype(np.float32),
            rng.integers(0, 5, size=4).astype(np.int64))


def _train(model, opt, device, steps=3, clip=None, out_device=None, dtype=gputorch.float32):
    losses = []
    for step in range(steps):
        x, y = _batch(step)
        x = gputorch.tensor(x, device=device, dtype=dtype)
        y = gputorch.tensor(y, device=out_device or device)
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        losses.append(loss.item())
    return losses


@OPTIMIZERS
def test_training_on_second_gpu_while_first_is_current(make_opt):
    gputorch.manual_seed(0)
    model = Net().to("cuda:1")
    opt = make_opt(model.parameters())
    gputorch.cuda.set_device(0)
    losses = _train(model, opt, "cuda:1", clip=1.0)
    assert gputorch.cuda.current_device() == 0
    assert all(np.isfinite(losses))
    for p in model.parameters():
        assert p.device == gputorch.device("cuda:1") and p.grad.device == p.device
        for value in opt.state[p].values():
            if isinstance(value, gputorch.Tensor) and value.dim() > 0:
                assert value.device == p.device


def test_hooks_and_checkpoint_run_on_the_tensors_device():
    lin = nn.Linear(6, 6).to("cuda:1")
    seen = []
    lin.weight.register_hook(lambda g: seen.append(g.device) or g * 2)
    lin.weight.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.device))
    x = gputorch.randn(3, 6, device="cuda:1", requires_grad=True)
    h = x * 1.5
    h.register_hook(lambda g: g.exp() - 1)  # array code inside a tensor hook
    y = checkpoint(lambda t: F.gelu(lin(t)), h, use_reentrant=False)
    y.sum().backward()
    assert seen == [gputorch.device("cuda:1")] * 2
    assert x.grad.device == gputorch.device("cuda:1")
    ref_lin = nn.Linear(6, 6)
    ref_lin.load_state_dict({k: v.cpu() for k, v in lin.state_dict().items()})
    xr = x.detach().cpu().requires_grad_()
    hr = xr * 1.5
    hr.register_hook(lambda g: g.exp() - 1)
    F.gelu(ref_lin(hr)).sum().backward()
    assert_close(x.grad, xr.grad, rtol=1e-5, atol=1e-5)


@OPTIMIZERS
def test_model_split_over_two_gpus_trains_like_the_cpu(make_opt):
    # float64: Adam divides by sqrt(v), which turns float32 rounding noise in the near-zero
    # gradients of a bias before batch norm into visible parameter differences.
    gputorch.manual_seed(1)
    reference = SplitNet("cpu", "cpu").double()
    split = SplitNet("cuda:0", "cuda:1").double()
    split.load_state_dict(reference.state_dict())
    ref_losses = _train(reference, make_opt(reference.parameters()), "cpu", clip=0.5,
                        dtype=gputorch.float64)
    split_opt = make_opt(split.parameters())
    split_losses = _train(split, split_opt, "cpu", clip=0.5, out_device="cuda:1", dtype=gputorch.float64)
    np.testing.assert_allclose(split_losses, ref_losses, rtol=1e-10)
    for (name, p), (_, q) in zip(split.named_parameters(), reference.named_parameters()):
        want = "cuda:0" if name.startswith("features") else "cuda:1"
        assert p.device == gputorch.device(want), name
        assert_close(p, q, rtol=1e-9, atol=1e-10)
    # Optimizer state lives on each parameter's own GPU.
    devices = {v.device for p in split.parameters() for v in split_opt.state[p].values()
               if isinstance(v, gputorch.Tensor) and v.dim() > 0}
    assert devices == {gputorch.device("cuda:0"), gputorch.device("cuda:1")}


def test_clip_grad_norm_over_two_gpus():
    a = nn.Parameter(gputorch.tensor([3.0, 0.0], device="cuda:0"))
    b = nn.Parameter(gputorch.tensor([0.0, 4.0], device="cuda:1"))
    a.grad = gputorch.tensor([3.0, 0.0], device="cuda:0")
    b.grad = gputorch.tensor([0.0, 4.0], device="cuda:1")
    gputorch.cuda.set_device(1)
    try:
        total = nn.utils.clip_grad_norm_([a, b], 1.0)
    finally:
        gputorch.cuda.set_device(0)
    assert total.item() == pytest.approx(5.0)
    assert_close(a.grad.cpu(), np.array([0.6, 0.0], np.float32), rtol=1e-5)
    assert_close(b.grad.cpu(), np.array([0.0, 0.8], np.float32), rtol=1e-5)
    assert a.grad.device.index == 0 and b.grad.device.index == 1


def test_save_and_load_from_second_gpu(tmp_path):
    model = Net().to("cuda:1")
    path = tmp_path / "m.pt"
    gputorch.save(model.state_dict(), path)
    state = gputorch.load(path)
    assert all(v.device == gputorch.device("cuda:1") for v in state.values())
    on0 = gputorch.load(path, map_location="cuda:0")
    for k, v in model.state_dict().items():
        assert on0[k].device == gputorch.device("cuda:0")
        assert_close(on0[k].cpu(), v.cpu())


def test_reentrant_checkpoint_on_second_gpu():
    gputorch.manual_seed(2)
    block = ConvBlock(dropout=0.3).to("cuda:1")
    x = gputorch.randn(2, 3, 8, 8, device="cuda:1", requires_grad=True)
    out = checkpoint(block, x, use_reentrant=True)
    out.pow(2).sum().backward()
    assert x.grad.device == gputorch.device("cuda:1")
    assert block.conv.weight.grad.device == gputorch.device("cuda:1")
    assert float(x.grad.abs().sum()) > 0


def test_memory_profiler_on_second_gpu():
    from gputorch.profiler import MemoryProfiler
    gputorch.manual_seed(3)
    model = Net(dropout=0.0).to("cuda:1")
    opt = gputorch.optim.Adam(model.parameters(), lr=1e-3)
    with MemoryProfiler(model=model, optimizer=opt, device="cuda:1") as prof:
        _train(model, opt, "cuda:1", steps=2)
    report = prof.report()
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    assert "devices: cuda:1" in str(report)
    now = report.current
    assert now["parameters"] == params and now["gradients"] == params
    assert now["optimizer_state"] == 2 * params  # exp_avg and exp_avg_sq; step counters are on the CPU
