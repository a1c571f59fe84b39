"""GradScaler: the scale trajectory, skipped steps and weights of a run with planted overflows equal
PyTorch's GradScaler on the CPU; its errors and state_dict follow PyTorch's."""
import numpy as np
import pytest

import gputorch
from gputorch import nn, optim
from gputorch.amp import GradScaler

OVERFLOW_STEPS = {2, 3, 7}


def _run(lib, scaler_cls, device, steps=12, growth_interval=3):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 4)).astype(np.float32)
    b0 = rng.standard_normal(3).astype(np.float32)
    model = lib.nn.Linear(4, 3)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(w0))
        model.bias.copy_(lib.tensor(b0))
    model = model.to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = scaler_cls(device, init_scale=2.0 ** 10, growth_interval=growth_interval)
    scales, weights, stepped = [], [], []
    for step in range(steps):
        x = lib.tensor(rng.standard_normal((5, 4)).astype(np.float32), device=device)
        y = lib.tensor(rng.standard_normal((5, 3)).astype(np.float32), device=device)
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        if step in OVERFLOW_STEPS:
            loss = loss * 1e38   # scaled by 2**10 it overflows float32: the step must be skipped
        before = model.weight.detach().cpu().numpy().copy()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        after = model.weight.detach().cpu().numpy()
        stepped.append(not np.array_equal(before, after))
        scales.append(scaler.get_scale())
        weights.append(after.copy())
    return scales, weights, stepped, scaler.state_dict()


def test_trajectory_matches_torch(device):
    torch = pytest.importorskip("torch")
    ours = _run(gputorch, GradScaler, device)
    theirs = _run(torch, lambda dev, **kw: torch.amp.GradScaler("cpu", **kw), "cpu")
    assert ours[0] == theirs[0]                       # scales, step by step
    assert ours[2] == theirs[2]                       # which steps ran
    assert [not s for s in ours[2]] == [i in OVERFLOW_STEPS for i in range(12)]
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert ours[3] == theirs[3]
    # two clean steps (no growth before 3), two overflows (halved twice), then growth every 3 clean steps
    assert ours[0][:7] == [1024.0, 1024.0, 512.0, 256.0, 256.0, 256.0, 512.0]


def test_errors_and_unscale_then_clip(device):
    model = nn.Linear(3, 2).to(device)
    opt = optim.SGD(model.parameters(), lr=0.1)
    scaler = GradScaler(device, init_scale=4.0)
    with pytest.raises(AssertionError, match="did not use scaler.scale"):
        scaler.step(opt)
    loss = model(gputorch.ones(2, 3, device=device)).sum()
    scaler.scale(loss).backward()
    raw = [p.grad.clone() for p in model.parameters()]
    scaler.unscale_(opt)
    for g, p in zip(raw, model.parameters()):
        np.testing.assert_allclose(p.grad.cpu().numpy(), g.cpu().numpy() / 4.0, rtol=1e-6)
    with pytest.raises(RuntimeError, match="already been called on this optimizer"):
        scaler.unscale_(opt)
    nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: 0)
    scaler.update()
    assert scaler.get_scale() == 4.0 and scaler.state_dict()["_growth_tracker"] == 1
    scaler.update(new_scale=16.0)
    assert scaler.get_scale() == 16.0
    with pytest.raises(AssertionError, match="new_scale should be a float"):
        scaler.update(new_scale=gputorch.ones(2))


