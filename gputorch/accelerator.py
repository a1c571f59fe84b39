"""``gputorch.accelerator``: the device-generic view of the current accelerator.

gputorch's only accelerator is CUDA (through CuPy, or the simulated device in tests).
Without it, as in PyTorch: ``is_available()`` is False, ``current_accelerator()`` is
None, ``device_count()`` is 0, and the functions that need a device raise
RuntimeError.
"""
from . import cuda as _cuda
from ._device import device as _Device

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "current_device_idx", "set_device_index", "set_device_idx", "synchronize"]

_NONE_AVAILABLE = "Cannot access accelerator device when none is available."


def is_available():
    """True when an accelerator (a CUDA GPU) can be used."""
    return _cuda.is_available()


def current_accelerator(check_available=False):
    """``gputorch.device("cuda")`` when CUDA is usable, else None (``check_available`` is
    accepted as in PyTorch; without an accelerator the answer is None either way)."""
    if _cuda.is_available():
        return _Device("cuda")
    return None


def device_count():
    """The number of accelerator devices (0 without one)."""
    return _cuda.device_count() if _cuda.is_available() else 0


def _require():
    if not _cuda.is_available():
        raise RuntimeError(_NONE_AVAILABLE)


def _index(device):
    """An ordinal from an int, a "cuda[:N]" string or a device (None: the current device)."""
    if device is None:
        return _cuda.current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    d = _Device(device)
    if d.type != "cuda":
        raise ValueError(f"{d.type} doesn't match the current accelerator cuda.")
    return _cuda.current_device() if d.index is None else d.index


def current_device_index():
    """The index of the current accelerator device."""
    _require()
    return _cuda.current_device()


def set_device_index(device, /):
    """Make ``device`` (an int, "cuda:N" or a device) the current accelerator device;
    a negative int does nothing."""
    _require()
    _cuda.set_device(_index(device))


def synchronize(device=None, /):
    """Wait for all work queued on ``device`` (default: the current device) to finish."""
    _require()
    _cuda.synchronize(_index(device))


current_device_idx = current_device_index
set_device_idx = set_device_index
