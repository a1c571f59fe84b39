"""nn.init: gains and fan computations equal to torch's, distribution statistics and bounds of
every initialiser, exact structured fills (eye_, dirac_), orthogonality, generators, errors."""
import math
import warnings

import numpy as np
import pytest

import gputorch
from gputorch.nn import init
from tests._helpers import assert_close, to_numpy


def _torch():
    return pytest.importorskip("torch")


def _param(shape, device, dtype=gputorch.float64):
    return gputorch.nn.Parameter(gputorch.empty(shape, dtype=dtype, device=device))


# ================================================================ gains and fans
@pytest.mark.parametrize("args", [("linear",), ("conv1d",), ("conv2d",), ("conv3d",), ("conv_transpose1d",),
                                  ("conv_transpose2d",), ("conv_transpose3d",), ("sigmoid",), ("tanh",), ("relu",),
                                  ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu",)])
def test_calculate_gain_matches_torch(args):
    torch = _torch()
    assert init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


def test_calculate_gain_errors():
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        init.calculate_gain("gelu")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)


SHAPES = [(3, 4), (4, 3), (1, 1), (10, 20), (8, 3, 5), (16, 8, 3, 3), (6, 4, 2, 3, 5), (5, 0), (0, 5, 3),
          (2, 7, 1, 1)]


@pytest.mark.parametrize("shape", SHAPES)
def test_fans_match_torch(shape):
    torch = _torch()
    ours = init._calculate_fan_in_and_fan_out(gputorch.empty(shape))
    theirs = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    assert ours == theirs
    for mode in ("fan_in", "fan_out", "FAN_IN"):
        assert init._calculate_correct_fan(gputorch.empty(shape), mode) == \
            torch.nn.init._calculate_correct_fan(torch.empty(shape), mode)


def test_fan_errors():
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2 dim"):
        init._calculate_fan_in_and_fan_out(gputorch.empty(5))
    with pytest.raises(ValueError, match=r"Mode fan_avg not supported, please use one of \['fan_in', 'fan_out'\]"):
        init.kaiming_uniform_(gputorch.empty(3, 4), mode="fan_avg")


# ================================================================ plain fills
def test_uniform_and_normal_statistics(device):
    w = _param((400, 500), device)
    assert init.uniform_(w, -2.0, 3.0) is w
    v = to_numpy(w)
    assert v.min() >= -2.0 and v.max() < 3.0
    assert abs(v.mean() - 0.5) < 0.02 and abs(v.std() - 5 / math.sqrt(12)) < 0.02
    init.normal_(w, 1.5, 0.3)
    v = to_numpy(w)
    assert abs(v.mean() - 1.5) < 0.003 and abs(v.std() - 0.3) < 0.003
    assert w.requires_grad and w.grad_fn is None


def test_constant_ones_zeros(device):
    w = _param((3, 4), device)
    assert init.constant_(w, 2.5) is w
    assert (to_numpy(w) == 2.5).all()
    init.ones_(w)
    assert (to_numpy(w) == 1).all()
    init.zeros_(w)
    assert (to_numpy(w) == 0).all()
    assert w.grad_fn is None and w._version > 0


@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (5, 2)])
def test_eye_matches_torch(shape, device):
    torch = _torch()
    w = _param(shape, device)
    init.eye_(w)
    assert_close(w, torch.nn.init.eye_(torch.empty(shape, dtype=torch.float64)), 0, 0)
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(_param((2, 3, 4), device))


@pytest.mark.parametrize("shape,groups", [((4, 3, 5), 1), ((6, 4, 3, 3), 1), ((6, 2, 3, 4), 2),
                                          ((4, 6, 3, 3, 3), 1), ((6, 1, 3, 3), 3)])
def test_dirac_matches_torch(shape, groups, device):
    torch = _torch()
    w = _param(shape, device)
    init.dirac_(w, groups)
    assert_close(w, torch.nn.init.dirac_(torch.empty(shape, dtype=torch.float64), groups), 0, 0)


def test_dirac_errors(device):
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        init.dirac_(_param((3, 4), device))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(_param((5, 2, 3), device), 2)


# ================================================================ fan-scaled initialisers
@pytest.mark.parametrize("shape", [(300, 400), (64, 32, 3, 3)])
def test_xavier(shape, device):
    fan_in, fan_out = init._calculate_fan_in_and_fan_out(gputorch.empty(shape))
    std = 0.7 * math.sqrt(2.0 / (fan_in + fan_out))
    w = _param(shape, device)
    init.xavier_uniform_(w, gain=0.7)
    v = to_numpy(w)
    bound = math.sqrt(3) * std
    assert np.abs(v).max() <= bound and np.abs(v).max() > 0.99 * bound
    assert abs(v.std() - std) < 0.02 * std
    init.xavier_normal_(w, gain=0.7)
    v = to_numpy(w)
    assert abs(v.std() - std) < 0.02 * std and abs(v.mean()) < 0.02 * std


