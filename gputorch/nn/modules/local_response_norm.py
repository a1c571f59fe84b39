"""Local response normalisation across channels: ``F.local_response_norm``, ``LocalResponseNorm``
and the legacy ``CrossMapLRN2d``.

``local_response_norm`` is a composite of Tensor ops: each element is divided by
``(k + alpha * mean of the squares in a window of `size` channels) ** beta``, the window
summed in PyTorch's order (zero-padded, then divided by ``size``).

``CrossMapLRN2d`` is its own op (``CrossMapLRN2dBackward``) because PyTorch computes it with its
own running-sum forward and its own backward formula (not the exact derivative of that forward
when the window is cut at the channel edges); both are reproduced so that values and gradients
match PyTorch's.
"""
from ..._dispatch import apply
from ...autograd.node import Node
from ...ops._common import xp_of
from ...ops._reducing import const
from ...ops.creation import zeros
from ...ops.shape import cat, stack
from .module import Module

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "local_response_norm"]


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``input / (k + alpha / size * sum of input^2 over `size` neighbouring channels) ** beta``.

    Shape: ``(N, C, *)`` with at least 3 dims; the window of channel ``c`` is
    ``[c - size // 2, c + (size - 1) // 2]`` (cut at the edges, still divided by ``size``)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    squares = input.mul(input)
    n, c = input.shape[0], input.shape[1]
    rest = tuple(input.shape[2:])
    before, after = size // 2, (size - 1) // 2
    parts = [squares]
    if before:
        parts.insert(0, zeros((n, before) + rest, dtype=input.dtype, device=input.device))
    if after:
        parts.append(zeros((n, after) + rest, dtype=input.dtype, device=input.device))
    padded = cat(parts, 1) if len(parts) > 1 else squares
    total = padded.narrow(1, 0, c)
    for j in range(1, size):
        total = total + padded.narrow(1, j, c)
    div = (total / size).mul(alpha).add(k).pow(beta)
    return input / div


class LocalResponseNorm(Module):
    """``F.local_response_norm`` as a module. Shape: ``(N, C, *)``, output the same."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2dBackward(Node):
    """PyTorch's legacy cross-channel LRN of a 4-D input: ``input * scale ** -beta`` with
    ``scale = k + alpha / size * (running sum of squares over channels)``."""

    def forward(ctx, input, size, alpha, beta, k):
        xp = xp_of(input)
        x = input._data
        channels = x.shape[1]
        squares = x * x
        scale = xp.empty_like(x)
        pre_pad = int((size - 1) / 2 + 1)
        first = xp.zeros_like(x[:, 0])
        for c in range(min(pre_pad, channels)):
            first = first + squares[:, c]
        scale[:, 0] = first
        for c in range(1, channels):
            current = scale[:, c - 1]
            if c < channels - pre_pad + 1:
                current = current + squares[:, c + pre_pad - 1]
            if c > pre_pad:
                current = current - squares[:, c - pre_pad]
            scale[:, c] = current
        scale = scale * (alpha / size) + k
        out = scale ** -beta * x
        ctx.scale = scale
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        ctx.save_for_backward(input)
        ctx.out = out
        return out

    def backward(ctx, grad):
        (input,) = ctx.saved_values
        size = ctx.size
        scale = const(ctx.scale, grad)
        out = const(ctx.out, grad)
        channels = input.shape[1]
        ratio_value = 2 * ctx.alpha * ctx.beta / size
        lead = int(size - (size - 1) / 2)
        grad_input = scale.pow(-ctx.beta).mul(grad)
        ratio = grad.mul(out).div(scale)
        n, _, h, w = input.shape
        pad_front = zeros((n, lead, h, w), dtype=grad.dtype, device=grad.device)
        pad_back = zeros((n, size - 1 - lead, h, w), dtype=grad.dtype, device=grad.device)
        padded = cat([pad_front, ratio, pad_back], 1)
        accum = padded.narrow(1, 0, size - 1).sum(1)
        columns = []
        for c in range(channels):
            accum = accum + padded[:, c + size - 1]
            columns.append(grad_input[:, c] + (-ratio_value) * input[:, c] * accum)
            accum = accum - padded[:, c]
        return stack(columns, 1)


class CrossMapLRN2d(Module):
    """PyTorch's legacy cross-channel local response normalisation of ``(N, C, H, W)`` inputs."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        return apply(CrossMapLRN2dBackward, input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
