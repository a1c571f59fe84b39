"""Dropout as one op whose mask is regenerated instead of stored (``NativeDropoutBackward0``).

Used by ``F.dropout`` where the input's backend has a fused dropout (its ``overrides`` hold
:func:`philox_dropout`: the CUDA backend's Philox kernel); elsewhere dropout stays the composite
``input * bernoulli(1 - p) / (1 - p)``, as in PyTorch (whose CPU dropout records a
``MulBackward0`` and whose CUDA dropout a ``NativeDropoutBackward0``).

The mask comes from the device generator's Philox stream: the forward notes the engine's
``(seed, offset)`` and moves the offset on by as many 128-bit blocks as ``bernoulli_(1 - p)``
would consume, so the numbers (float64 uniforms ``u``, element kept where ``u < 1 - p``) and the
generator state afterwards are those of the composite path. Backward multiplies the gradient by
the same mask, regenerated from ``(seed, offset)`` -- nothing input-sized is kept.
"""
from ..._dispatch import apply, apply_inplace
from ...autograd.node import Node
from ...backends.philox import PhiloxEngine
from ...ops._common import xp_of
from ...ops.philox_dropout import philox_dropout
from ...random import generator_for

__all__ = []


def blocks_used(n):
    """Philox blocks (128 bits each) that ``n`` float64 uniforms consume."""
    return (2 * int(n) + 3) // 4


def available(input):
    """Whether ``input``'s backend runs dropout as a fused (regenerated-mask) kernel."""
    return philox_dropout in input._device._backend.overrides


def _masked(t, p, seed, offset):
    fn = t._device._backend.overrides.get(philox_dropout, philox_dropout)
    return fn(xp_of(t), t._data, p, seed, offset)


class NativeDropoutBackward0(Node):
    """Dropout in training mode with a counter-based mask (see the module docstring)."""

    def forward(ctx, input, p, generator):
        engine = generator_for(input._device, generator).engine
        if not isinstance(engine, PhiloxEngine):
            raise RuntimeError(f"fused dropout needs a Philox generator, but {input._device} has "
                               f"{type(engine).__name__}")
        seed, offset = engine.seed, engine.offset
        engine.offset = (offset + blocks_used(input._data.size)) & 0xFFFFFFFFFFFFFFFF
        ctx.p, ctx.seed, ctx.offset = p, seed, offset
        return _masked(input, p, seed, offset)

    def backward(ctx, grad):
        return apply(NativeDropoutBackwardBackward0, grad, ctx.p, ctx.seed, ctx.offset)


class NativeDropoutBackwardBackward0(Node):
    """The gradient of :class:`NativeDropoutBackward0`: the same mask and scale applied to
    ``grad`` (a linear map, so it is its own gradient)."""

    def forward(ctx, grad, p, seed, offset):
        ctx.p, ctx.seed, ctx.offset = p, seed, offset
        return _masked(grad, p, seed, offset)

    def backward(ctx, gg):
        return apply(NativeDropoutBackwardBackward0, gg, ctx.p, ctx.seed, ctx.offset)


def dropout(input, p, inplace, generator=None):
    """Fused dropout of ``input`` (training mode, ``0 < p < 1``)."""
    if inplace:
        return apply_inplace(NativeDropoutBackward0, input, float(p), generator)
    return apply(NativeDropoutBackward0, input, float(p), generator)
