"""Vision helpers: ``F.pad`` (constant, reflect, replicate, circular), ``F.one_hot`` and
``F.normalize`` (``F.interpolate`` follows below them).

Padding is one op per mode. Constant padding writes the input into a filled tensor (negative
pads crop); its gradient is the same op with the pads negated. Reflect, replicate and circular
padding gather the input along each padded dim with an index vector; their gradient adds the
output gradient back along the same vectors (``PadBackwardBackward0``), whose own gradient is
the gather again.
"""
import numpy as np

from ... import _dtype
from ..._dispatch import apply
from ..._tensor import Tensor
from ...autograd.node import Node
from ...ops._common import xp_of

__all__ = ["pad", "one_hot", "normalize"]


# ================================================================ pad
class ConstantPadNdBackward0(Node):
    """``input`` placed inside a tensor filled with ``value``; ``pad`` lists (left, right) per dim
    from the last one, negative entries crop."""

    def forward(ctx, a, pad, value):
        x = a._data
        shape = list(x.shape)
        dst, src = [slice(None)] * x.ndim, [slice(None)] * x.ndim
        for i in range(len(pad) // 2):
            d = x.ndim - 1 - i
            left, right = pad[2 * i], pad[2 * i + 1]
            n = shape[d]
            size = n + left + right
            if size < 0:
                raise RuntimeError(f"The input size {n}, plus negative padding {left} and {right} resulted in a "
                                   f"negative output size, which is invalid. Check dimension {d} of your input.")
            start, stop = max(-left, 0), n - max(-right, 0)
            src[d] = slice(start, max(stop, start))
            dst[d] = slice(max(left, 0), max(left, 0) + max(stop - start, 0))
            shape[d] = size
        ctx.pad = pad
        out = xp_of(a).full(shape, value, dtype=x.dtype)
        out[tuple(dst)] = x[tuple(src)]
        return out

    def backward(ctx, grad):
        return apply(ConstantPadNdBackward0, grad, tuple(-p for p in ctx.pad), 0)


class _IndexPad(Node):
    """Gather ``input`` along each padded axis: ``plan`` holds ``(axis, size, kind, left, right)``."""

    def forward(ctx, a, plan):
        xp = xp_of(a)
        ctx.plan = plan
        out = a._data
        for axis, n, kind, left, right in plan:
            out = xp.take(out, _pad_index(xp, kind, n, left, right), axis=axis)
        return out

    def backward(ctx, grad):
        return apply(PadBackwardBackward0, grad, ctx.plan, type(ctx))


class ReflectionPad1DBackward0(_IndexPad):
    pass


class ReflectionPad2DBackward0(_IndexPad):
    pass


class ReflectionPad3DBackward0(_IndexPad):
    pass


class ReplicationPad1DBackward0(_IndexPad):
    pass


class ReplicationPad2DBackward0(_IndexPad):
    pass


class ReplicationPad3DBackward0(_IndexPad):
    pass


class CircularPadBackward0(_IndexPad):
    pass


class PadBackwardBackward0(Node):
    """The gradient of an index pad: ``grad`` added back along each axis's index vector."""

    def forward(ctx, g, plan, pad_cls):
        xp = xp_of(g)
        ctx.plan, ctx.pad_cls = plan, pad_cls
        out = g._data
        for axis, n, kind, left, right in reversed(plan):
            idx = _pad_index(xp, kind, n, left, right)
            moved = xp.moveaxis(out, axis, 0)
            acc = xp.zeros((n,) + moved.shape[1:], dtype=out.dtype)
            xp.add.at(acc, idx, moved)
            out = xp.moveaxis(acc, 0, axis)
        return out

    def backward(ctx, grad):
        return apply(ctx.pad_cls, grad, ctx.plan), None


def _pad_index(xp, kind, n, left, right):
    """The source position of each output position along one padded axis."""
    if kind == "circular":
        # as PyTorch: negative pads crop first, then the kept part wraps around
        start = max(-left, 0)
        kept = n - start - max(-right, 0)
        return xp.mod(xp.arange(-max(left, 0), kept + max(right, 0)), kept) + start
    pos = xp.arange(-left, n + right)
    if kind == "replicate":
        return xp.clip(pos, 0, n - 1)
    if n == 1:
        return xp.zeros_like(pos)
    period = 2 * (n - 1)
    pos = xp.mod(pos, period)
    return xp.where(pos >= n, period - pos, pos)


_PAD_NODES = {
    ("reflect", 1): ReflectionPad1DBackward0, ("reflect", 2): ReflectionPad2DBackward0,
    ("reflect", 3): ReflectionPad3DBackward0, ("replicate", 1): ReplicationPad1DBackward0,
    ("replicate", 2): ReplicationPad2DBackward0, ("replicate", 3): ReplicationPad3DBackward0,
}

_NON_CONSTANT_HELP = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _pad_plan(input, pad, mode):
    """``(axis, size, kind, left, right)`` per padded axis, after PyTorch's checks for ``mode``."""
    shape = input._data.shape
    ndim = len(shape)
    k = len(pad) // 2
    if k not in (1, 2, 3) or ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n"
                                  + _NON_CONSTANT_HELP)
    if mode in ("reflect", "replicate"):
        first = 1 if ndim == k + 2 else 0
        if any(s == 0 for s in shape[first:]):
            raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
                               f"other non-zero dimensions for input, but got: {list(shape)}")
    plan = []
    for i in range(k):
        axis = ndim - 1 - i
        n, left, right = shape[axis], pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and (left >= n or right >= n):
            raise RuntimeError(f"Argument #{2 + len(pad)}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({left}, {right}) at dimension {axis} of input "
                               f"{list(shape)}")
        if mode == "circular":
            if left > n or right > n:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            if n - max(-left, 0) - max(-right, 0) <= 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
        size = n + left + right
        if size < 0:
            new_shape = list(shape)
            new_shape[axis] = size
            raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {new_shape}")
        plan.append((axis, n, mode, left, right))
    return tuple(plan)


