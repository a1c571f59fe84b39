"""NumPy ufuncs on shape-only arrays (``__array_ufunc__``).

The result dtype comes from running the same ufunc, with the same keywords, on 0-d stand-ins of
the operands' dtypes (NumPy 2 promotes 0-d arrays like any array and Python scalars as weak
scalars, so this is NumPy's own answer, including its casting errors). The result shape comes
from broadcasting, and the layout of a fresh result from NumPy's ``order='K'`` rule. ``ufunc.at``
writes in place and so changes nothing here.
"""
import numpy as np

from .meta_array import MetaArray
from .meta_layout import broadcast_strides, c_strides, k_order, k_strides, strides_in_order

__all__ = ["apply_ufunc", "reduced_result", "reduced_axes", "broadcast_shape"]


def _operand(x):
    """Lists and tuples become host arrays; everything else (meta arrays, arrays, scalars) stays."""
    return np.asarray(x) if isinstance(x, (list, tuple)) else x


def _shape(x):
    return tuple(getattr(x, "shape", ()))


def _stand_in(x, shape=()):
    if isinstance(x, (MetaArray, np.ndarray)):
        return np.ones(shape, x.dtype)
    return x


def broadcast_shape(shapes, what="operands"):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        text = " ".join("(" + ",".join(map(str, s)) + ("," if len(s) == 1 else "") + ")" for s in shapes)
        raise ValueError(f"{what} could not be broadcast together with shapes {text} ") from None


def _stand_in_kwargs(kwargs, out_shape=()):
    dummy = dict(kwargs)
    out = dummy.get("out")
    if out is not None:
        dummy["out"] = tuple(np.empty(out_shape, o.dtype) if isinstance(o, MetaArray) else o for o in out)
    if "where" in dummy:
        dummy["where"] = True
    return dummy


def _dtypes(result):
    if isinstance(result, tuple):
        return [np.asarray(r).dtype for r in result]
    return [np.asarray(result).dtype]


def _finish(ufunc, shape, dtypes, kwargs, operands, method="__call__"):
    """The result array(s): ``out`` when given (after NumPy's shape check), else fresh arrays."""
    out = kwargs.get("out")
    results = []
    for i, dt in enumerate(dtypes):
        o = out[i] if out is not None and i < len(out) else None
        if o is not None:
            if tuple(o.shape) != shape:
                raise ValueError(f"non-broadcastable output operand with shape {tuple(o.shape)} doesn't match "
                                 f"the broadcast shape {shape}")
            results.append(o)
            continue
        order = kwargs.get("order", "K")
        if order == "F":
            strides = strides_in_order(shape, dt.itemsize, range(len(shape) - 1, -1, -1))
        elif order == "C" or method != "__call__":
            strides = None
        else:
            strides = k_strides(shape, dt.itemsize, [broadcast_strides(x.shape, x.strides, shape)
                                                     for x in operands if isinstance(x, (MetaArray, np.ndarray))])
        results.append(MetaArray(shape, dt, strides))
    return tuple(results) if len(results) > 1 else results[0]


def apply_ufunc(ufunc, method, inputs, kwargs):
    if method == "at":          # writes in place: no shape changes
        return None
    inputs = [_operand(x) for x in inputs]
    if ufunc.signature is not None:
        if method != "__call__":
            raise NotImplementedError(f"{ufunc.__name__}.{method} on meta arrays")
        return _gufunc(ufunc, inputs, kwargs)
    if method == "__call__":
        shapes = [_shape(x) for x in inputs]
        where = kwargs.get("where")
        if isinstance(where, (MetaArray, np.ndarray)):
            shapes.append(where.shape)
        shape = broadcast_shape(shapes)
        with np.errstate(all="ignore"):
            dtypes = _dtypes(ufunc(*[_stand_in(x) for x in inputs], **_stand_in_kwargs(kwargs)))
        return _finish(ufunc, shape, dtypes, kwargs, inputs)
    if method == "reduce":
        return _reduce(ufunc, inputs[0], kwargs)
    if method == "accumulate":
        a = inputs[0]
        axis = kwargs.get("axis", 0)
        _check_axes(a.ndim, axis)
        with np.errstate(all="ignore"):
            dtypes = _dtypes(ufunc.accumulate(_stand_in(a, (1,) * a.ndim), **_stand_in_kwargs(kwargs, (1,) * a.ndim)))
        return _finish(ufunc, a.shape, dtypes, kwargs, inputs, method)
    if method == "outer":
        a, b = inputs
        with np.errstate(all="ignore"):
            dtypes = _dtypes(ufunc.outer(_stand_in(a), _stand_in(b), **_stand_in_kwargs(kwargs)))
        return _finish(ufunc, _shape(a) + _shape(b), dtypes, kwargs, inputs, method)
    if method == "reduceat":
        a, indices = inputs
        if isinstance(indices, MetaArray):
            raise NotImplementedError("reduceat with meta indices")
        axis = kwargs.get("axis", 0)
        shape = list(a.shape)
        shape[axis] = len(indices)
        with np.errstate(all="ignore"):
            dtypes = _dtypes(ufunc.reduce(_stand_in(a, (1,) * a.ndim), axis=axis, dtype=kwargs.get("dtype")))
        return _finish(ufunc, tuple(shape), dtypes, kwargs, inputs, method)
    raise NotImplementedError(f"{ufunc.__name__}.{method} on meta arrays")


