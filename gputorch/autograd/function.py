"""Custom autograd Functions: ``Function``, its ``ctx`` and ``once_differentiable``.

A user subclasses :class:`Function` with static ``forward`` and ``backward`` and calls
``MyFn.apply(*args)``. Each subclass gets a graph node class ``MyFnBackward``; an
instance of it is both the ``ctx`` that forward/backward receive and the ``grad_fn``
of the outputs, so it plugs into the engine like any built-in op node:
``next_functions`` has one edge per tensor argument and :meth:`BackwardCFunction.apply`
calls the user's backward and maps its gradients (one per forward argument) onto
those edges, checking their number, shapes and devices as PyTorch does.

Forward runs with grad mode off. Outputs are then wired to the node:

- a new tensor gets the node as ``grad_fn``;
- an input returned unchanged comes back as a new alias (a view) with the node as ``grad_fn``;
- an input modified in place and passed to ``ctx.mark_dirty`` keeps its identity, gets the
  node as its new ``grad_fn`` and its version is bumped;
- outputs passed to ``ctx.mark_non_differentiable`` and integer outputs do not require grad.
"""
import functools
import inspect
import warnings

from . import anomaly_mode, grad_mode
from .node import Node, SavedTensor, _Constant, grad_accumulator, move_retain_grad, next_sequence_nr

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable", "InplaceFunction"]

_GRAD_ENABLED = grad_mode.GRAD_ENABLED
_ANOMALY = anomaly_mode.ENABLED
_Tensor = None


def _tensor_cls():
    global _Tensor
    if _Tensor is None:
        from .._tensor import Tensor
        _Tensor = Tensor
    return _Tensor


class FunctionCtx:
    """What ``forward``/``setup_context`` use to pass information to ``backward``."""

    def save_for_backward(self, *tensors):
        """Save tensors (or None) for ``backward``; read them back with ``ctx.saved_tensors``.

        Saved tensors are checked for in-place changes when unpacked, and go through the
        active ``saved_tensors_hooks``. Non-tensor values should be stored as ctx attributes.
        """
        self.to_save = tensors

    @property
    def saved_tensors(self):
        """The tensors saved with ``save_for_backward``, unpacked (checked for in-place changes)."""
        return self.saved_values

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Mark tensors that forward modified in place (they must also be returned)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Mark outputs that are not differentiable (they will not require grad)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """Whether ``None`` output gradients reach ``backward`` as zeros (the default) or as None."""
        self.materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    """Base of the ``<Name>Backward`` node classes generated for each Function subclass."""

    _forward_cls = None
    needs_input_grad = ()     # one flag per forward argument (shadows Node's property)
    materialize_grads = True
    to_save = None
    dirty_tensors = ()
    non_differentiable = ()
    _input_meta = ()          # per forward argument: (shape, dtype, device), None for non-tensors
    _fn_output_meta = ()      # per forward output: (shape, dtype, device), None for non-tensors

    def apply(self, grad_outputs):
        """Engine entry: call the user's backward, return one gradient per tensor argument."""
        if self.materialize_grads:
            grad_outputs = _materialize(grad_outputs, self._fn_output_meta)
        result = self._forward_cls._backward_fn()(self, *grad_outputs)
        if type(result) is not tuple:
            result = (result,)
        return self._check_grads(result)

    def _check_grads(self, result):
        meta = self._input_meta
        n = len(meta)
        if len(result) != n:
            if len(result) < n or any(g is not None for g in result[n:]):
                raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                                   f"(expected {n}, got {len(result)})")
            result = result[:n]
        Tensor = _tensor_cls()
        grads = []
        index = 0
        for i, (g, m) in enumerate(zip(result, meta)):
            if m is None:
                if g is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at position "
                        f"{i + 1}, but the corresponding forward input was not a Variable")
                continue
            if g is not None:
                if not isinstance(g, Tensor):
                    raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
                g = _fit_grad(self, index, g, m)
            grads.append(g)
            index += 1
        return tuple(grads)


