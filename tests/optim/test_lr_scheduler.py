"""Learning-rate schedulers: lr sequences identical to PyTorch's, state dicts with PyTorch's keys
and round trips, warnings and errors."""
import copy
import math
import pickle
import warnings

import pytest

import gputorch
from gputorch import optim
from gputorch.nn import Parameter
from gputorch.optim import lr_scheduler as ours_lr

torch = pytest.importorskip("torch")
theirs_lr = torch.optim.lr_scheduler

STEPS = 60


class Warmup:
    """A callable object: its attributes go into LambdaLR's state dict."""

    def __init__(self, steps):
        self.steps = steps

    def __call__(self, epoch):
        return min(1.0, (epoch + 1) / self.steps)


# name -> (optimizer name, optimizer kwargs, factory(lr_scheduler_module, optimizer))
SCHEDULERS = {
    "LambdaLR": ("SGD", {}, lambda L, o: L.LambdaLR(o, lambda e: 0.95 ** e)),
    "LambdaLR-object": ("SGD", {}, lambda L, o: L.LambdaLR(o, Warmup(7))),
    "LambdaLR-per-group": ("SGD", {}, lambda L, o: L.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)])),
    "MultiplicativeLR": ("SGD", {}, lambda L, o: L.MultiplicativeLR(o, lambda e: 0.97)),
    "StepLR": ("SGD", {}, lambda L, o: L.StepLR(o, step_size=7, gamma=0.5)),
    "MultiStepLR": ("SGD", {}, lambda L, o: L.MultiStepLR(o, milestones=[5, 12, 12, 40], gamma=0.3)),
    "ConstantLR": ("SGD", {}, lambda L, o: L.ConstantLR(o, factor=0.25, total_iters=9)),
    "LinearLR": ("SGD", {}, lambda L, o: L.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=23)),
    "LinearLR-decay": ("SGD", {}, lambda L, o: L.LinearLR(o, start_factor=1.0, end_factor=0.05, total_iters=37)),
    "ExponentialLR": ("SGD", {}, lambda L, o: L.ExponentialLR(o, gamma=0.93)),
    "CosineAnnealingLR": ("SGD", {}, lambda L, o: L.CosineAnnealingLR(o, T_max=17, eta_min=0.001)),
    "CosineAnnealingWarmRestarts": ("SGD", {}, lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2,
                                                                                        eta_min=0.01)),
    "PolynomialLR": ("SGD", {}, lambda L, o: L.PolynomialLR(o, total_iters=45, power=2.5)),
    "OneCycleLR-cos": ("SGD", {"momentum": 0.9}, lambda L, o: L.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=STEPS)),
    "OneCycleLR-linear-three-phase": ("SGD", {"momentum": 0.9}, lambda L, o: L.OneCycleLR(
        o, max_lr=0.8, epochs=6, steps_per_epoch=10, anneal_strategy="linear", three_phase=True, pct_start=0.25)),
    "OneCycleLR-adam": ("Adam", {}, lambda L, o: L.OneCycleLR(o, max_lr=0.01, total_steps=STEPS, div_factor=10.0,
                                                              final_div_factor=100.0)),
    "OneCycleLR-no-momentum": ("Adagrad", {}, lambda L, o: L.OneCycleLR(o, max_lr=0.3, total_steps=STEPS,
                                                                         cycle_momentum=False)),
    "CyclicLR": ("SGD", {"momentum": 0.9}, lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=7)),
    "CyclicLR-triangular2": ("SGD", {"momentum": 0.9}, lambda L, o: L.CyclicLR(
        o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=4, step_size_down=9, mode="triangular2")),
    "CyclicLR-exp-range-adam": ("Adam", {}, lambda L, o: L.CyclicLR(o, base_lr=0.001, max_lr=0.01, step_size_up=5,
                                                                    mode="exp_range", gamma=0.97)),
    "SequentialLR": ("SGD", {}, lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, start_factor=0.1, total_iters=10), L.CosineAnnealingLR(o, T_max=25),
            L.ExponentialLR(o, gamma=0.9)], milestones=[10, 35])),
    "ChainedScheduler": ("SGD", {}, lambda L, o: L.ChainedScheduler(
        [L.ConstantLR(o, factor=0.5, total_iters=8), L.ExponentialLR(o, gamma=0.95)])),
}


