"""CUDA memory statistics (PyTorch's ``torch.cuda`` memory API), from CuPy's memory pool.

gputorch allocates device memory through CuPy's default memory pool, so:

- ``memory_allocated`` is the pool's used bytes (blocks handed to arrays, each rounded up to a
  multiple of 512 bytes), ``memory_reserved`` its total bytes (used plus cached free blocks,
  which ``empty_cache()`` returns to the driver);
- CuPy's pool keeps no peak, so gputorch tracks one: ``max_memory_allocated`` and
  ``max_memory_reserved`` are the highest values seen since the first call to one of the peak
  functions (``max_memory_*``, ``reset_peak_memory_stats``, ``memory_stats``,
  ``memory_summary``) or since the last reset. Peaks are sampled at every CUDA tensor creation
  and, on real CuPy, updated by an allocator hook at every pool allocation and free;
- ``mem_get_info`` asks the driver (free and total bytes of the whole device).

Without CUDA, every function raises the RuntimeError that says why CUDA is unavailable, except
``empty_cache``, which then does nothing (as in PyTorch, so CPU scripts that call it still run).
"""
from .._device import device as Device
from ..backends import get_backend

__all__ = ["memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "reset_peak_memory_stats", "reset_max_memory_allocated", "empty_cache", "mem_get_info",
           "memory_stats", "memory_summary", "PeakWatcher", "watch_peaks", "unwatch_peaks"]


def _require():
    b = get_backend("cuda")
    b._require()
    return b


def _index(device):
    """A checked GPU ordinal for ``device`` (None: the current GPU)."""
    from . import _device_index
    backend = _require()
    index = _device_index(device)
    if index == -1:
        index = backend.current_index()
    backend.check_device(Device("cuda", index))
    return index


def _usage(index):
    """(used, total) bytes of GPU ``index``'s default memory pool."""
    xp = _require().xp
    with xp.cuda.Device(index):
        pool = xp.get_default_memory_pool()
        return int(pool.used_bytes()), int(pool.total_bytes())


# ---------------------------------------------------------------------- peaks
class PeakWatcher:
    """Highest pool usage seen per GPU since the watcher started (or was reset)."""

    def __init__(self):
        self.used = {}
        self.total = {}

    def note(self, index, used, total=None):
        if used > self.used.get(index, -1):
            self.used[index] = used
        if total is not None and total > self.total.get(index, -1):
            self.total[index] = total

    def reset(self, index, used, total):
        self.used[index] = used
        self.total[index] = total

    def peak(self, index):
        """(peak used, peak total) for GPU ``index`` (at least the current usage)."""
        used, total = _usage(index)
        self.note(index, used, total)
        return self.used[index], self.total[index]


_watchers = []
_default = []          # the watcher behind max_memory_allocated() and friends, once started
_counters = {}         # GPU -> used bytes, kept by the allocator hook between samples
_hooks = []            # what is installed while watchers exist


def watch_peaks():
    """A new :class:`PeakWatcher`, updated while it is watched (see :func:`unwatch_peaks`). No GPU
    is touched here (making a device current can create its CUDA context): a GPU's peak starts at
    its usage when first sampled."""
    _require()
    watcher = PeakWatcher()
    _watchers.append(watcher)
    if not _hooks:
        _install()
    return watcher


def unwatch_peaks(watcher):
    if watcher in _watchers:
        _watchers.remove(watcher)
    if not _watchers and _hooks:
        _uninstall()


def _sample(index):
    used, total = _usage(index)
    _counters[index] = used
    for w in _watchers:
        w.note(index, used, total)


def _on_tensor(t):
    dev = t._device
    if dev.type == "cuda":
        _sample(dev.index)


def _on_malloc(index, size):
    used = _counters.get(index, 0) + size
    _counters[index] = used
    for w in _watchers:
        w.note(index, used)


def _on_free(index, size):
    _counters[index] = _counters.get(index, 0) - size


def _install():
    from .. import _tensor
    _tensor.CREATION_HOOKS.append(_on_tensor)
    _hooks.append(("tensor", _on_tensor))
    xp = _require().xp
    base = getattr(getattr(xp, "cuda", None), "MemoryHook", None)
    if base is None:         # the simulated CuPy: tensor creations only
        return
    try:
        hook = _allocator_hook(base)
        hook.__enter__()
    except Exception:        # an older CuPy without hooks: tensor creations only
        return
    _hooks.append(("cupy", hook))


def _uninstall():
    from .. import _tensor
    for kind, hook in _hooks:
        if kind == "tensor":
            if hook in _tensor.CREATION_HOOKS:
                _tensor.CREATION_HOOKS.remove(hook)
        else:
            try:
                hook.__exit__(None, None, None)
            except Exception:
                pass
    _hooks.clear()


