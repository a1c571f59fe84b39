"""Counting and bucketing ops: bincount, bucketize, searchsorted, histc, histogram.

None is differentiable (histogram records a node without a derivative, as PyTorch). Searches are binary searches written on arrays (``_search``), so that
batched sorted sequences and NaN follow PyTorch's rule: a value goes right of every boundary it
does not compare ``<=`` (``<`` for ``right=True``) to, so NaN values land past the end.
"""
import numpy as np

from .. import _dtype, return_types
from .._dispatch import apply
from .._tensor import Tensor
from ..autograd.node import Node
from ._common import quiet_errors, xp_of
from ._reducing import dtype_word, write_results
from .registry import tensor_method
from .._type_info import finfo

__all__ = ["bincount", "bucketize", "searchsorted", "histc", "histogram", "histogramdd"]

_FLOAT32 = np.dtype(np.float32)


# ---------------------------------------------------------------------------- bincount
class BincountBackward(Node):
    """Counts (or summed weights) of each non-negative integer of a 1-d input."""

    def forward(ctx, a, weights, minlength):
        xp = xp_of(a)
        x = a._data
        size = max(int(x.max()) + 1 if x.size else 0, minlength)
        index = x.astype(xp.int64)
        if weights is None:
            return xp.bincount(index, minlength=size).astype(xp.int64)
        w = weights._data
        dt = w.dtype if w.dtype == _FLOAT32 else np.dtype(np.float64)
        out = xp.zeros((size,), dtype=dt)
        xp.add.at(out, index, w.astype(dt))
        return out

    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::bincount is not implemented")