def _materialize(grad_outputs, meta):
    if not any(g is None for g in grad_outputs):
        return grad_outputs
    from ..ops.creation import zeros
    return [zeros(m[0], dtype=m[1], device=m[2]) if g is None and m is not None else g
            for g, m in zip(grad_outputs, meta)]


def _fit_grad(node, index, g, meta):
    """Check a gradient against its input's (shape, dtype, device); reduce broadcast grads."""
    shape, dtype, device = meta
    if g._data.shape != shape:
        if not _expandable(shape, g._data.shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {index} - got "
                f"{list(g.shape)} but expected shape compatible with {list(shape)}")
        from ..ops._common import sum_to_shape
        g = sum_to_shape(g, shape)
    if g._device is not device:
        raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {index} - "
                           f"expected device {device} but got {g._device}")
    if g._dtype is not dtype:
        g = g.to(dtype)
    return g


def _expandable(shape, target):
    """Whether ``shape`` broadcasts to ``target``."""
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target)):
        if s != t and s != 1:
            return False
    return True


class Function:
    """Base class for custom differentiable operations.

    Subclasses define ``forward(ctx, *args, **kwargs)`` (or ``forward(*args)`` together with
    ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grad_outputs)`` as static
    methods, and are used through ``MyFunction.apply(*args)``.
    """

    _backward_cls = BackwardCFunction

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        name = cls.__name__ + "Backward"
        cls._backward_cls = type(name, (BackwardCFunction,), {
            "_forward_cls": cls, "__qualname__": name, "__module__": cls.__module__})
        cls._user_backward = None
        cls._signature = None

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.", DeprecationWarning,
            stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function "
            "to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward "
            "mode AD.")

    @classmethod
    def _backward_fn(cls):
        fn = cls._user_backward
        if fn is None:
            backward, vjp = cls.backward, cls.vjp
            if backward is not Function.backward and vjp is not Function.vjp:
                raise RuntimeError(
                    "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                    "You should only implement one of them.")
            fn = cls._user_backward = vjp if vjp is not Function.vjp else backward
        return fn

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` on ``args`` and record a ``<Name>Backward`` node for the outputs."""
        Tensor = _tensor_cls()
        separate_setup = cls.setup_context is not Function.setup_context
        if separate_setup:
            args, kwargs = _bind_defaults(cls, args, kwargs)
        node = cls._backward_cls()
        tensors = []
        needs = []
        meta = []
        for a in args:
            if isinstance(a, Tensor):
                tensors.append(a)
                needs.append(a._requires_grad)
                meta.append((a._data.shape, a._dtype, a._device))
            else:
                needs.append(False)
                meta.append(None)
        node.needs_input_grad = tuple(needs)
        executable = _GRAD_ENABLED.value and any(needs)
        if executable:
            node._input_meta = tuple(meta)
            node.next_functions = tuple([_edge(t) for t in tensors])
            node._sequence_nr = next_sequence_nr()
            if _ANOMALY[0]:
                import traceback
                node._trace = traceback.format_stack()[:-1]

        prev = _GRAD_ENABLED.value
        _GRAD_ENABLED.value = False
        try:
            if separate_setup:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(node, args, outputs)
            else:
                outputs = cls.forward(node, *args, **kwargs)
        finally:
            _GRAD_ENABLED.value = prev

        is_tuple = isinstance(outputs, tuple)
        raw = tuple(outputs) if is_tuple else (outputs,)
        results = _wrap_outputs(node, raw, tensors, executable)
        if executable:
            _save_tensors(node, Tensor)
        node.to_save = None
        node.dirty_tensors = node.non_differentiable = ()
        return results if is_tuple else results[0]


def _bind_defaults(cls, args, kwargs):
    sig = cls.__dict__.get("_signature")
    if sig is None:
        sig = cls._signature = inspect.signature(cls.forward)
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args, bound.kwargs


def _edge(t):
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        return (grad_accumulator(t), 0)
    return (None, 0)


def _wrap_outputs(node, raw, inputs, executable):
    """Attach the outputs to ``node`` (see the module docstring); returns the tensors to hand out."""
    Tensor = _tensor_cls()
    input_ids = {id(t) for t in inputs}
    dirty = {id(t) for t in node.dirty_tensors}
    non_diff = {id(t) for t in node.non_differentiable}
    returned = set()
    results = []
    out_meta = []
    for nr, out in enumerate(raw):
        if not isinstance(out, Tensor):
            results.append(out)
            out_meta.append(None)
            continue
        key = id(out)
        returned.add(key)
        out_meta.append((out._data.shape, out._dtype, out._device))
        is_input = key in input_ids
        is_dirty = key in dirty
        if is_dirty:
            out._vc[0] += 1
        differentiable = executable and key not in non_diff and out._dtype._category >= 2
        if not differentiable:
            if not out._requires_grad:
                if is_input and not is_dirty:
                    out = _view_of(out)
            elif is_input:
                out = out._detached_alias()
            elif out._base is None:
                out._grad_fn = None
                out._output_nr = 0
                out._requires_grad = False
        elif is_dirty:
            if out._grad_fn is None and out._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            if not is_input:
                warnings.warn("Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not "
                              "an input, there is no need to pass it to mark_dirty().", UserWarning,
                              stacklevel=4)
            old_fn, old_nr = out._grad_fn, out._output_nr
            _set_history(out, node, nr)
            if out._retains_grad:
                move_retain_grad(out, old_fn, old_nr)
        elif is_input:
            out = _view_of(out)
            _set_history(out, node, nr)
        else:
            _set_history(out, node, nr)
        results.append(out)
    if dirty - returned:
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not returned as output. "
            "The inputs that are modified inplace must all be outputs of the Function.")
    if executable:
        node._num_outputs = len(raw)
        node._fn_output_meta = tuple(out_meta)
    return tuple(results)


def _view_of(t):
    """An alias of ``t`` sharing its storage and version counter, recorded as a view of it."""
    v = t._detached_alias()
    v._base = t if t._base is None else t._base
    return v


def _set_history(t, node, nr):
    t._grad_fn = node
    t._output_nr = nr
    t._requires_grad = True


def _save_tensors(node, Tensor):
    to_save = node.to_save
    if not to_save:
        return
    saved = []
    for i, t in enumerate(to_save):
        if t is None:
            saved.append(_Constant(None))
        elif isinstance(t, Tensor):
            if t._grad_fn is node:
                saved.append(SavedTensor(t, True, t._output_nr))
            else:
                saved.append(SavedTensor(t, False))
        else:
            raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                            f"{type(t).__name__}")
    node._saved = saved


class InplaceFunction(Function):
    """A Function that may work in place (kept for PyTorch compatibility)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


# ---------------------------------------------------------------- once_differentiable
_ONCE_MESSAGE = "trying to differentiate twice a function that was marked with @once_differentiable"


class Error(Node):
    """A node that raises when the engine reaches it (marks non-differentiable backward results)."""

    def __init__(self, message, num_outputs):
        self._message = message
        self._num_outputs = num_outputs

    def apply(self, grad_outputs):
        raise RuntimeError(self._message)


def once_differentiable(fn):
    """Decorate a Function's ``backward`` that is not itself differentiable.

    The backward runs under ``no_grad``; if a graph is being built (``create_graph=True``)
    its results get a node that raises when differentiated through.
    """
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _GRAD_ENABLED.value
        _GRAD_ENABLED.value = False
        try:
            outputs = fn(ctx, *args)
        finally:
            _GRAD_ENABLED.value = prev
        if not prev:
            return outputs
        Tensor = _tensor_cls()
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        is_tuple = isinstance(outputs, tuple)
        outs = outputs if is_tuple else (outputs,)
        err = Error(_ONCE_MESSAGE, len(outs))
        edges = []
        wrapped = []
        for nr, o in enumerate(outs):
            if isinstance(o, Tensor):
                fake = o._detached_alias()
                fake._requires_grad = True
                edges.append((grad_accumulator(fake), 0))
                o = o._detached_alias()
                _set_history(o, err, nr)
            wrapped.append(o)
        err.next_functions = tuple(edges)
        err._sequence_nr = next_sequence_nr()
        return tuple(wrapped) if is_tuple else wrapped[0]
    return wrapper
