"""Sorting and order statistics: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode.

Sorts are stable (ties keep their input order, also when descending) and NaN counts as
the largest value. Gradients go back to the positions the values came from: a scatter
for sort/topk, a one-hot selection for the per-slice statistics.
"""
from .. import return_types
from .._dispatch import apply
from ..autograd.node import Node
from ._common import xp_of
from ._reducing import check_nonempty_dims, const, wrap_dim, write_results
from .extrema import evenly_backward, select_along, select_backward
from .registry import tensor_method

__all__ = ["sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode"]


def sort_indices(xp, x, axis, descending):
    """Stable argsort along ``axis``; descending keeps ties in input order and puts NaN first."""
    if not descending:
        return xp.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    rev = xp.argsort(xp.flip(x, axis), axis=axis, kind="stable")
    return (n - 1) - xp.flip(rev, axis)


def _leading(x, axis, k):
    """The first ``k`` entries of ``x`` along ``axis``."""
    return x[(slice(None),) * axis + (slice(0, k),)]


def _scatter_back(ctx, grad):
    """Gradient of a gather along ``ctx.dim`` at ``ctx.index``: ``grad`` scattered into zeros."""
    if ctx.index is None:
        return grad
    from .creation import zeros
    base = zeros(ctx.shape, dtype=grad._dtype, device=grad._device)
    return base.scatter(ctx.dim, const(ctx.index, grad), grad)


def _gather_sorted(ctx, a, dim, idx):
    xp = xp_of(a)
    ctx.shape, ctx.dim = a._data.shape, dim
    idx = idx.astype(xp.int64, copy=False)
    ctx.index = idx
    return xp.take_along_axis(a._data, idx, axis=dim), idx


class SortBackward0(Node):
    def forward(ctx, a, dim, descending):
        x = a._data
        if x.ndim == 0:
            ctx.index = None
            return x.copy(), xp_of(a).zeros((), dtype="int64")
        return _gather_sorted(ctx, a, dim, sort_indices(xp_of(a), x, dim, descending))

    def backward(ctx, grad, grad_indices):
        return _scatter_back(ctx, grad)


class SortBackward1(SortBackward0):
    """sort called with ``stable=`` (PyTorch records its other overload)."""


class TopkBackward0(Node):
    def forward(ctx, a, k, dim, largest):
        x = a._data
        if x.ndim == 0:
            ctx.index = None
            return x.copy(), xp_of(a).zeros((), dtype="int64")
        idx = _leading(sort_indices(xp_of(a), x, dim, largest), dim, k)
        return _gather_sorted(ctx, a, dim, idx)

    def backward(ctx, grad, grad_indices):
        return _scatter_back(ctx, grad)


class ArgsortBackward0(Node):
    """argsort (int64 output; not differentiable)."""

    def forward(ctx, a, dim, descending):
        x = a._data
        if x.ndim == 0:
            return xp_of(a).zeros((), dtype="int64")
        return sort_indices(xp_of(a), x, dim, descending).astype("int64", copy=False)


@tensor_method("sort")
def sort(input, dim=-1, descending=False, stable=None, *, out=None):
    """``(values, indices)`` sorted along ``dim`` (always stable)."""
    node = SortBackward0 if stable is None else SortBackward1
    values, indices = apply(node, input, wrap_dim(input, dim), bool(descending))
    result = return_types.sort(values, indices)
    return result if out is None else write_results(result, out)


