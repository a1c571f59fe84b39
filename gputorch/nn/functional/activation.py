"""Activation functions: ``F.relu``, ``F.gelu``, ``F.softmax``, ``F.log_softmax``, ...

Each activation that PyTorch computes with one kernel is one op here: a graph node
(named like PyTorch's ``grad_fn``) whose ``forward`` works on backend arrays and whose
``backward`` is Tensor math (so it can be differentiated again). Floating-only
activations raise PyTorch's NotImplementedError for integer inputs; float16 inputs
are computed in float32 and rounded once.

In-place forms (``inplace=True`` or the ``*_`` functions) go through ``apply_inplace``;
those whose PyTorch node keeps the result instead of the input (``leaky_relu_``,
``elu_``, ``celu_``, ``threshold_``) have a ``...Backward1`` node here too.
"""
import math
import warnings

import numpy as np

from ... import _dtype
from ..._dispatch import apply, apply_inplace
from ..._tensor import _LEGACY_NAMES, Tensor
from ...autograd.grad_mode import GRAD_ENABLED as _GRAD_ENABLED
from ...autograd.saved_hooks import STATE as _SAVED_HOOKS
from ...autograd.node import Node
from ...ops import special_math
from ...ops._common import Number, grad_for, quiet_errors, xp_of
from ...ops.activation_backward import (gelu_backward, gelu_grad_from_output, log_softmax_backward_data, silu_backward,
                                        softmax_backward_data, threshold_backward)
from ...ops.comparison import where
from ...ops.pointwise import relu as _core_relu, relu_ as _core_relu_, sigmoid, tanh
from ...ops.registry import tensor_method
from ...ops.row_reductions import row_max, row_sum
from ..._type_info import finfo

__all__ = [
    "threshold", "threshold_", "relu", "relu_", "relu6", "hardtanh", "hardtanh_", "leaky_relu",
    "leaky_relu_", "rrelu", "rrelu_", "elu", "elu_", "selu", "selu_", "celu", "celu_", "gelu", "silu", "mish",
    "sigmoid", "tanh", "hardsigmoid", "hardswish", "softplus", "softsign", "logsigmoid",
    "softshrink", "hardshrink", "tanhshrink", "glu", "prelu", "softmax", "softmin", "log_softmax",
]

_HALF = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT1_2 = math.sqrt(0.5)
_GELU_TANH_BETA = math.sqrt(2.0) * 2.0 / math.sqrt(math.pi) * 0.5   # sqrt(2 / pi)
_GELU_TANH_KAPPA = 0.044715


# ================================================================ helpers
def _float_array(kernel, a):
    """``(array, back)``: ``a``'s array to compute on and the dtype to round the result to
    (None when it is already right). Non-floating inputs raise PyTorch's error naming ``kernel``."""
    dt = a._dtype
    if dt._category != 2:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_LEGACY_NAMES[dt]}\'')
    x = a._data
    if x.dtype == _HALF:
        return x.astype(_F32), _HALF
    return x, None


def _finish(r, back):
    return r if back is None else r.astype(back)


def _require_tensor(name, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(value).__name__}")


def _require_number(name, arg, position, value):
    if not isinstance(value, Number):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Number, "
                        f"not {type(value).__name__}")


# ================================================================ threshold family
class ThresholdBackward0(Node):
    """``value`` where ``input <= threshold``, else ``input``."""

    def forward(ctx, a, threshold, value):
        ctx.save_for_backward(a)
        ctx.threshold = threshold
        x = a._data
        return xp_of(a).where(x <= threshold, x.dtype.type(value), x)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return threshold_backward(grad, a, ctx.threshold)


class ThresholdBackward1(ThresholdBackward0):
    """In-place threshold; like PyTorch, the mask is taken from the result."""
    saves_result = True

    def forward(ctx, a, threshold, value):
        ctx.threshold = threshold
        x = a._data
        return xp_of(a).where(x <= threshold, x.dtype.type(value), x)

    def backward(ctx, grad):
        return threshold_backward(grad, ctx.saved_result, ctx.threshold)