def _groups(lib, kind):
    p1 = lib.nn.Parameter(lib.ones(2))
    p2 = lib.nn.Parameter(lib.ones(3))
    return [{"params": [p1]}, {"params": [p2], "lr": 0.05}]


def _build(lib, module, name):
    opt_name, kwargs, factory = SCHEDULERS[name]
    opt = getattr(lib.optim, opt_name)(_groups(lib, opt_name), lr=0.1, **kwargs)
    return opt, factory(module, opt)


def _momentum(group):
    return group["betas"][0] if "betas" in group else group.get("momentum")


def _run(lib, opt, sched, steps):
    """Record (lrs, momenta) after each optimizer + scheduler step."""
    seq = []
    for _ in range(steps):
        for group in opt.param_groups:
            for p in group["params"]:
                p.grad = lib.zeros_like(p)
        opt.step()
        sched.step()
        seq.append((list(sched.get_last_lr()), [_momentum(g) for g in opt.param_groups]))
    return seq


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_lr_sequence_matches_torch(name):
    topt, tsched = _build(torch, theirs_lr, name)
    opt, sched = _build(gputorch, ours_lr, name)
    assert sched.get_last_lr() == tsched.get_last_lr()
    assert [g["lr"] for g in opt.param_groups] == [g["lr"] for g in topt.param_groups]
    steps = STEPS - 1 if name.startswith("OneCycle") else STEPS
    assert _run(gputorch, opt, sched, steps) == _run(torch, topt, tsched, steps)  # exactly equal


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_state_dict_keys_match_torch(name):
    _, tsched = _build(torch, theirs_lr, name)
    _, sched = _build(gputorch, ours_lr, name)
    tsd, sd = tsched.state_dict(), sched.state_dict()
    assert sorted(sd) == sorted(tsd)
    if "_schedulers" in sd:
        for child, tchild in zip(sd["_schedulers"], tsd["_schedulers"]):
            assert sorted(child) == sorted(tchild)
    for key in ("last_epoch", "base_lrs", "_last_lr", "_step_count"):
        if key in tsd:
            assert sd[key] == tsd[key]


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_state_dict_round_trip(name):
    opt, sched = _build(gputorch, ours_lr, name)
    _run(gputorch, opt, sched, 13)
    saved = copy.deepcopy(sched.state_dict())
    opt_state = copy.deepcopy(opt.state_dict())
    opt2, sched2 = _build(gputorch, ours_lr, name)
    opt2.load_state_dict(opt_state)
    sched2.load_state_dict(saved)
    if name == "LambdaLR-object":
        assert saved["lr_lambdas"] == [{"steps": 7}, {"steps": 7}]
    assert _run(gputorch, opt2, sched2, 20) == _run(gputorch, opt, sched, 20)


def test_load_torch_scheduler_state_dict():
    topt, tsched = _build(torch, theirs_lr, "CosineAnnealingLR")
    _run(torch, topt, tsched, 11)
    opt, sched = _build(gputorch, ours_lr, "CosineAnnealingLR")
    for group, tgroup in zip(opt.param_groups, topt.param_groups):
        group["lr"] = tgroup["lr"]
    sched.load_state_dict(tsched.state_dict())
    assert _run(gputorch, opt, sched, 20) == _run(torch, topt, tsched, 20)


def test_state_dict_is_picklable():
    opt, sched = _build(gputorch, ours_lr, "OneCycleLR-cos")
    restored = pickle.loads(pickle.dumps(sched.state_dict()))
    assert restored["_schedule_phases"] == sched.state_dict()["_schedule_phases"]


