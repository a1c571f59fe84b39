"""The ``xp`` module of the meta device: NumPy's API over shape-only arrays.

Functions that create arrays from nothing (``zeros``, ``arange``, ``eye`` ...) or from host data
(``asarray``) are defined here and return :class:`MetaArray`. Every other name is NumPy's own:
ufuncs and array functions called on meta arrays dispatch to the meta rules through NumPy's
``__array_ufunc__``/``__array_function__`` protocols, and dtypes, ``iinfo``, ``errstate``... are
plain NumPy.
"""
import math
import operator
import types

import numpy as _np

from .meta_array import MetaArray
from .meta_layout import strides_in_order

ndarray = MetaArray
newaxis = None


def _shape(shape):
    if isinstance(shape, (int, _np.integer)):
        shape = (shape,)
    shape = tuple(operator.index(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError("negative dimensions are not allowed")
    return shape


def _new(shape, dtype, order="C"):
    shape = _shape(shape)
    dtype = _np.dtype(float if dtype is None else dtype)
    strides = strides_in_order(shape, dtype.itemsize, range(len(shape) - 1, -1, -1)) if order == "F" else None
    return MetaArray(shape, dtype, strides)


def empty(shape, dtype=float, order="C", **kwargs):
    return _new(shape, dtype, order)


def zeros(shape, dtype=float, order="C", **kwargs):
    return _new(shape, dtype, order)


def ones(shape, dtype=None, order="C", **kwargs):
    return _new(shape, dtype, order)


def full(shape, fill_value, dtype=None, order="C", **kwargs):
    if dtype is None:
        dtype = fill_value.dtype if isinstance(fill_value, MetaArray) else _np.asarray(fill_value).dtype
    return _new(shape, dtype, order)


def arange(start, stop=None, step=None, dtype=None, **kwargs):
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if step == 0:
        raise ZeroDivisionError("division by zero")
    if all(isinstance(v, (int, _np.integer)) for v in (start, stop, step)):
        length = len(range(int(start), int(stop), int(step)))
    else:
        length = max(0, math.ceil((stop - start) / step))
    dt = _np.arange(start, start + step, step, dtype=dtype).dtype   # NumPy's dtype for these bounds
    return MetaArray((length,), dt)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, **kwargs):
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    probe = _np.linspace(_np.asarray(start).reshape(-1)[:1] if _np.ndim(start) else start,
                         _np.asarray(stop).reshape(-1)[:1] if _np.ndim(stop) else stop, 2, dtype=dtype)
    extra = _np.broadcast_shapes(_np.shape(start), _np.shape(stop))
    shape = list(extra)
    shape.insert(axis % (len(extra) + 1), num)
    out = MetaArray(tuple(shape), probe.dtype)
    if retstep:
        div = (num - 1) if endpoint else num
        step = (_np.asarray(stop) - _np.asarray(start)) / div if div > 0 else _np.nan
        return out, step
    return out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    out = linspace(start, stop, num, endpoint, dtype=None, axis=axis)
    return out if dtype is None else out.astype(dtype)


def eye(N, M=None, k=0, dtype=float, order="C", **kwargs):
    return _new((N, N if M is None else M), dtype, order)


def identity(n, dtype=None, **kwargs):
    return _new((n, n), dtype)


def tri(N, M=None, k=0, dtype=float, **kwargs):
    return _new((N, N if M is None else M), dtype)


def asarray(a, dtype=None, order=None, copy=None, **kwargs):
    """A meta array with ``a``'s shape: ``a`` itself when it is one (cast if ``dtype`` differs)."""
    if isinstance(a, MetaArray):
        if dtype is not None and _np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            return a.astype(dtype)
        return a.copy() if copy else a
    shape = getattr(a, "shape", None)
    if shape is not None and hasattr(a, "__cuda_array_interface__"):     # a device array: no host copy
        return MetaArray(tuple(shape), _np.dtype(dtype) if dtype is not None else a.dtype)
    host = _np.asarray(a, dtype=dtype)
    return MetaArray(host.shape, host.dtype)


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, **kwargs):
    out = asarray(obj, dtype=dtype, copy=copy if isinstance(obj, MetaArray) else None)
    if out.ndim < ndmin:
        out = out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    return out


asanyarray = asarray


def ascontiguousarray(a, dtype=None, **kwargs):
    a = asarray(a, dtype=dtype)
    return a if a.flags.c_contiguous else a.copy(order="C")


def asfortranarray(a, dtype=None, **kwargs):
    a = asarray(a, dtype=dtype)
    return a if a.flags.f_contiguous else a.copy(order="F")


def frombuffer(*args, **kwargs):
    host = _np.frombuffer(*args, **kwargs)
    return MetaArray(host.shape, host.dtype)


def get_array_module(*args):
    return _module


# ---------------------------------------------------------------- xp.lib.stride_tricks
def as_strided(x, shape=None, strides=None, subok=False, writeable=True):
    """A view of ``x``'s memory with the given shape and (byte) strides."""
    shape = x.shape if shape is None else _shape(shape)
    strides = x.strides if strides is None else tuple(int(s) for s in strides)
    return x.view_of(shape, strides)


def _sliding_window_view(x, window_shape, axis=None, **kwargs):
    return _np.lib.stride_tricks.sliding_window_view(x, window_shape, axis=axis)


stride_tricks = types.SimpleNamespace(as_strided=as_strided, sliding_window_view=_sliding_window_view)
lib = types.SimpleNamespace(stride_tricks=stride_tricks)


def __getattr__(name):
    return getattr(_np, name)


import sys as _sys  # noqa: E402

_module = _sys.modules[__name__]