def test_disabled_and_state_dict_round_trip(device):
    off = GradScaler(device, enabled=False)
    t = gputorch.ones(2, device=device)
    assert off.scale(t) is t and off.get_scale() == 1.0 and off.state_dict() == {}
    on = GradScaler(device, init_scale=8.0, growth_interval=5)
    on.scale(t)
    other = GradScaler(device)
    other.load_state_dict(on.state_dict())
    assert other.state_dict() == on.state_dict() == {"scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                                      "growth_interval": 5, "_growth_tracker": 0}
    with pytest.raises(ValueError, match="growth factor must be > 1.0"):
        GradScaler(device, growth_factor=1.0)


def test_scale_stays_on_the_outputs_device(device):
    scaler = GradScaler(device)
    out = scaler.scale(gputorch.ones(3, device=device))
    assert out.device.type == device and scaler._scale.device.type == device
    assert out.tolist() == [65536.0] * 3


def test_cuda_amp_aliases_warn_and_work():
    if not gputorch.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            assert not gputorch.amp.GradScaler("cuda").is_enabled()
        return
    with pytest.warns(FutureWarning, match="torch.cuda.amp.GradScaler"):
        scaler = gputorch.cuda.amp.GradScaler(init_scale=2.0)
    assert scaler.get_scale() == 2.0
    with pytest.warns(FutureWarning, match="torch.cuda.amp.autocast"):
        with gputorch.cuda.amp.autocast():
            assert gputorch.is_autocast_enabled("cuda")


def _two_optimizers_with_accumulation(lib, device, steps=8, accumulate=2):
    """Two models, two optimizers (SGD and Adam), one scaler, gradients accumulated over
    ``accumulate`` micro-batches, the first model's gradients unscaled and clipped; overflows
    planted in the second model's loss at steps 1 and 5."""
    rng = np.random.default_rng(1)
    models = []
    for shape in ((4, 3), (3, 2)):
        m = lib.nn.Linear(*shape)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(rng.standard_normal(shape[::-1]).astype(np.float32)))
            m.bias.copy_(lib.tensor(rng.standard_normal(shape[1]).astype(np.float32)))
        models.append(m.to(device))
    opts = [lib.optim.SGD(models[0].parameters(), lr=0.05), lib.optim.Adam(models[1].parameters(), lr=0.01)]
    scaler = (GradScaler if lib is gputorch else lib.amp.GradScaler)(device, init_scale=2.0 ** 8, growth_interval=2)
    scales = []
    for step in range(steps):
        for o in opts:
            o.zero_grad()
        for micro in range(accumulate):
            x = lib.tensor(rng.standard_normal((5, 4)).astype(np.float32), device=device)
            h = models[0](x)
            loss0 = h.pow(2).mean()
            loss1 = models[1](h.detach()).pow(2).mean()
            if step in (1, 5) and micro == 1:
                loss1 = loss1 * 1e38
            scaler.scale(loss0 / accumulate + loss1 / accumulate).backward()
        scaler.unscale_(opts[0])
        lib.nn.utils.clip_grad_norm_(models[0].parameters(), 0.5)
        for o in opts:
            scaler.step(o)
        scaler.update()
        scales.append(scaler.get_scale())
    weights = [p.detach().cpu().numpy().copy() for m in models for p in m.parameters()]
    return scales, weights


def test_several_optimizers_and_accumulation_match_torch(device):
    torch = pytest.importorskip("torch")
    ours = _two_optimizers_with_accumulation(gputorch, device)
    theirs = _two_optimizers_with_accumulation(torch, "cpu")
    assert ours[0] == theirs[0]
    assert 2.0 ** 8 > min(ours[0])      # the planted overflows backed the scale off
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _found_inf(scaler, optimizer):
    return sum(float(v.item()) for v in scaler._per_optimizer_states[id(optimizer)]["found_inf_per_device"].values())


def test_cuda_unscale_is_one_kernel_per_dtype_and_equals_the_cpu():
    """On CUDA the inf check and unscale run as kernels/amp.cu's multi-tensor kernel (one launch
    per dtype); the unscaled gradients and found_inf equal the CPU's generic path bit for bit."""
    if not gputorch.cuda.is_available():
        pytest.skip("needs a (real or simulated) CUDA device")
    from gputorch.amp.grad_scaler import non_finite_check_and_unscale
    from gputorch.cuda import kernels
    backend = gputorch.device("cuda").backend
    if kernels.enabled():
        assert backend.overrides.get(non_finite_check_and_unscale) is not None
    results = []
    for device in ("cpu", "cuda"):
        rng = np.random.default_rng(3)
        params = [gputorch.zeros(shape, dtype=dt, device=device, requires_grad=True)
                  for shape, dt in (((70000,), gputorch.float32), ((3, 5), gputorch.float64), ((9,), gputorch.float32))]
        for p in params:
            p.grad = gputorch.tensor(rng.standard_normal(tuple(p.shape)) * 1e4, dtype=p.dtype, device=device)
        opt = optim.SGD(params, lr=0.1)
        scaler = GradScaler(device, init_scale=3.0)
        scaler.scale(gputorch.ones((), device=device))
        scaler.unscale_(opt)
        found = _found_inf(scaler, opt)
        p = params[2]
        with gputorch.no_grad():
            p.grad[4] = float("nan")
        other = optim.SGD([p], lr=0.1)
        scaler.unscale_(other)
        nan_found = _found_inf(scaler, other)
        results.append((found, nan_found, [q.grad.cpu().numpy() for q in params]))
    assert results[0][:2] == results[1][:2] == (0.0, 1.0)
    for a, b in zip(results[0][2], results[1][2]):
        np.testing.assert_array_equal(a, b)
