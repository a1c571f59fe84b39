"""Extrema: max, min (whole tensor or along a dim with indices), amax, amin, argmax, argmin.

Gradients: a reduction over a dim with indices sends the gradient to the chosen index;
whole-tensor max/min and amax/amin split it evenly between tied extremes, as PyTorch does.
NaN propagates: it is the extreme of any slice that holds one.
"""
from .. import return_types
from .._dispatch import apply
from .._tensor import Tensor
from ..autograd.node import Node
from ._common import quiet_errors, xp_of
from ._reducing import check_nonempty_dims, const, keep_reduced, normalize_dims, wrap_dim, write_results
from .registry import tensor_method

__all__ = ["max", "min", "amax", "amin", "aminmax", "argmax", "argmin"]


def _tie_share(x, out, dims, nan_ties):
    """Per element: 1/(number of ties) where ``x`` equals its slice's extreme ``out`` (kept dims).
    With ``nan_ties`` a NaN extreme is shared by the NaN entries (whole-tensor max/min/median);
    otherwise a NaN slice gets NaN gradients, as in PyTorch's amax/amin."""
    xd, od = x._data, out._data
    hit = xd == od
    if nan_ties:
        hit |= (xd != xd) & (od != od)
    with quiet_errors():
        share = hit / hit.sum(axis=dims, keepdims=True)
    return const(share.astype(xd.dtype), x)


def evenly_backward(ctx, grad):
    """Backward of a whole/amax-style extreme: ties share the gradient evenly."""
    (a,) = ctx.saved_values
    shape = a._data.shape
    out = keep_reduced(ctx.saved_result, shape, ctx.dims, ctx.keepdim)
    g = keep_reduced(grad, shape, ctx.dims, ctx.keepdim)
    return g * _tie_share(a, out, ctx.dims, ctx.nan_ties)


class MaxBackward1(Node):
    """max() of all elements."""

    saves_result = True
    dims, keepdim, nan_ties = None, False, True

    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a._data.max()

    backward = evenly_backward


class MinBackward1(Node):
    """min() of all elements."""

    saves_result = True
    dims, keepdim, nan_ties = None, False, True

    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a._data.min()

    backward = evenly_backward


class AmaxBackward0(Node):
    saves_result = True
    nan_ties = False

    def forward(ctx, a, dims, keepdim):
        ctx.save_for_backward(a)
        ctx.dims, ctx.keepdim = dims, keepdim
        return a._data.max(axis=dims, keepdims=keepdim)

    backward = evenly_backward


class AminBackward0(Node):
    saves_result = True
    nan_ties = False

    def forward(ctx, a, dims, keepdim):
        ctx.save_for_backward(a)
        ctx.dims, ctx.keepdim = dims, keepdim
        return a._data.min(axis=dims, keepdims=keepdim)

    backward = evenly_backward


def select_along(ctx, a, idx, dim, keepdim):
    """``(values, indices)`` arrays for per-slice positions ``idx`` (kept dim) along ``dim``;
    records what :func:`select_backward` needs."""
    xp = xp_of(a)
    x = a._data
    ctx.shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim
    if x.ndim == 0:
        ctx.index = None
        return x.copy(), xp.zeros((), dtype=xp.int64)
    idx = idx.astype(xp.int64, copy=False)
    ctx.index = idx
    values = xp.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        values, idx = values.squeeze(dim), idx.squeeze(dim)
    return values, idx


def select_backward(ctx, grad):
    """Gradient of a per-slice selection: ``grad`` goes to the selected position only."""
    if ctx.index is None:
        return grad
    shape, dim = ctx.shape, ctx.dim
    xp = xp_of(grad)
    n = shape[dim]
    pos = xp.arange(n).reshape((n,) + (1,) * (len(shape) - dim - 1))
    g = keep_reduced(grad, shape, (dim,), ctx.keepdim)
    return g * const(pos == ctx.index, grad)


class MaxBackward0(Node):
    """max(dim): values and indices."""

    def forward(ctx, a, dim, keepdim):
        idx = a._data.argmax(axis=dim, keepdims=True) if a._data.ndim else None
        return select_along(ctx, a, idx, dim, keepdim)

    def backward(ctx, grad, grad_indices):
        return select_backward(ctx, grad)


class MinBackward0(Node):
    """min(dim): values and indices."""

    def forward(ctx, a, dim, keepdim):
        idx = a._data.argmin(axis=dim, keepdims=True) if a._data.ndim else None
        return select_along(ctx, a, idx, dim, keepdim)

    def backward(ctx, grad, grad_indices):
        return select_backward(ctx, grad)


