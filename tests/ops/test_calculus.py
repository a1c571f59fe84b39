"""trapezoid/trapz, cumulative_trapezoid and gradient (gputorch/ops/calculus.py): values, dtypes,
gradients (gradcheck, and against PyTorch) and errors."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck
from tests._helpers import assert_close

torch = pytest.importorskip("torch")

Y = np.random.default_rng(5).standard_normal((3, 5))
X = np.cumsum(np.random.default_rng(6).uniform(0.2, 1.0, 5))


def _both(device):
    return ((gputorch.tensor(Y, device=device, requires_grad=True), gputorch.tensor(X, device=device)),
            (torch.tensor(Y, requires_grad=True), torch.tensor(X)))


CASES = [
    lambda L, y, x: L.trapezoid(y),
    lambda L, y, x: L.trapezoid(y, x),
    lambda L, y, x: L.trapezoid(y, dx=0.25, dim=0),
    lambda L, y, x: L.trapz(y, x[:3], dim=0),
    lambda L, y, x: L.trapz(y, dx=2.0),
    lambda L, y, x: L.cumulative_trapezoid(y, x),
    lambda L, y, x: L.cumulative_trapezoid(y, dx=-1.5, dim=0),
    lambda L, y, x: L.gradient(y),
    lambda L, y, x: L.gradient(y, spacing=[0.5, 2.0], edge_order=2),
    lambda L, y, x: L.gradient(y, spacing=(x,), dim=1, edge_order=2),
    lambda L, y, x: L.gradient(y, spacing=(x[:3], x)),
    lambda L, y, x: L.gradient(y, spacing=3.0, dim=0),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_torch_with_gradient(device, case):
    (y, x), (ty, tx) = _both(device)
    fn = CASES[case]
    out, tout = fn(gputorch, y, x), fn(torch, ty, tx)
    outs, touts = (out, tout) if isinstance(out, tuple) else ((out,), (tout,))
    assert len(outs) == len(touts)
    for a, e in zip(outs, touts):
        assert_close(a, e, 1e-12, 1e-12)
    sum((a * a).sum() for a in outs).backward()
    sum((e * e).sum() for e in touts).backward()
    assert_close(y.grad, ty.grad, 1e-12, 1e-12)
    assert gradcheck(lambda t: fn(gputorch, t, x), (y.detach().requires_grad_(),))


def test_dtypes_and_degenerate_sizes(device):
    ints = gputorch.tensor([1, 2, 4], device=device)
    assert gputorch.trapezoid(ints).dtype == gputorch.float32 and float(gputorch.trapezoid(ints)) == 4.5
    assert_close(gputorch.cumulative_trapezoid(ints), torch.tensor([1.5, 4.5]), 0, 0)
    empty = gputorch.zeros(2, 0, dtype=gputorch.int32, device=device)
    assert gputorch.trapz(empty).dtype == gputorch.int32 and gputorch.trapz(empty).shape == (2,)
    assert gputorch.trapezoid(gputorch.ones(2, 1, device=device)).tolist() == [0.0, 0.0]
    assert gputorch.cumulative_trapezoid(gputorch.ones(2, 1, device=device)).shape == (2, 0)
    assert gputorch.gradient(gputorch.tensor([1, 2, 4, 8], device=device))[0].tolist() == [1.0, 1.5, 3.0, 4.0]


def test_errors(device):
    y = gputorch.tensor(Y, device=device)
    with pytest.raises(RuntimeError, match="one `x` value for each sample point"):
        gputorch.trapezoid(y, gputorch.ones(2, device=device))
    with pytest.raises(IndexError, match="no dimensions"):
        gputorch.trapezoid(gputorch.tensor(3.0, device=device))
    with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2"):
        gputorch.gradient(y, edge_order=3)
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        gputorch.gradient(y[:, :2], dim=1, edge_order=2)
    with pytest.raises(RuntimeError, match="a list of length equal to 'self.dim\\(\\) = 2'"):
        gputorch.gradient(y, spacing=[1.0, 2.0, 3.0])


@pytest.mark.parametrize("fn", ["trapezoid", "cumulative_trapezoid"])
def test_bool_and_dim_errors_come_in_torchs_order(fn, device):
    """trapezoid checks the dim before any dtype; cumulative_trapezoid checks y's dtype, then the
    dim, then x's dtype (PyTorch's order)."""
    f = getattr(gputorch, fn)
    y_bool = gputorch.tensor([True, False], device=device)
    if fn == "trapezoid":
        with pytest.raises(IndexError, match="Dimension out of range"):
            f(y_bool, dim=1)
    else:
        with pytest.raises(RuntimeError, match="bool input for `y`"):
            f(y_bool, dim=1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        f(gputorch.tensor([1.0, 2.0], device=device), gputorch.tensor([True, False], device=device), dim=3)
    with pytest.raises(RuntimeError, match="bool input for `x`"):
        f(gputorch.tensor([1.0, 2.0], device=device), gputorch.tensor([True, False], device=device))


def test_gradient_checks_edge_order_then_spacing_then_dim(device):
    x = gputorch.zeros(3, 4, device=device)
    with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2"):
        gputorch.gradient(x, dim=-4, spacing=[1.0], edge_order=3)
    with pytest.raises(RuntimeError, match="spacing argument of length 2 and a dim argument of length 1"):
        gputorch.gradient(x, dim=-4, spacing=[1.0, 2.0])
    with pytest.raises(RuntimeError, match="spacing argument of length 1 and a dim argument of length 2"):
        gputorch.gradient(x, dim=(0, 1), spacing=[1.0])
    with pytest.raises(IndexError, match="Dimension out of range"):
        gputorch.gradient(x, dim=-4)
