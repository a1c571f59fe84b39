"""Activations: F.* functions and nn modules against torch (values, grads, grad_fn names, in-place
forms), gradcheck/gradgradcheck, softmax-family numerics and dims, modules' reprs, errors."""
import math
import warnings

import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.nn import functional as F
from tests._helpers import assert_close, to_numpy

RTOL, ATOL = 1e-12, 1e-13


def _torch():
    return pytest.importorskip("torch")


def away_from(kinks, shape, lo=-4.0, hi=4.0, seed=0, gap=0.08):
    """Uniform samples in [lo, hi] at least ``gap`` away from every kink."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(lo, hi, shape)
    for _ in range(100):
        bad = np.zeros(shape, bool)
        for k in kinks:
            bad |= np.abs(x - k) < gap
        if not bad.any():
            break
        x[bad] = rng.uniform(lo, hi, int(bad.sum()))
    return x


# name -> (function name, kwargs, kinks, (lo, hi))
CASES = {
    "relu": ("relu", {}, [0], (-3, 3)),
    "relu6": ("relu6", {}, [0, 6], (-2, 8)),
    "hardtanh": ("hardtanh", {}, [-1, 1], (-3, 3)),
    "hardtanh_range": ("hardtanh", {"min_val": -0.5, "max_val": 2.0}, [-0.5, 2], (-3, 3)),
    "leaky_relu": ("leaky_relu", {}, [0], (-3, 3)),
    "leaky_relu_slope": ("leaky_relu", {"negative_slope": 0.2}, [0], (-3, 3)),
    "elu": ("elu", {}, [0], (-3, 3)),
    "elu_alpha": ("elu", {"alpha": 0.7}, [0], (-3, 3)),
    "selu": ("selu", {}, [0], (-3, 3)),
    "celu": ("celu", {"alpha": 1.5}, [0], (-3, 3)),
    "gelu": ("gelu", {}, [], (-4, 4)),
    "gelu_tanh": ("gelu", {"approximate": "tanh"}, [], (-4, 4)),
    "silu": ("silu", {}, [], (-5, 5)),
    "mish": ("mish", {}, [], (-5, 5)),
    "sigmoid": ("sigmoid", {}, [], (-5, 5)),
    "tanh": ("tanh", {}, [], (-3, 3)),
    "hardsigmoid": ("hardsigmoid", {}, [-3, 3], (-5, 5)),
    "hardswish": ("hardswish", {}, [-3, 3], (-5, 5)),
    "softplus": ("softplus", {}, [], (-5, 5)),
    "softplus_beta": ("softplus", {"beta": 2.0, "threshold": 3.0}, [1.5], (-3, 3)),
    "softsign": ("softsign", {}, [0], (-3, 3)),
    "logsigmoid": ("logsigmoid", {}, [], (-6, 6)),
    "softshrink": ("softshrink", {"lambd": 0.7}, [-0.7, 0.7], (-3, 3)),
    "hardshrink": ("hardshrink", {"lambd": 0.7}, [-0.7, 0.7], (-3, 3)),
    "tanhshrink": ("tanhshrink", {}, [], (-3, 3)),
    "threshold": ("threshold", {"threshold": 0.3, "value": -2.0}, [0.3], (-3, 3)),
    "glu": ("glu", {"dim": 1}, [], (-3, 3)),
    "softmax": ("softmax", {"dim": 1}, [], (-3, 3)),
    "softmin": ("softmin", {"dim": -1}, [], (-3, 3)),
    "log_softmax": ("log_softmax", {"dim": 0}, [], (-3, 3)),
}


def _call(lib_f, case, x):
    name, kwargs, _, _ = CASES[case]
    return getattr(lib_f, name)(x, **kwargs)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_parity_with_torch(case, dtype, device):
    torch = _torch()
    _, _, kinks, (lo, hi) = CASES[case]
    data = away_from(kinks, (3, 4, 5), lo, hi).astype(dtype)
    weights = np.random.randn(*((3, 2, 5) if case == "glu" else (3, 4, 5))).astype(dtype)
    x = gputorch.tensor(data, device=device, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    out, ref = _call(F, case, x), _call(torch.nn.functional, case, tx)
    tol = (RTOL, ATOL) if dtype == "float64" else (2e-6, 2e-6)
    assert_close(out, ref, *tol)
    (out * gputorch.tensor(weights, device=device)).sum().backward()
    (ref * torch.tensor(weights)).sum().backward()
    assert_close(x.grad, tx.grad, *tol)
    assert out.grad_fn.name() == ref.grad_fn.name()


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradcheck_and_gradgradcheck(case, device):
    _, _, kinks, (lo, hi) = CASES[case]
    x = gputorch.tensor(away_from(kinks, (2, 4), lo, hi, seed=3), dtype=gputorch.float64, device=device,
                        requires_grad=True)
    fn = lambda t: _call(F, case, t)  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_float16_is_computed_in_float32_and_rounded_once(device):
    torch = _torch()
    data = np.linspace(-4, 4, 41).astype(np.float16)
    for case in ("gelu", "gelu_tanh", "silu", "mish", "elu", "softplus", "softmax", "log_softmax"):
        name, kwargs, _, _ = CASES[case]
        kwargs = dict(kwargs, dim=0) if "dim" in kwargs else kwargs
        out = getattr(F, name)(gputorch.tensor(data, device=device), **kwargs)
        ref = getattr(torch.nn.functional, name)(torch.tensor(data).float(), **kwargs).half()
        assert out.dtype == gputorch.float16
        assert_close(out, ref, rtol=1e-3, atol=1e-3, check_dtype=False)


# ================================================================ in-place forms
INPLACE = {
    "relu": {}, "relu6": {}, "hardtanh": {"min_val": -0.5, "max_val": 0.8}, "leaky_relu": {"negative_slope": 0.1},
    "elu": {"alpha": 0.5}, "selu": {}, "celu": {"alpha": 2.0}, "silu": {}, "mish": {}, "hardsigmoid": {},
    "hardswish": {}, "threshold": {"threshold": 0.2, "value": 0.0},
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_matches_torch(name, device):
    torch = _torch()
    data = away_from([0, 0.2, -0.5, 0.8, -3, 3], (4, 5), -4, 4, seed=5)
    weights = np.random.randn(4, 5)
    x = gputorch.tensor(data, device=device, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    y = x * 1.0
    ty = tx * 1.0
    out = getattr(F, name)(y, inplace=True, **INPLACE[name])
    ref = getattr(torch.nn.functional, name)(ty, inplace=True, **INPLACE[name])
    assert out is y
    assert y._version == 1
    assert_close(out, ref, RTOL, ATOL)
    assert out.grad_fn.name() == ref.grad_fn.name()
    (out * gputorch.tensor(weights, device=device)).sum().backward()
    (ref * torch.tensor(weights)).sum().backward()
    assert_close(x.grad, tx.grad, RTOL, ATOL)


@pytest.mark.parametrize("name", ["relu_", "leaky_relu_", "elu_", "selu_", "celu_", "hardtanh_"])
def test_underscore_functions(name, device):
    torch = _torch()
    data = away_from([0, -1, 1], (3, 4), seed=2)
    x = gputorch.tensor(data, device=device)
    ref = getattr(torch.nn.functional, name)(torch.tensor(data))
    assert getattr(F, name)(x) is x
    assert_close(x, ref, RTOL, ATOL)
    t = torch.tensor(data)
    y = gputorch.tensor(data, device=device)
    assert_close(F.threshold_(y, 0.5, 7.0), torch.nn.functional.threshold_(t, 0.5, 7.0), RTOL, ATOL)


def test_inplace_on_leaf_requiring_grad_raises(device):
    x = gputorch.randn(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        F.elu(x, inplace=True)


# ================================================================ softmax family
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2])
def test_softmax_family_dims(name, dim, device):
    torch = _torch()
    data = np.random.randn(3, 4, 5) * 3
    weights = np.random.randn(3, 4, 5)
    x = gputorch.tensor(data, device=device, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    out = getattr(F, name)(x, dim=dim)
    ref = getattr(torch.nn.functional, name)(tx, dim=dim)
    assert_close(out, ref, RTOL, ATOL)
    (out * gputorch.tensor(weights, device=device)).sum().backward()
    (ref * torch.tensor(weights)).sum().backward()
    assert_close(x.grad, tx.grad, RTOL, ATOL)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_gradgradcheck_noncontiguous(name, device):
    x = gputorch.tensor(np.random.randn(4, 3), dtype=gputorch.float64, device=device).t().requires_grad_()
    fn = lambda t: getattr(F, name)(t, dim=1)  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_softmax_is_one_op_with_torch_names(device):
    x = gputorch.randn(2, 3, dtype=gputorch.float64, device=device, requires_grad=True)
    assert F.softmax(x, 1).grad_fn.name() == "SoftmaxBackward0"
    assert F.log_softmax(x, 1).grad_fn.name() == "LogSoftmaxBackward0"
    assert F.log_softmax(x, 1).grad_fn.next_functions[0][0].name() == "AccumulateGrad"


def test_log_softmax_is_stable_for_large_inputs(device):
    torch = _torch()
    data = np.array([[1000.0, 0.0, -1000.0], [-1e4, -1e4 + 1, -1e4 + 2], [50.0, 50.0, 50.0]])
    x = gputorch.tensor(data, device=device, requires_grad=True)
    out = F.log_softmax(x, dim=1)
    ref = torch.nn.functional.log_softmax(torch.tensor(data), dim=1)
    assert np.isfinite(to_numpy(out)).all()
    assert_close(out, ref, RTOL, ATOL)
    assert_close(F.softmax(x, 1), torch.nn.functional.softmax(torch.tensor(data), 1), RTOL, ATOL)
    out.sum().backward()
    assert np.isfinite(to_numpy(x.grad)).all()


def test_softmax_with_infinities_matches_torch(device):
    torch = _torch()
    data = np.array([[-np.inf, 0.0, 1.0], [-np.inf, -np.inf, -np.inf], [2.0, -np.inf, 2.0]])
    for name in ("softmax", "log_softmax"):
        out = getattr(F, name)(gputorch.tensor(data, device=device), 1)
        ref = getattr(torch.nn.functional, name)(torch.tensor(data), 1)
        np.testing.assert_array_equal(np.isnan(to_numpy(out)), np.isnan(ref.numpy()))
        assert_close(out, ref, RTOL, ATOL)


def test_softmax_dtype_argument(device):
    torch = _torch()
    data = np.random.randn(3, 4).astype(np.float32)
    x = gputorch.tensor(data, device=device, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    out = F.softmax(x, dim=1, dtype=gputorch.float64)
    ref = torch.nn.functional.softmax(tx, dim=1, dtype=torch.float64)
    assert out.dtype == gputorch.float64
    assert_close(out, ref, 1e-12, 1e-12)
    out[:, 0].sum().backward()
    ref[:, 0].sum().backward()
    assert x.grad.dtype == gputorch.float32
    assert_close(x.grad, tx.grad, 1e-6, 1e-6)
    ints = gputorch.arange(4, device=device)
    assert_close(F.log_softmax(ints, 0, dtype=gputorch.float64),
                 torch.nn.functional.log_softmax(torch.arange(4), 0, dtype=torch.float64), RTOL, ATOL)


def test_softmax_edge_shapes(device):
    scalar = gputorch.tensor(2.5, dtype=gputorch.float64, device=device, requires_grad=True)
    out = F.softmax(scalar, 0)
    assert out.shape == () and out.item() == 1.0
    assert F.log_softmax(scalar, -1).item() == 0.0
    out.backward()
    assert scalar.grad.item() == 0.0
    empty = gputorch.zeros(0, 3, device=device)
    assert F.softmax(empty, 1).shape == (0, 3)
    assert F.log_softmax(gputorch.zeros(3, 0, device=device), 1).shape == (3, 0)


def test_softmax_implicit_dim_warns_like_torch(device):
    x = gputorch.randn(2, 3, device=device)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F.softmax(x)
    assert_close(out.sum(1), np.ones(2), 1e-6, 1e-6, check_dtype=False)   # dim 1 for 2-D inputs
    with pytest.warns(UserWarning, match="log_softmax"):
        F.log_softmax(gputorch.randn(2, 3, 4, device=device))
    with pytest.warns(UserWarning):
        out3 = nn.Softmax()(gputorch.randn(2, 3, 4, device=device))
    assert_close(out3.sum(0), np.ones((3, 4)), 1e-6, 1e-6, check_dtype=False)  # dim 0 for 3-D inputs


def test_tensor_softmax_methods(device):
    torch = _torch()
    data = np.random.randn(3, 4)
    x = gputorch.tensor(data, device=device)
    assert_close(x.softmax(-1), torch.tensor(data).softmax(-1), RTOL, ATOL)
    assert_close(x.log_softmax(0), torch.tensor(data).log_softmax(0), RTOL, ATOL)


def test_softmax_errors(device):
    with pytest.raises(NotImplementedError, match="\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        F.softmax(gputorch.arange(3, device=device), 0)
    with pytest.raises(NotImplementedError, match="log_softmax"):
        F.log_softmax(gputorch.arange(3, device=device), 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.softmax(gputorch.randn(2, 3, device=device), 2)


# ================================================================ gelu, glu, prelu specifics
def test_gelu_uses_exact_erf_formula(device):
    xs = np.array([-3.0, -1.0, -0.1, 0.0, 0.5, 2.0, 6.0])
    out = F.gelu(gputorch.tensor(xs, device=device))
    expected = [x * 0.5 * (1 + math.erf(x / math.sqrt(2))) for x in xs]
    assert_close(out, np.array(expected), 1e-15, 1e-16)
    tanh = F.gelu(gputorch.tensor(xs, device=device), approximate="tanh")
    approx = [0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))) for x in xs]
    assert_close(tanh, np.array(approx), 1e-15, 1e-16)
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(gputorch.randn(2, device=device), approximate="fast")


def test_glu_errors(device):
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 3"):
        F.glu(gputorch.randn(2, 3, device=device), 1)
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(gputorch.tensor(1.0, device=device))


@pytest.mark.parametrize("shape,num", [((2, 3, 4), 3), ((2, 3, 4), 1), ((5, 3), 3), ((4,), 1), ((), 1)])
def test_prelu_parity(shape, num, device):
    torch = _torch()
    data = away_from([0], shape, seed=7)
    wdata = np.random.uniform(0.05, 0.5, num)
    x = gputorch.tensor(data, device=device, requires_grad=True)
    w = gputorch.tensor(wdata, device=device, requires_grad=True)
    tx, tw = torch.tensor(data, requires_grad=True), torch.tensor(wdata, requires_grad=True)
    out, ref = F.prelu(x, w), torch.nn.functional.prelu(tx, tw)
    assert_close(out, ref, RTOL, ATOL)
    g = np.random.randn(*ref.shape)
    out.backward(gputorch.tensor(g, device=device))
    ref.backward(torch.tensor(g))
    assert_close(x.grad, tx.grad, RTOL, ATOL)
    assert_close(w.grad, tw.grad, RTOL, ATOL)
    assert gradcheck(F.prelu, (x, w))
    assert gradgradcheck(F.prelu, (x, w))


def test_prelu_errors(device):
    with pytest.raises(RuntimeError, match="Found parameter numbers = 4 and channel size = 3"):
        F.prelu(gputorch.randn(2, 3, 4, device=device), gputorch.ones(4, device=device))
    with pytest.raises(RuntimeError, match="channel size = 1"):
        F.prelu(gputorch.randn(3, device=device), gputorch.ones(3, device=device))


# ================================================================ errors of the elementwise ones
@pytest.mark.parametrize("name,kernel", [("elu", "elu_cpu"), ("gelu", "GeluKernelImpl"), ("silu", "silu_cpu"),
                                         ("mish", "mish_cpu"), ("leaky_relu", "leaky_relu_cpu"),
                                         ("softplus", "softplus_cpu"), ("hardswish", "hardswish_cpu"),
                                         ("logsigmoid", "log_sigmoid_cpu")])
def test_integer_inputs_raise_like_torch(name, kernel, device):
    with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'Long\''):
        getattr(F, name)(gputorch.arange(4, device=device))


def test_integer_inputs_that_torch_accepts(device):
    torch = _torch()
    ints = np.arange(-3, 9)
    for fn, args in ((F.relu, ()), (F.relu6, ()), (F.hardtanh, (0, 6)), (F.threshold, (2.5, 10.5))):
        out = fn(gputorch.tensor(ints, device=device), *args)
        ref = getattr(torch.nn.functional, fn.__name__)(torch.tensor(ints), *args)
        assert_close(out, ref, 0, 0)


def test_argument_errors(device):
    x = gputorch.randn(3, device=device)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x, 2.0, 1.0)
    with pytest.raises(TypeError, match="negative_slope"):
        F.leaky_relu(x, "a")
    with pytest.raises(RuntimeError, match="lambda must be in range"):
        F.softshrink(x, -1.0)
    with pytest.raises(TypeError, match="must be Tensor"):
        F.gelu([1.0, 2.0])


# ================================================================ modules
MODULES = ["Threshold(0.1, 20.0)", "ReLU()", "ReLU(True)", "Hardtanh()", "Hardtanh(-2.0, 3.0, True)", "ReLU6()",
           "ReLU6(True)", "Sigmoid()", "Tanh()", "SiLU()", "SiLU(True)", "Mish()", "Mish(True)", "Hardsigmoid()",
           "Hardsigmoid(True)", "Hardswish(True)", "ELU()", "ELU(2.0, True)", "CELU(0.5)", "SELU()", "SELU(True)",
           "GLU()", "GELU()", "GELU('tanh')", "Hardshrink()", "LeakyReLU()", "LeakyReLU(0.2, True)",
           "LogSigmoid()", "Softplus()", "Softplus(2, 10)", "Softshrink(0.3)", "PReLU()", "PReLU(3, 0.1)",
           "Softsign()", "Tanhshrink()", "Softmin(1)", "Softmax(dim=-1)", "Softmax2d()", "LogSoftmax(1)"]


@pytest.mark.parametrize("spec", MODULES)
def test_module_repr_and_forward_match_torch(spec, device):
    torch = _torch()
    ours = eval("nn." + spec)  # noqa: S307 - fixed strings above
    theirs = eval("torch.nn." + spec)  # noqa: S307
    assert repr(ours) == repr(theirs)
    ours.to(device=device, dtype=gputorch.float64)
    theirs.double()
    data = away_from([0, 0.1, -1, 1, -2, 3, -3, 6, 0.3, -0.3, 0.5, -0.5], (2, 3, 4, 6), seed=11)
    x = gputorch.tensor(data, device=device, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    out = ours(x * 1.0)
    ref = theirs(tx * 1.0)
    assert_close(out, ref, RTOL, ATOL)
    out.sum().backward()
    ref.sum().backward()
    assert_close(x.grad, tx.grad, RTOL, ATOL)
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == tname
        assert_close(p.grad, tp.grad, RTOL, ATOL)


def test_prelu_module_defaults_and_state_dict(device):
    torch = _torch()
    m = nn.PReLU(4, init=0.3, device=device, dtype=gputorch.float64)
    assert m.weight.shape == (4,) and m.weight.dtype == gputorch.float64 and m.weight.device.type == device
    assert_close(m.weight, np.full(4, 0.3), 0, 0)
    assert list(m.state_dict()) == list(torch.nn.PReLU(4).state_dict()) == ["weight"]


def test_module_argument_checks(device):
    with pytest.raises(AssertionError, match=r"max_val \(1\) must be greater than min_val \(2\)"):
        nn.Hardtanh(2, 1)
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(gputorch.randn(2, 3, device=device))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert nn.Hardtanh(min_value=-2.0).min_val == -2.0


# ================================================================ rrelu
def test_rrelu_eval_matches_torch(device):
    torch = _torch()
    data = away_from([0], (3, 4), seed=4)
    x = gputorch.tensor(data, device=device, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    out = F.rrelu(x, 0.1, 0.3)
    ref = torch.nn.functional.rrelu(tx, 0.1, 0.3)
    assert out.grad_fn.name() == ref.grad_fn.name()
    assert_close(out, ref, RTOL, ATOL)
    out.sum().backward()
    ref.sum().backward()
    assert_close(x.grad, tx.grad, RTOL, ATOL)
    assert repr(nn.RReLU(0.1, 0.3, True)) == repr(torch.nn.RReLU(0.1, 0.3, True))
    assert repr(nn.RReLU()) == repr(torch.nn.RReLU())


def test_rrelu_training_draws_slopes(device):
    x = gputorch.tensor(-np.random.uniform(0.5, 2, 4000), device=device, requires_grad=True)
    gputorch.manual_seed(5)
    out = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = to_numpy(out) / to_numpy(x)
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and abs(slopes.mean() - 0.2) < 0.01
    out.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), slopes, rtol=1e-12)
    gputorch.manual_seed(5)
    assert_close(F.rrelu(x, 0.1, 0.3, training=True), out, 0, 0)
    positive = gputorch.tensor([0.5, 2.0], device=device)
    assert_close(nn.RReLU()(positive), positive, 0, 0)
    y = x.detach().clone()
    assert F.rrelu_(y, training=True) is y


def test_hardshrink_passes_the_gradient_of_nan(device):
    # NaN is kept by the forward (not inside [-lambd, lambd]), so its gradient passes as PyTorch's does;
    # the backward used to test |x| > lambd, false for NaN (differential seed 2).
    x = gputorch.tensor([-0.91, math.nan, -0.55, 0.56], device=device, requires_grad=True)
    out = F.hardshrink(x, lambd=1.0)
    (out * gputorch.tensor([1.0, -0.33, 2.0, 3.0], device=device)).sum().backward()
    assert_close(x.grad, np.array([0.0, -0.33, 0.0, 0.0], np.float32))
    y = gputorch.tensor([math.nan, 2.0], device=device, requires_grad=True)
    y.hardshrink(0.5).sum().backward()
    assert_close(y.grad, np.array([1.0, 1.0], np.float32))


# ================================================================ GELU's gradient from its output
_GELU_POINTS = [0.0, -0.0, 1e-38, 1e-45, -1e-40, 1e-30, 5e-31, -8.0, -20.0, 20.0, 0.3, -2.5, 4.0,
                math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("dtype", [gputorch.float32, gputorch.float64], ids=str)
def test_gelu_first_order_grad_from_output_matches_differentiable_rule(dtype, device):
    """Without create_graph, exact GELU's backward divides its output by its input for Phi(x); it
    must agree with the differentiable rule (a second erf) to rounding, special values included."""
    data = np.concatenate([np.random.default_rng(0).standard_normal(500) * 4, _GELU_POINTS])
    x = gputorch.tensor(data, dtype=dtype, device=device, requires_grad=True)
    g = gputorch.tensor(np.random.default_rng(1).standard_normal(data.size), dtype=dtype, device=device)
    y = F.gelu(x)
    fast, = gputorch.autograd.grad(y, x, g, retain_graph=True)
    rule, = gputorch.autograd.grad(y, x, g, create_graph=True)
    eps = np.finfo(to_numpy(fast).dtype).eps
    # slope = Phi(x) + x * phi(x) cancels near x = -0.75: rounding is relative to the terms (<= 1.1)
    # times |g| (< 4), hence the absolute part.
    np.testing.assert_allclose(to_numpy(fast), to_numpy(rule.detach()), rtol=4 * eps, atol=16 * eps)
    torch = pytest.importorskip("torch")
    t = torch.tensor(data, dtype=getattr(torch, str(dtype).split(".")[1]), requires_grad=True)
    torch.nn.functional.gelu(t).backward(torch.tensor(to_numpy(g)))
    np.testing.assert_allclose(to_numpy(fast), t.grad.numpy(), rtol=16 * eps, atol=16 * eps)


def test_gelu_output_modified_in_place_still_differentiates(device):
    """PyTorch's GELU saves only its input, so an in-place op on the output is allowed."""
    data = np.linspace(-3, 3, 7)
    x = gputorch.tensor(data, device=device, requires_grad=True)
    y = F.gelu(x)
    y.mul_(2.0)
    y.sum().backward()
    expected = 2 * (0.5 * (1 + np.vectorize(math.erf)(data / math.sqrt(2)))
                    + data * np.exp(-data ** 2 / 2) / math.sqrt(2 * math.pi))
    np.testing.assert_allclose(to_numpy(x.grad), expected, rtol=1e-12)


def test_gelu_saved_tensor_hooks_see_only_the_input(device):
    packed = []
    x = gputorch.randn(4, 3, device=device, requires_grad=True)
    with gputorch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        y = F.gelu(x)
    assert len(packed) == 1 and packed[0] is x
    y.sum().backward()
    assert x.grad.shape == (4, 3)
