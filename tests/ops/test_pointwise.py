"""Elementwise math: values and dtypes against torch/NumPy/math, gradients (gradcheck,
gradgradcheck, torch parity), in-place and out= forms, edge cases and errors."""
import math

import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.ops import special_math
from tests._helpers import assert_close, flushes_float32_denormals, to_numpy


def rand(*shape, device="cpu", lo=-2.0, hi=2.0, requires_grad=True, seed=0, dtype=gputorch.float64):
    data = np.random.default_rng(seed).uniform(lo, hi, shape)
    return gputorch.tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


# name -> (low, high) of a domain away from singularities and kinks
UNARY = {
    "exp": (-2, 2), "exp2": (-2, 2), "expm1": (-2, 2), "log": (0.2, 3), "log2": (0.2, 3),
    "log10": (0.2, 3), "log1p": (-0.5, 3), "sqrt": (0.2, 3), "rsqrt": (0.2, 3),
    "sin": (-3, 3), "cos": (-3, 3), "tan": (-1.2, 1.2), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9),
    "atan": (-3, 3), "sinh": (-2, 2), "cosh": (-2, 2), "tanh": (-2, 2), "sigmoid": (-4, 4),
    "relu": (0.1, 2), "erf": (-2.5, 2.5), "erfc": (-2.5, 2.5), "erfinv": (-0.9, 0.9),
    "frac": (0.1, 0.9), "arcsin": (-0.9, 0.9), "arccos": (-0.9, 0.9), "arctan": (-3, 3),
}
ZERO_GRAD = ["sign", "sgn", "floor", "ceil", "round", "trunc", "fix"]


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_gradcheck(name, device):
    lo, hi = UNARY[name]
    x = rand(2, 3, device=device, lo=lo, hi=hi)
    fn = getattr(gputorch, name)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_relu_gradcheck_both_sides(device):
    x = gputorch.tensor([-1.5, -0.3, 0.4, 2.0], dtype=gputorch.float64, device=device, requires_grad=True)
    assert gradcheck(gputorch.relu, (x,))
    assert gradgradcheck(gputorch.relu, (x,))


