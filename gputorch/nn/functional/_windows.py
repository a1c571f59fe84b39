"""Sliding windows over the two spatial dims of ``(N, C, H, W)`` backend arrays.

The array-level half of convolution and pooling, written once against ``xp``
(NumPy or CuPy): no autograd here, only shapes, strides and copies.

A window op visits the kernel one *tap* ``(i, j)`` at a time. For a tap, the
outputs that read a real (unpadded) input element form one rectangle, and the
elements they read form one strided rectangle of the input; :func:`tap_ranges`
finds both. So every loop below is over the ``kh * kw`` taps only, each step
a whole-array strided copy, add or compare; padding is never materialised.

- :func:`im2col` gathers the windows into a column buffer ``(N, C, kh, kw, Ho, Wo)``
  (or ``(C, kh, kw, N, Ho, Wo)``) so that a convolution is one matrix product;
  :func:`col2im` is its adjoint (scatter-add of the columns back into an image).
- :func:`conv_forward`, :func:`conv_input_grad` and :func:`conv_weight_grad` are the
  three products of a convolution (transposed convolution reuses them, swapped).
"""
from ...ops.window_geometry import out_size

__all__ = ["out_size", "tap_ranges", "im2col", "col2im", "conv_forward", "conv_input_grad",
           "conv_weight_grad"]


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


def _covers_all(ranges, out):
    return all(lo == 0 and hi == out for lo, hi, _ in ranges)


def _strided(start, count, stride):
    return slice(start, start + (count - 1) * stride + 1, stride)


def im2col(xp, x, kernel, stride, padding, dilation, out_hw, channels_first=False):
    """The windows of ``x`` (N, C, H, W) as columns.

    Returns ``(N, C, kh, kw, Ho, Wo)`` (or ``(C, kh, kw, N, Ho, Wo)`` with ``channels_first``),
    C-contiguous; ``padding`` is ``((top, bottom), (left, right))``. Positions in the padding are 0.
    """
    n, c, h, w = x.shape
    kh, kw = kernel
    (sh, sw), (dh, dw) = stride, dilation
    ho, wo = out_hw
    rows = tap_ranges(h, ho, kh, sh, padding[0][0], dh)
    cols = tap_ranges(w, wo, kw, sw, padding[1][0], dw)
    full = _covers_all(rows, ho) and _covers_all(cols, wo)
    if channels_first:
        buf = (xp.empty if full else xp.zeros)((c, kh, kw, n, ho, wo), dtype=x.dtype)
        view = buf.transpose(3, 0, 1, 2, 4, 5)
    else:
        if kh == kw == 1 and full and sh == sw == 1 and h == ho and w == wo:
            return x.reshape(n, c, 1, 1, ho, wo)     # a 1x1 convolution reads the input itself
        buf = (xp.empty if full else xp.zeros)((n, c, kh, kw, ho, wo), dtype=x.dtype)
        view = buf
    for i, (rlo, rhi, rstart) in enumerate(rows):
        if rlo >= rhi:
            continue
        rsrc = _strided(rstart, rhi - rlo, sh)
        for j, (clo, chi, cstart) in enumerate(cols):
            if clo >= chi:
                continue
            view[:, :, i, j, rlo:rhi, clo:chi] = x[:, :, rsrc, _strided(cstart, chi - clo, sw)]
    return buf


def col2im(xp, cols, x_shape, stride, padding, dilation):
    """Adjoint of :func:`im2col`: sum the columns ``(N, C, kh, kw, Ho, Wo)`` back into an image of
    shape ``x_shape`` (contributions that fall in the padding are dropped)."""
    n, c, h, w = x_shape
    _, _, kh, kw, ho, wo = cols.shape
    (sh, sw), (dh, dw) = stride, dilation
    rows = tap_ranges(h, ho, kh, sh, padding[0][0], dh)
    cols_r = tap_ranges(w, wo, kw, sw, padding[1][0], dw)
    out = xp.zeros(x_shape, dtype=cols.dtype)
    for i, (rlo, rhi, rstart) in enumerate(rows):
        if rlo >= rhi:
            continue
        rdst = _strided(rstart, rhi - rlo, sh)
        for j, (clo, chi, cstart) in enumerate(cols_r):
            if clo >= chi:
                continue
            out[:, :, rdst, _strided(cstart, chi - clo, sw)] += cols[:, :, i, j, rlo:rhi, clo:chi]
    return out


