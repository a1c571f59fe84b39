"""Helpers shared by op definitions: operand promotion and gradient reduction."""
import numbers

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..backends.cpu import keep_zero_dim
from .._type_info import finfo
from .._fp_errors import quiet_errors  # noqa: F401  (re-exported: the ops' name for it)
from ..autograd.grad_mode import GRAD_ENABLED as _GRAD_ENABLED

_PROMOTE = _dtype._PROMOTE
Number = (int, float, bool, np.number, np.bool_)
_FAST_OPERANDS = frozenset((Tensor, int, float, bool))


def check_operand(name, value, arg="other"):
    """Raise TypeError unless ``value`` is a Tensor or a Python number."""
    if type(value) in _FAST_OPERANDS:
        return
    if not isinstance(value, (Tensor, numbers.Number, np.bool_)):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor or Number, not {type(value).__name__}")


def require_tensor(name, value, arg="input", position=1):
    """PyTorch's TypeError when a function's tensor argument is something else."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                        f"{type(value).__name__}")


def as_number(x):
    """NumPy scalars become Python numbers (so they promote like Python scalars)."""
    return x.item() if isinstance(x, (np.generic,)) else x


def operand_arrays(a, b):
    """``(x, y, dtype)``: the arrays (or Python scalars) of ``a`` and ``b`` cast to their
    PyTorch result dtype, and that dtype."""
    if isinstance(a, Tensor):
        da = a._dtype
        if isinstance(b, Tensor):
            db = b._dtype
            if da is db:
                return a._data, b._data, da
            dt = _dtype.result_dtype((a, b))
            return _cast(a._data, dt), _cast(b._data, dt), dt
        b = as_number(b)
        dt = da if _fits_scalar(da, b) else _dtype.result_dtype((a, b))
        if dt._category == 1 and type(b) is int:
            b = _wrap_int(b, dt)
        return _cast(a._data, dt), b, dt
    a = as_number(a)
    db = b._dtype
    dt = db if _fits_scalar(db, a) else _dtype.result_dtype((a, b))
    if dt._category == 1 and type(a) is int:
        a = _wrap_int(a, dt)
    return a, _cast(b._data, dt), dt


def half_with_number(x, y, dt):
    """Whether a float16 op has a Python number operand (``x`` or ``y`` as :func:`operand_arrays`
    gives them). PyTorch multiplies and divides such operands in float32 (its "opmath" type), the
    number kept as a float32, and rounds the result once; NumPy would round the number to float16
    first (1e30 to inf, 1e-5 to a subnormal of 3 digits). (Its add and sub do round the number to
    float16 first, as NumPy does.) See :func:`in_float32`."""
    return dt is _dtype.float16 and (x.__class__ in _PY_NUMBERS or y.__class__ in _PY_NUMBERS)


_PY_NUMBERS = (int, float)


def in_float32(op, x, y):
    """``op(x, y)`` computed in float32 and rounded to float16 (``x``/``y``: float16 arrays or Python
    numbers)."""
    x = x.astype(np.float32) if hasattr(x, "astype") else x
    y = y.astype(np.float32) if hasattr(y, "astype") else y
    return op(x, y).astype(np.float16)


_INT_BITS = {d: (d.itemsize * 8, d.is_signed) for d in _dtype.ALL_DTYPES if d._category == 1}


def _wrap_int(value, dt):
    """A Python int taken in integer dtype ``dt`` wraps around as in PyTorch (uint8 and -1 -> 255);
    NumPy would raise OverflowError instead."""
    bits, signed = _INT_BITS[dt]
    lo = -(1 << (bits - 1)) if signed else 0
    if lo <= value < lo + (1 << bits):
        return value
    value &= (1 << bits) - 1
    return value - (1 << bits) if signed and value >= 1 << (bits - 1) else value


_C_TYPE_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
                 "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}


_FLOAT_MAX = {}   # dtype -> finfo(dtype).max, filled on first use


def stored_scalar(value, dt):
    """A Python number as written into a tensor of dtype ``dt`` (fill, masked/index fill, ``full``,
    scalar assignment, scatter), checked as PyTorch checks it: an integer dtype takes values in
    ``[min, max]`` of its width (an unsigned one also integer negatives down to ``-max``, which wrap
    around: uint8 and -1 -> 255, but no negative float), and no NaN or infinity; a floating dtype takes any value that does not
    overflow it (inf and NaN included). Anything else is PyTorch's ``RuntimeError: value cannot be
    converted to type int8_t without overflow``."""
    if dt._category == 0 or isinstance(value, (bool, np.bool_)):
        return value
    if dt._category == 1:
        bits, signed = _INT_BITS[dt]
        hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        integral = isinstance(value, numbers.Integral)
        lo = -(1 << (bits - 1)) if signed else -hi if integral else 0
        if value == value and lo <= value <= hi:
            return _wrap_int(value, dt) if isinstance(value, numbers.Integral) else value
    else:
        limit = _FLOAT_MAX.get(dt)
        if limit is None:
            limit = _FLOAT_MAX[dt] = finfo(dt).max
        try:
            if not abs(value) > limit or abs(value) == float("inf"):
                return value
        except OverflowError:  # a Python int too large for a double
            pass
    raise RuntimeError(f"value cannot be converted to type {_C_TYPE_NAMES[dt.name]} without overflow")


def _fits_scalar(d, scalar):
    """Whether a Python scalar leaves the tensor dtype ``d`` unchanged."""
    kind = type(scalar)
    if kind is float:
        return d._category == 2
    if kind is int:
        return d._category >= 1
    return kind is bool


def _cast(arr, dt):
    return arr if arr.dtype == dt.np else arr.astype(dt.np)


def cast_array(arr, dt):
    """``arr`` as dtype ``dt`` (no copy when it already is)."""
    return arr if arr.dtype == dt.np else arr.astype(dt.np)


def sum_to_shape(grad, shape):
    """Sum a broadcast gradient back down to ``shape`` (differentiable)."""
    gshape = grad._data.shape
    if gshape == shape:
        return grad
    lead = len(gshape) - len(shape)
    dims = list(range(lead))
    for i, s in enumerate(shape):
        if s == 1 and gshape[lead + i] != 1:
            dims.append(lead + i)
    if dims:
        grad = grad.sum(tuple(dims), keepdim=True)
    if lead:
        grad = grad.reshape(shape)
    elif grad._data.shape != shape:
        grad = grad.reshape(shape)
    return grad


def grad_for(grad, inp):
    """The gradient for input ``inp`` of a broadcasting op: reduced to its shape and cast to
    its dtype; None for Python scalars."""
    if not isinstance(inp, Tensor):
        return None
    grad = sum_to_shape(grad, inp._data.shape)
    if grad._dtype is not inp._dtype:
        grad = cast_grad(grad, inp._dtype)
    return grad


def cast_grad(grad, dt):
    """A gradient cast to its input's dtype ``dt``; a real input of a complex op takes the real
    part (PyTorch's rule)."""
    if grad._dtype.is_complex and not dt.is_complex:
        grad = grad.real
    return grad if grad._dtype is dt else grad.to(dt)


def array_rule(fn, grad, *operands, with_xp=False):
    """A gradient formula computed on arrays: ``fn(grad's array, *operands' arrays)`` (with
    ``with_xp``, ``fn(xp, grad's array, ...)``, ``xp`` the arrays' module) as a tensor
    like ``grad``, when backward is not itself recorded and every tensor operand has ``grad``'s
    shape, dtype and device (operands may also be Python floats or None, passed as they are).
    Otherwise None: the caller then takes its Tensor-op formula, which must do the same operations
    in the same order (so both give the same bits). Complex and bfloat16 gradients always take
    the Tensor ops (their conjugation and float32 rules live there)."""
    if _GRAD_ENABLED.value:
        return None
    dt = grad._dtype
    if dt._slow:
        return None
    g = grad._data
    arrays = []
    for o in operands:
        if isinstance(o, Tensor):
            if o._dtype is not dt or o._data.shape != g.shape or o._device is not grad._device:
                return None
            arrays.append(o._data)
        elif o is None or (o.__class__ is float and dt is not _dtype.float16):   # (see half_with_number)
            arrays.append(o)
        else:
            return None
    with quiet_errors():
        r = fn(grad._device._backend.xp, g, *arrays) if with_xp else fn(g, *arrays)
    if r.__class__ is not g.__class__:       # NumPy gives a scalar for 0-d arrays
        r = grad._device._backend.ensure_array(r, grad._device)
    return Tensor._make(r, grad._device, dt)


def xp_of(t):
    """The array module (numpy/cupy) of a tensor's backend."""
    return t._device._backend.xp


def first_tensor(*args):
    for a in args:
        if isinstance(a, Tensor):
            return a
    return None


def write_out(result, out):
    """Support ``out=``: copy ``result`` into ``out`` (an empty ``out`` is resized, as in PyTorch)
    and return ``out``; return ``result`` itself when ``out`` is None."""
    if out is None:
        return result
    if out._data.shape != result._data.shape:
        if out._data.size != 0:
            raise RuntimeError(f"out= tensor has shape {list(out.shape)} but the result has shape "
                               f"{list(result.shape)}")
        out._data = keep_zero_dim(xp_of(out).empty(result._data.shape, out._data.dtype))
    return out.copy_(result)