def _allocator_hook(base):
    class _PeakHook(base):
        """Counts pool allocations and frees (no pool calls inside the hook: only arithmetic)."""
        name = "gputorch_peak_memory"

        def malloc_postprocess(self, **kw):
            _on_malloc(kw.get("device_id", 0), kw.get("mem_size", 0))

        def free_postprocess(self, **kw):
            _on_free(kw.get("device_id", 0), kw.get("mem_size", 0))

    return _PeakHook()


def _default_watcher():
    if not _default:
        _default.append(watch_peaks())
    return _default[0]


# ---------------------------------------------------------------------- the PyTorch API
def memory_allocated(device=None):
    """Bytes of GPU memory held by arrays now (the pool's used bytes)."""
    return _usage(_index(device))[0]


def max_memory_allocated(device=None):
    """The highest :func:`memory_allocated` seen since peaks are tracked or were reset."""
    index = _index(device)
    return _default_watcher().peak(index)[0]


def memory_reserved(device=None):
    """Bytes of GPU memory the pool holds now (used plus cached free blocks)."""
    return _usage(_index(device))[1]


def max_memory_reserved(device=None):
    """The highest :func:`memory_reserved` seen since peaks are tracked or were reset."""
    index = _index(device)
    return _default_watcher().peak(index)[1]


def reset_peak_memory_stats(device=None):
    """Start the peaks over from the current usage."""
    index = _index(device)
    used, total = _usage(index)
    _counters[index] = used
    _default_watcher().reset(index, used, total)


def reset_max_memory_allocated(device=None):
    """Deprecated alias of :func:`reset_peak_memory_stats` (as in PyTorch)."""
    reset_peak_memory_stats(device)


def empty_cache():
    """Return the pool's cached free blocks to the driver (nothing to do without CUDA)."""
    backend = get_backend("cuda")
    if not backend.is_available():
        return
    xp = backend.xp
    # The current GPU and those gputorch has put tensors on (making another GPU current could
    # create a CUDA context there).
    used = {backend.current_index()}
    used |= {d.index for d in set(Device._interned.values())
             if d.type == "cuda" and d.index is not None and d._backend is not None}
    for index in sorted(used):
        with xp.cuda.Device(index):
            xp.get_default_memory_pool().free_all_blocks()


def mem_get_info(device=None):
    """``(free, total)`` bytes of the whole GPU, as the driver reports them."""
    index = _index(device)
    xp = _require().xp
    with xp.cuda.Device(index):
        free, total = xp.cuda.runtime.memGetInfo()
    return int(free), int(total)


def memory_stats(device=None):
    """A dict of allocator statistics with PyTorch's key names (the subset the pool provides)."""
    index = _index(device)
    used, total = _usage(index)
    peak_used, peak_total = _default_watcher().peak(index)
    stats = {
        "allocated_bytes.all.current": used,
        "allocated_bytes.all.peak": peak_used,
        "reserved_bytes.all.current": total,
        "reserved_bytes.all.peak": peak_total,
        "inactive_split_bytes.all.current": total - used,
        "active_bytes.all.current": used,
        "active_bytes.all.peak": peak_used,
    }
    return dict(sorted(stats.items()))


def memory_summary(device=None, abbreviated=False):
    """A printable table of :func:`memory_stats`."""
    index = _index(device)
    s = memory_stats(index)
    lines = [
        "=" * 62,
        f" gputorch CUDA memory summary, device {index} (CuPy default memory pool)",
        "-" * 62,
        f" {'Metric':<36}{'Current':>12}{'Peak':>12}",
        "-" * 62,
        f" {'Allocated memory (pool used)':<36}{_fmt(s['allocated_bytes.all.current']):>12}"
        f"{_fmt(s['allocated_bytes.all.peak']):>12}",
        f" {'Reserved memory (pool total)':<36}{_fmt(s['reserved_bytes.all.current']):>12}"
        f"{_fmt(s['reserved_bytes.all.peak']):>12}",
        f" {'Cached free memory':<36}{_fmt(s['inactive_split_bytes.all.current']):>12}{'':>12}",
    ]
    if not abbreviated:
        try:
            free, total = mem_get_info(index)
            lines.append(f" {'Device memory used (driver)':<36}{_fmt(total - free):>12}{'':>12}")
            lines.append(f" {'Device memory total (driver)':<36}{_fmt(total):>12}{'':>12}")
        except Exception:
            pass
    lines.append("=" * 62)
    return "\n".join(lines) + "\n"


def _fmt(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024.0
