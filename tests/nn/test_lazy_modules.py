"""Lazy modules and uninitialized parameters: shape inference at the first call, becoming the
ordinary class, initialisation like the ordinary module, optimizers built before the first call,
state dicts, moves/casts before initialisation, and the errors of using a placeholder."""
import copy
import pickle

import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from tests._helpers import assert_close
from tests.nn._models import copy_state


def _torch():
    return pytest.importorskip("torch")


def _x(shape, device):
    return gputorch.tensor(np.random.randn(*shape), device=device)


def test_lazy_linear_becomes_linear_initialised_like_linear(device):
    lazy = nn.LazyLinear(3, device=device)
    assert isinstance(lazy.weight, UninitializedParameter) and lazy.has_uninitialized_params()
    assert repr(lazy) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    x = _x((2, 4), device).float()
    gputorch.manual_seed(3)
    lazy(x)
    gputorch.manual_seed(3)
    eager = nn.Linear(4, 3, device=device)
    assert type(lazy) is nn.Linear and len(lazy._forward_pre_hooks) == 0
    assert type(lazy.weight) is nn.Parameter and tuple(lazy.weight.shape) == (3, 4)
    assert_close(lazy.weight, eager.weight, 0, 0)
    assert_close(lazy.bias, eager.bias, 0, 0)
    assert repr(lazy) == "Linear(in_features=4, out_features=3, bias=True)"


def test_optimizer_built_before_first_call(device):
    # The placeholders become the parameters in place, so an optimizer built before the first call
    # trains them exactly like one built for the ordinary module.
    lazy = nn.LazyLinear(3, device=device).double()
    opt = gputorch.optim.Adam(lazy.parameters(), lr=0.1)
    x = gputorch.tensor(np.random.randn(5, 4), device=device)
    lazy(x)
    eager = nn.Linear(4, 3, device=device, dtype=gputorch.float64)
    eager.load_state_dict(lazy.state_dict())
    eager_opt = gputorch.optim.Adam(eager.parameters(), lr=0.1)
    for model, optimizer in ((lazy, opt), (eager, eager_opt)):
        for _ in range(2):
            optimizer.zero_grad()
            model(x).pow(2).sum().backward()
            optimizer.step()
    assert lazy.weight.dtype == gputorch.float64
    assert len(opt.state) == 2                     # the optimizer saw (and stepped) both parameters
    assert_close(lazy.weight, eager.weight, 0, 0)
    assert_close(lazy.bias, eager.bias, 0, 0)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_lazy_convolutions(device, n):
    torch = _torch()
    x = np.random.randn(*(2, 4) + (4,) * n)
    for name, kwargs, shape in ((f"Conv{n}d", dict(groups=2, padding=1), (6, 2) + (2,) * n),
                                (f"ConvTranspose{n}d", dict(stride=2, groups=2), (4, 3) + (2,) * n)):
        ours = getattr(nn, f"Lazy{name}")(6, 2, **kwargs, device=device, dtype=gputorch.float64)
        ref = getattr(torch.nn, f"Lazy{name}")(6, 2, **kwargs, dtype=torch.float64)
        assert repr(ours) == repr(ref)
        out = ours(gputorch.tensor(x, device=device))
        ref(torch.tensor(x))
        assert type(ours) is getattr(nn, name) and repr(ours) == repr(ref)
        assert tuple(ours.weight.shape) == shape and ours.in_channels == 4
        bound = 1 / np.sqrt(ours.weight[0].numel() if "Transpose" not in name else 3 * 2 ** n)
        assert float(ours.weight.abs().max()) <= bound
        copy_state(ref, ours, gputorch, device)
        assert_close(ours(gputorch.tensor(x, device=device)), ref(torch.tensor(x)), 1e-10, 1e-12)
        assert tuple(out.shape) == tuple(ref(torch.tensor(x)).shape)
    unbatched = nn.LazyConv1d(3, 2, device=device)
    unbatched(_x((5, 6), device).float())
    assert unbatched.in_channels == 5


