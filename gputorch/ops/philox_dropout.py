"""Dropout on arrays with its mask drawn from a Philox stream at a given ``(seed, offset)``.

The generic version of a backend's fused dropout: ``nn.functional``'s fused dropout calls
:func:`philox_dropout` through its backend's ``overrides`` (the CUDA backend replaces it with
one kernel, and falls back on it for inputs its kernel does not take).
"""
import numpy as np

from ..backends.philox import PhiloxEngine

__all__ = ["philox_dropout"]


def philox_dropout(xp, x, p, seed, offset):
    """``x * mask / (1 - p)`` on arrays, the mask drawn from the Philox stream at ``(seed, offset)``
    (the generic version of the backend kernel that replaces it); ``1 / (1 - p)`` is computed in
    x's dtype and applied by multiplication, as ``input * noise`` does."""
    engine = PhiloxEngine(seed, xp=xp)
    engine.offset = offset
    keep = engine.random(x.shape, np.float64) < 1 - p
    dt = x.dtype.type
    with np.errstate(over="ignore", divide="ignore"):
        scale = dt(1) / dt(1 - p)
    noise = xp.where(keep, scale, dt(0)).astype(x.dtype, copy=False)
    return x * noise
