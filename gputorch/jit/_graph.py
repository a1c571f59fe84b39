"""The traced graph: the one small IR that ``jit.trace`` replays and ``onnx.export`` translates.

A :class:`Graph` holds named values: the graph ``inputs``, the ``params`` (a module's parameters and
buffers, by their ``state_dict`` names), ``constants`` (other tensors an op read during the trace)
and the outputs of its ``nodes``. A :class:`GraphNode` is one op as the dispatcher ran it: the op's
node class, its arguments (a value name or a Python constant each, ``("value", name)`` /
``("const", x)``), its keyword parameters and the names of its outputs, plus the module path that
was running (for names and error messages).

While tracing, the dispatcher calls :meth:`Graph.record` after every op and :meth:`Graph.rebind`
after every in-place op (``gputorch._tracing``).
"""
from .._tensor import Tensor

__all__ = ["Graph", "GraphNode"]


class GraphNode:
    """One recorded op: ``outputs = op(*args, **params)``."""

    __slots__ = ("op", "args", "params", "outputs", "scope")

    def __init__(self, op, args, params, outputs, scope):
        self.op, self.args, self.params, self.outputs, self.scope = op, args, params, outputs, scope

    @property
    def kind(self):
        """The op's name without PyTorch's node suffix: ``LinearBackward0`` -> ``Linear``."""
        name = self.op.__name__
        cut = name.find("Backward")
        return name[:cut] if cut > 0 else name

    def __repr__(self):
        args = [f"%{v}" if k == "value" else repr(v) for k, v in self.args]
        args = ", ".join(args + [f"{k}={v!r}" for k, v in self.params.items()])
        scope = f"  # {self.scope}" if self.scope else ""
        return f"{', '.join('%' + o for o in self.outputs)} = {self.kind}({args}){scope}"


class Graph:
    """Inputs, parameters, constants and the recorded ops of one traced call."""

    def __init__(self):
        self.inputs, self.outputs, self.nodes = [], [], []
        self.params, self.constants = {}, {}
        self.scope = []                 # module paths of the modules now running (a stack)
        self.info = {}                  # value name -> (shape, dtype) as traced
        self._names = {}                # id(tensor) -> value name, during the trace
        self._alive = []                # the traced tensors, so that no id is reused
        self._count = 0

    # ------------------------------------------------------------ recording
    def _new(self, tensor, name=None):
        if name is None:
            name = str(self._count)
            self._count += 1
        self._names[id(tensor)] = name
        self._alive.append(tensor)
        self.info[name] = (tuple(tensor.shape), tensor.dtype)
        return name

    def add_input(self, tensor, name):
        self.inputs.append(self._new(tensor, name))

    def add_param(self, tensor, name):
        self.params[name] = tensor
        self._new(tensor, name)

    def _ref(self, x):
        if not isinstance(x, Tensor):
            if isinstance(x, (list, tuple)) and any(isinstance(v, Tensor) for v in x):
                return ("list", [self._ref(v) for v in x])
            return ("const", x)
        name = self._names.get(id(x))
        if name is None:   # read from outside the traced inputs and parameters: a constant
            name = f"const{len(self.constants)}"
            self.constants[name] = x.detach().clone()
            self._new(x, name)
        return ("value", name)

    def record(self, cls, args, params, result):
        refs = [self._ref(a) for a in args]
        params = {k: self._ref(v) if isinstance(v, Tensor) else v for k, v in params.items()}
        outs = result if isinstance(result, tuple) else (result,)
        names = [self._new(o) for o in outs]
        self.nodes.append(GraphNode(cls, refs, params, names, self.scope[-1] if self.scope else ""))

    def record_creation(self, name, params, result):
        """A tensor-creating call (``arange``...) made ``result``: replayed by its ``create``."""
        from ._creations import CREATIONS
        self.nodes.append(GraphNode(CREATIONS[name], [], params, [self._new(result)],
                                    self.scope[-1] if self.scope else ""))

    def rebind(self, tensor, result):
        """An in-place op wrote ``result``'s value into ``tensor``: later reads see that value."""
        self._names[id(tensor)] = self._names[id(result)]

    def name_of(self, tensor):
        return self._ref(tensor)[1]

    def finish(self, outputs):
        self.outputs = [self.name_of(o) for o in outputs]
        self._names, self._alive = {}, []

    # ------------------------------------------------------------ reading
    def __repr__(self):
        head = f"graph({', '.join('%' + i for i in self.inputs)}):"
        params = [f"  param %{n}: {list(t.shape)} {t.dtype}" for n, t in self.params.items()]
        consts = [f"  constant %{n}: {list(t.shape)} {t.dtype}" for n, t in self.constants.items()]
        body = [f"  {node!r}" for node in self.nodes]
        tail = f"  return {', '.join('%' + o for o in self.outputs)}"
        return "\n".join([head] + params + consts + body + [tail])
