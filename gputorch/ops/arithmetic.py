"""Arithmetic: add, sub, mul, div, floor_divide, remainder, pow, neg, abs, reciprocal.

Each op broadcasts its operands and promotes their dtypes as PyTorch does;
Python scalars stay scalars (no tensor is made for them).
"""
import numbers

import numpy as np

from .. import _dtype
from .._dispatch import apply, apply_inplace
from .._tensor import Tensor
from ..autograd.node import Node
from ._common import _FAST_OPERANDS, array_rule, cast_grad, check_operand, half_with_number, in_float32, stored_scalar, write_out as _maybe_out, first_tensor, grad_for, operand_arrays, quiet_errors, sum_to_shape, xp_of
from .complex_numbers import unit_phase
from .registry import reflected, tensor_method

__all__ = ["add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide",
           "floor_divide", "remainder", "fmod", "pow", "neg", "negative", "abs", "absolute",
           "reciprocal", "square", "float_power", "positive", "neg_", "negative_", "abs_", "reciprocal_",
           "square_"]



def _binary_check(name, a, b):
    if type(a) is Tensor and type(b) in _FAST_OPERANDS:
        return
    if not isinstance(a, Tensor):
        if not isinstance(b, Tensor):
            raise TypeError(f"{name}(): at least one argument must be a Tensor")
        check_operand(name, a, "input")
    else:
        check_operand(name, b)


class AddBackward0(Node):
    def forward(ctx, a, b, alpha=1):
        x, y, dt = operand_arrays(a, b)
        alpha = _check_alpha(alpha, dt)
        ctx.alpha = alpha
        ctx.a_meta = (a._data.shape, a._dtype) if isinstance(a, Tensor) else None
        ctx.b_meta = (b._data.shape, b._dtype) if isinstance(b, Tensor) else None
        return x + y if alpha == 1 else x + y * alpha

    def backward(ctx, grad):
        return _meta_grads(ctx, grad, 1, ctx.alpha)


def _check_alpha(alpha, dt):
    """``alpha`` as the result dtype ``dt`` takes it (PyTorch's checks): a float is refused for an
    integer or bool result, a bool for a non-bool one; an int is stored as ``dt`` stores it (wrapping
    into unsigned types, an error where it overflows); a bool result takes ``bool(alpha)``."""
    if alpha.__class__ is int and alpha == 1 and dt is not _dtype.bool:   # the default: nothing to check
        return 1
    if dt._category < 2 and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if isinstance(alpha, bool) and dt is not _dtype.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dt is _dtype.bool:
        return bool(alpha)
    return stored_scalar(alpha, dt)


def _is_bool(x):
    """Whether operand ``x`` (a tensor or a Python scalar) is boolean."""
    return x._dtype is _dtype.bool if isinstance(x, Tensor) else type(x) is bool


class SubBackward0(Node):
    def forward(ctx, a, b, alpha=1):
        x, y, dt = operand_arrays(a, b)
        if dt is _dtype.bool:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                               "Use the `^` or `logical_xor()` operator instead.")
        if _is_bool(a) or _is_bool(b):
            raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                               "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
        alpha = _check_alpha(alpha, dt)
        ctx.alpha = alpha
        ctx.a_meta = (a._data.shape, a._dtype) if isinstance(a, Tensor) else None
        ctx.b_meta = (b._data.shape, b._dtype) if isinstance(b, Tensor) else None
        return x - y if alpha == 1 else x - y * alpha

    def backward(ctx, grad):
        return _meta_grads(ctx, grad, 1, -ctx.alpha)


def _meta_grads(ctx, grad, scale_a, scale_b):
    """Gradients of ``scale_a * a + scale_b * b`` from the inputs' recorded shapes/dtypes."""
    return tuple(_reduce_to(grad, meta) if scale == 1 else _scaled_grad(grad, scale, meta)
                 for meta, scale in ((ctx.a_meta, scale_a), (ctx.b_meta, scale_b)) if meta is not None)


def _scaled_grad(grad, scale, meta):
    if scale == -1:
        fast = _array_grad(grad, None, meta, _negated)
        if fast is not None:
            return fast
    return _reduce_to(grad * scale, meta)


def _negated(g, _):
    return -g


def _times(g, other):
    return g * other


def _product(x, y):
    return x * y


def _array_grad(grad, other, meta, op):
    """``op(grad's array, other's)`` (``other`` a tensor like the gradient, a Python float or None)
    as the gradient of an operand described by ``meta`` (shape, dtype) when nothing is to be
    broadcast, summed or cast, through :func:`array_rule`; else None."""
    if meta is None or meta[0] != grad._data.shape or meta[1] is not grad._dtype:
        return None
    return array_rule(op, grad, other)


