"""quantile and nanquantile against torch: values, shapes, dtypes, gradients, errors."""
import numpy as np
import pytest

import gputorch
from tests._helpers import assert_close

NAN = float("nan")
MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _check(fn, data, device, q=None, grad=True):
    """``fn(module, x, q)`` on gputorch and torch (float64 data): values, shapes and gradients."""
    torch = pytest.importorskip("torch")
    gx = gputorch.tensor(data, device=device, requires_grad=grad)
    tx = torch.tensor(data, requires_grad=grad)
    gq = q if not isinstance(q, np.ndarray) else gputorch.tensor(q, device=device)
    tq = q if not isinstance(q, np.ndarray) else torch.tensor(q)
    g, t = fn(gputorch, gx, gq), fn(torch, tx, tq)
    assert_close(g, t, rtol=1e-12, atol=1e-12)
    assert g.requires_grad == t.requires_grad
    if grad:
        w = np.random.default_rng(1).standard_normal(tuple(t.shape))
        (t * torch.tensor(w)).nansum().backward()
        (g * gputorch.tensor(w, device=device)).nansum().backward()
        assert_close(gx.grad, tx.grad, rtol=1e-12, atol=1e-12)


DATA = np.random.default_rng(0).uniform(-3, 3, (3, 5, 4))
DATA_TIES = np.round(DATA)


@pytest.mark.parametrize("mode", MODES)
def test_quantile_modes(mode, device):
    qs = np.array([0.0, 0.1, 0.5, 0.75, 1.0])
    _check(lambda m, x, q: m.quantile(x, q, dim=1, interpolation=mode), DATA, device, qs)
    _check(lambda m, x, q: x.quantile(q, dim=-1, keepdim=True, interpolation=mode), DATA_TIES, device, 0.3)
    _check(lambda m, x, q: m.nanquantile(x, q, interpolation=mode), DATA, device, 0.625)


def test_quantile_shapes(device):
    q1 = np.array([0.2, 0.9])
    _check(lambda m, x, q: m.quantile(x, q, keepdim=True), DATA, device, q1)
    _check(lambda m, x, q: m.quantile(x, q), DATA, device, np.array(0.4))
    _check(lambda m, x, q: m.quantile(x, q, dim=0, keepdim=True), DATA, device, q1)
    _check(lambda m, x, q: m.quantile(x, q, dim=0, keepdim=True), np.array(2.5), device, 0.3)
    _check(lambda m, x, q: m.quantile(x, q, dim=0), np.array(2.5), device, np.array([0.3]))
    torch = pytest.importorskip("torch")
    assert (gputorch.quantile(gputorch.zeros(2, 3, device=device, dtype=gputorch.float32), 0.5, dim=1).dtype
            == gputorch.float32) and torch.quantile(torch.zeros(2, 3), 0.5, dim=1).dtype == torch.float32


def test_nan_handling(device):
    data = np.array([[NAN, NAN, NAN], [1.0, NAN, 3.0], [2.0, 0.5, 1.0]])
    for mode in MODES:
        _check(lambda m, x, q: m.quantile(x, q, dim=1, interpolation=mode), data, device, np.array([0.4, 1.0]),
               grad=False)
        _check(lambda m, x, q: m.nanquantile(x, q, dim=1, interpolation=mode), data, device, np.array([0.4, 1.0]),
               grad=False)
    _check(lambda m, x, q: x.nanquantile(q, dim=1), data, device, 0.4)


def test_errors(device):
    x = gputorch.zeros(2, 3, device=device, dtype=gputorch.float64)
    with pytest.raises(RuntimeError, match="must be either float or double"):
        gputorch.quantile(gputorch.tensor([1, 2], device=device), 0.3)
    with pytest.raises(RuntimeError, match=r"q must be in the range \[0, 1\] but got 1.3"):
        x.quantile(1.3)
    with pytest.raises(RuntimeError, match="q must be a scalar or 1D tensor"):
        x.quantile(gputorch.tensor([[0.3]], dtype=gputorch.float64, device=device))
    with pytest.raises(RuntimeError, match="same dtype as the input"):
        x.quantile(gputorch.tensor([0.3], device=device))
    with pytest.raises(RuntimeError, match=r"q values must be in the range \[0, 1\]"):
        x.quantile(gputorch.tensor([-0.3], dtype=gputorch.float64, device=device))
    with pytest.raises(RuntimeError, match="must be non-empty"):
        gputorch.quantile(gputorch.zeros(0, device=device), 0.3)
    with pytest.raises(RuntimeError, match="interpolation must be one of"):
        x.quantile(0.3, interpolation="foo")
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.nanquantile(0.3, dim=2)


def test_linear_quantile_passes_gradients_to_q(device):
    torch = pytest.importorskip("torch")
    data = np.array([[1.0, 5.0, NAN, 2.0], [2.0, 2.0, 7.0, 1.0]])
    for name in ("quantile", "nanquantile"):
        grads = []
        for lib, dev in ((gputorch, device), (torch, "cpu")):
            x = lib.tensor(data, dtype=lib.float64, device=dev, requires_grad=True)
            q = lib.tensor([0.3, 0.8], dtype=lib.float64, device=dev, requires_grad=True)
            y = getattr(lib, name)(x, q, dim=1)
            (y.nan_to_num() * lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, device=dev)).sum().backward()
            grads.append((q.grad, x.grad))
            assert not getattr(lib, name)(x, q, interpolation="midpoint").detach().requires_grad
        assert_close(grads[0][0], grads[1][0], rtol=1e-12, atol=1e-12)
        assert_close(grads[0][1], grads[1][1], rtol=1e-12, atol=1e-12)
