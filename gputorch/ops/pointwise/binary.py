"""Two-input elementwise functions: maximum/minimum (NaN propagates, ties split the gradient),
fmax/fmin (NaN ignored), atan2, hypot, logaddexp, logaddexp2 and xlogy (tensor or number on
either side), with the in-place variants PyTorch has.
"""
from ... import _dtype
from ..._dispatch import apply, apply_inplace
from ..._tensor import _LEGACY_NAMES as _LEGACY, Tensor
from ...autograd.node import Node
from .._common import check_operand, first_tensor, grad_for, operand_arrays, quiet_errors, write_out, xp_of
from ..comparison import where
from ..registry import tensor_method
from ._common import _require_tensor

__all__ = ["atan2", "arctan2", "maximum", "minimum", "fmax", "fmin", "hypot", "logaddexp", "logaddexp2",
           "xlogy", "xlogy_"]


def _const(array, like):
    """A constant tensor (no history) on ``like``'s device from a backend array."""
    return Tensor._make(array, like._device)


class Atan2Backward0(Node):
    def forward(ctx, a, b):
        x, y = _float_pair(a, b)
        ctx.save_for_backward(a, b)
        with quiet_errors():
            return xp_of(a).arctan2(x, y)

    def backward(ctx, grad):
        a, b = ctx.saved_values
        need = ctx.needs_input_grad
        scale = grad / (a * a + b * b)
        return (grad_for(scale * b, a) if need[0] else None,
                grad_for(scale * -a, b) if need[1] else None)


# ================================================================ binary extrema
class MaximumBackward0(Node):
    def forward(ctx, a, b):
        x, y, _ = operand_arrays(a, b)
        ctx.save_for_backward(a, b)
        with quiet_errors():
            return xp_of(a).maximum(x, y)

    def backward(ctx, grad):
        a, b = ctx.saved_values
        return _split_extremum_grad(ctx, grad, a, b, a._data < b._data, a._data > b._data)


class MinimumBackward0(Node):
    def forward(ctx, a, b):
        x, y, _ = operand_arrays(a, b)
        ctx.save_for_backward(a, b)
        with quiet_errors():
            return xp_of(a).minimum(x, y)

    def backward(ctx, grad):
        a, b = ctx.saved_values
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
        return xp_of(a).fmax(x, y)

    def backward(ctx, grad):
        a, b = ctx.saved_values
        x, y, _ = operand_arrays(a, b)
        return _pick_grad(ctx, grad, a, b, (x >= y) | xp_of(a).isnan(y))


class FminBackward0(Node):
    def forward(ctx, a, b):
        x, y, _ = operand_arrays(a, b)
        ctx.save_for_backward(a, b)
        return xp_of(a).fmin(x, y)

    def backward(ctx, grad):
        a, b = ctx.saved_values
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
            return xp_of(a).hypot(x, y)

    def backward(ctx, grad):
        a, b = ctx.saved_values
        need = ctx.needs_input_grad
        # grad * (x / hypot): the ratio is at most 1 in magnitude, so nothing overflows or falls into
        # the subnormals where x or hypot is huge (PyTorch's grad * x / hypot overflows there)
        result = ctx.saved_result
        return (grad_for(grad * (a / result), a) if need[0] else None,
                grad_for(grad * (b / result), b) if need[1] else None)


class LogaddexpBackward0(Node):
    def forward(ctx, a, b):
        x, y = _float_only("logaddexp", a, b)
        ctx.save_for_backward(a, b)
        with quiet_errors():
            return xp_of(a).logaddexp(x, y)

    def backward(ctx, grad):
        a, b = ctx.saved_values
        need = ctx.needs_input_grad
        return (grad_for(grad / ((b - a).exp() + 1), a) if need[0] else None,
                grad_for(grad / ((a - b).exp() + 1), b) if need[1] else None)


class Logaddexp2Backward0(Node):
    def forward(ctx, a, b):
        x, y = _float_only("logaddexp2", a, b)
        ctx.save_for_backward(a, b)
        with quiet_errors():
            return xp_of(a).logaddexp2(x, y)

    def backward(ctx, grad):
        a, b = ctx.saved_values
        need = ctx.needs_input_grad
        return (grad_for(grad / ((b - a).exp2() + 1), a) if need[0] else None,
                grad_for(grad / ((a - b).exp2() + 1), b) if need[1] else None)


def _xlogy_forward(ctx, a, b):
    x, y = _float_pair(a, b)
    xp = xp_of(first_tensor(a, b))
    with quiet_errors():
        # a Python-number ``other`` stays a Python float, so it does not promote ``input``
        log_y = xp.log(y) if isinstance(b, Tensor) else float(xp.log(float(y)))
        r = x * log_y
        # 0 * log(y) is 0 unless y is NaN
        zero = (x == 0) & ~xp.isnan(y)
    return xp.where(zero, 0, r)


class XlogyBackward0(Node):
    """xlogy(Tensor, Tensor)"""

    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _xlogy_forward(ctx, a, b)

    def backward(ctx, grad):
        a, b = ctx.saved_values
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
        (b,) = ctx.saved_values
        return grad * ctx.self_value / b


class XlogyBackward2(Node):
    """xlogy(Tensor, Number)"""

    def forward(ctx, a, b):
        ctx.save_for_backward(a)
        ctx.other_value = b
        return _xlogy_forward(ctx, a, b)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return _xlogy_self_grad(grad, a, ctx.other_value)


def _xlogy_self_grad(grad, a, b):
    g = xlogy(grad, b)
    if isinstance(b, Tensor):
        return where((a == 0) & (b <= 0), 0, g)
    return where(a == 0, 0, g) if b <= 0 else g


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
