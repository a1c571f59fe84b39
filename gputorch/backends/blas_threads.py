"""NumPy's BLAS thread pool, sized per matrix product.

A multi-threaded GEMM splits its work across the pool and waits for the slowest thread. For a
small product the split costs more than it saves, and on a machine whose cores are busy with
other work it costs far more: a thread that the scheduler has parked holds up the product for a
whole time slice. Measured on a 2-core machine with one other busy process, a
(16, 256) @ (256, 1024) product took 3.0 ms with OpenBLAS's two threads and 0.13 ms with one, and
an LSTM language-model step (a few hundred such products) went from 96 ms to 1.3 s.

So gputorch chooses, as PyTorch does in its own pool: products of fewer than
``SMALL_PRODUCT_MACS`` multiply-adds run on one thread, larger ones on the configured count
(``gputorch.set_num_threads``; by default the count the BLAS library started with, which follows
``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS``). The library is only called when the wanted count
changes, so a run of small products costs nothing after the first.

The pool is reached through ``threadpoolctl``; without it (or without a BLAS it knows) nothing is
changed.
"""
import threading

__all__ = ["SMALL_PRODUCT_MACS", "prepare_product", "configure", "configured", "pools"]

SMALL_PRODUCT_MACS = 1 << 26   # about 2 ms of one core's float32 GEMM

_lock = threading.Lock()


class _Pool:
    controllers = None    # threadpoolctl's controllers of the BLAS libraries; () when there are none
    configured = 1        # the count for large products
    current = None        # the count last set


_POOL = _Pool()


def pools():
    """The BLAS libraries' threadpoolctl controllers (found on first use; ``()`` without threadpoolctl)."""
    if _POOL.controllers is None:
        with _lock:
            if _POOL.controllers is None:
                try:
                    import threadpoolctl
                except ImportError:
                    found = ()
                else:
                    found = tuple(threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers)
                _POOL.configured = max([c.num_threads for c in found], default=1)
                _POOL.current = _POOL.configured
                _POOL.controllers = found
    return _POOL.controllers


def _set(n):
    for c in _POOL.controllers:
        c.set_num_threads(n)
    _POOL.current = n


def configure(n):
    """Use ``n`` threads for large products from now on (``gputorch.set_num_threads``)."""
    pools()
    _POOL.configured = n
    _set(n)


def configured():
    """The thread count for large products; None when no BLAS pool can be reached."""
    return _POOL.configured if pools() else None


def prepare_product(macs):
    """Size the pool for a product of ``macs`` multiply-adds (call just before it, on the CPU)."""
    controllers = _POOL.controllers
    if controllers is None:
        controllers = pools()
    if not controllers:
        return
    want = 1 if macs < SMALL_PRODUCT_MACS else _POOL.configured
    if want != _POOL.current:
        _set(want)
