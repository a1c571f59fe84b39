"""Sorting and order statistics: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck, gradgradcheck
from tests._helpers import assert_close
from tests.ops._reduction_checks import parity, rand

# name -> fn(module, x); outputs compared with torch (inputs have no ties, so indices agree).
CASES = {
    "sort": lambda m, x: x.sort(),
    "sort_dim_descending": lambda m, x: m.sort(x, 1, descending=True),
    "sort_stable_kw": lambda m, x: m.sort(x, dim=0, stable=True),
    "msort": lambda m, x: m.msort(x),
    "topk": lambda m, x: x.topk(2),
    "topk_smallest_dim0": lambda m, x: m.topk(x, 2, dim=0, largest=False),
    "topk_all": lambda m, x: x.topk(4, 1),
    "kthvalue": lambda m, x: x.kthvalue(2),
    "kthvalue_dim_keepdim": lambda m, x: m.kthvalue(x, 3, 1, True),
    "median": lambda m, x: x.median(),
    "median_dim": lambda m, x: m.median(x, 1),
    "median_dim_keepdim": lambda m, x: x.median(-1, keepdim=True),
    "nanmedian": lambda m, x: x.nanmedian(),
    "nanmedian_dim": lambda m, x: m.nanmedian(x, 0),
    "mode_values": lambda m, x: x.mode(1).values,
}


def _values(out):
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("name", sorted(CASES))
def test_parity_with_torch(name, device):
    data = np.random.default_rng(1).uniform(-2, 2, (3, 4, 5))
    parity(CASES[name], data, device=device)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_and_gradgradcheck(name, device):
    x = rand(2, 4, 3, device=device)
    fn = lambda t: _values(CASES[name](gputorch, t))  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_argsort(device):
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(2).uniform(-2, 2, (3, 4, 5))
    g, t = gputorch.tensor(data, device=device), torch.tensor(data)
    for fn in (lambda m, x: x.argsort(), lambda m, x: m.argsort(x, 1, descending=True),
               lambda m, x: m.argsort(x, dim=0, stable=True), lambda m, x: x.transpose(0, 2).argsort(1)):
        got = fn(gputorch, g)
        assert_close(got, fn(torch, t))
        assert got.dtype is gputorch.int64 and not got.requires_grad


def test_stable_sort_with_ties_and_nan(device):
    torch = pytest.importorskip("torch")
    nan = float("nan")
    data = np.array([[3.0, 1.0, 3.0, nan, 1.0, 2.0, nan, 3.0], [0.0, 0.0, -1.0, 0.0, 5.0, 5.0, -1.0, 0.0]])
    g, t = gputorch.tensor(data, device=device), torch.tensor(data)
    for descending in (False, True):
        got = gputorch.sort(g, 1, descending)
        exp = torch.sort(t, dim=1, descending=descending, stable=True)
        assert_close(got.values, exp.values)
        assert_close(got.indices, exp.indices)
        assert_close(g.argsort(1, descending), torch.argsort(t, dim=1, descending=descending, stable=True))
    ints = np.array([[2, 1, 2, 1, 0], [1, 1, 1, 1, 1]])
    got = gputorch.tensor(ints, device=device).sort(descending=True)
    exp = torch.tensor(ints).sort(descending=True, stable=True)
    assert_close(got.values, exp.values)
    assert_close(got.indices, exp.indices)
    b = gputorch.tensor([[True, False, True, False]], device=device).sort()
    assert b.values.dtype is gputorch.bool and b.indices.tolist() == [[1, 3, 0, 2]]


def test_topk_nan_is_largest(device):
    nan = float("nan")
    data = np.array([[1.0, nan, 2.0, -1.0], [0.5, 0.25, 4.0, 3.0]])
    parity(lambda m, x: x.topk(2), data, device=device)
    parity(lambda m, x: x.topk(2, largest=False), data, device=device)


def test_sort_gradient_scatters_back(device):
    x = gputorch.tensor([[3.0, 1.0, 2.0]], device=device, dtype=gputorch.float64, requires_grad=True)
    values, indices = x.sort(descending=True)
    (values * gputorch.tensor([[10.0, 20.0, 30.0]], device=device, dtype=gputorch.float64)).sum().backward()
    assert_close(x.grad, np.array([[10.0, 30.0, 20.0]]))
    assert indices.tolist() == [[0, 2, 1]]


def test_median_and_kthvalue_nan(device):
    torch = pytest.importorskip("torch")
    nan = float("nan")
    data = np.array([[1.0, nan, 2.0, 0.5], [4.0, 3.0, 2.0, 1.0], [nan, nan, nan, nan]])
    g, t = gputorch.tensor(data, device=device), torch.tensor(data)
    for fn in (lambda m, x: x.median(), lambda m, x: x.nanmedian(), lambda m, x: x[1:2].nanmedian(),
               lambda m, x: x.median(1).values, lambda m, x: x.nanmedian(1).values,
               lambda m, x: x.kthvalue(4, 1).values, lambda m, x: x[:2].median(1).indices,
               lambda m, x: x[:2].nanmedian(1).indices, lambda m, x: x[:2].kthvalue(4, 1).indices):
        assert_close(fn(gputorch, g), fn(torch, t))  # (which NaN an all-NaN slice indexes is unspecified)
    # A NaN median (whole tensor) passes its gradient to the NaN entries.
    parity(lambda m, x: x.median(), data[:1], device=device)


def test_median_ties_share_gradient(device):
    data = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
    parity(lambda m, x: x.median(), data, device=device)
    parity(lambda m, x: x.median(), np.array([1.0, 2.0, 3.0, 4.0]), device=device)  # lower median


def test_mode(device):
    torch = pytest.importorskip("torch")
    for data in ([[3, 1, 3, 1, 2]], [[5, 4, 4, 5, 5, 4]], [[1, 2, 3]], [[2, 2, 1, 2]], [[2, 7, 7, 2, 9]]):
        got = gputorch.tensor(data, device=device).mode()
        exp = torch.tensor(data).mode()
        assert_close(got.values, exp.values)
        assert_close(got.indices, exp.indices)
    rng = np.random.default_rng(3)
    data = rng.integers(0, 4, (3, 6, 5)).astype(np.float64)
    for dim in (0, 1, 2):
        got = gputorch.tensor(data, device=device).mode(dim, keepdim=dim == 1)
        exp = torch.tensor(data).mode(dim, keepdim=dim == 1)
        assert_close(got.values, exp.values)
        assert_close(got.indices, exp.indices)
    x = gputorch.tensor([[1.0, 2.0, 2.0]], device=device, dtype=gputorch.float64, requires_grad=True)
    x.mode().values.sum().backward()
    assert_close(x.grad, np.array([[0.0, 0.0, 1.0]]))


def test_integer_inputs(device):
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(4).permutation(24).reshape(4, 6)
    g, t = gputorch.tensor(data, device=device), torch.tensor(data)
    for fn in (lambda m, x: x.sort(1), lambda m, x: x.topk(3, 0), lambda m, x: x.kthvalue(2),
               lambda m, x: x.median(1), lambda m, x: x.median(), lambda m, x: x.msort()):
        got, exp = fn(gputorch, g), fn(torch, t)
        for a, b in zip(got if isinstance(got, tuple) else [got], exp if isinstance(exp, tuple) else [exp]):
            assert_close(a, b)


def test_zero_dim_and_empty(device):
    for fn in (lambda m, x: x.sort(), lambda m, x: x.topk(1), lambda m, x: x.kthvalue(1),
               lambda m, x: x.median(0), lambda m, x: x.median(), lambda m, x: x.mode(),
               lambda m, x: m.sort(x, 0, descending=True)):
        parity(fn, np.array(2.5), device=device)
    e = gputorch.zeros(2, 0, device=device)
    assert e.sort().values.shape == (2, 0)
    assert e.topk(0).indices.shape == (2, 0)
    assert e.argsort(1).shape == (2, 0)
    assert e.median(0).values.shape == (0,)
    assert np.isnan(gputorch.zeros(0, device=device).median().item())


def test_non_contiguous_inputs(device):
    data = np.random.default_rng(5).uniform(-2, 2, (4, 6, 5))
    for fn in (lambda m, x: x.transpose(0, 2).sort(1), lambda m, x: x[:, ::2].topk(2, 1),
               lambda m, x: x.transpose(1, 2).median(1), lambda m, x: x[..., ::-1 if False else 2].kthvalue(2, 0)):
        parity(fn, data, device=device)


def test_errors(device):
    x = gputorch.zeros(2, 3, device=device)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(4)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(-1)
    with pytest.raises(RuntimeError, match="topk does not support bool"):
        gputorch.ones(3, dtype=gputorch.bool, device=device).topk(1)
    with pytest.raises(RuntimeError, match="kthvalue\\(\\): selected number k out of range for dimension 1"):
        x.kthvalue(4)
    with pytest.raises(RuntimeError, match="selected number k out of range for dimension 0"):
        x.kthvalue(0, 0)
    with pytest.raises(IndexError, match="kthvalue\\(\\): Expected reduction dim 1 to have non-zero size."):
        gputorch.zeros(2, 0, device=device).kthvalue(1)
    with pytest.raises(IndexError, match="median\\(\\): Expected reduction dim 0 to have non-zero size."):
        gputorch.zeros(0, 2, device=device).median(0)
    with pytest.raises(IndexError, match="mode\\(\\): Expected reduction dim 1 to have non-zero size."):
        gputorch.zeros(2, 0, device=device).mode(1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sort(2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.topk(1, -3)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        gputorch.ones(3, dtype=gputorch.bool, device=device).median()
