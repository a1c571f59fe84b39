"""Host buffers: the contiguous NumPy arrays that MPI reads and writes for a tensor.

A contiguous CPU tensor of a dtype MPI reduces is communicated in place (no copy). Anything else
(a CUDA tensor over MPI, a strided view, a boolean reduction) goes through a staged copy that is
written back into the tensor when the operation completes.
"""
import numpy as np

from .._tensor import Tensor


def check_tensor(t, what="tensor"):
    if not isinstance(t, Tensor):
        raise TypeError(f"{what} must be a gputorch.Tensor, got {type(t).__name__}")
    if t.is_sparse:
        raise RuntimeError(f"{what}: sparse tensors are not supported by gputorch.distributed collectives")
    return t


class HostBuffer:
    """The host array standing for ``tensor`` during one operation.

    Args:
        tensor: the tensor communicated.
        dtype: the NumPy dtype on the wire (default: the tensor's).
        read (bool): whether the tensor's values are sent (False: receive only, no copy made).
    """

    __slots__ = ("tensor", "array", "staged")

    def __init__(self, tensor, dtype=None, read=True):
        data = tensor._data
        target = data.dtype if dtype is None else np.dtype(dtype)
        self.tensor = tensor
        if tensor._device.type == "cpu" and target == data.dtype and data.flags.c_contiguous \
                and data.flags.writeable:
            self.array = data
            self.staged = False
        else:
            if not read:
                self.array = np.empty(data.shape, dtype=target)
            else:
                host = data if tensor._device.type == "cpu" else tensor._device.backend.to_numpy(data)
                self.array = np.ascontiguousarray(host, dtype=target)
            self.staged = True

    def written(self):
        """The operation wrote into the buffer: make the tensor see it."""
        if self.staged:
            write_tensor(self.tensor, self.array)
        self.tensor._vc[0] += 1


def write_tensor(tensor, host):
    """Copy the host array ``host`` (same shape) into ``tensor``'s storage, on its device."""
    data = tensor._data
    if tensor._device.type == "cpu":
        data[...] = host
        return
    dev = tensor._device
    values = dev.backend.asarray(np.asarray(host, dtype=data.dtype), None, dev)
    with dev._ctx:
        data[...] = values
