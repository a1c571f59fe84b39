"""scatter_reduce / scatter_reduce_: reduce a source into the input at the positions an index
gives along a dim, with "sum", "prod", "mean", "amax" or "amin" (ties share the gradient); and
index_reduce / index_reduce_, the same with one index per slice of the source (a composite of it).
"""
import warnings

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

__all__ = ["scatter_reduce", "index_reduce"]


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
        ctx.dim, ctx.idx = dim, idx
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
                if dt.kind == "b":   # the mean divides (floor division for integers): none for bool
                    if idx.size:
                        raise NotImplementedError(f"\"scatter_gather_tensor_{a._device.type}_reduce_mean\" not "
                                                  "implemented for 'Bool'")
                    return x
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
            ga = grad * _product_of_sources(a, src, ctx.dim, ctx.idx)
            gs = _indexed(grad, index) * _product_of_others(a, src_part, _indexed(result, index), index,
                                                            ctx.include_self)
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


def _product_of_sources(a, src, dim, idx):
    """For prod, the derivative at each position with respect to ``a``: the product of the sources
    reduced into it (1 where none is), itself a scatter_reduce, so differentiable again."""
    from ..creation import ones_like
    index = Tensor._make(idx, a._device, _dtype.int64)
    return scatter_reduce(ones_like(a), dim, index, src, "prod")


def _product_of_others(a, src_part, result_at, index, include_self):
    """For prod, the derivative of each source's position with respect to it, the product of the
    other factors there: ``result / src`` where the position has no zero factor; where it has, the
    product of the nonzero others if the source is its only zero, else 0 (PyTorch's rule; a constant
    there, so a second derivative through a zero factor is not exact)."""
    xp = xp_of(a)
    with _on_device(a):
        x, s = a._data, src_part._data
        key = index.post
        zeros = (x == 0).astype("int64") if include_self else xp.zeros(x.shape, "int64")
        nonzero_product = xp.where(x == 0, 1, x) if include_self else xp.ones(x.shape, x.dtype)
        xp.add.at(zeros, key, (s == 0).astype("int64"))
        xp.multiply.at(nonzero_product, key, xp.where(s == 0, 1, s))
        z, p = index.take(zeros), index.take(nonzero_product)
        at_zero = xp.where((s == 0) & (z == 1), p, 0).astype(s.dtype)
        has_zero = Tensor._make(z > 0, a._device, _dtype.bool)
        src_is_zero = Tensor._make(s == 0, a._device, _dtype.bool)
    from ..comparison import where
    generic = result_at / src_part.masked_fill(src_is_zero, 1)
    return where(has_zero, Tensor._make(at_zero, a._device, src_part._dtype), generic)


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
        # No element equals a NaN result: PyTorch's share of the gradient is then 0/0 = NaN, for self and
        # source alike (as amax/amin's own backward gives NaN there); elsewhere an untouched count is 1.
        empty = ties == 0
        ties[empty] = 1
        if r.dtype.kind in "fc":
            ties[empty & (r != r)] = np.nan
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


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def _slice_index(name, input, dim, index, source, reduce):
    """``index`` (one entry per slice of ``source`` along ``dim``) spread to ``source``'s shape, as
    scatter_reduce takes it, after PyTorch's checks of index_reduce's arguments."""
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"{name}(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    for arg, t in (("index", index), ("source", source)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(t).__name__}")
    legacy = _dtype._LEGACY_NAMES
    if index._dtype not in (_dtype.int32, _dtype.int64):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {legacy[index._dtype]}")
    if index._data.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index._data.ndim} with "
                         f"type: {legacy[index._dtype]} and size: {list(index._data.shape)}")
    d = input._wrap_dim(dim)
    shape, src_shape = input._data.shape, source._data.shape
    n = index.numel()
    if src_shape and src_shape[d if d < len(src_shape) else -1] != n:
        raise RuntimeError(f"index_reduce_(): Number of indices ({n}) should be equal to source.size(dim): "
                           f"({src_shape[d if d < len(src_shape) else -1]}), for dim: {d}")
    if len(src_shape) != len(shape) or any(a != b for k, (a, b) in enumerate(zip(shape, src_shape)) if k != d):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(shape)} source.shape = {list(src_shape)}")
    if input._dtype is not source._dtype:
        raise RuntimeError(f"index_reduce_(): self ({legacy[input._dtype]}) and source ({legacy[source._dtype]}) "
                           f"must have the same scalar type")
    size = shape[d] if shape else 1
    if n and bool(((index._data < 0) | (index._data >= size)).any()):
        raise IndexError("index out of range in self")
    warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=3)
    if reduce == "mean" and input._dtype is _dtype.bool and n:
        raise NotImplementedError(f"\"div_floor_{input._device.type}\" not implemented for 'Bool'")
    if not shape:   # a 0-d input: its one element as a 1-d slice
        return d, index.to(_dtype.int64).reshape(1)
    spread = [1] * len(shape)
    spread[d] = n
    return d, index.to(_dtype.int64).reshape(spread).expand(src_shape)


@tensor_method("index_reduce")
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Reduce slice ``i`` of ``source`` along ``dim`` into slice ``index[i]`` of ``input`` with
    "prod", "mean", "amax" or "amin" (``include_self``: whether ``input``'s values take part)."""
    d, spread = _slice_index("index_reduce", input, dim, index, source, reduce)
    if not input._data.ndim:
        return scatter_reduce(input.reshape(1), 0, spread, source.reshape(1), reduce,
                              include_self=include_self).reshape(())
    return scatter_reduce(input, d, spread, source, reduce, include_self=include_self)


@tensor_method("index_reduce_")
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """In-place ``index_reduce``."""
    d, spread = _slice_index("index_reduce_", self, dim, index, source, reduce)
    if not self._data.ndim:
        scatter_reduce_(self.view(1), 0, spread, source.reshape(1), reduce, include_self=include_self)
        return self
    return scatter_reduce_(self, d, spread, source, reduce, include_self=include_self)
