"""How views are recorded and differentiated.

A view's result shares the input's storage and version counter (made through ``apply_view``).
Views that only change the shape (view, reshape, squeeze) reshape the gradient back. Views
that pick a part of their input (slice, select, unsqueeze, diagonal, basic indexing) are given
by a view function (``Key``, ``_DiagonalOf``); their backward writes the gradient into zeros of
the input's shape (:class:`ViewScatterBackward0`), whose own backward is the same view again,
so double backward works.
"""
from ..._dispatch import apply, apply_view
from ...autograd.node import Node
from .._common import xp_of


class Key:
    """A basic NumPy index used as a view function: ``Key(k)(array)`` is ``array[k]``.

    ``reshape_only`` marks indexes made of ``None`` and full slices: their view only adds
    size-1 dims, so the gradient goes back with a reshape."""

    __slots__ = ("key", "reshape_only")

    def __init__(self, key, reshape_only=False):
        self.key = key
        self.reshape_only = reshape_only

    def __call__(self, array):
        return array[self.key]


class _DiagonalOf:
    """The view function of ``diagonal(offset, dim1, dim2)`` (a writable strided view)."""

    __slots__ = ("xp", "offset", "dim1", "dim2", "reshape_only")

    def __init__(self, xp, offset, dim1, dim2):
        self.xp, self.offset, self.dim1, self.dim2 = xp, offset, dim1, dim2
        self.reshape_only = False

    def __call__(self, array):
        out = self.xp.diagonal(array, self.offset, self.dim1, self.dim2)
        flags = out.flags
        if getattr(flags, "writeable", True) is False:   # NumPy hands out read-only diagonals
            try:
                flags.writeable = True
            except ValueError:   # the input itself is read-only (an expanded tensor)
                pass
        return out


class _ReshapeView(Node):
    """A view that only changes the shape; the gradient is reshaped back."""

    def forward(ctx, a, shape):
        ctx.in_shape = a._data.shape
        return a._data.reshape(shape)

    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape)


class ViewBackward0(_ReshapeView):
    pass


class UnsafeViewBackward0(_ReshapeView):
    """``reshape`` that had to copy (the input's strides do not allow a view)."""


class SqueezeBackward0(_ReshapeView):
    pass


class SqueezeBackward1(_ReshapeView):
    pass


class SqueezeBackward2(_ReshapeView):
    pass


class _SubView(Node):
    """A view given by a view function (``Key`` or ``_DiagonalOf``) of the input array."""

    def forward(ctx, a, where):
        ctx.in_shape = a._data.shape
        ctx.where = where
        return where(a._data)

    def backward(ctx, grad):
        if ctx.where.reshape_only:
            return grad.reshape(ctx.in_shape)
        return apply(ViewScatterBackward0, grad, ctx.in_shape, ctx.where, type(ctx))


class SliceBackward0(_SubView):
    pass


class SelectBackward0(_SubView):
    pass


class UnsqueezeBackward0(_SubView):
    pass


class AliasBackward0(_SubView):
    pass


class DiagonalBackward0(_SubView):
    pass


class ViewScatterBackward0(Node):
    """The backward of a sub-view as an op: ``grad`` written into zeros of the input's shape."""

    def forward(ctx, grad, shape, where, view_cls):
        ctx.where, ctx.view_cls = where, view_cls
        out = xp_of(grad).zeros(shape, grad._data.dtype)
        where(out)[...] = grad._data
        return out

    def backward(ctx, grad):
        return apply_view(ctx.view_cls, grad, ctx.where)


def sub_view(cls, t, key, reshape_only=False):
    """``t[key]`` for a basic NumPy index ``key`` (a tuple), as a view recorded as ``cls``."""
    if Ellipsis not in key:
        key = key + (Ellipsis,)   # keeps an all-integer index a 0-d view, not a scalar copy
    return apply_view(cls, t, Key(key, reshape_only))
