"""Reductions: sum, mean, nansum, nanmean, prod, var/std, logsumexp, norms, all/any, count_nonzero."""
import math
import warnings

import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck, gradgradcheck
from tests._helpers import assert_close
from tests.ops._reduction_checks import parity, rand


def _vector_norm(m, *args, **kwargs):
    return (m.linalg.vector_norm if m.__name__ == "torch" else m.vector_norm)(*args, **kwargs)


# name -> fn(module, x); each is checked against torch (values, dtype, grad_fn name, gradient)
# and with gradcheck + gradgradcheck.
CASES = {
    "sum": lambda m, x: m.sum(x),
    "sum_dim": lambda m, x: x.sum(1),
    "sum_tuple_neg_keepdim": lambda m, x: x.sum((-1, 0), keepdim=True),
    "sum_list": lambda m, x: m.sum(x, [0, 2]),
    "sum_dtype": lambda m, x: x.sum(1, dtype=m.float32),
    "mean": lambda m, x: x.mean(),
    "mean_dim_keepdim": lambda m, x: m.mean(x, -1, keepdim=True),
    "mean_tuple": lambda m, x: x.mean((0, 2)),
    "nansum": lambda m, x: m.nansum(x, 1),
    "nanmean": lambda m, x: m.nanmean(x, (0, 2)),
    "prod": lambda m, x: x.prod(),
    "prod_dim": lambda m, x: m.prod(x, 1),
    "prod_keepdim": lambda m, x: x.prod(-1, keepdim=True),
    "var": lambda m, x: x.var(),
    "var_dim": lambda m, x: m.var(x, 1),
    "var_correction0_keepdim": lambda m, x: x.var((0, 2), correction=0, keepdim=True),
    "var_unbiased_false": lambda m, x: x.var(1, False),
    "std": lambda m, x: x.std(),
    "std_dim": lambda m, x: m.std(x, -1, correction=2),
    "var_mean": lambda m, x: m.var_mean(x, 1),
    "std_mean": lambda m, x: m.std_mean(x, (0, 1), keepdim=True),
    "logsumexp": lambda m, x: m.logsumexp(x, 1),
    "logsumexp_tuple_keepdim": lambda m, x: x.logsumexp((0, 2), keepdim=True),
    "norm": lambda m, x: x.norm(),
    "norm_1_dim": lambda m, x: m.norm(x, 1, dim=1),
    "norm_3_keepdim": lambda m, x: x.norm(3, 2, True),
    "norm_half": lambda m, x: x.norm(0.5, dim=(0, 1)),
    "norm_neg": lambda m, x: x.norm(-1.5, dim=1),
    "norm_inf": lambda m, x: x.norm(float("inf")),
    "norm_neg_inf_dim": lambda m, x: x.norm(float("-inf"), dim=0),
    "norm_fro_dims": lambda m, x: m.norm(x, "fro", dim=(0, 2)),
    "vector_norm": lambda m, x: _vector_norm(m, x),
    "vector_norm_ord_dim": lambda m, x: _vector_norm(m, x, 4, dim=(-1,), keepdim=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_parity_with_torch(name, device):
    data = np.random.default_rng(1).uniform(-2, 2, (3, 4, 5))
    # a float32 sum: another device may add in another order (a GPU does), which moves the last bit
    rtol = 1e-6 if name == "sum_dtype" else 1e-10
    parity(CASES[name], data, device=device, rtol=rtol)


@pytest.mark.parametrize("name", sorted(set(CASES) - {"sum_dtype"}))  # float32 output: too coarse
def test_gradcheck_and_gradgradcheck(name, device):
    x = rand(2, 3, 4, device=device, lo=0.3, hi=1.5)
    with gputorch.no_grad():
        x.mul_(gputorch.tensor(np.where(np.arange(24).reshape(2, 3, 4) % 3, 1.0, -1.0), device=device))
    fn = lambda t: CASES[name](gputorch, t)  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_grad_fn_names(device):
    x = rand(2, 3, device=device)
    assert x.sum().grad_fn.name() == "SumBackward0"
    assert x.sum(0).grad_fn.name() == "SumBackward1"
    assert x.mean().grad_fn.name() == "MeanBackward0"
    assert x.mean(1).grad_fn.name() == "MeanBackward1"
    assert x.prod().grad_fn.name() == "ProdBackward0"
    assert x.prod(1).grad_fn.name() == "ProdBackward1"
    assert gputorch.nanmean(x).grad_fn.name() == "DivBackward0"
    assert x.norm().grad_fn.name() == "LinalgVectorNormBackward0"


# ---------------------------------------------------------------------------- dtypes
def test_integer_and_bool_dtypes(device):
    torch = pytest.importorskip("torch")
    ints = np.arange(-5, 7).reshape(3, 4)
    for np_dtype in (np.int32, np.int64, np.uint8, np.int8, np.bool_):
        data = np.abs(ints).astype(np_dtype) if np_dtype in (np.uint8, np.bool_) else ints.astype(np_dtype)
        g, t = gputorch.tensor(data, device=device), torch.tensor(data)
        assert_close(g.sum(), t.sum())
        assert_close(g.sum(1, keepdim=True), t.sum(1, keepdim=True))
        assert_close(g.nansum(0), t.nansum(0))
        assert_close(g.prod(1), t.prod(1))
        assert_close(g.prod(), t.prod())
        assert_close(g.all(1), t.all(1))
        assert_close(g.any(), t.any())
        assert_close(gputorch.count_nonzero(g, 0), torch.count_nonzero(t, 0))
    g = gputorch.tensor(ints, device=device)
    t = torch.tensor(ints)
    assert_close(g.sum(dtype=gputorch.float32), t.sum(dtype=torch.float32))
    assert_close(g.mean(dtype=gputorch.float64), t.mean(dtype=torch.float64))
    assert_close(g.prod(1, dtype=gputorch.float64), t.prod(1, dtype=torch.float64))
    assert_close(gputorch.logsumexp(g, 1), torch.logsumexp(t, 1), rtol=1e-6)
    u = np.array([[0, 200, 100], [1, 2, 3]], dtype=np.uint8)
    assert_close(gputorch.tensor(u, device=device).sum(1, dtype=gputorch.uint8),
                 torch.tensor(u).sum(1, dtype=torch.uint8))
    f = np.array([[-0.7, 1.9, -2.5], [0.2, 3.7, 1.1]])
    assert_close(gputorch.tensor(f, device=device).sum(1, dtype=gputorch.int32),
                 torch.tensor(f).sum(1, dtype=torch.int32))


def test_float16_and_float32(device):
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(2).uniform(-1, 1, (4, 64))
    for np_dtype, tol in ((np.float16, 2e-3), (np.float32, 1e-5)):
        g = gputorch.tensor(data.astype(np_dtype), device=device)
        t = torch.tensor(data.astype(np_dtype))
        for fn in (lambda m, x: x.sum(1), lambda m, x: x.mean(), lambda m, x: x.var(1),
                   lambda m, x: x.std(), lambda m, x: m.logsumexp(x, 1), lambda m, x: x.norm(dim=1),
                   lambda m, x: x.prod(0), lambda m, x: x.nansum()):
            assert_close(fn(gputorch, g), fn(torch, t), rtol=tol, atol=tol)


def test_all_any_count_nonzero(device):
    torch = pytest.importorskip("torch")
    data = np.array([[0.0, 1.5, float("nan")], [0.0, 0.0, 0.0], [2.0, -1.0, 3.0]])
    g, t = gputorch.tensor(data, device=device), torch.tensor(data)
    for fn in (lambda m, x: x.all(), lambda m, x: x.any(), lambda m, x: m.all(x, 1),
               lambda m, x: x.any(0, keepdim=True), lambda m, x: x.all((0, 1)), lambda m, x: x.any(keepdim=True),
               lambda m, x: m.count_nonzero(x), lambda m, x: m.count_nonzero(x, 1),
               lambda m, x: m.count_nonzero(x, (0, 1))):
        assert_close(fn(gputorch, g), fn(torch, t))
    u = gputorch.tensor(np.array([[0, 3], [1, 2]], dtype=np.uint8), device=device)
    assert u.all(1).dtype is gputorch.uint8
    assert u.any().dtype is gputorch.uint8
    empty = gputorch.zeros(0, 3, device=device)
    assert bool(empty.all()) and not bool(empty.any())
    assert empty.all(1).shape == (0,)


# ---------------------------------------------------------------------------- special values
def test_nan_handling(device):
    nan = float("nan")
    data = np.array([[nan, 1.0, 2.0, -1.0], [3.0, nan, nan, 0.5], [nan, nan, nan, nan]])
    parity(lambda m, x: m.nansum(x, 1), data, device=device)
    parity(lambda m, x: m.nanmean(x, 1, keepdim=True), data[:2], device=device)
    parity(lambda m, x: x.nanmean(), data, device=device)
    parity(lambda m, x: x.nansum(), data, device=device)
    parity(lambda m, x: m.nanmean(x, 1), data, device=device, grad=False)
    parity(lambda m, x: x.sum(1), data, device=device, grad=False)


def test_prod_with_zeros(device):
    # One zero, two zeros, and no zero in a slice: gradients and second derivatives are exact.
    data = np.array([[0.0, 2.0, 3.0, 0.5], [0.0, 1.5, 0.0, 1.2], [1.1, 2.0, -0.5, 0.8]])
    for fn in (lambda m, x: x.prod(1), lambda m, x: x.prod(), lambda m, x: m.prod(x, 0, keepdim=True),
               lambda m, x: x[1:].prod(), lambda m, x: x[:1].prod()):
        parity(fn, data, device=device)
        x = gputorch.tensor(data, device=device, requires_grad=True)
        f = lambda t: fn(gputorch, t)  # noqa: E731
        assert gradcheck(f, (x,))
        assert gradgradcheck(f, (x,))


def test_logsumexp_is_stable(device):
    torch = pytest.importorskip("torch")
    data = np.array([[1000.0, 1000.0, -1000.0], [-1e4, -1e4 + 1, -1e4], [-np.inf, 0.0, 1.0]])
    parity(lambda m, x: m.logsumexp(x, 1), data[:2], device=device)
    g = gputorch.logsumexp(gputorch.tensor(data, device=device), 1)
    assert_close(g, torch.logsumexp(torch.tensor(data), 1))
    inf = gputorch.tensor([[-np.inf, -np.inf], [np.inf, 1.0]], device=device)
    assert_close(gputorch.logsumexp(inf, 1), np.array([-np.inf, np.inf], dtype=np.float32))
    assert_close(gputorch.logsumexp(gputorch.zeros(0, 3, device=device), 0),
                 np.full(3, -np.inf, dtype=np.float32))


def test_norm_gradient_at_zero_and_ties(device):
    data = np.array([[0.0, 0.0, 0.0], [3.0, -3.0, 1.0], [0.0, 2.0, -1.0]])
    for fn in (lambda m, x: x.norm(dim=1), lambda m, x: x.norm(1, dim=1), lambda m, x: x.norm(3, dim=1),
               lambda m, x: x.norm(0.5, dim=1), lambda m, x: x.norm(float("inf"), dim=1),
               lambda m, x: x.norm(float("-inf"), dim=1), lambda m, x: x.norm(0, dim=1),
               lambda m, x: x.norm(-1, dim=1)):
        parity(fn, data, device=device)


def test_std_of_constant_has_zero_gradient(device):
    x = gputorch.ones(2, 3, device=device, dtype=gputorch.float64, requires_grad=True)
    x.std(1).sum().backward()
    assert_close(x.grad, np.zeros((2, 3)))


def test_var_degrees_of_freedom(device):
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(3).uniform(-1, 1, (2, 3))
    g, t = gputorch.tensor(data, device=device), torch.tensor(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (lambda m, x: x.var(1, correction=3), lambda m, x: x.var(1, correction=4),
                   lambda m, x: x.var(1, correction=0.5), lambda m, x: x[:, :1].var(1),
                   lambda m, x: x.std(1, unbiased=True, keepdim=True), lambda m, x: x.var(unbiased=False)):
            assert_close(fn(gputorch, g), fn(torch, t))
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        g.var(1, correction=3)


# ---------------------------------------------------------------------------- shapes and edge cases
def test_empty_tensors(device):
    torch = pytest.importorskip("torch")
    e = np.zeros((0, 3))
    g, t = gputorch.tensor(e, device=device), torch.tensor(e)
    for fn in (lambda m, x: x.sum(), lambda m, x: x.sum(0), lambda m, x: x.sum(1), lambda m, x: x.mean(),
               lambda m, x: x.mean(0), lambda m, x: x.mean(1), lambda m, x: x.prod(), lambda m, x: x.prod(0),
               lambda m, x: x.nansum(0), lambda m, x: x.norm(), lambda m, x: x.norm(dim=0),
               lambda m, x: m.logsumexp(x, 1), lambda m, x: x.norm(float("inf"), dim=1)):
        assert_close(fn(gputorch, g), fn(torch, t))
    x = gputorch.zeros(0, 3, device=device, dtype=gputorch.float64, requires_grad=True)
    x.sum().backward()
    assert x.grad.shape == (0, 3)


def test_zero_dim_tensors(device):
    torch = pytest.importorskip("torch")
    for fn in (lambda m, x: x.sum(), lambda m, x: x.sum(0), lambda m, x: x.sum(-1, keepdim=True),
               lambda m, x: x.mean(0), lambda m, x: x.prod(0), lambda m, x: x.prod(), lambda m, x: x.norm(),
               lambda m, x: m.logsumexp(x, 0), lambda m, x: x.nansum(0), lambda m, x: x.std(0),
               lambda m, x: x.var()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parity(fn, np.array(2.5), device=device)


def test_non_contiguous_inputs(device):
    data = np.random.default_rng(4).uniform(-2, 2, (4, 6, 5))
    for fn in (lambda m, x: x.transpose(0, 2).sum(1), lambda m, x: x[:, ::2].mean((0, 1)),
               lambda m, x: x.transpose(1, 2)[1:, ::-1 if False else 1].prod(2),
               lambda m, x: x.transpose(0, 1).var(0), lambda m, x: m.logsumexp(x.transpose(0, 2), 0),
               lambda m, x: x[..., ::3].norm(dim=2)):
        parity(fn, data, device=device)


def test_large_sum_accuracy(device):
    data = np.random.default_rng(5).uniform(0, 1, 100_000).astype(np.float32)
    got = gputorch.tensor(data, device=device).sum().item()
    assert abs(got - data.astype(np.float64).sum()) < 1e-2


# ---------------------------------------------------------------------------- errors
def test_bad_dims(device):
    x = gputorch.zeros(2, 3, device=device)
    with pytest.raises(IndexError, match=r"out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        x.sum(2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.mean((0, -3))
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1"):
        gputorch.tensor(1.0, device=device).sum(1)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        x.sum((0, 0))
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times in the list of dims"):
        x.var((1, -1))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        gputorch.tensor(1.0, device=device).sum((0, -1))
    with pytest.raises(TypeError):
        x.sum("a")
    with pytest.raises(TypeError):
        x.prod((0, 1))


def test_dtype_errors(device):
    i = gputorch.tensor([[1, 2], [3, 4]], device=device)
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype. Input dtype must be either "
                                           "a floating point or complex dtype. Got: Long"):
        i.mean()
    with pytest.raises(RuntimeError, match="Optional dtype must be either a floating point or complex dtype. "
                                           "Got: Int"):
        gputorch.ones(2, device=device).mean(dtype=gputorch.int32)
    with pytest.raises(RuntimeError, match="Got: Bool"):
        gputorch.tensor([True, False], device=device).mean(0)
    with pytest.raises(RuntimeError, match="nanmean\\(\\): expected input to have floating point"):
        i.nanmean()
    with pytest.raises(RuntimeError, match="std and var only support floating point and complex dtypes"):
        i.var()
    with pytest.raises(RuntimeError, match="std_mean only support floating point"):
        gputorch.std_mean(i, dim=5)   # the dtype is checked before the dim, and named as PyTorch names it
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or complex tensor as "
                                           "input. Got Long"):
        i.norm()
    with pytest.raises(RuntimeError, match="should be convertible without narrowing"):
        gputorch.vector_norm(gputorch.ones(2, dtype=gputorch.float64, device=device), dtype=gputorch.float32)
    with pytest.raises(RuntimeError, match="dtype should be floating point"):
        gputorch.vector_norm(gputorch.ones(2, device=device), dtype=gputorch.int64)
    with pytest.raises(TypeError, match="must be Number, not str"):
        gputorch.vector_norm(gputorch.ones(2, device=device), "fro")
    with pytest.raises(RuntimeError, match="cannot compute the inf norm on an empty tensor"):
        gputorch.zeros(0, device=device).norm(float("inf"))
    with pytest.raises(RuntimeError, match="cannot compute the -inf norm on the dimension 0"):
        gputorch.zeros(0, 2, device=device).norm(float("-inf"), dim=0)
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple"):
        gputorch.ones(2, 2, 2, device=device).norm("fro", dim=(0, 1, 2))
    with pytest.raises(TypeError, match="unbiased"):
        gputorch.ones(2, 3, device=device).var(1, unbiased=True, correction=0)


def test_float_reductions_of_float_inputs_keep_dtype(device):
    x = gputorch.ones(2, 3, device=device, dtype=gputorch.float64)
    for r in (x.sum(), x.mean(0), x.var(1), x.std(), x.prod(1), x.logsumexp(0), x.norm(), x.nansum()):
        assert r.dtype is gputorch.float64
    assert gputorch.vector_norm(gputorch.ones(3, device=device), dtype=gputorch.float64).dtype is gputorch.float64
    assert math.isclose(gputorch.vector_norm(gputorch.ones(4, device=device)).item(), 2.0)


def test_double_backward_through_mean_and_sum(device):
    x = rand(3, 4, device=device)
    y = (x * x).sum(1).mean()
    (g,) = gputorch.autograd.grad(y, x, create_graph=True)
    assert_close(g, 2 * x.detach() / 3)
    (gg,) = gputorch.autograd.grad(g.sum(), x)
    assert_close(gg, np.full((3, 4), 2 / 3))


def test_out_argument(device):
    x = gputorch.tensor([[1.0, 5.0, 2.0], [4.0, 3.0, 6.0]], device=device)
    out = gputorch.empty(0, device=device)
    assert gputorch.sum(x, 1, out=out) is out
    assert_close(out, np.array([8.0, 13.0], dtype=np.float32))
    out = gputorch.empty(0, device=device)
    assert gputorch.std(x, 0, out=out) is out and out.shape == (3,)
    assert gputorch.cumsum(x, 1, out=gputorch.empty(0, device=device)).tolist() == [[1, 6, 8], [4, 7, 13]]
    values, indices = gputorch.empty(0, device=device), gputorch.empty(0, dtype=gputorch.int64, device=device)
    r = gputorch.max(x, 1, out=(values, indices))
    assert r.values is values and r.indices is indices and type(r).__name__ == "max"
    assert indices.tolist() == [1, 2] and values.tolist() == [5.0, 6.0]
    s = gputorch.empty(0, device=device)
    i = gputorch.empty(0, dtype=gputorch.int64, device=device)
    assert gputorch.sort(x, 1, descending=True, out=(s, i)).values is s
    assert s.tolist() == [[5.0, 2.0, 1.0], [6.0, 4.0, 3.0]]
    with pytest.raises(RuntimeError, match="out= tensor has shape"):
        gputorch.sum(x, 0, out=gputorch.empty(2, device=device))