@pytest.mark.parametrize("a,mode,nonlinearity", [(0, "fan_in", "leaky_relu"), (math.sqrt(5), "fan_in", "leaky_relu"),
                                                 (0, "fan_out", "relu"), (0.2, "fan_out", "leaky_relu"),
                                                 (0, "fan_in", "tanh"), (0, "fan_in", "selu")])
def test_kaiming(a, mode, nonlinearity, device):
    torch = _torch()
    shape = (128, 64, 3, 3)
    fan = torch.nn.init._calculate_correct_fan(torch.empty(shape), mode)
    std = torch.nn.init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    w = _param(shape, device)
    init.kaiming_uniform_(w, a=a, mode=mode, nonlinearity=nonlinearity)
    v = to_numpy(w)
    bound = math.sqrt(3) * std
    assert np.abs(v).max() <= bound and np.abs(v).max() > 0.99 * bound
    assert abs(v.std() - std) < 0.02 * std
    init.kaiming_normal_(w, a=a, mode=mode, nonlinearity=nonlinearity)
    v = to_numpy(w)
    assert abs(v.std() - std) < 0.02 * std and abs(v.mean()) < 0.02 * std


def test_kaiming_on_empty_tensor_warns(device):
    w = _param((0, 3), device)
    for fn in (init.kaiming_uniform_, init.kaiming_normal_):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            assert fn(w) is w


# ================================================================ truncated normal
def _truncated_moments(mean, std, a, b):
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    m = mean + std * (pdf(alpha) - pdf(beta)) / z
    var = std ** 2 * (1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z - ((pdf(alpha) - pdf(beta)) / z) ** 2)
    return m, math.sqrt(var)


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.5, 2.0, -1.0, 1.0), (0.0, 1.0, 1.0, 3.0),
                                          (0.0, 0.02, -0.04, 0.04)])
def test_trunc_normal_bounds_and_moments(mean, std, a, b, device):
    w = _param((300, 400), device)
    assert init.trunc_normal_(w, mean, std, a, b) is w
    v = to_numpy(w)
    assert v.min() >= a and v.max() <= b
    m, s = _truncated_moments(mean, std, a, b)
    assert abs(v.mean() - m) < 0.01 * (b - a)
    assert abs(v.std() - s) < 0.01 * s + 1e-3 * (b - a)


def test_trunc_normal_warns_when_mean_is_far(device):
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(_param((10, 10), device), mean=5.0, std=1.0, a=-1.0, b=1.0)


# ================================================================ orthogonal and sparse
@pytest.mark.parametrize("shape", [(6, 6), (4, 9), (9, 4), (5, 2, 3)])
def test_orthogonal(shape, device):
    w = _param(shape, device)
    assert init.orthogonal_(w, gain=2.0) is w
    flat = to_numpy(w).reshape(shape[0], -1) / 2.0
    if flat.shape[0] <= flat.shape[1]:
        np.testing.assert_allclose(flat @ flat.T, np.eye(flat.shape[0]), atol=1e-12)
    else:
        np.testing.assert_allclose(flat.T @ flat, np.eye(flat.shape[1]), atol=1e-12)
    w32 = _param((5, 5), device, gputorch.float32)
    init.orthogonal_(w32)
    assert w32.dtype == gputorch.float32
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(_param((3,), device))


def test_sparse(device):
    w = _param((10, 6), device)
    init.sparse_(w, 0.3, std=0.5)
    zeros_per_column = (to_numpy(w) == 0).sum(0)
    assert (zeros_per_column == 3).all()
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(_param((3, 4, 5), device), 0.1)


# ================================================================ generators, seeds, deprecated names
@pytest.mark.parametrize("fn,kwargs", [(init.uniform_, {}), (init.normal_, {}), (init.xavier_uniform_, {}),
                                       (init.xavier_normal_, {}), (init.kaiming_uniform_, {}),
                                       (init.kaiming_normal_, {}), (init.trunc_normal_, {}),
                                       (init.orthogonal_, {})])
def test_generator_argument(fn, kwargs, device):
    gen = gputorch.Generator(device)
    a, b, c = _param((5, 7), device), _param((5, 7), device), _param((5, 7), device)
    gen.manual_seed(42)
    fn(a, generator=gen, **kwargs)
    gen.manual_seed(42)
    fn(b, generator=gen, **kwargs)
    fn(c, generator=gen, **kwargs)
    assert_close(a, b, 0, 0)
    assert not np.allclose(to_numpy(a), to_numpy(c))
    gputorch.manual_seed(1)
    d = fn(_param((5, 7), device), **kwargs)
    gputorch.manual_seed(1)
    assert_close(fn(_param((5, 7), device), **kwargs), d, 0, 0)


def test_deprecated_names_warn(device):
    with pytest.warns(FutureWarning, match="`nn.init.uniform` is now deprecated in favor of `nn.init.uniform_`"):
        init.uniform(_param((2, 2), device))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w = init.constant(_param((2, 2), device), 3.0)
    assert (to_numpy(w) == 3).all()
