"""Elementwise math: exponentials and logarithms, powers and roots, trigonometric and
hyperbolic functions, sigmoid and relu, the error functions, rounding, clamping,
interpolation and two-argument functions (maximum, hypot, logaddexp, xlogy, ...).

Integer and bool inputs to floating functions give the default float dtype, as in
PyTorch. Each backward is written with Tensor ops, next to its forward, so that it
can itself be differentiated. Ops whose derivative is cheapest in terms of their
output (exp, sqrt, tanh, sigmoid, relu, ...) save the output (``saves_result``).
"""
import math

from .. import _dtype
from .._dispatch import apply, apply_inplace
from .._tensor import _LEGACY_NAMES as _LEGACY, Tensor
from ..autograd.node import Node
from . import special_math
from .activation_backward import sigmoid_backward, tanh_backward, threshold_backward
from ._common import (Number, check_operand, first_tensor, grad_for, operand_arrays, quiet_errors,
                      write_out, xp_of)
from .comparison import broadcast_error, where
from .registry import tensor_method

__all__ = [
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "sin", "cos", "tan", "asin", "arcsin", "acos", "arccos", "atan", "arctan", "atan2", "arctan2",
    "sinh", "cosh", "tanh", "sigmoid", "relu", "erf", "erfc", "erfinv",
    "sign", "sgn", "floor", "ceil", "round", "trunc", "fix", "frac",
    "clamp", "clip", "clamp_min", "clamp_max", "lerp", "maximum", "minimum", "fmax", "fmin",
    "hypot", "logaddexp", "logaddexp2", "xlogy", "nan_to_num",
    # in-place functions that torch also exports
    "exp_", "exp2_", "expm1_", "log_", "log2_", "log10_", "log1p_", "sqrt_", "rsqrt_",
    "sin_", "cos_", "tan_", "asin_", "arcsin_", "acos_", "arccos_", "atan_", "arctan_",
    "sinh_", "cosh_", "tanh_", "sigmoid_", "relu_", "erf_", "erfc_", "floor_", "ceil_", "round_",
    "trunc_", "fix_", "frac_", "clamp_", "clip_", "clamp_min_", "clamp_max_", "nan_to_num_", "xlogy_",
]

_HALF = _dtype.float16.np
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0


def _floating(a):
    """The array of ``a`` in a floating dtype (integer and bool inputs: the default float dtype)."""
    x = a._data
    return x if a._dtype._category == 2 else x.astype(_dtype.get_default_dtype().np)


def _compute_dtype_array(a):
    """Like ``_floating``, with float16 taken up to float32 (for multi-step formulas, so that the
    result is rounded to half once); returns the array and the result dtype to cast back to."""
    x = _floating(a)
    if x.dtype == _HALF:
        return x.astype("float32"), _HALF
    return x, None


def _zeros(grad):
    """The zero gradient of ops that are piecewise constant (rounding, sign)."""
    from .creation import zeros_like
    return zeros_like(grad)


def _const(array, like):
    """A constant tensor (no history) on ``like``'s device from a backend array."""
    return Tensor._make(array, like._device)


def _not_implemented(op, t):
    return NotImplementedError(f'"{op}" not implemented for \'{_LEGACY[t._dtype]}\'')


def _require_tensor(name, value, arg="other", position=2):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")




# ================================================================ exponentials and logarithms
class ExpBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        with quiet_errors():
            return xp_of(a).exp(_floating(a))

    def backward(ctx, grad):
        return grad * ctx.saved_result


class Exp2Backward0(Node):
    saves_result = True

    def forward(ctx, a):
        with quiet_errors():
            return xp_of(a).exp2(_floating(a))

    def backward(ctx, grad):
        return grad * ctx.saved_result * _LN2


class Expm1Backward0(Node):
    saves_result = True

    def forward(ctx, a):
        with quiet_errors():
            return xp_of(a).expm1(_floating(a))

    def backward(ctx, grad):
        return grad * (ctx.saved_result + 1)


class LogBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).log(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / a


class Log2Backward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).log2(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / (a * _LN2)


class Log10Backward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).log10(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / (a * _LN10)


class Log1PBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).log1p(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / (a + 1)


# ================================================================ roots
class SqrtBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        with quiet_errors():
            return xp_of(a).sqrt(_floating(a))

    def backward(ctx, grad):
        return grad / (2 * ctx.saved_result)


class RsqrtBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        xp = xp_of(a)
        x, back = _compute_dtype_array(a)
        with quiet_errors():
            r = xp.sqrt(x)
            xp.reciprocal(r, out=r)
        return r if back is None else r.astype(back)

    def backward(ctx, grad):
        return -0.5 * grad * ctx.saved_result ** 3


# ================================================================ trigonometric
class SinBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).sin(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a.cos()


class CosBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).cos(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * -a.sin()


class TanBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        with quiet_errors():
            return xp_of(a).tan(_floating(a))

    def backward(ctx, grad):
        r = ctx.saved_result
        return grad * (1 + r * r)


class AsinBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).arcsin(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * (1 - a * a).rsqrt()


class AcosBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).arccos(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * -(1 - a * a).rsqrt()


class AtanBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).arctan(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / (a * a + 1)


class Atan2Backward0(Node):
    def forward(ctx, a, b):
        x, y = _float_pair(a, b)
        ctx.save_for_backward(a, b)
        with quiet_errors():
            return _binary_ufunc(xp_of(a).arctan2, x, y, a, b)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        scale = grad / (a * a + b * b)
        return (grad_for(scale * b, a) if need[0] else None,
                grad_for(scale * -a, b) if need[1] else None)


# ================================================================ hyperbolic
class SinhBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).sinh(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a.cosh()


class CoshBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_errors():
            return xp_of(a).cosh(_floating(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a.sinh()


class TanhBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        return xp_of(a).tanh(_floating(a))

    def backward(ctx, grad):
        return tanh_backward(grad, ctx.saved_result)


# ================================================================ activations
class SigmoidBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        xp = xp_of(a)
        x, back = _compute_dtype_array(a)
        with quiet_errors():
            e = xp.negative(x)
            xp.exp(e, out=e)          # exp(-x) overflows to inf for x << 0: 1 / inf = 0
            e += 1
            xp.reciprocal(e, out=e)
        return e if back is None else e.astype(back)

    def backward(ctx, grad):
        return sigmoid_backward(grad, ctx.saved_result)


class ReluBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        if a._dtype is _dtype.bool:
            raise RuntimeError("Boolean inputs not supported for relu")
        return xp_of(a).maximum(a._data, 0)

    def backward(ctx, grad):
        return threshold_backward(grad, ctx.saved_result, 0)


# ================================================================ error functions
class ErfBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return special_math.erf(_floating(a), xp_of(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * (-(a * a)).exp() * _TWO_OVER_SQRT_PI


class ErfcBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return special_math.erfc(_floating(a), xp_of(a))

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * (-(a * a)).exp() * -_TWO_OVER_SQRT_PI


class ErfinvBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        return special_math.erfinv(_floating(a), xp_of(a))

    def backward(ctx, grad):
        r = ctx.saved_result
        return grad * (r * r).exp() * _SQRT_PI_OVER_TWO


# ================================================================ sign and rounding
class SignBackward0(Node):
    def forward(ctx, a):
        x = a._data
        if a._dtype is _dtype.bool:
            return x.copy()
        if a._dtype._category == 1:
            return xp_of(a).sign(x)
        # (x > 0) - (x < 0): 0 for NaN, as PyTorch
        pos = (x > 0).astype(x.dtype)
        pos -= x < 0
        return pos

    def backward(ctx, grad):
        return _zeros(grad)


class SgnBackward0(SignBackward0):
    pass


def _rounding_input(op, a):
    if a._dtype is _dtype.bool:
        raise _not_implemented(op, a)
    return a._data


class FloorBackward0(Node):
    def forward(ctx, a):
        x = _rounding_input("floor", a)
        return xp_of(a).floor(x) if a._dtype._category == 2 else x.copy()

    def backward(ctx, grad):
        return _zeros(grad)


class CeilBackward0(Node):
    def forward(ctx, a):
        x = _rounding_input("ceil", a)
        return xp_of(a).ceil(x) if a._dtype._category == 2 else x.copy()

    def backward(ctx, grad):
        return _zeros(grad)


class TruncBackward0(Node):
    def forward(ctx, a):
        x = _rounding_input("trunc", a)
        return xp_of(a).trunc(x) if a._dtype._category == 2 else x.copy()

    def backward(ctx, grad):
        return _zeros(grad)


class RoundBackward0(Node):
    """Round half to even."""

    def forward(ctx, a):
        x = _rounding_input("round", a)
        return xp_of(a).rint(x) if a._dtype._category == 2 else x.copy()

    def backward(ctx, grad):
        return _zeros(grad)


class RoundBackward1(Node):
    """Round half to even at ``decimals`` digits: ``rint(x * 10**d) / 10**d`` in the input dtype."""

    def forward(ctx, a, decimals):
        if a._dtype._category != 2:
            raise _not_implemented("round", a)
        xp = xp_of(a)
        with quiet_errors():
            if decimals > 0:
                scale = 10.0 ** decimals
                r = a._data * scale
                xp.rint(r, out=r)
                r /= scale
            else:
                scale = 10.0 ** -decimals
                r = a._data / scale
                xp.rint(r, out=r)
                r *= scale
        return r

    def backward(ctx, grad):
        return _zeros(grad)


class FracBackward0(Node):
    def forward(ctx, a):
        if a._dtype._category != 2:
            raise _not_implemented("frac", a)
        x = a._data
        with quiet_errors():
            return x - xp_of(a).trunc(x)

    def backward(ctx, grad):
        return grad


# ================================================================ clamping
def _clamp_dtype(a, bounds):
    present = [b for b in bounds if b is not None]
    return _dtype.result_dtype((a, *present)) if present else a._dtype


def _clip(xp, x, lo, hi):
    if lo is None:
        return xp.minimum(x, hi)
    if hi is None:
        return xp.maximum(x, lo)
    return xp.clip(x, lo, hi)


class ClampBackward1(Node):
    """clamp with Python-number bounds (either may be None)."""

    def forward(ctx, a, lo, hi):
        dt = _clamp_dtype(a, (lo, hi))
        x = a._data if dt is a._dtype else a._data.astype(dt.np)
        ctx.save_for_backward(a)
        ctx.lo, ctx.hi = lo, hi
        return _clip(xp_of(a), x, lo, hi)

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        lo, hi = ctx.lo, ctx.hi
        if lo is None:
            keep = a <= hi
        elif hi is None:
            keep = a >= lo
        else:
            keep = (a >= lo) & (a <= hi)
        return grad * keep


class ClampBackward0(Node):
    """clamp with Tensor bounds (either may be None): gradients flow to the bound that was taken."""

    def forward(ctx, a, lo, hi):
        xp = xp_of(a)
        arrays, dt = _promoted_arrays(a, lo, hi)
        ctx.save_for_backward(a, lo, hi)
        try:
            return _clip(xp, *arrays)
        except ValueError:
            raise broadcast_error(*[t for t in (a, lo, hi) if t is not None]) from None

    def backward(ctx, grad):
        a, lo, hi = ctx.saved_tensors
        need = ctx.needs_input_grad
        out = []
        if lo is not None and hi is not None:
            ga = grad * ((a >= lo) & (a <= hi))
            glo = grad * ((a < lo) & (lo < hi))
            ghi = grad * ((a > hi) | (hi < lo))
        elif lo is not None:
            ga, glo, ghi = grad * (a >= lo), grad * (a < lo), None
        else:
            ga, glo, ghi = grad * (a <= hi), None, grad * (a > hi)
        out.append(grad_for(ga, a) if need[0] else None)
        for bound, g in ((lo, glo), (hi, ghi)):
            if bound is not None:
                out.append(grad_for(g, bound) if need[len(out)] else None)
        return tuple(out)


class ClampMinBackward0(Node):
    def forward(ctx, a, lo):
        dt = _clamp_dtype(a, (lo,))
        ctx.save_for_backward(a)
        ctx.lo = lo
        x = a._data if dt is a._dtype else a._data.astype(dt.np)
        return xp_of(a).maximum(x, lo)

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * (a >= ctx.lo)


class ClampMinBackward1(Node):
    def forward(ctx, a, lo):
        (x, y), _ = _promoted_arrays(a, lo)
        ctx.save_for_backward(a, lo)
        return _binary_ufunc(xp_of(a).maximum, x, y, a, lo)

    def backward(ctx, grad):
        a, lo = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (grad_for(grad * (a >= lo), a) if need[0] else None,
                grad_for(grad * (a < lo), lo) if need[1] else None)


class ClampMaxBackward0(Node):
    def forward(ctx, a, hi):
        dt = _clamp_dtype(a, (hi,))
        ctx.save_for_backward(a)
        ctx.hi = hi
        x = a._data if dt is a._dtype else a._data.astype(dt.np)
        return xp_of(a).minimum(x, hi)

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * (a <= ctx.hi)


class ClampMaxBackward1(Node):
    def forward(ctx, a, hi):
        (x, y), _ = _promoted_arrays(a, hi)
        ctx.save_for_backward(a, hi)
        return _binary_ufunc(xp_of(a).minimum, x, y, a, hi)

    def backward(ctx, grad):
        a, hi = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (grad_for(grad * (a <= hi), a) if need[0] else None,
                grad_for(grad * (a > hi), hi) if need[1] else None)


def _promoted_arrays(*tensors):
    """The arrays of ``tensors`` (None entries kept) cast to their promoted dtype, and that dtype."""
    present = [t for t in tensors if t is not None]
    dt = _dtype.result_dtype(present)
    return [None if t is None else (t._data if t._dtype is dt else t._data.astype(dt.np))
            for t in tensors], dt


def _binary_ufunc(fn, x, y, a, b):
    try:
        return fn(x, y)
    except ValueError:
        raise broadcast_error(a, b) from None


# ================================================================ interpolation
class LerpBackward0(Node):
    """lerp with a Python-number weight."""

    def forward(ctx, start, end, weight):
        ctx.weight = weight
        ctx.metas = (start._data.shape, start._dtype), (end._data.shape, end._dtype)
        s, e = start._data, end._data
        try:
            d = e - s
        except ValueError:
            raise broadcast_error(start, end) from None
        # PyTorch's form: exact at both ends, and symmetric
        if abs(weight) < 0.5:
            d *= weight
            d += s
            return d
        d *= weight - 1
        d += e
        return d

    def backward(ctx, grad):
        w = ctx.weight
        need = ctx.needs_input_grad
        ms, me = ctx.metas
        return (_reduce_to(grad * (1 - w), ms) if need[0] else None,
                _reduce_to(grad * w, me) if need[1] else None)


class LerpBackward1(Node):
    """lerp with a Tensor weight."""

    def forward(ctx, start, end, weight):
        xp = xp_of(start)
        s, e, w = start._data, end._data, weight._data
        if w.dtype != s.dtype:
            w = w.astype(s.dtype)     # a 0-dim weight of another float dtype
        ctx.save_for_backward(start, end, weight)
        try:
            d = e - s
            low = xp.abs(w) < 0.5
            return xp.where(low, s + w * d, e - d * (1 - w))
        except ValueError:
            raise broadcast_error(start, end, weight) from None

    def backward(ctx, grad):
        start, end, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (grad_for(grad * (1 - weight), start) if need[0] else None,
                grad_for(grad * weight, end) if need[1] else None,
                grad_for(grad * (end - start), weight) if need[2] else None)


def _reduce_to(grad, meta):
    from ._common import sum_to_shape
    shape, dt = meta
    grad = sum_to_shape(grad, shape)
    return grad if grad._dtype is dt else grad.to(dt)


# ================================================================ binary extrema
class MaximumBackward0(Node):
    def forward(ctx, a, b):
        x, y, _ = operand_arrays(a, b)
        ctx.save_for_backward(a, b)
        with quiet_errors():
            return _binary_ufunc(xp_of(a).maximum, x, y, a, b)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _split_extremum_grad(ctx, grad, a, b, a._data < b._data, a._data > b._data)


class MinimumBackward0(Node):
    def forward(ctx, a, b):
        x, y, _ = operand_arrays(a, b)
        ctx.save_for_backward(a, b)
        with quiet_errors():
            return _binary_ufunc(xp_of(a).minimum, x, y, a, b)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _split_extremum_grad(ctx, grad, a, b, a._data > b._data, a._data < b._data)


def _split_extremum_grad(ctx, grad, a, b, a_loses, b_loses):
    """Gradient of max/min: to the operand taken, half to each on ties (NaN: to both)."""
    need = ctx.needs_input_grad
    x, y, _ = operand_arrays(a, b)
    dt = grad._data.dtype
    half_on_tie = (x == y).astype(dt)
    half_on_tie *= 0.5
    out = []
    for lose, inp, wanted in ((a_loses, a, need[0]), (b_loses, b, need[1])):
        if not wanted:
            out.append(None)
            continue
        w = 1.0 - lose.astype(dt)
        w -= half_on_tie
        out.append(grad_for(grad * _const(w, grad), inp))
    return tuple(out)


class FmaxBackward0(Node):
    def forward(ctx, a, b):
        x, y, _ = operand_arrays(a, b)
        ctx.save_for_backward(a, b)
        return _binary_ufunc(xp_of(a).fmax, x, y, a, b)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        x, y, _ = operand_arrays(a, b)
        return _pick_grad(ctx, grad, a, b, (x >= y) | xp_of(a).isnan(y))


class FminBackward0(Node):
    def forward(ctx, a, b):
        x, y, _ = operand_arrays(a, b)
        ctx.save_for_backward(a, b)
        return _binary_ufunc(xp_of(a).fmin, x, y, a, b)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        x, y, _ = operand_arrays(a, b)
        return _pick_grad(ctx, grad, a, b, (x <= y) | xp_of(a).isnan(y))


def _pick_grad(ctx, grad, a, b, to_a):
    need = ctx.needs_input_grad
    ga = gb = None
    if need[0]:
        ga = grad_for(grad * _const(to_a, grad), a)
    if need[1]:
        gb = grad_for(grad * _const(~to_a, grad), b)
    return ga, gb


# ================================================================ other binary functions
def _float_pair(a, b):
    """Both operands' arrays in their promoted dtype, made floating when it is not."""
    x, y, dt = operand_arrays(a, b)
    if dt._category != 2:
        # each operand goes to float from its own dtype (not through the common integer dtype)
        f = _dtype.get_default_dtype().np
        x = a._data.astype(f) if isinstance(a, Tensor) else float(a)
        y = b._data.astype(f) if isinstance(b, Tensor) else float(b)
    return x, y


def _float_only(op, a, b):
    """The promoted arrays of ``a`` and ``b``; NotImplementedError when they are not floating."""
    x, y, dt = operand_arrays(a, b)
    if dt._category != 2:
        raise NotImplementedError(f'"{op}" not implemented for \'{_LEGACY[dt]}\'')
    return x, y


class HypotBackward0(Node):
    saves_result = True

    def forward(ctx, a, b):
        x, y = _float_only("hypot", a, b)
        ctx.save_for_backward(a, b)
        with quiet_errors():
            return _binary_ufunc(xp_of(a).hypot, x, y, a, b)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        scale = grad / ctx.saved_result
        return (grad_for(scale * a, a) if need[0] else None,
                grad_for(scale * b, b) if need[1] else None)


class LogaddexpBackward0(Node):
    def forward(ctx, a, b):
        x, y = _float_only("logaddexp", a, b)
        ctx.save_for_backward(a, b)
        with quiet_errors():
            return _binary_ufunc(xp_of(a).logaddexp, x, y, a, b)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (grad_for(grad / ((b - a).exp() + 1), a) if need[0] else None,
                grad_for(grad / ((a - b).exp() + 1), b) if need[1] else None)


class Logaddexp2Backward0(Node):
    def forward(ctx, a, b):
        x, y = _float_only("logaddexp2", a, b)
        ctx.save_for_backward(a, b)
        with quiet_errors():
            return _binary_ufunc(xp_of(a).logaddexp2, x, y, a, b)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (grad_for(grad / ((b - a).exp2() + 1), a) if need[0] else None,
                grad_for(grad / ((a - b).exp2() + 1), b) if need[1] else None)


def _xlogy_forward(ctx, a, b):
    x, y = _float_pair(a, b)
    xp = xp_of(first_tensor(a, b))
    with quiet_errors():
        # a Python-number ``other`` stays a Python float, so it does not promote ``input``
        log_y = xp.log(y) if isinstance(b, Tensor) else float(xp.log(float(y)))
        r = _binary_ufunc(lambda u, v: u * v, x, log_y, a, b)
        # 0 * log(y) is 0 unless y is NaN
        zero = (x == 0) & ~xp.isnan(y)
    return xp.where(zero, 0, r)


class XlogyBackward0(Node):
    """xlogy(Tensor, Tensor)"""

    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _xlogy_forward(ctx, a, b)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (grad_for(_xlogy_self_grad(grad, a, b), a) if need[0] else None,
                grad_for(grad * a / b, b) if need[1] else None)


class XlogyBackward1(Node):
    """xlogy(Number, Tensor)"""

    def forward(ctx, a, b):
        ctx.save_for_backward(b)
        ctx.self_value = a
        return _xlogy_forward(ctx, a, b)

    def backward(ctx, grad):
        (b,) = ctx.saved_tensors
        return grad * ctx.self_value / b


class XlogyBackward2(Node):
    """xlogy(Tensor, Number)"""

    def forward(ctx, a, b):
        ctx.save_for_backward(a)
        ctx.other_value = b
        return _xlogy_forward(ctx, a, b)

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return _xlogy_self_grad(grad, a, ctx.other_value)


def _xlogy_self_grad(grad, a, b):
    g = xlogy(grad, b)
    if isinstance(b, Tensor):
        return where((a == 0) & (b <= 0), 0, g)
    return where(a == 0, 0, g) if b <= 0 else g


class NanToNumBackward0(Node):
    def forward(ctx, a, nan, posinf, neginf):
        x = a._data
        if a._dtype._category != 2:
            return x.copy()
        ctx.save_for_backward(a)
        xp = xp_of(a)
        with quiet_errors():
            return xp.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf)

    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a.isfinite()


# ================================================================ public functions
def _unary(cls):
    """The function, out= included, for a one-input op."""
    def op(input, *, out=None):
        return write_out(apply(cls, input), out)
    return op


def _inplace(cls):
    def op(self):
        return apply_inplace(cls, self)
    return op


_UNARY = [
    # (node, names of the function/method, names of the in-place method)
    (ExpBackward0, ("exp",), ("exp_",)),
    (Exp2Backward0, ("exp2",), ("exp2_",)),
    (Expm1Backward0, ("expm1",), ("expm1_",)),
    (LogBackward0, ("log",), ("log_",)),
    (Log2Backward0, ("log2",), ("log2_",)),
    (Log10Backward0, ("log10",), ("log10_",)),
    (Log1PBackward0, ("log1p",), ("log1p_",)),
    (SqrtBackward0, ("sqrt",), ("sqrt_",)),
    (RsqrtBackward0, ("rsqrt",), ("rsqrt_",)),
    (SinBackward0, ("sin",), ("sin_",)),
    (CosBackward0, ("cos",), ("cos_",)),
    (TanBackward0, ("tan",), ("tan_",)),
    (AsinBackward0, ("asin", "arcsin"), ("asin_", "arcsin_")),
    (AcosBackward0, ("acos", "arccos"), ("acos_", "arccos_")),
    (AtanBackward0, ("atan", "arctan"), ("atan_", "arctan_")),
    (SinhBackward0, ("sinh",), ("sinh_",)),
    (CoshBackward0, ("cosh",), ("cosh_",)),
    (TanhBackward0, ("tanh",), ("tanh_",)),
    (SigmoidBackward0, ("sigmoid",), ("sigmoid_",)),
    (ErfBackward0, ("erf",), ("erf_",)),
    (ErfcBackward0, ("erfc",), ("erfc_",)),
    (ErfinvBackward0, ("erfinv",), ("erfinv_",)),
    (SignBackward0, ("sign",), ("sign_",)),
    (SgnBackward0, ("sgn",), ("sgn_",)),
    (FloorBackward0, ("floor",), ("floor_",)),
    (CeilBackward0, ("ceil",), ("ceil_",)),
    (TruncBackward0, ("trunc", "fix"), ("trunc_", "fix_")),
    (FracBackward0, ("frac",), ("frac_",)),
]

for _cls, _names, _inplace_names in _UNARY:
    _fn = _unary(_cls)
    _fn.__name__ = _fn.__qualname__ = _names[0]
    _fn.__doc__ = f"Elementwise ``{_names[0]}`` (graph node ``{_cls.__name__}``)."
    tensor_method(*_names)(_fn)
    _fn_ = _inplace(_cls)
    _fn_.__name__ = _fn_.__qualname__ = _inplace_names[0]
    _fn_.__doc__ = f"In-place ``{_names[0]}``."
    tensor_method(*_inplace_names)(_fn_)
    for _name in _names:
        globals()[_name] = _fn
    for _name in _inplace_names:
        globals()[_name] = _fn_
del _cls, _names, _inplace_names, _fn, _fn_, _name


@tensor_method("relu")
def relu(input):
    """``max(input, 0)``; integer dtypes are kept."""
    return apply(ReluBackward0, input)


@tensor_method("relu_")
def relu_(input):
    return apply_inplace(ReluBackward0, input)


@tensor_method("round")
def round(input, *, decimals=0, out=None):
    """Round half to even, to ``decimals`` decimal digits (negative: tens, hundreds, ...)."""
    if decimals == 0:
        return write_out(apply(RoundBackward0, input), out)
    return write_out(apply(RoundBackward1, input, int(decimals)), out)


@tensor_method("round_")
def round_(self, *, decimals=0):
    if decimals == 0:
        return apply_inplace(RoundBackward0, self)
    return apply_inplace(RoundBackward1, self, int(decimals))


def _clamp_node(name, input, min, max):
    if min is None and max is None:
        raise RuntimeError(f"torch.{name}: At least one of 'min' or 'max' must not be None")
    tensor_bounds = isinstance(min, Tensor) or isinstance(max, Tensor)
    if tensor_bounds:
        for bound in (min, max):
            if bound is not None and not isinstance(bound, Tensor):
                raise TypeError(f"{name}(): received an invalid combination of arguments: min and max "
                                f"must both be Tensors (or None) or both be Numbers (or None), got "
                                f"{type(min).__name__} and {type(max).__name__}")
        return ClampBackward0
    for bound, arg in ((min, "min"), (max, "max")):
        if bound is not None:
            check_operand(name, bound, arg)
    return ClampBackward1


@tensor_method("clamp", "clip")
def clamp(input, min=None, max=None, *, out=None):
    """Limit ``input`` to ``[min, max]``; the bounds are numbers or tensors (broadcast), either may be None.
    With ``min > max`` every element becomes ``max``."""
    cls = _clamp_node("clamp", input, min, max)
    return write_out(apply(cls, input, min, max), out)


clip = clamp


@tensor_method("clamp_", "clip_")
def clamp_(self, min=None, max=None):
    cls = _clamp_node("clamp", self, min, max)
    return apply_inplace(cls, self, min, max)


clip_ = clamp_


@tensor_method("clamp_min")
def clamp_min(input, min, *, out=None):
    if isinstance(min, Tensor):
        return write_out(apply(ClampMinBackward1, input, min), out)
    check_operand("clamp_min", min, "min")
    return write_out(apply(ClampMinBackward0, input, min), out)


@tensor_method("clamp_min_")
def clamp_min_(self, min):
    if isinstance(min, Tensor):
        return apply_inplace(ClampMinBackward1, self, min)
    check_operand("clamp_min_", min, "min")
    return apply_inplace(ClampMinBackward0, self, min)


@tensor_method("clamp_max")
def clamp_max(input, max, *, out=None):
    if isinstance(max, Tensor):
        return write_out(apply(ClampMaxBackward1, input, max), out)
    check_operand("clamp_max", max, "max")
    return write_out(apply(ClampMaxBackward0, input, max), out)


@tensor_method("clamp_max_")
def clamp_max_(self, max):
    if isinstance(max, Tensor):
        return apply_inplace(ClampMaxBackward1, self, max)
    check_operand("clamp_max_", max, "max")
    return apply_inplace(ClampMaxBackward0, self, max)


def _lerp_node(input, end, weight):
    _require_tensor("lerp", end, "end", 2)
    if input._dtype._category != 2:
        raise _not_implemented("lerp", input)
    if end._dtype is not input._dtype:
        raise RuntimeError(f"expected dtype {input._dtype.name} for `end` but got dtype {end._dtype.name}")
    if isinstance(weight, Tensor):
        if weight._dtype is not input._dtype and weight._data.ndim:
            raise RuntimeError(f"expected dtype {input._dtype.name} for `weight` but got dtype "
                               f"{weight._dtype.name}")
        return LerpBackward1
    if not isinstance(weight, Number):
        raise TypeError(f"lerp(): argument 'weight' (position 3) must be Tensor or Number, "
                        f"not {type(weight).__name__}")
    return LerpBackward0


@tensor_method("lerp")
def lerp(input, end, weight, *, out=None):
    """``input + weight * (end - input)``; ``weight`` a number or a (broadcast) tensor."""
    cls = _lerp_node(input, end, weight)
    return write_out(apply(cls, input, end, weight), out)


@tensor_method("lerp_")
def lerp_(self, end, weight):
    cls = _lerp_node(self, end, weight)
    return apply_inplace(cls, self, end, weight)


def _tensor_pair_op(name, cls, doc):
    def op(input, other, *, out=None):
        _require_tensor(name, input, "input", 1)
        _require_tensor(name, other)
        return write_out(apply(cls, input, other), out)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


maximum = tensor_method("maximum")(_tensor_pair_op(
    "maximum", MaximumBackward0, "Elementwise maximum (NaN propagates); ties split the gradient."))
minimum = tensor_method("minimum")(_tensor_pair_op(
    "minimum", MinimumBackward0, "Elementwise minimum (NaN propagates); ties split the gradient."))
fmax = tensor_method("fmax")(_tensor_pair_op(
    "fmax", FmaxBackward0, "Elementwise maximum ignoring NaN (NaN only where both are NaN)."))
fmin = tensor_method("fmin")(_tensor_pair_op(
    "fmin", FminBackward0, "Elementwise minimum ignoring NaN (NaN only where both are NaN)."))
atan2 = arctan2 = tensor_method("atan2", "arctan2")(_tensor_pair_op(
    "atan2", Atan2Backward0, "``atan(input / other)`` in the quadrant of ``(other, input)``."))
hypot = tensor_method("hypot")(_tensor_pair_op(
    "hypot", HypotBackward0, "``sqrt(input**2 + other**2)`` without overflow."))
logaddexp = tensor_method("logaddexp")(_tensor_pair_op(
    "logaddexp", LogaddexpBackward0, "``log(exp(input) + exp(other))`` without overflow."))
logaddexp2 = tensor_method("logaddexp2")(_tensor_pair_op(
    "logaddexp2", Logaddexp2Backward0, "``log2(2**input + 2**other)`` without overflow."))


@tensor_method("atan2_", "arctan2_")
def atan2_(self, other):
    _require_tensor("atan2_", other, "other", 1)
    return apply_inplace(Atan2Backward0, self, other)


@tensor_method("hypot_")
def hypot_(self, other):
    _require_tensor("hypot_", other, "other", 1)
    return apply_inplace(HypotBackward0, self, other)


def _xlogy_node(input, other):
    if isinstance(input, Tensor):
        if isinstance(other, Tensor):
            return XlogyBackward0
        check_operand("xlogy", other)
        return XlogyBackward2
    if not isinstance(other, Tensor):
        raise TypeError("xlogy(): at least one of 'self' and 'other' must be a Tensor")
    check_operand("xlogy", input, "self")
    return XlogyBackward1


@tensor_method("xlogy")
def xlogy(input, other, *, out=None):
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    return write_out(apply(_xlogy_node(input, other), input, other), out)


@tensor_method("xlogy_")
def xlogy_(self, other):
    return apply_inplace(_xlogy_node(self, other), self, other)


def _nan_to_num_args(input, posinf, neginf):
    if input._dtype._category == 2:
        import numpy as np
        info = np.finfo(input._dtype.np)
        posinf = float(info.max) if posinf is None else posinf
        neginf = float(info.min) if neginf is None else neginf
    return posinf, neginf


@tensor_method("nan_to_num")
def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """NaN -> ``nan``, +inf -> ``posinf`` (default: largest finite), -inf -> ``neginf`` (default: lowest)."""
    posinf, neginf = _nan_to_num_args(input, posinf, neginf)
    return write_out(apply(NanToNumBackward0, input, nan, posinf, neginf), out)


@tensor_method("nan_to_num_")
def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    posinf, neginf = _nan_to_num_args(self, posinf, neginf)
    return apply_inplace(NanToNumBackward0, self, nan, posinf, neginf)
