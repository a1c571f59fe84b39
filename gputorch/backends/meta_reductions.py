"""Shape rules for NumPy's reductions (sum, mean, max, argmax, any, ...), scans (cumsum) and sorts:
the result dtype from NumPy on a one-element stand-in, the shape by arithmetic, the layout in the
input's memory order (NumPy's ``order='K'``).
"""
import numpy as np

from . import meta_ufuncs as _ufuncs
from .meta_array import MetaArray, _axis, no_values
from .meta_functions import RULES, dtype_of, keepdims_flag, meta, signature_of, stand_in
from .meta_layout import k_strides


# ---------------------------------------------------------------- reductions
def _reduction(func, no_identity=False, needs_axis=False):
    sig = signature_of(func)
    first = next(iter(sig.parameters))

    def handler(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        params = bound.arguments
        a = meta(params[first])
        axis = params.get("axis")
        if needs_axis and axis is None and not keepdims_flag(params.get("keepdims", False)):
            raise no_values(f"numpy.{func.__name__} over all elements")
        axes = _ufuncs.reduced_axes(a.ndim, axis)
        if no_identity and "initial" not in params and any(a.shape[i] == 0 for i in axes):
            name = func.__name__
            if name.startswith("arg") or name.startswith("nanarg"):
                raise ValueError(f"attempt to get {name.replace('nan', '')} of an empty sequence")
            raise ValueError(f"zero-size array to reduction operation {name.lstrip('a')} which has no identity")
        out = params.get("out")
        params[first] = stand_in(a)
        params.pop("out", None)
        if "where" in params:
            params["where"] = True
        dt = dtype_of(func, *bound.args, **bound.kwargs)
        if out is not None:
            return out
        result = _ufuncs.reduced_result(a, axes, keepdims_flag(params.get("keepdims", False)), dt)
        result.hint = _CLEAN_ANSWER.get(func)
        return result
    return handler


_CLEAN_ANSWER = {np.any: False, np.all: True}    # nothing special anywhere


for _f in (np.sum, np.prod, np.mean, np.std, np.var, np.any, np.all, np.nansum, np.nanprod, np.nanmean,
           np.nanstd, np.nanvar, np.median, np.nanmedian):
    RULES[_f] = _reduction(_f)
for _f in (np.max, np.min, np.amax, np.amin, np.argmax, np.argmin, np.ptp, np.nanmax, np.nanmin,
           np.nanargmax, np.nanargmin):
    RULES[_f] = _reduction(_f, no_identity=True)
RULES[np.count_nonzero] = _reduction(np.count_nonzero, needs_axis=True)


# ---------------------------------------------------------------- scans and sorts (same shape, or flat)
def _along_axis(func, flat_when_none=True, layout="C"):
    sig = signature_of(func)
    first = next(iter(sig.parameters))

    def handler(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        params = bound.arguments
        a = meta(params[first])
        axis = params.get("axis", sig.parameters["axis"].default if "axis" in sig.parameters else None)
        out = params.pop("out", None)
        if axis is None and flat_when_none:
            shape = (a.size,)
            params["axis"] = None
        else:
            _axis(axis, a.ndim)
            shape = a.shape
        params[first] = stand_in(a)
        if "kth" in params:
            params["kth"] = 0
        dt = dtype_of(func, *bound.args, **bound.kwargs)
        if out is not None:
            return out
        strides = k_strides(shape, dt.itemsize, [a.strides]) if layout == "K" and shape == a.shape else None
        return MetaArray(shape, dt, strides)
    return handler


for _f in (np.cumsum, np.cumprod, np.nancumsum, np.nancumprod, np.argsort, np.argpartition):
    RULES[_f] = _along_axis(_f)
for _f in (np.sort, np.partition):
    RULES[_f] = _along_axis(_f, layout="K")
for _f in (getattr(np, "cumulative_sum", None), getattr(np, "cumulative_prod", None)):
    if _f is not None:
        RULES[_f] = _along_axis(_f, flat_when_none=False)
