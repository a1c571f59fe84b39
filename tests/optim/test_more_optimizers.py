"""NAdam, RAdam, Adamax, ASGD, Rprop, LBFGS and SparseAdam: trajectories equal to PyTorch's in
float64 (several parameter groups, every option that changes the numerics), state dicts that
interchange with PyTorch's in both directions, state on the parameter's device, PyTorch's errors."""
import inspect

import numpy as np
import pytest

import gputorch
from gputorch import optim
from gputorch.nn import Parameter
from tests._helpers import assert_same_across_devices

CASES = [
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05, "betas": (0.5, 0.9), "momentum_decay": 0.3, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.2, "decoupled_weight_decay": True, "maximize": True, "eps": 1e-4}),
    ("RAdam", {"lr": 0.05}),
    ("RAdam", {"lr": 0.05, "betas": (0.8, 0.9), "weight_decay": 0.1, "maximize": True}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.2, "decoupled_weight_decay": True, "eps": 1e-3}),
    ("Adamax", {"lr": 0.05}),
    ("Adamax", {"lr": 0.05, "betas": (0.5, 0.8), "eps": 1e-3, "weight_decay": 0.1, "maximize": True}),
    ("ASGD", {"lr": 0.05, "t0": 5}),
    ("ASGD", {"lr": 0.05, "lambd": 0.1, "alpha": 0.5, "t0": 3.5, "weight_decay": 0.1, "maximize": True}),
    ("ASGD", {"lr": 0.05}),
    ("Rprop", {"lr": 0.05}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (0.01, 0.08), "maximize": True}),
    ("Adafactor", {"lr": 0.05}),
    ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-6, 1e-2), "d": 1.5, "weight_decay": 0.1,
                   "maximize": True}),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in CASES]
STEPS = 20
NAMES = ("w", "b", "unused")


def _problem(seed=0, steps=STEPS):
    """Initial weights and one least-squares batch per step."""
    rng = np.random.default_rng(seed)
    weights = {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2), "unused": rng.standard_normal(4)}
    batches = [(rng.standard_normal((6, 3)), rng.standard_normal((6, 2))) for _ in range(steps)]
    return weights, batches


def _groups(params, kwargs):
    """Two parameter groups: ``w`` with its own learning rate, ``b`` and a parameter without gradients."""
    return [{"params": [params[0]], "lr": kwargs["lr"] * 0.5}, {"params": params[1:]}]


def _loss(lib, params, x, y, sign, device=None):
    """A least-squares loss plus a quartic term (negated for ``maximize``)."""
    w, b = params[0], params[1]
    as_tensor = (lambda a: lib.tensor(a, device=device)) if device else lib.tensor
    residual = as_tensor(x) @ w + b - as_tensor(y)
    return sign * ((residual * residual).sum() + 0.1 * (w ** 4).sum())


def _train(lib, opt, params, batches, sign, device=None):
    history = []
    for x, y in batches:
        opt.zero_grad()
        _loss(lib, params, x, y, sign, device).backward()
        opt.step()
        history.append([_numpy(p) for p in params])
    return history


def _numpy(t):
    return t.detach().cpu().numpy().copy()


def _torch_params(torch, weights):
    return [torch.nn.Parameter(torch.tensor(weights[k])) for k in NAMES]


def _our_params(weights, device):
    return [Parameter(gputorch.tensor(weights[k], device=device)) for k in NAMES]


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


def _assert_state_equal(ours, theirs, device, host_keys, rtol=1e-10):
    """Same keys in the same order, same dtypes and values; tensors on ``device`` except the
    scalars that PyTorch keeps on the CPU (``host_keys``)."""
    assert list(ours) == list(theirs)
    for idx, tstate in theirs.items():
        assert list(ours[idx]) == list(tstate), idx
        for key, value in tstate.items():
            mine = ours[idx][key]
            if not hasattr(value, "numpy"):
                assert type(mine) is type(value) and mine == pytest.approx(value, rel=rtol), key
                continue
            assert isinstance(mine, gputorch.Tensor), key
            assert mine.dtype.name == str(value.dtype).replace("torch.", ""), key
            assert mine.device.type == ("cpu" if key in host_keys else device), key
            np.testing.assert_allclose(_numpy(mine), value.numpy(), rtol=rtol, atol=1e-14, err_msg=key)


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_trajectory_and_state_match_torch(name, kwargs, device):
    torch = pytest.importorskip("torch")
    weights, batches = _problem()
    sign = -1 if kwargs.get("maximize") else 1
    tparams = _torch_params(torch, weights)
    topt = getattr(torch.optim, name)(_groups(tparams, kwargs), **kwargs)
    expected = _train(torch, topt, tparams, batches, sign)
    params = _our_params(weights, device)
    opt = getattr(optim, name)(_groups(params, kwargs), **kwargs)
    got = _train(gputorch, opt, params, batches, sign, device)
    for step, (e, g) in enumerate(zip(expected, got)):
        for te, ge in zip(e, g):
            np.testing.assert_allclose(ge, te, rtol=1e-10, atol=1e-13, err_msg=f"step {step}")
    assert not np.array_equal(got[-1][0], weights["w"])
    np.testing.assert_array_equal(got[-1][2], weights["unused"])
    tsd, sd = topt.state_dict(), opt.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    _assert_state_equal(sd["state"], tsd["state"], device, () if name == "ASGD" else ("step", "mu_product"))


