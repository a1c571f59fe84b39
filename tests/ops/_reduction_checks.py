"""Shared checks for the reduction test modules: torch parity of values, dtypes and gradients."""
import numpy as np
import pytest

import gputorch
from tests._helpers import assert_close


def rand(*shape, device="cpu", lo=-2.0, hi=2.0, requires_grad=True, seed=0):
    """A float64 tensor of distinct uniform values (no ties, so gradients are well defined)."""
    data = np.random.default_rng(seed).uniform(lo, hi, shape)
    return gputorch.tensor(data, dtype=gputorch.float64, device=device, requires_grad=requires_grad)


def outputs(x):
    """The tensors of an op's result: a tensor, or the fields of a (named) tuple."""
    return list(x) if isinstance(x, tuple) else [x]


def parity(fn, *arrays, device, grad=True, rtol=1e-10, atol=1e-12):
    """Run ``fn(module, *tensors)`` with gputorch and with torch on the same NumPy data and
    compare outputs (values, dtypes, named-tuple types) and, with ``grad``, the gradients of a
    random weighting of the differentiable outputs."""
    torch = pytest.importorskip("torch")
    want = [grad and a.dtype.kind == "f" for a in arrays]
    g_in = [gputorch.tensor(a, device=device, requires_grad=w) for a, w in zip(arrays, want)]
    t_in = [torch.tensor(a, requires_grad=w) for a, w in zip(arrays, want)]
    g_out, t_out = fn(gputorch, *g_in), fn(torch, *t_in)
    if isinstance(t_out, tuple) and hasattr(t_out, "_fields") or type(t_out).__module__ == "torch.return_types":
        assert type(g_out).__name__ == type(t_out).__name__
        assert g_out._fields == ("values", "indices")
    gs, ts = outputs(g_out), outputs(t_out)
    assert len(gs) == len(ts)
    for g, t in zip(gs, ts):
        assert_close(g, t, rtol=rtol, atol=atol)
        assert g.requires_grad == t.requires_grad
        if t.grad_fn is not None:
            assert g.grad_fn.name() == t.grad_fn.name()
    if grad and any(t.requires_grad for t in ts):
        rng = np.random.default_rng(7)
        g_loss = t_loss = 0
        for g, t in zip(gs, ts):
            if t.requires_grad:
                w = rng.standard_normal(tuple(t.shape))
                g_loss = g_loss + (g * gputorch.tensor(w, dtype=g.dtype, device=device)).sum()
                t_loss = t_loss + (t * torch.tensor(w, dtype=t.dtype)).sum()
        t_loss.backward()
        g_loss.backward()
        for g, t in zip(g_in, t_in):
            if not t.requires_grad:
                continue
            if t.grad is None:
                assert g.grad is None or not np.any(g.grad.cpu().numpy())
            else:
                assert_close(g.grad, t.grad, rtol=rtol, atol=atol)
    return g_out, t_out
