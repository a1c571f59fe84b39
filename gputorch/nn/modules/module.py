"""``nn.Module``: the base class of every layer and model.

A module keeps its state in three ordered dicts: ``_parameters`` (``Parameter`` or None),
``_buffers`` (Tensor or None; names in ``_non_persistent_buffers_set`` stay out of the
state dict) and ``_modules`` (child modules). Assigning a Parameter, a Module or a
``Buffer`` to an attribute registers it there (``__setattr__``), and ``__getattr__`` reads
them back. Everything that walks the tree (``named_parameters``, ``state_dict``,
``_apply`` behind ``to``/``cuda``/``double``..., ``train``) follows that registration order,
so names and state dict keys are PyTorch's.

``_apply`` keeps every Parameter object: its data (and its ``.grad``'s data) is replaced
in place through the ``.data`` setter, so an optimizer built before ``model.to(...)``
still holds the module's parameters.

Calling a module runs PyTorch's ``_call_impl`` order: global then local forward
pre-hooks (may replace the input), ``forward``, global then local forward hooks (may
replace the output); full backward hooks and backward pre-hooks are attached through
identity graph nodes around the inputs and outputs (see ``_backward_hooks.py``).
"""
import inspect
import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ... import _dtype
from ..._device import device as Device
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...utils.hooks import RemovableHandle
from ..parameter import Buffer, Parameter
from ._backward_hooks import BackwardHook, WrappedHook

__all__ = [
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_backward_hook",
    "register_module_full_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
    "Module",
]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it did not find and the ones it did not expect."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _ModuleHookHandle(RemovableHandle):
    """A RemovableHandle that also forgets the hook's flags (with_kwargs, always_call)."""

    __slots__ = ("_extra",)

    def __init__(self, registry, extra=()):
        super().__init__(registry)
        self._extra = tuple(extra)

    def remove(self):
        super().remove()
        for d in self._extra:
            d.pop(self.id, None)


def _register(registry, hook, extra=(), prepend=False):
    handle = _ModuleHookHandle(registry, extra)
    registry[handle.id] = hook
    if prepend:
        registry.move_to_end(handle.id, last=False)
    return handle


