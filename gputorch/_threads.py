"""``set_num_threads``/``get_num_threads`` and the inter-op pair.

gputorch's CPU math runs in NumPy, whose matrix products and decompositions run in its BLAS
library's thread pool: ``set_num_threads`` sizes that pool through ``threadpoolctl`` (a
dependency) for the products large enough to gain from threads (``backends.blas_threads``), and
``get_num_threads`` reads that count back. Without ``threadpoolctl`` the number is only recorded
(with one warning that it has no effect). gputorch runs no inter-op thread pool:
``set_num_interop_threads`` records its number, once, as PyTorch allows it once.
"""
import operator
import os
import warnings

from .backends import blas_threads

__all__ = ["set_num_threads", "get_num_threads", "set_num_interop_threads", "get_num_interop_threads",
           "init_num_threads"]

_state = {"threads": None, "interop": None, "warned": False}


def _check_count(name, n):
    if isinstance(n, bool) or not hasattr(type(n), "__index__"):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    n = operator.index(n)
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return n


def _cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # not on Linux
        return os.cpu_count() or 1


def set_num_threads(int):  # noqa: A002 - PyTorch's argument name
    """Use ``int`` threads for intra-op parallelism on the CPU (NumPy's BLAS thread pool, for the
    products large enough to gain from it: see ``backends.blas_threads``)."""
    n = _check_count("set_num_threads", int)
    _state["threads"] = n
    if not blas_threads.pools():
        if not _state["warned"]:
            _state["warned"] = True
            warnings.warn("gputorch.set_num_threads has no effect: no BLAS thread pool could be reached (it "
                          "needs the `threadpoolctl` package, a dependency of gputorch, and a BLAS it knows); "
                          "NumPy's BLAS keeps its own thread count", RuntimeWarning, stacklevel=2)
        return
    blas_threads.configure(n)


def get_num_threads():
    """The number of threads of the CPU's intra-op pool (NumPy's BLAS thread pool, for large products)."""
    n = blas_threads.configured()
    if n is not None:
        return n
    if _state["threads"] is not None:
        return _state["threads"]
    return _cpu_count()


def set_num_interop_threads(int):  # noqa: A002 - PyTorch's argument name
    """Set the number of inter-op threads (recorded: gputorch runs ops one after another).
    As in PyTorch, this can be done once."""
    n = _check_count("set_num_interop_threads", int)
    if _state["interop"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _state["interop"] = n


def get_num_interop_threads():
    """The number of inter-op threads (as set, else the number of usable CPU cores)."""
    return _state["interop"] if _state["interop"] is not None else _cpu_count()


def init_num_threads():
    """PyTorch sets up the calling thread's intra-op pool; NumPy's BLAS pool is process-wide: nothing to do."""
