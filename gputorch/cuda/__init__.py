"""``gputorch.cuda``: CUDA devices (availability, the current device, synchronisation,
properties) and their random generators.

Nothing here imports CuPy until it is used. Without CuPy or a visible GPU,
``is_available()`` is False, ``device_count()`` is 0, and everything that needs a GPU
raises a RuntimeError saying why CUDA is unavailable.
"""
from .._device import device as Device
from ..backends import get_backend
from .random import (get_rng_state, get_rng_state_all, initial_seed, manual_seed,  # noqa: F401
                     manual_seed_all, seed, seed_all, set_rng_state, set_rng_state_all)
from . import memory  # noqa: E402,F401
from . import amp  # noqa: E402,F401
from .memory import (empty_cache, max_memory_allocated, max_memory_reserved, mem_get_info,  # noqa: F401
                     memory_allocated, memory_reserved, memory_stats, memory_summary,
                     reset_max_memory_allocated, reset_peak_memory_stats)

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize", "device",
           "device_of", "get_device_name", "get_device_capability", "is_initialized", "init",
           "get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "empty_cache", "mem_get_info", "memory_stats", "memory_summary"]


def _backend():
    return get_backend("cuda")


def _require():
    """The CUDA backend, or RuntimeError when CUDA is unavailable."""
    b = _backend()
    b._require()
    return b


def is_available():
    """True when CuPy is installed and at least one GPU is visible."""
    return _backend().is_available()


def device_count():
    """The number of visible GPUs (0 without CUDA)."""
    return _backend().device_count()


def is_initialized():
    """Whether CUDA has been set up in this process (CuPy loaded and a GPU found)."""
    b = _backend()
    return b._probed and b._cupy is not None


def init():
    """Set up CUDA now (it is otherwise set up on first use); RuntimeError if unavailable."""
    _require()


def _device_index(dev, optional=True):
    """A GPU ordinal from an int, a "cuda[:N]" string or a device; None/-1 stay -1 (no device)."""
    if dev is None:
        return -1
    if isinstance(dev, int) and not isinstance(dev, bool):
        return dev
    d = Device(dev)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    if d.index is None:
        if not optional:
            raise ValueError(f"Expected a cuda device with a specified index or an integer, but got: {dev}")
        return current_device()
    return d.index


def _cuda_device(dev="cuda"):
    """A concrete ``gputorch.device('cuda:N')`` (the current GPU for "cuda"), checked."""
    index = _device_index(dev)
    backend = _require()
    return backend.check_device(Device("cuda", current_device() if index == -1 else index))


def current_device():
    """The index of the current GPU."""
    return _require().current_index()


def set_device(device):
    """Make ``device`` (an int, "cuda:N" or a device) the current GPU; negative ints do nothing."""
    index = _device_index(device)
    if index < 0:
        return
    backend = _require()
    backend.check_device(Device("cuda", index))
    backend.xp.cuda.runtime.setDevice(index)


def synchronize(device=None):
    """Wait for all work queued on ``device`` (default: the current GPU) to finish."""
    backend = _require()
    backend.synchronize(None if device is None else _cuda_device(device))


class device:
    """Context manager that makes a GPU current: ``with gputorch.cuda.device(1): ...``.

    Accepts an int, a "cuda:N" string or a device; None or -1 make it a no-op.
    """

    def __init__(self, device):
        self.idx = _device_index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx == -1:
            return self
        self.prev_idx = current_device()
        if self.prev_idx != self.idx:
            set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx != -1 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """``device`` for the GPU holding tensor ``obj`` (a no-op for CPU tensors)."""

    def __init__(self, obj):
        super().__init__(obj.device.index if obj.is_cuda else -1)


def _properties(dev):
    index = _cuda_device("cuda" if dev is None else dev).index
    return _require().xp.cuda.runtime.getDeviceProperties(index)


def get_device_name(device=None):
    """The GPU's name, e.g. "NVIDIA H100 80GB HBM3"."""
    name = _properties(device)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def get_device_capability(device=None):
    """The GPU's compute capability as ``(major, minor)``."""
    props = _properties(device)
    return int(props["major"]), int(props["minor"])


# The legacy CUDA tensor types (cuda.FloatTensor, ...): see gputorch/_legacy_tensor_types.py.
from .._legacy_tensor_types import make_types as _make_legacy_types  # noqa: E402

_LEGACY_TYPES = _make_legacy_types("cuda", "gputorch.cuda")
globals().update(_LEGACY_TYPES)
__all__ += list(_LEGACY_TYPES)


# ---------------------------------------------------------------- streams and CUDA graphs
from .graphs import (CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing,  # noqa: E402,F401
                     make_graphed_callables)


def Stream(device=None, priority=0):
    """A CUDA stream (``gputorch.Stream`` on a CUDA device): ``gputorch.cuda.Stream()``."""
    from .._streams import Stream as _Stream
    return _Stream(_cuda_device("cuda" if device is None else device), priority=priority)


def Event(enable_timing=False, blocking=False, interprocess=False):
    """A CUDA event of the current device."""
    from .._streams import Event as _Event
    return _Event(_cuda_device(), enable_timing=enable_timing, blocking=blocking, interprocess=interprocess)


def current_stream(device=None):
    """The current stream of ``device`` (default: the current GPU)."""
    from .._streams import Stream as _Stream
    return _Stream._current(_cuda_device("cuda" if device is None else device).index)


class stream:
    """``with gputorch.cuda.stream(s):`` makes ``s`` the current stream in the block (None: no-op)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream.__enter__()
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream.__exit__(*exc)
        return False


__all__ += ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing", "make_graphed_callables",
            "Stream", "Event", "current_stream", "stream"]
