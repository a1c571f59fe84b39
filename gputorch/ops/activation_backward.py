"""Fused gradient ops of the activations and of softmax, as PyTorch has them.

``tanh_backward``, ``sigmoid_backward`` and ``threshold_backward`` each compute an
activation's input gradient from its saved output in one pass (instead of three
elementwise ops); ``gelu_backward`` and ``silu_backward`` from the saved input;
``softmax_backward_data`` and ``log_softmax_backward_data`` from softmax's output. Each is
an op itself, so that double backward works and a backend can replace it with a kernel.
"""
import math

from .._dispatch import apply
from .._tensor import Tensor
from ..autograd.node import Node
from ._common import array_rule, quiet_errors, xp_of
from .row_reductions import row_sum

_SQRT1_2 = math.sqrt(0.5)
_GELU_PDF = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_TANH_BETA = math.sqrt(2.0 / math.pi)
_GELU_TANH_KAPPA = 0.044715

__all__ = []


class TanhBackwardBackward0(Node):
    """``grad * (1 - y * y)`` for ``y = tanh(x)``."""

    def forward(ctx, grad, y):
        ctx.save_for_backward(grad, y)
        return _tanh_grad(xp_of(y), grad._data, y._data)

    def backward(ctx, gg):
        grad, y = ctx.saved_values
        need = ctx.needs_input_grad
        return (tanh_backward(gg, y) if need[0] else None,
                gg * -2 * grad * y if need[1] else None)


class SigmoidBackwardBackward0(Node):
    """``grad * (1 - y) * y`` for ``y = sigmoid(x)``."""

    def forward(ctx, grad, y):
        ctx.save_for_backward(grad, y)
        return _sigmoid_grad(xp_of(y), grad._data, y._data)

    def backward(ctx, gg):
        grad, y = ctx.saved_values
        need = ctx.needs_input_grad
        return (sigmoid_backward(gg, y) if need[0] else None,
                gg * grad * (1 - 2 * y) if need[1] else None)


class ThresholdBackwardBackward0(Node):
    """``grad`` except where ``y <= threshold`` (0 there): the gradient of relu and threshold. As in
    PyTorch, a NaN ``y`` passes the gradient and an infinite ``grad`` is not turned into NaN."""

    def forward(ctx, grad, y, threshold):
        ctx.save_for_backward(y)
        ctx.threshold = threshold
        return grad._device._backend.fill_where(y._data <= threshold, 0, grad._data)

    def backward(ctx, gg):
        (y,) = ctx.saved_values
        return threshold_backward(gg, y, ctx.threshold), None


def _computed(t):
    """``t``'s array in its computation dtype (float32 for float16) and the dtype to round back to."""
    x = t._data
    if x.dtype.itemsize == 2 and x.dtype.kind == "f":
        return x.astype("float32"), x.dtype
    return x, None


def _back(r, dtype):
    return r if dtype is None else r.astype(dtype)


class GeluBackwardBackward0(Node):
    """``grad * gelu'(x)``: ``Phi(x) + x * phi(x)``, or the derivative of the tanh form."""

    def forward(ctx, grad, x, approximate):
        ctx.save_for_backward(grad, x)
        ctx.approximate = approximate
        xp = xp_of(x)
        a, back = _computed(x)
        g = grad._data
        with quiet_errors():
            if approximate == "tanh":
                x_sq = a * a
                t = xp.tanh((a + x_sq * a * _GELU_TANH_KAPPA) * _GELU_TANH_BETA)
                left = (t + 1) * 0.5
                right = a * 0.5 * (1 - t * t) * ((x_sq * (3 * _GELU_TANH_KAPPA) + 1) * _GELU_TANH_BETA)
                slope = left + right
            else:
                from .special_math import erf
                cdf = (erf(a * _SQRT1_2, xp) + 1) * 0.5
                slope = cdf + a * (xp.exp(a * a * -0.5) * _GELU_PDF)
            return _back(g * slope, back)

    def backward(ctx, gg):
        grad, x = ctx.saved_values
        need = ctx.needs_input_grad
        d_grad = gelu_backward(gg, x, ctx.approximate) if need[0] else None
        d_x = None
        if need[1]:
            if ctx.approximate == "tanh":
                inner = (x + x * x * x * _GELU_TANH_KAPPA) * _GELU_TANH_BETA
                t = inner.tanh()
                du = (x * x * (3 * _GELU_TANH_KAPPA) + 1) * _GELU_TANH_BETA
                second = (1 - t * t) * (du + x * 0.5 * (x * (6 * _GELU_TANH_KAPPA * _GELU_TANH_BETA) - 2 * t * du * du))
            else:
                second = (x * x * -0.5).exp() * _GELU_PDF * (2 - x * x)
            d_x = gg * grad * second
        return d_grad, d_x


class SiluBackwardBackward0(Node):
    """``grad * silu'(x)`` with ``silu'(x) = s * (1 + x * (1 - s))``, ``s = sigmoid(x)``."""

    def forward(ctx, grad, x):
        ctx.save_for_backward(grad, x)
        xp = xp_of(x)
        a, back = _computed(x)
        with quiet_errors():
            s = xp.exp(-a)
            s += 1
            xp.reciprocal(s, out=s)
            return _back(grad._data * (s * (a * (1 - s) + 1)), back)

    def backward(ctx, gg):
        grad, x = ctx.saved_values
        need = ctx.needs_input_grad
        d_grad = silu_backward(gg, x) if need[0] else None
        d_x = None
        if need[1]:
            s = x.sigmoid()
            d_x = gg * grad * (s * (1 - s) * (x * (1 - 2 * s) + 2))
        return d_grad, d_x