def _extreme(name, whole, along, binary, input, dim, keepdim, other):
    if isinstance(dim, Tensor) or other is not None:
        from . import pointwise
        return getattr(pointwise, binary)(input, dim if other is None else other)
    if dim is None:
        if input._data.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        return apply(whole, input)
    d = wrap_dim(input, dim)
    if input._data.ndim:
        check_nonempty_dims(name, input, (d,))
    values, indices = apply(along, input, d, keepdim)
    return (return_types.max if name == "max" else return_types.min)(values, indices)


@tensor_method("max")
def max(input, dim=None, keepdim=False, *, other=None, out=None):
    """``max(input)``: the largest element; ``max(input, dim)``: ``(values, indices)`` along ``dim``;
    ``max(input, other)``: the elementwise ``maximum``."""
    result = _extreme("max", MaxBackward1, MaxBackward0, "maximum", input, dim, keepdim, other)
    return result if out is None else write_results(result, out)


@tensor_method("min")
def min(input, dim=None, keepdim=False, *, other=None, out=None):
    """``min(input)``, ``min(input, dim)`` -> ``(values, indices)``, or elementwise ``minimum``."""
    result = _extreme("min", MinBackward1, MinBackward0, "minimum", input, dim, keepdim, other)
    return result if out is None else write_results(result, out)


def _check_amax(name, input, dims):
    if dims is None and input._data.size == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    if dims is not None:
        check_nonempty_dims(name, input, dims)


@tensor_method("amax")
def amax(input, dim=(), keepdim=False, *, out=None):
    """Largest value over ``dim`` (an int or sequence; () = all dims). Ties share the gradient."""
    dims = normalize_dims(input, dim)
    _check_amax("amax", input, dims)
    result = apply(AmaxBackward0, input, dims, keepdim)
    return result if out is None else write_results(result, out)


@tensor_method("amin")
def amin(input, dim=(), keepdim=False, *, out=None):
    """Smallest value over ``dim`` (an int or sequence; () = all dims). Ties share the gradient."""
    dims = normalize_dims(input, dim)
    _check_amax("amin", input, dims)
    result = apply(AminBackward0, input, dims, keepdim)
    return result if out is None else write_results(result, out)


@tensor_method("aminmax")
def aminmax(input, *, dim=None, keepdim=False, out=None):
    """``(min, max)`` over ``dim`` (an int; None: all elements, kept as size-1 dims with
    ``keepdim``), a named tuple; each part's gradient is amin's / amax's (ties share it)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"aminmax(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if dim is None:
        if input._data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                               "no identity.")
        dims = ()
    else:
        d = input._wrap_dim(dim)
        if input._data.ndim:
            check_nonempty_dims("aminmax", input, (d,))
        dims = d
    if dim is None and keepdim:
        low, high = amin(input), amax(input)
        shape = (1,) * input._data.ndim
        low, high = low.reshape(shape), high.reshape(shape)
    else:
        low, high = amin(input, dims, keepdim), amax(input, dims, keepdim)
    result = return_types.aminmax(low, high)
    return result if out is None else return_types.aminmax(*write_results(result, out))


class ArgExtreme(Node):
    """argmax/argmin (int64 output; not differentiable)."""

    def forward(ctx, a, dim, keepdim, largest):
        x = a._data
        if dim is None:
            r = x.argmax() if largest else x.argmin()
            r = xp_of(a).asarray(r, dtype="int64")
            return r.reshape((1,) * x.ndim) if keepdim else r
        r = x.argmax(axis=dim, keepdims=keepdim) if largest else x.argmin(axis=dim, keepdims=keepdim)
        return r.astype("int64", copy=False)


def _arg(name, input, dim, keepdim, largest):
    if input._dtype.name == "bool":
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        if input._data.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        return apply(ArgExtreme, input, None, keepdim, largest)
    d = wrap_dim(input, dim)
    if not input._data.ndim:
        return apply(ArgExtreme, input, None, keepdim, largest)
    check_nonempty_dims(name, input, (d,))
    return apply(ArgExtreme, input, d, keepdim, largest)


@tensor_method("argmax")
def argmax(input, dim=None, keepdim=False, *, out=None):
    """Index of the largest value (of the flattened tensor when ``dim`` is None)."""
    result = _arg("argmax", input, dim, keepdim, True)
    return result if out is None else write_results(result, out)


@tensor_method("argmin")
def argmin(input, dim=None, keepdim=False, *, out=None):
    """Index of the smallest value (of the flattened tensor when ``dim`` is None)."""
    result = _arg("argmin", input, dim, keepdim, False)
    return result if out is None else write_results(result, out)