class HardtanhBackward0(Node):
    """``clamp(input, min_val, max_val)``; the gradient passes strictly inside the interval."""
    saves_result = True

    def forward(ctx, a, min_val, max_val):
        if a._dtype is _dtype.bool:
            raise RuntimeError("Bool inputs not supported for hardtanh")
        ctx.min_val, ctx.max_val = min_val, max_val
        x = a._data
        t = x.dtype.type
        return xp_of(a).clip(x, t(min_val), t(max_val))

    def backward(ctx, grad):
        r = ctx.saved_result
        return grad * ((r > ctx.min_val) & (r < ctx.max_val))


class LeakyReluBackward0(Node):
    def forward(ctx, a, slope):
        x, back = _float_array("leaky_relu_cpu", a)
        ctx.save_for_backward(a)
        ctx.slope = slope
        return _finish(xp_of(a).where(x > 0, x, x * slope), back)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return where(a > 0, grad, grad * ctx.slope)


class LeakyReluBackward1(Node):
    """In-place leaky_relu: the sign is read from the result."""
    saves_result = True

    def forward(ctx, a, slope):
        x, back = _float_array("leaky_relu_cpu", a)
        ctx.slope = slope
        return _finish(xp_of(a).where(x > 0, x, x * slope), back)

    def backward(ctx, grad):
        return where(ctx.saved_result > 0, grad, grad * ctx.slope)


class RreluWithNoiseBackward0(Node):
    """``input * noise``, where ``noise`` is the slope drawn for each non-positive element and 1
    elsewhere."""

    def forward(ctx, a, noise):
        x, back = _float_array("rrelu_with_noise_out_cpu", a)
        ctx.save_for_backward(noise)
        return _finish(x * noise._data, back)

    def backward(ctx, grad):
        (noise,) = ctx.saved_values
        return grad * noise, None


def _elu_array(a, alpha, scale, input_scale, kernel):
    x, back = _float_array(kernel, a)
    xp = xp_of(a)
    with quiet_errors():
        neg = xp.expm1(x * input_scale)
        neg *= alpha * scale
        return _finish(xp.where(x > 0, x * scale, neg), back)


class EluBackward0(Node):
    """``scale * x`` for ``x > 0``, else ``alpha * scale * (exp(x * input_scale) - 1)`` (elu, selu)."""

    def forward(ctx, a, alpha, scale, input_scale):
        ctx.save_for_backward(a)
        ctx.coefs = (alpha, scale, input_scale)
        return _elu_array(a, alpha, scale, input_scale, "elu_cpu")

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        alpha, scale, input_scale = ctx.coefs
        neg = grad * ((a * input_scale).exp() * (input_scale * alpha * scale))
        return where(a > 0, grad * scale, neg)


class EluBackward1(Node):
    """In-place elu/selu: the gradient is taken from the result."""
    saves_result = True

    def forward(ctx, a, alpha, scale, input_scale):
        ctx.coefs = (alpha, scale, input_scale)
        return _elu_array(a, alpha, scale, input_scale, "elu_cpu")

    def backward(ctx, grad):
        alpha, scale, input_scale = ctx.coefs
        r = ctx.saved_result
        return where(r > 0, grad * scale, grad * input_scale * (r + alpha * scale))


class CeluBackward0(EluBackward0):
    """celu: elu with ``input_scale = 1 / alpha``."""


class CeluBackward1(EluBackward1):
    pass


