"""Quickstart: train a two-layer MLP with raw tensors and move it between devices mid-training.

The data are the "two moons" (two interleaved half circles, made with NumPy). The
model is four leaf tensors; the forward pass is ``@``, ``relu`` and a log-softmax
written with ``logsumexp``; the update is plain SGD done in place under
``no_grad``. Half-way through, the parameters move to another device (CUDA when
there is one) or, on a CPU-only machine, to float64 and back; training carries on.

Run it with ``python -m gputorch`` or ``python -m gputorch.examples.quickstart``.
Swap the import for ``import torch`` and it runs unchanged on PyTorch.
"""
import numpy as np

import gputorch as torch


def make_moons(n_per_class=128, noise=0.15, seed=0):
    """Points of two interleaved half circles (float32, standardised) and their labels (int64)."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, np.pi, size=(2, n_per_class))
    upper = np.stack([np.cos(t[0]), np.sin(t[0])], axis=1)
    lower = np.stack([1.0 - np.cos(t[1]), 0.5 - np.sin(t[1])], axis=1)
    x = np.concatenate([upper, lower]) + rng.normal(scale=noise, size=(2 * n_per_class, 2))
    x = (x - x.mean(axis=0)) / x.std(axis=0)
    y = np.repeat(np.arange(2), n_per_class)
    return x.astype(np.float32), y.astype(np.int64)


def init_params(n_in, n_hidden, n_out, device):
    """Weights and biases of a 2-layer MLP as leaf tensors that require grad (He-style init)."""
    w1 = torch.randn(n_in, n_hidden, device=device) * (2.0 / n_in) ** 0.5
    b1 = torch.zeros(n_hidden, device=device)
    w2 = torch.randn(n_hidden, n_out, device=device) * (1.0 / n_hidden) ** 0.5
    b2 = torch.zeros(n_out, device=device)
    return [p.requires_grad_() for p in (w1, b1, w2, b2)]


def forward(params, x):
    """Logits of shape (batch, n_out) for inputs of shape (batch, n_in)."""
    w1, b1, w2, b2 = params
    hidden = (x @ w1 + b1).relu()
    return hidden @ w2 + b2


def cross_entropy(logits, targets_onehot):
    """Mean negative log-likelihood, log-softmax written with logsumexp."""
    log_probs = logits - logits.logsumexp(dim=1, keepdim=True)
    return -(log_probs * targets_onehot).sum(dim=1).mean()


def accuracy(logits, labels):
    return (logits.argmax(dim=1) == labels).float().mean().item()


def move(tensors, device=None, dtype=None, requires_grad=False):
    """Copies of ``tensors`` on another device/dtype; parameters stay leaves that require grad."""
    moved = [t.detach().to(device=device, dtype=dtype) for t in tensors]
    return [t.requires_grad_() for t in moved] if requires_grad else moved


def plan_moves(device):
    """(epoch fraction, target device, target dtype, description) for the two mid-training moves."""
    other = None
    if device.type == "cpu" and torch.cuda.is_available():
        other = torch.device("cuda")
    elif device.type == "cuda":
        other = torch.device("cpu")
    if other is not None:
        return [(0.5, other, torch.float32, f"to('{other}')"),
                (0.75, device, torch.float32, f"back to('{device}')")]
    return [(0.5, device, torch.float64, f"to({torch.float64}) on the CPU (no GPU here)"),
            (0.75, device, torch.float32, f"back to({torch.float32})")]


def main(device="auto", epochs=300, lr=0.5, hidden=32, seed=0, log_every=50, verbose=True):
    """Train and return a summary dict: final ``accuracy``, ``losses`` per epoch, ``moves`` made."""
    say = print if verbose else (lambda *a, **k: None)
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(device)
    torch.manual_seed(seed)

    x_np, y_np = make_moons(seed=seed)
    x = torch.tensor(x_np, device=device)
    labels = torch.tensor(y_np, device=device)
    onehot = torch.tensor(np.eye(2, dtype=np.float32)[y_np], device=device)
    params = init_params(2, hidden, 2, device)
    say(f"two moons: {x.shape[0]} points, MLP 2-{hidden}-2, {epochs} epochs of full-batch SGD "
        f"(lr={lr}) on {device}")

    moves = plan_moves(device)
    losses, done = [], []
    for epoch in range(epochs):
        if moves and epoch == int(moves[0][0] * epochs):
            _, dev, dt, what = moves.pop(0)
            params = move(params, dev, dt, requires_grad=True)
            x, onehot = move([x, onehot], dev, dt)
            labels = labels.to(dev)
            done.append(what)
            say(f"epoch {epoch:4d}: moved parameters and data {what} "
                f"-> {params[0].device}, {params[0].dtype}; training continues")

        loss = cross_entropy(forward(params, x), onehot)
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.sub_(lr * p.grad)
                p.grad.zero_()
        losses.append(loss.item())
        if epoch % log_every == 0 or epoch == epochs - 1:
            say(f"epoch {epoch:4d}: loss {losses[-1]:.4f}")

    with torch.no_grad():
        acc = accuracy(forward(params, x), labels)
    say(f"final accuracy: {acc:.1%} on {params[0].device} ({params[0].dtype})")
    return {"accuracy": acc, "losses": losses, "moves": done, "device": str(params[0].device)}


if __name__ == "__main__":
    main()
