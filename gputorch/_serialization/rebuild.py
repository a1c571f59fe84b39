"""gputorch's versions of the functions a PyTorch pickle calls to rebuild tensors.

A PyTorch checkpoint's ``data.pkl`` calls ``torch._utils._rebuild_tensor_v2(storage, offset, size,
stride, requires_grad, backward_hooks[, metadata])`` and friends; the unpickler resolves those names
to the functions here. ``storage`` is a :class:`LoadedStorage` made by the reader from the
persistent id: tensors viewing one storage become views of one array (an in-place write through one
is seen by the others) sharing one version counter.
"""
import pickle

from .. import _dtype
from .._tensor import Tensor
from . import storages


class LoadedStorage:
    """A storage read from a checkpoint: ``tensor`` holds its elements (1-D, on the target device)."""
    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor


class StorageType:
    """What ``torch.FloatStorage`` (or ``torch.cuda.FloatStorage``) resolves to: its dtype."""
    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype

    def __repr__(self):
        return f"StorageType({self.name})"


class UnsupportedTypeError(TypeError):
    """A checkpoint holds a dtype or storage type that gputorch does not have."""


class Unsupported:
    """What a PyTorch dtype or storage class that gputorch lacks resolves to: using it (calling it,
    or a storage of it) raises TypeError naming it."""
    __slots__ = ("what",)

    def __init__(self, what):
        self.what = what

    def __call__(self, *args, **kwargs):
        raise UnsupportedTypeError(f"this checkpoint holds {self.what}, which gputorch does not support")

    def __repr__(self):
        return f"Unsupported({self.what})"


def _parameter_class():
    from ..nn.parameter import Parameter
    return Parameter


def rebuild_tensor(storage, storage_offset, size, stride):
    """A tensor viewing ``storage`` (PyTorch's ``_rebuild_tensor``)."""
    if not isinstance(storage, LoadedStorage):
        raise pickle.UnpicklingError(f"expected a storage to rebuild a tensor, got {type(storage).__name__}")
    base = storage.tensor
    size, stride = tuple(size), tuple(stride)
    t = Tensor._make(storages.view_of(base, storage_offset, size, stride), base._device, base._dtype)
    t._vc = base._vc
    return t


def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """PyTorch's ``_rebuild_tensor_v2``: a tensor viewing ``storage``, a leaf that requires grad
    when ``requires_grad`` (backward hooks and metadata such as conj/neg bits are not restored)."""
    t = rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad=False):
    """PyTorch's ``_rebuild_meta_tensor_no_storage``: a tensor on the meta device (no data)."""
    from ..ops.creation import empty_strided
    if not isinstance(dtype, _dtype.dtype):
        raise pickle.UnpicklingError(f"expected a dtype to rebuild a meta tensor, got {type(dtype).__name__}")
    return empty_strided(tuple(size), tuple(stride), dtype=dtype, device="meta", requires_grad=bool(requires_grad))


def rebuild_parameter(data, requires_grad, backward_hooks):
    """PyTorch's ``_rebuild_parameter``: a Parameter over ``data``."""
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError(f"expected a tensor to rebuild a Parameter, got {type(data).__name__}")
    return _parameter_class()(data, bool(requires_grad))


def rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """PyTorch's ``_rebuild_parameter_with_state``: a Parameter with its saved attributes."""
    param = rebuild_parameter(data, requires_grad, backward_hooks)
    set_public_state(param, state)
    return param


def rebuild_from_type_v2(func, new_type, args, state):
    """PyTorch's ``_rebuild_from_type_v2``: ``func(*args)`` as ``new_type`` (Tensor or Parameter)
    with the saved attributes."""
    ret = func(*args)
    if not (isinstance(new_type, type) and issubclass(new_type, Tensor) and isinstance(ret, Tensor)):
        raise pickle.UnpicklingError(f"cannot rebuild a tensor as {new_type!r}")
    if type(ret) is not new_type:
        ret = new_type._make_subclass(ret, ret.requires_grad)
    set_public_state(ret, state)
    return ret


def set_public_state(obj, state):
    """Set an object's saved attributes: ``state`` is a dict or a ``(dict, slots dict)`` pair. Private
    names (a leading underscore: autograd fields, hook tables) are never set from a file."""
    if isinstance(state, tuple) and len(state) == 2:
        dict_state, slot_state = state
        for part in (dict_state, slot_state):
            set_public_state(obj, part)
        return
    if not state:
        return
    if not isinstance(state, dict):
        raise pickle.UnpicklingError(f"unexpected tensor state in checkpoint: {type(state).__name__}")
    for key, value in state.items():
        if isinstance(key, str) and not key.startswith("_"):
            setattr(obj, key, value)


def get_layout(name):
    """PyTorch's ``torch.serialization._get_layout``: gputorch has only strided tensors."""
    if name != "torch.strided":
        raise pickle.UnpicklingError(f"gputorch has no layout {name}")
    import gputorch
    return getattr(gputorch, "strided", name)