# ================================================================ smooth activations
class GeluBackward0(Node):
    """``x * Phi(x)`` (``approximate='none'``, with erf) or its tanh approximation."""

    def forward(ctx, a, approximate):
        x, back = _float_array("GeluKernelImpl", a)
        xp = xp_of(a)
        ctx.save_for_backward(a)
        ctx.approximate = approximate
        ctx.saves_result = False
        with quiet_errors():
            if approximate == "tanh":
                inner = x * x * x
                inner *= _GELU_TANH_KAPPA
                inner += x
                inner *= _GELU_TANH_BETA
                xp.tanh(inner, out=inner)
                inner += 1
                inner *= x * 0.5
                return _finish(inner, back)
            cdf = special_math.erf(x * _SQRT1_2, xp)
            cdf += 1
            cdf *= x * 0.5
            # see backward (a backend's kernel sets it False: its fused gradient recomputes erf)
            ctx.saves_result = bool(back is None and x.ndim and ctx.needs_input_grad and not _SAVED_HOOKS.stack)
            return _finish(cdf, back)

    def backward(ctx, grad):
        """The first-order gradient reads ``Phi(x)`` off the output (the dispatcher kept it) rather
        than computing erf again, unless the output was modified in place since; with
        ``create_graph``, or when saved-tensor hooks were active in forward (they see only the
        input, as in PyTorch), it takes the differentiable ``gelu_backward``. (A graph's GELU
        output is normally saved anyway, by the Linear layer it feeds.)"""
        (a,) = ctx.saved_values
        if ctx.saves_result and not _GRAD_ENABLED.value:
            kept = ctx._result_saved
            if kept is not None and kept.tensor._vc[0] == kept.version:
                return gelu_grad_from_output(grad, a, kept.tensor)
        return gelu_backward(grad, a, ctx.approximate)


def _sigmoid_array(xp, x):
    with quiet_errors():
        e = xp.exp(-x)
        e += 1
        return xp.reciprocal(e, out=e)


class SiluBackward0(Node):
    """``x * sigmoid(x)``."""

    def forward(ctx, a):
        x, back = _float_array("silu_cpu", a)
        ctx.save_for_backward(a)
        return _finish(x * _sigmoid_array(xp_of(a), x), back)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return silu_backward(grad, a)


class MishBackward0(Node):
    """``x * tanh(softplus(x))``."""

    def forward(ctx, a):
        x, back = _float_array("mish_cpu", a)
        xp = xp_of(a)
        ctx.save_for_backward(a)
        with quiet_errors():
            t = xp.tanh(xp.log1p(xp.exp(x)))
        t *= x
        return _finish(t, back)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        t = a.exp().log1p().tanh()
        return grad * (t + a * a.sigmoid() * (1 - t * t))


_ONE_SIXTH_F32 = float(np.float32(1.0) / np.float32(6.0))   # PyTorch's constant, in every dtype


class HardsigmoidBackward0(Node):
    """``relu6(x + 3) / 6``."""

    def forward(ctx, a):
        x, back = _float_array("hardsigmoid_cpu", a)
        ctx.save_for_backward(a)
        r = xp_of(a).clip(x + 3, 0, 6)
        r /= 6
        return _finish(r, back)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * (((a > -3) & (a < 3)).to(grad.dtype) * _ONE_SIXTH_F32)


class HardswishBackward0(Node):
    """``x * relu6(x + 3) / 6``."""

    def forward(ctx, a):
        x, back = _float_array("hardswish_cpu", a)
        ctx.save_for_backward(a)
        r = xp_of(a).clip(x + 3, 0, 6)
        r *= x
        r /= 6
        return _finish(r, back)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        middle = grad * (a / 3 + 0.5)
        return where(a < -3, 0, where(a <= 3, middle, grad))