@pytest.mark.parametrize("name", ["NAdam", "RAdam", "Adamax", "ASGD", "Rprop", "Adafactor"])
def test_tensor_lr_matches_float_lr(name):
    weights, batches = _problem(steps=4)
    results = []
    for lr in (0.05, gputorch.tensor(0.05, dtype=gputorch.float64)):
        params = _our_params(weights, "cpu")
        results.append(_train(gputorch, getattr(optim, name)(params, lr=lr), params, batches, 1)[-1])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_radam_switches_to_the_adaptive_step():
    """The trajectory test covers both regimes: rho_t <= 5 for the first steps, > 5 later."""
    beta2 = 0.999
    rho_inf = 2 / (1 - beta2) - 1
    rho = [rho_inf - 2 * t * beta2 ** t / (1 - beta2 ** t) for t in range(1, STEPS + 1)]
    assert rho[0] <= 5 < rho[-1]


def test_asgd_averages_after_t0(device):
    weights, batches = _problem(steps=8)
    params = _our_params(weights, device)
    opt = optim.ASGD(params, lr=0.05, t0=3)
    _train(gputorch, opt, params, batches, 1, device)
    state = opt.state[params[0]]
    assert state["mu"].item() == pytest.approx(1 / 5) and state["eta"].dtype == gputorch.float32
    assert not np.allclose(_numpy(state["ax"]), _numpy(params[0]))  # averaging, not copying


@pytest.mark.parametrize("name,kwargs", CASES[1::2], ids=IDS[1::2])
def test_state_dict_from_torch_and_back(name, kwargs, device):
    torch = pytest.importorskip("torch")
    weights, batches = _problem()
    sign = -1 if kwargs.get("maximize") else 1
    tparams = _torch_params(torch, weights)
    topt = getattr(torch.optim, name)(_groups(tparams, kwargs), **kwargs)
    _train(torch, topt, tparams, batches[:6], sign)
    resumed = {k: _numpy(p) for k, p in zip(NAMES, tparams)}
    saved = topt.state_dict()
    converted = _to_ours(saved)  # (PyTorch's loading shares the tensors, which then change)
    # PyTorch resuming from its own state dict (loading casts its scalars as it casts ours) ...
    tparams2 = _torch_params(torch, resumed)
    topt2 = getattr(torch.optim, name)(_groups(tparams2, kwargs), **kwargs)
    topt2.load_state_dict(saved)
    expected = _train(torch, topt2, tparams2, batches[6:12], sign)
    # ... and gputorch resuming from the same state dict
    params = _our_params(resumed, device)
    opt = getattr(optim, name)(_groups(params, kwargs), **kwargs)
    opt.load_state_dict(converted)
    got = _train(gputorch, opt, params, batches[6:12], sign, device)
    for e, g in zip(expected[-1], got[-1]):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-13)
    # gputorch's state dict loads into PyTorch, which then continues as gputorch does
    tparams3 = _torch_params(torch, {k: _numpy(p) for k, p in zip(NAMES, params)})
    topt3 = getattr(torch.optim, name)(_groups(tparams3, kwargs), **kwargs)
    topt3.load_state_dict(_to_torch(torch, opt.state_dict()))
    assert topt3.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    expected = _train(torch, topt3, tparams3, batches[12:], sign)
    got = _train(gputorch, opt, params, batches[12:], sign, device)
    for e, g in zip(expected[-1], got[-1]):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("name,kwargs", CASES[::3] + CASES[-1:], ids=IDS[::3] + IDS[-1:])
