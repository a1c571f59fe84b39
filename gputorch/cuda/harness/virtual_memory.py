"""Huge arrays for checking 64-bit index math without the memory: ``virtual_array``.

A kernel's behaviour beyond 2^31 elements (an ``int`` index that overflows, a
``blockIdx.x * blockDim.x`` computed in 32 bits) can be checked on the harness without
allocating the memory: ``virtual_array`` reserves the address space with
``MAP_NORESERVE``, so only the pages a launch touches take RAM, and the launch runs only a
few blocks of its (up to 2^31 - 1 blocks) grid with ``kernel(..., blocks=[...])``::

    n = 2**31 + 1000
    x = virtual_array(n, np.float32)      # 8 GiB of address space, ~nothing resident
    y = virtual_array(n, np.float32)
    x[-1000:] = np.arange(1000)
    grid = (n + 255) // 256
    kernel(grid, 256, (x, y, np.int64(n)), blocks=[0, *range(grid - 4, grid)])  # the last 1000 elements
    assert (y[-1000:] == 2 * np.arange(1000)).all()

An index computed in 32 bits instead lands outside the arrays: the launch fails with an
illegal-address error (or, where it hits mapped memory, leaves the checked elements wrong).
"""
import math
import mmap

import numpy as np

MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)  # Linux value; mmap exposes it from Python 3.13


def virtual_array(shape, dtype=np.float32):
    """A zero-filled C-contiguous array whose memory is committed only where it is written or read."""
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    count = math.prod(shape)
    nbytes = max(count * dtype.itemsize, 1)
    flags = mmap.MAP_PRIVATE | getattr(mmap, "MAP_ANONYMOUS", 0x20) | MAP_NORESERVE
    buf = mmap.mmap(-1, nbytes, flags=flags, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    return np.frombuffer(buf, dtype=dtype, count=count).reshape(shape)