class SoftplusBackward0(Node):
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``."""

    def forward(ctx, a, beta, threshold):
        x, back = _float_array("softplus_cpu", a)
        xp = xp_of(a)
        ctx.save_for_backward(a)
        ctx.beta, ctx.threshold = beta, threshold
        bx = x * beta
        with quiet_errors():
            soft = xp.log1p(xp.exp(bx))
            soft /= beta
        return _finish(xp.where(bx > threshold, x, soft), back)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        bx = a * ctx.beta
        z = bx.exp()
        return where(bx > ctx.threshold, grad, grad * z / (z + 1))


class LogSigmoidBackward0(Node):
    """``log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))``."""

    def forward(ctx, a):
        x, back = _float_array("log_sigmoid_cpu", a)
        xp = xp_of(a)
        ctx.save_for_backward(a)
        with quiet_errors():
            r = xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))
        return _finish(r, back)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * (-a).sigmoid()


class SoftshrinkBackward0(Node):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""

    def forward(ctx, a, lambd):
        x, back = _float_array("softshrink_cpu", a)
        xp = xp_of(a)
        ctx.save_for_backward(a)
        ctx.lambd = lambd
        inner = xp.where(x != x, x, 0)            # NaN stays NaN, as in PyTorch
        r = xp.where(x > lambd, x - lambd, xp.where(x < -lambd, x + lambd, inner))
        return _finish(r.astype(x.dtype, copy=False), back)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * ~((a >= -ctx.lambd) & (a <= ctx.lambd))


class HardshrinkBackward0(Node):
    """``x`` where ``|x| > lambd``, else 0."""

    def forward(ctx, a, lambd):
        x, back = _float_array("hardshrink_cpu", a)
        ctx.save_for_backward(a)
        ctx.lambd = lambd
        keep = ~((x >= -lambd) & (x <= lambd))   # NaN is kept, as in PyTorch
        return _finish(xp_of(a).where(keep, x, 0).astype(x.dtype, copy=False), back)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * ~((a >= -ctx.lambd) & (a <= ctx.lambd))   # NaN passes its gradient, as in PyTorch


class GluBackward0(Node):
    """``a * sigmoid(b)`` where ``a, b`` are the halves of the input along ``dim``."""

    def forward(ctx, x, dim):
        arr, back = _float_array("glu_cpu", x)
        ctx.save_for_backward(x)
        ctx.dim = dim
        half = arr.shape[dim] // 2
        first = _half(arr, dim, 0, half)
        second = _half(arr, dim, half, 2 * half)
        return _finish(first * _sigmoid_array(xp_of(x), second), back)

    def backward(ctx, grad):
        (x,) = ctx.saved_values
        first, second = x.chunk(2, ctx.dim)
        s = second.sigmoid()
        g_first = grad * s
        g_second = grad * first * s * (1 - s)
        from ...ops.shape import cat
        return cat([g_first, g_second], ctx.dim)


def _half(arr, dim, start, stop):
    key = [slice(None)] * arr.ndim
    key[dim] = slice(start, stop)
    return arr[tuple(key)]


class PreluKernelBackward0(Node):
    """``x`` where positive, ``weight * x`` elsewhere (``weight`` broadcast over the channel dim)."""

    def forward(ctx, a, w):
        x, back = _float_array("prelu_cpu", a)
        wa = w._data if w._dtype is a._dtype else w._data.astype(a._dtype.np)
        if back is not None:
            wa = wa.astype(_F32)
        ctx.save_for_backward(a, w)
        return _finish(xp_of(a).where(x > 0, x, x * wa), back)

    def backward(ctx, grad):
        a, w = ctx.saved_values
        need = ctx.needs_input_grad
        positive = a > 0
        ga = where(positive, grad, w * grad) if need[0] else None
        gw = grad_for(where(positive, 0, a * grad), w) if need[1] else None
        return ga, gw


# ================================================================ softmax family
def _softmax_input(kernel, a, dim):
    """The array to normalise (float32 for float16), the axis, and the dtype to round back to."""
    x, back = _float_array(kernel, a)
    if x.ndim == 0:
        return x.reshape(1), 0, back
    return x, dim, back


class SoftmaxBackward0(Node):
    """``exp(x - max) / sum(exp(x - max))`` along ``dim``."""
    saves_result = True

    def forward(ctx, a, dim):
        x, axis, back = _softmax_input("softmax_lastdim_kernel_impl", a, dim)
        ctx.dim = dim
        xp = xp_of(a)
        if x.size == 0:
            return _finish(x.copy(), back).reshape(a._data.shape)
        with quiet_errors():
            e = x - row_max(x, axis)
            xp.exp(e, out=e)
            total = row_sum(e, axis, back is not None)
            e *= xp.reciprocal(total, out=total)
        return _finish(e, back).reshape(a._data.shape)

    def backward(ctx, grad):
        return softmax_backward_data(grad, ctx.saved_result, ctx.dim)


class LogSoftmaxBackward0(Node):
    """``x - max - log(sum(exp(x - max)))`` along ``dim``."""
    saves_result = True

    def forward(ctx, a, dim):
        x, axis, back = _softmax_input("log_softmax_lastdim_kernel_impl", a, dim)
        ctx.dim = dim
        xp = xp_of(a)
        if x.size == 0:
            return _finish(x.copy(), back).reshape(a._data.shape)
        with quiet_errors():
            shifted = x - row_max(x, axis)
            lse = row_sum(xp.exp(shifted), axis, back is not None)
            xp.log(lse, out=lse)
            shifted -= lse
        return _finish(shifted, back).reshape(a._data.shape)

    def backward(ctx, grad):
        return log_softmax_backward_data(grad, ctx.saved_result, ctx.dim)


# ================================================================ public functions
def threshold(input, threshold, value, inplace=False):
    """``value`` where ``input <= threshold``, else ``input``."""
    _require_tensor("threshold", input)
    if inplace:
        return apply_inplace(ThresholdBackward1, input, threshold, value)
    return apply(ThresholdBackward0, input, threshold, value)


def threshold_(input, threshold, value):
    return apply_inplace(ThresholdBackward1, input, threshold, value)


def relu(input, inplace=False):
    """``max(input, 0)``."""
    return _core_relu_(input) if inplace else _core_relu(input)


def relu_(input):
    return _core_relu_(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``clamp(input, min_val, max_val)``."""
    _require_tensor("hardtanh", input)
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return apply_inplace(HardtanhBackward0, input, min_val, max_val)
    return apply(HardtanhBackward0, input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """``min(max(input, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``input`` where positive, else ``negative_slope * input``."""
    _require_tensor("leaky_relu", input)
    _require_number("leaky_relu", "negative_slope", 2, negative_slope)
    if inplace:
        return apply_inplace(LeakyReluBackward1, input, negative_slope)
    return apply(LeakyReluBackward0, input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training, each non-positive element gets a slope drawn from
    U(lower, upper) (the input device's default generator); in evaluation, the slope is
    ``(lower + upper) / 2``."""
    _require_tensor("rrelu", input)
    _float_array("rrelu_with_noise_out_cpu", input)
    from ...ops.creation import empty_like, full_like
    if training:
        slopes = empty_like(input).uniform_(lower, upper)
        noise = where(input <= 0, slopes, 1.0)
    else:   # PyTorch's evaluation mode is leaky_relu's: a NaN input takes the slope in backward
        slopes = full_like(input, (lower + upper) / 2)
        noise = where(input > 0, 1.0, slopes)
    if inplace:
        return apply_inplace(RreluWithNoiseBackward0, input, noise)
    return apply(RreluWithNoiseBackward0, input, noise)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def elu(input, alpha=1.0, inplace=False):
    """``input`` where positive, else ``alpha * (exp(input) - 1)``."""
    _require_tensor("elu", input)
    if inplace:
        return apply_inplace(EluBackward1, input, alpha, 1.0, 1.0)
    return apply(EluBackward0, input, alpha, 1.0, 1.0)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    """``scale * elu(input, alpha)`` with the self-normalising constants."""
    _require_tensor("selu", input)
    if inplace:
        return apply_inplace(EluBackward1, input, _SELU_ALPHA, _SELU_SCALE, 1.0)
    return apply(EluBackward0, input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    _require_tensor("celu", input)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    if inplace:
        return apply_inplace(CeluBackward1, input, alpha, 1.0, 1.0 / alpha)
    return apply(CeluBackward0, input, alpha, 1.0, 1.0 / alpha)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def gelu(input, approximate="none"):
    """``x * Phi(x)`` (Phi: the standard normal CDF); ``approximate='tanh'`` uses
    ``0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))``."""
    _require_tensor("gelu", input)
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return apply(GeluBackward0, input, approximate)


def silu(input, inplace=False):
    """``x * sigmoid(x)``."""
    _require_tensor("silu", input)
    if inplace:
        return apply_inplace(SiluBackward0, input)
    return apply(SiluBackward0, input)


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``."""
    _require_tensor("mish", input)
    if inplace:
        return apply_inplace(MishBackward0, input)
    return apply(MishBackward0, input)


def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6``."""
    _require_tensor("hardsigmoid", input)
    if inplace:
        return apply_inplace(HardsigmoidBackward0, input)
    return apply(HardsigmoidBackward0, input)


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6``."""
    _require_tensor("hardswish", input)
    if inplace:
        return apply_inplace(HardswishBackward0, input)
    return apply(HardswishBackward0, input)


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``; ``x`` itself where ``beta * x > threshold``."""
    _require_tensor("softplus", input)
    return apply(SoftplusBackward0, input, beta, threshold)


def softsign(input):
    """``x / (1 + |x|)``."""
    return input / (input.abs() + 1)


def logsigmoid(input):
    """``log(sigmoid(x))``, computed without overflow."""
    _require_tensor("logsigmoid", input)
    return apply(LogSigmoidBackward0, input)


def _check_lambd(lambd, input):
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, {finfo(input._dtype).max:g}] for input dtype "
                           f"{_LEGACY_NAMES[input._dtype]}, but found {lambd}")


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    _require_tensor("softshrink", input)
    if input._dtype._category == 2:
        _check_lambd(lambd, input)
    return apply(SoftshrinkBackward0, input, lambd)


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0."""
    _require_tensor("hardshrink", input)
    return apply(HardshrinkBackward0, input, lambd)


def tanhshrink(input):
    """``x - tanh(x)``."""
    return input - input.tanh()


def glu(input, dim=-1):
    """Gated linear unit: ``a * sigmoid(b)`` for the halves ``a, b`` of ``input`` along ``dim``."""
    _require_tensor("glu", input)
    if input._data.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = input._wrap_dim(dim)
    size = input._data.shape[d]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    return apply(GluBackward0, input, d)


def prelu(input, weight):
    """``x`` where positive, ``weight * x`` elsewhere; ``weight`` has 1 element or one per
    channel (dim 1)."""
    _require_tensor("prelu", input)
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu(): argument 'weight' (position 2) must be Tensor, not {type(weight).__name__}")
    n = weight.numel()
    ndim = input._data.ndim
    channels = input._data.shape[1] if ndim >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                           f"and channel size = {channels}.")
    if n == 1:
        if weight._data.ndim:
            weight = weight.reshape(())
    else:
        weight = weight.reshape((channels,) + (1,) * (ndim - 2))
    return apply(PreluKernelBackward0, input, weight)


