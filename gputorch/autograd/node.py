"""Graph nodes: the backward functions that ops record as they run.

A :class:`Node` is created by the dispatcher when an op runs with grad mode on and
an input requires grad. ``next_functions`` holds one ``(node, input_nr)`` edge per
tensor input; leaves that require grad are reached through :class:`AccumulateGrad`.
Built-in ops subclass Node and define ``forward(ctx, ...)`` on arrays next to
``backward(ctx, *grads)`` written in Tensor ops (so that backward is itself
differentiable when ``create_graph=True``).
"""
import itertools
import weakref

from .. import _dtype
from ..utils.hooks import add_hook
from . import saved_hooks

_sequence = itertools.count()
next_sequence_nr = _sequence.__next__

# Observers of saving: ``hook(saved)`` runs for every new :class:`SavedTensor` (which holds the
# tensor in ``.tensor``, or what the pack hook returned in ``.packed``); the graph holds that
# storage for backward until the SavedTensor dies (weak-referenceable for that). The memory
# profiler registers here; empty, it costs one check per saved tensor.
SAVE_HOOKS = []

from .saved_names import SAVED_NAMES  # noqa: E402


class Node:
    """A backward function in the autograd graph (``tensor.grad_fn``)."""

    next_functions = ()
    _saved = ()            # SavedTensor entries; None once released after backward
    _result_saved = None   # SavedTensor of the output, for ops with ``saves_result``
    _num_outputs = 1
    _output_meta = None    # [(shape, dtype, device)] of multi-output ops (to materialise zeros)
    _bfloat16_inputs = ()  # positions of bfloat16 operands (see gputorch._bfloat16)
    _pre_hooks = None      # {id: fn(grad_outputs) -> grad_outputs | None}
    _post_hooks = None     # {id: fn(grad_inputs, grad_outputs) -> grad_inputs | None}
    _tensor_pre_hooks = None  # {output_nr: {id: fn(grad) -> grad | None}}
    _retain_grad_hooks = None  # {output_nr: weakref to the tensor that retains its grad}
    _trace = None          # forward stack, recorded under detect_anomaly
    _sequence_nr = 0
    saves_result = False   # class flag: the dispatcher saves the op's output for backward
    moves_device = False   # class flag: the output lives on the ``device`` param, not the input's
    supports_complex = False   # class flag: forward and backward are right for complex tensors
    keeps_bfloat16 = False   # class flag: forward takes bfloat16 arrays as they are (see gputorch._bfloat16)
    output_follows_input = False   # class flag: the result has the first operand's dtype, whatever the others
    updates_operands = False   # class flag: forward writes into some operand's array (batch norm's running stats)
                               # (set in ``ops.complex_support``; the dispatcher refuses the others)

    @property
    def needs_input_grad(self):
        """One flag per tensor input: whether a gradient for it is wanted."""
        return tuple(fn is not None for fn, _ in self.next_functions)

    # -- what ops implement ------------------------------------------------
    def backward(self, *grad_outputs):
        raise NotImplementedError(f"{type(self).__name__} has no backward")

    # -- saving --------------------------------------------------------------
    def save_for_backward(self, *tensors):
        """Save tensors (or None / Python numbers) for backward, with their versions."""
        self._saved = [SavedTensor(t, False) if hasattr(t, "_vc") else _Constant(t) for t in tensors]

    @property
    def saved_values(self):
        """The tensors (and numbers) the op saved for backward, checked for in-place changes. Built-in
        nodes keep them here; only custom Functions' nodes show them as ``saved_tensors``, as in
        PyTorch (graph drawers such as torchviz look for that name)."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(_FREED_MESSAGE)
        return tuple(s.unpack(self) for s in saved)

    @property
    def saved_result(self):
        """The op's own output, saved by the dispatcher when ``saves_result`` is set."""
        saved = self._result_saved
        if saved is None:
            raise RuntimeError(_FREED_MESSAGE)
        return saved.unpack(self)

    def _release_saved(self):
        self._saved = None
        if self.saves_result:
            self._result_saved = None

    # -- PyTorch's ``_saved_<name>`` attributes (saved_names.py) ---------------
    def __getattr__(self, name):
        if name.startswith("_saved_"):
            key = name[7:]
            if key == "result" and self.saves_result:
                return self.saved_result
            names = SAVED_NAMES.get(type(self).__name__, ())
            if key in names:
                saved = self._saved
                if saved is None:
                    raise RuntimeError(_FREED_MESSAGE)
                return saved[names.index(key)].unpack(self)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self):
        names = ["_saved_" + n for n in SAVED_NAMES.get(type(self).__name__, ()) if n]
        if self.saves_result:
            names.append("_saved_result")
        return sorted(set(super().__dir__()) | set(names))

    # -- introspection (PyTorch's Node API) ----------------------------------
    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {id(self):#x}>"

    @property
    def metadata(self):
        md = self.__dict__.get("_metadata")
        if md is None:
            md = self._metadata = {}
        return md

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = {}
        return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return add_hook(self._pre_hooks, fn)

    def _register_tensor_hook(self, output_nr, fn):
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        return add_hook(self._tensor_pre_hooks.setdefault(output_nr, {}), fn)

    def __call__(self, *grad_outputs):
        """Run this node's backward directly (as PyTorch allows); returns grads per input."""
        out = self.apply(grad_outputs)
        return out[0] if len(out) == 1 else out

    def apply(self, grad_outputs):
        """Engine entry: grads for every output in, a tuple of grads per edge out."""
        result = self.backward(*grad_outputs)
        if type(result) is not tuple:
            result = (result,)
        if self._bfloat16_inputs:   # the op computed in float32 for bfloat16 operands: their grads are bfloat16
            result = tuple(g.to(_dtype.bfloat16) if i in self._bfloat16_inputs and g is not None else g
                           for i, g in enumerate(result))
        return result


class AccumulateGrad(Node):
    """The sink for a leaf tensor that requires grad: adds incoming gradients to ``.grad``."""

    def __init__(self, variable):
        self.variable = variable
        self.next_functions = ()
        # Above every op's number, so it runs as soon as it is ready, like PyTorch; unique, so the
        # engine's ready heap never has to compare two nodes.
        self._sequence_nr = (1 << 62) + next_sequence_nr()

    def apply(self, grad_outputs):
        return ()


def grad_accumulator(tensor):
    """The AccumulateGrad node of a leaf, shared by every graph alive that uses it."""
    ref = tensor._grad_acc
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(tensor)
        tensor._grad_acc = weakref.ref(acc)
    return acc


def move_retain_grad(tensor, old_fn, old_nr):
    """After an in-place op gave ``tensor`` a new grad_fn, its ``retain_grad`` follows it (as in
    PyTorch: ``.grad`` is the gradient of the tensor's latest value)."""
    hooks = old_fn._retain_grad_hooks if old_fn is not None else None
    if hooks:
        hooks.pop(old_nr, None)
    node = tensor._grad_fn
    if node._retain_grad_hooks is None:
        node._retain_grad_hooks = {}
    node._retain_grad_hooks[tensor._output_nr] = weakref.ref(tensor)


_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


class _Constant:
    """A saved non-tensor (None or a Python number)."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def unpack(self, node):
        return self.value


class SavedTensor:
    """A tensor saved for backward, checked against in-place changes when unpacked.

    An op's own output is kept as its array only (a strong reference to the output
    tensor would form a cycle through ``grad_fn``) and rebuilt with this node as
    its ``grad_fn`` on unpack, so double backward goes through this node again.
    """

    __slots__ = ("tensor", "version", "packed", "unpack_hook", "is_output", "output_nr", "requires_grad",
                 "grad_fn", "__weakref__")

    def __init__(self, tensor, is_output, output_nr=0):
        self.version = tensor._vc[0]
        self.is_output = is_output
        hooks = saved_hooks.STATE.stack
        if hooks:
            # Keep only the history (to reattach on unpack, as PyTorch does); the data goes to pack.
            pack, unpack = hooks[-1]
            saved = hooks[:]
            self.tensor = None
            self.unpack_hook = unpack
            self.requires_grad = tensor._requires_grad
            if is_output:
                self.output_nr = output_nr
                self.grad_fn = None
            else:
                self.output_nr = tensor._output_nr
                self.grad_fn = tensor._grad_fn if tensor._grad_fn is not None else \
                    grad_accumulator(tensor) if tensor._requires_grad else None
            hooks[:] = ()  # ops run by the pack hook itself save without hooks (no recursion)
            try:
                self.packed = pack(tensor)
            finally:
                hooks.extend(saved)
            if tensor._vc[0] != self.version:
                raise RuntimeError(
                    "A saved tensor pack hook is modifying its input in place. Tensors provided as input "
                    "to pack hook cannot be modified by in-place operations as this can lead to "
                    "unexpected side-effects.")
        else:
            self.unpack_hook = None
            if is_output:
                self.output_nr = output_nr
                self.requires_grad = tensor._requires_grad
                tensor = tensor._detached_alias()
            self.tensor = tensor
        if SAVE_HOOKS:
            for hook in SAVE_HOOKS:
                hook(self)

    def unpack(self, node):
        if self.unpack_hook is not None:
            t = self.unpack_hook(self.packed)
            if not hasattr(t, "_vc"):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                                f"result of type {type(t).__name__}")
            if self.is_output:
                return t._alias_with_history(node, self.output_nr, self.requires_grad)
            fn = self.grad_fn
            if fn is None:
                return t
            if type(fn) is AccumulateGrad:  # a leaf: gradients must reach its accumulator
                alias = t._detached_alias()
                alias._requires_grad = True
                alias._grad_acc = weakref.ref(fn)
                return alias
            return t._alias_with_history(fn, self.output_nr, True)
        t = self.tensor
        if t._vc[0] != self.version:
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{t.type()} {list(t.shape)}], which is "
                f"{'output ' + str(self.output_nr) + ' of ' + node.name() if self.is_output else 'an input of ' + node.name()}"
                f", is at version {t._vc[0]}; expected version {self.version} instead. Hint: "
                "enable anomaly detection to find the operation that failed to compute its gradient, "
                "with gputorch.autograd.set_detect_anomaly(True).")
        if self.is_output:
            return t._alias_with_history(node, self.output_nr, self.requires_grad)
        return t
