"""nn.utils.parametrize, parametrizations.weight_norm/spectral_norm and the older
nn.utils.weight_norm/spectral_norm: layout (state_dict keys, class swap), right_inverse,
caching, removal, and float64 parity with torch (outputs, gradients, u/v steps) after loading
torch's state dict."""
import copy
import pickle
import warnings

import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.nn.utils import parametrize
from tests._helpers import assert_close


def _torch():
    return pytest.importorskip("torch")


def _load_from_torch(module, torch_module, device):
    module.load_state_dict({k: gputorch.tensor(v.numpy(), device=device)
                            for k, v in torch_module.state_dict().items()})


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)

    def right_inverse(self, a):
        return a.triu()


class Scale(nn.Module):
    def forward(self, x):
        return 2 * x

    def right_inverse(self, y):
        return y / 2


class Split(nn.Module):
    """Two originals: the weight is their sum."""

    def forward(self, a, b):
        return a + b

    def right_inverse(self, w):
        return w * 0.25, w * 0.75


def test_register_parametrization_layout_and_values(device):
    lin = nn.Linear(3, 3, device=device).double()
    w = lin.weight.detach().clone()
    parametrize.register_parametrization(lin, "weight", Symmetric())
    assert type(lin).__name__ == "ParametrizedLinear" and parametrize.type_before_parametrizations(lin) is nn.Linear
    assert type(nn.Linear(2, 2)).__name__ == "Linear"         # other instances keep their class
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert parametrize.is_parametrized(lin) and parametrize.is_parametrized(lin, "weight")
    assert not parametrize.is_parametrized(lin, "bias")
    assert_close(lin.parametrizations.weight.original, w.triu(), rtol=0, atol=0)   # right_inverse applied
    assert_close(lin.weight, lin.weight.t(), rtol=0, atol=0)
    assert {n for n, _ in lin.named_parameters()} == {"bias", "parametrizations.weight.original"}
    lin.weight.sum().backward()
    assert lin.parametrizations.weight.original.grad is not None


def test_chained_parametrizations_assignment_and_removal(device):
    lin = nn.Linear(3, 3, device=device).double()
    original = lin.weight
    parametrize.register_parametrization(lin, "weight", Symmetric())
    parametrize.register_parametrization(lin, "weight", Scale())
    target = gputorch.arange(9.0, device=device).double().reshape(3, 3)
    target = target + target.t()
    lin.weight = target
    assert_close(lin.weight, target, rtol=0, atol=1e-12)
    assert lin.parametrizations.weight.original is original          # the same Parameter object
    parametrize.remove_parametrizations(lin, "weight")
    assert type(lin) is nn.Linear and not hasattr(lin, "parametrizations")
    assert lin.weight is original and isinstance(lin.weight, nn.Parameter)
    assert_close(lin.weight, target, rtol=0, atol=1e-12)
    assert list(lin.state_dict()) == ["bias", "weight"]


def test_remove_without_leaving_parametrized_and_sequence_originals(device):
    lin = nn.Linear(2, 2, device=device).double()
    w = lin.weight.detach().clone()
    parametrize.register_parametrization(lin, "weight", Scale())
    parametrize.remove_parametrizations(lin, "weight", leave_parametrized=False)
    assert_close(lin.weight, w / 2, rtol=0, atol=0)
    parametrize.register_parametrization(lin, "weight", Split())
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    assert_close(lin.weight, w / 2, rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        parametrize.remove_parametrizations(lin, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(lin, "weight")
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.requires_grad
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(lin, "weight")


def test_cached_computes_once_and_errors(device):
    calls = []

    class Counting(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 1

    lin = nn.Linear(2, 2, device=device)
    parametrize.register_parametrization(lin, "weight", Counting())
    calls.clear()
    with parametrize.cached():
        a, b = lin.weight, lin.weight
    assert a is b and len(calls) == 1
    lin.weight
    assert len(calls) == 2
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(nn.Linear(2, 3), "weight", _FirstRow())
    parametrize.register_parametrization(nn.Linear(2, 3), "weight", _FirstRow(), unsafe=True)
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(lin)
    clone = copy.deepcopy(lin)
    assert type(clone).__name__ == "ParametrizedLinear"
    assert clone.parametrizations.weight.original is not lin.parametrizations.weight.original
    assert_close(clone.weight, lin.weight, rtol=0, atol=0)


class _FirstRow(nn.Module):
    def forward(self, x):
        return x[0]


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parity(dim, device):
    torch = _torch()
    rng = np.random.default_rng(0)
    tm = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 3, 2).double(), dim=dim)
    gm = nn.utils.parametrizations.weight_norm(nn.Conv1d(2, 3, 2, device=device).double(), dim=dim)
    assert list(gm.state_dict()) == list(tm.state_dict())
    _load_from_torch(gm, tm, device)
    x = rng.standard_normal((2, 2, 4))
    out, expected = gm(gputorch.tensor(x, device=device)), tm(torch.tensor(x))
    assert_close(out, expected, rtol=1e-12, atol=1e-14)
    go = rng.standard_normal(tuple(expected.shape))
    out.backward(gputorch.tensor(go, device=device))
    expected.backward(torch.tensor(go))
    for (name, p), (tname, q) in zip(gm.named_parameters(), tm.named_parameters()):
        assert name == tname
        assert_close(p.grad, q.grad, rtol=1e-10, atol=1e-13)


def test_weight_norm_loads_the_older_layout(device):
    torch = _torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2).double())
    gm = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2, device=device).double())
    _load_from_torch(gm, old, device)
    assert_close(gm.weight, old.weight, rtol=1e-12, atol=1e-14)


