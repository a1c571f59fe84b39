"""gputorch.compile returns a callable that behaves exactly like its argument (no compilation)."""
import logging

import numpy as np
import pytest

import gputorch
from gputorch._compile import OptimizedModule


def _model(device):
    gputorch.manual_seed(0)
    return gputorch.nn.Sequential(gputorch.nn.Linear(3, 4), gputorch.nn.ReLU(), gputorch.nn.Linear(4, 2)).to(device)


def test_compiled_module_matches_original(device):
    model = _model(device)
    compiled = gputorch.compile(model)
    assert isinstance(compiled, OptimizedModule) and isinstance(compiled, gputorch.nn.Module)
    assert compiled._orig_mod is model
    x = gputorch.randn(5, 3, device=device)
    np.testing.assert_array_equal(compiled(x).detach().cpu().numpy(), model(x).detach().cpu().numpy())
    assert [id(p) for p in compiled.parameters()] == [id(p) for p in model.parameters()]
    compiled(x).sum().backward()
    assert model[0].weight.grad is not None


def test_compiled_module_state_dict_keys_match_torch():
    torch = pytest.importorskip("torch")
    ours = gputorch.compile(gputorch.nn.Linear(2, 3))
    theirs = torch.compile(torch.nn.Linear(2, 3))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    ours.load_state_dict({k: gputorch.zeros_like(v) for k, v in ours.state_dict().items()})
    assert float(ours._orig_mod.weight.abs().sum()) == 0.0


def test_compiled_module_attributes_and_modes():
    model = gputorch.nn.Linear(2, 3)
    compiled = gputorch.compile(model, mode="reduce-overhead", fullgraph=True, dynamic=False)
    assert compiled.in_features == 2 and compiled.weight is model.weight
    compiled.eval()
    assert not model.training and not compiled.training
    compiled.extra = 7          # lands on the original, as in PyTorch
    assert model.extra == 7


def test_function_and_decorators():
    def f(x):
        return x * 2 + 1

    g = gputorch.compile(f)
    x = gputorch.arange(4.0)
    np.testing.assert_array_equal(g(x).numpy(), [1.0, 3.0, 5.0, 7.0])
    assert g.__name__ == "f"

    @gputorch.compile
    def h(x):
        return x.sin()

    @gputorch.compile(backend="eager", options={"trace.enabled": False})
    def k(x):
        return x.cos()

    np.testing.assert_allclose(h(x).numpy(), np.sin(np.arange(4.0)), rtol=1e-6)
    np.testing.assert_allclose(k(x).numpy(), np.cos(np.arange(4.0)), rtol=1e-6)


def test_disable_returns_argument_itself():
    model = gputorch.nn.Linear(2, 2)
    assert gputorch.compile(model, disable=True) is model


def test_errors_match_torch():
    with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
        gputorch.compile(lambda x: x, mode="default", options={})
    with pytest.raises(AssertionError, match="A callable function is expected"):
        gputorch.compile(3)


def test_logs_once(caplog, monkeypatch):
    from gputorch import _compile
    monkeypatch.setattr(_compile, "_logged", [False])
    with caplog.at_level(logging.INFO, logger="gputorch.compile"):
        gputorch.compile(lambda x: x)
        gputorch.compile(gputorch.nn.Linear(1, 1))
    records = [r for r in caplog.records if r.name == "gputorch.compile"]
    assert len(records) == 1 and "no compilation" in records[0].getMessage()