@pytest.mark.parametrize("name", sorted(UNARY) + ZERO_GRAD)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_parity_with_torch(name, dtype, device):
    torch = pytest.importorskip("torch")
    lo, hi = UNARY.get(name, (-3, 3))
    rng = np.random.default_rng(1)
    data = rng.uniform(lo, hi, (3, 4)).astype(dtype)
    weights = rng.standard_normal((3, 4)).astype(dtype)
    x = gputorch.tensor(data, device=device, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    out = getattr(gputorch, name)(x)
    expected = getattr(torch, name)(tx)
    tol = 1e-12 if dtype == "float64" else 2e-6
    assert_close(out, expected, rtol=tol, atol=tol)
    (out * gputorch.tensor(weights, device=device)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    assert_close(x.grad, tx.grad.numpy(force=True), rtol=tol, atol=tol)   # (torch: a ZeroTensor for sgn)
    assert out.grad_fn.name() == expected.grad_fn.name()


@pytest.mark.parametrize("name", sorted(set(UNARY) - {"relu", "frac"}))
def test_integer_and_bool_inputs_give_default_float(name, device):
    torch = pytest.importorskip("torch")
    for values in ([0, 1, 2, -1], [True, False, True, True]):
        out = getattr(gputorch, name)(gputorch.tensor(values, device=device))
        expected = getattr(torch, name)(torch.tensor(values))
        assert_close(out, expected, rtol=1e-6, atol=1e-6)   # NaN/inf positions agree too
    gputorch.set_default_dtype(gputorch.float64)
    try:
        assert getattr(gputorch, name)(gputorch.tensor([1], device=device)).dtype is gputorch.float64
    finally:
        gputorch.set_default_dtype(gputorch.float32)


def test_rounding_sign_on_integers_keep_dtype(device):
    torch = pytest.importorskip("torch")
    for name in ["sign", "sgn", "floor", "ceil", "round", "trunc", "relu"]:
        for dtype in ["int64", "int32", "uint8"]:
            data = np.array([3, 0, 7, 1], dtype=dtype)
            out = getattr(gputorch, name)(gputorch.tensor(data, device=device))
            assert_close(out, getattr(torch, name)(torch.tensor(data)))
    assert_close(gputorch.sign(gputorch.tensor([True, False], device=device)),
                 torch.sign(torch.tensor([True, False])))


def test_float16_keeps_dtype(device):
    x = gputorch.tensor([0.5, -1.0, 2.0], dtype=gputorch.float16, device=device)
    for name in ["exp", "log1p", "sqrt", "sigmoid", "tanh", "erf", "erfc", "erfinv", "floor", "relu"]:
        arg = x.abs() * 0.4 if name == "erfinv" else x
        out = getattr(gputorch, name)(arg)
        assert out.dtype is gputorch.float16
    assert_close(gputorch.erf(x), np.array([math.erf(v) for v in (0.5, -1.0, 2.0)]), rtol=1e-3, atol=1e-3,
                 check_dtype=False)


def test_special_values_match_torch(device):
    torch = pytest.importorskip("torch")
    values = [0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"), 1e-30, -1e30, 30.0]
    for name in ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
                 "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "relu", "erf", "erfc",
                 "erfinv", "sign", "sgn", "floor", "ceil", "round", "trunc", "frac"]:
        for dtype in ["float64", "float32"]:
            out = getattr(gputorch, name)(gputorch.tensor(values, dtype=getattr(gputorch, dtype), device=device))
            expected = getattr(torch, name)(torch.tensor(values, dtype=getattr(torch, dtype)))
            np.testing.assert_allclose(to_numpy(out), expected.numpy(), rtol=1e-6, atol=0,
                                       err_msg=f"{name} {dtype}")


def test_sign_of_nan_is_zero_and_keeps_zero_sign(device):
    out = gputorch.sign(gputorch.tensor([float("nan"), -3.0, 0.0, 2.5], device=device))
    assert to_numpy(out).tolist() == [0.0, -1.0, 0.0, 1.0]


def test_rounding_ops_have_zero_gradient(device):
    x = gputorch.tensor([0.3, 1.5, -2.7], dtype=gputorch.float64, device=device, requires_grad=True)
    for name in ZERO_GRAD:
        out = getattr(gputorch, name)(x)
        (g,) = gputorch.autograd.grad(out.sum(), x)
        assert to_numpy(g).tolist() == [0.0, 0.0, 0.0]
    (g,) = gputorch.autograd.grad(gputorch.frac(x).sum(), x)
    assert to_numpy(g).tolist() == [1.0, 1.0, 1.0]


def test_round_decimals(device):
    torch = pytest.importorskip("torch")
    data = [0.5, 1.5, 2.5, -0.5, 1.2345, 2.675, 1234.5, -0.125]
    for dtype in ["float32", "float64"]:
        for decimals in [0, 1, 2, 3, -1, -2]:
            out = gputorch.round(gputorch.tensor(data, dtype=getattr(gputorch, dtype), device=device),
                                 decimals=decimals)
            expected = torch.round(torch.tensor(data, dtype=getattr(torch, dtype)), decimals=decimals)
            assert_close(out, expected, rtol=0, atol=0)
    x = rand(3, device=device)
    assert gputorch.round(x, decimals=2).grad_fn.name() == "RoundBackward1"
    assert gputorch.round(x).grad_fn.name() == "RoundBackward0"
    with pytest.raises(NotImplementedError, match="round"):
        gputorch.round(gputorch.tensor([1, 2], device=device), decimals=1)


# ---------------------------------------------------------------- error functions
def test_erf_erfc_float64_accuracy_against_math(device):
    rng = np.random.default_rng(5)
    x = np.concatenate([np.linspace(-7, 7, 20001), rng.standard_normal(5000) * 3,
                        10.0 ** rng.uniform(-300, 0.5, 2000), -(10.0 ** rng.uniform(-300, 0.5, 2000)),
                        [0.0, 1.0, -1.0, 0.9999999999999999, 6.0]])
    out = to_numpy(gputorch.erf(gputorch.tensor(x, device=device)))
    ref = np.array([math.erf(v) for v in x])
    assert np.all(np.abs(out - ref) <= 1e-15 * np.abs(ref))
    xc = np.concatenate([np.linspace(-7, 27.2, 30001), 10.0 ** rng.uniform(-300, 0, 1000)])
    out = to_numpy(gputorch.erfc(gputorch.tensor(xc, device=device)))
    ref = np.array([math.erfc(v) for v in xc])
    normal = ref > 1e-300
    assert np.all(np.abs(out - ref)[normal] <= 2e-15 * ref[normal])   # relative, deep into the tail
    assert np.all(np.abs(out - ref)[~normal] <= 1e-300)


def test_erf_float32_accuracy_and_saturation(device):
    x = np.concatenate([np.linspace(-5, 5, 20001), 10.0 ** np.linspace(-37, 0, 500)]).astype(np.float32)
    out = to_numpy(gputorch.erf(gputorch.tensor(x, device=device)))
    assert out.dtype == np.float32
    ref = np.array([math.erf(float(v)) for v in x])
    assert np.all(np.abs(out - ref) <= 4e-7 * np.abs(ref))
    big = gputorch.tensor([4.2, 10.0, float("inf"), -float("inf"), -9.0], device=device)
    assert to_numpy(gputorch.erf(big)).tolist() == [1.0, 1.0, 1.0, -1.0, -1.0]


def test_erfinv_accuracy(device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    x = np.concatenate([np.linspace(-1, 1, 4001)[1:-1], 1 - 10.0 ** rng.uniform(-16, -1, 500),
                        10.0 ** rng.uniform(-300, -1, 500), [np.nextafter(1.0, 0.0), -np.nextafter(1.0, 0.0)]])
    out = to_numpy(gputorch.erfinv(gputorch.tensor(x, device=device)))
    # erf(erfinv(x)) == x, written through erfc near 1 so the check is sharp there
    back = np.array([math.erf(v) if abs(v) < 1 else math.copysign(1 - math.erfc(abs(v)), v) for v in out])
    assert np.all(np.abs(back - x) <= 4e-16 * np.maximum(np.abs(x), 1e-300) + 1e-300)
    expected = torch.erfinv(torch.tensor(x)).numpy()
    np.testing.assert_allclose(out, expected, rtol=2e-15, atol=0)
    x32 = x.astype(np.float32)
    tiny = np.finfo(np.float32).tiny if flushes_float32_denormals(device) else 0
    np.testing.assert_allclose(to_numpy(gputorch.erfinv(gputorch.tensor(x32, device=device))),
                               torch.erfinv(torch.tensor(x32)).numpy(), rtol=3e-7, atol=tiny)
    special = to_numpy(gputorch.erfinv(gputorch.tensor([1.0, -1.0, 1.5, -2.0, float("nan"), 0.0], device=device)))
    assert special[0] == np.inf and special[1] == -np.inf and np.isnan(special[2:5]).all()


def test_erf_family_on_large_arrays_match_torch(device):
    torch = pytest.importorskip("torch")
    data = (np.random.default_rng(7).standard_normal(200_000) * 2).astype(np.float32)
    for name in ["erf", "erfc"]:
        out = getattr(gputorch, name)(gputorch.tensor(data, device=device))
        np.testing.assert_allclose(to_numpy(out), getattr(torch, name)(torch.tensor(data)).numpy(),
                                   rtol=5e-7 if name == "erf" else 2e-6, atol=1e-7)
    inv = np.clip(data / 7, -0.999, 0.999)
    out = gputorch.erfinv(gputorch.tensor(inv, device=device))
    np.testing.assert_allclose(to_numpy(out), torch.erfinv(torch.tensor(inv)).numpy(), rtol=3e-7, atol=1e-7)


def test_special_math_module_on_numpy_arrays():
    x = np.array([[0.1, -0.7], [1.3, 2.0]])
    assert special_math.erf(x).shape == (2, 2)
    assert special_math.erfc(x.T).shape == (2, 2)          # non-contiguous input
    assert special_math.erf(np.zeros((0, 3))).shape == (0, 3)
    assert special_math.erfinv(np.array(0.5)).shape == ()
    np.testing.assert_allclose(special_math.erf(x), np.vectorize(math.erf)(x), rtol=1e-15)


# ---------------------------------------------------------------- edge cases
def test_empty_zero_dim_and_non_contiguous(device):
    torch = pytest.importorskip("torch")
    empty = gputorch.zeros(0, 3, device=device)
    for name in ["exp", "erf", "sigmoid", "clamp_min"]:
        args = (empty, 0.0) if name == "clamp_min" else (empty,)
        assert getattr(gputorch, name)(*args).shape == (0, 3)
    scalar = gputorch.tensor(0.5, dtype=gputorch.float64, device=device, requires_grad=True)
    out = gputorch.erfinv(scalar)
    assert out.shape == () and abs(out.item() - torch.erfinv(torch.tensor(0.5, dtype=torch.float64)).item()) < 1e-15
    out.backward()
    assert abs(scalar.grad.item() - math.sqrt(math.pi) / 2 * math.exp(out.item() ** 2)) < 1e-12
    data = np.random.default_rng(2).uniform(0.1, 2, (3, 4))
    nc = gputorch.tensor(data, device=device).t()
    for name in ["sqrt", "erf", "erfc", "log", "tanh"]:
        assert_close(getattr(gputorch, name)(nc), getattr(torch, name)(torch.tensor(data).t()), rtol=1e-14,
                     atol=1e-15)


def test_methods_inplace_and_out(device):
    x = gputorch.tensor([0.25, 0.5, 1.0], device=device)
    for name in ["exp", "sqrt", "sigmoid", "erf", "floor", "tanh", "relu", "log"]:
        expected = to_numpy(getattr(gputorch, name)(x))
        assert_close(getattr(x, name)(), expected)
        y = x.clone()
        v = y._version
        r = getattr(y, name + "_")()
        assert r is y and y._version == v + 1
        assert_close(y, expected)
        out = gputorch.empty(3, device=device)
        assert getattr(gputorch, name)(x, **({} if name == "relu" else {"out": out})) is not None
    out = gputorch.empty(3, device=device)
    assert gputorch.exp(x, out=out) is out
    assert_close(out, np.exp(to_numpy(x)))
    i = gputorch.tensor([1, 2], device=device)
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.exp_()


def test_inplace_ops_on_graph(device):
    torch = pytest.importorskip("torch")
    for name in ["exp_", "sigmoid_", "tanh_", "sqrt_", "relu_", "erfinv_", "clamp_", "sin_"]:
        data = np.array([0.1, 0.4, 0.7])
        w = gputorch.tensor(data, device=device, requires_grad=True)
        tw = torch.tensor(data, requires_grad=True)
        args = (0.2, 0.5) if name == "clamp_" else ()
        y = getattr(w * 1.0, name)(*args)
        ty = getattr(tw * 1.0, name)(*args)
        (y * y).sum().backward()
        (ty * ty).sum().backward()
        assert_close(w.grad, tw.grad, rtol=1e-12, atol=1e-12)
        assert y.grad_fn.name() == ty.grad_fn.name()


def test_sigmoid_is_stable(device):
    out = gputorch.sigmoid(gputorch.tensor([-1000.0, 1000.0, 0.0, -30.0], dtype=gputorch.float64, device=device))
    assert to_numpy(out).tolist()[:3] == [0.0, 1.0, 0.5]
    assert abs(to_numpy(out)[3] - math.exp(-30) / (1 + math.exp(-30))) < 1e-28


# ---------------------------------------------------------------- clamp
def test_clamp_scalar_bounds(device):
    torch = pytest.importorskip("torch")
    data = [-1.0, 0.0, 0.5, 1.0, 2.0, float("nan")]
    for lo, hi in [(0.0, 1.0), (0.0, None), (None, 1.0), (3.0, 1.0), (float("nan"), 1.0)]:
        x = gputorch.tensor(data, dtype=gputorch.float64, device=device, requires_grad=True)
        tx = torch.tensor(data, dtype=torch.float64, requires_grad=True)
        out, expected = gputorch.clamp(x, lo, hi), torch.clamp(tx, lo, hi)
        assert_close(out, expected)
        assert out.grad_fn.name() == expected.grad_fn.name()
        out.sum().backward()
        expected.sum().backward()
        assert_close(x.grad, tx.grad)                          # gradient passes on the boundaries
    assert_close(gputorch.tensor([1, 5, -3], device=device).clamp(0.5), torch.tensor([1, 5, -3]).clamp(0.5))
    assert gputorch.tensor([1, 5], device=device).clamp(0, 2).dtype is gputorch.int64
    assert gputorch.clip is gputorch.clamp


def test_clamp_tensor_bounds_gradients(device):
    torch = pytest.importorskip("torch")
    a = [0.0, 0.5, 1.0, 2.0, -1.0, 0.0, 1.5]
    lo = [0.0, 0.6, 1.0, 2.0, -1.0, 2.0, 2.0]
    hi = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]      # includes min > max and ties on both bounds
    for use_lo, use_hi in [(True, True), (True, False), (False, True)]:
        g = [gputorch.tensor(v, dtype=gputorch.float64, device=device, requires_grad=True) for v in (a, lo, hi)]
        t = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (a, lo, hi)]
        out = gputorch.clamp(g[0], g[1] if use_lo else None, g[2] if use_hi else None)
        expected = torch.clamp(t[0], t[1] if use_lo else None, t[2] if use_hi else None)
        assert_close(out, expected)
        assert out.grad_fn.name() == "ClampBackward0"
        out.sum().backward()
        expected.sum().backward()
        for x, tx in zip(g, t):
            if tx.grad is not None:
                assert_close(x.grad, tx.grad)


def test_clamp_min_max_and_broadcasting(device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x, b = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4,))
    for name in ["clamp_min", "clamp_max"]:
        for bound_is_tensor in (True, False):
            gx = gputorch.tensor(x, device=device, requires_grad=True)
            tx = torch.tensor(x, requires_grad=True)
            gb = gputorch.tensor(b, device=device, requires_grad=True) if bound_is_tensor else 0.1
            tb = torch.tensor(b, requires_grad=True) if bound_is_tensor else 0.1
            out, expected = getattr(gputorch, name)(gx, gb), getattr(torch, name)(tx, tb)
            assert_close(out, expected)
            assert out.grad_fn.name() == expected.grad_fn.name()
            out.sum().backward()
            expected.sum().backward()
            assert_close(gx.grad, tx.grad)
            if bound_is_tensor:
                assert_close(gb.grad, tb.grad)
    lo = gputorch.tensor([[0.0], [0.5]], device=device)
    assert gputorch.clamp(gputorch.tensor([0.2, 0.9], device=device), lo).shape == (2, 2)


