"""The simulated CuPy's memory pool, memory pointers, streams and events (tests only).

The pool counts the buffers of live simulated arrays: every simulated array's memory owner
(the NumPy array at the bottom of its ``base`` chain) is registered once, with a weak
reference whose callback returns its bytes to the pool when the last view is gone. Sizes are rounded
up to CuPy's 512-byte allocation unit. Like CuPy's pool, freed blocks stay cached (still
counted by ``total_bytes``) and are reused by allocations of the same rounded size, until
``free_all_blocks()``.
"""
import os
import time
import weakref

import numpy as np

from . import simulated_cupy_graph as _graph

ALLOCATION_UNIT = 512
DEFAULT_DEVICE_MEMORY = 16 << 30


_parsed = {}


def device_memory():
    """Bytes of memory of each simulated device (``GPUTORCH_SIMULATE_CUDA_MEMORY``, default 16 GiB)."""
    raw = os.environ.get("GPUTORCH_SIMULATE_CUDA_MEMORY", "")
    value = _parsed.get(raw)
    if value is None:
        text = raw.strip().upper().removesuffix("B").removesuffix("I")
        if not text:
            value = DEFAULT_DEVICE_MEMORY
        else:
            scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(text[-1], 1)
            value = int(float(text.rstrip("KMGT")) * scale)
        _parsed[raw] = value
    return value


class OutOfMemoryError(MemoryError):
    """``cupy.cuda.memory.OutOfMemoryError``."""

    def __init__(self, size, total, limit=0):
        self.size, self.total, self.limit = size, total, limit
        msg = f"Out of memory allocating {size:,} bytes (allocated so far: {total:,} bytes"
        msg += f", limit set to: {limit:,} bytes)." if limit else ")."
        super().__init__(msg)


class _DevicePool:
    def __init__(self, device):
        self.device = device
        self.used = 0
        self.cached = {}          # rounded size -> number of free blocks
        self.cached_bytes = 0
        self.limit = 0

    def malloc(self, size):
        if self.cached_bytes and self.cached.get(size):
            self.cached[size] -= 1
            self.cached_bytes -= size
            self.used += size
            return
        memory = device_memory()
        limit = min(self.limit, memory) if self.limit else memory
        if self.used + self.cached_bytes + size > limit:
            self.free_all()
            if self.used + size > limit:
                raise OutOfMemoryError(size, self.used, self.limit)
        self.used += size

    def free(self, size):
        self.used -= size
        self.cached[size] = self.cached.get(size, 0) + 1
        self.cached_bytes += size

    def free_all(self):
        self.cached.clear()
        self.cached_bytes = 0


