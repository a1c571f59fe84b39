"""Optimizers: step-for-step parity with PyTorch (float64), state dicts in PyTorch's layout,
state following its parameter across devices and dtypes, hooks, and PyTorch's errors."""
import copy
import warnings

import numpy as np
import pytest

import gputorch
from gputorch import optim
from gputorch.nn import Parameter
from gputorch.optim.adam import adam_update
from gputorch.optim.optimizer import running_step
from tests._helpers import assert_close, assert_same_across_devices

CASES = [
    ("SGD", {"lr": 0.05}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True}),
    ("SGD", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.05, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.5, "weight_decay": 0.05}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "maximize": True}),
    ("Adam", {"lr": 0.05, "betas": (0.3, 0.8), "eps": 1e-6, "amsgrad": True, "weight_decay": 0.1,
              "maximize": True}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.3, "maximize": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "eps": 1e-4, "weight_decay": 0.1, "maximize": True}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "initial_accumulator_value": 0.2}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1, "eps": 1e-6, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-5}),
    ("Adadelta", {"lr": 0.5, "weight_decay": 0.1, "maximize": True}),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'default'}" for name, kw in CASES]
STEPS = 20


def _problem(seed=0):
    """Initial weights and one least-squares batch per step."""
    rng = np.random.default_rng(seed)
    weights = {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2), "unused": rng.standard_normal(4)}
    batches = [(rng.standard_normal((6, 3)), rng.standard_normal((6, 2))) for _ in range(STEPS)]
    return weights, batches


def _loss(lib, params, x, y, sign=1):
    """A least-squares loss plus a quartic term (negated for ``maximize``)."""
    w, b = params[0], params[1]
    residual = lib.tensor(x) @ w + b - lib.tensor(y)
    return sign * ((residual * residual).sum() + 0.1 * (w ** 4).sum())


def _loss_on(params, x, y, device, sign=1):
    w, b = params[0], params[1]
    residual = gputorch.tensor(x, device=device) @ w + b - gputorch.tensor(y, device=device)
    return sign * ((residual * residual).sum() + 0.1 * (w ** 4).sum())


def _make_params(weights, device):
    return [Parameter(gputorch.tensor(weights[k], device=device)) for k in ("w", "b", "unused")]


def _torch_run(torch, name, kwargs, weights, batches, groups=None):
    params = [torch.nn.Parameter(torch.tensor(weights[k])) for k in ("w", "b", "unused")]
    opt = getattr(torch.optim, name)(groups(params) if groups else params, **kwargs)
    history = []
    sign = -1 if kwargs.get("maximize") else 1
    for x, y in batches:
        opt.zero_grad()
        _loss(torch, params, x, y, sign).backward()
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history, opt


def _ours_run(name, kwargs, weights, batches, device, groups=None):
    params = _make_params(weights, device)
    opt = getattr(optim, name)(groups(params) if groups else params, **kwargs)
    history = []
    sign = -1 if kwargs.get("maximize") else 1
    for x, y in batches:
        opt.zero_grad()
        _loss_on(params, x, y, device, sign).backward()
        opt.step()
        history.append([p.detach().cpu().numpy().copy() for p in params])
    return history, opt


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_parity_with_torch_every_step(name, kwargs, device):
    torch = pytest.importorskip("torch")
    weights, batches = _problem()
    expected, topt = _torch_run(torch, name, kwargs, weights, batches)
    got, opt = _ours_run(name, kwargs, weights, batches, device)
    for step, (e, g) in enumerate(zip(expected, got)):
        for te, ge in zip(e, g):
            np.testing.assert_allclose(ge, te, rtol=1e-12, atol=1e-14, err_msg=f"step {step}")
    # the state matches too (same keys, values, dtypes)
    tstate, state = topt.state_dict()["state"], opt.state_dict()["state"]
    assert tstate.keys() == state.keys()
    for idx in tstate:
        assert list(tstate[idx]) == list(state[idx])
        for key, value in tstate[idx].items():
            assert_close(state[idx][key], value, rtol=1e-11, atol=1e-14)