@tensor_method("bincount")
def bincount(input, weights=None, minlength=0):
    """How often each value ``0..max(input)`` occurs in the 1-d non-negative integer ``input``
    (length at least ``minlength``); with ``weights`` (same length) their sums instead
    (float32 weights give float32, all others float64)."""
    if input._dtype._category != 1:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{dtype_word(input._dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    x = input._data
    if x.ndim != 1 or (x.size and int(x.min()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if x.size == 0:   # PyTorch ignores the weights then and counts in int64
        from .creation import zeros
        return zeros(int(minlength), dtype=_dtype.int64, device=input._device)
    if weights is not None and (weights._data.ndim != 1 or weights._data.shape[0] != x.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    return apply(BincountBackward, input, weights, int(minlength))


# ---------------------------------------------------------------------------- searches
def _search(xp, seq, values, right):
    """Insertion points of ``values`` (B, K) into the rows of ``seq`` (B, M), sorted ascending."""
    m = seq.shape[-1]
    lo = xp.zeros(values.shape, dtype=xp.int64)
    hi = xp.full(values.shape, m, dtype=xp.int64)
    if m == 0:
        return lo
    for _ in range(int(m).bit_length()):
        mid = (lo + hi) // 2
        active = lo < hi
        probe = xp.take_along_axis(seq, xp.minimum(mid, m - 1), axis=-1)
        goes_right = ~(values < probe) if right else ~(values <= probe)
        lo = xp.where(active & goes_right, mid + 1, lo)
        hi = xp.where(active & ~goes_right, mid, hi)
    return lo


class SearchsortedBackward(Node):
    """Insertion points of ``values`` into ``seq`` (1-d, or batched over its leading dims)."""

    def forward(ctx, seq, values, right, out_int32, sorter):
        xp = xp_of(seq)
        dt = _dtype.result_dtype((seq, values)).np
        s = seq._data.astype(dt, copy=False)
        v = values._data if isinstance(values, Tensor) else xp.asarray(values)
        v = v.astype(dt, copy=False)
        if sorter is not None:
            s = xp.take_along_axis(s, sorter._data, axis=-1)
        shape = v.shape
        if s.ndim == 1:
            rows = 1
        else:
            rows = 1
            for size in s.shape[:-1]:
                rows *= size
        found = _search(xp, s.reshape(rows, s.shape[-1]), v.reshape(rows, -1) if v.size else
                        v.reshape(rows, 0), right)
        return found.reshape(shape).astype(xp.int32 if out_int32 else xp.int64)


def _check_searchable(name, t):
    if t._dtype.name == "bool":
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None, out=None):
    """Indices where ``values`` would be inserted into ``sorted_sequence`` to keep it sorted:
    the first position ``i`` with ``values <= seq[i]`` (``<`` with ``right=True`` or
    ``side='right'``). ``sorted_sequence`` is 1-d, or (..., M) with ``values`` (..., K) sharing
    its leading dims; ``sorter`` gives the order that sorts an unsorted sequence. int64 results,
    or int32 with ``out_int32``."""
    seq = sorted_sequence
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of "
                               "left while right was True")
        right = side == "right"
    if not isinstance(seq, Tensor):
        kinds = ", ".join("Tensor" if isinstance(v, Tensor) else type(v).__name__ for v in (seq, values))
        raise TypeError(f"searchsorted() received an invalid combination of arguments - got ({kinds}), but "
                        "expected (Tensor sorted_sequence, Tensor input) or (Tensor sorted_sequence, Number self)")
    sshape = seq._data.shape
    if not sshape:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    vshape = values._data.shape if isinstance(values, Tensor) else ()
    if len(sshape) > 1:
        if not vshape:
            raise RuntimeError("torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                               f"dimension is 1, but we got boundaries tensor dim({len(sshape)}) and input "
                               "value's dim(0) numel(1)")
        if len(vshape) != len(sshape) or vshape[:-1] != sshape[:-1]:
            raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                               "dimensions of boundaries tensor and input value tensor must match, but we got "
                               f"boundaries tensor {list(sshape)} and input value tensor {list(vshape)}")
    if sorter is not None:
        if sorter._dtype.name != "int64":
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{dtype_word(sorter._dtype)}")
        if sorter._data.shape != sshape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got "
                               f"boundary tensor {list(sshape)}and got sorter tensor {list(sorter._data.shape)}")
    _check_searchable("searchsorted_out_cpu", seq)
    if isinstance(values, Tensor):
        _check_searchable("searchsorted_out_cpu", values)
    result = apply(SearchsortedBackward, seq, values, bool(right), bool(out_int32), sorter)
    return result if out is None else write_results(result, out)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each element of ``input`` among the 1-d ascending ``boundaries``:
    ``i`` with ``boundaries[i-1] < x <= boundaries[i]`` (``<=`` / ``<`` swapped with ``right``)."""
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


# ---------------------------------------------------------------------------- histograms
def _check_float(name, t, half=True):
    if t._dtype._category != 2 or (not half and t._dtype.name == "float16"):
        raise NotImplementedError(f"\"{name}\" not implemented for '{dtype_word(t._dtype)}'")


def _bin_range(lo, hi, dim):
    """The bin range ``[lo, hi]`` of dimension ``dim`` checked as PyTorch checks it (ordered and
    finite); an empty range is widened to ``[lo - 0.5, hi + 0.5]``."""
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_fmt(lo)} max "
                           f"{_fmt(hi)} for dimension {dim}")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension {dim}'s range [{_fmt(lo, 'nan')}, {_fmt(hi, 'nan')}] "
                           "is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def _data_range(x):
    """``(min, max)`` of the elements of ``x`` as Python floats ((0, 0) when empty)."""
    if x.size == 0:
        return 0.0, 0.0
    return float(x.min()), float(x.max())


def _bins_of(xp, x, e, mode):
    """The bin of each element of the 1-d ``x`` among the ascending ``edges`` (``None`` where
    it falls outside ``[e[0], e[-1]]`` or is NaN), PyTorch's three ways:

    * 'linear' (histc): ``int((x - e[0]) * nbins / (e[-1] - e[0]))`` in the input's dtype;
    * 'local' (histogram with a bin count): that estimate, corrected by a search among the
      edges next to it;
    * 'search' (histogram with given edges): a binary search among all edges.

    The last bin includes its right edge. Where the estimate is not finite (overflow, or a
    zero-width range), PyTorch's kernel ends up at bin 0 (histc of float32/64: at the middle
    bin for a zero-width range); so does this.
    """
    nedges = e.shape[0]
    nbins = nedges - 1
    lo, hi = e[0], e[-1]
    keep = (x >= lo) & (x <= hi)
    kept = x[keep]
    if mode == "search":
        pos = _search(xp, e.reshape(1, -1), kept.reshape(1, -1), True).reshape(-1) - 1
    else:
        with quiet_errors():
            estimate = (kept - lo) * x.dtype.type(nbins) / (hi - lo)
        finite = xp.isfinite(estimate)
        degenerate = mode == "linear" and bool(hi == lo) and x.dtype.itemsize > 2
        fallback = nbins // 2 if degenerate else 0
        pos = xp.where(finite, xp.where(finite, estimate, 0).astype(xp.int64), fallback)
        if mode == "local":
            first = xp.maximum(pos - 1, 0)
            stop = xp.minimum(pos + 2, nedges)
            below = xp.zeros(pos.shape, dtype=xp.int64)
            for k in range(3):
                j = first + k
                inside = j < stop
                below += (inside & (e[xp.minimum(j, nbins)] <= kept)).astype(xp.int64)
            pos = first + below - 1
    pos = xp.where(pos == nbins, nbins - 1, pos)
    return pos, keep


class HistcBackward(Node):
    """Counts of ``a``'s elements in the bins between consecutive ``edges`` (not differentiable)."""

    def forward(ctx, a, edges):
        xp = xp_of(a)
        x = a._data.reshape(-1)
        nbins = edges._data.shape[0] - 1
        pos, _ = _bins_of(xp, x, edges._data, "linear")
        return xp.bincount(pos, minlength=nbins).astype(x.dtype)