class MulBackward0(Node):
    def forward(ctx, a, b):
        x, y, dt = operand_arrays(a, b)
        need = ctx.needs_input_grad  # one flag per tensor operand; empty when nothing is recorded
        if need:
            need_a = need[0] and isinstance(a, Tensor)
            need_b = need[-1] and isinstance(b, Tensor)
            # Each gradient needs only the other operand: save just what will be used.
            ctx.save_for_backward(a if need_b else None, b if need_a else None)
            ctx.metas = (_meta(a), _meta(b))
        if half_with_number(x, y, dt):
            return in_float32(_product, x, y)
        with quiet_errors():
            return x * y

    def backward(ctx, grad):
        a, b = ctx.saved_values
        meta_a, meta_b = ctx.metas
        out = []
        if meta_a is not None:
            out.append(None if b is None else _product_grad(grad, b, meta_a))
        if meta_b is not None:
            out.append(None if a is None else _product_grad(grad, a, meta_b))
        return tuple(out)


def _product_grad(grad, other, meta):
    fast = _array_grad(grad, other, meta, _times)
    return _reduce_to(grad * other, meta) if fast is None else fast


def _meta(x):
    """(shape, dtype) of a tensor operand, None for a Python scalar."""
    return (x._data.shape, x._dtype) if isinstance(x, Tensor) else None


def _reduce_to(grad, meta):
    """A broadcast gradient summed down to an operand's shape and cast to its dtype."""
    grad = sum_to_shape(grad, meta[0])
    return grad if grad._dtype is meta[1] else cast_grad(grad, meta[1])


class DivBackward0(Node):
    def forward(ctx, a, b, rounding_mode=None):
        x, y, dt = operand_arrays(a, b)
        ctx.save_for_backward(a, b)
        ctx.rounding_mode = rounding_mode
        t = first_tensor(a, b)
        xp = xp_of(t)
        if rounding_mode is None:
            if dt._category < 2:   # true division of integers: in floating point, a Python number
                f = _dtype.get_default_dtype().np    # as it is (not wrapped into uint8: -1 / 8 is -0.125)
                x = x.astype(f) if hasattr(x, "astype") else a if isinstance(a, numbers.Number) else x
                y = y.astype(f) if hasattr(y, "astype") else b if isinstance(b, numbers.Number) else y
            if half_with_number(x, y, dt):
                return in_float32(xp.true_divide, x, y)
            with quiet_errors():
                return xp.true_divide(x, y)
        if rounding_mode not in ("trunc", "floor"):
            raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                             f"'{rounding_mode}'")
        if dt._category == 1:
            _check_int_zero(xp, x, y)
            if rounding_mode == "floor":
                return xp.floor_divide(x, y)
            q = xp.floor_divide(x, y)
            fix = (xp.remainder(x, y) != 0) & ((x < 0) != (y < 0))
            return q + fix.astype(q.dtype) if fix.ndim or isinstance(q, xp.ndarray) else q
        with quiet_errors():
            if rounding_mode == "floor":
                return xp.floor_divide(x, y)
            return xp.trunc(xp.true_divide(x, y))

    def backward(ctx, grad):
        a, b = ctx.saved_values
        need = ctx.needs_input_grad
        if ctx.rounding_mode is not None:
            return tuple(grad_for(grad * 0, t) for t in (a, b) if isinstance(t, Tensor))
        out = []
        if isinstance(a, Tensor):
            out.append(_dividend_grad(grad, a, b) if need[0] else None)
        if isinstance(b, Tensor):
            out.append(_divisor_grad(grad, a, b) if need[-1] else None)
        return tuple(out)


def _over(g, b):
    return g / b


def _minus_times_quotient_over(g, a, b):
    return -g * ((a / b) / b)


def _dividend_grad(grad, a, b):
    """``grad / b``, reduced to ``a``."""
    fast = _array_grad(grad, b, _meta(a), _over)
    return grad_for(grad / b, a) if fast is None else fast


def _divisor_grad(grad, a, b):
    """``-grad * ((a / b) / b)``, PyTorch's order (no ``b * b`` to overflow), reduced to ``b``."""
    fast = None
    if _meta(b) == (grad._data.shape, grad._dtype):
        fast = array_rule(_minus_times_quotient_over, grad, a, b)
    return grad_for(-grad * (div(a, b) / b), b) if fast is None else fast   # (div: a may be a number)


