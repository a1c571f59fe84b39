"""``cov`` and ``corrcoef``: the covariance and correlation matrices of variables (rows) observed
in columns, as NumPy's ``cov``/``corrcoef`` define them, with frequency and importance weights.

Both are composites of the reductions and matmul, so their gradients come for free.
"""
import warnings

from .. import _dtype
from .._tensor import Tensor
from .registry import tensor_method

__all__ = ["cov", "corrcoef"]


def _observations(input, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input._data.ndim > 2:
        raise RuntimeError(f"{name}(): expected input to have two or fewer dimensions but got an input with "
                           f"{input._data.ndim} dimensions")
    x = input if input._data.ndim == 2 else input.reshape(1, -1)
    return x if x._dtype._category == 2 else x.to(_dtype.get_default_dtype())


def _checked_weights(w, kind, num_obs, integral):
    if w._data.ndim > 1:
        raise RuntimeError(f"cov(): expected {kind} to have one or fewer dimensions but got {kind} with "
                           f"{w._data.ndim} dimensions")
    if w.numel() != num_obs:
        raise RuntimeError(f"cov(): expected {kind} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {num_obs}")
    if integral and w._dtype._category != 1:
        raise RuntimeError(f"cov(): expected {kind} to have integral dtype but got {kind} with "
                           f"{_dtype._LEGACY_NAMES[w._dtype]} dtype")
    if not integral and w._dtype._category != 2:
        raise RuntimeError(f"cov(): expected {kind} to have floating point dtype but got {kind} with "
                           f"{_dtype._LEGACY_NAMES[w._dtype]} dtype")
    if w.numel() and bool((w._data < 0).any()):
        raise RuntimeError(f"cov(): {kind} cannot be negative")
    return w


@tensor_method("cov")
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix (or, for a 1-d input, the variance) of the rows of ``input``
    (variables) over its columns (observations). ``fweights`` (integers) repeat observations,
    ``aweights`` (floats) weight them; ``correction`` is subtracted from the (weighted) count,
    1 being Bessel's correction. Where that count is not positive the result is NaN or inf,
    with PyTorch's warning."""
    x = _observations(input, "cov")
    num_obs = x._data.shape[1]
    w = None
    if fweights is not None:
        w = _checked_weights(fweights, "fweights", num_obs, True)
    if aweights is not None:
        a = _checked_weights(aweights, "aweights", num_obs, False)
        w = a if w is None else w * a
    if w is None:
        total = num_obs
        mean = x.mean(1, keepdim=True)
        norm = total - correction
    else:
        total = w.sum()
        if not bool(total._data != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        mean = (x * w).sum(1, keepdim=True) / total
        if correction != 0 and aweights is not None:
            norm = total - correction * (w * aweights).sum() / total
        else:
            norm = total - correction
    low = float(norm) <= 0 if not isinstance(norm, Tensor) else bool((norm._data <= 0).all())
    if low:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", stacklevel=2)
        norm = 0.0   # (not norm * 0: a negative count would give -0.0, and infinities of the wrong sign)
    centred = x - mean
    weighted = centred if w is None else centred * w
    result = (centred @ weighted.t()) / norm
    return result.squeeze()   # one variable: its variance, 0-d (as NumPy's cov)


@tensor_method("corrcoef")
def corrcoef(input):
    """Pearson's correlation coefficients of the rows of ``input`` (``cov`` normalised by the
    standard deviations, clipped to [-1, 1]); a 1-d input gives ``var / var`` (1, or NaN)."""
    _observations(input, "corrcoef")
    c = cov(input)
    if c._data.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    return c.clamp(-1, 1)
