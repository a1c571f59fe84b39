"""Moving a model and its optimizer between devices in user code, checkpoints, and PyTorch weights.

Three things users do, each checked as it runs:

1. **Move mid-training.** Train a small MLP with Adam, then ``model.to(other)`` and keep
   training. ``Module.to`` keeps every Parameter object (only its data moves), so the optimizer,
   built before the move, still holds the model's parameters; its state (Adam's moments) follows
   each parameter to its new device at the next ``step()``. The losses equal those of a run that
   never moved. With no GPU, the move is to float64 on the CPU (the same mechanism).
2. **Checkpoint and resume elsewhere.** ``gputorch.save`` the model's and optimizer's state dicts,
   ``gputorch.load(..., map_location="cpu")`` them into a fresh model and optimizer on the CPU,
   and training resumes exactly where it stopped.
3. **PyTorch weights.** Load a safetensors file written by PyTorch
   (``safetensors.torch.save_file(model.state_dict(), path)``) with
   ``gputorch.serialization.load_safetensors`` into the same architecture. Without ``--weights``
   (and with torch installed) the example writes one with torch first and checks that both
   frameworks then give the same outputs.

    python -m gputorch.examples.devices [--device auto|cpu|cuda] [--weights FILE.safetensors]
"""
import argparse
import os
import sys
import tempfile

import numpy as np

import gputorch as torch
from gputorch import nn


def make_model():
    """The example's model: an MLP (batch, 16) -> (batch, 4)."""
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))


def make_data(n=256, seed=0):
    """Inputs (n, 16) float32 and labels (n,) int64 that depend on the inputs."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 16)).astype(np.float32)
    y = (np.abs(x[:, :4]).argmax(1)).astype(np.int64)
    return x, y


def train_steps(model, optimizer, data, steps, start=0, batch=32):
    """``steps`` Adam steps over fixed minibatches (step ``start`` onwards); returns the losses."""
    device = next(model.parameters()).device
    dtype = next(model.parameters()).dtype
    x_np, y_np = data
    losses = []
    for step in range(start, start + steps):
        i = (step * batch) % len(x_np)
        x = torch.tensor(x_np[i:i + batch], device=device, dtype=dtype)
        y = torch.tensor(y_np[i:i + batch], device=device)
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def state_placement(optimizer):
    """The sorted set of ``"device dtype"`` of the optimizer's state tensors (step counters excluded)."""
    return sorted({f"{v.device} {v.dtype}" for s in optimizer.state.values() for v in s.values()
                   if isinstance(v, torch.Tensor) and v.dim() > 0})


def move_mid_training(device, steps=20, say=print):
    """Part 1. Returns ``(moved_losses, staying_losses, target)``: the losses of 2 x ``steps`` steps
    with the move after ``steps``, those of the same training without the move, and the
    ``(device type, dtype or None)`` moved to."""
    data = make_data()
    if device.type == "cuda":
        target = ("cpu", None)
    elif torch.cuda.is_available():
        target = ("cuda", None)
    else:
        target = (device.type, torch.float64)
    torch.manual_seed(0)
    model = make_model().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    params_before = list(model.parameters())
    losses = train_steps(model, optimizer, data, steps)
    say(f"trained {steps} steps on {device}; Adam state: {', '.join(state_placement(optimizer))}")
    model.to(device=target[0], dtype=target[1])
    where = f"{target[0]}" + (f", {target[1]}" if target[1] else "")
    assert all(a is b for a, b in zip(params_before, model.parameters())), "Module.to must keep Parameter objects"
    say(f"model.to({where}): the same {len(params_before)} Parameter objects, now on "
        f"{params_before[0].device} {params_before[0].dtype}; Adam state still: "
        f"{', '.join(state_placement(optimizer))}")
    losses += train_steps(model, optimizer, data, steps, start=steps)
    say(f"after the next step, Adam state: {', '.join(state_placement(optimizer))}; "
        f"loss {losses[steps - 1]:.4f} -> {losses[-1]:.4f}")

    torch.manual_seed(0)
    stay = make_model().to(device)
    stay_opt = torch.optim.Adam(stay.parameters(), lr=1e-2)
    staying = train_steps(stay, stay_opt, data, 2 * steps)
    say(f"largest loss difference from a run that never moved (all {2 * steps} steps on {device}): "
        f"{max(abs(a - b) for a, b in zip(losses, staying)):.1e}")
    return losses, staying, target