def test_state_follows_parameter_to_another_device(name, kwargs):
    if not gputorch.cuda.is_available():
        pytest.skip("needs a (real or simulated) CUDA device")
    weights, batches = _problem(steps=6)
    sign = -1 if kwargs.get("maximize") else 1
    reference = _our_params(weights, "cpu")
    ref_opt = getattr(optim, name)(reference, **kwargs)
    expected = _train(gputorch, ref_opt, reference, batches, sign)
    model = gputorch.nn.ParameterList(_our_params(weights, "cpu"))
    opt = getattr(optim, name)(model.parameters(), **kwargs)
    _train(gputorch, opt, list(model), batches[:3], sign)
    model.to("cuda")
    got = _train(gputorch, opt, list(model), batches[3:], sign, "cuda")
    for e, g in zip(expected[-1], got[-1]):
        assert_same_across_devices(g, e)
    for state in opt.state.values():
        for key, value in state.items():
            if value.dim() > 0:
                assert value.device.type == "cuda", key


def test_rprop_step_sizes_follow_gradient_signs():
    p = Parameter(gputorch.tensor([1.0, 1.0, 1.0], dtype=gputorch.float64))
    opt = optim.Rprop([p], lr=0.1, etas=(0.5, 2.0), step_sizes=(0.01, 0.3))
    for grad in ([1.0, 1.0, 0.0], [1.0, -1.0, 1.0], [1.0, 1.0, 1.0]):
        p.grad = gputorch.tensor(grad, dtype=gputorch.float64)
        opt.step()
    # coordinate 0: 0.1 -> 0.2 -> 0.3 (clamped); 1: 0.1 -> 0.05 (sign flip: no move) -> 0.05 (the
    # flipped gradient was stored as 0); 2: 0.1 (zero gradient: no move) -> 0.1 -> 0.2
    assert opt.state[p]["step_size"].tolist() == pytest.approx([0.3, 0.05, 0.2])
    assert p.tolist() == pytest.approx([1 - 0.1 - 0.2 - 0.3, 1 - 0.1 - 0.05, 1 - 0.1 - 0.2])


# ---------------------------------------------------------------- LBFGS
LBFGS_CASES = [
    {},
    {"line_search_fn": "strong_wolfe"},
    {"lr": 0.5, "history_size": 3, "max_iter": 7},
    {"history_size": 2, "max_iter": 12, "line_search_fn": "strong_wolfe"},
    {"max_iter": 30, "max_eval": 20, "tolerance_grad": 1e-2, "tolerance_change": 1e-4},
    {"max_iter": 40, "tolerance_change": 1e-3, "line_search_fn": "strong_wolfe"},
    {"max_iter": 9, "max_eval": 10, "line_search_fn": "strong_wolfe"},
]
LBFGS_IDS = ["-".join(f"{k}={v}" for k, v in kw.items()) or "default" for kw in LBFGS_CASES]


def _rosenbrock(z, scale=10.0):
    """A Rosenbrock-like function of the flat vector ``z`` and its gradient (NumPy, so that both
    libraries see bit-identical losses and gradients and only the optimizers are compared)."""
    a, b = z[:-1], z[1:]
    value = np.sum(scale * (b - a * a) ** 2 + (1 - a) ** 2)
    grad = np.zeros_like(z)
    grad[:-1] += -4 * scale * a * (b - a * a) - 2 * (1 - a)
    grad[1:] += 2 * scale * (b - a * a)
    return value, grad


def _lbfgs_run(lib, kwargs, start, steps, device=None, opt=None, params=None):
    """``steps`` calls of ``opt.step(closure)``; returns ``[(loss, closure calls so far, params)]``."""
    def as_tensor(a):
        return lib.tensor(a, device=device) if device else lib.tensor(a)
    if params is None:
        params = [lib.nn.Parameter(as_tensor(a)) for a in start]
    if opt is None:
        opt = lib.optim.LBFGS(params, **kwargs)
    calls, history = [0], []

    def closure():
        calls[0] += 1
        value, grad = _rosenbrock(np.concatenate([_numpy(p) for p in params]))
        params[0].grad, params[1].grad = as_tensor(grad[:2]), as_tensor(grad[2:])
        return as_tensor(value)
    for _ in range(steps):
        loss = opt.step(closure)
        history.append((float(loss), calls[0], [_numpy(p) for p in params]))
    return history, opt, params


_START = (np.array([-1.2, 1.0]), np.array([-0.5, 0.8, 1.1]))