def _check_pad_arg(pad):
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not {type(pad).__name__}")
    for i, p in enumerate(pad):
        if isinstance(p, Tensor) and p._data.ndim == 0 and p._dtype._category < 2:
            continue
        if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"{type(p).__name__} at pos {i}")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    return pad


def pad(input, pad, mode="constant", value=None):
    """Pad ``input``: ``pad = (left_last, right_last, left_2nd_last, right_2nd_last, ...)``, from the
    last dim backwards.

    ``mode``: ``"constant"`` (fill with ``value``, default 0; negative pads crop any dims),
    ``"reflect"`` (mirror without repeating the edge), ``"replicate"`` (repeat the edge) or
    ``"circular"`` (wrap around); these three pad the last 1, 2 or 3 dims of a batched or
    unbatched input.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pad(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    pad = _check_pad_arg(pad)
    ndim = input._data.ndim
    if len(pad) // 2 > ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {ndim}")
    if mode == "constant":
        return apply(ConstantPadNdBackward0, input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    plan = _pad_plan(input, pad, mode)
    cls = CircularPadBackward0 if mode == "circular" else _PAD_NODES[(mode, len(pad) // 2)]
    return apply(cls, input, plan)


# ================================================================ one_hot
class OneHot(Node):
    """Not differentiable: integer output."""

    def forward(ctx, a, num_classes):
        xp = xp_of(a)
        x = a._data
        return (x[..., None] == xp.arange(num_classes)).astype(np.int64)


def one_hot(tensor, num_classes=-1):
    """``(*, num_classes)`` int64 tensor with a 1 at each index of the int64 ``tensor``
    (``num_classes=-1``: one more than the largest index)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"one_hot(): argument 'input' (position 1) must be Tensor, not {type(tensor).__name__}")
    if tensor._dtype is not _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    x = tensor._data
    if x.size == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        lo, hi = int(x.min()), int(x.max())
        if lo < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = hi + 1
        elif hi >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    if num_classes < 0:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return apply(OneHot, tensor, int(num_classes))


# ================================================================ normalize
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` with the norm taken along ``dim``."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    from ...ops.arithmetic import div
    return div(input, denom, out=out)
