"""``map_location``: where each loaded storage goes.

:func:`placement` turns ``map_location`` into ``place(host_array, location) -> Tensor``: the storage's
elements (a 1-D host array, as read from the file) as a tensor on the chosen device. ``location`` is
the tag the file recorded (``"cpu"``, ``"cuda:1"``).

- None: the recorded device (a CUDA location without CUDA is an error that suggests
  ``map_location``);
- a device or a string: that device;
- a dict: recorded location -> new location (others stay);
- a callable ``fn(storage, location)``: ``storage`` is a CPU tensor of the storage's elements; it
  returns the tensor to use (e.g. ``storage.cuda(1)``), or None for the default.
"""
from .._device import device as Device
from .._tensor import Tensor


def _to_device(array, target):
    from ..ops.creation import from_numpy
    t = from_numpy(array)
    dev = Device(target)
    if dev.type == "cpu":
        return t
    if dev.type == "cuda":
        from .. import cuda
        if not cuda.is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but gputorch.cuda.is_available() is False. "
                "If you are running on a CPU-only machine, please use gputorch.load with "
                "map_location=gputorch.device('cpu') to map your storages to the CPU.")
        if dev.index is not None and dev.index >= cuda.device_count():
            raise RuntimeError(
                f"Attempting to deserialize object on CUDA device {dev.index} but "
                f"gputorch.cuda.device_count() is {cuda.device_count()}. Please use gputorch.load with "
                "map_location to map your storages to an existing device.")
    return t.to(dev)


def placement(map_location):
    """A function ``(host array, saved location) -> Tensor`` implementing ``map_location``."""
    if map_location is None:
        return _to_device
    if isinstance(map_location, (str, Device)):
        target = Device(map_location)
        return lambda array, location: _to_device(array, target)
    if isinstance(map_location, dict):
        mapping = {str(k): v for k, v in map_location.items()}
        return lambda array, location: _to_device(array, mapping.get(location, location))
    if callable(map_location):
        def call(array, location):
            from ..ops.creation import from_numpy
            result = map_location(from_numpy(array), location)
            if result is None:
                return _to_device(array, location)
            if not isinstance(result, Tensor):
                raise TypeError(f"map_location returned {type(result).__name__}, expected a Tensor or None")
            return result
        return call
    raise TypeError(f"map_location should be a device, a string, a dict or a callable, "
                    f"not {type(map_location).__name__}")


def storage_tensor(place, array, location):
    """``place(array, location)`` as a 1-D tensor with as many elements as ``array``."""
    t = place(array, location)
    if t.dim() != 1 or t.numel() != array.size or not t.is_contiguous():
        if t.numel() != array.size:
            raise RuntimeError(f"map_location returned a tensor of {t.numel()} elements for a storage of "
                               f"{array.size}")
        t = t.detach().reshape(-1).contiguous()
    return t.detach() if t.requires_grad else t
