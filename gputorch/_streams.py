"""``gputorch.Stream`` and ``gputorch.Event``: device-generic streams and events.

A stream is an in-order queue of work on one device; an event marks a point in a stream that
other streams (or the host) can wait for, and that can be timed. Without a device the current
accelerator is used (CUDA when available), else the CPU.

- On CUDA they wrap CuPy's ``cuda.Stream`` and ``cuda.Event`` (the simulated device's streams run
  their work at once, so every query there says done); ``with stream:`` makes the stream current,
  so the ops in the block are queued on it.
- On the CPU, as in PyTorch, work runs in order on the calling thread: a stream is an ordering
  object whose queries say done and whose waits do nothing, and an event cannot be recorded
  (RuntimeError), so it cannot be waited on or timed either.

``device_type`` is PyTorch's device-type number (0 CPU, 1 CUDA); ``device_index`` is -1 on the
CPU. Interprocess events are not supported (NotImplementedError, as in PyTorch).
"""
from ._device import device as Device
from .backends import get_backend

__all__ = ["Stream", "Event"]

_DEVICE_TYPES = {"cpu": 0, "cuda": 1}
_NO_CPU_EVENTS = "cpu backend doesn't support events."


def _cupy():
    return get_backend("cuda")._require()


def _resolve(device):
    """``(type, index)`` of the device a stream or event lives on (index -1 on the CPU)."""
    from . import accelerator, cuda
    if device is None:
        device = accelerator.current_accelerator() or Device("cpu")
    elif isinstance(device, int) and not isinstance(device, bool):
        accelerator.current_device_index()             # RuntimeError without an accelerator
        device = Device("cuda", device)
    else:
        device = Device(device)
    if device.type == "cpu":
        return "cpu", -1
    if device.type != "cuda":
        raise RuntimeError(f"Stream and Event do not support the {device.type} device")
    return "cuda", cuda._cuda_device(device).index


class Stream:
    """An in-order queue of work on ``device`` (default: the current accelerator, else the CPU).

    ``priority`` (0 or negative, lower runs first) is accepted and has no effect here: CuPy's
    streams take no priority.
    """

    def __init__(self, device=None, *, priority=0):
        self._type, self.device_index = _resolve(device)
        self.priority = int(priority)
        self._native = None
        if self._type == "cuda":
            cp = _cupy()
            with cp.cuda.Device(self.device_index):
                self._native = cp.cuda.Stream(non_blocking=True)

    @classmethod
    def _current(cls, device_index):
        """The current CUDA stream of ``device_index`` as a Stream (for an event's default)."""
        stream = cls.__new__(cls)
        stream._type, stream.device_index, stream.priority = "cuda", device_index, 0
        stream._native = _cupy().cuda.get_current_stream()
        return stream

    @property
    def device(self):
        return Device(self._type) if self._type == "cpu" else Device("cuda", self.device_index)

    @property
    def device_type(self):
        return _DEVICE_TYPES[self._type]

    @property
    def stream_id(self):
        """0 on the CPU; the CUDA stream's handle otherwise."""
        return 0 if self._native is None else int(self._native.ptr)

    @property
    def native_handle(self):
        if self._native is None:
            raise RuntimeError("Backend doesn't support getting stream native handle.")
        return int(self._native.ptr)

    def query(self):
        """Whether all work queued on this stream has finished."""
        return True if self._native is None else bool(self._native.done)

    def synchronize(self):
        """Wait until all work queued on this stream has finished."""
        if self._native is not None:
            self._native.synchronize()

    def record_event(self, event=None):
        """Record ``event`` (a new Event of this device by default) here; returns it."""
        if event is None:
            event = Event(self.device)
        event.record(self)
        return event

    def wait_event(self, event):
        """Make later work on this stream wait until ``event`` has happened."""
        if self._native is not None and event._native is not None:
            self._native.wait_event(event._native)

    def wait_stream(self, stream):
        """Make later work on this stream wait for the work queued on ``stream`` so far."""
        if self._native is not None:
            self.wait_event(stream.record_event())

    def is_capturing(self):
        """Whether a CUDA graph is being captured on this stream (``gputorch.cuda.graph``); always
        False on the CPU."""
        return False if self._native is None else bool(self._native.is_capturing())

    def __enter__(self):
        if self._native is not None:
            self._native.__enter__()
        return self

    def __exit__(self, *exc):
        if self._native is not None:
            self._native.__exit__(*exc)
        return False

    def __eq__(self, other):
        return (isinstance(other, Stream) and (self._type, self.device_index, self.stream_id)
                == (other._type, other.device_index, other.stream_id))

    def __hash__(self):
        return hash((self._type, self.device_index, self.stream_id))

    def __repr__(self):
        return (f"gputorch.Stream device_type={self._type}, device_index={self.device_index}, "
                f"stream_id={self.stream_id}")


class Event:
    """A point in a stream's work that others can wait for, and that can be timed.

    ``enable_timing`` lets :meth:`elapsed_time` measure between two events; ``blocking`` makes
    :meth:`synchronize` block rather than spin (CuPy's ``block``); ``interprocess`` is refused.
    """

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self._type, self.device_index = _resolve(device)
        self.enable_timing, self.blocking, self.interprocess = bool(enable_timing), bool(blocking), bool(interprocess)
        self._native = None
        self._recorded = False

    @property
    def device(self):
        return Device(self._type) if self._type == "cpu" else Device("cuda", self.device_index)

    @property
    def event_id(self):
        """0 until a CUDA event is recorded; its handle then."""
        return 0 if self._native is None else int(self._native.ptr)

    def _require_events(self):
        if self._type == "cpu":
            raise RuntimeError(_NO_CPU_EVENTS)

    def record(self, stream=None):
        """Mark the current point of ``stream`` (default: the device's current stream)."""
        self._require_events()
        if stream is None:
            stream = Stream._current(self.device_index)
        if stream.device != self.device:
            raise RuntimeError(f"Event device {self.device} does not match recording stream's device "
                               f"{stream.device}.")
        if self._native is None:
            cp = _cupy()
            with cp.cuda.Device(self.device_index):
                self._native = cp.cuda.Event(block=self.blocking, disable_timing=not self.enable_timing)
        self._native.record(stream._native)
        self._recorded = True

    def wait(self, stream=None):
        """Make later work on ``stream`` (default: the current one) wait for this event."""
        if not self._recorded:
            return
        (stream or Stream._current(self.device_index)).wait_event(self)

    def query(self):
        """Whether the work before this event has finished (True for an unrecorded event)."""
        return True if self._native is None else bool(self._native.done)

    def synchronize(self):
        """Wait until the work before this event has finished."""
        if self._native is not None:
            self._native.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds from this event to ``end_event``, both recorded with ``enable_timing``."""
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        self._require_events()
        if not (self._recorded and end_event._recorded):
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        end_event.synchronize()
        return float(_cupy().cuda.get_elapsed_time(self._native, end_event._native))

    def ipc_handle(self):
        raise NotImplementedError("gputorch.Event: interprocess events are not supported")

    @classmethod
    def from_ipc_handle(cls, device, ipc_handle):
        raise NotImplementedError("gputorch.Event: interprocess events are not supported")

    def __repr__(self):
        return (f"gputorch.Event device_type={self._type}, device_index={self.device_index}, "
                f"event_flag={int(self.enable_timing)}, event_id={self.event_id}")