def _typename(obj):
    """PyTorch's ``torch.typename``: legacy type string for tensors, qualified class name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None)
    if qualname is None:
        module = type(obj).__module__ or ""
        qualname = type(obj).__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


def _addindent(s, num_spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    pad = " " * num_spaces
    return first + "\n" + "\n".join(pad + line if line.strip() else "" for line in lines)


# ---------------------------------------------------------------- global hooks (all modules)
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_is_full_backward_hook = None
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()


def register_module_buffer_registration_hook(hook):
    """``hook(module, name, buffer) -> None | new buffer`` runs on every ``register_buffer``."""
    return _register(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """``hook(module, name, submodule) -> None | new submodule`` runs on every submodule registration."""
    return _register(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """``hook(module, name, param) -> None | new param`` runs on every ``register_parameter``."""
    return _register(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook):
    """``hook(module, args) -> None | new args`` before every module's forward (before local hooks)."""
    return _register(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """``hook(module, args, output) -> None | new output`` after every module's forward."""
    handle = _register(_global_forward_hooks, hook,
                       (_global_forward_hooks_with_kwargs, _global_forward_hooks_always_called))
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_backward_hook(hook):
    """Deprecated non-full backward hook for every module (use the full variant)."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is True:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = False
    return _register(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook):
    """``hook(module, grad_output) -> None | new grad_output`` for every module."""
    return _register(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """``hook(module, grad_input, grad_output) -> None | new grad_input`` for every module."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is False:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = True
    return _register(_global_backward_hooks, hook)


def _remove_name(name, *containers):
    """Forget ``name`` in each dict or set (an attribute changing kind: buffer -> parameter...)."""
    for c in containers:
        if name in c:
            if isinstance(c, dict):
                del c[name]
            else:
                c.discard(name)


def _forward_unimplemented(self, *input):
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


def _parse_to(*args, **kwargs):
    """``Module.to`` arguments -> (device, dtype, non_blocking, memory_format), like ``Tensor.to``."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    memory_format = kwargs.pop("memory_format", None)
    kwargs.pop("copy", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected keyword "
                        f"argument(s) {', '.join(sorted(kwargs))}")
    rest = list(args)
    if rest:
        first = rest.pop(0)
        if isinstance(first, Tensor):
            device, dtype = first.device, first.dtype
        elif isinstance(first, _dtype.dtype):
            dtype = first
        elif first is None or isinstance(first, (str, Device)) or (
                isinstance(first, int) and not isinstance(first, bool)):
            device = first
            if rest and (rest[0] is None or isinstance(rest[0], _dtype.dtype)):
                dtype = rest.pop(0)
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got ({_typename(first)}, ...)")
        if rest:
            non_blocking = rest.pop(0)
        if rest:
            rest.pop(0)  # copy
        if rest:
            raise TypeError(f"to() takes at most 4 positional arguments ({len(args)} given)")
    if device is not None and not isinstance(device, Device):
        device = Device("cuda", device) if isinstance(device, int) else Device(device)
    if dtype is not None:
        dtype = _dtype.to_dtype(dtype)
    return device, dtype, non_blocking, memory_format


class Module:
    """Base class for all neural network modules; models subclass it and define ``forward``.

    Submodules, parameters and buffers assigned as attributes are registered (call
    ``super().__init__()`` before assigning them) and are seen by ``parameters()``,
    ``state_dict()``, ``to()``, ``train()``...
    """

    dump_patches = False
    _version = 1
    call_super_init = False
    training: bool

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_backward_pre_hooks", OrderedDict())
        setattr_(self, "_backward_hooks", OrderedDict())
        setattr_(self, "_is_full_backward_hook", None)
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", OrderedDict())
        setattr_(self, "_forward_hooks_always_called", OrderedDict())
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_(self, "_state_dict_hooks", OrderedDict())
        setattr_(self, "_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_post_hooks", OrderedDict())
        setattr_(self, "_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward = _forward_unimplemented

    # ================================================================ registration
    def register_buffer(self, name, tensor, persistent=True):
        """Add a buffer (module state that is not a parameter, e.g. a running mean).

        A non-persistent buffer is left out of ``state_dict``; a ``None`` buffer is skipped by
        ``to()``/``state_dict``.
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        for hook in _global_buffer_registration_hooks.values():
            output = hook(self, name, tensor)
            if output is not None:
                tensor = output
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Add a parameter (a ``Parameter`` or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                "the forward() method.")
        for hook in _global_parameter_registration_hooks.values():
            output = hook(self, name, param)
            if output is not None:
                param = output
        self._parameters[name] = param

    def add_module(self, name, module):
        """Add a child module (or None) under ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in _global_module_registration_hooks.values():
            output = hook(self, name, module)
            if output is not None:
                module = output
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias for :meth:`add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target):
        """The submodule at dotted path ``target`` ("" is ``self``); AttributeError if there is none."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Replace (or, unless ``strict``, add) the submodule at dotted path ``target``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`" + "module" + f"` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]):
            if not isinstance(getattr(parent, atoms[-1]), Module):
                raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target):
        """The parameter at dotted path ``target``; AttributeError if there is none."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at dotted path ``target``; AttributeError if there is none."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        buffer = getattr(mod, buffer_name)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer

    def get_extra_state(self):
        """Extra (non-tensor) state for ``state_dict``; override together with ``set_extra_state``."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        """Restore what ``get_extra_state`` returned (called by ``load_state_dict``)."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    # ================================================================ attribute protocol
    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d:
            params = d["_parameters"]
            if name in params:
                return params[name]
        if "_buffers" in d:
            buffers = d["_buffers"]
            if name in buffers:
                return buffers[name]
        if "_modules" in d:
            modules = d["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_name(name, d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_name(name, d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            for hook in _global_module_registration_hooks.values():
                output = hook(self, name, value)
                if output is not None:
                    value = output
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            for hook in _global_module_registration_hooks.values():
                output = hook(self, name, value)
                if output is not None:
                    value = output
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            if type(self).register_buffer is Module.register_buffer or \
                    "persistent" in inspect.signature(self.register_buffer).parameters:
                self.register_buffer(name, value, persistent)
            else:
                if not persistent:
                    raise RuntimeError("Registering a non-persistent buffer on a Module subclass that "
                                       "implements register_buffer() without the persistent argument "
                                       "is not allowed.")
                self.register_buffer(name, value)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        # Objects pickled by older versions may lack some of the hook dicts.
        for name in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs",
                     "_forward_hooks_always_called", "_state_dict_hooks", "_state_dict_pre_hooks",
                     "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks", "_backward_pre_hooks"):
            if name not in self.__dict__:
                object.__setattr__(self, name, OrderedDict())
        if "_non_persistent_buffers_set" not in self.__dict__:
            object.__setattr__(self, "_non_persistent_buffers_set", set())
        if "_is_full_backward_hook" not in self.__dict__:
            object.__setattr__(self, "_is_full_backward_hook", None)

    def __dir__(self):
        keys = dir(self.__class__) + list(self.__dict__) + list(self._parameters) + \
            list(self._modules) + list(self._buffers)
        return sorted(k for k in keys if not k[0].isdigit())

    # ================================================================ iteration
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        """Iterator over the parameters (of submodules too unless ``recurse=False``)."""
        for _name, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterator over ``(dotted name, parameter)``; a shared parameter is listed once by default."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        """Iterator over the buffers (persistent or not)."""
        for _name, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterator over ``(dotted name, buffer)``."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def children(self):
        """Iterator over the immediate child modules."""
        for _name, module in self.named_children():
            yield module

    def named_children(self):
        """Iterator over ``(name, child module)``, each module once."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate=True):
        """Iterator over all modules of the tree, ``self`` first."""
        for _name, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Iterator over ``(dotted name, module)`` for the whole tree, depth first, ``self`` first."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub_prefix, remove_duplicate)

    # ================================================================ modes and gradients
    def compile(self, *args, **kwargs):
        """Accepted as in PyTorch (``model.compile()``); gputorch runs eagerly, so the module keeps
        running as it is (see :func:`gputorch.compile`, which checks the options and says so once)."""
        from ..._compile import compile as compile_fn
        compile_fn(self._call_impl, *args, **kwargs)

    def train(self, mode=True):
        """Set training mode (``mode=True``) or evaluation mode on this module and its children."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """``self.train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` on every parameter (e.g. to freeze part of a model)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the parameters' gradients: to None (default) or to zeros in place."""
        for p in self.parameters():
            grad = p.grad
            if grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    def share_memory(self):
        """PyTorch moves the parameters' storage to shared memory so that worker processes train one
        model (Hogwild). gputorch cannot yet: rather than let each process silently train its own
        copy, this raises."""
        raise NotImplementedError("Module.share_memory(): gputorch cannot put tensors in shared memory yet; "
                                  "processes started after this would each train their own copy of the model")

    def apply(self, fn):
        """Call ``fn(module)`` on every child (recursively), then on ``self``; returns ``self``."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ================================================================ device and dtype moves
    def _apply(self, fn, recurse=True):
        """Replace every parameter's data by ``fn(param)`` (keeping the Parameter object and its
        ``.grad`` object), every buffer by ``fn(buffer)``; children first."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            param.data = applied
            grad = param._grad
            if grad is not None:
                with no_grad():
                    grad_applied = fn(grad)
                grad.data = grad_applied
        buffers = self._buffers
        for key, buf in buffers.items():
            if buf is not None:
                buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """Move and/or cast parameters and buffers: ``to(device)``, ``to(dtype)``, ``to(tensor)``,
        ``to(device, dtype)``, with ``non_blocking``. Only floating-point tensors change dtype."""
        device, dtype, non_blocking, _memory_format = _parse_to(*args, **kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t):
            return t.to(device=device, dtype=dtype if t.is_floating_point() else None,
                        non_blocking=non_blocking)
        return self._apply(convert)

    def cuda(self, device=None):
        """Move parameters and buffers to a CUDA device (the current one by default)."""
        return self._apply(lambda t: t.cuda(device))

    def cpu(self):
        """Move parameters and buffers to the CPU."""
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        """Cast all parameters and buffers to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        """Cast floating-point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Cast floating-point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        """Cast floating-point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        """Cast floating-point parameters and buffers to bfloat16 (CPU only; needs ml_dtypes)."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device, recurse=True):
        """Move parameters and buffers to ``device`` without copying their values."""
        from ...ops.creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    # ================================================================ hooks
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args) -> None | new args`` (or, ``with_kwargs``,
        ``hook(module, args, kwargs) -> None | (new args, new kwargs)``) before ``forward``."""
        handle = _register(self._forward_pre_hooks, hook, (self._forward_pre_hooks_with_kwargs,), prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """``hook(module, args, output) -> None | new output`` (or, ``with_kwargs``,
        ``hook(module, args, kwargs, output)``) after ``forward``; ``always_call`` runs it even
        when forward raises."""
        handle = _register(self._forward_hooks, hook,
                           (self._forward_hooks_with_kwargs, self._forward_hooks_always_called), prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output) -> None | new grad_output`` when the output gradients are known."""
        return _register(self._backward_pre_hooks, hook, (), prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output) -> None | new grad_input`` when the gradients with
        respect to the module's positional inputs are computed."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single "
                               "Module. Please use only one of them.")
        self._is_full_backward_hook = True
        return _register(self._backward_hooks, hook, (), prepend)

    def register_backward_hook(self, hook):
        """Deprecated: a hook on the grad_fn of the module's output (use ``register_full_backward_hook``)."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single "
                               "Module. Please use only one of them.")
        self._is_full_backward_hook = False
        return _register(self._backward_hooks, hook)

    def _get_backward_hooks(self):
        full, non_full = [], []
        if _global_is_full_backward_hook is True:
            full += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        if _global_is_full_backward_hook is False:
            non_full += _global_backward_hooks.values()
        if self._is_full_backward_hook is False:
            non_full += self._backward_hooks.values()
        return full, non_full

    def _get_backward_pre_hooks(self):
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    # ================================================================ calling
    def _call_impl(self, *args, **kwargs):
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks
                or self._backward_pre_hooks or _global_forward_hooks or _global_forward_pre_hooks
                or _global_backward_hooks or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    __call__ = _call_impl
    _wrapped_call_impl = _call_impl

    def _call_with_hooks(self, args, kwargs):
        result = None
        called_always = set()
        try:
            full_backward_hooks, non_full_backward_hooks = [], []
            backward_pre_hooks = []
            if self._backward_pre_hooks or _global_backward_pre_hooks:
                backward_pre_hooks = self._get_backward_pre_hooks()
            if self._backward_hooks or _global_backward_hooks:
                full_backward_hooks, non_full_backward_hooks = self._get_backward_hooks()

            if _global_forward_pre_hooks or self._forward_pre_hooks:
                with_kwargs = self._forward_pre_hooks_with_kwargs
                for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
                    if hook_id in with_kwargs:
                        out = hook(self, args, kwargs)
                        if out is not None:
                            if isinstance(out, tuple) and len(out) == 2:
                                args, kwargs = out
                            else:
                                raise RuntimeError("forward pre-hook must return None or a tuple of "
                                                   f"(new_args, new_kwargs), but got {out}.")
                    else:
                        out = hook(self, args)
                        if out is not None:
                            args = out if isinstance(out, tuple) else (out,)

            bw_hook = None
            if full_backward_hooks or backward_pre_hooks:
                bw_hook = BackwardHook(self, full_backward_hooks, backward_pre_hooks)
                args = bw_hook.setup_input_hook(args)

            result = self.forward(*args, **kwargs)

            if _global_forward_hooks or self._forward_hooks:
                for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                    if hook_id in self._forward_hooks_always_called or \
                            hook_id in _global_forward_hooks_always_called:
                        called_always.add(hook_id)
                    if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                        out = hook(self, args, kwargs, result)
                    else:
                        out = hook(self, args, result)
                    if out is not None:
                        result = out

            if bw_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a Tensor or a "
                                  f"tuple of Tensors but received {type(result)}", stacklevel=3)
                result = bw_hook.setup_output_hook(result)

            if non_full_backward_hooks:
                var = result
                while not isinstance(var, Tensor):
                    var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) \
                        else var[0]
                grad_fn = var.grad_fn
                if grad_fn is not None:
                    for hook in non_full_backward_hooks:
                        grad_fn.register_hook(WrappedHook(hook, self))
            return result
        except Exception:
            self._run_always_called_hooks(args, kwargs, result, called_always)
            raise

    def _run_always_called_hooks(self, args, kwargs, result, already_called):
        for hook_id, hook in _global_forward_hooks.items():
            if hook_id in _global_forward_hooks_always_called and hook_id not in already_called:
                try:
                    out = hook(self, args, result)
                    if out is not None:
                        result = out
                except Exception as e:
                    warnings.warn("global module forward hook with ``always_call=True`` raised an exception "
                                  f"that was silenced as another error was raised in forward: {e}", stacklevel=3)
        for hook_id, hook in self._forward_hooks.items():
            if hook_id in self._forward_hooks_always_called and hook_id not in already_called:
                try:
                    if hook_id in self._forward_hooks_with_kwargs:
                        out = hook(self, args, kwargs, result)
                    else:
                        out = hook(self, args, result)
                    if out is not None:
                        result = out
                except Exception as e:
                    warnings.warn("module forward hook with ``always_call=True`` raised an exception that "
                                  f"was silenced as another error was raised in forward: {e}", stacklevel=3)

    # ================================================================ state dict
    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` before ``state_dict`` saves this module."""
        return _register(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata) -> None`` after this module is saved."""
        hook._from_public_api = True
        return _register(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook):
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was "
                               "previously registered via register_state_dict_post_hook")
        return _register(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` before this module loads its entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        return _register(self._load_state_dict_pre_hooks, WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys) -> None`` after ``load_state_dict`` visited this module."""
        return _register(self._load_state_dict_post_hooks, hook)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """Put this module's own parameters and persistent buffers into ``destination``."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ordered dict of every parameter and persistent buffer, keyed by dotted name.

        Tensors are detached (sharing storage) unless ``keep_vars``. The dict's ``_metadata``
        holds each module's ``version``.
        """
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead.", FutureWarning,
                          stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if hook_result is not None:
                    destination = hook_result
            elif hook_result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Copy this module's own entries from ``state_dict`` (not its children's).

        Subclasses override it for version-dependent loading (``local_metadata["version"]``).
        """
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local_state = {k: v for k, v in itertools.chain(
            self._parameters.items(),
            ((k, v) for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set))
            if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor) and hasattr(input_param, "__dlpack__") and \
                    hasattr(input_param, "detach"):   # another framework's tensor (e.g. PyTorch's): via DLPack
                from ...utils.dlpack import from_dlpack
                input_param = from_dlpack(input_param.detach().cpu().contiguous())
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(input_param)}")
                continue
            if param.ndim == 0 and input_param.shape == (1,):
                input_param = input_param.reshape(())
            if input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} "
                                  f"from checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(input_param, Parameter):
                                input_param = Parameter(input_param, requires_grad=param.requires_grad)
                            else:
                                input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model '
                                  f"are {param.size()} and whose dimensions in the checkpoint are "
                                  f"{input_param.size()}, an exception occurred : {ex.args}.")
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict`` into this module and its children.

        Values are copied into the existing tensors under ``no_grad`` (the Parameter objects
        stay); ``assign=True`` puts the given tensors in place instead. With ``strict`` a
        missing or unexpected key is an error. Returns ``(missing_keys, unexpected_keys)``.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys = []
        unexpected_keys = []
        error_msgs = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                    load(child, child_state, child_prefix)
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not expected to "
                        "return new values, if incompatible_keys need to be modified, it should be done "
                        "inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ================================================================ printing
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The module-specific part of ``repr`` (e.g. ``in_features=2, out_features=3``)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
