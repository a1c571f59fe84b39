"""Pooling on ``(..., *spatial)`` backend arrays (the array-level half of ``pooling.py``).

The pooled dims are the last ``len(kernel)`` (or ``len(out)``) ones: two for 2-D pooling,
three for 3-D. Fixed windows (max/avg pooling) loop over the kernel taps with whole-array
strided slices (see ``_windows.box_taps``); adaptive windows, whose size varies along a dim,
loop over the taps of the largest window with gathers.

Max pooling records, per output, the *tap* (flat position inside its window) that won;
the flat ``H * W`` (``D * H * W``) indices that PyTorch returns are computed from it, and the
backward scatters the gradient one tap at a time.
"""
import functools
import itertools
import math

import numpy as np

from ._windows import box_taps, int_tuples

__all__ = ["max_pool", "max_pool_indices", "taps_from_indices", "max_pool_grad", "avg_pool", "avg_pool_grad",
           "adaptive_bounds", "adaptive_avg_pool", "adaptive_avg_pool_grad", "adaptive_max_pool",
           "scatter_add_indices"]


def _taps(x_hw, out_hw, kernel, stride, padding, dilation):
    """``[(t, region, source)]`` for every kernel tap that reads the input: its flat position in
    the window, the output region it feeds and the strided input slice it reads (index tuples
    for the pooled dims). Memoised like ``box_taps``; do not mutate the result."""
    return _flat_taps(*int_tuples(x_hw, out_hw, kernel, stride, padding, dilation))


@functools.lru_cache(maxsize=512)
def _flat_taps(x_hw, out_hw, kernel, stride, padding, dilation):
    return [(int(np.ravel_multi_index(tap, kernel)), region, source)
            for tap, region, source in box_taps(x_hw, out_hw, kernel, stride, padding, dilation)]


def _full(region, out_hw):
    return all(r == slice(0, o) for r, o in zip(region, out_hw))


def _row_major_strides(sizes):
    """Element strides of a C-ordered array of ``sizes`` (host ints)."""
    return [math.prod(sizes[d + 1:]) for d in range(len(sizes))]


def _grid(values):
    """Per-dim host int arrays, shaped to broadcast against each other (an open mesh)."""
    k = len(values)
    return [np.asarray(v).reshape((1,) * d + (-1,) + (1,) * (k - d - 1)) for d, v in enumerate(values)]


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


# ---------------------------------------------------------------- max pooling
def _tap_dtype(ntaps):
    return np.uint8 if ntaps <= 255 else np.uint16 if ntaps <= 65535 else np.uint32


def max_pool(xp, x, kernel, stride, padding, dilation, out_hw, with_taps=True):
    """``(out, taps)``: the window maxima and the winning tap of each window (``None`` unless
    ``with_taps``). Ties keep the first position; a NaN wins over numbers (the last NaN over
    earlier ones), as in PyTorch.

    Taps are visited in order and a tap wins where it is strictly greater than the running
    maximum, so the winner is the *last* tap that won: ``win = max(t * won_t)``, computed with
    cheap unsigned-integer arithmetic on the comparison masks (no ``where``).
    """
    k = len(kernel)
    lead = x.shape[:-k]
    taps = _taps(x.shape[-k:], out_hw, kernel, stride, padding, dilation)
    tap_dtype = _tap_dtype(math.prod(kernel))
    first_t, first_region, first_src = taps[0]
    covered = _full(first_region, out_hw)
    if covered:                      # tap 0 reads a real input for every window
        out = x[(..., *first_src)].copy()
        rest = taps[1:]
    else:
        out = xp.full(lead + tuple(out_hw), _lowest(x.dtype), dtype=x.dtype)
        rest = taps
    # the running winner starts at the first tap read (with padding, tap 0 may read no input at all)
    win = xp.full(out.shape, first_t if covered else 0, dtype=tap_dtype) if with_taps else None
    for t, region, src in rest:
        v = x[(..., *src)]
        m = out[(..., *region)]
        if with_taps:
            w = win[(..., *region)]
            xp.maximum(w, (v > m).view(np.uint8) * tap_dtype(t), out=w)
        xp.maximum(m, v, out=m)                                          # propagates NaN, like PyTorch
    if with_taps:
        if not covered and bool((out == _lowest(x.dtype)).any()):
            # Windows that never beat the initial lowest value: PyTorch reports their first real position.
            _first_taps(xp, out == _lowest(x.dtype), win, taps)
        if x.dtype.kind == "f" and bool(xp.isnan(out).any()):
            for t, region, src in taps:      # a NaN window reports its last NaN
                xp.copyto(win[(..., *region)], tap_dtype(t), where=xp.isnan(x[(..., *src)]))
    return out, win


