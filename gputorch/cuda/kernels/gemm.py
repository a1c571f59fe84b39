"""Launch wrapper of ``kernels/gemm.cu``: a batched matrix product without cuBLAS.

CuPy refuses cuBLAS while a stream captures a CUDA graph, so during capture the products of
``gputorch.ops._gemm`` (matmul, mm, bmm, addmm, linear and their gradients) come from this
kernel (see ``gputorch.cuda.graphs``). It takes NumPy's matmul rules (1-D operands, broadcast
batch dimensions) and float16/float32/float64 operands of one dtype (float16 accumulated in
float32); transposed and broadcast operands are read through their strides, without a copy.
"""
import numpy as np

from ._launch import ctype, i64
from ._module import function
from ._source import TYPES, family

FAMILY = family("gemm", "gemm.cu", [f"gemm_strided<{t}>" for t in TYPES])

TILE = 16
MAX_GRID_Z = 65535


def _element_strides(a):
    size = a.itemsize
    if any(s % size for s in a.strides):
        return None
    return tuple(s // size for s in a.strides)


def matmul(xp, x, y):
    """``x @ y`` by the kernel; None when it does not take the operands (dtypes, sizes)."""
    t = ctype(x.dtype)
    if t is None or x.dtype != y.dtype or x.ndim == 0 or y.ndim == 0:
        return None
    x2 = x.reshape((1,) + x.shape) if x.ndim == 1 else x
    y2 = y.reshape(y.shape + (1,)) if y.ndim == 1 else y
    m, k = x2.shape[-2:]
    k2, n = y2.shape[-2:]
    if k != k2:
        return None
    batch_shape = tuple(np.broadcast_shapes(x2.shape[:-2], y2.shape[:-2]))
    batch = int(np.prod(batch_shape, dtype=np.int64))
    a = xp.broadcast_to(x2, batch_shape + (m, k))
    b = xp.broadcast_to(y2, batch_shape + (k, n))
    if len(batch_shape) != 1:   # one batch dimension (a reshape copies only where it must)
        a = a.reshape((batch, m, k))
        b = b.reshape((batch, k, n))
    sa, sb = _element_strides(a), _element_strides(b)
    if sa is None or sb is None:
        return None
    out = xp.empty((batch, m, n), dtype=x.dtype)
    if out.size:
        if k == 0:
            out[...] = 0
        else:
            grid = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE, max(1, min(batch, MAX_GRID_Z)))
            args = (a, b, out, i64(batch), i64(m), i64(n), i64(k)) + tuple(i64(s) for s in sa + sb)
            function(FAMILY.name, f"gemm_strided<{t}>")(grid, (TILE, TILE), args)
    out = out.reshape(batch_shape + (m, n))
    if x.ndim == 1:
        out = out[..., 0, :]
    if y.ndim == 1:
        out = out[..., 0]
    return out
