"""``make_tensor``: a random tensor for tests, with PyTorch's value ranges per dtype.

Values are drawn with gputorch's generator (``gputorch.manual_seed`` makes them
repeatable), uniformly:

==============  ======================  ===========================================
dtype           default range           given ``low`` / ``high``
==============  ======================  ===========================================
bool            {False, True}           ignored
uint8           integers in [0, 10)     integers in [ceil(low), ceil(high))
other integers  integers in [-9, 10)    integers in [ceil(low), ceil(high))
floating        [-9, 9)                 [low, high); ``low == high`` gives a constant
==============  ======================  ===========================================

``low`` and ``high`` are first clamped to what the dtype can hold.
"""
import math
import warnings

import numpy as np

from .. import _dtype
from .._type_info import finfo

__all__ = ["make_tensor"]


def _shape_from(shape):
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        return tuple(shape[0])
    return tuple(shape)


def _dtype_limits(dtype):
    info = finfo(dtype) if dtype._category == 2 else np.iinfo(dtype.np)
    return float(info.min), float(info.max)


def _range(dtype, low, high, default_low, default_high):
    """``(low, high)`` with defaults filled in, checked and clamped to the dtype's range."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if math.isnan(low) or math.isnan(high):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low > high or (low == high and dtype._category != 2):
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    lo, hi = _dtype_limits(dtype)
    return min(max(low, lo), hi), min(max(high, lo), hi)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` filled with random values of ``dtype`` on ``device``.

    ``shape``: ints, or one sequence of ints. ``exclude_zero`` replaces zeros by 1 (integers
    and bool) or by the dtype's smallest positive normal number (floating). ``noncontiguous``
    returns a strided view (every other element of a twice-as-long last dimension) when the
    tensor has more than one element. ``requires_grad`` needs a floating dtype (ValueError).
    """
    import gputorch

    shape = _shape_from(shape)
    if requires_grad and dtype._category != 2:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, "
                         f"but got dtype={dtype}")
    numel = math.prod(shape)
    drawn = shape[:-1] + (shape[-1] * 2,) if noncontiguous and numel > 1 else shape
    if dtype is _dtype.bool:
        result = gputorch.randint(0, 2, drawn, device=device).to(dtype)
    elif dtype._category == 1:
        default_low = 0 if dtype is _dtype.uint8 else -9
        low, high = _range(dtype, low, high, default_low, 10)
        result = gputorch.randint(math.ceil(low), math.ceil(high), drawn, device=device, dtype=dtype)
    else:
        low, high = _range(dtype, low, high, -9, 9)
        if low == high:
            warnings.warn("Passing `low==high` to `gputorch.testing.make_tensor` for floating types is "
                          "deprecated (as in PyTorch). Use `gputorch.full(...)` instead.", FutureWarning,
                          stacklevel=2)
            result = gputorch.full(drawn, low, dtype=dtype, device=device)
        else:
            result = gputorch.empty(drawn, dtype=dtype, device=device).uniform_(low, high)
    if exclude_zero:
        replacement = 1 if dtype._category != 2 else finfo(dtype).tiny
        result = gputorch.where(result == 0, gputorch.full((), replacement, dtype=dtype, device=device), result)
    if drawn != shape:
        result = result[..., ::2]
    elif memory_format is not None:
        result = result.contiguous(memory_format=memory_format)
    if requires_grad:
        result.requires_grad_(True)
    return result