def _equal_edges(input, bins, lo, hi):
    """``bins + 1`` equal-width edges over ``[lo, hi]`` in ``input``'s dtype, as torch.linspace."""
    from .creation import linspace
    from ..autograd.grad_mode import no_grad
    with no_grad():
        return linspace(lo, hi, int(bins) + 1, dtype=input._dtype, device=input._device)


@tensor_method("histc")
def histc(input, bins=100, min=0, max=0, *, out=None):  # noqa: A002 - PyTorch's names
    """Histogram of ``input``'s elements in ``bins`` equal-width bins over ``[min, max]`` (the
    data's own range when ``min == max``, widened by 1 each way if that is a single point);
    elements outside are ignored. Floating inputs only; the result has ``input``'s dtype and
    is not differentiable."""
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    for bound in (min, max):
        _check_convertible(bound, input._dtype)
    lo, hi = float(min), float(max)
    if lo == hi:
        lo, hi = _data_range(input._data)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_fmt(lo)}, {_fmt(hi)}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    _check_float("histogram_cpu", input)
    result = apply(HistcBackward, input.detach(), _equal_edges(input, bins, lo, hi))
    return result if out is None else write_results(result, out)


_C_TYPE_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
                 "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}


def _check_convertible(value, dt):
    """PyTorch's RuntimeError where the number ``value`` does not fit the dtype ``dt``."""
    if dt._category == 0:
        return
    info = np.iinfo(dt.np) if dt._category == 1 else finfo(dt)
    if np.isfinite(value) and not float(info.min) <= value <= float(info.max):
        raise RuntimeError(f"value cannot be converted to type {_C_TYPE_NAMES[dt.name]} without overflow")
    if dt._category == 1 and not np.isfinite(value):
        raise RuntimeError(f"value cannot be converted to type {_C_TYPE_NAMES[dt.name]} without overflow")


def _fmt(v, nan="-nan"):
    """A bound as PyTorch prints it in messages (integral values without a fraction)."""
    return (nan if np.isnan(v) else str(v)) if not float(v).is_integer() else str(int(v))


class HistogramBackward(Node):
    """``(hist, bin_edges)``: sums of ``weight`` (or counts) of ``a``'s elements in the bins
    between consecutive ``edges``, and the edges. Records a node, but has no derivative."""

    def forward(ctx, a, edges, weight, density, mode):
        xp = xp_of(a)
        x = a._data.reshape(-1)
        e = edges._data
        nbins = e.shape[0] - 1
        pos, keep = _bins_of(xp, x, e, mode)
        hist = xp.zeros((nbins,), dtype=x.dtype)
        if weight is None:
            hist += xp.bincount(pos, minlength=nbins).astype(x.dtype)
        else:
            xp.add.at(hist, pos, weight._data.reshape(-1)[keep])
        if density:
            hist = hist / hist.sum() / (e[1:] - e[:-1])
        return hist, e.copy()

    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::histogram is not implemented")


@tensor_method("histogram")
def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):  # noqa: A002
    """``(hist, bin_edges)``: the histogram of ``input``'s elements over ``bins`` equal bins
    spanning ``range`` (default: the data's range) or over the ascending 1-d edges ``bins``.
    With ``weight`` (``input``'s shape) bins sum weights; ``density`` scales to unit area.
    Float32/64 only."""
    if isinstance(bins, Tensor):
        if bins._data.ndim == 1 and bins._data.shape[0] < 2:
            raise RuntimeError("torch.histogram(): bins must be > 0, but got 0 for dimension 0")
        if bins._data.ndim != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                               f"{bins._data.ndim} dimensions in the bins tensor for dimension 0")
        if bins._dtype is not input._dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                               f"but got input with dtype {input._dtype.name} and bins for dimension 0 with "
                               f"dtype {bins._dtype.name}")
        edges, mode = bins, "search"
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        else:
            lo, hi = _data_range(input._data) if input._data.size else (0.0, 1.0)
        lo, hi = _bin_range(lo, hi, 0)
        edges, mode = None, "local"
    _check_float("histogramdd", input, half=False)
    if weight is not None and weight._data.shape != input._data.shape:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{[input._data.size, 1]} and weight with shape {list(weight._data.shape)}")
    if edges is None:
        edges = _equal_edges(input, bins, lo, hi)
    hist, bin_edges = apply(HistogramBackward, input, edges, weight, bool(density), mode)
    result = return_types.histogram(hist, bin_edges)
    return result if out is None else write_results(result, out)