def test_clamp_gradcheck(device):
    x = rand(2, 3, device=device)
    lo = rand(3, device=device, lo=-1.5, hi=-0.5, seed=1)
    hi = rand(2, 1, device=device, lo=0.5, hi=1.5, seed=2)
    for fn in [lambda x, lo, hi: gputorch.clamp(x, lo, hi), lambda x, lo, hi: gputorch.clamp(x, -0.7, 0.9),
               lambda x, lo, hi: x.clamp_min(lo), lambda x, lo, hi: x.clamp_max(hi)]:
        assert gradcheck(fn, (x, lo, hi))
        assert gradgradcheck(fn, (x, lo, hi))


def test_clamp_errors(device):
    x = gputorch.ones(3, device=device)
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        gputorch.clamp(x)
    with pytest.raises(TypeError, match="min"):
        gputorch.clamp(x, gputorch.zeros(3, device=device), 1.0)
    with pytest.raises(TypeError, match="must be Tensor or Number"):
        gputorch.clamp(x, "a")
    with pytest.raises(RuntimeError, match="must match the size"):
        gputorch.clamp(x, gputorch.zeros(2, device=device))


# ---------------------------------------------------------------- binary functions
BINARY = {
    "maximum": (-2, 2), "minimum": (-2, 2), "fmax": (-2, 2), "fmin": (-2, 2), "atan2": (0.3, 2),
    "hypot": (0.3, 2), "logaddexp": (-2, 2), "logaddexp2": (-2, 2), "xlogy": (0.3, 2),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_gradcheck_with_broadcasting(name, device):
    lo, hi = BINARY[name]
    a = rand(2, 3, device=device, lo=lo, hi=hi)
    b = rand(3, device=device, lo=lo, hi=hi, seed=1)
    fn = getattr(gputorch, name)
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


@pytest.mark.parametrize("name", sorted(BINARY) + ["arctan2"])
def test_binary_parity_with_torch(name, device):
    torch = pytest.importorskip("torch")
    lo, hi = BINARY.get(name, (0.3, 2))
    rng = np.random.default_rng(3)
    x = rng.uniform(lo, hi, (4, 1, 3))
    y = rng.uniform(lo, hi, (5, 1))
    for dtype in ["float64", "float32"]:
        gx = gputorch.tensor(x.astype(dtype), device=device, requires_grad=True)
        gy = gputorch.tensor(y.astype(dtype), device=device, requires_grad=True)
        tx = torch.tensor(x.astype(dtype), requires_grad=True)
        ty = torch.tensor(y.astype(dtype), requires_grad=True)
        out, expected = getattr(gputorch, name)(gx, gy), getattr(torch, name)(tx, ty)
        tol = 1e-12 if dtype == "float64" else 2e-6
        assert_close(out, expected, rtol=tol, atol=tol)
        assert out.grad_fn.name() == expected.grad_fn.name()
        out.sum().backward()
        expected.sum().backward()
        assert_close(gx.grad, tx.grad, rtol=tol, atol=tol)
        assert_close(gy.grad, ty.grad, rtol=tol, atol=tol)


def test_extrema_ties_and_nan(device):
    torch = pytest.importorskip("torch")
    nan = float("nan")
    cases = [([1.0, 2.0, 3.0, 2.0], [1.0, 3.0, 2.0, 2.0]), ([1.0, nan, 3.0, nan], [nan, 3.0, 2.0, nan])]
    for name in ["maximum", "minimum", "fmax", "fmin"]:
        for a, b in cases:
            g = [gputorch.tensor(v, device=device, requires_grad=True) for v in (a, b)]
            t = [torch.tensor(v, requires_grad=True) for v in (a, b)]
            out, expected = getattr(gputorch, name)(*g), getattr(torch, name)(*t)
            assert_close(out, expected)
            out.sum().backward()
            expected.sum().backward()
            assert_close(g[0].grad, t[0].grad)     # maximum/minimum: half each on ties
            assert_close(g[1].grad, t[1].grad)


def test_binary_dtypes_and_errors(device):
    torch = pytest.importorskip("torch")
    i = gputorch.tensor([3, 4], device=device)
    f = gputorch.tensor([4.0, 3.0], device=device)
    assert_close(gputorch.atan2(i, i), torch.atan2(torch.tensor([3, 4]), torch.tensor([3, 4])))
    assert_close(gputorch.maximum(i, f), torch.maximum(torch.tensor([3, 4]), torch.tensor([4.0, 3.0])))
    assert gputorch.maximum(i, i).dtype is gputorch.int64
    assert_close(gputorch.hypot(i, f), torch.hypot(torch.tensor([3, 4]), torch.tensor([4.0, 3.0])))
    with pytest.raises(NotImplementedError, match="hypot"):
        gputorch.hypot(i, i)
    with pytest.raises(NotImplementedError, match="logaddexp"):
        gputorch.logaddexp(i, i)
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        gputorch.maximum(f, 1.5)
    with pytest.raises(TypeError, match="must be Tensor"):
        gputorch.atan2(f, 1.0)
    with pytest.raises(RuntimeError, match=r"size of tensor a \(2\) must match the size of tensor b \(3\)"):
        gputorch.maximum(f, gputorch.zeros(3, device=device))


def test_logaddexp_extremes(device):
    torch = pytest.importorskip("torch")
    inf, nan = float("inf"), float("nan")
    a, b = [inf, -inf, 1.0, 1000.0, -1000.0], [inf, -inf, nan, 1000.0, 0.0]
    assert_close(gputorch.logaddexp(gputorch.tensor(a, device=device), gputorch.tensor(b, device=device)),
                 torch.logaddexp(torch.tensor(a), torch.tensor(b)))


def test_xlogy(device):
    torch = pytest.importorskip("torch")
    nan = float("nan")
    x = [0.0, 0.0, 0.0, 1.0, 2.0]
    y = [0.0, -1.0, nan, 2.0, 3.0]
    g = [gputorch.tensor(v, dtype=gputorch.float64, device=device, requires_grad=True) for v in (x, y)]
    t = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (x, y)]
    out, expected = gputorch.xlogy(*g), torch.xlogy(*t)
    assert_close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_close(g[0].grad, t[0].grad)
    assert_close(g[1].grad, t[1].grad)
    # scalar operands, integer promotion
    assert_close(gputorch.xlogy(2, gputorch.tensor([4.0], device=device)), torch.xlogy(2, torch.tensor([4.0])))
    assert_close(gputorch.xlogy(gputorch.tensor([4.0, 0.0], device=device), 3),
                 torch.xlogy(torch.tensor([4.0, 0.0]), 3))
    assert_close(gputorch.xlogy(gputorch.tensor([3, 0], device=device), gputorch.tensor([4, 0], device=device)),
                 torch.xlogy(torch.tensor([3, 0]), torch.tensor([4, 0])))
    a = rand(3, device=device, lo=0.5, hi=2)
    assert gradcheck(lambda a: gputorch.xlogy(a, 2.5), (a,))
    assert gradgradcheck(lambda a: gputorch.xlogy(1.5, a), (a,))
    assert gputorch.xlogy(1.5, a).grad_fn.name() == "XlogyBackward1"
    assert gputorch.xlogy(a, 1.5).grad_fn.name() == "XlogyBackward2"


