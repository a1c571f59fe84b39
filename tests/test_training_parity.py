"""End to end: the same float64 model, data and optimizer in gputorch and PyTorch give the
same losses at every step and the same final weights."""
import numpy as np
import pytest

import gputorch

torch = pytest.importorskip("torch")


def build(lib, kind):
    nn = lib.nn
    if kind == "mlp":
        return nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 4))
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(24, 4))


def copy_weights(src_torch, dst):
    state = {k: gputorch.tensor(v.detach().numpy()) for k, v in src_torch.state_dict().items()}
    dst.load_state_dict(state)


def make_optimizer(lib, params, name):
    if name == "sgd":
        return lib.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3)
    if name == "adam":
        return lib.optim.Adam(params, lr=1e-2, weight_decay=1e-3, amsgrad=True)
    if name == "adamw":
        return lib.optim.AdamW(params, lr=1e-2)
    return lib.optim.RMSprop(params, lr=1e-3, momentum=0.5, centered=True)


def batches(kind, n_steps, seed=0):
    rng = np.random.default_rng(seed)
    shape = (8, 12) if kind == "mlp" else (8, 1, 8, 8)
    return [(rng.standard_normal(shape), rng.integers(0, 4, 8)) for _ in range(n_steps)]


def train(lib, model, opt, data, device, move_at=None, other_device=None):
    losses = []
    loss_fn = lib.nn.CrossEntropyLoss(label_smoothing=0.1)
    for step, (x, y) in enumerate(data):
        if move_at is not None and step == move_at:
            model.to(other_device)
            device = other_device
        xt = lib.tensor(x, device=device)
        yt = lib.tensor(y, device=device)
        opt.zero_grad()
        loss = loss_fn(model(xt), yt)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
@pytest.mark.parametrize("opt_name", ["sgd", "adam", "adamw", "rmsprop"])
def test_training_matches_torch(kind, opt_name, device):
    torch.manual_seed(0)
    ref = build(torch, kind).double()
    ours = build(gputorch, kind).double().to(device)
    copy_weights(ref, ours)
    data = batches(kind, 8)
    ref_losses = train(torch, ref, make_optimizer(torch, ref.parameters(), opt_name), data, "cpu")
    our_losses = train(gputorch, ours, make_optimizer(gputorch, ours.parameters(), opt_name), data, device)
    np.testing.assert_allclose(our_losses, ref_losses, rtol=1e-10)
    for (name, p), (_, q) in zip(ours.state_dict().items(), ref.state_dict().items()):
        np.testing.assert_allclose(p.cpu().numpy(), q.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)


@pytest.mark.skipif(not gputorch.cuda.is_available(), reason="needs a (real or simulated) CUDA device")
def test_moving_model_and_optimizer_mid_training_matches_staying_put():
    torch.manual_seed(1)
    ref = build(torch, "cnn").double()
    data = batches("cnn", 6, seed=3)
    stay = build(gputorch, "cnn").double()
    move = build(gputorch, "cnn").double()
    copy_weights(ref, stay)
    copy_weights(ref, move)
    stay_losses = train(gputorch, stay, gputorch.optim.Adam(stay.parameters(), lr=1e-2), data, "cpu")
    opt = gputorch.optim.Adam(move.parameters(), lr=1e-2)
    move_losses = train(gputorch, move, opt, data, "cpu", move_at=3, other_device="cuda")
    np.testing.assert_allclose(move_losses, stay_losses, rtol=1e-12)
    assert all(p.device.type == "cuda" for p in move.parameters())
    assert all(s["exp_avg"].device.type == "cuda" for s in opt.state.values())