class HistogramddBackward(Node):
    """``(hist, *bin_edges)``: sums of ``weight`` (or counts) of the points (rows of ``a``, one
    coordinate per dim) in the cells of the grid of ``edges``. Records a node, but has no
    derivative."""

    def forward(ctx, a, weight, density, modes, *edges):
        xp = xp_of(a)
        points = a._data.reshape(-1, a._data.shape[-1])
        shape = tuple(e._data.shape[0] - 1 for e in edges)
        cell = xp.zeros(points.shape[0], dtype=xp.int64)
        inside = xp.ones(points.shape[0], dtype=bool)
        for d, (e, mode) in enumerate(zip(edges, modes)):
            pos, keep = _bins_of(xp, points[:, d], e._data, mode)
            full = xp.zeros(points.shape[0], dtype=xp.int64)
            full[keep] = pos
            inside &= keep
            cell = cell * shape[d] + full
        size = 1
        for n in shape:
            size *= n
        hist = xp.zeros(size, dtype=points.dtype)
        if weight is None:
            hist += xp.bincount(cell[inside], minlength=size)[:size].astype(points.dtype)
        else:
            xp.add.at(hist, cell[inside], weight._data.reshape(-1)[inside])
        hist = hist.reshape(shape)
        if density:
            volume = xp.ones(shape, dtype=points.dtype)
            for d, e in enumerate(edges):
                widths = e._data[1:] - e._data[:-1]
                volume = volume * widths.reshape((1,) * d + (-1,) + (1,) * (len(shape) - d - 1))
            hist = hist / hist.sum() / volume
        return (hist,) + tuple(e._data.copy() for e in edges)

    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::histogramdd is not implemented")


def histogramdd(input, bins, *, range=None, weight=None, density=False):  # noqa: A002 - PyTorch's names
    """``(hist, bin_edges)`` of the points ``input`` (..., D) (one coordinate per dim): ``bins`` is
    a count for every dim, one count per dim, or one tensor of ascending edges per dim; ``range``
    the flat ``[min_0, max_0, min_1, max_1, ...]`` of equal-bin dims (default: the data's range).
    ``weight`` (``input.shape[:-1]``) gives each point's weight; ``density`` scales to unit volume.
    Float32/64 only."""
    if not isinstance(input, Tensor):
        raise TypeError(f"histogramdd(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input._data.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    _check_float("histogramdd", input, half=False)
    dims = input._data.shape[-1]
    points = input._data.reshape(-1, dims)
    if isinstance(bins, int):
        bins = [bins] * dims
    bins = list(bins)
    if len(bins) != dims:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram range should have {2 * dims} "
                           f"elements, but got {len(range)}")
    if weight is not None and weight._data.shape != input._data.shape[:-1]:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{list(points.shape)} and weight with shape {list(weight._data.shape)}")
    edges, modes = [], []
    for d, b in enumerate(bins):
        if isinstance(b, Tensor):
            if b._data.ndim != 1:
                raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                                   f"{b._data.ndim} dimensions in the bins tensor for dimension {d}")
            if b._dtype is not input._dtype:
                raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                                   f"but got input with dtype {input._dtype.name} and bins for dimension {d} with "
                                   f"dtype {b._dtype.name}")
            if b._data.shape[0] < 2:
                raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b._data.shape[0] - 1} for "
                                   f"dimension {d}")
            edges.append(b)
            modes.append("search")
            continue
        if b <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for dimension {d}")
        if range is not None:
            lo, hi = float(range[2 * d]), float(range[2 * d + 1])
        else:
            lo, hi = _data_range(points[:, d]) if points.shape[0] else (0.0, 1.0)
        lo, hi = _bin_range(lo, hi, d)
        edges.append(_equal_edges(input, b, lo, hi))
        modes.append("local")
    hist, *bin_edges = apply(HistogramddBackward, input, weight, bool(density), tuple(modes), *edges)
    # given edges come back outside the graph (as in PyTorch); computed ones are outputs of the node
    bin_edges = [e.detach() if mode == "search" else e for e, mode in zip(bin_edges, modes)]
    return return_types.histogramdd(hist, tuple(bin_edges))
