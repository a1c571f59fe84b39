"""The fused activation-gradient ops: values, node names and double backward."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.ops.activation_backward import sigmoid_backward, tanh_backward, threshold_backward
from tests._helpers import assert_close


def _pair(device, seed=0):
    rng = np.random.default_rng(seed)
    g = gputorch.tensor(rng.standard_normal(5), device=device, requires_grad=True)
    y = gputorch.tensor(rng.uniform(-0.9, 0.9, 5), device=device, requires_grad=True)
    return g, y


@pytest.mark.parametrize("fn, reference", [
    (tanh_backward, lambda g, y: g * (1 - y * y)),
    (sigmoid_backward, lambda g, y: g * (1 - y) * y),
    (lambda g, y: threshold_backward(g, y, 0.1), lambda g, y: g * (y > 0.1)),
])
def test_values_and_gradients(fn, reference, device):
    g, y = _pair(device)
    assert_close(fn(g, y), reference(g.detach().cpu().numpy(), y.detach().cpu().numpy()), rtol=1e-14)
    assert gradcheck(fn, (g, y))
    assert gradgradcheck(fn, (g, y))


def test_activation_double_backward_node_names_match_torch(device):
    torch = pytest.importorskip("torch")
    for name in ("tanh", "sigmoid", "relu"):
        x = np.array([-1.0, 0.5, 2.0])
        gx = gputorch.tensor(x, device=device, requires_grad=True)
        tx = torch.tensor(x, requires_grad=True)
        (g1,) = gputorch.autograd.grad(getattr(gputorch, name)(gx).sum(), gx, create_graph=True)
        (t1,) = torch.autograd.grad(getattr(torch, name)(tx).sum(), tx, create_graph=True)
        assert g1.grad_fn.name() == t1.grad_fn.name()
        assert_close(g1, t1, rtol=1e-14)
        (g2,) = gputorch.autograd.grad(g1.sum(), gx, allow_unused=True, materialize_grads=True)
        (t2,) = torch.autograd.grad(t1.sum(), tx, allow_unused=True, materialize_grads=True)
        assert_close(g2, t2, rtol=1e-12, atol=1e-14)
