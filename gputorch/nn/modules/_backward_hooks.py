"""Module backward hooks: identity graph nodes around a module's inputs and outputs.

When a module has full backward hooks (or backward pre-hooks), ``Module.__call__`` passes its
tensor inputs through :class:`BackwardHookFunction` (an identity autograd Function) before
``forward`` and its tensor outputs through another one after. The node on the outputs sees
``grad_output`` first (its pre-hook runs the module's backward pre-hooks, which may replace
it); the node on the inputs sees ``grad_input`` once the module's own backward has run (its
post-hook runs the full backward hooks, which may replace it). Entries for non-tensor
arguments are ``None``, as in PyTorch.
"""
import functools
import weakref

from ...autograd import grad_mode
from ...autograd.function import Function
from ..._tensor import Tensor

_GRAD_ENABLED = grad_mode.GRAD_ENABLED


class BackwardHookFunction(Function):
    """Returns its tensor arguments unchanged; its node is where module backward hooks attach."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if isinstance(a, Tensor) and not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


class BackwardHook:
    """The backward hooks of one module call (PyTorch's ``torch.utils.hooks.BackwardHook``)."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[idx] for idx in indices)

    def _wrap_tensors(self, args, on_node):
        """Pass the tensors of ``args`` through one identity node; ``on_node(node)`` sets its hook."""
        index = []
        tensors = []
        requires_grad = False
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                index.append(i)
                tensors.append(a)
                requires_grad = requires_grad or a.requires_grad
        if not (requires_grad and _GRAD_ENABLED.value):
            return args, None
        new = BackwardHookFunction.apply(*tensors)
        node = next((t.grad_fn for t in new if t.grad_fn is not None), None)
        on_node(node)
        out = list(args)
        for i, t in zip(index, new):
            out[i] = t
        return (tuple(out) if type(args) is tuple else type(args)(*out)), index

    # -------------------------------------------------------------- inputs: grad_input hooks
    def setup_input_hook(self, args):
        res, index = self._wrap_tensors(args, self._set_user_hook)
        self.n_inputs = len(args)
        self.input_tensors_index = index
        return res

    def _set_user_hook(self, node):
        def hook(grad_input, _grad_output):
            if self.grad_outputs is None:
                # The gradient reached the inputs without going through the outputs (e.g. double backward).
                return None
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(out)}, but expected {len(res)}")
                res = out
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, res)
        node.register_hook(hook)

    # -------------------------------------------------------------- outputs: grad_output hooks
    def setup_output_hook(self, result):
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, index = self._wrap_tensors(args, self._set_output_hook)
        self.n_outputs = len(args)
        self.output_tensors_index = index
        return res if is_tuple else res[0]

    def _set_output_hook(self, node):
        def hook(grad_output):
            self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
            if self.user_pre_hooks:
                expected = len(self.grad_outputs)
                for user_pre_hook in self.user_pre_hooks:
                    new = user_pre_hook(self.module, self.grad_outputs)
                    if new is None:
                        continue
                    if len(new) != expected:
                        raise RuntimeError("Backward pre hook returned an invalid number of grad_output, "
                                           f"got {len(new)}, but expected {expected}")
                    self.grad_outputs = new
            local = self.grad_outputs
            if self.input_tensors_index is None:
                # No input requires grad: the full backward hooks fire here, with grad_input all None.
                grad_inputs = self._pack_with_none([], [], self.n_inputs)
                for user_hook in self.user_hooks:
                    res = user_hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                        raise RuntimeError("Backward hook for Modules where no input requires gradient "
                                           "should always return None or None for all gradients.")
                self.grad_outputs = None
            if local is not None:
                return tuple(local[i] for i in self.output_tensors_index)
            return None
        node.register_prehook(hook)


class WrappedHook:
    """A hook called with its module (held weakly) as first argument."""

    def __init__(self, hook, module=None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if self.with_module:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self):
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state):
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])
