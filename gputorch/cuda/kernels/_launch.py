"""Launch helpers shared by the wrappers: kernel argument types, grid sizes, dtypes, addresses.

Scalars are passed as NumPy scalars of the kernel parameter's exact type (``long long`` ->
``int64``, ``double`` -> ``float64``, ``int`` -> ``int32``, ``unsigned long long`` -> ``uint64``);
a null pointer is ``None``. Kernels index with 64-bit integers and grid-stride loops, so the
grid is capped (:data:`MAX_BLOCKS`) whatever the size.
"""
import numpy as np

from ._source import ACC_DTYPES, CTYPES

BLOCK = 256
MAX_BLOCKS = 1 << 16
WARP = 32

i64 = np.int64
i32 = np.int32
f64 = np.float64
u64 = np.uint64


def ctype(dtype):
    """The kernels' C++ type for ``dtype`` (float32/float16/float64), or None."""
    return CTYPES.get(dtype)


def acc_dtype(dtype):
    return ACC_DTYPES[dtype]


def blocks(n, block=BLOCK):
    """Blocks for one thread per element of ``n`` (at least 1, at most MAX_BLOCKS)."""
    return max(1, min((int(n) + block - 1) // block, MAX_BLOCKS))


def contiguous(xp, a):
    return a if a.flags.c_contiguous else xp.ascontiguousarray(a)


def rounded(value, dtype):
    """A Python number rounded to ``dtype`` and back to a float64 (the generic path rounds Python
    scalars to the array's dtype before using them)."""
    with np.errstate(over="ignore"):
        return f64(dtype.type(value))


def address(a):
    """The device address of array ``a`` (CuPy: ``a.data.ptr``; host-backed arrays of the simulated
    device: their buffer's address)."""
    data = a.data
    ptr = getattr(data, "ptr", None)
    return int(ptr) if ptr is not None else int(a.ctypes.data)


def chunk_tables(xp, sizes, chunk):
    """``(chunk_tensor int32, chunk_start int64)`` device arrays: one entry per block, for blocks
    covering tensors of ``sizes`` in chunks of ``chunk`` elements (empty tensors get none)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    counts = (sizes + chunk - 1) // chunk
    tensor = np.repeat(np.arange(len(sizes), dtype=np.int32), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    start = (np.arange(len(tensor), dtype=np.int64) - first) * chunk
    return xp.asarray(tensor), xp.asarray(start.astype(np.int64))