def test_parity_with_param_groups(device):
    torch = pytest.importorskip("torch")
    weights, batches = _problem(1)

    def groups(params):
        return [{"params": [params[0]], "lr": 0.01, "betas": (0.5, 0.9)}, {"params": params[1:], "amsgrad": True}]
    expected, _ = _torch_run(torch, "Adam", {"lr": 0.03}, weights, batches, groups)
    got, opt = _ours_run("Adam", {"lr": 0.03}, weights, batches, device, groups)
    np.testing.assert_allclose(np.concatenate([a.ravel() for a in got[-1]]),
                               np.concatenate([a.ravel() for a in expected[-1]]), rtol=1e-12, atol=1e-14)
    assert [g["lr"] for g in opt.param_groups] == [0.01, 0.03]
    assert opt.param_groups[0]["amsgrad"] is False and opt.param_groups[1]["betas"] == (0.9, 0.999)


def test_tensor_lr_matches_float_lr(device):
    weights, batches = _problem()
    a, _ = _ours_run("SGD", {"lr": 0.05, "momentum": 0.9}, weights, batches[:5], device)
    b, _ = _ours_run("SGD", {"lr": gputorch.tensor(0.05, dtype=gputorch.float64), "momentum": 0.9},
                     weights, batches[:5], device)
    np.testing.assert_array_equal(a[-1][0], b[-1][0])


