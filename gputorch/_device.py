"""``gputorch.device``: where a tensor's storage lives ("cpu", "cuda:N", later "meta").

Device objects are interned, so the per-op device check is an identity test.
Each device knows its backend (the array module and the op overrides), loaded on
first use so that importing gputorch never imports CuPy.
"""
from .backends import get_backend, known_device_types

__all__ = ["device"]


class device:
    """A device: ``device("cpu")``, ``device("cuda")``, ``device("cuda:1")``, ``device("cuda", 0)``.

    ``type`` is the device kind and ``index`` the ordinal (None for "cpu" and for a
    bare "cuda", which means the current CUDA device when a tensor is made).
    """

    __slots__ = ("type", "index", "_backend", "_ctx", "__weakref__")
    _interned = {}

    def __new__(cls, type_or_str=None, index=None, *, type=None):  # noqa: A002 - PyTorch's keyword
        if type is not None:
            if type_or_str is not None:
                raise TypeError("device() got multiple values for argument 'type'")
            type_or_str = type
        if isinstance(type_or_str, device):
            if index is not None:
                raise ValueError("device(device, index): a device object already has its index")
            return type_or_str
        if isinstance(type_or_str, bool) or isinstance(index, bool):   # True == 1 as a cache key
            raise TypeError("device() expected a string, an int or a device, got bool")
        key = (type_or_str, index)
        cached = cls._interned.get(key)
        if cached is not None:
            return cached
        dev_type, dev_index = _parse(type_or_str, index)
        canonical = cls._interned.get((dev_type, dev_index))
        if canonical is None:
            canonical = object.__new__(cls)
            canonical.type = dev_type
            canonical.index = dev_index
            canonical._backend = None
            canonical._ctx = None
            cls._interned[(dev_type, dev_index)] = canonical
        cls._interned[key] = canonical
        return canonical

    @property
    def backend(self):
        """The array backend for this device (imports CuPy for CUDA on first use)."""
        b = self._backend
        if b is None:
            b = get_backend(self.type)
            if self.index is not None or self.type == "cpu":
                self._ctx = b.context(self)
            self._backend = b
        return b

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __reduce__(self):
        return (device, (str(self),))

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, ValueError):
                return False
        return self is other

    def __hash__(self):
        return hash((self.type, self.index))

    def __enter__(self):
        from . import _device_context
        _device_context.push(self)
        return self

    def __exit__(self, *exc):
        from . import _device_context
        _device_context.pop()
        return False


def _parse(spec, index):
    if isinstance(spec, int) and not isinstance(spec, bool):
        if index is not None:
            raise ValueError("device(int, index) is not a valid device specification")
        spec, index = "cuda", spec
    if not isinstance(spec, str):
        raise TypeError(f"device() expected a string, an int or a device, got {type(spec).__name__}")
    if not spec:
        raise RuntimeError("Device string must not be empty")
    if index is not None:
        if isinstance(index, bool) or not hasattr(index, "__index__"):
            raise TypeError(f"device(): argument 'index' must be int, not {type(index).__name__}")
        index = index.__index__()
    dev_type, sep, idx_str = spec.partition(":")
    if sep:
        if index is not None:
            raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {spec}")
        if not (idx_str.isascii() and idx_str.isdigit()) or (len(idx_str) > 1 and idx_str[0] == "0"):
            raise RuntimeError(f"Invalid device string: '{spec}'")
        index = int(idx_str)
    if dev_type not in known_device_types():
        raise RuntimeError(
            f"Expected one of {', '.join(known_device_types())} device type at start of device string: {spec}")
    if index is not None:
        if index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        if dev_type == "cpu" and index != 0:
            raise RuntimeError(f"CPU device index must be 0 or None, got {index}")
        if dev_type == "cpu":
            index = None
    return dev_type, index