@pytest.mark.parametrize("config", [
    {},
    {"mode": "max", "factor": 0.5, "patience": 2},
    {"threshold_mode": "abs", "threshold": 0.05, "cooldown": 3, "patience": 1},
    {"mode": "max", "threshold_mode": "abs", "min_lr": [0.02, 0.001], "patience": 0},
    {"factor": 0.5, "patience": 0, "min_lr": 0.0999, "eps": 1e-3},
])
def test_reduce_lr_on_plateau_matches_torch(config):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.89, 0.9, 0.91, 0.92, 0.5, 0.5, 0.5, 0.6, 0.7, 0.4, 0.4] * 4

    def run(lib, module):
        opt = lib.optim.SGD(_groups(lib, "SGD"), lr=0.1)
        sched = module.ReduceLROnPlateau(opt, **config)
        seq = []
        for m in metrics:
            opt.step()
            sched.step(m)
            seq.append((sched.get_last_lr(), sched.num_bad_epochs, sched.cooldown_counter, sched.best))
        return seq, sched
    ours, sched = run(gputorch, ours_lr)
    theirs, tsched = run(torch, theirs_lr)
    assert ours == theirs
    assert sorted(sched.state_dict()) == sorted(tsched.state_dict())
    restored = ours_lr.ReduceLROnPlateau(gputorch.optim.SGD(_groups(gputorch, "SGD"), lr=0.1))
    restored.load_state_dict(sched.state_dict())
    assert restored.best == sched.best and restored.mode == sched.mode


def test_step_with_epoch_uses_closed_form_like_torch():
    def run(lib, module):
        opt = lib.optim.SGD(_groups(lib, "SGD"), lr=0.1)
        scheds = [module.StepLR(opt, 3, 0.5)]
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (4, 9, 2, 15):
                opt.step()
                scheds[0].step(epoch)
                out.append(scheds[0].get_last_lr())
        return out
    assert run(gputorch, ours_lr) == run(torch, theirs_lr)
    opt = optim.SGD([Parameter(gputorch.ones(1))], lr=0.1)
    sched = ours_lr.ExponentialLR(opt, 0.5)
    opt.step()
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched.step(3)
    assert sched.get_last_lr() == [0.1 * 0.5 ** 3]


