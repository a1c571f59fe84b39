"""Legacy tensor types: ``FloatTensor``, ``LongTensor``, ... and ``cuda.FloatTensor``, ...

Each is a class standing for one (dtype, device type) pair, as in PyTorch:

- calling it makes a tensor: ``FloatTensor(2, 3)`` or ``FloatTensor(Size([2, 3]))`` is an
  uninitialised tensor of that shape, ``FloatTensor([1, 2])`` holds that data, ``FloatTensor()``
  is empty, and ``FloatTensor(t)`` is ``t`` itself (an alias) when ``t`` already has that type;
- ``isinstance(x, FloatTensor)`` is true exactly for float32 tensors on the CPU
  (``cuda.FloatTensor``: on a CUDA device);
- ``x.type(LongTensor)`` or ``x.type("torch.cuda.FloatTensor")`` converts (see :func:`type_target`).

The classes are not subclasses of :class:`Tensor`: the tensors made are plain Tensors.
"""
import warnings

from . import _dtype
from ._size import Size
from ._tensor import Tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor", "typename", "set_default_tensor_type"]

_DTYPES = {"Float": _dtype.float32, "Double": _dtype.float64, "Half": _dtype.float16, "BFloat16": _dtype.bfloat16,
           "Long": _dtype.int64,
           "Int": _dtype.int32, "Short": _dtype.int16, "Char": _dtype.int8, "Byte": _dtype.uint8,
           "Bool": _dtype.bool}


def _is_size(args):
    return all(isinstance(a, int) and not isinstance(a, bool) for a in args)


class LegacyTensorType(type):
    """The metaclass of the legacy types: construction and ``isinstance`` by (dtype, device type)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj._dtype is cls.dtype and obj._device.type == cls._device_type

    def __call__(cls, *args, device=None):
        return construct(cls.dtype, cls._device_type, cls._device_type, args, device)

    def _type_name(cls):
        return ("torch.cuda." if cls._device_type == "cuda" else "torch.") + cls.__name__

    def __repr__(cls):
        return f"<class '{cls._type_name()}'>"

    @property
    def is_cuda(cls):
        return cls._device_type == "cuda"


def construct(dtype, device_type, default_device, args, device=None):
    """The legacy constructors' (``FloatTensor(...)``, ``Tensor.new(...)``) tensor of ``dtype`` on
    a device of type ``device_type``, from ``args``: sizes (ints or a Size: uninitialised), data (a
    sequence), a tensor of that type (an alias of it), or nothing (empty)."""
    from .ops import creation
    if device is None:
        device = default_device
    elif str(device).split(":")[0] != device_type:
        raise RuntimeError(f"legacy constructor expects device type: {device_type} but device type: "
                           f"{str(device).split(':')[0]} was passed")
    if len(args) == 1 and isinstance(args[0], Tensor):
        src = args[0]
        if src._dtype is not dtype or src._device.type != device_type:
            wanted = ("torch.cuda." if device_type == "cuda" else "torch.") + _dtype.legacy_name(dtype) + "Tensor"
            raise TypeError(f"expected {wanted} (got {src.type()})")
        return src._detached_alias()
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    if _is_size(args):
        for n in args:
            if n < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(args)}")
        return creation.empty(args if args else (0,), dtype=dtype, device=device)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        if not hasattr(data, "__len__") and not hasattr(data, "__array__"):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return creation.tensor(data, dtype=dtype, device=device)
    raise TypeError(f"new() received an invalid combination of arguments - got "
                    f"({', '.join(type(a).__name__ for a in args)}), but expected one of: (*, device), "
                    f"(Tensor other), (tuple of ints size, *, device), (object data, *, device)")


def _make_type(word, device_type, module):
    return LegacyTensorType(word + "Tensor", (), {
        "dtype": _DTYPES[word], "_device_type": device_type, "__module__": module,
        "__doc__": f"{_DTYPES[word]} tensors on the {device_type.upper()} device (a legacy type)."})


def make_types(device_type, module):
    """The nine legacy types of one device type, by name ("FloatTensor": ...)."""
    return {word + "Tensor": _make_type(word, device_type, module) for word in _DTYPES}


_CPU_TYPES = make_types("cpu", "gputorch")
globals().update(_CPU_TYPES)


def type_target(arg):
    """What ``Tensor.type(arg)`` converts to: ``(dtype, device type or None)``.

    ``arg`` is a gputorch dtype (the device stays), a legacy type, or a legacy type's name
    ("torch.LongTensor", "torch.cuda.FloatTensor"); anything else is a ValueError."""
    if isinstance(arg, _dtype.dtype):
        return arg, None
    if isinstance(arg, LegacyTensorType):
        return arg.dtype, arg._device_type
    if isinstance(arg, str):
        for prefix, device_type in (("torch.cuda.", "cuda"), ("torch.", "cpu")):
            if arg.startswith(prefix):
                name = arg[len(prefix):]
                if name.endswith("Tensor") and name[:-len("Tensor")] in _DTYPES:
                    return _DTYPES[name[:-len("Tensor")]], device_type
                break
    shown = arg if isinstance(arg, str) else getattr(arg, "__name__", arg)
    raise ValueError(f"invalid type: '{shown}'")


def typename(obj):
    """A tensor's legacy type name (``"torch.FloatTensor"``); for anything else, the dotted name of
    the object (a class or function) or of its class (``"int"`` for Python's builtins)."""
    if isinstance(obj, Tensor):
        return obj.type()
    named = obj if hasattr(obj, "__qualname__") or hasattr(obj, "__name__") else type(obj)
    module = getattr(named, "__module__", "") or ""
    name = getattr(named, "__qualname__", None) or named.__name__
    return name if module in ("", "builtins") else f"{module}.{name}"


def set_default_tensor_type(t):
    """Deprecated (use ``set_default_dtype`` and ``set_default_device``): make ``t``'s dtype (a
    floating-point legacy type or its name) the default dtype and its device type the default device."""
    from ._device_context import set_default_device
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    if isinstance(t, str):
        try:
            dtype, device_type = type_target(t)
        except ValueError:
            raise AttributeError(f"module 'torch' has no attribute '{t.rsplit('.', 1)[-1]}'") from None
    elif isinstance(t, LegacyTensorType):
        dtype, device_type = t.dtype, t._device_type
    else:
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(dtype)
    set_default_device(None if device_type == "cpu" else device_type)
