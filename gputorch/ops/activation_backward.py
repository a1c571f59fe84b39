"""Fused gradient ops of the saturating activations, as PyTorch has them.

``tanh_backward``, ``sigmoid_backward`` and ``threshold_backward`` each compute an
activation's input gradient from its saved output in one pass (instead of three
elementwise ops), and are ops themselves so that double backward works and a
backend can replace them with a kernel.
"""
from .._dispatch import apply
from ..autograd.node import Node
from ._common import xp_of

__all__ = []


class TanhBackwardBackward0(Node):
    """``grad * (1 - y * y)`` for ``y = tanh(x)``."""

    def forward(ctx, grad, y):
        ctx.save_for_backward(grad, y)
        r = y._data
        out = r * r
        xp_of(y).subtract(1, out, out=out)
        out *= grad._data
        return out

    def backward(ctx, gg):
        grad, y = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (tanh_backward(gg, y) if need[0] else None,
                gg * -2 * grad * y if need[1] else None)


class SigmoidBackwardBackward0(Node):
    """``grad * (1 - y) * y`` for ``y = sigmoid(x)``."""

    def forward(ctx, grad, y):
        ctx.save_for_backward(grad, y)
        r = y._data
        out = xp_of(y).subtract(1, r)
        out *= grad._data
        out *= r
        return out

    def backward(ctx, gg):
        grad, y = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (sigmoid_backward(gg, y) if need[0] else None,
                gg * grad * (1 - 2 * y) if need[1] else None)


class ThresholdBackwardBackward0(Node):
    """``grad`` where ``y > threshold``, else 0 (the gradient of relu and threshold)."""

    def forward(ctx, grad, y, threshold):
        ctx.save_for_backward(y)
        ctx.threshold = threshold
        g = grad._data
        return g * (y._data > threshold).astype(g.dtype)

    def backward(ctx, gg):
        (y,) = ctx.saved_tensors
        return threshold_backward(gg, y, ctx.threshold), None


def tanh_backward(grad, y):
    return apply(TanhBackwardBackward0, grad, y)


def sigmoid_backward(grad, y):
    return apply(SigmoidBackwardBackward0, grad, y)


def threshold_backward(grad, y, threshold=0):
    return apply(ThresholdBackwardBackward0, grad, y, threshold)
