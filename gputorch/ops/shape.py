"""Shape ops that return views: view, reshape, expand (more to come in this module)."""
from .._dispatch import apply, apply_view
from ..autograd.node import Node
from .registry import tensor_method

__all__ = ["reshape"]


def infer_shape(shape, numel, op="view"):
    """Resolve one ``-1`` entry and check that ``shape`` holds ``numel`` elements."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    known = 1
    infer = None
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s}")
        else:
            known *= s
    if infer is not None:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[:infer] + (numel // known,) + shape[infer + 1:]
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


class ViewBackward0(Node):
    def forward(ctx, a, shape):
        ctx.in_shape = a._data.shape
        x = a._data
        out = x.reshape(shape)
        if out.size and out.base is not (x if x.base is None else x.base):
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one dimension "
                "spans across two contiguous subspaces). Use .reshape(...) instead.") from None
        return out

    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape)


class ReshapeAliasBackward0(Node):
    """reshape that had to copy (the input's strides do not allow a view)."""

    def forward(ctx, a, shape):
        ctx.in_shape = a._data.shape
        return a._data.reshape(shape)

    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape)


class ExpandBackward0(Node):
    def forward(ctx, a, shape):
        ctx.in_shape = a._data.shape
        return ctx_xp(a).broadcast_to(a._data, shape)

    def backward(ctx, grad):
        from ._common import sum_to_shape
        return sum_to_shape(grad, ctx.in_shape)


def ctx_xp(a):
    return a._device._backend.xp


@tensor_method("view")
def view(self, *shape):
    """A view with a new shape (one dim may be -1); the strides must allow it."""
    from .. import _dtype
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        raise NotImplementedError("view(dtype) is not supported by gputorch")
    shape = infer_shape(shape, self._data.size)
    return apply_view(ViewBackward0, self, shape)


@tensor_method("reshape")
def reshape(input, *shape):
    """Like ``view`` when the strides allow it, else a copy."""
    shape = infer_shape(shape, input._data.size)
    if input._data.shape == shape:
        return apply_view(ViewBackward0, input, shape)
    try:
        return apply_view(ViewBackward0, input, shape)
    except RuntimeError:
        return apply(ReshapeAliasBackward0, input, shape)


@tensor_method("expand")
def expand(self, *sizes):
    """Broadcast to ``sizes`` without copying (-1 keeps a dimension)."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    ndim = self._data.ndim
    if len(sizes) < ndim:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({ndim})")
    lead = len(sizes) - ndim
    shape = []
    for i, s in enumerate(sizes):
        cur = self._data.shape[i - lead] if i >= lead else None
        if s == -1:
            if cur is None:
                raise RuntimeError(f"expand: -1 is not allowed in a leading, non-existing dimension ({i})")
            s = cur
        elif cur is not None and cur != 1 and cur != s:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: {list(self.shape)}")
        shape.append(int(s))
    shape = tuple(shape)
    if shape == self._data.shape:
        return apply_view(ViewBackward0, self, shape)
    return apply_view(ExpandBackward0, self, shape)
