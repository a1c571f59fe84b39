"""Unpicklers for checkpoints: PyTorch's names resolved to gputorch, and the weights-only rules.

With ``weights_only=True`` (the default, as in PyTorch 2.6+) the unpickler resolves only the globals
of :mod:`.safe_globals` and refuses any other with ``pickle.UnpicklingError`` naming it, before
anything is called, so a malicious file (``os.system`` in a ``__reduce__``) cannot run code. It also
restricts ``BUILD`` (setting an object's state) to tensors, Parameters and OrderedDicts, and never
sets private attributes. With ``weights_only=False`` any global resolves (trusted files only); a
``torch.*`` name that is not in the table resolves to the gputorch object of the same name.
"""
import _compat_pickle
import collections
import importlib
import pickle

from .._tensor import Tensor
from . import rebuild
from .safe_globals import torch_globals, user_safe_globals


def refusal(module, name):
    """The error for a global that weights-only loading does not allow."""
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, but only do so if you trust its "
        "source: re-running gputorch.load with weights_only=False will likely succeed, but it can run "
        "arbitrary code from the file. Alternatively, allow the global with "
        f"gputorch.serialization.add_safe_globals([{module}.{name}]) or the "
        f"gputorch.serialization.safe_globals([{module}.{name}]) context manager if you trust it.\n"
        f"WeightsUnpickler error: Unsupported global: GLOBAL {module}.{name} was not an allowed global by "
        "default.")


def _python3_name(module, name):
    """Python 2 names that pickle protocol 2 writes (``__builtin__.set``), in Python 3 spelling."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _torch_to_gputorch(module, name):
    """A ``torch.*`` global of a trusted file as the gputorch object of the same name."""
    target = "gputorch" + module[len("torch"):]
    try:
        obj = importlib.import_module(target)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise pickle.UnpicklingError(f"this checkpoint needs {module}.{name}, which gputorch does not "
                                     f"have ({target}.{name})") from exc
    return obj


def _restricted_build(self):
    """``BUILD`` for weights-only loading: only tensors, Parameters, OrderedDicts and the classes
    added with ``add_safe_globals`` take state."""
    inst = self.stack[-2]
    if type(inst) in _user_classes():
        return pickle._Unpickler.load_build(self)
    state = self.stack.pop()
    if type(inst) is collections.OrderedDict:
        if isinstance(state, dict):
            inst.__dict__.update({k: v for k, v in state.items() if isinstance(k, str)})
            return
    elif isinstance(inst, Tensor):
        rebuild.set_public_state(inst, state)
        return
    raise pickle.UnpicklingError(f"Can only build Tensor, Parameter, OrderedDict or types allowed with "
                                 f"add_safe_globals in weights-only loading, not {type(inst).__name__}")


def _checked(opcode_handler, allowed, target_of):
    """``opcode_handler`` run only when the object it modifies is of an ``allowed`` type."""
    def handler(self):
        target = target_of(self)
        if type(target) not in allowed:
            raise pickle.UnpicklingError(f"weights-only loading cannot apply {opcode_handler.__name__[5:].upper()} "
                                         f"to a {type(target).__name__}")
        opcode_handler(self)
    return handler


def _below_mark(self):
    return self.metastack[-1][-1] if self.metastack and self.metastack[-1] else None


def _refuse_extension(self):
    raise pickle.UnpicklingError("weights-only loading does not support the copyreg extension registry "
                                 "(EXT opcodes)")


def _user_classes():
    return {obj for obj in user_safe_globals().values() if isinstance(obj, type)}


class WeightsOnlyUnpickler(pickle._Unpickler):
    """The restricted unpickler (pure Python, so that ``BUILD`` can be restricted)."""

    dispatch = dict(pickle._Unpickler.dispatch)
    dispatch[pickle.BUILD[0]] = _restricted_build
    _dicts = (dict, collections.OrderedDict, collections.Counter)
    dispatch[pickle.APPEND[0]] = _checked(pickle._Unpickler.load_append, (list,), lambda self: self.stack[-2])
    dispatch[pickle.APPENDS[0]] = _checked(pickle._Unpickler.load_appends, (list,), _below_mark)
    dispatch[pickle.SETITEM[0]] = _checked(pickle._Unpickler.load_setitem, _dicts, lambda self: self.stack[-3])
    dispatch[pickle.SETITEMS[0]] = _checked(pickle._Unpickler.load_setitems, _dicts, _below_mark)
    dispatch[pickle.ADDITEMS[0]] = _checked(pickle._Unpickler.load_additems, (set,), _below_mark)
    for _ext in (pickle.EXT1, pickle.EXT2, pickle.EXT4):
        dispatch[_ext[0]] = _refuse_extension
    del _dicts, _ext

    def find_class(self, module, name):
        module, name = _python3_name(module, name)
        obj = torch_globals().get((module, name))
        if obj is None:
            obj = user_safe_globals().get((module, name))
        if obj is None:
            raise refusal(module, name)
        return obj


def trusting_unpickler(pickle_module):
    """An unpickler class over ``pickle_module.Unpickler`` that resolves every global."""
    base = getattr(pickle_module, "Unpickler", pickle.Unpickler)

    class TrustingUnpickler(base):
        def find_class(self, module, name):
            mapped = torch_globals().get(_python3_name(module, name))
            if mapped is not None:
                return mapped
            if module == "torch" or module.startswith("torch."):
                return _torch_to_gputorch(module, name)
            return super().find_class(module, name)

    return TrustingUnpickler


def unpickle(stream, weights_only, pickle_module, kwargs, persistent_load=None):
    """Load one pickle from ``stream`` under the rules of ``weights_only``."""
    cls = WeightsOnlyUnpickler if weights_only else trusting_unpickler(pickle_module)
    unpickler = cls(stream, **kwargs)
    if persistent_load is not None:
        unpickler.persistent_load = persistent_load
    return unpickler.load()
