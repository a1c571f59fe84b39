"""Launch wrappers of ``kernels/im2col.cu``, and the three products of a convolution built on
them (the same products as ``gputorch/nn/functional/_windows.py``, with its im2col/col2im
replaced by one kernel launch each; the matrix products stay on cuBLAS through CuPy).
"""
from ._launch import BLOCK, blocks, contiguous, ctype, i32, i64
from ._module import function
from ._source import TYPES, family

FAMILY = family("im2col", "im2col.cu", [f"im2col<{t}, {cf}>" for t in TYPES for cf in ("false", "true")]
                + [f"col2im<{t}>" for t in TYPES])


def _geometry(kernel, stride, padding, dilation):
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    return (i32(kh), i32(kw)), (i32(sh), i32(sw), i32(padding[0][0]), i32(padding[1][0]), i32(dh), i32(dw))


def im2col(xp, x, kernel, stride, padding, dilation, out_hw, channels_first=False):
    """The windows of ``x`` (N, C, H, W) as columns ``(N, C, kh, kw, Ho, Wo)`` (or
    ``(C, kh, kw, N, Ho, Wo)`` with ``channels_first``), like ``_windows.im2col``; None when the
    kernels do not take x's dtype. Any strides of ``x`` are read as they are."""
    t = ctype(x.dtype)
    if t is None:
        return None
    n, c, h, w = x.shape
    kh, kw = kernel
    ho, wo = out_hw
    if (not channels_first and kh == kw == 1 and tuple(stride) == (1, 1) and h == ho and w == wo
            and padding[0][0] == 0 and padding[1][0] == 0):
        return x.reshape(n, c, 1, 1, ho, wo)      # a 1x1 convolution reads the input itself
    shape = (c, kh, kw, n, ho, wo) if channels_first else (n, c, kh, kw, ho, wo)
    cols = xp.empty(shape, dtype=x.dtype)
    if cols.size == 0:
        return cols
    (kh_, kw_), geo = _geometry(kernel, stride, padding, dilation)
    item = x.dtype.itemsize
    strides = tuple(i64(s // item) for s in x.strides)
    args = (x, cols, i64(n), i64(c), i64(h), i64(w), kh_, kw_, i64(ho), i64(wo), *geo, *strides)
    name = f"im2col<{t}, {'true' if channels_first else 'false'}>"
    function(FAMILY.name, name)((blocks(cols.size),), (BLOCK,), args)
    return cols


def col2im(xp, cols, x_shape, stride, padding, dilation):
    """Adjoint of :func:`im2col`: the columns ``(N, C, kh, kw, Ho, Wo)`` summed back into an
    image of ``x_shape``; None when the kernels do not take the dtype."""
    t = ctype(cols.dtype)
    if t is None:
        return None
    n, c, h, w = x_shape
    _, _, kh, kw, ho, wo = cols.shape
    out = xp.empty(tuple(x_shape), dtype=cols.dtype)
    if out.size == 0:
        return out
    if cols.size == 0:
        out[...] = 0
        return out
    (kh_, kw_), geo = _geometry((kh, kw), stride, padding, dilation)
    args = (contiguous(xp, cols), out, i64(n), i64(c), i64(h), i64(w), kh_, kw_, i64(ho), i64(wo), *geo)
    function(FAMILY.name, f"col2im<{t}>")((blocks(out.size),), (BLOCK,), args)
    return out


# ---------------------------------------------------------------- the three products of a convolution
# Shapes: x (N, C, H, W), weight (O, C/G, kh, kw), y (N, O, Ho, Wo); G groups. Same products and
# order as gputorch/nn/functional/_windows.py.

def conv_forward(xp, x, weight, stride, padding, dilation, groups, out_hw):
    n = x.shape[0]
    o, cg, kh, kw = weight.shape
    k = cg * kh * kw
    ho, wo = out_hw
    cols = im2col(xp, x, (kh, kw), stride, padding, dilation, out_hw)
    cols = cols.reshape(n, groups, k, ho * wo)
    y = weight.reshape(groups, o // groups, k) @ cols
    return y.reshape(n, o, ho, wo)


def conv_input_grad(xp, grad, weight, x_shape, stride, padding, dilation, groups):
    n, o, ho, wo = grad.shape
    _, cg, kh, kw = weight.shape
    k = cg * kh * kw
    w_t = weight.reshape(groups, o // groups, k).transpose(0, 2, 1)
    cols = w_t @ grad.reshape(n, groups, o // groups, ho * wo)
    cols = cols.reshape(n, groups * cg, kh, kw, ho, wo)
    return col2im(xp, cols, x_shape, stride, padding, dilation)


def conv_weight_grad(xp, x, grad, weight_shape, stride, padding, dilation, groups):
    n, o, ho, wo = grad.shape
    _, cg, kh, kw = weight_shape
    k = cg * kh * kw
    cols = im2col(xp, x, (kh, kw), stride, padding, dilation, (ho, wo), channels_first=True)
    cols = cols.reshape(groups, k, n * ho * wo)
    g = grad.reshape(n, groups, o // groups, ho * wo).transpose(1, 2, 0, 3)
    g = g.reshape(groups, o // groups, n * ho * wo)
    gw = g @ cols.transpose(0, 2, 1)
    return gw.reshape(weight_shape)
