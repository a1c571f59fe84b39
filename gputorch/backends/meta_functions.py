"""NumPy functions on shape-only arrays (``__array_function__``): one shape rule per function.

A rule computes the result's shape by arithmetic on the argument shapes and takes the result
dtype from NumPy itself, by running the same function on tiny stand-ins of the arguments' dtypes
(so promotion, ``dtype=`` and casting checks are NumPy's). Results NumPy returns as views are
views here too (same owner), with NumPy's strides.

The rules live by family in ``meta_reductions.py`` (reductions, scans, sorts), ``meta_shaping.py``
(views, shape changes, joining, gathering) and ``meta_products.py`` (dot, tensordot, einsum);
this module holds the dispatch, the shared helpers, the element-wise and ``*_like`` rules.

Functions without a rule fall back to :func:`_run_on_stand_ins`: NumPy runs on zero-stride
arrays of the real shapes (no memory for the inputs, the exact result shape), which is allowed
only while every input is small, so a huge meta array never turns into a huge NumPy result.
Functions whose result shape depends on values (``nonzero``, ``unique`` ...) raise.
"""
import inspect
import warnings

import numpy as np

from . import meta_ufuncs as _ufuncs
from .meta_array import MetaArray, no_values
from .meta_layout import broadcast_strides, k_strides

__all__ = ["apply_function", "RULES", "SMALL"]

RULES = {}
SMALL = 1 << 16      # largest input (elements) the stand-in fallback may run on


def rule(*funcs):
    def register(fn):
        for f in funcs:
            if f is not None:
                RULES[f] = fn
        return fn
    return register


def apply_function(func, types, args, kwargs):
    handler = RULES.get(func)
    if handler is not None:
        return handler(*args, **kwargs)
    if func in _DATA_DEPENDENT:
        raise no_values(f"numpy.{func.__name__}")
    return _run_on_stand_ins(func, args, kwargs)


# ---------------------------------------------------------------- helpers
def meta(x):
    """``x`` as a MetaArray (host arrays and scalars give their shape and dtype)."""
    if isinstance(x, MetaArray):
        return x
    arr = np.asarray(x)
    return MetaArray(arr.shape, arr.dtype, arr.strides if isinstance(x, np.ndarray) else None)


def stand_in(x, ndim=None):
    """A one-element NumPy array with ``x``'s dtype (``ndim`` dims of size 1), for asking NumPy for a
    result dtype; Python scalars stay themselves (they promote as weak scalars)."""
    if isinstance(x, (MetaArray, np.ndarray)):
        return np.ones((1,) * (x.ndim if ndim is None else ndim), x.dtype)
    if isinstance(x, (list, tuple)):
        return stand_in(np.asarray(x), ndim)
    return x


