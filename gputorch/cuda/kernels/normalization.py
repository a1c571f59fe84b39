"""Launch wrappers of ``kernels/normalization.cu``: LayerNorm / RMSNorm over the trailing dims
(rows of the flattened normalized dims), BatchNorm statistics and normalization over
``(N, C, inner)``, and their gradients.

Statistics are in the accumulation dtype (float32 for float16 inputs); the affine parameters
are converted to it, as the generic path does.
"""
import math

from ._launch import BLOCK, MAX_BLOCKS, WARP, blocks, contiguous, ctype, f64, i64
from ._module import function
from ._source import ACC_CTYPES, ACC_DTYPES, TYPES, family
from .softmax import ELEMS, WARPS_PER_BLOCK, row_config

_BOOL = {False: "false", True: "true"}
PARAM_ROWS_PER_CHUNK = 1024

FAMILY = family("normalization", "normalization.cu", (
    [f"norm_{step}_warp<{t}, {ACC_CTYPES[t]}, {rms}, {e}>" for step in ("forward", "backward") for t in TYPES
     for rms in ("false", "true") for e in ELEMS]
    + [f"norm_{step}_block<{t}, {ACC_CTYPES[t]}, {rms}>" for step in ("forward", "backward") for t in TYPES
       for rms in ("false", "true")]
    + [f"norm_param_grads<{t}, {ACC_CTYPES[t]}, {rms}>" for t in TYPES for rms in ("false", "true")]
    + [f"{k}<{t}, {ACC_CTYPES[t]}>" for k in ("batch_norm_stats", "channel_affine", "batch_norm_backward_reduce",
                                               "batch_norm_backward_apply") for t in TYPES]))


def _param(xp, p, acc):
    return None if p is None else contiguous(xp, p.astype(acc, copy=False).reshape(-1))


def _row_launch(step, t, rms, rows, cols):
    kind, param = row_config(cols)
    if kind == "warp":
        return (f"norm_{step}_warp<{t}, {ACC_CTYPES[t]}, {_BOOL[rms]}, {param}>", blocks(rows, WARPS_PER_BLOCK),
                WARP * WARPS_PER_BLOCK)
    return f"norm_{step}_block<{t}, {ACC_CTYPES[t]}, {_BOOL[rms]}>", min(rows, MAX_BLOCKS), param


def rows_forward(xp, x, ndims, weight, bias, eps, rms):
    """``(y, mean, rstd)`` of layer norm (``rms``: RMS norm, mean None) over the last ``ndims``
    dims; mean/rstd shaped like the generic path's (the leading dims, then ``ndims`` ones)."""
    t = ctype(x.dtype)
    if t is None:
        return None
    acc = ACC_DTYPES[x.dtype]
    lead = x.shape[:x.ndim - ndims]
    rows, cols = math.prod(lead), math.prod(x.shape[x.ndim - ndims:])
    stat_shape = lead + (1,) * ndims
    y = xp.empty(x.shape, dtype=x.dtype)
    mean = None if rms else xp.empty(stat_shape, dtype=acc)
    rstd = xp.empty(stat_shape, dtype=acc)
    if rows == 0:
        return y, mean, rstd
    if cols == 0:   # statistics of nothing: NaN, as the generic 0/0
        if mean is not None:
            mean[...] = float("nan")
        rstd[...] = float("nan")
        return y, mean, rstd
    name, grid, block = _row_launch("forward", t, rms, rows, cols)
    args = (contiguous(xp, x), _param(xp, weight, acc), _param(xp, bias, acc), y, mean, rstd, i64(rows), i64(cols),
            f64(eps))
    function(FAMILY.name, name)((grid,), (block,), args)
    return y, mean, rstd


def rows_backward(xp, grad, x, mean, rstd, weight, ndims, rms, need_input=True, need_weight=False,
                  need_bias=False):
    """``(gx, gw, gb)`` of layer norm / RMS norm (None where not needed; gw/gb in the
    accumulation dtype, shaped like the normalized dims)."""
    t = ctype(x.dtype)
    if t is None or grad.dtype != x.dtype:
        return None
    acc = ACC_DTYPES[x.dtype]
    norm_shape = x.shape[x.ndim - ndims:]
    rows, cols = math.prod(x.shape[:x.ndim - ndims]), math.prod(norm_shape)
    grad, x = contiguous(xp, grad), contiguous(xp, x)
    mean_flat = None if rms else contiguous(xp, mean.reshape(-1))
    rstd_flat = contiguous(xp, rstd.reshape(-1))
    gx = gw = gb = None
    if need_input:
        gx = xp.empty(x.shape, dtype=x.dtype)
        if rows and cols:
            name, grid, block = _row_launch("backward", t, rms, rows, cols)
            args = (grad, x, mean_flat, rstd_flat, _param(xp, weight, acc), gx, i64(rows), i64(cols))
            function(FAMILY.name, name)((grid,), (block,), args)
    if need_weight or need_bias:
        gw, gb = _param_grads(xp, t, grad, x, mean_flat, rstd_flat, rows, cols, rms, need_bias, acc)
        gw = gw.reshape(norm_shape)
        gb = None if gb is None else gb.reshape(norm_shape)
    return gx, gw, gb


