"""glibc's malloc set up for array temporaries.

NumPy takes every array's memory from ``malloc``. By default glibc hands out blocks above its
``mmap`` threshold (128 KiB at first, then the size of the largest block freed) as fresh mappings,
and gives freed memory at the top of the heap back to the system once more than twice that is
free. An op on a 0.5 MiB activation then writes into pages the kernel must fault in and zero,
each time: measured on a 2-core EPYC, the float32 ``erf`` of a (8, 64, 256) tensor took 0.98 ms
with 480 page faults a call, and 0.21 ms with none once the memory was kept, which is what this
module arranges (the GELU of the small GPT step spends most of its time there).

:func:`tune` raises the ``mmap`` threshold to ``MMAP_THRESHOLD`` (blocks below it come from the
heap and are reused) and keeps up to ``TRIM_THRESHOLD`` of free heap before returning memory to
the system. Peak resident memory is unchanged (what is kept was in use at the peak); between
steps the process keeps that memory instead of faulting it back in. Only on Linux with glibc;
``GPUTORCH_MALLOC_TUNING=0`` in the environment leaves malloc as it is.
"""
import ctypes
import os
import sys

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "tune", "tuned"]

MMAP_THRESHOLD = 32 << 20     # glibc's largest allowed value on 64-bit systems
TRIM_THRESHOLD = 256 << 20

_M_TRIM_THRESHOLD = -1        # mallopt parameter numbers from glibc's malloc.h
_M_MMAP_THRESHOLD = -3

_STATE = {"tuned": False}


def _glibc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version   # only glibc has it (musl does not)
        return libc
    except (OSError, AttributeError):
        return None


def tune():
    """Apply the thresholds (once, unless ``GPUTORCH_MALLOC_TUNING=0``); returns whether they are set."""
    if _STATE["tuned"] or os.environ.get("GPUTORCH_MALLOC_TUNING", "1") == "0":
        return _STATE["tuned"]
    libc = _glibc()
    if libc is None:
        return False
    _STATE["tuned"] = bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return _STATE["tuned"]


def tuned():
    """Whether :func:`tune` has set the thresholds in this process."""
    return _STATE["tuned"]