def dtype_of(func, *args, **kwargs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")     # e.g. "degrees of freedom <= 0" on a one-element stand-in
        return np.asarray(func(*args, **kwargs)).dtype


def is_array(x):
    return isinstance(x, (MetaArray, np.ndarray))


def keepdims_flag(value):
    return value is not np._NoValue and bool(value)


def signature_of(func):
    try:
        return inspect.signature(func)
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------- element by element
def _elementwise(func):
    """Functions that broadcast their array arguments element by element (clip, where, round ...)."""
    def handler(*args, **kwargs):
        out = kwargs.pop("out", None)
        shapes, operands = [], []
        for x in list(args) + list(kwargs.values()):
            if is_array(x):
                shapes.append(x.shape)
                operands.append(x)
        shape = _ufuncs.broadcast_shape(shapes)
        dt = dtype_of(func, *[stand_in(x, 0) if is_array(x) else x for x in args],
                       **{k: stand_in(v, 0) if is_array(v) else v for k, v in kwargs.items()})
        if out is not None:
            return out
        return MetaArray(shape, dt, k_strides(shape, dt.itemsize,
                                              [broadcast_strides(x.shape, x.strides, shape) for x in operands]))
    return handler


for _f in (np.clip, np.round, np.around, np.nan_to_num, np.isclose, np.fix, np.real_if_close, np.isin):
    RULES[_f] = _elementwise(_f)


@rule(np.where)
def _where(condition, *xy):
    if not xy:
        raise no_values("numpy.where(condition) (the positions of nonzero elements)")
    return _elementwise(np.where)(condition, *xy)


@rule(np.copy)
def _copy(a, order="K", subok=False):
    return meta(a).copy(order=order)


@rule(np.roll, np.tril, np.triu)
def _same_shape_c(a, *args, **kwargs):
    a = meta(a)
    return MetaArray(a.shape, a.dtype)


@rule(np.searchsorted)
def _searchsorted(a, v, side="left", sorter=None):
    return MetaArray(np.shape(v) if not isinstance(v, MetaArray) else v.shape, np.intp)


# ---------------------------------------------------------------- new arrays like others
@rule(np.zeros_like, np.ones_like, np.empty_like)
def _like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
    a = meta(a)
    dt = a.dtype if dtype is None else np.dtype(dtype)
    if shape is not None:
        return MetaArray((shape,) if isinstance(shape, (int, np.integer)) else tuple(shape), dt)
    strides = k_strides(a.shape, dt.itemsize, [a.strides]) if order == "K" else None
    return MetaArray(a.shape, dt, strides)


@rule(np.full_like)
def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return _like(a, dtype, order, subok, shape)


# ---------------------------------------------------------------- metadata
@rule(np.shape)
def _shape(a):
    return a.shape


@rule(np.ndim)
def _ndim(a):
    return a.ndim


@rule(np.size)
def _size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


@rule(np.may_share_memory, np.shares_memory)
def _shares(a, b, max_work=None):
    if isinstance(a, MetaArray) and isinstance(b, MetaArray):
        return a.owner is b.owner
    return False


@rule(np.result_type)
def _result_type(*arrays_and_dtypes):
    return np.result_type(*[stand_in(x) if isinstance(x, MetaArray) else x for x in arrays_and_dtypes])


@rule(np.can_cast)
def _can_cast(from_, to, casting="safe"):
    return np.can_cast(from_.dtype if isinstance(from_, MetaArray) else from_, to, casting)


@rule(np.iscomplexobj)
def _iscomplexobj(x):
    return x.dtype.kind == "c"


@rule(np.isrealobj)
def _isrealobj(x):
    return x.dtype.kind != "c"


# ---------------------------------------------------------------- the fallback
_DATA_DEPENDENT = {f for f in (np.nonzero, np.argwhere, np.flatnonzero, np.unique, np.bincount, np.histogram,
                               np.extract, np.compress, np.array_equal, np.array_equiv, np.allclose,
                               np.trim_zeros, getattr(np, "unique_values", None),
                               getattr(np, "unique_counts", None), getattr(np, "unique_inverse", None),
                               getattr(np, "unique_all", None)) if f is not None}


def _replace(obj, arrays):
    if isinstance(obj, MetaArray):
        dummy = np.lib.stride_tricks.as_strided(np.zeros(1, obj.dtype), obj.shape, (0,) * obj.ndim)
        arrays.append((obj, dummy))
        return dummy
    if isinstance(obj, list):
        return [_replace(x, arrays) for x in obj]
    if isinstance(obj, tuple):
        return tuple(_replace(x, arrays) for x in obj)
    return obj


def _owner_of(result, arrays):
    root = result
    while isinstance(root.base, np.ndarray):
        root = root.base
    for m, dummy in arrays:
        d = dummy
        while isinstance(d.base, np.ndarray):
            d = d.base
        if d is root:
            return m
    return None


def _convert(result, arrays, name):
    if isinstance(result, np.ndarray):
        src = _owner_of(result, arrays)
        if src is not None:
            return src.view_of(result.shape, MetaArray(result.shape, result.dtype).strides)
        return MetaArray(result.shape, result.dtype, result.strides if result.size else None)
    if isinstance(result, np.generic):
        return MetaArray((), result.dtype)
    if isinstance(result, (list, tuple)):
        items = [_convert_item(r, arrays, name) for r in result]
        return type(result)(items) if not hasattr(result, "_fields") else type(result)(*items)
    if result is None or isinstance(result, str):
        return result
    raise no_values(f"numpy.{name} (it returns a value computed from the data)")


def _convert_item(r, arrays, name):
    if isinstance(r, (np.ndarray, np.generic, list, tuple)):
        return _convert(r, arrays, name)
    return r


def _run_on_stand_ins(func, args, kwargs):
    arrays = []
    dargs = _replace(args, arrays)
    dkwargs = {k: _replace(v, arrays) for k, v in kwargs.items()}
    name = getattr(func, "__name__", str(func))
    big = [m.shape for m, _ in arrays if m.size > SMALL]
    if big:
        raise NotImplementedError(f"numpy.{name} has no shape rule for meta arrays, and its inputs "
                                  f"({big[0]}) are too large to run it on stand-ins")
    with np.errstate(all="ignore"):
        result = func(*dargs, **dkwargs)
    return _convert(result, arrays, name)


# The rule families register themselves in RULES (imported last: they build on the helpers above).
from . import meta_products, meta_reductions, meta_shaping  # noqa: E402,F401
