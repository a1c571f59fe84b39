"""Page-locked ("pinned") host memory for batches that are about to be copied to a GPU.

Copies from pinned host buffers to a GPU are faster (and can run asynchronously) than from
ordinary pageable memory. ``DataLoader(pin_memory=True)`` passes every batch through
:func:`pin_memory`, which copies the CPU tensors in it into pinned buffers.

The pinned allocation comes from the CUDA backend: its ``pin_host_array(array)`` hook when it
defines one, else CuPy's ``cuda.alloc_pinned_memory``. Without CUDA (or with an array module
that cannot pin, such as the simulated devices) batches are returned unchanged.
"""
import collections.abc

import numpy as np

__all__ = ["pin_memory", "pinning_available"]


def _cuda_backend():
    from ...backends import get_backend
    backend = get_backend("cuda")
    return backend if backend.is_available() else None


def pinning_available():
    """Whether batches can be pinned here (a CUDA device is available)."""
    return _cuda_backend() is not None


def _pinner(backend):
    """A function copying a NumPy array into pinned memory, or None if the backend cannot."""
    hook = getattr(backend, "pin_host_array", None)
    if hook is not None:
        return hook
    alloc = getattr(getattr(backend.xp, "cuda", None), "alloc_pinned_memory", None)
    if alloc is None:
        return None

    def pin(array):
        if array.nbytes == 0:
            return array
        buffer = alloc(array.nbytes)
        out = np.frombuffer(buffer, array.dtype, array.size).reshape(array.shape)
        out[...] = array
        return out
    return pin


def _pin_tensor(t, pin):
    from ..._tensor import Tensor
    if t._device.type != "cpu":
        return t
    pinned = Tensor._make(pin(t._data), t._device, t._dtype)
    pinned._requires_grad = t._requires_grad if t._grad_fn is None else False
    return pinned


def pin_memory(data):
    """``data`` (a tensor or a container of tensors) with its CPU tensors in pinned memory."""
    backend = _cuda_backend()
    if backend is None:
        return data
    pin = _pinner(backend)
    if pin is None:
        return data
    return _apply(data, pin)


def _apply(data, pin):
    from ..._tensor import Tensor
    if isinstance(data, Tensor):
        return _pin_tensor(data, pin)
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        pinned = {k: _apply(v, pin) for k, v in data.items()}
        try:
            return type(data)(pinned)
        except TypeError:
            return pinned
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_apply(d, pin) for d in data))
    if isinstance(data, tuple):
        return tuple(_apply(d, pin) for d in data)
    if isinstance(data, collections.abc.Sequence):
        pinned = [_apply(d, pin) for d in data]
        try:
            return type(data)(pinned)
        except TypeError:
            return pinned
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data