def _check_int_zero(xp, x, y):
    """PyTorch's error for an integer division (``//``, ``%``, ``fmod``, rounded ``div``) by zero
    (none when the result is empty: nothing is divided)."""
    if getattr(x, "size", 1) == 0 or getattr(y, "size", 1) == 0:
        return
    if (y == 0).any() if hasattr(y, "any") else y == 0:
        raise RuntimeError("ZeroDivisionError")


def _refuse_bool(kernel, dt):
    """Floor division, remainder and fmod have no Bool kernel in PyTorch (Bool // int is fine:
    the result type is then an integer)."""
    if dt is _dtype.bool:
        raise _dtype.not_implemented_for(kernel, dt)


class FloorDivideBackward0(Node):
    def forward(ctx, a, b):
        x, y, dt = operand_arrays(a, b)
        _refuse_bool("div_floor_cpu", dt)
        xp = xp_of(first_tensor(a, b))
        if dt._category == 1:
            _check_int_zero(xp, x, y)
        with quiet_errors():   # floats: Python's floor division (-4 // inf == -1), as PyTorch
            return xp.floor_divide(x, y)

    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::floor_divide is not implemented")


class RemainderBackward0(Node):
    def forward(ctx, a, b):
        x, y, dt = operand_arrays(a, b)
        _refuse_bool("remainder_cpu", dt)
        xp = xp_of(first_tensor(a, b))
        ctx.save_for_backward(a, b)
        if dt._category == 1:
            _check_int_zero(xp, x, y)
        with quiet_errors():
            return xp.remainder(x, y)

    def backward(ctx, grad):
        a, b = ctx.saved_values
        out = []
        if isinstance(a, Tensor):
            out.append(grad_for(grad, a))
        if isinstance(b, Tensor):
            if not isinstance(a, Tensor):   # PyTorch has no derivative of remainder(number, tensor)
                raise RuntimeError("derivative for aten::remainder is not implemented")
            out.append(grad_for(-grad * div(a, b, rounding_mode="floor"), b))
        return tuple(out)


class FmodBackward0(Node):
    def forward(ctx, a, b):
        x, y, dt = operand_arrays(a, b)
        _refuse_bool("fmod_cpu", dt)
        xp = xp_of(first_tensor(a, b))
        ctx.save_for_backward(a, b)
        if dt._category == 1:
            _check_int_zero(xp, x, y)
        with quiet_errors():
            return xp.fmod(x, y)

    def backward(ctx, grad):
        a, b = ctx.saved_values
        out = []
        if isinstance(a, Tensor):
            out.append(grad_for(grad, a))
        if isinstance(b, Tensor):
            out.append(grad_for(-grad * div(a, b, rounding_mode="trunc"), b))
        return tuple(out)


def _integer_power(xp, x, y):
    """``x ** y`` for integer arrays (or Python ints) where exponents may be negative: as in
    PyTorch, ``1 ** -n == 1``, ``(-1) ** -n == +-1`` and any other base gives 0 (NumPy refuses)."""
    negative = y < 0
    if not xp.any(negative):
        return x ** y
    with quiet_errors():
        power = x ** xp.where(negative, 0, y)
    ones = xp.asarray(x == 1)          # arrays also for a Python-number base (CuPy's where needs them)
    minus_ones = xp.asarray(x == -1)
    odd = (y % 2) != 0
    small = xp.where(ones | (minus_ones & ~odd), 1, xp.where(minus_ones, -1, 0))
    return xp.where(negative, small, power).astype(power.dtype, copy=False)


# Floating and complex powers that PyTorch's CPU kernel (and NumPy's ``**``) compute by a dedicated
# function, on every device: CuPy's power computes complex ones as exp(y log x), which loses the small
# part of a huge operand (pow(-1e300 - 0.04j, 0.5) gave a real part 6e133 instead of 2e-152).
_POWER_BY_NAME = {0.5: "sqrt", 2: "square", -1: "reciprocal"}


class PowBackward0(Node):
    """tensor ** scalar"""

    def forward(ctx, a, exponent):
        x, e, dt = operand_arrays(a, exponent)
        if dt._category == 1 and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        ctx.save_for_backward(a)
        ctx.exponent = exponent
        if dt._category == 0:   # bool ** bool: true unless a false base meets a true exponent
            return xp_of(a).logical_or(x, not exponent)
        with quiet_errors():
            if dt._category >= 2 and exponent in _POWER_BY_NAME:
                return getattr(xp_of(a), _POWER_BY_NAME[exponent])(x)
            return x ** e

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        e = ctx.exponent
        if e == 0:
            return grad * 0
        return grad_for(grad * e * a ** (e - 1), a)


