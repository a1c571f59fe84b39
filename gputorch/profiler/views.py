"""The three views of GPU memory, side by side in the report.

1. **tracked**: the bytes of the storages the profiler tracks on that GPU (numel x itemsize).
2. **allocator**: CuPy's memory pool: *used* bytes (blocks handed to arrays) and *total* bytes
   (used plus cached free blocks), now and at their peaks while profiling.
3. **device**: NVML (``nvidia-ml-py``, when importable): the bytes this process holds on the GPU
   and the whole GPU's used and total bytes; "n/a" without NVML (or on the simulated device).

The gaps, explained in the printed report:

- allocator used - tracked: each allocation is rounded up to a multiple of 512 bytes, and arrays
  that are not tensors (op scratch space alive at that moment, RNG states) are not tracked;
- allocator total - used: free blocks the pool keeps cached for reuse (``empty_cache()``);
- process - allocator total: the CUDA context, loaded kernels and library workspaces (cuBLAS).
"""
__all__ = ["watch_peaks", "unwatch_peaks", "collect", "GAP_NOTES"]

GAP_NOTES = (
    "allocator used - tracked: every allocation is rounded up to a multiple of 512 B; arrays that are "
    "not tensors (op scratch space, RNG states) are not tracked",
    "allocator total - used: free blocks cached by the pool for reuse (gputorch.cuda.empty_cache() "
    "returns them)",
    "device (this process) - allocator total: the CUDA context, loaded kernels, cuBLAS/cuDNN workspaces",
)


def _cuda_available():
    try:
        from .. import cuda
        return cuda.is_available()
    except Exception:
        return False


def watch_peaks():
    """A peak watcher on the allocator while profiling (None without CUDA)."""
    if not _cuda_available():
        return None
    from ..cuda import memory
    try:
        return memory.watch_peaks()
    except Exception:
        return None


def unwatch_peaks(watcher):
    if watcher is not None:
        from ..cuda import memory
        memory.unwatch_peaks(watcher)


def collect(device_names, watcher):
    """``{"cuda:N": {"allocator": {...} | None, "device": {...} | None}}`` for the CUDA devices named."""
    out = {}
    for name in device_names:
        if not name.startswith("cuda"):
            continue
        index = int(name.split(":")[1]) if ":" in name else 0
        out[name] = {"allocator": _allocator(index, watcher), "device": _nvml(index)}
    return out


def _allocator(index, watcher):
    if not _cuda_available():
        return None
    try:
        from ..cuda import memory
        used, total = memory._usage(index)
        view = {"used": used, "total": total, "peak_used": None, "peak_total": None}
        if watcher is not None:
            view["peak_used"], view["peak_total"] = watcher.peak(index)
        return view
    except Exception:
        return None


def _nvml(index):
    """This process's and the whole GPU's memory from NVML, or None."""
    import os
    if os.environ.get("GPUTORCH_SIMULATE_CUDA"):
        return None
    try:
        import pynvml
    except ImportError:
        return None
    try:
        from .. import cuda
        pynvml.nvmlInit()
        handle = None
        try:
            bus_id = cuda._require().xp.cuda.Device(index).pci_bus_id
            handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id.encode() if isinstance(bus_id, str) else bus_id)
        except Exception:
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        info = pynvml.nvmlDeviceGetMemoryInfo(handle)
        process = None
        pid = os.getpid()
        for getter in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
            try:
                for p in getattr(pynvml, getter)(handle):
                    if p.pid == pid and p.usedGpuMemory is not None:
                        process = (process or 0) + int(p.usedGpuMemory)
            except Exception:
                pass
        return {"process": process, "used": int(info.used), "total": int(info.total)}
    except Exception:
        return None
