"""The globals a checkpoint may name, by ``(module, name)``.

:func:`torch_globals` translates the names PyTorch's files use to gputorch objects; with
``weights_only=True`` (the default) they are the only globals allowed, as in PyTorch's weights-only
unpickler (containers, ``collections.OrderedDict``/``Counter``, ``set``, ``bytearray``, ``complex``,
bytes via ``_codecs.encode``, tensors, Parameters, storages, dtypes, devices, Sizes), plus the
gputorch names that files written by gputorch 0.1.0 use, plus what the user added with
:func:`add_safe_globals`.
"""
import codecs
import collections
import contextlib

from .. import _dtype
from .._device import device as Device
from .._size import Size
from .._tensor import Tensor
from . import rebuild, torch_names as names

_TORCH = None
_USER_SAFE = {}


def _unsupported(kind, name):
    return rebuild.Unsupported(f"{kind} {name}")


def torch_globals():
    """``{(module, name): gputorch object}`` for the globals PyTorch's checkpoints name."""
    global _TORCH
    if _TORCH is not None:
        return _TORCH
    from ..nn.parameter import Parameter, _rebuild_parameter
    from .._tensor import _rebuild_tensor
    table = {
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("collections", "Counter"): collections.Counter,
        ("_codecs", "encode"): codecs.encode,
        ("builtins", "set"): set,
        ("builtins", "bytearray"): bytearray,
        ("builtins", "complex"): complex,
        ("torch", "Size"): Size,
        ("torch", "Tensor"): Tensor,
        ("torch", "device"): Device,
        ("torch.nn.parameter", "Parameter"): Parameter,
        ("torch.serialization", "_get_layout"): rebuild.get_layout,
        ("torch._utils", "_rebuild_tensor"): rebuild.rebuild_tensor,
        ("torch._utils", "_rebuild_tensor_v2"): rebuild.rebuild_tensor_v2,
        ("torch._utils", "_rebuild_meta_tensor_no_storage"): rebuild.rebuild_meta_tensor_no_storage,
        ("torch._utils", "_rebuild_parameter"): rebuild.rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): rebuild.rebuild_parameter_with_state,
        ("torch._tensor", "_rebuild_from_type_v2"): rebuild.rebuild_from_type_v2,
        # the names gputorch 0.1.0's files use
        ("gputorch._size", "Size"): Size,
        ("gputorch._dtype", "_by_name"): _dtype._by_name,
        ("gputorch._device", "device"): Device,
        ("gputorch._tensor", "_rebuild_tensor"): _rebuild_tensor,
        ("gputorch.nn.parameter", "_rebuild_parameter"): _public_rebuild_parameter(_rebuild_parameter),
    }
    for dt, storage_name in names.STORAGE_CLASS.items():
        for module in ("torch", "torch.cuda"):
            table[(module, storage_name)] = rebuild.StorageType(storage_name, dt)
        table[("torch", dt.name)] = dt
    for alias, name in names.DTYPE_ALIASES.items():
        table[("torch", alias)] = names.DTYPE_NAMES[name]
    for storage_name, dtype_name in names.UNSUPPORTED_STORAGES.items():
        for module in ("torch", "torch.cuda"):
            table[(module, storage_name)] = _unsupported("tensors of dtype", f"torch.{dtype_name}")
    for dtype_name in names.UNSUPPORTED_DTYPES:
        table[("torch", dtype_name)] = _unsupported("the dtype", f"torch.{dtype_name}")
    _TORCH = table
    return table


def _public_rebuild_parameter(rebuild_parameter):
    def rebuild_public(data, requires_grad, state=None):
        if state:
            state = {k: v for k, v in state.items() if isinstance(k, str) and not k.startswith("_")}
        return rebuild_parameter(data, requires_grad, state)
    return rebuild_public


def user_safe_globals():
    return _USER_SAFE


def add_safe_globals(safe_globals):
    """Allow more classes/functions in ``weights_only`` loading: a list of objects, or of
    ``(object, "module.name")`` pairs for objects pickled under another name."""
    for entry in safe_globals:
        if isinstance(entry, tuple):
            obj, full_name = entry
            module, _, name = full_name.rpartition(".")
        else:
            obj = entry
            module, name = obj.__module__, obj.__qualname__
        _USER_SAFE[(module, name)] = obj


def get_safe_globals():
    """The objects added with :func:`add_safe_globals`."""
    return list(_USER_SAFE.values())


def clear_safe_globals():
    """Forget the objects added with :func:`add_safe_globals`."""
    _USER_SAFE.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Context manager: :func:`add_safe_globals` for the duration of the block."""
    saved = dict(_USER_SAFE)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _USER_SAFE.clear()
        _USER_SAFE.update(saved)