def test_cosine_warm_restarts_fractional_epochs_match_torch():
    def run(lib, module):
        opt = lib.optim.SGD(_groups(lib, "SGD"), lr=0.1)
        sched = module.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.001)
        out = []
        for epoch in [0.0, 0.5, 1.7, 3.2, 8.9, 9.0, 21.5, 2.0]:
            opt.step()
            sched.step(epoch)
            out.append((sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
        return out
    assert run(gputorch, ours_lr) == run(torch, theirs_lr)


def test_tensor_learning_rate_is_updated_in_place():
    lr = gputorch.tensor(0.1, dtype=gputorch.float64)
    opt = optim.SGD([Parameter(gputorch.ones(1, dtype=gputorch.float64))], lr=lr)
    sched = ours_lr.ExponentialLR(opt, 0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == 0.05


def test_warns_when_scheduler_steps_before_optimizer():
    opt = optim.SGD([Parameter(gputorch.ones(1))], lr=0.1)
    sched = ours_lr.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    opt2 = optim.SGD([Parameter(gputorch.ones(1))], lr=0.1)
    sched2 = ours_lr.StepLR(opt2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt2.step()
        sched2.step()


def test_get_lr_outside_step_warns():
    opt = optim.SGD([Parameter(gputorch.ones(1))], lr=0.1)
    sched = ours_lr.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


def test_scheduler_sets_initial_lr_and_resumes():
    opt = optim.SGD([Parameter(gputorch.ones(1))], lr=0.1)
    ours_lr.StepLR(opt, 2)
    assert opt.param_groups[0]["initial_lr"] == 0.1
    resumed = ours_lr.StepLR(opt, 2, last_epoch=5)
    assert resumed.last_epoch == 6
    fresh = optim.SGD([Parameter(gputorch.ones(1))], lr=0.1)
    with pytest.raises(KeyError, match="initial_lr"):
        ours_lr.StepLR(fresh, 2, last_epoch=3)


def test_errors():
    opt = optim.SGD([Parameter(gputorch.ones(1))], lr=0.1, momentum=0.9)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        ours_lr.StepLR("sgd", 2)
    with pytest.raises(ValueError, match="Constant multiplicative factor expected to be between 0 and 1"):
        ours_lr.ConstantLR(opt, factor=1.5)
    with pytest.raises(ValueError, match="Starting multiplicative factor expected to be greater than 0"):
        ours_lr.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Ending multiplicative factor"):
        ours_lr.LinearLR(opt, end_factor=2)
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
        ours_lr.LambdaLR(opt, [lambda e: 1, lambda e: 1])
    with pytest.raises(TypeError, match="lr_lambda should be a function"):
        ours_lr.MultiplicativeLR(opt, 0.9)
    with pytest.raises(ValueError, match="Expected positive integer total_steps"):
        ours_lr.OneCycleLR(opt, max_lr=1.0, total_steps=0)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        ours_lr.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="Expected float between 0 and 1 pct_start"):
        ours_lr.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=2.0)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        ours_lr.OneCycleLR(opt, max_lr=1.0, total_steps=10, anneal_strategy="exp")
    with pytest.raises(ValueError, match="max_lr must have the same length as optimizer.param_groups"):
        ours_lr.OneCycleLR(opt, max_lr=[1.0, 2.0], total_steps=10)
    no_momentum = optim.Adagrad([Parameter(gputorch.ones(1))])
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        ours_lr.OneCycleLR(no_momentum, max_lr=1.0, total_steps=10)
    one_cycle = ours_lr.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    opt.step()
    one_cycle.step()
    one_cycle.step()
    with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of total steps is 2"):
        one_cycle.step()
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        ours_lr.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode sideways is unknown"):
        ours_lr.ReduceLROnPlateau(opt, mode="sideways")
    with pytest.raises(ValueError, match="threshold mode rel2 is unknown"):
        ours_lr.ReduceLROnPlateau(opt, threshold_mode="rel2")
    with pytest.raises(ValueError, match="expected 1 min_lrs, got 2"):
        ours_lr.ReduceLROnPlateau(opt, min_lr=[0, 0])
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        ours_lr.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1"):
        ours_lr.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=0)
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        ours_lr.CyclicLR(opt, 0.01, 0.1, mode="square")
    a = ours_lr.StepLR(opt, 2)
    with pytest.raises(ValueError, match="number of schedulers provided to be one more"):
        ours_lr.SequentialLR(opt, [a, ours_lr.StepLR(opt, 3)], milestones=[1, 2])
    with pytest.raises(ValueError, match="expects at least one scheduler"):
        ours_lr.SequentialLR(opt, [], milestones=[])
    other = optim.SGD([Parameter(gputorch.ones(1))], lr=0.1)
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
        ours_lr.ChainedScheduler([a, ours_lr.StepLR(other, 2)])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        ours_lr.ChainedScheduler([a, ours_lr.ReduceLROnPlateau(opt)])


def test_cosine_annealing_follows_closed_form_within_period():
    opt = optim.SGD([Parameter(gputorch.ones(1))], lr=1.0)
    sched = ours_lr.CosineAnnealingLR(opt, T_max=10, eta_min=0.0)
    for epoch in range(1, 11):
        opt.step()
        sched.step()
        expected = 0.5 * (1 + math.cos(math.pi * epoch / 10))
        assert sched.get_last_lr()[0] == pytest.approx(expected, abs=1e-12)