@pytest.mark.parametrize("kwargs", LBFGS_CASES, ids=LBFGS_IDS)
def test_lbfgs_matches_torch(kwargs, device):
    torch = pytest.importorskip("torch")
    expected, topt, _ = _lbfgs_run(torch, kwargs, _START, 4)
    got, opt, _ = _lbfgs_run(gputorch, kwargs, _START, 4, device)
    for (tloss, tcalls, tparams), (loss, calls, params) in zip(expected, got):
        assert calls == tcalls
        assert loss == pytest.approx(tloss, rel=1e-10)
        for e, g in zip(tparams, params):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    assert got[-1][0] < got[0][0] / 2
    tstate = topt.state_dict()["state"][0]
    state = opt.state_dict()["state"][0]
    assert list(state) == list(tstate)
    assert state["func_evals"] == tstate["func_evals"] and state["n_iter"] == tstate["n_iter"]
    assert len(state["old_dirs"]) == len(tstate["old_dirs"]) <= kwargs.get("history_size", 100)
    # d is a difference of nearly equal gradients: its small entries carry the rounding of the GPU's
    # fused multiply-adds (an H200 moved one by 1e-12)
    np.testing.assert_allclose(_numpy(state["d"]), tstate["d"].numpy(), rtol=1e-8, atol=1e-11)
    assert state["d"].device.type == device
    assert opt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]


@pytest.mark.parametrize("kwargs", LBFGS_CASES[:2], ids=LBFGS_IDS[:2])
def test_lbfgs_state_dict_from_torch_and_back(kwargs, device):
    torch = pytest.importorskip("torch")
    first, topt, tparams = _lbfgs_run(torch, kwargs, _START, 1)
    start = [_numpy(p) for p in tparams]
    saved = topt.state_dict()
    converted = _to_ours(saved)
    tparams2 = [torch.nn.Parameter(torch.tensor(a)) for a in start]
    topt2 = torch.optim.LBFGS(tparams2, **kwargs)
    topt2.load_state_dict(saved)
    expected, _, _ = _lbfgs_run(torch, kwargs, None, 2, opt=topt2, params=tparams2)
    params = [Parameter(gputorch.tensor(a, device=device)) for a in start]
    opt = optim.LBFGS(params, **kwargs)
    opt.load_state_dict(converted)
    got, _, _ = _lbfgs_run(gputorch, kwargs, None, 2, device, opt=opt, params=params)
    for (tloss, tcalls, tp), (loss, calls, p) in zip(expected, got):
        assert calls == tcalls
        for e, g in zip(tp, p):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    # and back into PyTorch
    tparams3 = [torch.nn.Parameter(torch.tensor(_numpy(p))) for p in params]
    topt3 = torch.optim.LBFGS(tparams3, **kwargs)
    topt3.load_state_dict(_to_torch(torch, opt.state_dict()))
    expected, _, _ = _lbfgs_run(torch, kwargs, None, 1, opt=topt3, params=tparams3)
    got, _, _ = _lbfgs_run(gputorch, kwargs, None, 1, device, opt=opt, params=params)
    for e, g in zip(expected[-1][2], got[-1][2]):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    assert opt.state[params[0]]["func_evals"] == topt3.state[tparams3[0]]["func_evals"]


def test_lbfgs_stops_at_a_minimum():
    p = Parameter(gputorch.zeros(3, dtype=gputorch.float64))
    opt = optim.LBFGS([p])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    assert opt.step(closure).item() == 0.0
    assert len(calls) == 1 and opt.state[p] == {"func_evals": 1, "n_iter": 0}


def test_lbfgs_closure_runs_with_grad_inside_a_hooked_step(device):
    from gputorch.optim.optimizer import running_step
    p = Parameter(gputorch.tensor([1.0, -2.0], dtype=gputorch.float64, device=device))
    opt = optim.LBFGS([p], line_search_fn="strong_wolfe")
    seen, hooks = [], []
    opt.register_step_pre_hook(lambda o, args, kwargs: hooks.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: hooks.append("post"))

    def closure():
        seen.append((gputorch.is_grad_enabled(), running_step() is opt))
        opt.zero_grad()
        loss = ((p - 3) ** 2).sum()
        loss.backward()
        return loss
    with gputorch.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 29.0 and hooks == ["pre", "post"]
    assert len(seen) > 1 and set(seen) == {(True, True)}
    np.testing.assert_allclose(_numpy(p), [3.0, 3.0], rtol=1e-12)


def test_lbfgs_errors():
    p = Parameter(gputorch.ones(2))
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'closure'"):
        optim.LBFGS([p]).step()
    with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options \(parameter groups\)"):
        optim.LBFGS([{"params": [p]}, {"params": [Parameter(gputorch.ones(1))]}])
    opt = optim.LBFGS([p], line_search_fn="backtracking")

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


