"""index_reduce / index_reduce_ (gputorch/ops/indexing/scatter_reduction.py) and the zero-safe
gradient of scatter_reduce's "prod" they share: values, gradients and errors against PyTorch."""
import warnings

import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck
from tests._helpers import assert_close

torch = pytest.importorskip("torch")

SOURCE = [[2.0, 3.0], [4.0, 0.0], [6.0, 7.0], [0.5, -1.0]]
INDEX = [0, 2, 0, 0]


@pytest.fixture(autouse=True)
def _no_beta_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_matches_torch_with_gradients(device, reduce, include_self):
    base = [[1.0, 0.0], [5.0, 2.0], [-1.0, 3.0]]
    a, ta = gputorch.tensor(base, device=device, requires_grad=True), torch.tensor(base, requires_grad=True)
    s, ts = gputorch.tensor(SOURCE, device=device, requires_grad=True), torch.tensor(SOURCE, requires_grad=True)
    out = (a * 1).index_reduce(0, gputorch.tensor(INDEX, device=device), s, reduce, include_self=include_self)
    tout = (ta * 1).index_reduce(0, torch.tensor(INDEX), ts, reduce, include_self=include_self)
    assert_close(out, tout, 1e-6, 1e-6)
    weights = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    (out * gputorch.tensor(weights, device=device)).sum().backward()
    (tout * torch.tensor(weights)).sum().backward()
    assert_close(a.grad, ta.grad, 1e-6, 1e-6)
    assert_close(s.grad, ts.grad, 1e-6, 1e-6)
    y, ty = a.detach().clone(), ta.detach().clone()
    assert gputorch.index_reduce(y, 0, gputorch.tensor(INDEX, device=device), s.detach(), reduce) is not y
    assert y.index_reduce_(1, gputorch.tensor([1, 1], device=device), s.detach()[:3], reduce) is y
    ty.index_reduce_(1, torch.tensor([1, 1]), ts.detach()[:3], reduce)
    assert_close(y, ty, 1e-6, 1e-6)


def test_prod_gradient_is_finite_at_zero_factors(device):
    """One zero factor: its derivative is the product of the others; two: every derivative is 0."""
    a = gputorch.tensor([[0.0, 2.0, 3.0]], dtype=gputorch.float64, device=device, requires_grad=True)
    s = gputorch.tensor([[0.0, 4.0, 0.5, 2.0]], dtype=gputorch.float64, device=device, requires_grad=True)
    index = gputorch.tensor([[0, 1, 2, 2]], device=device)
    a.scatter_reduce(1, index, s, "prod").sum().backward()
    assert a.grad.tolist() == [[0.0, 4.0, 1.0]] and s.grad.tolist() == [[0.0, 2.0, 6.0, 1.5]]
    x = gputorch.tensor([[1.5, 0.0, -2.0]], dtype=gputorch.float64, device=device, requires_grad=True)
    v = gputorch.tensor([[0.0, 3.0], [1.25, 0.5]], dtype=gputorch.float64, device=device, requires_grad=True)
    assert gradcheck(lambda p, q: p.index_reduce(1, gputorch.tensor([1, 1], device=device), q[:1], "prod"), (x, v))


def test_index_reduce_errors(device):
    x = gputorch.ones(3, 2, device=device)
    s = gputorch.tensor(SOURCE[:3], device=device)
    i = gputorch.tensor([0, 2, 0], device=device)
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax or amin but got sum"):
        x.index_reduce(0, i, s, "sum")
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index but got: Float"):
        x.index_reduce(0, i.float(), s, "amax")
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        x.index_reduce(0, i.reshape(3, 1), s, "amax")
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_reduce(0, gputorch.tensor([0, 3, 0], device=device), s, "amax")
    with pytest.raises(RuntimeError, match="Number of indices \\(2\\) should be equal to source"):
        x.index_reduce(0, i[:2], s, "amax")
    with pytest.raises(RuntimeError, match="must have the same scalar type"):
        x.index_reduce(0, i, s.double(), "amax")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x.index_reduce(0, i, s, "amax")
    assert "index_reduce() is in beta" in str(caught[0].message)


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_amax_amin_at_a_nan_result_give_nan_gradients(device, reduce):
    # No element equals a NaN result: PyTorch's share of the gradient is 0/0, NaN for self and source
    # (as amax's own backward gives); gputorch gave 0 (differential seed 1).
    nan = float("nan")
    a = gputorch.tensor([[0.31, -0.41, 0.47], [0.28, -0.12, 0.09]], device=device, requires_grad=True)
    s = gputorch.tensor([[nan]], device=device, requires_grad=True)
    out = gputorch.index_reduce(a, 1, gputorch.tensor([1], device=device), s.expand(2, 1), reduce)
    out.sum().backward()
    np.testing.assert_array_equal(np.isnan(a.grad.cpu().numpy()), [[False, True, False], [False, True, False]])
    assert_close(a.grad.cpu().nan_to_num(0.0), np.array([[1.0, 0, 1], [1, 0, 1]], np.float32))
    assert np.isnan(s.grad.cpu().numpy()).all()
    # A finite result keeps the tie-sharing gradient.
    b = gputorch.tensor([1.0, 2.0], device=device, requires_grad=True)
    src = gputorch.tensor([2.0], device=device, requires_grad=True)
    b.scatter_reduce(0, gputorch.tensor([1], device=device), src, reduce).sum().backward()
    assert_close(src.grad, np.array([0.5], np.float32))   # a tie with self: half each


def test_bool_mean_is_refused_unless_nothing_is_reduced(device):
    """PyTorch's mean divides (floor division for integers), which bool has not: index_reduce names
    div_floor, scatter_reduce its gather kernel; with an empty index nothing is computed and the input
    comes back, still bool."""
    a = gputorch.tensor([[False, True], [True, True]], device=device)
    src = gputorch.tensor([[True, True], [False, True]], device=device)
    with pytest.warns(UserWarning, match="beta"), pytest.raises(NotImplementedError, match="div_floor_.* for 'Bool'"):
        a.index_reduce(0, gputorch.tensor([0, 0], device=device), src, "mean")
    with pytest.raises(NotImplementedError, match="reduce_mean\" not implemented for 'Bool'"):
        gputorch.scatter_reduce(a, 0, gputorch.tensor([[0, 0]], device=device), src[:1], "mean")
    with pytest.warns(UserWarning, match="beta"):
        empty = a.index_reduce(0, gputorch.zeros(0, dtype=gputorch.int32, device=device),
                               gputorch.zeros((0, 2), dtype=gputorch.bool, device=device), "mean")
    assert empty.dtype == gputorch.bool
    np.testing.assert_array_equal(empty.cpu().numpy(), [[False, True], [True, True]])
