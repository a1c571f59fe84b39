"""In-place ops on views while a graph is recorded (PyTorch's CopySlices): ``inplace_on_view``
runs the op on the view's memory and rewrites the history of the view and of its base.
"""
import numpy as np

from ..._dispatch import apply, apply_inplace
from ..._tensor import Tensor, _grad_edge
from ...autograd.node import Node, next_sequence_nr
from .._common import xp_of
from ._common import _on_device
from .index_nodes import IndexPutBackward0, _indexed, _scatter_into_zeros
from .parsing import Index


class AsStridedBackward0(Node):
    """The history of a view as a function of its base: the base's elements at ``index``.

    Made by :func:`inplace_on_view` (never by a forward): for the view that an in-place op
    modified, and for that view's old value as the op's input."""

    def __init__(self, base_edge, base_shape, index):
        self.next_functions = (base_edge,)
        self.in_shape, self.index = base_shape, index
        self._sequence_nr = next_sequence_nr()

    def backward(ctx, grad):
        return _scatter_into_zeros(grad, ctx.in_shape, ctx.index, False)


class CopySlices(Node):
    """The base's new grad_fn after an in-place op ``fn`` on one of its views.

    The gradient of the viewed region goes back through ``fn`` (to the view's old value, which
    lies in the base's old value, and to ``fn``'s other inputs); the rest passes unchanged."""

    def __init__(self, fn, base_edge, index):
        self.fn, self.index = fn, index
        self.next_functions = (base_edge,) + tuple(fn.next_functions[1:])
        self._sequence_nr = next_sequence_nr()

    def backward(ctx, grad):
        index = ctx.index
        grads = ctx.fn.apply((_indexed(grad, index),))
        base_grad = None
        if ctx.needs_input_grad[0]:
            region = grads[0] if grads and grads[0] is not None else 0
            base_grad = apply(IndexPutBackward0, grad, region, index=index)
        return (base_grad,) + tuple(grads[1:])

    def _release_saved(self):
        self.fn._release_saved()


_MULTI_OUTPUT_VIEWS = ("SplitBackward0", "SplitWithSizesBackward0", "UnbindBackward0")


def inplace_on_view(cls, view, args, params):
    """``apply_inplace`` for a view of another tensor while a graph is recorded (PyTorch's CopySlices):
    the op runs on the view's memory, the base gets a :class:`CopySlices` grad_fn and the view
    becomes a view of the base's new value."""
    base = view._base
    fn_name = type(view._grad_fn).__name__
    if fn_name in _MULTI_OUTPUT_VIEWS:
        raise RuntimeError(
            f"Output {view._output_nr} of {fn_name[:-len('Backward0')]} is a view and is being modified inplace. "
            "This view is the "
            "output of a function that returns multiple views. Such functions do not allow the output views to "
            "be modified inplace. You should replace the inplace operation by an out-of-place one.")
    if view._dtype is not base._dtype:
        raise RuntimeError("in-place operation with autograd on a view with another dtype than its base "
                           "(view(dtype)) is not supported by gputorch")
    with _on_device(base):
        index = _position_in_base(xp_of(base), view._data, base._data)
    base_edge = _grad_edge(base)
    alias = view._detached_alias()
    alias._base = None
    if base._requires_grad:
        alias._grad_fn = AsStridedBackward0(base_edge, base._data.shape, index)
        alias._requires_grad = True
    before = alias._grad_fn
    apply_inplace(cls, alias, *args, **params)
    fn = alias._grad_fn
    if fn is None or fn is before:   # nothing recorded (a non-float result)
        return view
    base._grad_fn = CopySlices(fn, base_edge, index)
    base._output_nr = 0
    base._requires_grad = True
    view._grad_fn = AsStridedBackward0((base._grad_fn, 0), base._data.shape, index)
    view._output_nr = 0
    view._requires_grad = True
    return view


def _position_in_base(xp, v, b):
    """The advanced index (one array per base dim) of each element of view array ``v`` in base ``b``.

    Works from memory offsets, so ``b`` must be dense (a permutation of a contiguous layout)."""
    item = b.itemsize
    dims = [d for d in range(b.ndim) if b.shape[d] != 1]
    dims.sort(key=lambda d: -b.strides[d])
    expected = item
    for d in reversed(dims):
        if b.strides[d] != expected:
            raise RuntimeError("in-place operation on a view of a tensor that requires grad is not supported by "
                               "gputorch when the base tensor is not dense; use the out-of-place op or write to "
                               "the base tensor")
        expected *= b.shape[d]
    offsets = xp.asarray((Tensor._array_address(v) - Tensor._array_address(b)) // item, dtype=np.int64)
    for d in range(v.ndim):
        shape = [1] * v.ndim
        shape[d] = v.shape[d]
        offsets = offsets + xp.arange(v.shape[d], dtype=np.int64).reshape(shape) * (v.strides[d] // item)
    index = [None] * b.ndim
    for d in dims:
        step = b.strides[d] // item
        index[d] = offsets // step
        offsets = offsets % step
    for d in range(b.ndim):
        if index[d] is None:
            index[d] = xp.zeros(v.shape, dtype=np.int64)
    return Index(tuple(index))