def _compare_spectral(gm, tm, device, steps, shape, train=True):
    torch = _torch()
    rng = np.random.default_rng(1)
    gm.train(train)
    tm.train(train)
    for _ in range(steps):
        x = rng.standard_normal(shape)
        out, expected = gm(gputorch.tensor(x, device=device)), tm(torch.tensor(x))
        assert_close(out, expected, rtol=1e-10, atol=1e-12)
        out.sum().backward()
        expected.sum().backward()
        for p, q in zip(gm.parameters(), tm.parameters()):
            assert_close(p.grad, q.grad, rtol=1e-9, atol=1e-12)
        for b, c in zip(gm.buffers(), tm.buffers()):
            assert_close(b, c, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("train", [True, False])
def test_spectral_norm_parity_step_by_step(train, device):
    torch = _torch()
    tm = torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(5, 3).double(), n_power_iterations=2)
    gm = nn.utils.parametrizations.spectral_norm(nn.Linear(5, 3, device=device).double(), n_power_iterations=2)
    assert list(gm.state_dict()) == list(tm.state_dict())
    _load_from_torch(gm, tm, device)
    u0 = gm.parametrizations.weight[0]._u.clone()
    _compare_spectral(gm, tm, device, 3, (2, 5), train)
    assert (gm.parametrizations.weight[0]._u.equal(u0)) is (not train)


def test_spectral_norm_transposed_conv_uses_dim_1(device):
    torch = _torch()
    tm = torch.nn.utils.parametrizations.spectral_norm(torch.nn.ConvTranspose1d(2, 4, 2).double())
    gm = nn.utils.parametrizations.spectral_norm(nn.ConvTranspose1d(2, 4, 2, device=device).double())
    assert gm.parametrizations.weight[0]._u.shape == (4,)
    _load_from_torch(gm, tm, device)
    _compare_spectral(gm, tm, device, 2, (1, 2, 3))


def test_spectral_norm_errors(device):
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        nn.utils.parametrizations.spectral_norm(nn.Linear(2, 2), "w")
    with pytest.raises(IndexError, match="Dimension out of range"):
        nn.utils.parametrizations.spectral_norm(nn.Linear(2, 2), dim=2)
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        nn.utils.parametrizations.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)


def test_older_weight_norm(device):
    torch = _torch()
    with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
        gm = nn.utils.weight_norm(nn.Linear(3, 2, device=device).double(), dim=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        tm = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2).double(), dim=None)
    assert list(gm.state_dict()) == list(tm.state_dict()) == ["bias", "weight_g", "weight_v"]
    _load_from_torch(gm, tm, device)
    x = np.random.default_rng(2).standard_normal((4, 3))
    out, expected = gm(gputorch.tensor(x, device=device)), tm(torch.tensor(x))
    assert_close(out, expected, rtol=1e-12, atol=1e-14)
    out.sum().backward()
    expected.sum().backward()
    assert_close(gm.weight_g.grad, tm.weight_g.grad, rtol=1e-10, atol=1e-13)
    assert_close(gm.weight_v.grad, tm.weight_v.grad, rtol=1e-10, atol=1e-13)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            nn.utils.weight_norm(gm)
    nn.utils.remove_weight_norm(gm)
    assert list(gm.state_dict()) == ["bias", "weight"]
    assert_close(gm.weight, tm.weight, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(gm)


def test_older_spectral_norm(device):
    torch = _torch()
    tm = torch.nn.utils.spectral_norm(torch.nn.Conv2d(2, 3, 2).double())
    gm = nn.utils.spectral_norm(nn.Conv2d(2, 3, 2, device=device).double())
    sd = gm.state_dict()
    assert list(sd) == list(tm.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert sd._metadata[""]["spectral_norm"] == {"weight.version": 1}
    _load_from_torch(gm, tm, device)
    _compare_spectral(gm, tm, device, 2, (1, 2, 3, 3))
    gm.eval()
    tm.eval()
    _compare_spectral(gm, tm, device, 1, (1, 2, 3, 3), train=False)
    nn.utils.remove_spectral_norm(gm)
    torch.nn.utils.remove_spectral_norm(tm)
    assert list(gm.state_dict()) == list(tm.state_dict())
    assert_close(gm.weight, tm.weight, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        nn.utils.remove_spectral_norm(gm)


def test_transfer_parametrizations_shares_the_originals(device):
    source = nn.Linear(3, 3, device=device).double()
    parametrize.register_parametrization(source, "weight", Symmetric())
    target = nn.Linear(3, 3, device=device).double()
    parametrize.transfer_parametrizations_and_params(source, target)
    assert type(target).__name__ == "ParametrizedLinear"
    assert target.parametrizations.weight.original is source.parametrizations.weight.original
    assert_close(target.weight, source.weight, rtol=0, atol=0)
    assert parametrize.transfer_parametrizations_and_params(nn.Linear(2, 2), target) is target
