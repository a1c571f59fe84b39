"""Moves between devices and dtypes: ``to``, ``cpu``, ``cuda``, ``float()`` ... , ``type_as``."""
import warnings

from .. import _dtype
from .._device import device as Device
from .._device_context import default_device
from .._dispatch import apply
from .._tensor import Tensor
from ..autograd.node import Node
from .registry import tensor_method

__all__ = []


class ToCopyBackward0(Node):
    """A copy to another dtype and/or device; the gradient goes back the same way."""

    moves_device = True
    keeps_bfloat16 = True   # a cast: it reads and writes bfloat16 arrays itself

    def forward(ctx, a, dtype, device, copy):
        if dtype is _dtype.bfloat16 or a._dtype is _dtype.bfloat16:
            from .._bfloat16 import check_device
            check_device(device)
            _dtype.require_numpy_dtype(dtype)
        ctx.src = (a._dtype, a._device)
        data = a._data
        if device is not a._device:
            backend = device.backend
            if device.type == a._device.type and device.type == "cpu":
                pass
            elif a._device.type == "cpu":
                data = backend.asarray(data, None, device)
            elif device.type == "cpu":
                data = a._device.backend.to_numpy(data)
            else:
                data = backend.asarray(data, None, device)
            copy = copy and data is a._data
        if dtype is not a._dtype:
            if a._dtype.is_complex and not dtype.is_complex:
                warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                              stacklevel=4)
                data = data.real
            return data.astype(dtype.np)
        if copy:
            return data.copy()
        return data

    def backward(ctx, grad):
        dtype, device = ctx.src
        if grad._dtype.is_complex and not dtype.is_complex:
            grad = grad.real
        return _to(grad, dtype, device, False)


def resolve_device(dev):
    """A concrete, available device from a user argument (``"cuda"`` -> ``cuda:<current>``)."""
    if dev is None:
        dev = default_device() or Device("cpu")
    elif not isinstance(dev, Device):
        dev = Device(dev)
    return dev.backend.check_device(dev)


def _to(t, dtype, device, copy):
    if dtype is t._dtype and device is t._device and not copy:
        return t
    if t._sparse:
        return t._moved(dtype, device, copy)
    return apply(ToCopyBackward0, t, dtype=dtype, device=device, copy=copy)


def _parse_to_args(self, args, kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = dtype or a._dtype, device or a._device
        elif isinstance(a, _dtype.dtype):
            dtype = a
        elif isinstance(a, (str, Device, int)) and not isinstance(a, bool):
            device = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    return dtype, device


@tensor_method("to")
def to(self, *args, non_blocking=False, copy=False, memory_format=None, **kwargs):
    """``to(device)``, ``to(dtype)``, ``to(tensor)``, ``to(device, dtype)``, with ``non_blocking``
    and ``copy``. Returns ``self`` when nothing changes and ``copy`` is False."""
    dtype, device = _parse_to_args(self, args, kwargs)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    dtype = self._dtype if dtype is None else _dtype.to_dtype(dtype)
    device = self._device if device is None else resolve_device(device)
    return _to(self, dtype, device, copy)


@tensor_method("cpu")
def cpu(self, memory_format=None):
    return _to(self, self._dtype, Device("cpu"), False)


@tensor_method("cuda")
def cuda(self, device=None, non_blocking=False, memory_format=None):
    """Copy to a CUDA device (the current one by default)."""
    if device is None:
        dev = Device("cuda")
    elif isinstance(device, int):
        dev = Device("cuda", device)
    else:
        dev = Device(device)
        if dev.type != "cuda":
            raise RuntimeError(f"Invalid device, must be cuda device, got {dev}")
    return _to(self, self._dtype, resolve_device(dev), False)


@tensor_method("mtia")
def mtia(self, device=None, non_blocking=False, memory_format=None):
    """Copy to an MTIA (Meta's training and inference accelerator) device. gputorch has no MTIA
    backend, so this fails as it does in a PyTorch built without one: AssertionError, a
    RuntimeError for a device index (no accelerator to count from) or a device of another type."""
    if isinstance(device, int) and not isinstance(device, bool):
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if device is not None:
        kind = device.type if isinstance(device, Device) else str(device).split(":")[0]
        if kind != "mtia":
            raise RuntimeError(f"Invalid device, must be MTIA device, got {device}")
    raise AssertionError("Torch not compiled with MTIA enabled: gputorch has no MTIA backend")


def _caster(dt):
    def cast(self, memory_format=None):
        return _to(self, dt, self._device, False)
    cast.__name__ = dt.name
    cast.__doc__ = f"``self.to({dt})``"
    return cast


for _name, _dt in (("float", _dtype.float32), ("double", _dtype.float64), ("half", _dtype.float16),
                   ("bfloat16", _dtype.bfloat16),
                   ("long", _dtype.int64), ("int", _dtype.int32), ("short", _dtype.int16),
                   ("char", _dtype.int8), ("byte", _dtype.uint8), ("bool", _dtype.bool),
                   ("cfloat", _dtype.complex64), ("cdouble", _dtype.complex128)):
    tensor_method(_name)(_caster(_dt))


@tensor_method("type_as")
def type_as(self, other):
    return _to(self, other._dtype, self._device, False)
