"""``binomial``: samples of Binomial(count, prob), elementwise over broadcast tensors.

Counts are floored (a negative count gives 0) and probabilities clipped to [0, 1]; a probability
above 1/2 is sampled as ``count - Binomial(count, 1 - prob)``. With the smaller probability ``p``,
a mean ``count * p`` below 10 is sampled by inversion (a sequential search of the CDF), a larger
one by Hormann's transformed rejection with squeeze (BTRS, 1993). Uniforms come from the
generator of the inputs' device; the sampler is not differentiable (as in PyTorch).
"""
import numpy as np

from .. import _dtype
from .._broadcast import broadcast_pair
from .._dispatch import apply
from .._tensor import _LEGACY_NAMES, Tensor
from ..autograd.node import Node
from ._common import quiet_errors, xp_of
from .gamma_functions import _engine, _lgamma_pos

__all__ = ["binomial"]

_INVERSION_BELOW = 10.0   # mean n * p under which inversion is used


def _inversion(n, p, engine, xp):
    """Binomial samples for the 1-d float64 arrays ``n`` (counts) and ``p <= 1/2``, small means."""
    q = 1.0 - p
    with quiet_errors():
        s = p / q
        a = (n + 1) * s
        r = q ** n
    u = engine.random(n.shape, np.float64)
    x = xp.zeros(n.shape, dtype=np.float64)
    going = u > r
    while bool(going.any()):
        u = xp.where(going, u - r, u)
        x = x + going
        with quiet_errors():
            r = xp.where(going, r * (a / xp.maximum(x, 1) - s), r)
        going = going & (u > r) & (x < n)
    return x


def _btrs(n, p, engine, xp):
    """Binomial samples for the 1-d float64 arrays ``n`` and ``p <= 1/2`` with ``n * p >= 10``."""
    out = xp.zeros(n.shape, dtype=np.float64)
    todo = xp.arange(n.shape[0])
    while todo.size:
        nn, pp = n[todo], p[todo]
        q = 1.0 - pp
        spq = xp.sqrt(nn * pp * q)
        b = 1.15 + 2.53 * spq
        a = -0.0873 + 0.0248 * b + 0.01 * pp
        c = nn * pp + 0.5
        v_r = 0.92 - 4.2 / b
        u = engine.random(nn.shape, np.float64) - 0.5
        v = engine.random(nn.shape, np.float64)
        us = 0.5 - xp.abs(u)
        k = xp.floor((2 * a / us + b) * u + c)
        valid = (k >= 0) & (k <= nn)
        quick = valid & (us >= 0.07) & (v <= v_r)
        alpha = (2.83 + 5.1 / b) * spq
        m = xp.floor((nn + 1) * pp)
        kk = xp.clip(k, 0, nn)
        with quiet_errors():
            lhs = xp.log(v * alpha / (a / (us * us) + b))
            rhs = (_lgamma_pos(m + 1, xp) + _lgamma_pos(nn - m + 1, xp) - _lgamma_pos(kk + 1, xp)
                   - _lgamma_pos(nn - kk + 1, xp) + (kk - m) * xp.log(pp / q))
        ok = quick | (valid & (lhs <= rhs))
        out[todo[ok]] = k[ok]
        todo = todo[~ok]
    return out


class BinomialBackward0(Node):
    def forward(ctx, count, prob, generator=None):
        xp = xp_of(count)
        shape = broadcast_pair(count._data.shape, prob._data.shape)
        n = xp.floor(xp.broadcast_to(count._data, shape).astype(np.float64).reshape(-1))
        p = xp.broadcast_to(prob._data, shape).astype(np.float64).reshape(-1)
        with quiet_errors():
            n = xp.where(n > 0, n, 0.0)          # NaN and negative counts: 0
            p = xp.clip(xp.where(p != p, 0.0, p), 0.0, 1.0)
        flip = p > 0.5
        small_p = xp.where(flip, 1.0 - p, p)
        engine = _engine(count, generator)
        k = xp.zeros(n.shape, dtype=np.float64)
        low = xp.nonzero(n * small_p < _INVERSION_BELOW)[0]
        high = xp.nonzero(n * small_p >= _INVERSION_BELOW)[0]
        if low.size:
            k[low] = _inversion(n[low], small_p[low], engine, xp)
        if high.size:
            k[high] = _btrs(n[high], small_p[high], engine, xp)
        k = xp.where(flip, n - k, k)
        return k.reshape(shape).astype(count._data.dtype)

    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::binomial is not implemented")


def binomial(count, prob, generator=None):
    """Samples of Binomial(``count``, ``prob``) (floating tensors of one dtype, broadcast), in that
    dtype."""
    for arg, t in (("count", count), ("prob", prob)):
        if not isinstance(t, Tensor):
            raise TypeError(f"binomial(): argument '{arg}' must be Tensor, not {type(t).__name__}")
    if count._dtype._category != 2:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: {_LEGACY_NAMES[count._dtype]}")
    if prob._dtype is not count._dtype:
        raise RuntimeError(f"Found dtype {_LEGACY_NAMES[prob._dtype]} but expected {_LEGACY_NAMES[count._dtype]}")
    if count._dtype is _dtype.float16:
        raise NotImplementedError("\"binomial_cpu\" not implemented for 'Half'")
    return apply(BinomialBackward0, count, prob, generator=generator)