def test_lerp(device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    s, e, w = rng.standard_normal((2, 3)), rng.standard_normal((3,)), rng.uniform(-0.5, 1.5, (2, 1))
    for weight in [0.3, 0.75, 2, "tensor"]:
        g = [gputorch.tensor(v, device=device, requires_grad=True) for v in (s, e, w)]
        t = [torch.tensor(v, requires_grad=True) for v in (s, e, w)]
        gw, tw = (g[2], t[2]) if weight == "tensor" else (weight, weight)
        out, expected = gputorch.lerp(g[0], g[1], gw), torch.lerp(t[0], t[1], tw)
        assert_close(out, expected, rtol=1e-14, atol=1e-14)
        assert out.grad_fn.name() == expected.grad_fn.name()
        out.sum().backward()
        expected.sum().backward()
        for x, tx in zip(g, t):
            if tx.grad is not None:
                assert_close(x.grad, tx.grad, rtol=1e-14, atol=1e-14)
    ends = gputorch.lerp(gputorch.tensor([1.0, 2.0], device=device), gputorch.tensor([3.0, 5.0], device=device), 1.0)
    assert to_numpy(ends).tolist() == [3.0, 5.0]
    a, b, c = rand(2, 3, device=device), rand(3, device=device, seed=1), rand(2, 1, device=device, seed=2)
    assert gradcheck(gputorch.lerp, (a, b, c)) and gradgradcheck(gputorch.lerp, (a, b, c))
    assert gradcheck(lambda a, b: gputorch.lerp(a, b, 0.8), (a, b))
    with pytest.raises(RuntimeError, match="expected dtype"):
        gputorch.lerp(gputorch.ones(2, device=device), gputorch.ones(2, dtype=gputorch.float64, device=device), 0.5)
    with pytest.raises(NotImplementedError):
        gputorch.lerp(gputorch.tensor([1], device=device), gputorch.tensor([2], device=device), 0.5)
    with pytest.raises(TypeError):
        gputorch.lerp(gputorch.ones(2, device=device), 3.0, 0.5)


def test_nan_to_num(device):
    torch = pytest.importorskip("torch")
    nan, inf = float("nan"), float("inf")
    data = [nan, inf, -inf, 1.5]
    for dtype in ["float32", "float64", "float16"]:
        for kwargs in [{}, {"nan": 1.0, "posinf": 2.0}, {"neginf": -7.0}]:
            out = gputorch.nan_to_num(gputorch.tensor(data, dtype=getattr(gputorch, dtype), device=device), **kwargs)
            assert_close(out, torch.nan_to_num(torch.tensor(data, dtype=getattr(torch, dtype)), **kwargs))
    assert_close(gputorch.nan_to_num(gputorch.tensor([1, 2], device=device), nan=3.5),
                 torch.tensor([1, 2]))
    x = gputorch.tensor(data, device=device, requires_grad=True)
    gputorch.nan_to_num(x).sum().backward()
    assert to_numpy(x.grad).tolist() == [0.0, 0.0, 0.0, 1.0]
    y = gputorch.tensor(data, device=device)
    assert y.nan_to_num_() is y and to_numpy(y)[0] == 0.0


def test_bad_inputs(device):
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        gputorch.relu(gputorch.tensor([True], device=device))
    with pytest.raises(NotImplementedError, match="frac"):
        gputorch.frac(gputorch.tensor([1, 2], device=device))
    with pytest.raises(NotImplementedError, match="floor"):
        gputorch.floor(gputorch.tensor([True], device=device))


def test_inplace_binary_variants(device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    x, y = rng.uniform(0.5, 2, (2, 3)), rng.uniform(0.5, 2, (3,))
    cases = [("atan2_", (y,)), ("arctan2_", (y,)), ("hypot_", (y,)), ("xlogy_", (y,)), ("xlogy_", (2.0,)),
             ("lerp_", (y, 0.3)), ("lerp_", (y, y)), ("clamp_min_", (y,)), ("clamp_max_", (1.0,)),
             ("clamp_", (y, None)), ("clip_", (0.7, 1.2))]
    for name, args in cases:
        g = gputorch.tensor(x, device=device)
        t = torch.tensor(x)
        gargs = [gputorch.tensor(a, device=device) if isinstance(a, np.ndarray) else a for a in args]
        targs = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        assert getattr(g, name)(*gargs) is g
        getattr(t, name)(*targs)
        assert_close(g, t, rtol=1e-14, atol=1e-14)


def test_out_for_binary_and_clamp(device):
    a = gputorch.tensor([1.0, 4.0], device=device)
    b = gputorch.tensor([3.0, 2.0], device=device)
    for fn, expected in [(lambda out: gputorch.maximum(a, b, out=out), [3.0, 4.0]),
                         (lambda out: gputorch.clamp(a, 2.0, 3.0, out=out), [2.0, 3.0]),
                         (lambda out: gputorch.lerp(a, b, 0.5, out=out), [2.0, 3.0]),
                         (lambda out: gputorch.round(a / 3, decimals=1, out=out), [0.3, 1.3])]:
        out = gputorch.empty(2, device=device)
        assert fn(out) is out
        assert_close(out, np.array(expected, dtype=np.float32))


def test_acosh_gradient_at_minus_one_is_plus_inf(device):
    # 1 / sqrt(a*a - 1), PyTorch's formula: +inf at a = -1 as at a = 1 (the product (a-1)(a+1) is -0 there,
    # which gave -inf); NaN inside (-1, 1) (an issue-14 leftover).
    for dtype in (gputorch.float16, gputorch.float32, gputorch.float64):
        x = gputorch.tensor([-1.0, 1.0, -0.5, -2.0], dtype=dtype, device=device, requires_grad=True)
        x.acosh().sum().backward()
        g = x.grad.cpu().double().numpy()
        assert g[0] == np.inf and g[1] == np.inf and np.isnan(g[2])
        assert abs(g[3] - 1 / np.sqrt(3.0)) < 1e-3


def test_hypot_gradient_near_the_largest_float(device):
    """grad * (x / hypot): the ratio is 1 here; grad / hypot first fell into the subnormals (an error
    of half the value), grad * x first overflows (PyTorch gives inf)."""
    a = gputorch.tensor([-0.04, -0.52, -0.07], device=device, requires_grad=True)
    b = gputorch.tensor([3e38], device=device, requires_grad=True)
    w = gputorch.tensor([1.5, -0.25, 2.0], device=device)
    (gputorch.hypot(a, b) * w).sum().backward()
    np.testing.assert_allclose(b.grad.cpu().numpy(), [3.25], rtol=1e-6)
    assert np.isfinite(a.grad.cpu().numpy()).all()


def test_nextafter_gradient_is_zero_where_input_equals_other(device):
    """PyTorch passes the gradient to ``input`` except where ``input == other`` (the result is
    ``other`` there); ``other`` gets none."""
    a = gputorch.tensor([-0.0, -float("inf"), -1.15, 2.0], device=device, requires_grad=True)
    b = gputorch.tensor([0.0, -0.1, 0.0, 2.0], device=device, requires_grad=True)
    (a.nextafter(b) * gputorch.tensor([2.0, 3.0, 4.0, 5.0], device=device)).sum().backward()
    np.testing.assert_array_equal(a.grad.cpu().numpy(), [0.0, 3.0, 4.0, 0.0])
    np.testing.assert_array_equal(b.grad.cpu().numpy(), [0.0, 0.0, 0.0, 0.0])


def test_lerp_of_integers_reports_shapes_first_then_the_kernel(device):
    a = gputorch.zeros(3, dtype=gputorch.int64, device=device)
    with pytest.raises(RuntimeError, match="must match the size"):
        gputorch.lerp(a, gputorch.zeros(5, dtype=gputorch.int64, device=device), 3.25)
    with pytest.raises(NotImplementedError, match="lerp_kernel_scalar\" not implemented for 'Long'"):
        gputorch.lerp(a, a, 3.25)
    with pytest.raises(NotImplementedError, match="lerp_kernel_tensor\" not implemented for 'Long'"):
        gputorch.lerp(a, a, a)