# ---------------------------------------------------------------- state dicts
def _to_ours(value):
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        return gputorch.tensor(value.detach().numpy())
    if isinstance(value, dict):
        return {k: _to_ours(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_ours(v) for v in value]
    return value


def _to_torch(torch, value):
    if isinstance(value, gputorch.Tensor):
        return torch.tensor(value.cpu().numpy())
    if isinstance(value, dict):
        return {k: _to_torch(torch, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_torch(torch, v) for v in value]
    return value


@pytest.mark.parametrize("name,kwargs", [c for c in CASES if c[1].get("momentum") or c[0] != "SGD"][::2])
def test_state_dict_layout_matches_torch(name, kwargs, device):
    torch = pytest.importorskip("torch")
    weights, batches = _problem()
    _, topt = _torch_run(torch, name, kwargs, weights, batches[:3])
    _, opt = _ours_run(name, kwargs, weights, batches[:3], device)
    tsd, sd = topt.state_dict(), opt.state_dict()
    assert list(sd) == list(tsd) == ["state", "param_groups"]
    assert sd["param_groups"] == tsd["param_groups"]
    assert list(sd["state"]) == list(tsd["state"])
    for idx, tstate in tsd["state"].items():
        assert list(sd["state"][idx]) == list(tstate)
        for key, value in tstate.items():
            ours = sd["state"][idx][key]
            assert isinstance(ours, gputorch.Tensor)
            assert ours.dtype.name == str(value.dtype).replace("torch.", "")
            assert tuple(ours.shape) == tuple(value.shape)
            expected_device = "cpu" if key == "step" else device
            assert ours.device.type == expected_device


def test_step_counter_is_float32_cpu_tensor(device):
    p = Parameter(gputorch.randn(3, dtype=gputorch.float64, device=device))
    opt = optim.Adam([p])
    p.grad = gputorch.ones(3, dtype=gputorch.float64, device=device)
    opt.step()
    opt.step()
    step = opt.state[p]["step"]
    assert step.dtype == gputorch.float32 and step.device.type == "cpu" and step.dim() == 0
    assert step.item() == 2.0


def test_step_counter_follows_default_dtype():
    old = gputorch.get_default_dtype()
    gputorch.set_default_dtype(gputorch.float64)
    try:
        p = Parameter(gputorch.randn(3))
        opt = optim.RMSprop([p])
        p.grad = gputorch.ones(3)
        opt.step()
        assert opt.state[p]["step"].dtype == gputorch.float64
    finally:
        gputorch.set_default_dtype(old)


@pytest.mark.parametrize("name,kwargs", CASES[1::3], ids=IDS[1::3])
def test_state_dict_round_trip(name, kwargs, device):
    weights, batches = _problem()
    params = _make_params(weights, device)
    opt = getattr(optim, name)(params, **kwargs)
    sign = -1 if kwargs.get("maximize") else 1
    for x, y in batches[:4]:
        opt.zero_grad()
        _loss_on(params, x, y, device, sign).backward()
        opt.step()
    clones = [Parameter(p.detach().clone()) for p in params]
    other = getattr(optim, name)(clones, **kwargs)
    other.load_state_dict(copy.deepcopy(opt.state_dict()))
    for x, y in batches[4:10]:
        for o, ps in ((opt, params), (other, clones)):
            o.zero_grad()
            _loss_on(ps, x, y, device, sign).backward()
            o.step()
    for a, b in zip(params, clones):
        np.testing.assert_array_equal(a.detach().cpu().numpy(), b.detach().cpu().numpy())


@pytest.mark.parametrize("name,kwargs", CASES[::3], ids=IDS[::3])
def test_load_torch_state_dict_and_back(name, kwargs, device):
    torch = pytest.importorskip("torch")
    weights, batches = _problem()
    first, topt = _torch_run(torch, name, kwargs, weights, batches[:5])
    # continue in gputorch from PyTorch's weights and optimizer state
    resumed = {k: first[-1][i] for i, k in enumerate(("w", "b", "unused"))}
    params = _make_params(resumed, device)
    opt = getattr(optim, name)(params, **kwargs)
    opt.load_state_dict(_to_ours(topt.state_dict()))
    for state in opt.state.values():
        for key, value in state.items():
            assert value.device.type == ("cpu" if key == "step" else device)
    sign = -1 if kwargs.get("maximize") else 1
    for x, y in batches[5:]:
        opt.zero_grad()
        _loss_on(params, x, y, device, sign).backward()
        opt.step()
    # ... and PyTorch continuing on its own
    tparams = topt.param_groups[0]["params"]
    for x, y in batches[5:]:
        topt.zero_grad()
        _loss(torch, tparams, x, y, sign).backward()
        topt.step()
    for p, tp in zip(params, tparams):
        np.testing.assert_allclose(p.detach().cpu().numpy(), tp.detach().numpy(), rtol=1e-12, atol=1e-14)
    # our state dict loads into PyTorch
    fresh = [torch.nn.Parameter(tp.detach().clone()) for tp in tparams]
    back = getattr(torch.optim, name)(fresh, **kwargs)
    back.load_state_dict(_to_torch(torch, opt.state_dict()))
    assert back.state_dict()["param_groups"] == topt.state_dict()["param_groups"]


def test_load_state_dict_casts_to_param_dtype_and_keeps_step(device):
    p = Parameter(gputorch.zeros(2, dtype=gputorch.float64, device=device))
    opt = optim.Adam([p])
    state = {"step": gputorch.tensor(3.0), "exp_avg": gputorch.ones(2, dtype=gputorch.float32),
             "exp_avg_sq": gputorch.ones(2, dtype=gputorch.float32)}
    opt.load_state_dict({"state": {0: state}, "param_groups": [dict(opt.state_dict()["param_groups"][0])]})
    loaded = opt.state[p]
    assert loaded["exp_avg"].dtype == gputorch.float64 and loaded["exp_avg"].device.type == device
    assert loaded["step"].dtype == gputorch.float32 and loaded["step"].device.type == "cpu"


def test_load_state_dict_converts_number_steps():
    p = Parameter(gputorch.zeros(2))
    opt = optim.Adam([p])
    group = dict(opt.state_dict()["param_groups"][0])
    opt.load_state_dict({"state": {0: {"step": 4, "exp_avg": gputorch.zeros(2), "exp_avg_sq": gputorch.zeros(2)}},
                         "param_groups": [group]})
    assert isinstance(opt.state[p]["step"], gputorch.Tensor) and opt.state[p]["step"].item() == 4.0


def test_load_state_dict_errors():
    a, b = Parameter(gputorch.zeros(2)), Parameter(gputorch.zeros(2))
    opt = optim.SGD([a, b], lr=0.1)
    sd = opt.state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": sd["param_groups"] * 2})
    group = dict(sd["param_groups"][0], params=[0])
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        opt.load_state_dict({"state": {}, "param_groups": [group]})


def test_named_parameters_give_param_names():
    a, b = Parameter(gputorch.zeros(2)), Parameter(gputorch.zeros(3))
    opt = optim.SGD([("a", a), ("b", b)], lr=0.1)
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["a", "b"]
    with pytest.raises(ValueError, match="with/without names"):
        opt.add_param_group({"params": [Parameter(gputorch.zeros(1))]})


def test_adagrad_state_exists_from_construction():
    a, b = Parameter(gputorch.zeros(2)), Parameter(gputorch.zeros(3))
    opt = optim.Adagrad([a, b], initial_accumulator_value=0.5)
    assert set(opt.state_dict()["state"]) == {0, 1}
    assert opt.state[b]["sum"].tolist() == [0.5, 0.5, 0.5]


def test_params_without_grad_are_skipped(device):
    a = Parameter(gputorch.ones(2, device=device))
    b = Parameter(gputorch.ones(2, device=device))
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = gputorch.ones(2, device=device)
    version = b._version
    opt.step()
    assert b.tolist() == [1.0, 1.0] and b._version == version
    assert a.tolist() != [1.0, 1.0] and len(opt.state[b]) == 0


# ---------------------------------------------------------------- state follows its parameter
class _Model(gputorch.nn.Module):
    def __init__(self, weights):
        super().__init__()
        self.w = Parameter(gputorch.tensor(weights["w"]))
        self.b = Parameter(gputorch.tensor(weights["b"]))


def _train(model, opt, batches, device):
    for x, y in batches:
        opt.zero_grad()
        _loss_on([model.w, model.b], x, y, device).backward()
        opt.step()


@pytest.mark.parametrize("name,kwargs", CASES[1::2], ids=IDS[1::2])
def test_state_follows_parameter_across_devices(name, kwargs):
    if not gputorch.cuda.is_available():
        pytest.skip("needs a (real or simulated) CUDA device")
    weights, batches = _problem()
    reference = _Model(weights)
    ref_opt = getattr(optim, name)(reference.parameters(), **kwargs)
    _train(reference, ref_opt, batches[:9], "cpu")

    model = _Model(weights)
    opt = getattr(optim, name)(model.parameters(), **kwargs)
    _train(model, opt, batches[:3], "cpu")
    model.to("cuda")
    _train(model, opt, batches[3:6], "cuda")
    for state in opt.state.values():
        for key, value in state.items():
            assert value.device.type == ("cpu" if key == "step" else "cuda")
    model.to("cpu")
    _train(model, opt, batches[6:9], "cpu")
    for state in opt.state.values():
        for value in state.values():
            assert value.device.type == "cpu"
    for a, b in zip(model.parameters(), reference.parameters()):
        assert_same_across_devices(a.detach().numpy(), b.detach().numpy())
    for p, q in zip(model.parameters(), reference.parameters()):
        for key in ref_opt.state[q]:
            assert_same_across_devices(opt.state[p][key].numpy(), ref_opt.state[q][key].numpy())


def test_params_on_several_devices_in_one_group():
    if not gputorch.cuda.is_available():
        pytest.skip("needs a (real or simulated) CUDA device")
    weights, batches = _problem()
    on_cpu = [Parameter(gputorch.tensor(weights[k])) for k in ("w", "b")]
    mixed = [Parameter(gputorch.tensor(weights["w"], device="cuda")), Parameter(gputorch.tensor(weights["b"]))]
    results = []
    for params in (on_cpu, mixed):
        opt = optim.SGD(params, lr=0.05, momentum=0.9)
        for x, y in batches[:4]:
            opt.zero_grad()
            w, b = params
            residual = gputorch.tensor(x, device=w.device) @ w + b.to(w.device) - gputorch.tensor(y, device=w.device)
            (residual * residual).sum().backward()
            opt.step()
        results.append([p.detach().cpu().numpy() for p in params])
    assert opt.state[mixed[0]]["momentum_buffer"].device.type == "cuda"
    for a, b in zip(*results):
        assert_same_across_devices(a, b)


def test_state_follows_parameter_dtype():
    weights, batches = _problem()
    model = _Model(weights).float()
    opt = optim.Adam(model.parameters(), lr=0.01)
    _train(model, opt, [(x.astype(np.float32), y.astype(np.float32)) for x, y in batches[:2]], "cpu")
    model.double()
    _train(model, opt, batches[2:4], "cpu")
    state = opt.state[model.w]
    assert state["exp_avg"].dtype == gputorch.float64 and state["exp_avg_sq"].dtype == gputorch.float64
    assert state["step"].item() == 4.0  # not reset


def test_gradient_on_another_device_raises():
    if not gputorch.cuda.is_available():
        pytest.skip("needs a (real or simulated) CUDA device")
    p = Parameter(gputorch.zeros(2))
    opt = optim.SGD([p], lr=0.1)
    p._grad = gputorch.ones(2, device="cuda")
    with pytest.raises(RuntimeError, match="gradient on cuda"):
        opt.step()


# ---------------------------------------------------------------- step mechanics
def test_step_bumps_parameter_versions(device):
    p = Parameter(gputorch.ones(2, dtype=gputorch.float64, device=device))
    opt = optim.SGD([p], lr=0.1)
    p.grad = gputorch.ones(2, dtype=gputorch.float64, device=device)
    version = p._version
    opt.step()
    assert p._version == version + 1 and p.tolist() == [0.9, 0.9]
    assert p.is_leaf and p.requires_grad


def test_closure_runs_with_grad_and_returns_loss(device):
    p = Parameter(gputorch.tensor([1.0, -2.0], dtype=gputorch.float64, device=device))
    opt = optim.SGD([p], lr=0.1)
    seen = []

    def closure():
        seen.append(gputorch.is_grad_enabled())
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    with gputorch.no_grad():
        loss = opt.step(closure)
    assert seen == [True] and loss.item() == 5.0
    assert_close(p, [0.8, -1.6], rtol=1e-15, atol=0)


def test_step_runs_without_grad_and_reports_running_step():
    seen = []

    class Custom(optim.SGD):
        def step(self, closure=None):
            seen.append((gputorch.is_grad_enabled(), running_step()))
            return super().step(closure)
    p = Parameter(gputorch.ones(1))
    opt = Custom([p], lr=0.1)
    calls = []
    opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    p.grad = gputorch.ones(1)
    opt.step()
    assert seen == [(False, opt)]
    assert calls == ["pre"]  # hooks run once although super().step() is hooked too
    assert running_step() is None and gputorch.is_grad_enabled()


def test_step_hooks_order_and_removal():
    p = Parameter(gputorch.ones(1))
    opt = optim.SGD([p], lr=0.1)
    calls = []
    handles = [optim.register_optimizer_step_pre_hook(lambda o, a, k: calls.append("global pre")),
               optim.register_optimizer_step_post_hook(lambda o, a, k: calls.append("global post")),
               opt.register_step_pre_hook(lambda o, a, k: calls.append("pre")),
               opt.register_step_post_hook(lambda o, a, k: calls.append(("post", running_step())))]
    try:
        p.grad = gputorch.ones(1)
        opt.step()
        assert calls == ["global pre", "pre", ("post", None), "global post"]
    finally:
        for h in handles:
            h.remove()
    calls.clear()
    opt.step()
    assert calls == []


def test_pre_hook_can_replace_arguments():
    p = Parameter(gputorch.ones(1))
    opt = optim.SGD([p], lr=0.1)
    closure_calls = []
    opt.register_step_pre_hook(lambda o, args, kwargs: ((), {"closure": lambda: closure_calls.append(1)}))
    opt.step()
    assert closure_calls == [1]
    bad = optim.SGD([Parameter(gputorch.ones(1))], lr=0.1)
    bad.register_step_pre_hook(lambda o, args, kwargs: 3)
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        bad.step()


def test_state_dict_hooks():
    p = Parameter(gputorch.ones(1))
    opt = optim.SGD([p], lr=0.1)
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: dict(sd, extra=1))
    opt.register_load_state_dict_pre_hook(lambda o, sd: calls.append("load pre"))
    opt.register_load_state_dict_post_hook(lambda o: calls.append("load post"), prepend=True)
    sd = opt.state_dict()
    assert sd["extra"] == 1
    opt.load_state_dict(sd)
    assert calls == ["pre", "load pre", "load post"]


def test_backend_override_receives_arrays(device):
    p = Parameter(gputorch.ones(3, device=device))
    p.grad = gputorch.ones(3, device=device)
    backend = p.device.backend
    received = []

    def fake_update(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, **hyper):
        received.append((type(params[0]) is type(p._data), steps, sorted(hyper)))
    backend.overrides[adam_update] = fake_update
    try:
        optim.Adam([p], lr=0.1).step()
    finally:
        del backend.overrides[adam_update]
    assert received == [(True, [1.0], ["amsgrad", "beta1", "beta2", "decoupled_weight_decay", "eps", "lr",
                                       "maximize", "weight_decay", "xp"])]
    assert p.tolist() == [1.0, 1.0, 1.0]


def test_zero_grad(device):
    p = Parameter(gputorch.ones(2, device=device))
    opt = optim.SGD([p], lr=0.1)
    p.grad = gputorch.ones(2, device=device)
    grad = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is grad and p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_repr_matches_torch():
    torch = pytest.importorskip("torch")
    ours = optim.Adam([{"params": [Parameter(gputorch.ones(1))]}, {"params": [Parameter(gputorch.ones(1))],
                                                                     "lr": 0.5}])
    theirs = torch.optim.Adam([{"params": [torch.nn.Parameter(torch.ones(1))]},
                               {"params": [torch.nn.Parameter(torch.ones(1))], "lr": 0.5}])
    assert repr(ours) == repr(theirs)


def test_deepcopy_and_pickle_state():
    import pickle
    p = Parameter(gputorch.ones(2))
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    opt.register_step_pre_hook(lambda *a: None)
    p.grad = gputorch.ones(2)
    opt.step()
    clone = copy.deepcopy(opt)
    assert clone.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    assert len(clone._optimizer_step_pre_hooks) == 0
    restored = pickle.loads(pickle.dumps(opt))
    q = restored.param_groups[0]["params"][0]
    assert restored.state[q]["momentum_buffer"].tolist() == [1.0, 1.0]
    q.grad = gputorch.ones(2)
    restored.step()
    assert_close(q, p.detach() - 0.1 * 1.9, rtol=1e-7, atol=1e-7)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("name,kwargs,message", [
    ("SGD", {"lr": -0.1}, "Invalid learning rate: -0.1"),
    ("SGD", {"momentum": -1}, "Invalid momentum value"),
    ("SGD", {"weight_decay": -1}, "Invalid weight_decay value"),
    ("SGD", {"nesterov": True}, "Nesterov momentum requires a momentum and zero dampening"),
    ("SGD", {"nesterov": True, "momentum": 0.9, "dampening": 0.1}, "Nesterov momentum requires"),
    ("Adam", {"lr": -1e-3}, "Invalid learning rate"),
    ("Adam", {"eps": -1}, "Invalid epsilon value"),
    ("Adam", {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
    ("Adam", {"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1"),
    ("Adam", {"betas": (0, 0.9)}, "betas must be either both floats or both Tensors"),
    ("AdamW", {"weight_decay": -0.1}, "Invalid weight_decay value"),
    ("RMSprop", {"alpha": -0.1}, "Invalid alpha value"),
    ("RMSprop", {"momentum": -0.1}, "Invalid momentum value"),
    ("Adagrad", {"lr_decay": -0.1}, "Invalid lr_decay value"),
    ("Adagrad", {"initial_accumulator_value": -1}, "Invalid initial_accumulator_value value"),
    ("Adadelta", {"rho": 1.5}, "Invalid rho value"),
])
def test_invalid_hyperparameters(name, kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        getattr(optim, name)([Parameter(gputorch.ones(1))], **kwargs)


def test_invalid_params():
    p = Parameter(gputorch.ones(1))
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        optim.SGD([1.0], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {p}}], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([p, p], lr=0.1)
    with pytest.raises(TypeError, match="param_group must be a dict"):
        optim.SGD([p], lr=0.1).add_param_group([p])
    with pytest.raises(NotImplementedError, match="differentiable"):
        optim.Adam([p], differentiable=True)
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        optim.Adam([p], fused=True, foreach=True)


def test_required_hyperparameter():
    from gputorch.optim.optimizer import required

    class NeedsLR(optim.Optimizer):
        def __init__(self, params, lr=required):
            super().__init__(params, {"lr": lr})
    with pytest.raises(ValueError, match="didn't specify a value of required optimization parameter lr"):
        NeedsLR([Parameter(gputorch.ones(1))])
    assert NeedsLR([{"params": [Parameter(gputorch.ones(1))], "lr": 0.1}]).param_groups[0]["lr"] == 0.1


def test_add_param_group_fills_defaults():
    opt = optim.SGD([Parameter(gputorch.ones(1))], lr=0.1, momentum=0.9)
    extra = Parameter(gputorch.ones(2))
    opt.add_param_group({"params": extra, "lr": 0.01})
    group = opt.param_groups[1]
    assert group["params"] == [extra] and group["lr"] == 0.01 and group["momentum"] == 0.9


def test_sparse_gradients_are_rejected():
    p = Parameter(gputorch.ones(2))

    class SparseLike(gputorch.Tensor):
        is_sparse = True
    p._grad = SparseLike._make_subclass(gputorch.ones(2))
    for name in ("SGD", "Adam", "RMSprop", "Adagrad", "Adadelta"):
        with pytest.raises(RuntimeError, match="does not support sparse gradients"):
            getattr(optim, name)([p], lr=0.1).step()


def test_no_warning_in_normal_use():
    p = Parameter(gputorch.ones(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt = optim.AdamW([p])
        p.grad = gputorch.ones(2)
        opt.step()


def test_rmsprop_momentum_turned_on_later():
    p = Parameter(gputorch.ones(2, dtype=gputorch.float64))
    opt = optim.RMSprop([p], lr=0.1)
    p.grad = gputorch.ones(2, dtype=gputorch.float64)
    opt.step()
    opt.param_groups[0]["momentum"] = 0.9
    opt.param_groups[0]["centered"] = True
    opt.step()
    assert set(opt.state[p]) == {"step", "square_avg", "momentum_buffer", "grad_avg"}


def test_step_counter_stays_on_cpu_with_a_cuda_default_device():
    if not gputorch.cuda.is_available():
        pytest.skip("needs a (real or simulated) CUDA device")
    gputorch.set_default_device("cuda")
    try:
        p = Parameter(gputorch.ones(2))
        opt = optim.Adam([p])
        p.grad = gputorch.ones(2)
        opt.step()
    finally:
        gputorch.set_default_device(None)
    assert opt.state[p]["step"].device.type == "cpu" and opt.state[p]["exp_avg"].device.type == "cuda"