def _first_taps(xp, pick, win, taps):
    for t, region, _ in reversed(taps):      # the earliest tap is written last
        w = win[(..., *region)]
        xp.copyto(w, w.dtype.type(t), where=pick[(..., *region)])


def max_pool_indices(xp, win, x_hw, kernel, stride, padding, dilation):
    """Flat ``H * W`` (``D * H * W``) input indices of the winning taps ``win`` (int64, PyTorch's
    return_indices)."""
    k = len(kernel)
    out = win.shape[-k:]
    step = _row_major_strides(tuple(x_hw))
    starts = _grid([(np.arange(out[d]) * stride[d] - padding[d]) * step[d] for d in range(k)])
    base = sum(starts[1:], starts[0])
    tap_pos = np.unravel_index(np.arange(math.prod(kernel)), tuple(kernel))
    offset = sum(tap_pos[d] * dilation[d] * step[d] for d in range(k))
    return xp.asarray(base.astype(np.int64)) + xp.take(xp.asarray(offset.astype(np.int64)),
                                                       win.astype(np.intp, copy=False))


def taps_from_indices(xp, indices, x_hw, kernel, stride, padding, dilation):
    """The inverse of :func:`max_pool_indices`: which tap of its window each index is."""
    k = len(kernel)
    out = indices.shape[-k:]
    step = _row_major_strides(tuple(x_hw))
    kstep = _row_major_strides(tuple(kernel))
    starts = _grid([np.arange(out[d]) * stride[d] - padding[d] for d in range(k)])
    tap = 0
    for d in range(k):
        coord = (indices // step[d]) % x_hw[d]
        tap = tap + ((coord - xp.asarray(starts[d])) // dilation[d]) * kstep[d]
    return tap


def max_pool_grad(xp, grad, win, x_shape, kernel, stride, padding, dilation):
    """Scatter ``grad`` to the winning positions ``win`` (taps), one tap at a time."""
    k = len(kernel)
    out_hw = grad.shape[-k:]
    taps = _taps(x_shape[-k:], out_hw, kernel, stride, padding, dilation)
    gx = xp.zeros(x_shape, dtype=grad.dtype)
    overlap = any(s < d * (k - 1) + 1 for s, k, d in zip(stride, kernel, dilation))
    # Multiplying by the 0/1 mask is much faster than ``where``; it is exact for finite gradients
    # (an inf or NaN times 0 would leak NaN into the other positions of the window).
    finite = grad.dtype.kind != "f" or bool(xp.isfinite(grad).all())
    zero = grad.dtype.type(0)
    for t, region, src in taps:
        won = win[(..., *region)] == t
        g = grad[(..., *region)]
        contribution = g * won if finite else xp.where(won, g, zero)
        if overlap:
            gx[(..., *src)] += contribution
        else:             # disjoint windows: every input position is written by one tap only
            gx[(..., *src)] = contribution
    return gx


# ---------------------------------------------------------------- average pooling
def _avg_divisor(xp, dtype, x_hw, out_hw, kernel, stride, padding, count_include_pad, divisor_override):
    if divisor_override:
        return divisor_override
    sizes = []
    for d in range(len(kernel)):
        start = np.arange(out_hw[d]) * stride[d] - padding[d]
        end = np.minimum(start + kernel[d], x_hw[d] + padding[d])
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, x_hw[d])
        sizes.append(end - start)
    div = math.prod(_grid(sizes))
    if (div == div.flat[0]).all():
        return int(div.flat[0])
    return xp.asarray(div.astype(dtype if dtype.kind == "f" else np.int64))


def avg_pool(xp, x, kernel, stride, padding, out_hw, count_include_pad, divisor_override):
    """Window sums divided by the window size (PyTorch's divisor rules)."""
    acc = np.float32 if x.dtype == np.float16 else (np.int64 if x.dtype.kind in "iub" else x.dtype)
    k = len(kernel)
    lead = x.shape[:-k]
    taps = _taps(x.shape[-k:], out_hw, kernel, stride, padding, (1,) * k)
    first_t, first_region, first_src = taps[0]
    if _full(first_region, out_hw):
        total = x[(..., *first_src)].astype(acc, copy=True)
        taps = taps[1:]
    else:
        total = xp.zeros(lead + tuple(out_hw), dtype=acc)
    for _, region, src in taps:
        total[(..., *region)] += x[(..., *src)]
    div = _avg_divisor(xp, np.dtype(acc), x.shape[-k:], out_hw, kernel, stride, padding, count_include_pad,
                       divisor_override)
    if total.dtype.kind == "f":
        total /= div
        return total.astype(x.dtype, copy=False)
    quotient = xp.abs(total) // xp.abs(div) if not isinstance(div, int) else xp.abs(total) // abs(div)
    return (xp.sign(total) * xp.sign(div) * quotient).astype(x.dtype)   # C's truncating division


def avg_pool_grad(xp, grad, x_shape, kernel, stride, padding, count_include_pad, divisor_override):
    k = len(kernel)
    out_hw = grad.shape[-k:]
    div = _avg_divisor(xp, grad.dtype, x_shape[-k:], out_hw, kernel, stride, padding, count_include_pad,
                       divisor_override)
    g = grad / div
    gx = xp.zeros(x_shape, dtype=grad.dtype)
    for _, region, src in _taps(x_shape[-k:], out_hw, kernel, stride, padding, (1,) * k):
        gx[(..., *src)] += g[(..., *region)]
    return gx


# ---------------------------------------------------------------- adaptive pooling
def adaptive_bounds(size, out):
    """PyTorch's adaptive windows along one dim: ``start = floor(i*size/out)``,
    ``end = ceil((i+1)*size/out)`` (host int arrays)."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _window_sum(xp, x, axis, size, out):
    """Sums of the adaptive windows along ``axis`` (-1 or -2)."""
    start, end = adaptive_bounds(size, out)
    if size % out == 0:                   # equal windows side by side: strided slices
        k = size // out
        sl = [slice(None)] * x.ndim
        sl[axis] = slice(0, size, k)
        total = x[tuple(sl)].copy()
        for t in range(1, k):
            sl[axis] = slice(t, size, k)
            total += x[tuple(sl)]
        return total
    total = None
    for t in range(int((end - start).max())):    # tap t of every window (short windows: masked out)
        idx = np.minimum(start + t, end - 1)
        valid = start + t < end
        v = xp.take(x, xp.asarray(idx), axis=axis)
        if not valid.all():
            shape = [1] * x.ndim
            shape[axis] = out
            v = xp.where(xp.asarray(valid.reshape(shape)), v, x.dtype.type(0))
        if total is None:
            total = v
        else:
            total += v
    return total


def _pool_matrix(xp, size, out, dtype):
    """(out, size) 0/1 matrix of the adaptive windows along one dim."""
    start, end = adaptive_bounds(size, out)
    j = np.arange(size)
    return xp.asarray(((j >= start[:, None]) & (j < end[:, None])).astype(dtype))


def _counts(size, out):
    start, end = adaptive_bounds(size, out)
    return end - start


def adaptive_avg_pool(xp, x, out_hw):
    """Means of the adaptive windows over the last ``len(out_hw)`` dims (summed last dim first)."""
    k = len(out_hw)
    sizes = x.shape[-k:]
    acc = np.dtype(np.float32) if x.dtype == np.float16 else x.dtype
    total = x.astype(acc, copy=False)
    for d in range(k - 1, -1, -1):
        total = _window_sum(xp, total, d - k, sizes[d], out_hw[d])
    div = math.prod(_grid([_counts(sizes[d], out_hw[d]) for d in range(k)]))
    if (div == div.flat[0]).all():
        total /= acc.type(div.flat[0])
    else:
        total /= xp.asarray(div.astype(acc))
    return total.astype(x.dtype, copy=False)


def adaptive_avg_pool_grad(xp, grad, x_shape, k=2):
    """The gradient of :func:`adaptive_avg_pool` over the last ``k`` dims."""
    sizes, out = x_shape[-k:], grad.shape[-k:]
    if k == 2:
        h, w = sizes
        ho, wo = out
        div = _counts(h, ho)[:, None] * _counts(w, wo)[None, :]
        g = grad / xp.asarray(div.astype(grad.dtype))
        ph = _pool_matrix(xp, h, ho, grad.dtype)
        pw = _pool_matrix(xp, w, wo, grad.dtype)
        return ph.T @ g @ pw                 # (H, Ho) @ (..., Ho, Wo) @ (Wo, W)
    div = math.prod(_grid([_counts(sizes[d], out[d]) for d in range(k)]))
    g = grad / xp.asarray(div.astype(grad.dtype))
    for d in range(k):                   # spread one pooled dim back at a time
        m = _pool_matrix(xp, sizes[d], out[d], grad.dtype)       # (out_d, size_d)
        g = xp.moveaxis(xp.moveaxis(g, d - k, -1) @ m, -1, d - k)
    return xp.ascontiguousarray(g)


def adaptive_max_pool(xp, x, out_hw):
    """``(out, indices)``: maxima of the adaptive windows over the last ``len(out_hw)`` dims and
    their flat ``H * W`` (``D * H * W``) indices."""
    k = len(out_hw)
    sizes = x.shape[-k:]
    step = _row_major_strides(tuple(sizes))
    bounds = [adaptive_bounds(sizes[d], out_hw[d]) for d in range(k)]
    longest = [range(int((end - start).max())) for start, end in bounds]
    out = idx = None
    is_float = x.dtype.kind == "f"
    for tap in itertools.product(*longest):
        # short windows repeat their last position: harmless for max
        pos = [np.minimum(start + t, end - 1) for t, (start, end) in zip(tap, bounds)]
        v = x
        for d in range(k):
            v = xp.take(v, xp.asarray(pos[d]), axis=d - k)
        flat = xp.asarray(sum(g * s for g, s in zip(_grid(pos), step)))
        if out is None:
            out, idx = v, xp.broadcast_to(flat, v.shape).copy()
            continue
        take = v > out
        if is_float:
            take |= v != v
        out = xp.where(take, v, out)
        idx = xp.where(take, flat, idx)
    return out, idx


def scatter_add_indices(xp, grad, indices, x_shape, k=2):
    """Sum ``grad`` into a zero image at the flat indices (over the last ``k`` dims) of each plane
    (duplicates add)."""
    hw = math.prod(x_shape[-k:])
    planes = int(np.prod(x_shape[:-k], dtype=np.int64))
    gx = xp.zeros(planes * hw, dtype=grad.dtype)
    offsets = xp.arange(planes, dtype=indices.dtype).reshape(grad.shape[:-k] + (1,) * k) * hw
    xp.add.at(gx, (indices + offsets).reshape(-1), grad.reshape(-1))
    return gx.reshape(x_shape)
