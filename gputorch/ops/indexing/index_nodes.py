"""The two nodes that advanced indexing comes down to: ``IndexBackward0`` reads ``input[index]``
(a copy) and ``IndexPutBackward0`` writes (or adds) values at an index. Each one's backward is
the other, so repeated indices add up and double backward works. Also ``_indexed`` (a view for
basic indexes) and ``_scatter_into_zeros``, which the other indexing ops build their backward on.
"""
from ..._dispatch import apply, apply_inplace, apply_view
from ..._tensor import Tensor
from ...autograd.node import Node
from .._common import sum_to_shape, xp_of
from ..shape import Key
from ._common import _cast_values, _grad_as, _on_device, _write


def _indexed(t, index):
    """``t`` indexed by a parsed ``index`` (a view for basic indexes)."""
    if index.advanced:
        return apply(IndexBackward0, t, index)
    return apply_view(index.view_cls, t, Key(index.post, index.reshape_only))


def _scatter_into_zeros(grad, shape, index, accumulate=True):
    """Zeros of ``shape`` with ``grad`` written (or added) at ``index``; differentiable in ``grad``."""
    with _on_device(grad):
        z = Tensor._make(xp_of(grad).zeros(shape, grad._data.dtype), grad._device, grad._dtype)
    return apply_inplace(IndexPutBackward0, z, grad, index=index, accumulate=accumulate, inplace=True)


def _reduce_to(g, shape):
    """``g`` summed down to ``shape``, which may have extra leading size-1 dims (values assigned by index)."""
    extra = len(shape) - g._data.ndim
    if extra > 0:
        g = g.reshape((1,) * extra + g._data.shape)
    return sum_to_shape(g, tuple(shape))


class IndexBackward0(Node):
    """``input[index]`` for an advanced index (a copy)."""

    def forward(ctx, a, index):
        ctx.in_shape, ctx.index = a._data.shape, index
        return index.take(a._data)

    def backward(ctx, grad):
        return _scatter_into_zeros(grad, ctx.in_shape, ctx.index)


class IndexPutBackward0(Node):
    """Write (or add, with ``accumulate``) ``values`` at ``index``; in place or into a copy."""

    def forward(ctx, a, values, index, accumulate=False, inplace=False):
        ctx.index, ctx.accumulate = index, accumulate
        ctx.values_meta = (values._data.shape, values._dtype) if isinstance(values, Tensor) else None
        x = a._data if inplace else a._data.copy()
        _write(xp_of(a), index.target(x), index.post, _cast_values(values, a._dtype), accumulate)
        return x

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        index = ctx.index
        out = [None]
        if need[0]:
            out[0] = grad if ctx.accumulate else apply(IndexPutBackward0, grad, 0, index=index)
        if ctx.values_meta is not None:
            shape, dt = ctx.values_meta
            out.append(_grad_as(_reduce_to(_indexed(grad, index), shape), dt) if need[1] else None)
        return tuple(out)
