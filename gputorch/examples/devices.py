"""Moving a model and its optimizer between devices in user code, checkpoints, and PyTorch weights.

Three things users do, each checked as it runs:

1. **Move mid-training, and back.** Train a small MLP with Adam, ``model.to(other)``, keep
   training, ``model.to(original)``, keep training. The rule this shows: ``Module.to`` keeps
   every Parameter object (only its data moves), so the optimizer built before the move still
   holds the model's parameters; the optimizer's state (Adam's moments) is *not* moved by
   ``model.to`` but follows each parameter to its new device (and float dtype) at the next
   ``step()``, once. Nothing else is needed (there is no ``optimizer.to``), and the losses equal
   those of a run that never moved. The other place is the CPU from a GPU, the GPU from the
   CPU, and with no GPU float64 on the CPU (no second device; the same mechanism). With
   ``GPUTORCH_SIMULATE_CUDA=1`` the move is CPU <-> a simulated GPU.
2. **Checkpoint and resume elsewhere.** ``gputorch.save`` the model's and optimizer's state dicts,
   ``gputorch.load(..., map_location="cpu")`` them into a fresh model and optimizer on the CPU,
   and training resumes exactly where it stopped.
3. **PyTorch weights.** Load a safetensors file written by PyTorch
   (``safetensors.torch.save_file(model.state_dict(), path)``) with
   ``gputorch.serialization.load_safetensors`` into the same architecture. Without ``--weights``
   (and with torch and safetensors installed) the example writes one with torch first. Whenever
   torch is installed, it loads the same file into torch's model too and checks that both
   frameworks give the same outputs on the same input.

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


def make_torch_model(torch_module):
    """The same architecture in PyTorch (``torch_module`` is the imported ``torch``)."""
    tnn = torch_module.nn
    return tnn.Sequential(tnn.Linear(16, 32), tnn.Tanh(), tnn.Linear(32, 32), tnn.ReLU(), tnn.Linear(32, 4))


def make_data(n=256, seed=0):
    """Inputs (n, 16) float32 and labels (n,) int64 that depend on the inputs."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 16)).astype(np.float32)
    y = (np.abs(x[:, :4]).argmax(1)).astype(np.int64)
    return x, y


def train_steps(model, optimizer, data, steps, start=0, batch=32):
    """``steps`` optimizer steps over fixed minibatches of ``data`` (step ``start`` onwards), on the
    device and in the dtype of the model's parameters; returns the losses (floats)."""
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


def placement(tensors):
    """The sorted distinct ``"device dtype"`` strings of ``tensors``, e.g. ``["cuda:0 float32"]``."""
    return sorted({f"{t.device} {str(t.dtype).replace('gputorch.', '')}" for t in tensors})


def state_tensors(optimizer):
    """The optimizer's per-parameter state tensors (Adam's moments), step counters excluded."""
    return [v for s in optimizer.state.values() for v in s.values() if isinstance(v, torch.Tensor) and v.dim() > 0]


def other_place(device):
    """Where part 1 moves a model that trains on ``device``: ``(device, dtype or None)``.

    From a GPU to the CPU; from the CPU to the current GPU when there is one; with no GPU, to
    float64 on the same CPU (no second device to move to, and a dtype cast is the same
    mechanism: ``Module.to`` replaces each Parameter's data)."""
    if device.type == "cuda":
        return torch.device("cpu"), None
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device()), None
    return device, torch.float64


def describe(place):
    """``"cpu"``, ``"cuda:0"``, ``"cpu, float64"``: a ``(device, dtype or None)`` for people."""
    dev, dtype = place
    return str(dev) + (f", {str(dtype).replace('gputorch.', '')}" if dtype is not None else "")


def move_mid_training(device, steps=20, say=print):
    """Part 1: train ``steps`` steps on ``device``, ``model.to`` the other place (see
    :func:`other_place`), train ``steps`` more, move back, train ``steps`` more.

    Returns a dict: ``"moved"`` (the 3 x ``steps`` losses), ``"staying"`` (those of the same
    training on ``device`` without moving), ``"route"`` (the three ``(device, dtype or None)``
    places trained on) and ``"state"``: for each of the two moves, a tuple of
    :func:`placement` lists ``(parameters after the move, optimizer state right after the
    move, optimizer state after the next step)``."""
    if steps < 2:
        raise ValueError(f"move_mid_training: steps must be at least 2, got {steps}")
    data = make_data()
    away = other_place(device)
    back = (device, torch.get_default_dtype() if away[1] is not None else None)
    route = [(device, None), away, back]
    if away[0] == device:
        say(f"no second device here, so the model moves to float64 on {device} and back "
            "(GPUTORCH_SIMULATE_CUDA=1 gives a simulated GPU to move to)")
    torch.manual_seed(0)
    model = make_model().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    params = list(model.parameters())
    losses = train_steps(model, optimizer, data, steps)
    say(f"trained {steps} steps on {device}; Adam state: {', '.join(placement(state_tensors(optimizer)))}")
    states = []
    for leg, (dev, dtype) in enumerate(route[1:], start=1):
        model.to(device=dev, dtype=dtype)
        if any(a is not b for a, b in zip(params, model.parameters())):
            raise AssertionError("Module.to must keep the Parameter objects")
        moved_params, held = placement(params), placement(state_tensors(optimizer))
        say(f"model.to({describe((dev, dtype))}): the same {len(params)} Parameter objects, now "
            f"{', '.join(moved_params)}; Adam state still {', '.join(held)}")
        losses += train_steps(model, optimizer, data, 1, start=leg * steps)
        followed = placement(state_tensors(optimizer))
        losses += train_steps(model, optimizer, data, steps - 1, start=leg * steps + 1)
        states.append((moved_params, held, followed))
        say(f"  next step: Adam state moved to {', '.join(followed)}; {steps} steps there, "
            f"loss {losses[-1]:.4f}")

    torch.manual_seed(0)
    stay = make_model().to(device)
    stay_opt = torch.optim.Adam(stay.parameters(), lr=1e-2)
    staying = train_steps(stay, stay_opt, data, 3 * steps)
    say(f"largest loss difference from a run that never moved (all {3 * steps} steps on {device}): "
        f"{max(abs(a - b) for a, b in zip(losses, staying)):.1e}")
    return {"moved": losses, "staying": staying, "route": route, "state": states}


