"""Reductions: sum, mean (more to come in this module)."""
from .. import _dtype
from .._dispatch import apply
from ..autograd.node import Node
from ._common import xp_of
from .registry import tensor_method

__all__ = ["sum", "mean"]


def normalize_dims(t, dim):
    """``dim`` (None, int or sequence) as a sorted tuple of non-negative axes, or None for all."""
    if dim is None:
        return None
    if isinstance(dim, int):
        return (t._wrap_dim(dim),)
    dims = tuple(sorted({t._wrap_dim(d) for d in dim}))
    if len(dims) != len(tuple(dim)):
        raise RuntimeError(f"dim {tuple(dim)} appears multiple times in the list of dims")
    return dims or None


def expand_reduced(grad, shape, dims, keepdim):
    """Broadcast a reduced gradient back to ``shape`` (reinserting reduced dims if dropped)."""
    if dims is not None and not keepdim:
        new_shape = list(grad.shape)
        for d in dims:
            new_shape.insert(d, 1)
        grad = grad.reshape(new_shape)
    return grad.expand(shape)


class SumBackward0(Node):
    def forward(ctx, a, dims, keepdim, dtype):
        ctx.shape = a._data.shape
        ctx.dims, ctx.keepdim = dims, keepdim
        x = a._data
        if dtype is not None:
            x = x.astype(dtype.np)
        elif a._dtype._category < 2:
            x = x.astype("int64")
        return x.sum(axis=dims, keepdims=keepdim)

    def backward(ctx, grad):
        return expand_reduced(grad, ctx.shape, ctx.dims, ctx.keepdim)


class MeanBackward0(Node):
    def forward(ctx, a, dims, keepdim, dtype):
        if dtype is None and a._dtype._category < 2:
            raise RuntimeError(
                f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
                f"complex dtype. Got: {a._dtype.name.capitalize()}")
        ctx.shape = a._data.shape
        ctx.dims, ctx.keepdim = dims, keepdim
        x = a._data if dtype is None else a._data.astype(dtype.np)
        n = x.size if dims is None else _prod(x.shape[d] for d in dims)
        ctx.count = n
        return xp_of(a).mean(x, axis=dims, keepdims=keepdim) if n else \
            xp_of(a).full([s for i, s in enumerate(x.shape) if keepdim or (dims is not None and i not in dims)],
                          float("nan"), x.dtype)

    def backward(ctx, grad):
        return expand_reduced(grad, ctx.shape, ctx.dims, ctx.keepdim) / ctx.count


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


@tensor_method("sum")
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (all dims by default). Integer and bool inputs sum to int64."""
    dims = normalize_dims(input, dim)
    return apply(SumBackward0, input, dims, keepdim, _dtype.to_dtype(dtype) if dtype else None)


@tensor_method("mean")
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean over ``dim`` (all dims by default); needs a floating dtype."""
    dims = normalize_dims(input, dim)
    return apply(MeanBackward0, input, dims, keepdim, _dtype.to_dtype(dtype) if dtype else None)