class SoftmaxBackwardDataBackward0(Node):
    """softmax's input gradient ``y * (grad - sum(grad * y))`` along ``dim``, from its output ``y``."""

    def forward(ctx, grad, y, dim):
        ctx.save_for_backward(grad, y)
        ctx.dim = dim
        g, back = _computed(grad)
        v, _ = _computed(y)
        if v.ndim == 0:
            return _back(v * (g - g * v), back)
        return _back(v * (g - row_sum(g * v, dim, back is not None)), back)

    def backward(ctx, gg):
        grad, y = ctx.saved_values
        need = ctx.needs_input_grad
        dim = ctx.dim
        d_grad = softmax_backward_data(gg, y, dim) if need[0] else None
        d_y = None
        if need[1]:
            d_y = gg * (grad - (grad * y).sum(dim, keepdim=True)) - grad * (gg * y).sum(dim, keepdim=True)
        return d_grad, d_y


class LogSoftmaxBackwardDataBackward0(Node):
    """log_softmax's input gradient ``grad - exp(y) * sum(grad)`` along ``dim``, from its output ``y``."""

    def forward(ctx, grad, y, dim):
        ctx.save_for_backward(grad, y)
        ctx.dim = dim
        xp = xp_of(y)
        g, back = _computed(grad)
        v, _ = _computed(y)
        with quiet_errors():
            total = g if v.ndim == 0 else row_sum(g, dim, back is not None)
            return _back(g - xp.exp(v) * total, back)

    def backward(ctx, gg):
        grad, y = ctx.saved_values
        need = ctx.needs_input_grad
        dim = ctx.dim
        e = y.exp()
        d_grad = gg - (gg * e).sum(dim, keepdim=True) if need[0] else None
        d_y = -(gg * e) * grad.sum(dim, keepdim=True) if need[1] else None
        return d_grad, d_y


def gelu_backward(grad, x, approximate="none"):
    return apply(GeluBackwardBackward0, grad, x, approximate)


# Below these magnitudes ``gelu(x) / x`` loses digits (the product rounds in the subnormals).
_GELU_RATIO_FLOOR = {"float32": 1e-30, "float64": 1e-290}


def gelu_grad_from_output(grad, input, output):
    """``grad * gelu'(input)`` for exact GELU from its input and output tensors (float32/float64,
    one shape, at least 1-D), with ``Phi(x) = y / x`` instead of a second erf: 7 elementwise passes where the
    erf alone takes about 25. Elements where the ratio loses digits (``|x|`` below
    ``_GELU_RATIO_FLOOR``, zeros, infinities, NaN) take :class:`GeluBackwardBackward0`'s formula.
    Computed on the arrays, for a backward that records no graph; returns a tensor like ``input``."""
    xp = xp_of(input)
    x, y = input._data, output._data
    with quiet_errors():
        cdf = y / x
        exact = xp.abs(x) >= _GELU_RATIO_FLOOR[x.dtype.name]
        exact &= xp.isfinite(cdf)
        slope = x * x
        slope *= -0.5
        xp.exp(slope, out=slope)
        slope *= x
        slope *= _GELU_PDF
        slope += cdf
        if not exact.all():
            from .special_math import erf
            fallback = (erf(x * _SQRT1_2, xp) + 1) * 0.5 + x * (xp.exp(x * x * -0.5) * _GELU_PDF)
            slope = xp.where(exact, slope, fallback)
        slope *= grad._data
    return Tensor._make(slope, input._device, input._dtype)


def silu_backward(grad, x):
    return apply(SiluBackwardBackward0, grad, x)


def softmax_backward_data(grad, y, dim):
    return apply(SoftmaxBackwardDataBackward0, grad, y, dim)


def log_softmax_backward_data(grad, y, dim):
    return apply(LogSoftmaxBackwardDataBackward0, grad, y, dim)


def _tanh_grad(xp, g, r):
    out = r * r
    xp.subtract(1, out, out=out)
    out *= g
    return out


def _sigmoid_grad(xp, g, r):
    out = xp.subtract(1, r)
    out *= g
    out *= r
    return out


def _by_arrays(cls, rule, grad, y):
    """``cls``'s gradient computed by ``rule`` on the arrays without a dispatch (see
    ``array_rule``), unless the device's backend has its own kernel for ``cls``; else None."""
    if cls in grad._device._backend.overrides:
        return None
    return array_rule(rule, grad, y, with_xp=True)


def tanh_backward(grad, y):
    fast = _by_arrays(TanhBackwardBackward0, _tanh_grad, grad, y)
    return apply(TanhBackwardBackward0, grad, y) if fast is None else fast


def sigmoid_backward(grad, y):
    fast = _by_arrays(SigmoidBackwardBackward0, _sigmoid_grad, grad, y)
    return apply(SigmoidBackwardBackward0, grad, y) if fast is None else fast


def threshold_backward(grad, y, threshold=0):
    return apply(ThresholdBackwardBackward0, grad, y, threshold)
