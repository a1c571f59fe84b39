"""Launch wrappers of ``kernels/reductions.cu``: the fused sum of squares of many tensors (one
launch, for gradient-norm clipping) and column sums (bias gradients)."""
import numpy as np

from ._launch import BLOCK, address, chunk_tables, contiguous, ctype, i64
from ._module import function
from ._source import ACC_CTYPES, ACC_DTYPES, TYPES, family

CHUNK = 65536
ROWS_PER_CHUNK = 1024

FAMILY = family("reductions", "reductions.cu",
                [f"{k}<{t}, {ACC_CTYPES[t]}>" for k in ("multi_tensor_sum_squares", "column_sums") for t in TYPES])


def _capturing():
    """While a CUDA graph is captured the generic path runs (the pointer tables would be
    host-to-device copies inside the graph)."""
    from ..graphs import capturing
    return capturing()


def sum_of_squares(xp, arrays):
    """``[sum(a * a)]`` per array (0-d arrays in the accumulation dtype: float32 for float16 and
    float32, float64 for float64), one launch per dtype; None when some array's dtype is not
    taken. Non-contiguous arrays are copied first."""
    if any(ctype(a.dtype) is None for a in arrays) or _capturing():
        return None
    arrays = [contiguous(xp, a) for a in arrays]
    results = [None] * len(arrays)
    by_dtype = {}
    for i, a in enumerate(arrays):
        by_dtype.setdefault(a.dtype, []).append(i)
    for dtype, idx in by_dtype.items():
        out = _per_tensor(xp, dtype, [arrays[i] for i in idx])
        for j, i in enumerate(idx):
            results[i] = out[j]
    return results


def total_sum_of_squares(xp, arrays):
    """``sum over arrays of sum(a * a)`` as a 0-d array (float64 when some array is float64, else
    float32), one launch per dtype; None when some array's dtype is not taken."""
    if any(ctype(a.dtype) is None for a in arrays) or _capturing():
        return None
    by_dtype = {}
    for a in arrays:
        by_dtype.setdefault(a.dtype, []).append(contiguous(xp, a))
    acc = np.float64 if np.dtype(np.float64) in by_dtype else np.float32
    total = None
    for dtype, group in by_dtype.items():
        part = _per_tensor(xp, dtype, group).sum().astype(acc)
        total = part if total is None else total + part
    return xp.zeros((), acc) if total is None else total


def _per_tensor(xp, dtype, arrays):
    """Per-array sums of squares (contiguous arrays of one dtype) in one launch."""
    t = ctype(dtype)
    out = xp.zeros(len(arrays), dtype=ACC_DTYPES[dtype])
    sizes = [a.size for a in arrays]
    chunk_tensor, chunk_start = chunk_tables(xp, sizes, CHUNK)
    nblocks = int(chunk_tensor.shape[0])
    if nblocks:
        ptrs = xp.asarray(np.array([address(a) for a in arrays], dtype=np.uint64))
        args = (ptrs, xp.asarray(np.asarray(sizes, dtype=np.int64)), chunk_tensor, chunk_start, i64(CHUNK), out)
        function(FAMILY.name, f"multi_tensor_sum_squares<{t}, {ACC_CTYPES[t]}>")((nblocks,), (BLOCK,), args)
    return out


def column_sums(xp, x):
    """Sums over the rows of ``x`` (rows, cols) in the accumulation dtype, shape (cols,)."""
    t = ctype(x.dtype)
    if t is None:
        return None
    rows, cols = x.shape
    acc = ACC_DTYPES[x.dtype]
    if rows == 0 or cols == 0:
        return xp.zeros(cols, dtype=acc)
    chunks = (rows + ROWS_PER_CHUNK - 1) // ROWS_PER_CHUNK
    partial = xp.empty((chunks, cols), dtype=acc)
    tiles = (cols + 31) // 32
    args = (contiguous(xp, x), partial, i64(rows), i64(cols), i64(ROWS_PER_CHUNK))
    function(FAMILY.name, f"column_sums<{t}, {ACC_CTYPES[t]}>")((tiles * chunks,), (BLOCK,), args)
    return partial.sum(axis=0)
