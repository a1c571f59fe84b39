"""``assert_close``: compare tensors, Python scalars and nested containers of them.

What is compared, in order (as ``torch.testing.assert_close``):

* ``None`` with ``None``; Python bools by identity; Python numbers (int, float,
  complex) as scalars; tensors and NumPy arrays as "tensor-likes" (a NumPy array is
  taken as a CPU tensor); sequences (not strings) item by item after their lengths;
  mappings value by value after their keys. Any other pairing is a TypeError.
* For tensor-likes: shape, then device, dtype, layout and strides (each check can be
  switched off, except shape), then the values: ``|actual - expected| <= atol + rtol *
  |expected|`` elementwise, with infinities equal only to themselves and NaN equal to
  NaN only with ``equal_nan``. Without ``check_device`` both are compared on the CPU;
  without ``check_dtype`` both are promoted to their common dtype.
* Default tolerances come from the dtypes (the larger of the two):
  float16 (1e-3, 1e-5), bfloat16 (1.6e-2, 1e-5), float32 (1.3e-6, 1e-5),
  float64 (1e-7, 1e-7); integers and bool are compared exactly. Python floats count
  as float64, Python ints as int64. ``rtol`` and ``atol`` are given together or not at all.

A failure raises AssertionError whose message names what differs: for values, the
number and share of mismatched elements and the greatest absolute and relative
differences (over the mismatched elements) with their indices and the tolerances;
inside containers, the item where it happened (``[1]['a']``). ``msg`` replaces the
message (a string) or rewrites it (a callable taking the default message).
"""
import collections.abc
import math
import numbers

import numpy as np

from .. import _dtype
from .._tensor import Tensor

__all__ = ["assert_close", "default_tolerances"]

_TOLERANCES = {_dtype.float16: (1e-3, 1e-5), _dtype.float32: (1.3e-6, 1e-5), _dtype.float64: (1e-7, 1e-7)}
if hasattr(_dtype, "bfloat16"):
    _TOLERANCES[_dtype.bfloat16] = (1.6e-2, 1e-5)


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise and its message (without the item)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message