class PowBackward1(Node):
    """tensor ** tensor"""

    def forward(ctx, a, b):
        x, y, dt = operand_arrays(a, b)
        ctx.save_for_backward(a, b)
        if dt._category == 1:
            return _integer_power(xp_of(first_tensor(a, b)), x, y)
        with quiet_errors():
            return x ** y

    def backward(ctx, grad):
        a, b = ctx.saved_values
        need = ctx.needs_input_grad
        ga = gb = None
        if need[0]:
            ga = grad_for(grad * b * a ** (b - 1), a)
        if need[1]:
            from .pointwise import log
            result = a ** b
            gb = grad_for(grad * result * log(a).masked_fill((a == 0) & (b >= 0), 0), b)
        return ga, gb


class PowBackward2(Node):
    """scalar ** tensor"""

    def forward(ctx, base, b):
        x, y, dt = operand_arrays(base, b)
        ctx.base = base
        if dt._category == 1:
            return _integer_power(xp_of(b), x, y)
        with quiet_errors():
            return x ** y

    saves_result = True

    def backward(ctx, grad):
        import math
        result = ctx.saved_result
        if ctx.base == 0:
            return grad_for(grad * (result * 0), result)
        return grad * result * math.log(ctx.base)


class NegBackward0(Node):
    def forward(ctx, a):
        if a._dtype is _dtype.bool:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                               "If you are trying to invert a mask, use the `~` or `logical_not()` "
                               "operator instead.")
        return -a._data

    def backward(ctx, grad):
        return -grad


class AbsBackward0(Node):
    def forward(ctx, a):
        if a._dtype is _dtype.bool:
            raise _dtype.not_implemented_for("abs_cpu", a._dtype)
        ctx.save_for_backward(a)
        return xp_of(a).abs(a._data)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        if a._dtype.is_complex:
            return grad * unit_phase(a)
        return grad * a.sign()


class ReciprocalBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        x = a._data
        if a._dtype._category < 2:
            x = x.astype(_dtype.get_default_dtype().np)
        with quiet_errors():
            return xp_of(a).reciprocal(x)

    def backward(ctx, grad):
        r = ctx.saved_result
        return -grad * r * r


@tensor_method("add", "__add__", "__radd__")
def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other`` with broadcasting and type promotion."""
    _binary_check("add", input, other)
    return _maybe_out(apply(AddBackward0, input, other, alpha=alpha), out)


@tensor_method("sub", "subtract", "__sub__")
def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``."""
    _binary_check("sub", input, other)
    return _maybe_out(apply(SubBackward0, input, other, alpha=alpha), out)


subtract = sub


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    return sub(other, input, alpha=alpha)


@tensor_method("mul", "multiply", "__mul__", "__rmul__")
def mul(input, other, *, out=None):
    """Elementwise product with broadcasting."""
    _binary_check("mul", input, other)
    return _maybe_out(apply(MulBackward0, input, other), out)


multiply = mul


@tensor_method("div", "divide", "true_divide", "__truediv__")
def div(input, other, *, rounding_mode=None, out=None):
    """``input / other``; ``rounding_mode`` None (true division), "trunc" or "floor".
    Integer inputs give the default float dtype unless a rounding mode is given."""
    _binary_check("div", input, other)
    return _maybe_out(apply(DivBackward0, input, other, rounding_mode=rounding_mode), out)


divide = true_divide = div


@tensor_method("floor_divide", "__floordiv__")
def floor_divide(input, other, *, out=None):
    """``floor(input / other)``, in the operands' promoted dtype."""
    _binary_check("floor_divide", input, other)
    return _maybe_out(apply(FloorDivideBackward0, input, other), out)


@tensor_method("remainder", "__mod__")
def remainder(input, other, *, out=None):
    """Python-style modulus: the result has the sign of the divisor."""
    _binary_check("remainder", input, other)
    return _maybe_out(apply(RemainderBackward0, input, other), out)


@tensor_method("fmod")
def fmod(input, other, *, out=None):
    """C-style modulus: the result has the sign of the dividend."""
    _binary_check("fmod", input, other)
    return _maybe_out(apply(FmodBackward0, input, other), out)


@tensor_method("pow", "__pow__")
def pow(input, exponent, *, out=None):
    """``input ** exponent``; either may be a Python number."""
    _binary_check("pow", input, exponent)
    if not isinstance(input, Tensor):
        return _maybe_out(apply(PowBackward2, input, exponent), out)
    if isinstance(exponent, Tensor):
        return _maybe_out(apply(PowBackward1, input, exponent), out)
    return _maybe_out(apply(PowBackward0, input, exponent), out)


