"""``vander``, torch's top-level Vandermonde matrix: the powers of a vector, decreasing by default
(``linalg.vander``, in ``linalg_generators``, is the batched, increasing form it builds on)."""
from .. import _dtype
from .._tensor import Tensor
from .linalg_generators import vander as _linalg_vander

__all__ = ["vander"]


def vander(x, N=None, increasing=False):  # noqa: N803 - PyTorch's argument name
    """The (n, N) matrix of the powers of the 1-d ``x``: columns ``x**(N-1), ..., x**0`` (reversed
    with ``increasing``); ``N`` defaults to n. Integer and bool inputs give int64 (a composite of
    cumprod, so differentiable)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"vander(): argument 'x' (position 1) must be Tensor, not {type(x).__name__}")
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._data.shape[0]
    N = n if N is None else N  # noqa: N806
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    if x._dtype._category != 2:
        x = x.to(_dtype.int64)
    if N <= 1:
        powers = x.new_ones((n, N))
    else:
        powers = _linalg_vander(x, N=N)
    return powers if increasing else powers.flip(-1)
