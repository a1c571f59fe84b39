"""Shape rules for NumPy's views and shape changes (reshape, transpose, moveaxis, broadcast_to,
diagonal, flip, split ...) and for joining and gathering (concatenate, stack, take, repeat, tile,
pad ...). Views share their owner with NumPy's strides; copies are laid out as NumPy lays them out.
"""
import operator

import numpy as np

from . import meta_ufuncs as _ufuncs
from .meta_array import MetaArray, _axis, no_values
from .meta_functions import RULES, dtype_of, meta, rule, stand_in
from .meta_layout import broadcast_strides


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


@rule(np.trace)
def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d = _diagonal(a, offset, axis1, axis2)
    dt = dtype_of(np.trace, stand_in(a), dtype=dtype)
    return out if out is not None else MetaArray(d.shape[:-1], dt)


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
    return dtype_of(func, [stand_in(a, nd) for a in arrays], axis=axis if axis is None else 0,
                     dtype=dtype, casting=casting)


@rule(np.concatenate)
def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = [meta(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        shape = (sum(a.size for a in arrays),)
        dt = dtype_of(np.concatenate, [stand_in(a, 1) for a in arrays], dtype=dtype, casting=casting)
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
        dt = dtype_of(np.concatenate, [stand_in(a) for a in arrays], axis=ax, dtype=dtype, casting=casting)
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
    dt = dtype_of(np.stack, [stand_in(a) for a in arrays], dtype=dtype, casting=casting)
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
