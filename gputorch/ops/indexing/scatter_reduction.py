"""scatter_reduce / scatter_reduce_: reduce a source into the input at the positions an index
gives along a dim, with "sum", "prod", "mean", "amax" or "amin" (ties share the gradient).
"""
import numpy as np

from ... import _dtype
from ..._dispatch import apply, apply_inplace
from ..._tensor import Tensor
from ...autograd.node import Node
from .._common import quiet_errors, xp_of
from ..registry import tensor_method
from ._common import _cast_values, _check_nonnegative_bounds, _check_source_dtype, _grad_as, _on_device
from .gather_scatter import _SCATTER_DTYPE, _along_key, _gather_checks, _pad_to, _src_part
from .index_nodes import _indexed
from .parsing import Index

__all__ = ["scatter_reduce"]


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


class ScatterReduceBackward0(Node):
    def forward(ctx, a, src, dim, idx, reduce, include_self):
        xp = xp_of(a)
        x = a._data.copy()
        _check_nonnegative_bounds(idx, x.shape[dim], dim)
        index = Index(_along_key(xp, idx, dim))
        key = index.post
        part = _src_part(_cast_values(src, a._dtype), idx.shape)
        dt = x.dtype
        ctx.index, ctx.reduce, ctx.include_self = index, reduce, include_self
        ctx.src_meta, ctx.ishape = (src._data.shape, src._dtype), idx.shape
        ctx.save_for_backward(a, src)
        hit = xp.zeros(x.shape, bool)
        hit[key] = True
        ctx.hit = Tensor._make(hit, a._device, _dtype.bool)
        if not include_self:
            x[key] = _identity(xp, reduce, dt)
        with quiet_errors():
            if reduce in ("sum", "mean"):
                xp.add.at(x, key, part)
            elif reduce == "prod":
                xp.multiply.at(x, key, part)
            elif reduce == "amax":
                xp.maximum.at(x, key, part)
            else:
                xp.minimum.at(x, key, part)
            if reduce == "mean":
                count = xp.full(x.shape, 1 if include_self else 0, dt)
                xp.add.at(count, key, 1)
                count = xp.maximum(count, 1)
                ctx.count = Tensor._make(count, a._device, a._dtype)
                x = x / count if dt.kind == "f" else x // count
        return x

    saves_result = True

    def backward(ctx, grad):
        a, src = ctx.saved_values
        result = ctx.saved_result
        index, reduce = ctx.index, ctx.reduce
        need = ctx.needs_input_grad
        shape, dt = ctx.src_meta
        ga = gs = None
        src_part = src if tuple(shape) == tuple(ctx.ishape) else _indexed(src, Index(tuple(
            slice(0, s) for s in ctx.ishape)))
        if reduce == "sum":
            ga = grad
            gs = _indexed(grad, index)
        elif reduce == "mean":
            ga = grad / ctx.count
            gs = _indexed(ga, index)
        elif reduce == "prod":
            ga = grad * result / a
            gs = _indexed(grad * result, index) / src_part
        else:
            self_tie, src_tie, ties = _ties(a, src_part, result, index, ctx.include_self, grad._dtype)
            share = grad / ties
            ga = share * self_tie
            gs = _indexed(share, index) * src_tie
        if not ctx.include_self and ga is not None:
            ga = ga.masked_fill(ctx.hit, 0)
        if gs is not None:
            gs = _grad_as(_pad_to(gs, shape, ctx.ishape), dt)
        return (ga if need[0] else None), (gs if need[1] else None)


def _ties(a, src_part, result, index, include_self, dt):
    """For amax/amin: which self and src elements equal the result, and how many tie per position
    (at least 1), as constant tensors of dtype ``dt``."""
    xp = xp_of(a)
    with _on_device(a):
        r = result._data
        self_tie = (a._data == r).astype(dt.np)
        src_tie = (src_part._data == index.take(r)).astype(dt.np)
        ties = self_tie.copy() if include_self else xp.zeros(r.shape, dt.np)
        xp.add.at(ties, index.post, src_tie)
        ties[ties == 0] = 1
    dev = a._device
    return Tensor._make(self_tie, dev, dt), Tensor._make(src_tie, dev, dt), Tensor._make(ties, dev, dt)


def _identity(xp, reduce, dt):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dt.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    if dt.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dt)
    return info.min if reduce == "amax" else info.max


@tensor_method("scatter_reduce")
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Reduce ``src`` into ``input`` at the positions ``index`` gives along ``dim``; ``reduce`` is one of
    "sum", "prod", "mean", "amax", "amin" (``include_self``: whether ``input``'s values take part)."""
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d, arr = _gather_checks(input, dim, index, "scatter_reduce", src)
    _check_source_dtype(input, src, _SCATTER_DTYPE)
    return apply(ScatterReduceBackward0, input, src, d, arr, reduce, include_self)


@tensor_method("scatter_reduce_")
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d, arr = _gather_checks(self, dim, index, "scatter_reduce_", src)
    _check_source_dtype(self, src, _SCATTER_DTYPE)
    return apply_inplace(ScatterReduceBackward0, self, src, d, arr, reduce, include_self)
