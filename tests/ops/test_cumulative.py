"""Cumulative ops: cumsum, cumprod, logcumsumexp."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck, gradgradcheck
from tests._helpers import assert_close
from tests.ops._reduction_checks import parity, rand

CASES = {
    "cumsum": lambda m, x: x.cumsum(1),
    "cumsum_neg_dim": lambda m, x: m.cumsum(x, -1),
    "cumprod": lambda m, x: m.cumprod(x, 0),
    "cumprod_last": lambda m, x: x.cumprod(-1),
    "logcumsumexp": lambda m, x: m.logcumsumexp(x, 1),
    "logcumsumexp_dim0": lambda m, x: x.logcumsumexp(0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_parity_with_torch(name, device):
    data = np.random.default_rng(1).uniform(-2, 2, (3, 4, 5))
    parity(CASES[name], data, device=device)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_and_gradgradcheck(name, device):
    x = rand(2, 4, 3, device=device, lo=0.3, hi=1.5)
    fn = lambda t: CASES[name](gputorch, t)  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


ZEROS = np.array([[0.0, 3.0, 0.0, 1.5, 2.0],      # two zeros
                  [0.5, 2.0, 0.0, 2.0, -1.5],     # one zero in the middle
                  [1.0, 2.0, 3.0, 0.5, 0.0],      # zero at the end
                  [1.1, -0.7, 1.3, 0.9, 1.2]])    # no zero


def test_cumprod_with_zeros(device):
    for fn in (lambda m, x: x.cumprod(1), lambda m, x: x.cumprod(0), lambda m, x: x[:, :1].cumprod(1)):
        parity(fn, ZEROS, device=device)
        x = gputorch.tensor(ZEROS, device=device, requires_grad=True)
        f = lambda t: fn(gputorch, t)  # noqa: E731
        assert gradcheck(f, (x,))
        assert gradgradcheck(f, (x,))


def test_dtypes(device):
    torch = pytest.importorskip("torch")
    data = np.arange(-3, 9).reshape(3, 4)
    for d in (np.int64, np.int32, np.uint8, np.bool_, np.float16, np.float32):
        arr = np.abs(data).astype(d) if d in (np.uint8, np.bool_) else data.astype(d)
        g, t = gputorch.tensor(arr, device=device), torch.tensor(arr)
        tol = 1e-2 if d is np.float16 else 1e-6
        assert_close(g.cumsum(1), t.cumsum(1), rtol=tol, atol=tol)
        assert_close(g.cumprod(0), t.cumprod(0), rtol=tol, atol=tol)
        assert_close(g.cumsum(0, dtype=gputorch.float64), t.cumsum(0, dtype=torch.float64))
        if d in (np.float16, np.float32):
            assert_close(g.logcumsumexp(1), t.logcumsumexp(1), rtol=tol, atol=tol)
    f = np.array([[0.7, -1.9, 2.5]])
    assert_close(gputorch.tensor(f, device=device).cumsum(1, dtype=gputorch.int32),
                 torch.tensor(f).cumsum(1, dtype=torch.int32))
    parity(lambda m, x: x.cumsum(1, dtype=m.float32), np.array([[0.5, 1.25, 2.0]]), device=device, rtol=1e-6)
    parity(lambda m, x: x.cumprod(1, dtype=m.float32), np.array([[0.5, 1.25, 2.0]]), device=device, rtol=1e-6)


def test_logcumsumexp_is_stable(device):
    data = np.array([[-1000.0, 0.0, 1000.0, 999.0], [5e3, 5e3, -5e3, 5e3], [1e-3, 2e-3, -1e-3, 0.0]])
    parity(lambda m, x: x.logcumsumexp(1), data, device=device)
    g = gputorch.tensor([[-np.inf, -np.inf, 1.0]], device=device).logcumsumexp(1)
    assert_close(g, np.array([[-np.inf, -np.inf, 1.0]], dtype=np.float32))


def test_zero_dim_empty_and_non_contiguous(device):
    for fn in (lambda m, x: x.cumsum(0), lambda m, x: x.cumprod(-1), lambda m, x: x.logcumsumexp(0)):
        parity(fn, np.array(1.5), device=device)
        parity(fn, np.zeros((0,)), device=device)
    data = np.random.default_rng(2).uniform(0.5, 1.5, (4, 6, 5))
    for fn in (lambda m, x: x.transpose(0, 2).cumsum(1), lambda m, x: x[:, ::2].cumprod(1),
               lambda m, x: x.transpose(1, 2).logcumsumexp(2)):
        parity(fn, data, device=device)


def test_errors(device):
    x = gputorch.zeros(2, 3, device=device)
    with pytest.raises(IndexError, match=r"out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        x.cumsum(2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.cumprod(-3)
    with pytest.raises(NotImplementedError, match="not implemented for 'int64'"):
        gputorch.tensor([1, 2], device=device).logcumsumexp(0)
    with pytest.raises(TypeError):
        gputorch.cumsum(x)


# ---------------------------------------------------------------------------- cummax, cummin, diff
EXTREMES = np.array([[1.0, 3.0, 3.0, 2.0, 3.0, np.nan, 1.0, np.nan],
                     [0.5, 0.0, 0.0, -1.0, -1.0, 2.0, -1.0, 4.0]])


def test_cummax_cummin_ties_nan_and_grad(device):
    for fn in (lambda m, x: m.cummax(x, 1), lambda m, x: x.cummin(-1), lambda m, x: x.cummax(0)):
        g, t = parity(fn, EXTREMES, device=device)
        assert type(g).__name__ == type(t).__name__
    data = np.round(np.random.default_rng(4).uniform(-2, 2, (3, 6, 2)))   # many ties
    for fn in (lambda m, x: x.cummax(1), lambda m, x: m.cummin(x, 2), lambda m, x: x.transpose(0, 1).cummin(0)):
        parity(fn, data, device=device)
    x = rand(3, 5, device=device)
    assert gradcheck(lambda t: t.cummax(1).values, (x,))
    assert gradgradcheck(lambda t: t.cummin(0).values, (x,))


def test_cummax_cummin_dtypes_and_shapes(device):
    torch = pytest.importorskip("torch")
    data = np.array([[3, 1, 4, 1, 5], [0, 0, 2, 2, 1]])
    for d in ("int64", "uint8", "int8", "bool", "float16"):
        g = gputorch.tensor(data, device=device).to(getattr(gputorch, d))
        t = torch.tensor(data).to(getattr(torch, d))
        for name in ("cummax", "cummin"):
            gv, gi = getattr(g, name)(1)
            tv, ti = getattr(t, name)(1)
            assert_close(gv, tv, rtol=0, atol=0)
            assert_close(gi, ti, rtol=0, atol=0)
    for arr in (np.array(2.5), np.zeros((0, 3)), np.zeros((2, 0))):
        parity(lambda m, x: m.cummax(x, -1), arr, device=device)
        parity(lambda m, x: m.cummin(x, 0), arr, device=device)
    parity(lambda m, x: m.cummax(x, 5), np.zeros((0, 3)), device=device)   # torch checks dim only if non-empty
    with pytest.raises(IndexError, match="Dimension out of range"):
        gputorch.zeros(2, 3, device=device).cummin(5)


DIFFS = {
    "first": lambda m, x: m.diff(x),
    "second_dim0": lambda m, x: x.diff(n=2, dim=0),
    "past_length": lambda m, x: m.diff(x, n=7, dim=1),
    "prepend_append": lambda m, x: m.diff(x, dim=1, prepend=x[:, :2] * 2, append=x[:, -1:].exp()),
}


@pytest.mark.parametrize("name", sorted(DIFFS))
def test_diff(name, device):
    parity(DIFFS[name], np.random.default_rng(6).uniform(-2, 2, (3, 5)), device=device)


def test_diff_zero_order_is_a_copy(device):
    x = gputorch.tensor([[1.0, 4.0, 2.0]], device=device, requires_grad=True)
    y = gputorch.diff(x, n=0)
    assert y is not x and y.grad_fn.name() == "CopyBackwards"   # torch: torch::autograd::CopyBackwards
    (y * 3).sum().backward()
    assert_close(y, x)
    assert_close(x.grad, np.full((1, 3), 3.0, dtype=np.float32))
    y = gputorch.diff(x, n=0, prepend=gputorch.zeros(1, 2, device=device))    # torch ignores prepend then
    assert y.shape == (1, 3)


def test_diff_dtypes_and_errors(device):
    torch = pytest.importorskip("torch")
    for fn in (lambda m, d: m.diff(m.tensor([True, False, False, True], device=d)),
               lambda m, d: m.diff(m.tensor([1, 2, 0], dtype=m.uint8, device=d)),
               lambda m, d: m.diff(m.tensor([[1, 3, 6]], device=d), append=m.tensor([[1.5]], device=d)),
               lambda m, d: m.diff(m.tensor([[1, 3, 6]], dtype=m.int8, device=d), prepend=m.tensor([[7]], device=d))):
        assert_close(fn(gputorch, device), fn(torch, "cpu"), rtol=0, atol=0)
    x = gputorch.zeros(2, 3, device=device)
    with pytest.raises(RuntimeError, match="at least one-dimensional"):
        gputorch.diff(gputorch.tensor(3.0, device=device))
    with pytest.raises(RuntimeError, match="order must be non-negative but got -1"):
        x.diff(n=-1)
    with pytest.raises(RuntimeError, match="same dimension as input"):
        x.diff(prepend=gputorch.zeros(3, device=device))
    with pytest.raises(TypeError, match="argument 'prepend' must be Tensor, not int"):
        x.diff(prepend=2)
    with pytest.raises(TypeError, match="argument 'n' must be int"):
        x.diff(n=1.5)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.diff(dim=2)


def test_float32_running_sums_and_products_accumulate_in_double_on_the_cpu():
    """As PyTorch's CPU kernels: a product through float32's overflow range comes back finite, and
    small terms beside large ones are not lost (found by the differential suite, seed 11)."""
    prod = gputorch.tensor([1e30, 1e30, 1e-30]).cumprod(0)
    assert prod.dtype == gputorch.float32
    assert prod.tolist() == [pytest.approx(1e30, rel=1e-6), float("inf"), pytest.approx(1e30, rel=1e-6)]
    total = gputorch.tensor([1.0, 1e-8, 1e-8, -1.0]).cumsum(0).tolist()
    assert total[-1] == pytest.approx(2e-8, rel=1e-6)
    assert gputorch.tensor(True).cumprod_(0).item() is True                 # 0-d: no kernel, as in torch
    torch = pytest.importorskip("torch")
    x = np.array([3e38, 3e38, -3e38, 1.0], dtype=np.float32)
    np.testing.assert_array_equal(gputorch.tensor(x).cumsum(0).numpy(), torch.tensor(x).cumsum(0).numpy())