# ---------------------------------------------------------------- SparseAdam
def test_sparse_adam_refuses_dense_gradients():
    p = Parameter(gputorch.ones(2))
    opt = optim.SparseAdam([p])
    assert opt.step() is None  # no gradient yet: nothing to do
    p.grad = gputorch.ones(2)
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, please consider Adam"):
        opt.step()
    assert opt.param_groups[0]["betas"] == (0.9, 0.999) and opt.param_groups[0]["maximize"] is False


# ---------------------------------------------------------------- signatures and bad input
@pytest.mark.parametrize("name", ["NAdam", "RAdam", "Adamax", "ASGD", "Rprop", "SparseAdam", "LBFGS", "Adafactor"])
def test_signature_matches_torch(name):
    torch = pytest.importorskip("torch")
    ours = inspect.signature(getattr(optim, name)).parameters
    theirs = inspect.signature(getattr(torch.optim, name)).parameters
    assert [(k, p.kind, p.default) for k, p in ours.items()] == [(k, p.kind, p.default) for k, p in theirs.items()]


@pytest.mark.parametrize("name,kwargs,exc,message", [
    ("NAdam", {"lr": -1}, ValueError, "Invalid learning rate: -1"),
    ("NAdam", {"eps": -1}, ValueError, "Invalid epsilon value: -1"),
    ("NAdam", {"betas": (1.0, 0.9)}, ValueError, "Invalid beta parameter at index 0: 1.0"),
    ("NAdam", {"momentum_decay": -0.1}, ValueError, "Invalid momentum_decay value: -0.1"),
    ("NAdam", {"weight_decay": -0.1}, ValueError, "Invalid weight_decay value: -0.1"),
    ("RAdam", {"betas": (0.9, 1.5)}, ValueError, "Invalid beta parameter at index 1: 1.5"),
    ("RAdam", {"weight_decay": -1}, ValueError, "Invalid weight_decay value: -1"),
    ("Adamax", {"eps": -1e-3}, ValueError, "Invalid epsilon value: -0.001"),
    ("Adamax", {"betas": (-0.1, 0.9)}, ValueError, "Invalid beta parameter at index 0: -0.1"),
    ("ASGD", {"lr": -0.5}, ValueError, "Invalid learning rate: -0.5"),
    ("ASGD", {"weight_decay": -1}, ValueError, "Invalid weight_decay value: -1"),
    ("Rprop", {"etas": (1.5, 2.0)}, ValueError, "Invalid eta values: 1.5, 2.0"),
    ("Rprop", {"etas": (0.5, 0.9)}, ValueError, "Invalid eta values: 0.5, 0.9"),
    ("SparseAdam", {"lr": 0}, ValueError, "Invalid learning rate: 0"),
    ("SparseAdam", {"eps": 0}, ValueError, "Invalid epsilon value: 0"),
    ("SparseAdam", {"betas": (0.9, 1.0)}, ValueError, "Invalid beta parameter at index 1: 1.0"),
    ("LBFGS", {"lr": -1}, ValueError, "Invalid learning rate: -1"),
    ("Adafactor", {"lr": -1}, ValueError, "Learning rate should be >= 0 but is: -1"),
    ("Adafactor", {"beta2_decay": 0.5}, ValueError, "beta2_decay should be <= 0 but is: 0.5"),
    ("Adafactor", {"eps": (-1, 1e-3)}, ValueError, "epsilon1 should be >= 0 but is: -1"),
    ("Adafactor", {"eps": (None, -1)}, ValueError, "epsilon2 should be >= 0 but is: -1"),
    ("Adafactor", {"d": 0.5}, ValueError, "Clipping threshold d should be >= 1 but is: 0.5"),
    ("Adafactor", {"weight_decay": -1}, ValueError, "weight_decay should be >= 0 but is: -1"),
])
def test_invalid_hyperparameters_like_torch(name, kwargs, exc, message):
    torch = pytest.importorskip("torch")
    with pytest.raises(exc, match=message) as theirs:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1))], **kwargs)
    with pytest.raises(exc) as ours:
        getattr(optim, name)([Parameter(gputorch.ones(1))], **kwargs)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["NAdam", "RAdam", "Adamax", "ASGD", "Rprop"])
def test_sparse_gradients_rejected_and_flags_accepted(name):
    p = Parameter(gputorch.ones(2))
    opt = getattr(optim, name)([p], foreach=False, capturable=True)
    assert opt.param_groups[0]["foreach"] is False and opt.param_groups[0]["capturable"] is True

    class SparseLike(gputorch.Tensor):
        is_sparse = True
    p._grad = SparseLike._make_subclass(gputorch.ones(2))
    with pytest.raises(RuntimeError, match=f"{name} does not support sparse gradients"):
        opt.step()
