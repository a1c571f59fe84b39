"""DLPack exchange: zero-copy tensors to and from NumPy, PyTorch, CuPy and other libraries.

``from_dlpack(obj)`` takes any object with ``__dlpack__``/``__dlpack_device__`` (or a
DLPack capsule from a ``to_dlpack``) and returns a gputorch tensor that shares its memory;
``to_dlpack(t)`` returns a capsule that another library's ``from_dlpack`` consumes.
"""
import ctypes

import numpy as np

from .._device import device as Device
from .._tensor import Tensor

__all__ = ["from_dlpack", "to_dlpack"]

_CPU_DEVICES = (1, 3)        # kDLCPU, kDLCUDAHost (pinned host memory)
_CUDA_DEVICES = (2, 13)      # kDLCUDA, kDLCUDAManaged


def to_dlpack(tensor):
    """A DLPack capsule sharing ``tensor``'s memory (consumed once by a ``from_dlpack``); a tensor
    that requires grad is exported too, as PyTorch's ``to_dlpack`` does."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack expects a Tensor, got {type(tensor).__name__}")
    return tensor.detach().__dlpack__()   # (the protocol method refuses tensors that require grad; this does not)


def from_dlpack(ext_tensor):
    """A tensor sharing memory with ``ext_tensor`` (an object with ``__dlpack__``, or a capsule)."""
    if isinstance(ext_tensor, Tensor):
        if ext_tensor._requires_grad:   # what its __dlpack__ says, as PyTorch's exchange does
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        return ext_tensor.detach()
    if _is_capsule(ext_tensor):
        device_type, device_id = _capsule_device(ext_tensor)
        if device_type in _CPU_DEVICES:
            return _wrap(_numpy_from_capsule(ext_tensor), Device("cpu"))
        if device_type in _CUDA_DEVICES:
            return _from_cuda(ext_tensor, device_id)
        raise RuntimeError(f"from_dlpack: unsupported DLPack device type {device_type}")
    dl_device = getattr(ext_tensor, "__dlpack_device__", None)
    if dl_device is None or not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack expects an object with __dlpack__ or a DLPack capsule, got "
                        f"{type(ext_tensor).__name__}")
    device_type, device_id = (int(v) for v in dl_device())
    if device_type in _CPU_DEVICES:
        return _wrap(np.from_dlpack(ext_tensor), Device("cpu"))
    if device_type in _CUDA_DEVICES:
        return _from_cuda(ext_tensor, device_id)
    raise RuntimeError(f"from_dlpack: unsupported DLPack device type {device_type}")


def _wrap(arr, dev):
    from ..ops.creation import _numpy_dtype
    return Tensor._make(arr, dev, _numpy_dtype(arr.dtype))


def _from_cuda(obj, device_id):
    from ..ops.conversion import resolve_device
    dev = resolve_device(Device("cuda", device_id))   # RuntimeError when CUDA is unavailable
    cp = dev.backend.xp
    with cp.cuda.Device(device_id):
        return _wrap(cp.from_dlpack(obj), dev)


# ---------------------------------------------------------------- legacy capsules (CPU)
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor)))]

_capi = ctypes.pythonapi
_capi.PyCapsule_IsValid.restype = ctypes.c_int
_capi.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_SetName.restype = ctypes.c_int
_capi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

_DL_CODES = {0: "i", 1: "u", 2: "f", 6: "b"}   # kDLInt, kDLUInt, kDLFloat, kDLBool


def _is_capsule(obj):
    return type(obj).__name__ == "PyCapsule"


def _managed(capsule):
    if not _capi.PyCapsule_IsValid(capsule, b"dltensor"):
        raise RuntimeError("from_dlpack: the capsule is not an unconsumed DLPack tensor "
                           "(a capsule can be consumed only once)")
    return _DLManagedTensor.from_address(_capi.PyCapsule_GetPointer(capsule, b"dltensor"))


def _capsule_device(capsule):
    dev = _managed(capsule).dl_tensor.device
    return dev.device_type, dev.device_id


class _CapsuleOwner:
    """Keeps a consumed DLPack tensor alive and calls its deleter when the array is freed."""

    def __init__(self, managed, interface):
        self._managed = managed
        self.__array_interface__ = interface

    def __del__(self):
        deleter = self._managed.deleter
        if deleter:
            deleter(ctypes.pointer(self._managed))


def _numpy_from_capsule(capsule):
    managed = _managed(capsule)
    t = managed.dl_tensor
    kind = _DL_CODES.get(t.dtype.code)
    if kind is None or t.dtype.lanes != 1:
        raise RuntimeError(f"from_dlpack: unsupported DLPack dtype (code {t.dtype.code}, "
                           f"bits {t.dtype.bits}, lanes {t.dtype.lanes})")
    np_dtype = np.dtype(np.bool_) if kind == "b" else np.dtype(f"{kind}{t.dtype.bits // 8}")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = None if not t.strides else tuple(t.strides[i] * np_dtype.itemsize for i in range(t.ndim))
    address = (t.data or 0) + t.byte_offset
    interface = {"version": 3, "shape": shape, "typestr": np_dtype.str, "strides": strides,
                 "data": (address, False)}
    _capi.PyCapsule_SetName(capsule, b"used_dltensor")
    return np.asarray(_CapsuleOwner(managed, interface))
