"""Sliding windows over the spatial dims of ``(N, C, *spatial)`` backend arrays (1 to 3 of them).

The array-level half of convolution and pooling, written once against ``xp``
(NumPy or CuPy): no autograd here, only shapes, strides and copies.

A window op visits the kernel one *tap* (one position inside the window, e.g. ``(i, j)``) at a
time. For a tap, the outputs that read a real (unpadded) input element form one box, and the
elements they read form one strided box of the input; :func:`tap_ranges` finds both along a
dim. So every loop below is over the kernel's taps only, each step a whole-array strided copy,
add or compare; padding is never materialised.

- :func:`im2col` gathers the windows into a column buffer ``(N, C, *kernel, *out)``
  (or ``(C, *kernel, N, *out)``) so that a convolution is one matrix product;
  :func:`col2im` is its adjoint (scatter-add of the columns back into an image).
- :func:`conv_forward`, :func:`conv_input_grad` and :func:`conv_weight_grad` are the
  three products of a convolution (transposed convolution reuses them, swapped).
- :func:`conv_out_shape` / :func:`transposed_conv_out_shape`: the output's spatial sizes.
"""
import functools
import itertools
import math

from ...ops._gemm import product
from ...ops.window_geometry import out_size

__all__ = ["out_size", "tap_ranges", "box_taps", "int_tuples", "im2col", "col2im", "conv_forward", "conv_input_grad",
           "conv_weight_grad", "conv_out_shape", "transposed_conv_out_shape"]