@tensor_method("argsort")
def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim`` (stable)."""
    return apply(ArgsortBackward0, input, wrap_dim(input, dim), bool(descending))


@tensor_method("msort")
def msort(input, *, out=None):
    """``input`` sorted along dim 0."""
    result = sort(input, 0).values
    return result if out is None else write_results(result, out)


@tensor_method("topk")
def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """``(values, indices)`` of the ``k`` largest (or smallest) entries along ``dim``, in order."""
    d = wrap_dim(input, dim)
    size = input._data.shape[d] if input._data.ndim else 1
    if input._dtype.name == "bool":
        raise RuntimeError("topk does not support bool dtypes")
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    values, indices = apply(TopkBackward0, input, int(k), d, bool(largest))
    result = return_types.topk(values, indices)
    return result if out is None else write_results(result, out)


# ---------------------------------------------------------------------------- order statistics
class KthvalueBackward0(Node):
    def forward(ctx, a, k, dim, keepdim):
        x = a._data
        if x.ndim == 0:
            return select_along(ctx, a, None, dim, keepdim)
        xp = xp_of(a)
        idx = xp.take(xp.argpartition(x, k - 1, axis=dim), xp.asarray([k - 1]), axis=dim)
        return select_along(ctx, a, idx, dim, keepdim)

    def backward(ctx, grad, grad_indices):
        return select_backward(ctx, grad)


@tensor_method("kthvalue")
def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """``(values, indices)`` of the ``k``-th smallest entry (1-based) along ``dim``."""
    d = wrap_dim(input, dim)
    size = input._data.shape[d] if input._data.ndim else 1
    if input._data.ndim:
        check_nonempty_dims("kthvalue", input, (d,))
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    values, indices = apply(KthvalueBackward0, input, int(k), d, keepdim)
    result = return_types.kthvalue(values, indices)
    return result if out is None else write_results(result, out)


def _empty_median(a):
    xp = xp_of(a)
    x = a._data
    fill = float("nan") if a._dtype.is_floating_point else xp.iinfo(x.dtype).min
    return xp.full((), fill, dtype=x.dtype)


class MedianBackward0(Node):
    """median() of all elements: the lower median; NaN if any element is NaN."""

    saves_result = True
    dims, keepdim, nan_ties = None, False, True

    def forward(ctx, a):
        ctx.save_for_backward(a)
        x = a._data.reshape(-1)
        if x.size == 0:
            return _empty_median(a)
        if a._dtype.is_floating_point and (x != x).any():
            return xp_of(a).full((), float("nan"), dtype=x.dtype)
        k = (x.size - 1) // 2
        return xp_of(a).partition(x, k)[k]

    backward = evenly_backward


class NanmedianBackward0(Node):
    """nanmedian() of all elements: the lower median of the non-NaN ones."""

    saves_result = True
    dims, keepdim, nan_ties = None, False, True

    def forward(ctx, a):
        ctx.save_for_backward(a)
        x = a._data.reshape(-1)
        if a._dtype.is_floating_point:
            x = x[x == x]
        if x.size == 0:
            return _empty_median(a)
        k = (x.size - 1) // 2
        return xp_of(a).partition(x, k)[k]

    backward = evenly_backward


class MedianBackward1(Node):
    def forward(ctx, a, dim, keepdim):
        x = a._data
        if x.ndim == 0:
            return select_along(ctx, a, None, dim, keepdim)
        xp = xp_of(a)
        k = (x.shape[dim] - 1) // 2
        idx = xp.take(xp.argpartition(x, k, axis=dim), xp.asarray([k]), axis=dim)
        if a._dtype.is_floating_point:
            isnan = x != x
            has_nan = isnan.any(axis=dim, keepdims=True)
            idx = xp.where(has_nan, isnan.argmax(axis=dim, keepdims=True), idx)
        return select_along(ctx, a, idx, dim, keepdim)

    def backward(ctx, grad, grad_indices):
        return select_backward(ctx, grad)


class NanmedianBackward1(Node):
    def forward(ctx, a, dim, keepdim):
        x = a._data
        if x.ndim == 0:
            return select_along(ctx, a, None, dim, keepdim)
        xp = xp_of(a)
        order = xp.argsort(x, axis=dim, kind="stable")  # NaN last
        count = (x == x).sum(axis=dim, keepdims=True)
        k = xp.maximum((count - 1) // 2, 0)
        return select_along(ctx, a, xp.take_along_axis(order, k, axis=dim), dim, keepdim)

    def backward(ctx, grad, grad_indices):
        return select_backward(ctx, grad)


def _median(name, whole, along, result_type, input, dim, keepdim):
    if input._dtype.name == "bool":
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for 'Bool'")
    if dim is None:
        return apply(whole, input)
    d = wrap_dim(input, dim)
    if input._data.ndim:
        check_nonempty_dims(name, input, (d,))
    values, indices = apply(along, input, d, keepdim)
    return result_type(values, indices)


@tensor_method("median")
def median(input, dim=None, keepdim=False, *, out=None):
    """The lower median: of all elements (a value), or ``(values, indices)`` along ``dim``.
    NaN propagates."""
    result = _median("median", MedianBackward0, MedianBackward1, return_types.median, input, dim, keepdim)
    return result if out is None else write_results(result, out)


@tensor_method("nanmedian")
def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """Like :func:`median`, ignoring NaN (NaN only where a slice is all NaN)."""
    result = _median("nanmedian", NanmedianBackward0, NanmedianBackward1, return_types.nanmedian, input,
                     dim, keepdim)
    return result if out is None else write_results(result, out)


class ModeBackward0(Node):
    """The most frequent value along a dim (the smallest among equally frequent ones) and the
    index of its last occurrence."""

    def forward(ctx, a, dim, keepdim):
        x = a._data
        if x.ndim == 0:
            return select_along(ctx, a, None, dim, keepdim)
        xp = xp_of(a)
        moved = xp.moveaxis(x, dim, -1)
        lead, n = moved.shape[:-1], moved.shape[-1]
        rows = moved.reshape(-1, n)
        m = rows.shape[0]
        order = xp.argsort(rows, axis=1, kind="stable")
        s = xp.take_along_axis(rows, order, axis=1)
        starts = xp.ones((m, n), dtype=bool)
        starts[:, 1:] = s[:, 1:] != s[:, :-1]
        run = xp.cumsum(starts, axis=1) - 1  # which run of equal values each sorted entry is in
        counts = xp.bincount((run + xp.arange(m)[:, None] * n).reshape(-1), minlength=m * n)
        length = xp.take_along_axis(counts.reshape(m, n), run, axis=1)
        best = length.max(axis=1, keepdims=True)
        last = (length == best).argmax(axis=1)[:, None] + best - 1  # end of the first longest run
        idx = xp.take_along_axis(order, last, axis=1).reshape(lead + (1,))
        return select_along(ctx, a, xp.moveaxis(idx, -1, dim), dim, keepdim)

    def backward(ctx, grad, grad_indices):
        return select_backward(ctx, grad)


@tensor_method("mode")
def mode(input, dim=-1, keepdim=False, *, out=None):
    """``(values, indices)``: the most frequent value along ``dim`` (smallest on ties) and the
    index of its last occurrence."""
    d = wrap_dim(input, dim)
    if input._data.ndim:
        check_nonempty_dims("mode", input, (d,))
    values, indices = apply(ModeBackward0, input, d, keepdim)
    result = return_types.mode(values, indices)
    return result if out is None else write_results(result, out)
