"""The ``Optimizer`` base class: parameter groups, per-parameter state, hooks, state dicts.

An optimizer keeps ``param_groups`` (a list of dicts, each with a ``"params"`` list and its
hyperparameters) and ``state`` (a defaultdict keyed by parameter). ``state_dict()`` has
PyTorch's layout, so optimizer checkpoints interchange with PyTorch (through NumPy arrays).

Each algorithm's math is one function on lists of backend arrays (``sgd_update``,
``adam_update``, ...), updating them in place with the array module's ufuncs in PyTorch's
order of floating-point operations. :func:`apply_update` calls it once per device of the
parameters, through that device's backend ``overrides`` (so a CUDA backend can plug in a
multi-tensor kernel with the same signature), then bumps the parameters' version counters.

Beyond PyTorch, state follows its parameter: when a parameter has been moved to another
device (``model.to("cuda")`` keeps the Parameter object and replaces its data) or cast to
another float dtype, the next ``step()`` moves its state tensors along instead of failing.

``step()`` of every subclass runs the step hooks (global ones first for pre-hooks, last for
post-hooks, as in PyTorch) and runs with grad mode off; :func:`running_step` tells an
observer such as a memory profiler which optimizer is stepping right now.
"""
import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

from .. import _dtype
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.grad_mode import enable_grad
from ..ops.creation import zeros, zeros_like
from ..utils.hooks import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook",
           "running_step", "apply_update", "required"]

_GRAD_ENABLED = grad_mode.GRAD_ENABLED
_global_step_pre_hooks = OrderedDict()
_global_step_post_hooks = OrderedDict()
_RUNNING = []  # optimizers whose step() is running, innermost last


class _RequiredParameter:
    """Marks a hyperparameter that every parameter group must give."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def running_step():
    """The optimizer whose ``step()`` is running now (innermost), or None."""
    return _RUNNING[-1] if _RUNNING else None


def register_optimizer_step_pre_hook(hook):
    """``hook(optimizer, args, kwargs) -> None | (new_args, new_kwargs)`` runs before every
    optimizer's ``step()``. Returns a handle with ``remove()``."""
    handle = RemovableHandle(_global_step_pre_hooks)
    _global_step_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """``hook(optimizer, args, kwargs)`` runs after every optimizer's ``step()``."""
    handle = RemovableHandle(_global_step_post_hooks)
    _global_step_post_hooks[handle.id] = hook
    return handle