@tensor_method("float_power")
def float_power(input, exponent, *, out=None):
    """``input ** exponent`` computed in double precision (float64 result), as PyTorch's."""
    _binary_check("float_power", input, exponent)
    wide = [x.to(_dtype.float64) if isinstance(x, Tensor) else float(x) for x in (input, exponent)]
    return _maybe_out(pow(*wide), out)


@tensor_method("neg", "negative", "__neg__")
def neg(input, *, out=None):
    return _maybe_out(apply(NegBackward0, input), out)


negative = neg


@tensor_method("abs", "absolute", "__abs__")
def abs(input, *, out=None):
    return _maybe_out(apply(AbsBackward0, input), out)


absolute = abs


@tensor_method("reciprocal")
def reciprocal(input, *, out=None):
    """``1 / input`` (integer inputs give the default float dtype)."""
    return _maybe_out(apply(ReciprocalBackward0, input), out)


@tensor_method("square")
def square(input, *, out=None):
    return pow(input, 2, out=out)


def _reflected_true_divide(self, other):
    """``other / self`` for a non-tensor ``other``: ``reciprocal(self) * other``, as PyTorch computes
    it (the same rounding, and a MulBackward0 over a ReciprocalBackward0 in the graph)."""
    if isinstance(other, Tensor):
        return div(other, self)
    if not isinstance(other, (numbers.Number, np.bool_)):
        return NotImplemented          # Python's own TypeError, as for torch
    return mul(reciprocal(self), other)


# In-place variants and reflected operators come from the same op definitions.
@tensor_method("add_", "__iadd__")
def add_(self, other, *, alpha=1):
    check_operand("add_", other)
    return apply_inplace(AddBackward0, self, other, alpha=alpha)


@tensor_method("sub_", "subtract_", "__isub__")
def sub_(self, other, *, alpha=1):
    check_operand("sub_", other)
    return apply_inplace(SubBackward0, self, other, alpha=alpha)


@tensor_method("mul_", "multiply_", "__imul__")
def mul_(self, other):
    check_operand("mul_", other)
    return apply_inplace(MulBackward0, self, other)


@tensor_method("div_", "divide_", "true_divide_", "__itruediv__")
def div_(self, other, *, rounding_mode=None):
    check_operand("div_", other)
    return apply_inplace(DivBackward0, self, other, rounding_mode=rounding_mode)


@tensor_method("floor_divide_", "__ifloordiv__")
def floor_divide_(self, other):
    return apply_inplace(FloorDivideBackward0, self, other)


@tensor_method("remainder_", "__imod__")
def remainder_(self, other):
    return apply_inplace(RemainderBackward0, self, other)


@tensor_method("pow_", "__ipow__")
def pow_(self, exponent):
    cls = PowBackward1 if isinstance(exponent, Tensor) else PowBackward0
    return apply_inplace(cls, self, exponent)


@tensor_method("neg_", "negative_")
def neg_(self):
    return apply_inplace(NegBackward0, self)


negative_ = neg_


@tensor_method("abs_", "absolute_")
def abs_(self):
    return apply_inplace(AbsBackward0, self)


@tensor_method("reciprocal_")
def reciprocal_(self):
    return apply_inplace(ReciprocalBackward0, self)


@tensor_method("square_")
def square_(self):
    """In-place ``self ** 2``."""
    return apply_inplace(PowBackward0, self, 2)


@tensor_method("fmod_")
def fmod_(self, other):
    """In-place C-style modulus (the sign of ``self``)."""
    check_operand("fmod_", other)
    return apply_inplace(FmodBackward0, self, other)


@tensor_method("float_power_")
def float_power_(self, exponent):
    """In-place ``self ** exponent`` in double precision: ``self`` must be float64, as in PyTorch."""
    if self._dtype is not _dtype.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {_dtype._LEGACY_NAMES[self._dtype]} but the "
                           f"operation's result requires dtype Double")
    check_operand("float_power_", exponent, "exponent")
    if isinstance(exponent, Tensor):
        return apply_inplace(PowBackward1, self, exponent.to(_dtype.float64))
    return apply_inplace(PowBackward0, self, float(exponent))


tensor_method("__rsub__")(reflected(sub))
tensor_method("__rtruediv__", "__rdiv__")(_reflected_true_divide)
tensor_method("__rfloordiv__")(reflected(floor_divide))
tensor_method("__rmod__")(reflected(remainder))
tensor_method("__rpow__")(reflected(pow))


@tensor_method("__pos__", "positive")
def positive(input):
    """``+input``: the tensor itself (refused for bool, as in PyTorch)."""
    if input._dtype is _dtype.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input
