"""A Pickler that writes gputorch objects under PyTorch's names, as ``torch.save`` writes them.

- a Tensor: ``torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
  OrderedDict())``, the storage being the persistent id ``("storage", torch.FloatStorage, key,
  location, numel)`` (its bytes go to ``data/<key>``); a tensor with public attributes goes through
  ``torch._tensor._rebuild_from_type_v2(_rebuild_tensor_v2, torch.Tensor, args, attributes)``;
- a Parameter: ``torch._utils._rebuild_parameter(tensor, requires_grad, OrderedDict())`` (or
  ``_rebuild_parameter_with_state`` with its public attributes);
- dtypes, devices and Sizes: ``torch.float32``, ``torch.device(...)``, ``torch.Size(...)``.

It subclasses the pure-Python pickler, whose dispatch table lets a :class:`GlobalRef` be written as
a global without importing the module it names (the C pickler checks every global by importing it).
"""
import collections
import pickle

import numpy as np

from .. import _dtype
from .._device import device as Device
from .._size import Size
from .._tensor import Tensor
from . import storages, torch_names as names

# Attributes of a Parameter's or Tensor's __dict__ that are autograd bookkeeping, never saved.
_TRANSIENT = ("_grad", "_grad_acc", "_hooks", "_post_acc_hooks", "_base", "_retains_grad", "_is_buffer")


def location_of(device):
    """PyTorch's location tag of a device: ``"cpu"``, ``"cuda:0"``."""
    if device.type == "cpu":
        return "cpu"
    return f"{device.type}:{device.index or 0}"


class StorageRecord:
    """A storage being saved: its key (``data/<key>`` in the archive), storage class, location,
    element count, and flat array on its device."""
    __slots__ = ("key", "type_ref", "location", "numel", "flat", "device")

    def __init__(self, key, type_ref, location, numel, flat, device):
        self.key, self.type_ref, self.location, self.numel = key, type_ref, location, numel
        self.flat, self.device = flat, device

    def host_bytes(self):
        """The elements as little-endian bytes (a memoryview of the array where no copy is needed)."""
        host = np.ascontiguousarray(self.device.backend.to_numpy(self.flat))
        if host.dtype.byteorder == ">":
            host = host.astype(host.dtype.newbyteorder("<"))
        return memoryview(host.reshape(-1).view(np.uint8)) if host.size else b""


class TorchPickler(pickle._Pickler):
    """Pickles ``obj`` as PyTorch would; ``self.storages`` lists the storages met, in key order."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol, legacy=False):
        super().__init__(file, protocol=protocol)
        self.legacy = legacy      # the legacy format's storage ids have a sixth field (view metadata)
        self.storages = []
        self._keys = {}        # StorageView.key -> StorageRecord

    def _save_global_ref(self, ref):
        if self.proto >= 4:
            self.save(ref.module)
            self.save(ref.name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{ref.module}\n{ref.name}\n".encode("utf-8"))
        self.memoize(ref)

    dispatch[names.GlobalRef] = _save_global_ref

    def _save_dtype(self, dtype):
        self.save(names.dtype_ref(dtype))

    dispatch[_dtype.dtype] = _save_dtype

    def persistent_id(self, obj):
        if type(obj) is StorageRecord:
            pid = ("storage", obj.type_ref, obj.key, obj.location, obj.numel)
            return pid + (None,) if self.legacy else pid
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            if isinstance(obj, _parameter_class()):
                return self._reduce_parameter(obj)
            return self._reduce_tensor(obj)
        cls = type(obj)
        if cls is Device:
            return (names.TORCH_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index))
        if cls is Size:
            return (names.TORCH_SIZE, (tuple(obj),))
        return NotImplemented

    def _storage_record(self, t):
        view = storages.storage_view(t)
        record = self._keys.get(view.key)
        if record is None:
            record = StorageRecord(str(len(self.storages)), names.storage_class_ref(t._dtype),
                                   location_of(t._device), int(view.flat.size), view.flat, t._device)
            self._keys[view.key] = record
            self.storages.append(record)
        return record, view

    def _tensor_args(self, t):
        if t._dtype not in names.STORAGE_CLASS:
            raise pickle.PicklingError(f"cannot save a tensor of dtype {t._dtype} in PyTorch's format")
        record, view = self._storage_record(t)
        return (record, view.offset, tuple(t._data.shape), view.stride, bool(t._requires_grad),
                collections.OrderedDict())

    def _reduce_tensor(self, t):
        """A plain tensor; a subclass (other than Parameter) is named by its own class; a meta tensor
        has no storage (only dtype, size, stride and requires_grad are saved)."""
        if t._device.type == "meta":
            return (names.REBUILD_META_TENSOR,
                    (t._dtype, tuple(t._data.shape), t.stride(), bool(t._requires_grad)))
        args = self._tensor_args(t)
        state = _public_state(t)
        if type(t) is not Tensor or state:
            cls = names.TORCH_TENSOR if type(t) is Tensor else type(t)
            return (names.REBUILD_FROM_TYPE_V2, (names.REBUILD_TENSOR_V2, cls, args, state))
        return (names.REBUILD_TENSOR_V2, args)

    def _reduce_parameter(self, p):
        data = Tensor._make(p._data, p._device, p._dtype)
        state = _public_state(p)
        if state:
            return (names.REBUILD_PARAMETER_WITH_STATE,
                    (data, bool(p.requires_grad), collections.OrderedDict(), state))
        return (names.REBUILD_PARAMETER, (data, bool(p.requires_grad), collections.OrderedDict()))


def _public_state(t):
    """A tensor's user attributes (its __dict__ less autograd bookkeeping)."""
    return {k: v for k, v in t.__dict__.items() if k not in _TRANSIENT and not k.startswith("_")}


def _parameter_class():
    from ..nn.parameter import Parameter
    return Parameter
