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