def checkpoint_and_resume(device, directory, steps=10, say=print):
    """Part 2. Returns ``(resumed_losses, uninterrupted_losses)``."""
    data = make_data(seed=1)
    torch.manual_seed(1)
    model = make_model().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    train_steps(model, optimizer, data, steps)
    path = os.path.join(directory, "checkpoint.pt")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": steps}, path)
    uninterrupted = train_steps(model, optimizer, data, steps, start=steps)

    state = torch.load(path, map_location="cpu")
    resumed_model = make_model()
    resumed_model.load_state_dict(state["model"])
    resumed_opt = torch.optim.Adam(resumed_model.parameters(), lr=1e-2)
    resumed_opt.load_state_dict(state["optimizer"])
    resumed = train_steps(resumed_model, resumed_opt, data, steps, start=state["step"])
    say(f"saved after {steps} steps on {device}, loaded with map_location='cpu', resumed: losses match "
        f"the uninterrupted run to {max(abs(a - b) for a, b in zip(resumed, uninterrupted)):.1e}")
    return resumed, uninterrupted


def load_pytorch_weights(device, path=None, directory=None, say=print):
    """Part 3. Returns the largest output difference from PyTorch (None when torch is absent and
    ``path`` was given, or when neither torch nor ``path`` is there)."""
    from gputorch.serialization import load_safetensors
    reference = None
    if path is None:
        try:
            import torch as real_torch
            from safetensors.torch import save_file
        except ImportError:
            say("PyTorch weights: skipped (needs torch and safetensors, or --weights FILE)")
            return None
        real_torch.manual_seed(2)
        reference = real_torch.nn.Sequential(
            real_torch.nn.Linear(16, 32), real_torch.nn.Tanh(), real_torch.nn.Linear(32, 32),
            real_torch.nn.ReLU(), real_torch.nn.Linear(32, 4))
        path = os.path.join(directory, "pytorch_weights.safetensors")
        save_file(reference.state_dict(), path)
        say(f"wrote {path} with PyTorch {real_torch.__version__}")
    model = make_model().to(device)
    model.load_state_dict(load_safetensors(path, device=device))
    say(f"loaded {path} into the gputorch model on {device} ({sum(p.numel() for p in model.parameters())} "
        "weights)")
    if reference is None:
        return None
    x = np.random.default_rng(3).standard_normal((8, 16)).astype(np.float32)
    with torch.no_grad():
        ours = model(torch.tensor(x, device=device)).cpu().numpy()
    theirs = reference(real_torch.tensor(x)).detach().numpy()
    diff = float(np.abs(ours - theirs).max())
    say(f"same input, largest output difference from PyTorch: {diff:.1e}")
    return diff


def main(argv=None):
    """Command line (see the module docstring); returns the exit status."""
    from gputorch.__main__ import CommandError, resolve_device
    parser = argparse.ArgumentParser(prog="python -m gputorch.examples.devices",
                                     description="Move a model and optimizer between devices; load PyTorch weights.")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    parser.add_argument("--weights", help="a safetensors file of this example's MLP, saved by PyTorch")
    args = parser.parse_args(argv)
    try:
        device = resolve_device(args.device)
        if args.weights is not None and not os.path.isfile(args.weights):
            raise CommandError(f"--weights {args.weights}: no such file", 1)
    except CommandError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.code
    print("1. Moving a model and its optimizer mid-training")
    move_mid_training(device)
    with tempfile.TemporaryDirectory() as directory:
        print("\n2. Checkpoint, then resume on the CPU")
        checkpoint_and_resume(device, directory)
        print("\n3. Weights saved by PyTorch (safetensors)")
        try:
            load_pytorch_weights(device, args.weights, directory)
        except (RuntimeError, TypeError, ValueError) as e:
            print(f"error: --weights {args.weights}: {str(e).splitlines()[0]}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
