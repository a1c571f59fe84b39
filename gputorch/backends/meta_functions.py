"""NumPy functions on shape-only arrays (``__array_function__``): one shape rule per function.

A rule computes the result's shape by arithmetic on the argument shapes and takes the result
dtype from NumPy itself, by running the same function on tiny stand-ins of the arguments' dtypes
(so promotion, ``dtype=`` and casting checks are NumPy's). Results NumPy returns as views are
views here too (same owner), with NumPy's strides.

Functions without a rule fall back to :func:`_run_on_stand_ins`: NumPy runs on zero-stride
arrays of the real shapes (no memory for the inputs, the exact result shape), which is allowed
only while every input is small, so a huge meta array never turns into a huge NumPy result.
Functions whose result shape depends on values (``nonzero``, ``unique`` ...) raise.
"""
import inspect
import math
import operator
import warnings

import numpy as np

from .meta_array import MetaArray, _axis, no_values
from .meta_layout import broadcast_strides, k_strides, strides_in_order
from . import meta_ufuncs as _ufuncs

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


def _dtype_of(func, *args, **kwargs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")     # e.g. "degrees of freedom <= 0" on a one-element stand-in
        return np.asarray(func(*args, **kwargs)).dtype


def _is_array(x):
    return isinstance(x, (MetaArray, np.ndarray))


def _keepdims(value):
    return value is not np._NoValue and bool(value)


def _signature(func):
    try:
        return inspect.signature(func)
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------- reductions
def _reduction(func, no_identity=False, needs_axis=False):
    sig = _signature(func)
    first = next(iter(sig.parameters))

    def handler(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        params = bound.arguments
        a = meta(params[first])
        axis = params.get("axis")
        if needs_axis and axis is None and not _keepdims(params.get("keepdims", False)):
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
        dt = _dtype_of(func, *bound.args, **bound.kwargs)
        if out is not None:
            return out
        result = _ufuncs.reduced_result(a, axes, _keepdims(params.get("keepdims", False)), dt)
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


@rule(np.trace)
def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d = _diagonal(a, offset, axis1, axis2)
    dt = _dtype_of(np.trace, stand_in(a), dtype=dtype)
    return out if out is not None else MetaArray(d.shape[:-1], dt)


# ---------------------------------------------------------------- same shape as the input
def _along_axis(func, flat_when_none=True, layout="C"):
    sig = _signature(func)
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
        dt = _dtype_of(func, *bound.args, **bound.kwargs)
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


def _elementwise(func):
    """Functions that broadcast their array arguments element by element (clip, where, round ...)."""
    def handler(*args, **kwargs):
        out = kwargs.pop("out", None)
        shapes, operands = [], []
        for x in list(args) + list(kwargs.values()):
            if _is_array(x):
                shapes.append(x.shape)
                operands.append(x)
        shape = _ufuncs.broadcast_shape(shapes)
        dt = _dtype_of(func, *[stand_in(x, 0) if _is_array(x) else x for x in args],
                       **{k: stand_in(v, 0) if _is_array(v) else v for k, v in kwargs.items()})
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


# ---------------------------------------------------------------- views and shape changes
@rule(np.reshape)
def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    return meta(a).reshape(shape if shape is not None else newshape, order=order, copy=copy)


@rule(np.ravel)
def _ravel(a, order="C"):
    return meta(a).ravel()


@rule(np.transpose)
def _transpose(a, axes=None):
    return meta(a).transpose(axes)


@rule(getattr(np, "permute_dims", None))
def _permute_dims(a, axes=None):
    return meta(a).transpose(axes)


@rule(np.swapaxes)
def _swapaxes(a, axis1, axis2):
    return meta(a).swapaxes(axis1, axis2)


@rule(np.squeeze)
def _squeeze(a, axis=None):
    return meta(a).squeeze(axis)


def _axis_tuple(axis, ndim):
    axes = tuple(_axis(x, ndim) for x in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    return axes


@rule(np.moveaxis)
def _moveaxis(a, source, destination):
    a = meta(a)
    src, dst = _axis_tuple(source, a.ndim), _axis_tuple(destination, a.ndim)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return a.transpose(order)


@rule(np.expand_dims)
def _expand_dims(a, axis):
    a = meta(a)
    nd = a.ndim + len(axis if isinstance(axis, (tuple, list)) else (axis,))
    axes = _axis_tuple(axis, nd)
    it = iter(a.shape)
    return a.reshape(tuple(1 if i in axes else next(it) for i in range(nd)))


def _atleast(ndim):
    def promote(a):
        a = meta(a)
        if a.ndim >= ndim:
            return a
        if a.ndim == 0:
            return a.reshape((1,) * ndim)
        if ndim == 2:
            return a[None, :]
        return a[None, :, None] if a.ndim == 1 else a[:, :, None]

    def handler(*arys):
        out = [promote(a) for a in arys]
        return out[0] if len(out) == 1 else tuple(out)
    return handler


RULES[np.atleast_1d], RULES[np.atleast_2d], RULES[np.atleast_3d] = _atleast(1), _atleast(2), _atleast(3)


def _broadcast_to(a, shape):
    a = meta(a)
    shape = tuple(operator.index(n) for n in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    try:
        ok = tuple(np.broadcast_shapes(a.shape, shape)) == shape
    except ValueError:
        ok = False
    if not ok or len(shape) < a.ndim:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {a.shape} and requested shape {shape}")
    return a.view_of(shape, broadcast_strides(a.shape, a.strides, shape))


@rule(np.broadcast_to)
def _broadcast_to_rule(array, shape, subok=False):
    return _broadcast_to(array, shape)


@rule(np.broadcast_arrays)
def _broadcast_arrays(*args, subok=False):
    shape = _ufuncs.broadcast_shape([np.shape(a) if not isinstance(a, MetaArray) else a.shape for a in args])
    return tuple(meta(a) if tuple(np.shape(a) if not isinstance(a, MetaArray) else a.shape) == shape
                 else _broadcast_to(a, shape) for a in args)


def _diagonal(a, offset=0, axis1=0, axis2=1):
    a = meta(a)
    ax1, ax2 = _axis(axis1, a.ndim), _axis(axis2, a.ndim)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    n1, n2 = a.shape[ax1], a.shape[ax2]
    if offset >= 0:
        length = max(0, min(n1, n2 - offset))
        start = offset * a.strides[ax2]
    else:
        length = max(0, min(n1 + offset, n2))
        start = -offset * a.strides[ax1]
    keep = [i for i in range(a.ndim) if i not in (ax1, ax2)]
    shape = tuple(a.shape[i] for i in keep) + (length,)
    strides = tuple(a.strides[i] for i in keep) + (a.strides[ax1] + a.strides[ax2],)
    return a.view_of(shape, strides, start if length else 0)


RULES[np.diagonal] = _diagonal


@rule(np.flip)
def _flip(m, axis=None):
    m = meta(m)
    axes = range(m.ndim) if axis is None else _axis_tuple(axis, m.ndim)
    key = tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(m.ndim))
    return m[key]


def _split(ary, indices_or_sections, axis=0, strict=False):
    a = meta(ary)
    ax = _axis(axis, a.ndim)
    n = a.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        if extra and strict:
            raise ValueError("array split does not result in an equal division")
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = np.cumsum([0] + sizes).tolist()
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    pieces = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        key = [slice(None)] * a.ndim
        key[ax] = slice(lo, hi)
        pieces.append(a[tuple(key)])
    return pieces


@rule(np.split)
def _split_rule(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, strict=True)


@rule(np.array_split)
def _array_split_rule(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis)


@rule(np.lib.stride_tricks.sliding_window_view)
def _sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    x = meta(x)
    window = tuple(window_shape) if isinstance(window_shape, (tuple, list)) else (window_shape,)
    axes = tuple(range(x.ndim)) if axis is None else _axis_tuple(axis, x.ndim)
    if len(window) != len(axes):
        raise ValueError("Must provide matching length window_shape and axis; got "
                         f"{len(window)} window_shape elements and {len(axes)} axes elements.")
    shape = list(x.shape)
    for ax, w in zip(axes, window):
        if shape[ax] < w:
            raise ValueError("window shape cannot be larger than input array shape")
        shape[ax] -= w - 1
    return x.view_of(tuple(shape) + window, x.strides + tuple(x.strides[ax] for ax in axes))


# ---------------------------------------------------------------- joining and gathering
def _join_dtype(func, arrays, axis, dtype, casting, nd):
    return _dtype_of(func, [stand_in(a, nd) for a in arrays], axis=axis if axis is None else 0,
                     dtype=dtype, casting=casting)


@rule(np.concatenate)
def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = [meta(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        shape = (sum(a.size for a in arrays),)
        dt = _dtype_of(np.concatenate, [stand_in(a, 1) for a in arrays], dtype=dtype, casting=casting)
    else:
        nd = arrays[0].ndim
        if nd == 0:
            raise ValueError("zero-dimensional arrays cannot be concatenated")
        ax = _axis(axis, nd)
        for i, a in enumerate(arrays[1:], 1):
            if a.ndim != nd:
                raise ValueError(f"all the input array dimensions except for the concatenation axis must match "
                                 f"exactly, but the array at index 0 has {nd} dimension(s) and the array at "
                                 f"index {i} has {a.ndim} dimension(s)")
            for d in range(nd):
                if d != ax and a.shape[d] != arrays[0].shape[d]:
                    raise ValueError(f"all the input array dimensions except for the concatenation axis must "
                                     f"match exactly, but along dimension {d}, the array at index 0 has size "
                                     f"{arrays[0].shape[d]} and the array at index {i} has size {a.shape[d]}")
        shape = list(arrays[0].shape)
        shape[ax] = sum(a.shape[ax] for a in arrays)
        shape = tuple(shape)
        dt = _dtype_of(np.concatenate, [stand_in(a) for a in arrays], axis=ax, dtype=dtype, casting=casting)
    return out if out is not None else MetaArray(shape, dt)


@rule(np.stack)
def _stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrays = [meta(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays):
        raise ValueError("all input arrays must have the same shape")
    ax = _axis(axis, len(shape) + 1)
    dt = _dtype_of(np.stack, [stand_in(a) for a in arrays], dtype=dtype, casting=casting)
    new = shape[:ax] + (len(arrays),) + shape[ax:]
    return out if out is not None else MetaArray(new, dt)


def _check_host_indices(indices, n, axis):
    if isinstance(indices, np.ndarray) and indices.size and n is not None:
        bad = indices[(indices < -n) | (indices >= n)]
        if bad.size:
            raise IndexError(f"index {int(bad.flat[0])} is out of bounds for axis {axis} with size {n}")


@rule(np.take)
def _take(a, indices, axis=None, out=None, mode="raise"):
    a = meta(a)
    idx = indices if isinstance(indices, MetaArray) else np.asarray(indices)
    if idx.dtype.kind not in "iu" and not (isinstance(idx, np.ndarray) and idx.size == 0):
        raise TypeError(f"Cannot cast array data from {idx.dtype!r} to dtype('int64') according to the rule 'safe'")
    if axis is None:
        if mode == "raise":
            _check_host_indices(idx, a.size, 0)
        shape = idx.shape
    else:
        ax = _axis(axis, a.ndim)
        if mode == "raise":
            _check_host_indices(idx, a.shape[ax], ax)
        shape = a.shape[:ax] + idx.shape + a.shape[ax + 1:]
    return out if out is not None else MetaArray(shape, a.dtype)


@rule(np.take_along_axis)
def _take_along_axis(arr, indices, axis=-1):
    arr = meta(arr)
    idx = indices if isinstance(indices, MetaArray) else np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        return MetaArray(idx.shape, arr.dtype)
    if idx.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    ax = _axis(axis, arr.ndim)
    shape = []
    for d, (n, m) in enumerate(zip(arr.shape, idx.shape)):
        if d == ax:
            shape.append(m)
        else:
            shape.append(_ufuncs.broadcast_shape([(n,), (m,)], "shape mismatch: indexing arrays")[0])
    return MetaArray(tuple(shape), arr.dtype)


@rule(np.put_along_axis, np.put, np.place, np.putmask, np.fill_diagonal)
def _write_in_place(*args, **kwargs):
    return None


@rule(np.copyto)
def _copyto(dst, src, casting="same_kind", where=True):
    shape = getattr(src, "shape", np.shape(src) if isinstance(src, (list, tuple)) else ())
    if tuple(np.broadcast_shapes(tuple(shape), dst.shape)) != dst.shape:
        raise ValueError(f"could not broadcast input array from shape {tuple(shape)} into shape {dst.shape}")
    return None


@rule(np.repeat)
def _repeat(a, repeats, axis=None):
    a = meta(a)
    if isinstance(repeats, MetaArray):
        if repeats.size != 1:
            raise no_values("numpy.repeat with per-element repeat counts")
        raise no_values("numpy.repeat with a meta repeat count")
    reps = np.asarray(repeats)
    n = a.size if axis is None else a.shape[_axis(axis, a.ndim)]
    if reps.size == 1:
        total = n * int(reps.reshape(()))
    elif reps.size == n:
        total = int(reps.sum())
    else:
        raise ValueError(f"operands could not be broadcast together with shape ({n},) ({reps.size},)")
    if axis is None:
        return MetaArray((total,), a.dtype)
    shape = list(a.shape)
    shape[_axis(axis, a.ndim)] = total
    return MetaArray(tuple(shape), a.dtype)


@rule(np.tile)
def _tile(A, reps):
    a = meta(A)
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (int(reps),)
    nd = max(a.ndim, len(reps))
    shape = (1,) * (nd - a.ndim) + a.shape
    reps = (1,) * (nd - len(reps)) + reps
    out = tuple(n * r for n, r in zip(shape, reps))
    if all(r == 1 for r in reps):
        return a.copy() if nd == a.ndim else a.copy().reshape(out)
    return MetaArray(out, a.dtype).reshape(out)        # NumPy returns a reshaped view of its repeat


@rule(np.pad)
def _pad(array, pad_width, mode="constant", **kwargs):
    a = meta(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (a.ndim, 2))
    if (widths < 0).any():
        raise ValueError("index can't contain negative values")
    return MetaArray(tuple(n + int(lo) + int(hi) for n, (lo, hi) in zip(a.shape, widths)), a.dtype)


@rule(np.diag)
def _diag(v, k=0):
    v = meta(v)
    if v.ndim == 1:
        n = v.shape[0] + abs(k)
        return MetaArray((n, n), v.dtype)
    if v.ndim == 2:
        return _diagonal(v, k)
    raise ValueError("Input must be 1- or 2-d.")


# ---------------------------------------------------------------- products
@rule(np.dot)
def _dot(a, b, out=None):
    a, b = meta(a), meta(b)
    dt = _dtype_of(np.dot, stand_in(a, min(a.ndim, 1)), stand_in(b, min(b.ndim, 1)))
    if a.ndim == 0 or b.ndim == 0:
        shape = _ufuncs.broadcast_shape([a.shape, b.shape])
    else:
        k_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
        if a.shape[-1] != k_b:
            raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                             f"{k_b} (dim {max(b.ndim - 2, 0)})")
        shape = a.shape[:-1] + b.shape[:-2] + b.shape[-1:] if b.ndim > 1 else a.shape[:-1]
    return out if out is not None else MetaArray(shape, dt)


@rule(np.vdot)
def _vdot(a, b):
    a, b = meta(a), meta(b)
    if a.size != b.size:
        raise ValueError("cannot reshape array")
    return MetaArray((), _dtype_of(np.vdot, stand_in(a, 1), stand_in(b, 1)))


@rule(np.inner)
def _inner(a, b):
    a, b = meta(a), meta(b)
    if a.ndim and b.ndim and a.shape[-1] != b.shape[-1]:
        raise ValueError("shapes not aligned")
    dt = _dtype_of(np.inner, stand_in(a, min(a.ndim, 1)), stand_in(b, min(b.ndim, 1)))
    if not a.ndim or not b.ndim:
        return MetaArray(a.shape + b.shape, dt)
    return MetaArray(a.shape[:-1] + b.shape[:-1], dt)


@rule(np.outer)
def _outer(a, b, out=None):
    a, b = meta(a), meta(b)
    dt = _dtype_of(np.outer, stand_in(a, 1), stand_in(b, 1))
    return out if out is not None else MetaArray((a.size, b.size), dt)


@rule(np.tensordot)
def _tensordot(a, b, axes=2):
    a, b = meta(a), meta(b)
    if isinstance(axes, (int, np.integer)):
        axes_a = list(range(a.ndim - axes, a.ndim))
        axes_b = list(range(axes))
    else:
        axes_a, axes_b = axes
        axes_a = list(axes_a) if isinstance(axes_a, (list, tuple)) else [axes_a]
        axes_b = list(axes_b) if isinstance(axes_b, (list, tuple)) else [axes_b]
    axes_a = [_axis(x, a.ndim) for x in axes_a]
    axes_b = [_axis(x, b.ndim) for x in axes_b]
    if len(axes_a) != len(axes_b) or any(a.shape[i] != b.shape[j] for i, j in zip(axes_a, axes_b)):
        raise ValueError("shape-mismatch for sum")
    shape = tuple(n for i, n in enumerate(a.shape) if i not in axes_a) + \
        tuple(n for j, n in enumerate(b.shape) if j not in axes_b)
    dt = _dtype_of(np.dot, stand_in(a, 1), stand_in(b, 1))
    return MetaArray((math.prod(shape),), dt).reshape(shape)      # NumPy reshapes its 2-D product


def _einsum_terms(subscripts, operands):
    """``(input label lists, output labels)``, with each '...' expanded to per-operand labels."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, rhs = subscripts.split("->")
    else:
        lhs, rhs = subscripts, None
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError("more operands provided to einstein sum function than specified in the subscripts "
                         "string" if len(operands) > len(terms) else
                         "fewer operands provided to einstein sum function than specified in the subscripts "
                         "string")
    ell_dims = 0
    labels = []
    for term, op in zip(terms, operands):
        if "..." in term:
            n = op.ndim - (len(term) - 3)
            ell_dims = max(ell_dims, n)
            head, tail = term.split("...")
            labels.append(list(head) + [f".{i}" for i in range(ell_dims - n, ell_dims)] + list(tail))
        else:
            if len(term) != op.ndim:
                raise ValueError(f"operand has more dimensions than subscripts given in einstein sum, but no "
                                 f"'...' ellipsis provided to broadcast the extra dimensions.")
            labels.append(list(term))
    ell = [f".{i}" for i in range(ell_dims)]
    if rhs is None:
        counts = {}
        for ls in labels:
            for c in ls:
                counts[c] = counts.get(c, 0) + 1
        out = ell + sorted(c for c, k in counts.items() if k == 1 and not c.startswith("."))
    elif "..." in rhs:
        head, tail = rhs.split("...")
        out = list(head) + ell + list(tail)
    else:
        out = list(rhs)
    return labels, out


@rule(np.einsum)
def _einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    if not isinstance(operands[0], str):
        raise NotImplementedError("numpy.einsum in the interleaved (operand, sublist) form on meta arrays")
    subscripts, ops = operands[0], [meta(o) for o in operands[1:]]
    labels, out_labels = _einsum_terms(subscripts, ops)
    sizes = {}
    for ls, op in zip(labels, ops):
        for c, n in zip(ls, op.shape):
            old = sizes.get(c)
            if old is None or old == 1:
                sizes[c] = n
            elif n != 1 and n != old:
                raise ValueError(f"operands could not be broadcast together with remapped shapes "
                                 f"[original->remapped]: size {n} and {old} for subscript {c!r}")
    shape = tuple(sizes[c] for c in out_labels)
    dt = _dtype_of(np.einsum, subscripts, *[stand_in(o) for o in ops], dtype=dtype, casting=casting)
    if out is not None:
        return out
    if len(ops) == 1 and set(labels[0]) <= set(out_labels) and dtype is None:
        # A pure relabelling (transpose or diagonal): NumPy returns a view.
        op = ops[0]
        strides = []
        for c in out_labels:
            strides.append(sum(s for lc, s in zip(labels[0], op.strides) if lc == c))
        return op.view_of(shape, tuple(strides))
    return _einsum_result(subscripts, ops, shape, dt, order, casting, optimize)


def _laid_out_like(op, shape):
    """A small NumPy array of ``shape`` whose axes are in ``op``'s memory order (zero strides where
    ``op`` is broadcast)."""
    order = sorted(range(op.ndim), key=lambda i: -abs(op.strides[i]))
    buf = np.ones([shape[i] for i in order], op.dtype).transpose(np.argsort(order))
    strides = [0 if op.strides[i] == 0 and op.shape[i] > 1 else buf.strides[i] for i in range(op.ndim)]
    return np.lib.stride_tricks.as_strided(buf, shape, strides)


def _einsum_result(subscripts, ops, shape, dt, order, casting, optimize):
    """The result as NumPy lays it out: the same einsum (same contraction path, as NumPy picks it
    for the real sizes) run on stand-ins of size 2 per dim that are laid out like the operands;
    the result's axis order, and whether it is a view of a temporary, carry over to the real shape."""
    if 0 in shape or len(shape) < 2 or any(0 in op.shape for op in ops):
        return MetaArray(shape, dt)
    if optimize is not False and len(ops) > 2:
        zeros = [np.lib.stride_tricks.as_strided(np.zeros(1, op.dtype), op.shape, (0,) * op.ndim) for op in ops]
        optimize = np.einsum_path(subscripts, *zeros, optimize=optimize)[0]
    stands = [_laid_out_like(op, tuple(1 if n == 1 else 2 for n in op.shape)) for op in ops]
    with np.errstate(all="ignore"):
        small = np.einsum(subscripts, *stands, order=order, casting=casting, optimize=optimize)
    axes = sorted(range(small.ndim), key=lambda i: (-abs(small.strides[i]) if small.shape[i] > 1 else 0))
    if small.base is not None:      # a permuted view of the temporary holding the product
        return MetaArray(tuple(shape[i] for i in axes), dt).transpose(np.argsort(axes).tolist())
    return MetaArray(shape, dt, strides_in_order(shape, dt.itemsize, axes))


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

