"""Broadcasting: expand, expand_as and broadcast_to (views with stride 0 along the new or size-1
dims; the gradient is summed back), broadcast_shapes and broadcast_tensors.
"""
import numbers

from ..._broadcast import broadcast_pair
from ..._dispatch import apply_view
from ...autograd.node import Node
from .._common import sum_to_shape, xp_of
from ..registry import tensor_method
from ._common import _int_args

__all__ = ["broadcast_to", "broadcast_tensors", "broadcast_shapes"]


class ExpandBackward0(Node):
    def forward(ctx, a, shape):
        ctx.in_shape = a._data.shape
        return xp_of(a).broadcast_to(a._data, shape)

    def backward(ctx, grad):
        return sum_to_shape(grad, ctx.in_shape)


@tensor_method("expand")
def expand(self, *sizes):
    """Broadcast to ``sizes`` without copying (-1 keeps a dimension)."""
    if not sizes:
        raise TypeError('expand() missing 1 required positional arguments: "size"')
    sizes = _int_args(sizes)
    ndim = self._data.ndim
    if len(sizes) < ndim:
        raise RuntimeError(
            f"expand(torch.{self._dtype.name}{{{list(self.shape)}}}, size={list(sizes)}): the number of sizes "
            f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in the tensor ({ndim})")
    lead = len(sizes) - ndim
    shape = []
    for i, s in enumerate(sizes):
        cur = self._data.shape[i - lead] if i >= lead else None
        if s == -1:
            if cur is None:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            s = cur
        elif s < 0:
            raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed")
        elif cur is not None and cur != 1 and cur != s:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: {list(self.shape)}")
        shape.append(s)
    return apply_view(ExpandBackward0, self, tuple(shape))


@tensor_method("expand_as")
def expand_as(self, other):
    return expand(self, other._data.shape)


def broadcast_to(input, size):
    return expand(input, size)


tensor_method("broadcast_to")(broadcast_to)


def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` broadcast to."""
    shapes = [(s,) if isinstance(s, numbers.Integral) else tuple(s) for s in shapes]
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, size in enumerate(s):
            j = ndim - len(s) + i
            if size < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {list(s)}")
            if out[j] == 1:
                out[j] = size
            elif size != 1 and size != out[j]:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape.  "
                                   f"Mismatch is between {list(shapes[0])} and {list(s)}.")
    from ..._size import Size
    return Size(out)


def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (those already of it are returned as is)."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    shape = ()
    for t in tensors:
        shape = broadcast_pair(shape, t._data.shape)
    return tuple(t if t._data.shape == shape else expand(t, shape) for t in tensors)