@pytest.mark.parametrize("name,shape", [("BatchNorm1d", (4, 3, 5)), ("BatchNorm2d", (4, 3, 2, 3)),
                                        ("BatchNorm3d", (2, 3, 2, 2, 3)), ("InstanceNorm1d", (2, 3, 5)),
                                        ("InstanceNorm2d", (2, 3, 3, 3)), ("InstanceNorm3d", (2, 3, 2, 2, 3))])
def test_lazy_norms(device, name, shape):
    torch = _torch()
    ours = getattr(nn, f"Lazy{name}")(device=device, dtype=gputorch.float64)
    ref = getattr(torch.nn, f"Lazy{name}")(dtype=torch.float64)
    assert repr(ours) == repr(ref)
    assert isinstance(ours.running_mean, UninitializedBuffer) and is_lazy(ours.weight)
    x = np.random.randn(*shape)
    out, expected = ours(gputorch.tensor(x, device=device)), ref(torch.tensor(x))
    assert type(ours) is getattr(nn, name) and repr(ours) == repr(ref)
    assert_close(out, expected, 1e-10, 1e-12)
    for key, value in ref.state_dict().items():
        assert_close(ours.state_dict()[key], value, 1e-12, 1e-12)


def test_lazy_state_dict_round_trip(device):
    lazy = nn.LazyLinear(3, device=device)
    state = lazy.state_dict()
    assert isinstance(state["weight"], UninitializedParameter)
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        nn.Linear(4, 3, device=device).load_state_dict(state)
    trained = nn.Linear(4, 3, device=device)
    target = nn.LazyLinear(3, device=device)
    target.load_state_dict(trained.state_dict())
    assert type(target) is nn.LazyLinear and not target.has_uninitialized_params()
    assert_close(target.weight, trained.weight, 0, 0)
    out = target(_x((2, 4), device).float())          # no re-initialisation at the first call
    assert type(target) is nn.Linear and tuple(out.shape) == (2, 3)
    assert_close(target.weight, trained.weight, 0, 0)


def test_uninitialized_parameter_errors_and_moves(device):
    p = UninitializedParameter(device=device)
    assert repr(p) == "<UninitializedParameter>" and p.requires_grad and p.dtype == gputorch.float32
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        p + 1
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        p.numel()
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        p.shape
    lazy = nn.LazyLinear(2, device=device).double()
    assert lazy.weight.dtype == gputorch.float64 and is_lazy(lazy.weight)
    clone, pickled = copy.deepcopy(lazy), pickle.loads(pickle.dumps(lazy))
    for other in (clone, pickled):
        assert is_lazy(other.weight) and other.weight is not lazy.weight
        other(_x((3, 4), device))
        other(_x((3, 4), device))
        assert type(other) is nn.Linear and tuple(other.weight.shape) == (2, 4)
    assert is_lazy(lazy.weight)
    lazy(_x((3, 5), device))
    assert lazy.weight.dtype == gputorch.float64 and lazy.weight.device.type == device
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and tuple(p.shape) == (2, 3) and p.device.type == device


def test_lazy_errors():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(gputorch.randn(1, 3, 5, 5))
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batch mode\\) input to LazyConv2d"):
        nn.LazyConv2d(4, 3)(gputorch.randn(5, 5))


def test_lazy_batchnorm_cast_before_first_call(device):
    bn = nn.LazyBatchNorm1d(device=device).double()
    assert isinstance(bn.running_mean, UninitializedBuffer) and bn.running_mean.dtype == gputorch.float64
    assert bn.has_uninitialized_params()
    bn(_x((4, 3), device))
    assert type(bn) is nn.BatchNorm1d and bn.running_var.dtype == gputorch.float64
    assert tuple(bn.running_mean.shape) == (3,) and int(bn.num_batches_tracked) == 1