# ---------------------------------------------------------------- reductions
def _check_axes(ndim, axis):
    for ax in (axis if isinstance(axis, tuple) else (axis,)):
        if ax is not None and not -ndim <= ax < ndim:
            raise np.exceptions.AxisError(ax, ndim)


def reduced_axes(ndim, axis):
    """The set of axes a reduction over ``axis`` (None, an int or a tuple) removes."""
    if axis is None:
        return set(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = set()
    for ax in axes:
        ax = int(ax)
        if not -ndim <= ax < ndim:
            raise np.exceptions.AxisError(ax, ndim)
        if ax % ndim in out:
            raise ValueError("duplicate value in 'axis'")
        out.add(ax % ndim)
    return out


def reduced_result(a, axes, keepdims, dtype):
    """A fresh reduction result: ``a``'s shape without ``axes`` (size 1 with ``keepdims``), laid out
    in the order NumPy gives it (``a``'s memory order, reduced axes dropped)."""
    if keepdims:
        shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape))
        kept = list(range(a.ndim))
    else:
        kept = [i for i in range(a.ndim) if i not in axes]
        shape = tuple(a.shape[i] for i in kept)
    if len(kept) < 2 or a.flags.c_contiguous:
        return MetaArray(shape, dtype)
    order = k_order(a.ndim, [a.strides])
    position = {axis: i for i, axis in enumerate(kept)}
    return MetaArray(shape, dtype, strides_in_order(shape, dtype.itemsize,
                                                    [position[ax] for ax in order if ax in position]))


def _reduce(ufunc, a, kwargs):
    if not isinstance(a, MetaArray):
        a = MetaArray(_shape(a), np.asarray(a).dtype)
    axis = kwargs.get("axis", 0)
    axes = reduced_axes(a.ndim, axis)
    keepdims = kwargs.get("keepdims", False)
    if ufunc.identity is None and "initial" not in kwargs and any(a.shape[i] == 0 for i in axes):
        raise ValueError(f"zero-size array to reduction operation {ufunc.__name__} which has no identity")
    stand = _stand_in(a, (1,) * a.ndim)
    dummy = _stand_in_kwargs(kwargs, ())
    dummy.pop("out", None)
    with np.errstate(all="ignore"):
        dt = np.asarray(ufunc.reduce(stand, **dummy)).dtype
    out = kwargs.get("out")
    if out is not None and out[0] is not None:
        return out[0]
    result = reduced_result(a, axes, keepdims, dt)
    result.hint = _CLEAN_ANSWER.get(ufunc)
    return result


_CLEAN_ANSWER = {np.logical_or: False, np.logical_and: True}    # any / all: nothing special anywhere


# ---------------------------------------------------------------- generalized ufuncs
def _core_mismatch(ufunc, operand, core, got, want):
    return ValueError(f"{ufunc.__name__}: Input operand {operand} has a mismatch in its core dimension {core}, "
                      f"with gufunc signature {ufunc.signature} (size {got} is different from {want})")


def _gufunc(ufunc, inputs, kwargs):
    if "axes" in kwargs or "axis" in kwargs:
        raise NotImplementedError(f"{ufunc.__name__}(axes=...) on meta arrays")
    a, b = inputs
    sa, sb = _shape(a), _shape(b)
    name = ufunc.__name__
    if name == "matmul":
        for i, s in enumerate((sa, sb)):
            if not s:
                raise ValueError(f"matmul: Input operand {i} does not have enough dimensions (has 0, gufunc "
                                 f"core with signature {ufunc.signature} requires 1)")
        k_a = sa[-1]
        k_b = sb[-2] if len(sb) > 1 else sb[0]
        if k_a != k_b:
            raise _core_mismatch(ufunc, 1, 0, k_b, k_a)
        batch = broadcast_shape([sa[:-2], sb[:-2]])
        shape = batch + (sa[-2:-1] if len(sa) > 1 else ()) + (sb[-1:] if len(sb) > 1 else ())
    elif name == "vecdot":
        if sa[-1:] != sb[-1:]:
            raise _core_mismatch(ufunc, 1, 0, sb[-1] if sb else 0, sa[-1] if sa else 0)
        shape = broadcast_shape([sa[:-1], sb[:-1]])
    else:
        raise NotImplementedError(f"numpy.{name} on meta arrays")
    stand = [np.ones((1,) * min(len(_shape(x)), 2), x.dtype if isinstance(x, MetaArray) else np.asarray(x).dtype)
             for x in (a, b)]
    dummy = _stand_in_kwargs(kwargs)
    dummy.pop("out", None)
    with np.errstate(all="ignore"):
        dt = np.asarray(ufunc(*stand, **dummy)).dtype
    out = kwargs.get("out")
    if out is not None and out[0] is not None:
        if tuple(out[0].shape) != shape:
            raise ValueError(f"{name}: Output operand 0 has a mismatch in its core dimension")
        return out[0]
    return MetaArray(shape, dt, c_strides(shape, dt.itemsize))

