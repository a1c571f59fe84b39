"""dist, renorm/renorm_, frobenius_norm, nuclear_norm (gputorch/ops/norm_functions.py) and aminmax:
values, gradients and errors against PyTorch."""
import warnings

import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck
from tests._helpers import assert_close

torch = pytest.importorskip("torch")

DATA = np.random.default_rng(3).standard_normal((3, 4, 2))


def _pair(device, data=DATA):
    return (gputorch.tensor(data, device=device, requires_grad=True),
            torch.tensor(data, requires_grad=True))


def _same_with_grad(ours, theirs, x, tx, tol=1e-12):
    assert_close(ours, theirs, tol, tol)
    weights = np.arange(1.0, ours.numel() + 1).reshape(tuple(ours.shape))
    (ours * gputorch.tensor(weights, device=x.device)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    assert_close(x.grad, tx.grad, tol, tol)
    x.grad, tx.grad = None, None


@pytest.mark.parametrize("p", [1, 2, 3.5, float("inf")])
def test_dist(device, p):
    x, tx = _pair(device)
    _same_with_grad(gputorch.dist(x, x[0] * 0.5, p), torch.dist(tx, tx[0] * 0.5, p), x, tx)
    _same_with_grad(x.dist(x.flip(0), p), tx.dist(tx.flip(0), p), x, tx)


def test_dist_zero_norm_counts_differences(device):
    """p=0 counts the nonzero differences; its gradient is zero (torch 2.13's backward fails there)."""
    x, tx = _pair(device)
    y = x.detach().clone()
    y[0] = 0.0
    out = gputorch.dist(x, y, 0)
    assert_close(out, torch.dist(tx, torch.tensor(y.cpu()._data), 0), 0, 0)
    out.backward()
    assert float(x.grad.abs().sum()) == 0.0


@pytest.mark.parametrize("p,dim,maxnorm", [(2, 0, 1.5), (1, 1, 2.0), (3.0, -1, 0.5), (float("inf"), 2, 1.0)])
def test_renorm_and_its_inplace_form(device, p, dim, maxnorm):
    x, tx = _pair(device)
    _same_with_grad(gputorch.renorm(x, p, dim, maxnorm), torch.renorm(tx, p, dim, maxnorm), x, tx)
    y, ty = x * 1, tx * 1
    assert y.renorm_(p, dim, maxnorm) is y
    ty.renorm_(p, dim, maxnorm)
    _same_with_grad(y, ty, x, tx)
    assert gradcheck(lambda t: t.renorm(p, dim, maxnorm), (x.detach().requires_grad_(),))


def test_renorm_errors(device):
    x = gputorch.ones(3, device=device)
    with pytest.raises(RuntimeError, match="needs at least 2 dimensions, got 1"):
        gputorch.renorm(x, 2, 0, 1.0)
    with pytest.raises(RuntimeError, match="non-positive-norm"):
        gputorch.renorm(x.reshape(1, 3), 0, 0, 1.0)
    with pytest.raises(RuntimeError, match="maxnorm to be >= 0"):
        gputorch.renorm(x.reshape(1, 3), 2, 0, -1.0)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        gputorch.ones(2, 2, requires_grad=True).renorm_(2, 0, 1.0)


def test_frobenius_and_nuclear_norms(device):
    x, tx = _pair(device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dim, keepdim in (((0,), False), ((0, 2), True), ((), False)):
            _same_with_grad(gputorch.frobenius_norm(x, dim, keepdim), torch.frobenius_norm(tx, dim, keepdim), x, tx)
        _same_with_grad(gputorch.nuclear_norm(x), torch.nuclear_norm(tx), x, tx, 1e-10)
        _same_with_grad(gputorch.nuclear_norm(x, True), torch.nuclear_norm(tx, True), x, tx, 1e-10)
        _same_with_grad(gputorch.nuclear_norm(x, (0, 2), keepdim=True), torch.nuclear_norm(tx, (0, 2), keepdim=True),
                        x, tx, 1e-10)
        with pytest.raises(RuntimeError, match="at most 2 dimensions, but got 3"):
            gputorch.frobenius_norm(x, (0, 1, 2))
    with pytest.warns(UserWarning, match="frobenius_norm is deprecated"):
        gputorch.frobenius_norm(x, (0,))


def test_aminmax(device):
    data = [[1.0, 3.0, 3.0], [2.0, 0.0, 0.0]]
    x, tx = (gputorch.tensor(data, device=device, requires_grad=True), torch.tensor(data, requires_grad=True))
    for kwargs in ({}, {"dim": 1}, {"dim": -2, "keepdim": True}, {"keepdim": True}):
        ours, theirs = gputorch.aminmax(x, **kwargs), torch.aminmax(tx, **kwargs)
        assert type(ours).__name__ == "aminmax"
        assert_close(ours.min, theirs.min, 0, 0)
        assert_close(ours.max, theirs.max, 0, 0)
        (ours.min * 2 + ours.max * 5).sum().backward()      # ties share the gradient
        (theirs.min * 2 + theirs.max * 5).sum().backward()
        assert_close(x.grad, tx.grad, 0, 0)
        x.grad, tx.grad = None, None
    low, high = gputorch.tensor([3, 9, 1], dtype=gputorch.uint8, device=device).aminmax()
    assert (int(low), int(high)) == (1, 9) and low.dtype == gputorch.uint8
    with pytest.raises(RuntimeError, match="cannot compute aminmax over an empty dimension"):
        gputorch.aminmax(gputorch.zeros(0, 3, device=device))
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        gputorch.aminmax(gputorch.zeros(0, 3, device=device), dim=0)
    assert gputorch.aminmax(gputorch.zeros(0, 3, device=device), dim=1).min.shape == (0,)


def test_resize_dim_order_and_const_data_ptr():
    x = gputorch.arange(6.0).reshape(2, 3)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        assert x.resize(3, 2).shape == (3, 2)
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        assert x.resize_as(gputorch.zeros(6)).shape == (6,)
    with pytest.raises(RuntimeError, match="preserving the number of elements"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x.resize(4)
    assert x.dim_order() == (0, 1) and x.t().dim_order() == (1, 0)
    assert gputorch.zeros(2, 3, 4).permute(2, 0, 1).dim_order() == torch.zeros(2, 3, 4).permute(2, 0, 1).dim_order()
    assert x.const_data_ptr() == x.data_ptr()


def test_inf_norm_gradients_are_zero_where_the_norm_is_nan(device):
    # dist and vector_norm with p = +-inf: the gradient goes to the entries attaining the norm, shared on
    # ties; a NaN norm is attained by none and PyTorch's gradient is then 0 (gputorch's was 0/0 = NaN; an
    # issue-14 leftover).
    nan, inf = float("nan"), float("inf")
    for p in (inf, -inf):
        x = gputorch.tensor([nan, 3.0, -3.0], device=device, requires_grad=True)
        y = gputorch.zeros(3, device=device, requires_grad=True)
        gputorch.dist(x, y, p).backward()
        np.testing.assert_array_equal(x.grad.cpu().numpy(), [0.0, 0.0, 0.0])
        np.testing.assert_array_equal(y.grad.cpu().numpy(), [0.0, 0.0, 0.0])
        z = gputorch.tensor([1.0, 1.0, -1.0], device=device, requires_grad=True)
        gputorch.linalg.vector_norm(z, p).backward()
        np.testing.assert_allclose(z.grad.cpu().numpy(), [1 / 3, 1 / 3, -1 / 3], rtol=1e-6)
    rows = gputorch.tensor([[nan, 1.0], [2.0, -3.0]], device=device, requires_grad=True)
    gputorch.linalg.vector_norm(rows, inf, dim=1).sum().backward()
    np.testing.assert_array_equal(rows.grad.cpu().numpy(), [[0.0, 0.0], [0.0, -1.0]])


def test_dist_gradient_where_the_norm_overflows(device):
    """The 2-norm's gradient is x * (g / norm) (PyTorch's order): with a norm that overflows to inf
    it is -0/0, where g * x / norm gave inf / inf = NaN for an upstream gradient above 1."""
    a = gputorch.tensor([[0.01], [-0.09], [0.6]], device=device, requires_grad=True)
    b = gputorch.tensor([[0.38], [0.43], [3e38]], device=device, requires_grad=True)
    (gputorch.dist(a, b) * -1.5).backward()
    assert np.isfinite(a.grad.cpu().numpy()).all() and not a.grad.cpu().numpy().any()
    assert np.isfinite(b.grad.cpu().numpy()).all() and not b.grad.cpu().numpy().any()


def test_pdist_and_cdist_p0_are_nan_where_a_difference_is_nan(device):
    """PyTorch's distance kernels count non-zeros with NaN propagating (vector_norm's p=0 counts a NaN
    as non-zero)."""
    x = gputorch.tensor([[float("nan"), 1.0], [0.0, 1.0], [2.0, 2.0]], device=device)
    np.testing.assert_array_equal(gputorch.pdist(x, p=0).cpu().numpy(), [np.nan, np.nan, 2.0])
    np.testing.assert_array_equal(gputorch.cdist(x, x, p=0).cpu().numpy()[1], [np.nan, 0.0, 2.0])
    np.testing.assert_array_equal(gputorch.linalg.vector_norm(x, 0, dim=1).cpu().numpy(), [2.0, 1.0, 2.0])