class _Pools:
    def __init__(self):
        self._pools = {}
        self._owners = {}  # id(owner) -> weak reference whose callback returns the bytes

    def pool(self, device):
        p = self._pools.get(device)
        if p is None:
            p = self._pools[device] = _DevicePool(device)
        return p

    def track(self, array, device):
        """Register the memory owner of the NumPy array behind a new simulated array on ``device``
        (once per owner)."""
        owner = array
        base = array.base
        while isinstance(base, np.ndarray):
            owner = base
            base = base.base
        key = id(owner)
        if key in self._owners:
            return
        size = -(-owner.nbytes // ALLOCATION_UNIT) * ALLOCATION_UNIT
        if size == 0:
            return
        pool = self.pool(device)
        pool.malloc(size)
        owners = self._owners

        def release(_ref):
            del owners[key]
            pool.free(size)

        owners[key] = weakref.ref(owner, release)


pools = _Pools()


class MemoryPool:
    """``cupy.get_default_memory_pool()``: counters of the current device's pool."""

    def __init__(self, runtime=None, allocator=None):
        self._runtime = runtime

    def malloc(self, size):
        """A block of a private pool (``cupy.cuda.MemoryPool().malloc``): a pointer that owns the
        buffers given to it under ``using_allocator`` (see simulated_cupy_graph)."""
        from .simulated_cupy_graph import PooledPointer
        from .simulated_cupy import _runtime
        return PooledPointer(int(size), _runtime.getDevice())

    def _pool(self):
        return pools.pool(self._runtime._current)

    def used_bytes(self):
        return self._pool().used

    def total_bytes(self):
        p = self._pool()
        return p.used + p.cached_bytes

    def free_bytes(self):
        return self._pool().cached_bytes

    def n_free_blocks(self):
        return sum(self._pool().cached.values())

    def free_all_blocks(self, stream=None):
        self._pool().free_all()

    def free_all_free(self):
        self.free_all_blocks()

    def set_limit(self, size=None, fraction=None):
        if fraction is not None:
            size = int(device_memory() * fraction)
        self._pool().limit = int(size or 0)

    def get_limit(self):
        return self._pool().limit


class PinnedMemoryPool:
    """``cupy.get_default_pinned_memory_pool()``: host memory is plain NumPy here; nothing is cached."""

    def n_free_blocks(self):
        return 0

    def free_all_blocks(self):
        pass

    def used_bytes(self):
        return 0

    def total_bytes(self):
        return 0


class MemoryPointer:
    """``cupy.cuda.MemoryPointer``: an address on a device."""

    __slots__ = ("ptr", "device_id")

    def __init__(self, ptr, device_id):
        self.ptr = int(ptr)
        self.device_id = device_id

    def __int__(self):
        return self.ptr

    def __add__(self, offset):
        return MemoryPointer(self.ptr + int(offset), self.device_id)

    def __repr__(self):
        return f"<MemoryPointer 0x{self.ptr:x} on device {self.device_id}>"


# Work that really runs asynchronously in the simulator: the simulated NCCL's collectives (MPI
# requests in flight), per stream pointer. Kernels and copies run synchronously, so only these make
# a stream, or an event recorded on it, not done yet.
_IN_FLIGHT = {}


def enqueue(stream, operation):
    """Put ``operation`` (``.test() -> bool``, ``.wait()``) in flight on ``stream`` (a pointer)."""
    _IN_FLIGHT.setdefault(int(stream), []).append(operation)


def _in_flight(stream_ptr):
    ops = _IN_FLIGHT.get(stream_ptr)
    if ops:
        ops[:] = [op for op in ops if not op.test()]
    return list(ops or ())


class Event:
    """``cupy.cuda.Event``: records the host time, and the asynchronous work in flight on the stream."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.ptr = id(self)
        self._time = None
        self._ops = []

    def record(self, stream=None):
        self._time = time.perf_counter()
        stream = get_current_stream() if stream is None else stream
        self._ops = _in_flight(stream.ptr)

    def synchronize(self):
        for op in self._ops:
            op.wait()
        self._ops = []

    @property
    def done(self):
        self._ops = [op for op in self._ops if not op.test()]
        return not self._ops


def get_elapsed_time(start_event, end_event):
    """Milliseconds between two recorded events."""
    return (end_event._time - start_event._time) * 1e3


class Stream:
    """``cupy.cuda.Stream``: work runs synchronously, so a stream only tracks which one is current."""

    _current = []

    def __init__(self, null=False, non_blocking=False, ptds=False, priority=None):
        self.ptr = 0 if null else id(self)
        self.device_id = None
        self.non_blocking = bool(non_blocking)

    def __enter__(self):
        Stream._current.append(self)
        return self

    def __exit__(self, *exc):
        Stream._current.pop()
        return False

    def use(self):
        Stream._current[:] = [self]
        return self

    def synchronize(self):
        _graph.synchronize_stream(self)
        for op in _in_flight(self.ptr):
            op.wait()

    def begin_capture(self, mode=None):
        """Start capturing the work queued on this stream into a CUDA graph (not the legacy stream)."""
        _graph.begin_capture(self, mode)

    def end_capture(self):
        """Stop capturing; the ``cuda.Graph`` of the captured work."""
        return _graph.end_capture(self)

    def is_capturing(self):
        return _graph.is_capturing(self)

    def record(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def wait_event(self, event):
        pass

    @property
    def done(self):
        _graph.query_stream(self)
        return not _in_flight(self.ptr)

    def __eq__(self, other):
        return isinstance(other, Stream) and other.ptr == self.ptr

    def __hash__(self):
        return hash(self.ptr)

    def __repr__(self):
        return f"<simulated Stream 0x{self.ptr:x}>"


Stream.null = Stream(null=True)
Stream.ptds = Stream(null=True)


def get_current_stream(device_id=None):
    return Stream._current[-1] if Stream._current else Stream.null


class _MemoryNamespace:
    OutOfMemoryError = OutOfMemoryError
    MemoryPointer = MemoryPointer
    MemoryPool = MemoryPool
    PinnedMemoryPool = PinnedMemoryPool


_default_pool = None
_pinned_pool = PinnedMemoryPool()


def get_default_memory_pool():
    return _default_pool


def get_default_pinned_memory_pool():
    return _pinned_pool


def install(cuda, runtime):
    """Add the memory, stream and event names to the simulated ``cupy.cuda`` namespace."""
    global _default_pool
    _default_pool = MemoryPool(runtime)
    cuda.memory = _MemoryNamespace
    cuda.MemoryPointer = MemoryPointer
    cuda.MemoryPool = MemoryPool
    cuda.PinnedMemoryPool = PinnedMemoryPool
    cuda.Stream = Stream
    cuda.Event = Event
    cuda.get_current_stream = get_current_stream
    cuda.get_elapsed_time = get_elapsed_time
    cuda.using_allocator = _graph.using_allocator
    cuda.Graph = _graph.Graph

    class graph:
        Graph = _graph.Graph

    cuda.graph = graph
