"""AccumulateGrad keeps a fresh gradient without copying it, and copies whenever the
gradient could be seen elsewhere (so in-place updates of .grad never leak)."""
import numpy as np

import gputorch
from gputorch._tensor import Tensor


def _count_copies(monkeypatch):
    calls = []
    original = Tensor._copy_detached

    def counting(self):
        calls.append(self)
        return original(self)
    monkeypatch.setattr(Tensor, "_copy_detached", counting)
    return calls


def test_fresh_gradients_are_not_copied(monkeypatch, device):
    w1 = gputorch.randn(4, 5, device=device, requires_grad=True)
    w2 = gputorch.randn(5, 3, device=device, requires_grad=True)
    x = gputorch.randn(2, 4, device=device)
    copies = _count_copies(monkeypatch)
    ((x @ w1).relu() @ w2).square().sum().backward()
    if device == "cpu":  # simulated CUDA arrays are NumPy views, so they are copied (correct, slower)
        assert copies == []
    assert w1.grad.shape == (4, 5) and w2.grad.shape == (5, 3)
    assert w1.grad._data is not w2.grad._data


def test_shared_gradient_is_copied_per_leaf(device):
    a = gputorch.ones(3, device=device, requires_grad=True)
    b = gputorch.ones(3, device=device, requires_grad=True)
    (a + b).sum().backward()          # both leaves receive the same gradient tensor
    assert a.grad._data is not b.grad._data
    a.grad.mul_(5)
    assert b.grad.tolist() == [1.0, 1.0, 1.0]


def test_user_gradient_is_not_aliased(device):
    x = gputorch.ones(3, device=device, requires_grad=True)
    g = gputorch.tensor([1.0, 2.0, 3.0], device=device)
    (x * 1).backward(g)
    g.zero_()
    assert x.grad.tolist() == [1.0, 2.0, 3.0]
    y = x + 0
    y.backward(g.fill_(4.0))
    assert x.grad.tolist() == [5.0, 6.0, 7.0]


def test_retained_grad_is_not_shared_with_leaf(device):
    x = gputorch.ones(2, device=device, requires_grad=True)
    y = x * 1
    y.retain_grad()
    (y + 0).sum().backward()
    x.grad.add_(10)
    assert y.grad.tolist() == [1.0, 1.0]
    np.testing.assert_allclose(x.grad.cpu().numpy(), [11.0, 11.0])