def default_tolerances(*dtypes):
    """``(rtol, atol)``: the largest default tolerances among ``dtypes`` (0 for exact dtypes)."""
    pairs = [_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raise AssertionError unless ``actual`` and ``expected`` are close (see the module docstring)."""
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.")
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                   check_stride=check_stride)
    try:
        _compare(actual, expected, "", options)
    except _Mismatch as failure:
        message = failure.message
        if failure.kind is AssertionError and msg is not None:
            message = msg if isinstance(msg, str) else msg(message)
        raise failure.kind(message) from None


# ================================================================ dispatch over the kinds of input
def _is_tensor_like(x):
    return isinstance(x, (Tensor, np.ndarray))


def _is_number(x):
    return isinstance(x, numbers.Number) and not isinstance(x, (bool, np.bool_))


def _compare(actual, expected, item, options):
    try:
        if actual is None or expected is None:
            if actual is not expected:
                raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}")
            return
        if isinstance(actual, (bool, np.bool_)) and isinstance(expected, (bool, np.bool_)):
            if bool(actual) is not bool(expected):
                raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
            return
        if _is_number(actual) and _is_number(expected):
            return _compare_numbers(actual, expected, options)
        if _is_tensor_like(actual) and _is_tensor_like(expected):
            return _compare_tensors(_as_tensor(actual), _as_tensor(expected), options)
    except _Mismatch as failure:
        if item and failure.kind is AssertionError:
            failure.message += f"\n\nThe failure occurred for item {item}"
        raise
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError,
                            f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, f"{item}[{i}]", options)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        missing = sorted(set(expected) - set(actual), key=repr)
        extra = sorted(set(actual) - set(expected), key=repr)
        if missing or extra:
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {missing}\n"
                            f"Additional keys in the actual mapping: {extra}")
        for key in expected:
            _compare(actual[key], expected[key], f"{item}[{key!r}]", options)
        return
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} "
                               f"and {type(expected)}.")


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, (str, bytes))


def _as_tensor(x):
    if isinstance(x, Tensor):
        return x
    return Tensor._make(np.asarray(x), _cpu_device())


def _cpu_device():
    from .._device import device
    return device("cpu")


# ================================================================ Python scalars
def _compare_numbers(actual, expected, options):
    if options["check_dtype"] and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    rtol, atol = options["rtol"], options["atol"]
    if rtol is None:
        exact = all(isinstance(v, numbers.Integral) for v in (actual, expected))
        rtol, atol = (0.0, 0.0) if exact else _TOLERANCES[_dtype.float64]
    _check_scalar(actual, expected, rtol, atol, options["equal_nan"])


def _check_scalar(actual, expected, rtol, atol, equal_nan):
    """Raise the "Scalars are not close!" mismatch unless the two numbers are close."""
    if actual == expected:
        return
    if equal_nan and _isnan(actual) and _isnan(expected):
        return
    abs_diff = abs(actual - expected)
    if _isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    if expected != 0:
        rel_diff = abs_diff / abs(expected)
    else:
        rel_diff = math.nan if abs_diff == 0 or _isnan(abs_diff) else math.inf
    equal = rtol == 0 and atol == 0
    lines = [f"Scalars are not {'equal' if equal else 'close'}!", "",
             f"Expected {expected} but got {actual}.",
             f"Absolute difference: {abs_diff}{_allowed(atol, equal)}",
             f"Relative difference: {rel_diff}{_allowed(rtol, equal)}"]
    raise _Mismatch(AssertionError, "\n".join(lines))


def _isnan(x):
    return isinstance(x, (float, complex, np.floating, np.complexfloating)) and x != x


def _isfinite(x):
    return not (isinstance(x, (float, np.floating)) and not math.isfinite(x))


def _allowed(tolerance, equal):
    return "" if equal else f" (up to {tolerance} allowed)"


# ================================================================ tensors
def _attribute_mismatch(name, a, e):
    return _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.")


def _compare_tensors(actual, expected, options):
    if not options["allow_subclasses"] and type(actual) is not type(expected):
        raise _Mismatch(TypeError, f"Except for Python scalars, type equality is required if "
                                   f"allow_subclasses=False, but got {type(actual)} and {type(expected)} instead.")
    if actual.shape != expected.shape:
        raise _attribute_mismatch("shape", actual.shape, expected.shape)
    if options["check_device"] and actual.device != expected.device:
        raise _attribute_mismatch("device", actual.device, expected.device)
    if options["check_dtype"] and actual.dtype != expected.dtype:
        raise _attribute_mismatch("dtype", actual.dtype, expected.dtype)
    if options["check_stride"] and actual.stride() != expected.stride():
        raise _attribute_mismatch("stride()", actual.stride(), expected.stride())
    rtol, atol = options["rtol"], options["atol"]
    if rtol is None:
        rtol, atol = default_tolerances(actual.dtype, expected.dtype)
    a, e = _host_arrays(actual, expected)
    if a.ndim == 0:
        _check_scalar(a.item(), e.item(), rtol, atol, options["equal_nan"])
        return
    matches = _isclose(a, e, rtol, atol, options["equal_nan"])
    if not matches.all():
        raise _Mismatch(AssertionError, _tensor_message(a, e, matches, rtol, atol))


def _host_arrays(actual, expected):
    """Both values as NumPy arrays of their common dtype."""
    common = _dtype.promote_types(actual.dtype, expected.dtype)
    arrays = []
    for t in (actual, expected):
        x = t._device._backend.to_numpy(t._data)
        arrays.append(x if x.dtype == common.np else x.astype(common.np))
    return arrays


def _isclose(a, e, rtol, atol, equal_nan):
    """Elementwise closeness: equal (infinities included), or a finite difference within tolerance."""
    with np.errstate(all="ignore"):
        close = a == e
        if a.dtype.kind == "b":
            return close
        if a.dtype.kind in "f" and equal_nan:
            close |= np.isnan(a) & np.isnan(e)
        if rtol == 0 and atol == 0:
            return close
        if a.dtype.kind != "f":
            a, e = a.astype(np.float64), e.astype(np.float64)
        error = np.abs(a - e)
        close |= np.isfinite(error) & (error <= atol + rtol * np.abs(e))
    return close


def _tensor_message(a, e, matches, rtol, atol):
    shape = matches.shape
    total = matches.size
    mismatched = total - int(matches.sum())
    a, e, matches = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    with np.errstate(all="ignore"):
        if a.dtype.kind != "f":   # integers and bools: differences in int64, relative ones in float32
            a, e = a.astype(np.int64), e.astype(np.int64)
            abs_diff = np.abs(a - e)
            rel_diff = abs_diff.astype(np.float32) / np.abs(e).astype(np.float32)
        else:
            abs_diff = np.abs(a - e)
            rel_diff = abs_diff / np.abs(e)
    abs_diff[matches] = 0
    rel_diff[matches] = 0
    i_abs, i_rel = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))   # a NaN counts as the greatest
    equal = rtol == 0 and atol == 0
    lines = [f"Tensor-likes are not {'equal' if equal else 'close'}!", "",
             f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})",
             f"Greatest absolute difference: {abs_diff[i_abs].item()} at index {_index(i_abs, shape)}"
             f"{_allowed(atol, equal)}",
             f"Greatest relative difference: {rel_diff[i_rel].item()} at index {_index(i_rel, shape)}"
             f"{_allowed(rtol, equal)}"]
    return "\n".join(lines)


def _index(flat, shape):
    return tuple(int(i) for i in np.unravel_index(flat, shape))
