"""quantile and nanquantile: composites of sort, gather and lerp, so differentiable for free.

The reduced dim is moved last and sorted (NaN sorts last). The rank of quantile ``q`` in a slice
of ``n`` values is ``q * (n - 1)`` in the input's dtype; ``quantile`` sends a slice holding NaN
to its last (NaN) value, ``nanquantile`` ranks among the non-NaN values only. The rank is
rounded for 'lower', 'higher' and 'nearest' (half to even), and the two neighbouring sorted
values are interpolated for 'linear' (weight: the fractional rank) and 'midpoint' (weight 1/2).
"""
from .._tensor import Tensor
from ._common import xp_of
from ._reducing import const, write_results
from .registry import tensor_method
from ..amp.autocast_mode import autocast_function

__all__ = ["quantile", "nanquantile"]

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _check(input, q, interpolation):
    if input._dtype.name not in ("float32", "float64"):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q._data.ndim > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if q._dtype is not input._dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        qx = q._data
        if qx.size and not bool(((qx >= 0) & (qx <= 1)).all()):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
    elif not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    if input._data.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if interpolation not in _MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or "
                           f"nearest, but got {interpolation}")


def _ranks(xp, sorted_x, qs, ignore_nan):
    """Fractional ranks, shape ``(Q,) + sorted_x.shape[:-1] + (1,)``, in the input's dtype."""
    x = sorted_x._data
    dt = x.dtype
    lead = (qs.shape[0],) + (1,) * x.ndim
    q = qs.astype(dt, copy=False).reshape(lead)
    nan = xp.isnan(x)
    if ignore_nan:
        count = (~nan).sum(axis=-1, keepdims=True) - 1
        ranks = q * count.astype(dt)
        return xp.where(ranks < 0, dt.type(0), ranks)
    last = x.shape[-1] - 1
    ranks = q * dt.type(last)
    return xp.where(nan.any(axis=-1, keepdims=True), dt.type(last), ranks)


def _differentiable_ranks(sorted_x, q, ignore_nan):
    """:func:`_ranks` as Tensor ops on ``q``, so that 'linear' quantiles pass gradients to ``q``."""
    from .comparison import where
    xp = xp_of(sorted_x)
    x = sorted_x._data
    qs = q.reshape((-1,) + (1,) * x.ndim)
    nan = xp.isnan(x)
    if ignore_nan:
        count = const(((~nan).sum(axis=-1, keepdims=True) - 1).astype(x.dtype), sorted_x)
        ranks = qs * count
        return where(const(ranks._data < 0, sorted_x), const(xp.zeros((), dtype=x.dtype), sorted_x), ranks)
    last = x.shape[-1] - 1
    ranks = qs * last
    return where(const(nan.any(axis=-1, keepdims=True), sorted_x), const(xp.asarray(last, dtype=x.dtype),
                                                                          sorted_x), ranks)


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    _check(input, q, interpolation)
    xp = xp_of(input)
    scalar_q = not isinstance(q, Tensor) or q._data.ndim == 0
    qs = xp.asarray([float(q)]) if not isinstance(q, Tensor) else q._data.reshape(-1)
    in_shape = input._data.shape
    if dim is None:
        x = input.reshape(-1)
    else:
        d = input._wrap_dim(dim)
        x = input.reshape(1) if not in_shape else input.movedim(d, -1)
    sorted_x = x.sort(-1).values
    ranks = _ranks(xp, sorted_x, qs, ignore_nan)
    if interpolation == "lower":
        ranks = xp.floor(ranks)
    elif interpolation == "higher":
        ranks = xp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = xp.round(ranks)
    expanded = sorted_x.unsqueeze(0).expand((qs.shape[0],) + sorted_x._data.shape)
    below = ranks.astype(xp.int64)
    result = expanded.gather(-1, const(below, input))
    if interpolation in ("linear", "midpoint"):
        above = expanded.gather(-1, const(xp.ceil(ranks).astype(xp.int64), input))
        if interpolation == "midpoint":
            weight = const(xp.full_like(ranks, 0.5), input)
        elif isinstance(q, Tensor) and q.requires_grad:
            weight = _differentiable_ranks(sorted_x, q, ignore_nan) - const(below.astype(ranks.dtype), input)
        else:
            weight = const(ranks - below.astype(ranks.dtype), input)
        result = result.lerp(above, weight)
    result = result.squeeze(-1)
    return _shape_result(result, in_shape, dim, keepdim, scalar_q)


def _shape_result(result, in_shape, dim, keepdim, scalar_q):
    """``result`` (Q, reduced dims...) laid out as PyTorch returns it."""
    q_len = result._data.shape[0]
    if keepdim:
        if dim is None or not in_shape:
            kept = (1,) * len(in_shape)
        else:
            d = dim % len(in_shape)
            kept = in_shape[:d] + (1,) + in_shape[d + 1:]
        result = result.reshape((q_len,) + kept)
    elif dim is None or not in_shape:
        result = result.reshape((q_len,))
    return result.squeeze(0) if scalar_q else result


@tensor_method("quantile")
@autocast_function("quantile")
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The ``q``-th quantiles of ``input`` along ``dim`` (all elements when None). ``q``: a float
    or a 0-/1-d tensor of the input's dtype, in [0, 1]; a 1-d ``q`` adds a leading dim of its
    length. A slice holding NaN gives NaN. Float32/64 inputs only."""
    result = _quantile(input, q, dim, keepdim, interpolation, False)
    return result if out is None else write_results(result, out)


@tensor_method("nanquantile")
@autocast_function("nanquantile")
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """:func:`quantile` ignoring NaN values (NaN only where a slice is all NaN)."""
    result = _quantile(input, q, dim, keepdim, interpolation, True)
    return result if out is None else write_results(result, out)