def _softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
                  "dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _normalised(cls, name, input, dim, dtype, stacklevel):
    _require_tensor(name, input)
    if dim is None:
        dim = _softmax_dim(name, input._data.ndim, stacklevel + 1)
    d = input._wrap_dim(dim)
    if dtype is not None:
        input = input.to(dtype)
    return apply(cls, input, d)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim`` (computed as one op); ``dtype`` casts the input first."""
    return _normalised(SoftmaxBackward0, "softmax", input, dim, dtype, _stacklevel)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input)`` along ``dim``."""
    _require_tensor("softmin", input)
    if input._dtype is _dtype.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    if dim is None:
        dim = _softmax_dim("softmin", input._data.ndim, _stacklevel + 1)
    if dtype is not None:
        input = input.to(dtype)
    return apply(SoftmaxBackward0, -input, input._wrap_dim(dim))


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``x - logsumexp(x)`` along ``dim``, computed as one numerically stable op."""
    return _normalised(LogSoftmaxBackward0, "log_softmax", input, dim, dtype, _stacklevel)


# ---------------------------------------------------------------- Tensor methods
@tensor_method("softmax")
def _tensor_softmax(self, dim, dtype=None):
    return _normalised(SoftmaxBackward0, "softmax", self, dim, dtype, 3)


@tensor_method("log_softmax")
def _tensor_log_softmax(self, dim, dtype=None):
    return _normalised(LogSoftmaxBackward0, "log_softmax", self, dim, dtype, 3)


Tensor.softmax = _tensor_softmax
Tensor.log_softmax = _tensor_log_softmax
# hardshrink and prelu are Tensor methods as they are (registered after the op table was attached)
Tensor.hardshrink = tensor_method("hardshrink")(hardshrink)
Tensor.prelu = tensor_method("prelu")(prelu)