def checkpoint_and_resume(device, directory, steps=10, say=print):
    """Part 2: train ``steps`` steps on ``device``, save model + optimizer + step with
    ``gputorch.save``, train ``steps`` more; load the checkpoint with ``map_location="cpu"`` into a
    fresh model and optimizer and train the same ``steps`` on the CPU.

    Returns ``(resumed_losses, uninterrupted_losses)``."""
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
    where = ", ".join(placement(state_tensors(resumed_opt)))
    resumed = train_steps(resumed_model, resumed_opt, data, steps, start=state["step"])
    say(f"saved after {steps} steps on {device}; loaded with map_location='cpu' (Adam state on {where}); "
        f"resumed losses match the uninterrupted run to {max(abs(a - b) for a, b in zip(resumed, uninterrupted)):.1e}")
    return resumed, uninterrupted


def _import_torch():
    """``(torch, safetensors.torch)`` when both are installed, else None."""
    try:
        import torch as real_torch
        import safetensors.torch as safetensors_torch
    except ImportError:
        return None
    return real_torch, safetensors_torch


def load_pytorch_weights(device, path=None, directory=None, say=print):
    """Part 3: load a safetensors file saved by PyTorch into :func:`make_model`'s architecture on
    ``device``. With ``path`` None the file is first written with torch (in ``directory``).

    Returns the largest absolute output difference from torch's model loaded from the same file,
    on the same (8, 16) input; None when torch or safetensors is not installed (and nothing is
    loaded at all when ``path`` is None too). Raises what loading raises for a file that does not
    fit the architecture (RuntimeError) or has a dtype gputorch lacks (TypeError)."""
    from gputorch.serialization import load_safetensors
    found = _import_torch()
    if path is None:
        if found is None:
            say("PyTorch weights: skipped (needs torch and safetensors, or --weights FILE)")
            return None
        real_torch, safetensors_torch = found
        real_torch.manual_seed(2)
        path = os.path.join(directory, "pytorch_weights.safetensors")
        safetensors_torch.save_file(make_torch_model(real_torch).state_dict(), path)
        say(f"wrote {path} with PyTorch {real_torch.__version__}")
    model = make_model().to(device)
    model.load_state_dict(load_safetensors(path, device=device))
    say(f"loaded {path} into the gputorch model on {device} ({sum(p.numel() for p in model.parameters())} weights)")
    if found is None:
        say("(torch is not installed: no comparison of outputs)")
        return None
    real_torch, safetensors_torch = found
    reference = make_torch_model(real_torch)
    reference.load_state_dict(safetensors_torch.load_file(path))
    x = np.random.default_rng(3).standard_normal((8, 16)).astype(np.float32)
    with torch.no_grad():
        ours = model(torch.tensor(x, device=device)).cpu().numpy()
    with real_torch.no_grad():
        theirs = reference(real_torch.tensor(x)).numpy()
    diff = float(np.abs(ours - theirs).max())
    say(f"same input into PyTorch's model loaded from the same file: largest output difference {diff:.1e}")
    return diff


def _safetensors_errors():
    """The safetensors package's own exception class (a file that is not safetensors), as a tuple."""
    try:
        from safetensors import SafetensorError
    except ImportError:
        return ()
    return (SafetensorError,)


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
    print("1. Moving a model and its optimizer mid-training, and back")
    move_mid_training(device)
    with tempfile.TemporaryDirectory() as directory:
        print("\n2. Checkpoint, then resume on the CPU")
        checkpoint_and_resume(device, directory)
        print("\n3. Weights saved by PyTorch (safetensors)")
        if args.weights is None:
            load_pytorch_weights(device, None, directory)
        else:
            try:
                load_pytorch_weights(device, args.weights, directory)
            except (RuntimeError, TypeError, ValueError, ImportError) + _safetensors_errors() as e:
                print(f"error: --weights {args.weights}: {str(e).splitlines()[0]}", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