def _param_grads(xp, t, grad, x, mean, rstd, rows, cols, rms, need_bias, acc):
    chunks = max(1, (rows + PARAM_ROWS_PER_CHUNK - 1) // PARAM_ROWS_PER_CHUNK)
    if rows == 0 or cols == 0:
        zero = xp.zeros(cols, dtype=acc)
        return zero, (zero.copy() if need_bias else None)
    gw = xp.empty((chunks, cols), dtype=acc)
    gb = xp.empty((chunks, cols), dtype=acc) if need_bias else None
    tiles = (cols + 31) // 32
    args = (grad, x, mean, rstd, gw, gb, i64(rows), i64(cols), i64(PARAM_ROWS_PER_CHUNK))
    function(FAMILY.name, f"norm_param_grads<{t}, {ACC_CTYPES[t]}, {_BOOL[rms]}>")((tiles * chunks,), (BLOCK,),
                                                                                  args)
    return gw.sum(axis=0), (None if gb is None else gb.sum(axis=0))


def channel_layout(shape):
    """``(N, C, inner)`` of a batch-norm input ``(N, C, *)``."""
    return shape[0], shape[1], math.prod(shape[2:])


def _stats_block(count):
    return 128 if count <= 2048 else 512


def batch_stats(xp, x):
    """``(mean, m2)`` per channel (accumulation dtype, shape (C,)) of ``x`` (N, C, *), or None."""
    t = ctype(x.dtype)
    if t is None:
        return None
    acc = ACC_DTYPES[x.dtype]
    n, c, inner = channel_layout(x.shape)
    mean, m2 = xp.empty(c, dtype=acc), xp.empty(c, dtype=acc)
    if c == 0:
        return mean, m2
    if n * inner == 0:
        mean[...] = float("nan")
        m2[...] = 0
        return mean, m2
    args = (contiguous(xp, x), mean, m2, i64(n), i64(c), i64(inner))
    function(FAMILY.name, f"batch_norm_stats<{t}, {ACC_CTYPES[t]}>")((min(c, MAX_BLOCKS),), (_stats_block(n * inner),),
                                                                      args)
    return mean, m2


def channel_affine(xp, x, mean, rstd, weight, bias):
    """``((x - mean) * rstd) * weight + bias`` with per-channel (C,) statistics and parameters."""
    t = ctype(x.dtype)
    acc = ACC_DTYPES[x.dtype]
    n, c, inner = channel_layout(x.shape)
    y = xp.empty(x.shape, dtype=x.dtype)
    if y.size:
        args = (contiguous(xp, x), _param(xp, mean, acc), _param(xp, rstd, acc), _param(xp, weight, acc),
                _param(xp, bias, acc), y, i64(y.size), i64(c), i64(inner))
        function(FAMILY.name, f"channel_affine<{t}, {ACC_CTYPES[t]}>")((blocks(y.size),), (BLOCK,), args)
    return y


def batch_backward(xp, grad, x, mean, rstd, weight, need_input=True, need_weight=False, need_bias=False):
    """``(gx, gw, gb)`` of training-mode batch norm (gw/gb (C,) in the accumulation dtype)."""
    t = ctype(x.dtype)
    if t is None or grad.dtype != x.dtype:
        return None
    acc = ACC_DTYPES[x.dtype]
    n, c, inner = channel_layout(x.shape)
    grad, x = contiguous(xp, grad), contiguous(xp, x)
    mean, rstd = _param(xp, mean, acc), _param(xp, rstd, acc)
    sum_g, sum_gx = xp.zeros(c, dtype=acc), xp.zeros(c, dtype=acc)
    if c and n * inner:
        args = (grad, x, mean, rstd, sum_g, sum_gx, i64(n), i64(c), i64(inner))
        function(FAMILY.name, f"batch_norm_backward_reduce<{t}, {ACC_CTYPES[t]}>")(
            (min(c, MAX_BLOCKS),), (_stats_block(n * inner),), args)
    gx = None
    if need_input:
        gx = xp.empty(x.shape, dtype=x.dtype)
        if gx.size:
            args = (grad, x, mean, rstd, _param(xp, weight, acc), sum_g, sum_gx, gx, i64(gx.size), i64(c), i64(inner),
                    f64(n * inner))
            function(FAMILY.name, f"batch_norm_backward_apply<{t}, {ACC_CTYPES[t]}>")((blocks(gx.size),), (BLOCK,),
                                                                                       args)
    return gx, (sum_gx if need_weight else None), (sum_g if need_bias else None)