def _blas(xp, a):
    """``a`` with C-contiguous memory: matrix products on broadcast (zero-stride) or scattered
    operands miss NumPy's BLAS path and run a slow generic loop instead."""
    return a if a.flags.c_contiguous else xp.ascontiguousarray(a)


# ---------------------------------------------------------------- the three products of a convolution
# Shapes: x (N, C, H, W), weight (O, C/G, kh, kw), y (N, O, Ho, Wo); G groups.
# With enough output positions per sample, a product is batched over the samples (and groups),
# so that outputs come out in NCHW order without a transposing copy. With few positions
# (deep layers: 7x7, 4x4) per-sample products are too thin for BLAS: then the samples are
# folded into one product per group, and the result is transposed back.
_MIN_POSITIONS_PER_SAMPLE = 256


def conv_forward(xp, x, weight, stride, padding, dilation, groups, out_hw):
    """y = conv(x, weight): the columns of x times the weight matrix."""
    n = x.shape[0]
    o, cg, kh, kw = weight.shape
    k = cg * kh * kw
    ho, wo = out_hw
    w = _blas(xp, weight.reshape(groups, o // groups, k))
    if ho * wo >= _MIN_POSITIONS_PER_SAMPLE or n == 1:
        cols = im2col(xp, x, (kh, kw), stride, padding, dilation, out_hw)
        y = w @ cols.reshape(n, groups, k, ho * wo)                       # (N, G, O/G, Ho*Wo)
        return y.reshape(n, o, ho, wo)
    cols = im2col(xp, x, (kh, kw), stride, padding, dilation, out_hw, channels_first=True)
    y = w @ cols.reshape(groups, k, n * ho * wo)                          # (G, O/G, N*Ho*Wo)
    y = y.reshape(o, n, ho, wo).transpose(1, 0, 2, 3)
    return xp.ascontiguousarray(y)


def conv_input_grad(xp, grad, weight, x_shape, stride, padding, dilation, groups):
    """dL/dx of ``y = conv(x, weight)`` given ``grad`` = dL/dy: weight-transposed products, then
    col2im. (This is also the forward of the transposed convolution.)"""
    n, o, ho, wo = grad.shape
    _, cg, kh, kw = weight.shape
    k = cg * kh * kw
    w_t = _blas(xp, weight.reshape(groups, o // groups, k)).transpose(0, 2, 1)     # (G, K, O/G)
    if ho * wo >= _MIN_POSITIONS_PER_SAMPLE or n == 1:
        cols = w_t @ _blas(xp, grad).reshape(n, groups, o // groups, ho * wo)     # (N, G, K, Ho*Wo)
        cols = cols.reshape(n, groups * cg, kh, kw, ho, wo)
    else:
        g = xp.ascontiguousarray(grad.reshape(n, o, ho * wo).transpose(1, 0, 2))
        cols = w_t @ g.reshape(groups, o // groups, n * ho * wo)                 # (G, K, N*Ho*Wo)
        cols = cols.reshape(groups * cg, kh, kw, n, ho, wo).transpose(3, 0, 1, 2, 4, 5)
    return col2im(xp, cols, x_shape, stride, padding, dilation)


def conv_weight_grad(xp, x, grad, weight_shape, stride, padding, dilation, groups):
    """dL/dweight of ``y = conv(x, weight)``: one product per group over all samples and positions,
    ``grad (O/G, N*Ho*Wo) @ columns (N*Ho*Wo, K)``."""
    n, o, ho, wo = grad.shape
    _, cg, kh, kw = weight_shape
    k = cg * kh * kw
    cols = im2col(xp, x, (kh, kw), stride, padding, dilation, (ho, wo), channels_first=True)
    cols = cols.reshape(groups, k, n * ho * wo)
    g = grad.reshape(n, groups, o // groups, ho * wo).transpose(1, 2, 0, 3)
    g = _blas(xp, g.reshape(groups, o // groups, n * ho * wo))              # copies (small)
    gw = g @ cols.transpose(0, 2, 1)                                          # (G, O/G, K)
    return gw.reshape(weight_shape)