def _with_step_hooks(step):
    """Wrap a subclass's ``step``: hooks around it, grad mode off inside, ``running_step`` set."""

    @functools.wraps(step)
    def step_with_hooks(self, *args, **kwargs):
        if _RUNNING and _RUNNING[-1] is self:  # a subclass's step calling super().step()
            return step(self, *args, **kwargs)
        for hook in chain(_global_step_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), "
                                       f"but got {result}.")
                args, kwargs = result
        prev = _GRAD_ENABLED.value
        _GRAD_ENABLED.value = False
        _RUNNING.append(self)
        try:
            out = step(self, *args, **kwargs)
        finally:
            _RUNNING.pop()
            _GRAD_ENABLED.value = prev
        self._opt_called = True  # read by lr schedulers (step order warning)
        for hook in chain(self._optimizer_step_post_hooks.values(), _global_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    step_with_hooks.hooked = True
    return step_with_hooks


def _typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    kind = type(obj)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


class Optimizer:
    """Base class for all optimizers.

    Args:
        params (iterable): Tensors to optimize, ``(name, tensor)`` pairs, or dicts defining
            parameter groups (a ``"params"`` entry plus per-group hyperparameters).
        defaults (dict): hyperparameter values for groups that do not give them.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._init_hook_dicts()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors "
                            "or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def _init_hook_dicts(self):
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())

    # ------------------------------------------------------------------ pickling, repr
    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._init_hook_dicts()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # ------------------------------------------------------------------ parameter groups
    def add_param_group(self, param_group):
        """Add a parameter group (a dict with ``"params"`` and optional hyperparameters; missing
        ones are filled from ``defaults``)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the "
                            "ordering of tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        tensors, names = [], []
        for param in params:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names

        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization "
                                 f"parameter {name}")
            param_group.setdefault(name, default)

        ids = {id(p) for p in tensors}
        if len(ids) != len(tensors):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this "
                          "will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                          "information", stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized tensors (to None by default, else to zeros)."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if grad._grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the model and returns the loss."""
        raise NotImplementedError

    # ------------------------------------------------------------------ hooks
    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs) -> None | (new_args, new_kwargs)`` runs before ``step()``."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs after ``step()``."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    @staticmethod
    def _add_hook(registry, hook, prepend):
        handle = RemovableHandle(registry)
        registry[handle.id] = hook
        if prepend:
            registry.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer)`` runs before ``state_dict()``."""
        return self._add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> state_dict | None`` runs after ``state_dict()``."""
        return self._add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> state_dict | None`` runs before ``load_state_dict()``."""
        return self._add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer)`` runs after ``load_state_dict()``."""
        return self._add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ------------------------------------------------------------------ state dicts
    def state_dict(self):
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``: parameters
        are numbered in group order; the state tensors are the live ones (not copies)."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index_of = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            start = len(index_of)
            for i, p in enumerate(group["params"], start):
                index_of.setdefault(id(p), i)
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index_of[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Load a state dict from :meth:`state_dict` (of this framework or PyTorch's, with tensors
        converted): parameters are matched by order; state tensors are cast to their parameter's
        device (and dtype, for floating-point parameters), except ``"step"`` counters."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size "
                             "of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = _cast_state(param, value)
            else:
                state[key] = value
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # ------------------------------------------------------------------ helpers for step()
    @staticmethod
    def _closure_loss(closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _params_with_grad(self, group, name):
        """The parameters of ``group`` that have a gradient on their own device."""
        params = []
        for p in group["params"]:
            grad = p._grad
            if grad is None:
                continue
            if getattr(grad, "is_sparse", False):
                raise RuntimeError(f"{name} does not support sparse gradients")
            if grad._device is not p._device:
                raise RuntimeError(f"{name}: a parameter on {p._device} has its gradient on {grad._device}; "
                                   "move the gradient with the parameter (nn.Module.to does both)")
            params.append(p)
        return params

    def _step_states(self, params, buffers):
        """The per-step state of ``params`` for optimizers whose state is a ``step`` counter and
        zero-initialised buffers named ``buffers`` (created at a parameter's first step, in that
        key order, PyTorch's state_dict layout). Increments every counter and returns
        ``(arrays, steps)``: one list of backend arrays per buffer name, aligned with ``params``,
        and the step counts after this step."""
        arrays = [[] for _ in buffers]
        steps = []
        for p in params:
            state = self._param_state(p)
            if len(state) == 0:
                state["step"] = new_step_counter()
                for name in buffers:
                    state[name] = zeros_like(p)
            for column, name in zip(arrays, buffers):
                column.append(state[name]._data)
            steps.append(increment_step(state["step"]))
        return arrays, steps

    def _param_state(self, p, scalar_keys=("step",)):
        """``self.state[p]``, with its tensors moved to ``p``'s device and float dtype if ``p`` moved;
        the 0-d scalars named in ``scalar_keys`` (``step``, NAdam's ``mu_product``, ...) keep their own
        device and dtype, as PyTorch keeps them."""
        state = self.state[p]
        dev, dt = p._device, p._dtype
        for key, value in state.items():
            if isinstance(value, Tensor) and key not in scalar_keys and (
                    value._device is not dev
                    or (value._dtype is not dt and value._dtype._category == 2 and dt._category == 2)):
                state[key] = value.to(device=dev, dtype=dt if dt._category == 2 and
                                      value._dtype._category == 2 else None)
        return state


def _cast_state(param, value, key=None):
    """Loaded state ``value`` with its tensors on ``param``'s device (and float dtype); like
    PyTorch, a tensor already there is kept as is (shared with the loaded dict)."""
    if isinstance(value, Tensor):
        if key == "step":
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v) for v in value)
    return value


def scalar_dtype():
    """The dtype of ``"step"`` counters: float64 when that is the default dtype, else float32."""
    return _dtype.float64 if _dtype.get_default_dtype() is _dtype.float64 else _dtype.float32


def new_step_counter():
    """A zero ``"step"`` counter: a 0-d float tensor on the CPU, as PyTorch keeps it."""
    return zeros((), dtype=scalar_dtype(), device="cpu")


def increment_step(step_t):
    """``step_t += 1`` in place (a tensor counter); returns the new count as a Python float."""
    if step_t._device._ctx is None:  # the usual CPU counter: no dispatch
        data = step_t._data
        data += 1
        step_t._vc[0] += 1
        return float(data)
    step_t.add_(1)
    return step_t.item()


def as_float(value):
    """A hyperparameter that may be a one-element tensor, as a Python number."""
    return value.item() if isinstance(value, Tensor) else value


def apply_update(update, params, grads, *state_lists, **hyper):
    """Run ``update(param_arrays, grad_arrays, *state_array_lists, xp=..., **hyper)`` once per device
    of ``params`` (the device's backend override of ``update`` when it has one), then bump the
    parameters' version counters.

    ``grads`` and each state list hold backend arrays aligned with ``params`` (an empty list for
    state the configuration does not use). ``update`` may replace entries of the state lists (SGD
    creates momentum buffers); the replacements are written back into the given lists.
    """
    dev = params[0]._device
    for p in params:
        if p._device is not dev:
            _apply_per_device(update, params, grads, state_lists, hyper)
            break
    else:
        backend = dev._backend
        fn = backend.overrides.get(update, update)
        arrays = [p._data for p in params]
        ctx = dev._ctx
        if ctx is None:
            fn(arrays, grads, *state_lists, xp=backend.xp, **hyper)
        else:
            with ctx:
                fn(arrays, grads, *state_lists, xp=backend.xp, **hyper)
    for p in params:
        p._vc[0] += 1


def _apply_per_device(update, params, grads, state_lists, hyper):
    by_device = {}
    for i, p in enumerate(params):
        by_device.setdefault(p._device, []).append(i)
    for dev, idx in by_device.items():
        backend = dev._backend
        fn = backend.overrides.get(update, update)
        subs = [[lst[i] for i in idx] if lst else [] for lst in state_lists]
        args = ([params[i]._data for i in idx], [grads[i] for i in idx], *subs)
        ctx = dev._ctx
        if ctx is None:
            fn(*args, xp=backend.xp, **hyper)
        else:
            with ctx:
                fn(*args, xp=backend.xp, **hyper)
        for lst, sub in zip(state_lists, subs):
            if lst:
                for j, i in enumerate(idx):
                    lst[i] = sub[j]


def lerp_(xp, start, end, weight):
    """``start.lerp_(end, weight)`` for a Python-number weight, in PyTorch's form."""
    diff = xp.subtract(end, start)
    if abs(weight) < 0.5:
        diff *= weight
        start += diff
    else:
        diff *= weight - 1
        xp.add(end, diff, out=start)


def add_scaled(xp, grad, param, alpha, owned):
    """``grad + alpha * param`` (``grad.add(param, alpha=alpha)``); reuses ``grad`` when ``owned``."""
    scaled = xp.multiply(param, alpha)
    if owned:
        grad += scaled
        return grad
    scaled += grad
    return scaled


def check_flags(foreach, fused, differentiable):
    """PyTorch's checks of the implementation flags; ``differentiable=True`` is not supported."""
    if fused and differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if differentiable:
        raise NotImplementedError("differentiable=True is not supported: gputorch optimizers update "
                                  "parameters in place outside the autograd graph")
