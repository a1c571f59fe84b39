"""The traced graph: the one small IR that ``jit.trace`` replays and ``onnx.export`` translates.

A :class:`Graph` holds named values: the graph ``inputs``, the ``params`` (a module's parameters and
buffers, by their ``state_dict`` names), ``constants`` (other tensors an op read during the trace)
and the outputs of its ``nodes``. A :class:`GraphNode` is one op as the dispatcher ran it: the op's
node class, its arguments, its keyword parameters and the names of its outputs, plus the module path
that was running (for names and error messages). An argument is a reference:

- ``("value", name)``: a traced tensor; ``("list", refs)``: a list holding some;
- ``("array", (name, flat))``: the array of a traced tensor that an op took as its index (``flat``:
  reshaped to 1-D), so that an index computed from the inputs is not fixed to its traced value;
- ``("index", (index, subs))``: a parsed advanced index (``ops.indexing.parsing.Index``) whose
  arrays at ``subs`` (``(field, position, name)`` each) are those of traced tensors;
- ``("const", x)``: anything else, fixed to its traced value.

:func:`ref_names` lists the value names a reference reads and :func:`resolve_ref` makes the
argument from values (the replay and the ONNX export read references only through these).

While tracing, the dispatcher calls :meth:`Graph.record` after every op and :meth:`Graph.rebind`
after every in-place op (``gputorch._tracing``).
"""
from .._tensor import Tensor
from ..ops.indexing.parsing import Index

__all__ = ["Graph", "GraphNode", "is_param_ref", "node_refs", "ref_names", "resolve_ref"]


def is_param_ref(v):
    """Whether the keyword parameter ``v`` of a node is a reference (a traced tensor, or an index
    holding traced arrays) rather than a constant."""
    return isinstance(v, tuple) and len(v) == 2 and v[0] in ("value", "index")


def node_refs(node):
    """The references among ``node``'s arguments and keyword parameters."""
    return list(node.args) + [v for v in node.params.values() if is_param_ref(v)]


def ref_names(ref):
    """The value names that the argument reference ``ref`` reads."""
    kind, v = ref
    if kind == "value":
        return [v]
    if kind == "list":
        return [name for r in v for name in ref_names(r)]
    if kind == "array":
        return [v[0]]
    if kind == "index":
        return [name for _, _, name in v[1]]
    return []


def resolve_ref(ref, value):
    """The argument that ``ref`` stands for, with ``value(name)`` giving each traced tensor."""
    kind, v = ref
    if kind == "value":
        return value(v)
    if kind == "list":
        return [resolve_ref(r, value) for r in v]
    if kind == "array":
        data = value(v[0])._data
        return data.reshape(-1) if v[1] else data
    if kind == "index":
        index, subs = v
        fields = {"pre": list(index.pre) if index.pre is not None else None, "post": list(index.post)}
        for field, position, name in subs:
            fields[field][position] = value(name)._data
        pre = None if fields["pre"] is None else tuple(fields["pre"])
        return Index(tuple(fields["post"]), index.advanced, pre, index.view_cls, index.reshape_only)
    return v


def _ref_text(ref):
    kind, v = ref
    if kind == "const":
        return repr(v)
    if kind == "index":
        return f"Index[{', '.join('%' + name for _, _, name in v[1])}]"
    return ", ".join(f"%{name}" for name in ref_names(ref)) if kind != "list" else \
        f"[{', '.join(_ref_text(r) for r in v)}]"


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
        args = [_ref_text(r) for r in self.args]
        args = ", ".join(args + [f"{k}={_ref_text(v) if is_param_ref(v) else repr(v)}"
                                 for k, v in self.params.items()])
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
        self._arrays = {}               # id(tensor._data) -> (value name, that array), during the trace
        self._alive = []                # the traced tensors, so that no id is reused
        self._count = 0

    # ------------------------------------------------------------ recording
    def _new(self, tensor, name=None):
        if name is None:
            name = str(self._count)
            self._count += 1
        self._names[id(tensor)] = name
        self._note_array(tensor, name)
        self._alive.append(tensor)
        self.info[name] = (tuple(tensor.shape), tensor.dtype)
        return name

    def add_input(self, tensor, name):
        self.inputs.append(self._new(tensor, name))

    def add_param(self, tensor, name):
        self.params[name] = tensor
        self._new(tensor, name)

    def _note_array(self, tensor, name):
        data = getattr(tensor, "_data", None)
        if data is not None:
            self._arrays[id(data)] = (name, data)

    def _array_ref(self, a):
        """``(name, flat)`` where ``a`` is a traced tensor's array (or a 1-D reshape of it), else None."""
        found = self._arrays.get(id(a))
        if found is not None and found[1] is a:
            return found[0], False
        base = getattr(a, "base", None)
        found = self._arrays.get(id(base)) if base is not None else None
        if found is not None and found[1] is base and a.ndim == 1 and a.size == base.size:
            return found[0], True
        return None

    def _index_ref(self, index):
        subs = []
        for field in ("pre", "post"):
            for position, k in enumerate(getattr(index, field) or ()):
                found = self._arrays.get(id(k))
                if found is not None and found[1] is k:
                    subs.append((field, position, found[0]))
        return ("index", (index, tuple(subs))) if subs else ("const", index)

    def _param_ref(self, v):
        if isinstance(v, Tensor):
            return self._ref(v)
        if isinstance(v, Index):          # x[idx] = v: the index is a keyword parameter
            ref = self._index_ref(v)
            return ref if ref[0] == "index" else v
        return v

    def _ref(self, x):
        if not isinstance(x, Tensor):
            if isinstance(x, (list, tuple)) and any(isinstance(v, Tensor) for v in x):
                return ("list", [self._ref(v) for v in x])
            if isinstance(x, Index):
                return self._index_ref(x)
            if hasattr(x, "__array_interface__") or hasattr(x, "__cuda_array_interface__"):
                found = self._array_ref(x)
                if found is not None:
                    return ("array", found)
            return ("const", x)
        name = self._names.get(id(x))
        if name is None:   # read from outside the traced inputs and parameters: a constant
            name = f"const{len(self.constants)}"
            self.constants[name] = x.detach().clone()
            self._new(x, name)
        return ("value", name)

    def record(self, cls, args, params, result):
        refs = [self._ref(a) for a in args]
        params = {k: self._param_ref(v) for k, v in params.items()}
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
        self._note_array(tensor, self._names[id(result)])

    def name_of(self, tensor):
        return self._ref(tensor)[1]

    def finish(self, outputs):
        self.outputs = [self.name_of(o) for o in outputs]
        self._names, self._arrays, self._alive = {}, {}, []

    # ------------------------------------------------------------ reading
    def __repr__(self):
        head = f"graph({', '.join('%' + i for i in self.inputs)}):"
        params = [f"  param %{n}: {list(t.shape)} {t.dtype}" for n, t in self.params.items()]
        consts = [f"  constant %{n}: {list(t.shape)} {t.dtype}" for n, t in self.constants.items()]
        body = [f"  {node!r}" for node in self.nodes]
        tail = f"  return {', '.join('%' + o for o in self.outputs)}"
        return "\n".join([head] + params + consts + body + [tail])