def tap_ranges(size, out, kernel, stride, pad_before, dilation):
    """For each kernel tap along one dim: ``(lo, hi, start)`` -- outputs ``lo:hi`` read the input
    elements ``start, start + stride, ...`` (``hi - lo`` of them); empty when ``lo >= hi``."""
    ranges = []
    for t in range(kernel):
        offset = t * dilation - pad_before          # input index read by output 0
        lo = max(0, -(offset // stride))            # first output whose input is >= 0
        hi = min(out, (size - 1 - offset) // stride + 1) if size - 1 - offset >= 0 else 0
        ranges.append((lo, hi, lo * stride + offset))
    return ranges


def _strided(start, count, stride):
    return slice(start, start + (count - 1) * stride + 1, stride)


def box_taps(x_spatial, out, kernel, stride, pad_before, dilation):
    """``[(tap, region, source)]`` for every kernel tap that reads the input: ``tap`` the tuple of
    its per-dim positions, ``region`` the output box it feeds and ``source`` the strided input box
    it reads (tuples of slices over the spatial dims), in row-major tap order.

    A training loop asks for the same geometry every step, so answers are memoised (arguments are
    sequences of host ints, normalised to tuples); the returned list must not be mutated."""
    return _box_taps(*int_tuples(x_spatial, out, kernel, stride, pad_before, dilation))


def int_tuples(*sequences):
    """Each sequence of host ints as a tuple of Python ints: a hashable key for the memoised geometry."""
    return tuple(tuple(int(v) for v in seq) for seq in sequences)


@functools.lru_cache(maxsize=512)
def _box_taps(x_spatial, out, kernel, stride, pad_before, dilation):
    per_dim = [tap_ranges(x_spatial[d], out[d], kernel[d], stride[d], pad_before[d], dilation[d])
               for d in range(len(kernel))]
    found = []
    for combo in itertools.product(*(enumerate(r) for r in per_dim)):
        if any(lo >= hi for _, (lo, hi, _s) in combo):
            continue
        tap = tuple(t for t, _ in combo)
        region = tuple(slice(lo, hi) for _, (lo, hi, _s) in combo)
        source = tuple(_strided(s, hi - lo, stride[d]) for d, (_, (lo, hi, s)) in enumerate(combo))
        found.append((tap, region, source))
    return found


def _covers_all(taps, out, kernel):
    """Whether every tap reads a real input for every output (no padding is ever read)."""
    full = tuple(slice(0, o) for o in out)
    return len(taps) == math.prod(kernel) and all(region == full for _, region, _ in taps)


def conv_out_shape(x_shape, w_shape, stride, padding, dilation):
    """Spatial sizes of a convolution of an ``(N, C, *spatial)`` input by ``(O, C/g, *kernel)``
    weights; ``padding`` holds ``(before, after)`` per spatial dim."""
    return tuple(out_size(x_shape[2 + d], w_shape[2 + d], stride[d], padding[d][0], padding[d][1], dilation[d])
                 for d in range(len(x_shape) - 2))


def transposed_conv_out_shape(x_shape, w_shape, stride, padding, dilation, output_padding):
    """Spatial sizes of a transposed convolution (the input size of the convolution it reverses,
    plus ``output_padding``)."""
    return tuple((x_shape[2 + d] - 1) * stride[d] - padding[d][0] - padding[d][1]
                 + dilation[d] * (w_shape[2 + d] - 1) + output_padding[d] + 1 for d in range(len(x_shape) - 2))


def im2col(xp, x, kernel, stride, padding, dilation, out_shape, channels_first=False):
    """The windows of ``x`` (N, C, *spatial) as columns.

    Returns ``(N, C, *kernel, *out)`` (or ``(C, *kernel, N, *out)`` with ``channels_first``),
    C-contiguous; ``padding`` is ``((before, after), ...)`` per spatial dim. Positions in the
    padding are 0.
    """
    n, c = x.shape[:2]
    k = len(kernel)
    kernel, out_shape = tuple(kernel), tuple(out_shape)
    taps = box_taps(x.shape[2:], out_shape, kernel, stride, [p[0] for p in padding], dilation)
    full = _covers_all(taps, out_shape, kernel)
    if channels_first:
        buf = (xp.empty if full else xp.zeros)((c,) + kernel + (n,) + out_shape, dtype=x.dtype)
        view = buf.transpose((k + 1, 0) + tuple(range(1, k + 1)) + tuple(range(k + 2, 2 * k + 2)))
    else:
        if full and all(kk == 1 for kk in kernel) and all(s == 1 for s in stride) and x.shape[2:] == out_shape:
            return x.reshape((n, c) + kernel + out_shape)     # a 1x1 convolution reads the input itself
        buf = (xp.empty if full else xp.zeros)((n, c) + kernel + out_shape, dtype=x.dtype)
        view = buf
    everything = (slice(None), slice(None))
    for tap, region, source in taps:
        view[everything + tap + region] = x[everything + source]
    return buf


def col2im(xp, cols, x_shape, stride, padding, dilation):
    """Adjoint of :func:`im2col`: sum the columns ``(N, C, *kernel, *out)`` back into an image of
    shape ``x_shape`` (contributions that fall in the padding are dropped)."""
    k = len(x_shape) - 2
    kernel, out_shape = cols.shape[2:2 + k], cols.shape[2 + k:]
    out = xp.zeros(x_shape, dtype=cols.dtype)
    everything = (slice(None), slice(None))
    for tap, region, source in box_taps(x_shape[2:], out_shape, kernel, stride, [p[0] for p in padding],
                                        dilation):
        out[everything + source] += cols[everything + tap + region]
    return out


def _blas(xp, a):
    """``a`` with C-contiguous memory: matrix products on broadcast (zero-stride) or scattered
    operands miss NumPy's BLAS path and run a slow generic loop instead."""
    return a if a.flags.c_contiguous else xp.ascontiguousarray(a)


# ---------------------------------------------------------------- the three products of a convolution
# Shapes: x (N, C, *spatial), weight (O, C/G, *kernel), y (N, O, *out); G groups.
# With enough output positions per sample, a product is batched over the samples (and groups),
# so that outputs come out in NC... order without a transposing copy. With few positions
# (deep layers: 7x7, 4x4) per-sample products are too thin for BLAS: then the samples are
# folded into one product per group, and the result is transposed back.
_MIN_POSITIONS_PER_SAMPLE = 256


def _batch_last(k):
    """Axes that move the batch axis of a ``(C, *kernel, N, *out)`` array to the front."""
    return (k + 1, 0) + tuple(range(1, k + 1)) + tuple(range(k + 2, 2 * k + 2))


def conv_forward(xp, x, weight, stride, padding, dilation, groups, out_shape):
    """y = conv(x, weight): the columns of x times the weight matrix."""
    n = x.shape[0]
    o, cg = weight.shape[:2]
    kernel, out_shape = tuple(weight.shape[2:]), tuple(out_shape)
    kk = cg * math.prod(kernel)
    positions = math.prod(out_shape)
    w = _blas(xp, weight.reshape(groups, o // groups, kk))
    if positions >= _MIN_POSITIONS_PER_SAMPLE or n == 1:
        cols = im2col(xp, x, kernel, stride, padding, dilation, out_shape)
        y = product(w, cols.reshape(n, groups, kk, positions))                   # (N, G, O/G, P)
        return y.reshape((n, o) + out_shape)
    cols = im2col(xp, x, kernel, stride, padding, dilation, out_shape, channels_first=True)
    y = product(w, cols.reshape(groups, kk, n * positions))                      # (G, O/G, N*P)
    y = y.reshape(o, n, positions).transpose(1, 0, 2)
    return xp.ascontiguousarray(y).reshape((n, o) + out_shape)


def _adjoint_weight(xp, weight, groups):
    """``(C, O/G, *kernel)``: the weight of the stride-1 convolution that is the adjoint of
    convolving by ``weight (O, C/G, *kernel)``: in/out channels swapped within each group, the
    kernel flipped along every spatial dim."""
    o, cg = weight.shape[:2]
    kernel = tuple(weight.shape[2:])
    w = weight.reshape((groups, o // groups, cg) + kernel).swapaxes(1, 2)
    w = w[(Ellipsis,) + (slice(None, None, -1),) * len(kernel)]
    return xp.ascontiguousarray(w).reshape((groups * cg, o // groups) + kernel)


def _adjoint_padding(weight_shape, padding, dilation):
    """Padding of the adjoint stride-1 convolution (per dim ``(before, after)``), or None when
    the forward's padding is wider than its kernel's reach (the adjoint would crop)."""
    flipped = tuple((dilation[d] * (size - 1) - before, dilation[d] * (size - 1) - after)
                    for d, (size, (before, after)) in enumerate(zip(weight_shape[2:], padding)))
    return flipped if all(b >= 0 and a >= 0 for b, a in flipped) else None


def conv_input_grad(xp, grad, weight, x_shape, stride, padding, dilation, groups):
    """dL/dx of ``y = conv(x, weight)`` given ``grad`` = dL/dy. (This is also the forward of the
    transposed convolution.)

    Stride 1, one group, no more output channels than input channels: the convolution of ``grad``
    by the flipped, channel-swapped weight (its im2col copies the O channels of ``grad``, which is
    cheaper than col2im's scatter-adds into the C channels of the input: 2.7 against 3.8 ms for
    64x64x7x7 by 64x64x3x3, 5.5 against 11.9 ms for 64 to 32 channels at 14x14). Otherwise:
    weight-transposed products, then col2im."""
    n, o = grad.shape[:2]
    out_shape = tuple(grad.shape[2:])
    cg = weight.shape[1]
    kernel = tuple(weight.shape[2:])
    if groups == 1 and o <= cg and all(s == 1 for s in stride):
        adjoint_padding = _adjoint_padding(weight.shape, padding, dilation)
        # (the adjoint convolution multiplies the weight by grad's zero padding: 0 * inf would be NaN
        # where col2im adds nothing)
        if adjoint_padding is not None and bool(xp.isfinite(weight).all()):
            return conv_forward(xp, grad, _adjoint_weight(xp, weight, groups), stride, adjoint_padding, dilation,
                                groups, tuple(x_shape[2:]))
    kk = cg * math.prod(kernel)
    positions = math.prod(out_shape)
    w_t = _blas(xp, weight.reshape(groups, o // groups, kk)).transpose(0, 2, 1)     # (G, K, O/G)
    if positions >= _MIN_POSITIONS_PER_SAMPLE or n == 1:
        cols = product(w_t, _blas(xp, grad).reshape(n, groups, o // groups, positions))    # (N, G, K, P)
        cols = cols.reshape((n, groups * cg) + kernel + out_shape)
    else:
        g = xp.ascontiguousarray(grad.reshape(n, o, positions).transpose(1, 0, 2))
        cols = product(w_t, g.reshape(groups, o // groups, n * positions))                # (G, K, N*P)
        cols = cols.reshape((groups * cg,) + kernel + (n,) + out_shape).transpose(_batch_last(len(kernel)))
    return col2im(xp, cols, x_shape, stride, padding, dilation)


def conv_weight_grad(xp, x, grad, weight_shape, stride, padding, dilation, groups):
    """dL/dweight of ``y = conv(x, weight)``: one product per group over all samples and positions,
    ``grad (O/G, N*P) @ columns (N*P, K)``."""
    n, o = grad.shape[:2]
    out_shape = tuple(grad.shape[2:])
    cg = weight_shape[1]
    kernel = tuple(weight_shape[2:])
    kk = cg * math.prod(kernel)
    positions = math.prod(out_shape)
    cols = im2col(xp, x, kernel, stride, padding, dilation, out_shape, channels_first=True)
    cols = cols.reshape(groups, kk, n * positions)
    g = grad.reshape(n, groups, o // groups, positions).transpose(1, 2, 0, 3)
    g = _blas(xp, g.reshape(groups, o // groups, n * positions))            # copies (small)
    gw = product(g, cols.transpose(0, 2, 1))                                         # (G, O/G, K)
    return gw.reshape(weight_shape)
