"""Traced graph -> ONNX model.

The model is traced twice: with the example inputs, and, when there are ``dynamic_axes``, with
those axes one longer. Sizes that change between the two traces follow the dynamic axes (a
reshape's target gets ``-1`` or ``0`` there, an expand's ``1``; a constant filled with one value,
such as ``ones(t, t)``, is expanded to a shape read at run time); everything else is fixed to the
traced sizes. Each op that the outputs depend on is translated by its function in ``_ops.py``
(which gathers the ``_ops_*.py`` families); ops whose results are not returned are left out.
"""
import numpy as np

from .. import _dtype
from ..jit._graph import node_refs, ref_names
from ..jit._tracer import trace_graph
from ._ops import CREATION_EXPORTERS, EXPORTERS, EXPORTERS_BY_CLASS

__all__ = ["build_model", "UnsupportedOperatorError"]

OPSET = 17


class UnsupportedOperatorError(RuntimeError):
    """An op of the traced model has no ONNX translation (the message names it, its module, the opset)."""


def _onnx():
    try:
        import onnx
    except ImportError as exc:
        raise ImportError("gputorch.onnx needs the onnx package: pip install 'gputorch[onnx]'") from exc
    return onnx


class Builder:
    """Collects ONNX nodes and initializers for one graph (see ``_ops.py`` for how ops use it)."""

    def __init__(self, graph, second, varying, opset):
        self.onnx = _onnx()
        self.graph, self.second, self.varying, self.opset = graph, second, varying, opset
        self.nodes, self.initializers = [], {}
        self._count = 0
        self._consts = {}
        self._shapes = {}
        self._index = {id(n): i for i, n in enumerate(graph.nodes)}

    # ------------------------------------------------------------ names and values
    def fresh(self):
        self._count += 1
        return f"_t{self._count}"

    def info(self, name):
        return self.graph.info[name]

    def shape_of(self, name):
        return self.graph.info[name][0]

    def np_dtype_of(self, name):
        return self.graph.info[name][1].np

    def onnx_dtype(self, dt):
        return self.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dt.np if isinstance(dt, _dtype.dtype) else dt))

    def const(self, array):
        array = np.asarray(array)
        key = (array.dtype.str, array.shape, array.tobytes())
        name = self._consts.get(key)
        if name is None:
            name = self._consts[key] = f"_c{len(self._consts)}"
            self.initializers[name] = array
            self.graph.info[name] = (array.shape, _dtype.from_numpy_dtype(array.dtype))
        return name

    def scalar(self, value, node):
        """A 0-d initializer holding ``value`` in the dtype of ``node``'s tensors."""
        dt = self.graph.info[node.outputs[0]][1]
        if dt is _dtype.bool:
            dt = next((self.graph.info[r[1]][1] for r in node.args if r[0] == "value"), dt)
        return self.const(np.array(value, dtype=dt.np))

    def arg(self, node, i):
        kind, v = node.args[i]
        if kind == "value":
            return v
        if isinstance(v, (bool, int, float)):
            return self.scalar(v, node)
        self.fail(node, f"an argument of type {type(v).__name__}")

    def common_dtype(self, node, indices):
        """PyTorch's promoted dtype of arguments ``indices`` of ``node`` (tensors by rank, then Python
        scalars), as an arithmetic op or a comparison sees them."""
        dim = zero = wrapped = None
        for i in indices:
            kind, v = node.args[i]
            if kind == "value":
                shape, dt = self.graph.info[v]
                if shape:
                    dim = dt if dim is None else _dtype.promote_types(dim, dt)
                else:
                    zero = dt if zero is None else _dtype.promote_types(zero, dt)
            elif isinstance(v, (bool, int, float)):
                dt = _dtype.scalar_dtype(v)
                wrapped = dt if wrapped is None else _dtype.promote_types(wrapped, dt)
        return _dtype._combine(dim, _dtype._combine(zero, wrapped))

    def operand(self, node, i, dt):
        """Argument ``i`` of ``node`` as an ONNX value of dtype ``dt``: a tensor cast where its dtype
        differs, a Python number made a 0-d constant of ``dt``."""
        kind, v = node.args[i]
        if kind != "value":
            if not isinstance(v, (bool, int, float)):
                self.fail(node, f"an argument of type {type(v).__name__}")
            return self.const(np.array(v, dtype=dt.np))
        return self.cast(v, dt)

    def index_array(self, node, ref):
        """The ONNX name of an index that an op took as an array: a traced tensor's (``("array", ...)``
        reference; 1-D where the op flattened it) or a constant (an int64 initializer)."""
        kind, v = ref
        if kind == "array":
            name, flat = v
            if flat and len(self.shape_of(name)) != 1:
                return self.add("Reshape", [name, self.const(np.array([-1], np.int64))], [self.fresh()])[0]
            return name
        if kind == "const" and hasattr(v, "dtype"):      # a NumPy array, or a CUDA one (copied to the host)
            return self.const((v.get() if hasattr(v, "get") else np.asarray(v)).astype(np.int64))
        self.fail(node, f"an index of type {type(v).__name__}")

    def cast(self, name, dt):
        """``name`` as dtype ``dt`` (a ``Cast`` only where its traced dtype differs)."""
        if self.graph.info[name][1] is dt:
            return name
        out = self.add("Cast", [name], [self.fresh()], to=self.onnx_dtype(dt))[0]
        self.graph.info[out] = (self.graph.info[name][0], dt)
        return out

    def add(self, op_type, inputs, outputs, **attrs):
        self.nodes.append(self.onnx.helper.make_node(op_type, list(inputs), list(outputs), **attrs))
        return list(outputs)

    # ------------------------------------------------------------ dynamic sizes
    def reshape_target(self, node, shape, ones_for_dynamic=False):
        """The ONNX name of a target-shape tensor for ``shape`` (what ``node``'s output had in the
        trace): sizes that follow a dynamic axis become 1 for an expand; for a reshape, the size of
        an input dim, or the product of two, read from the input's shape at run time (or -1 for one
        that is neither)."""
        varying = self.varying.get(node.outputs[0], set())
        target = list(shape)
        if not varying or ones_for_dynamic:
            return self.const(np.array([1 if d in varying else s for d, s in enumerate(target)], np.int64))
        later = self.second.info[node.outputs[0]][0]
        parts, unknown = [], []
        for d, size in enumerate(target):
            if d not in varying:
                parts.append(self.const(np.array([size], np.int64)))
                continue
            part = self.runtime_size((size, later[d]), [node.args[0][1]])
            if part is None:
                unknown.append(d)
                part = self.const(np.array([-1], np.int64))
            parts.append(part)
        if len(unknown) > 1:
            self.fail(node, f"a reshape to {tuple(shape)} whose dims {unknown} follow dynamic axes in no way "
                            f"that the input's shape gives")
        return self.add("Concat", parts, [self.fresh()], axis=0)[0]

    def runtime_size(self, pair, sources=()):
        """A ``[1]`` int64 tensor that is ``pair[0]`` in the first trace and ``pair[1]`` in the second:
        a dim of ``sources`` or of the graph inputs (or the product of two), read at run time."""
        dims = [(name, k, self.shape_of(name)[k], self.second.info[name][0][k])
                for name in list(sources) + list(self.graph.inputs) for k in range(len(self.shape_of(name)))]
        same = [(name, k) for name, k, a, b in dims if (a, b) == pair]
        if same:
            return self._read_dim(*same[0])
        product = [(x[:2], y[:2]) for i, x in enumerate(dims) for y in dims[i + 1:]
                   if (x[2] * y[2], x[3] * y[3]) == pair]
        if product:
            (n1, k1), (n2, k2) = product[0]
            return self.add("Mul", [self._read_dim(n1, k1), self._read_dim(n2, k2)], [self.fresh()])[0]
        return None

    def _read_dim(self, name, k):
        shape = self._shapes.get(name)
        if shape is None:
            shape = self._shapes[name] = self.add("Shape", [name], [self.fresh()])[0]
        return self.add("Gather", [shape, self.const(np.array([k], np.int64))], [self.fresh()], axis=0)[0]

    def later(self, node):
        """``node``'s twin in the second trace (None without dynamic axes)."""
        return None if self.second is None else self.second.nodes[self._index[id(node)]]

    # ------------------------------------------------------------ errors
    def fail(self, node, what):
        raise UnsupportedOperatorError(
            f"Exporting the operator '{node.kind}' ({what}) to ONNX opset version {self.opset} is not supported "
            f"by gputorch.onnx (in module '{node.scope or '<top>'}')")

    def unsupported_output(self, node, index):
        name = node.outputs[index]
        if any(name == r[1] for n in self.graph.nodes for r in n.args if r[0] == "value") or name in \
                self.graph.outputs:
            self.fail(node, f"its output {index}")


def _varying_dims(first, second):
    """``{value name: dims whose traced size differs}`` between two traces of the same model."""
    if len(first.nodes) != len(second.nodes) or any(a.op is not b.op for a, b in zip(first.nodes, second.nodes)):
        raise RuntimeError("onnx.export: the model ran other ops when the dynamic axes changed size (control "
                           "flow on sizes); export without dynamic_axes or make the model size-independent")
    varying = {}
    for name, (shape, _) in first.info.items():
        other = second.info.get(name)
        if other is not None and len(other[0]) == len(shape):
            dims = {d for d, (a, b) in enumerate(zip(shape, other[0])) if a != b}
            if dims:
                varying[name] = dims
    return varying


def _live_nodes(graph):
    """The nodes that the graph's outputs depend on, in order: what the model computed and did not
    return (a loss beside the logits, a mean of attention weights) is not exported."""
    live, keep = set(graph.outputs), []
    for node in reversed(graph.nodes):
        if any(o in live for o in node.outputs):
            keep.append(node)
            for ref in node_refs(node):
                live.update(ref_names(ref))
    return keep[::-1]


def _one_value(t):
    """The value every element of ``t`` holds, or None (empty, or not all equal)."""
    flat = t.detach().cpu().numpy().reshape(-1)
    if flat.size == 0 or not (flat == flat[0]).all():
        return None
    return flat[0]


def _filled_constants(b, live):
    """Constants whose shape changed with the dynamic axes (``ones(t, t)`` made from a size read in
    Python) and used by a ``live`` node: one filled with a single value becomes that value expanded
    to a shape read from the inputs at run time; any other is refused. Returns the names so made."""
    filled = set()
    for name, t in b.graph.constants.items():
        later = b.second.constants[name]
        user = next((n for n in live if any(r == ("value", name) for r in n.args)), None)
        if tuple(t.shape) == tuple(later.shape) or user is None:
            continue
        value = _one_value(t)
        sizes = [b.const(np.array([n], np.int64)) if n == m else b.runtime_size((n, m))
                 for n, m in zip(t.shape, later.shape)]
        if value is None or value != _one_value(later) or any(s is None for s in sizes):
            raise UnsupportedOperatorError(
                f"onnx.export: a tensor that the model creates from the input's size (used by '{user.kind}' in "
                f"module '{user.scope or '<top>'}', shape {list(t.shape)}) was not made by a traced op and is not "
                f"filled with one value, so it cannot follow the dynamic axes; export without them, or build it "
                f"from the input with tensor ops")
        shape = b.add("Concat", sizes, [b.fresh()], axis=0)[0]
        b.add("Expand", [b.const(np.array(value, t.dtype.np)), shape], [name])
        filled.add(name)
    return filled


def _grown_input(x, axes):
    """``x`` one longer along each of ``axes``, the new slice a copy of the first (valid indices stay valid)."""
    from ..ops.shape import cat
    for axis in axes:
        x = cat([x, x.narrow(axis, 0, 1)], axis)
    return x


def build_model(model, args, input_names, output_names, dynamic_axes, opset, export_params):
    """The ``onnx.ModelProto`` of ``model(*args)``."""
    onnx = _onnx()
    from .. import nn
    module = model if isinstance(model, nn.Module) else None
    graph, outputs = trace_graph(model, args, module)
    flat_outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    input_names = list(input_names or []) + [f"input{i}" for i in range(len(input_names or []), len(args))]
    output_names = list(output_names or []) + [f"output{i}" for i in range(len(output_names or []),
                                                                           len(flat_outputs))]
    dynamic = {}
    for name, axes in (dynamic_axes or {}).items():
        dynamic[name] = dict(axes) if isinstance(axes, dict) else {a: f"{name}_dim{a}" for a in axes}
    varying, second = {}, None
    grow = {i: sorted(dynamic[n]) for i, n in enumerate(input_names) if n in dynamic}
    if grow:
        grown = tuple(_grown_input(a, grow.get(i, ())) for i, a in enumerate(args))
        second, _ = trace_graph(model, grown, module)
        varying = _varying_dims(graph, second)
    builder = Builder(graph, second, varying, opset)
    live = _live_nodes(graph)
    filled = _filled_constants(builder, live) if second is not None else set()
    renames = dict(zip(graph.inputs, input_names))
    for node in live:
        export = EXPORTERS_BY_CLASS.get(node.op.__name__) or EXPORTERS.get(node.kind)
        if export is None and node.op.__name__ in CREATION_EXPORTERS:
            export = CREATION_EXPORTERS[node.op.__name__]
        if export is None:
            builder.fail(node, "no translation")
        export(builder, node)
    for old, new in zip(graph.outputs, output_names):
        builder.add("Identity", [old], [new])
        graph.info[new] = graph.info[old]

    def value_info(name, shape, dt, dims):
        shape = [dims.get(d, s) for d, s in enumerate(shape)]
        return onnx.helper.make_tensor_value_info(name, builder.onnx_dtype(dt), shape)
    inputs = [value_info(new, *graph.info[old], dynamic.get(new, {})) for old, new in renames.items()]
    outs = []
    for name in output_names:
        shape, dt = graph.info[name]
        dims = dynamic.get(name, {})
        if not dims and varying:
            source = graph.outputs[output_names.index(name)]
            dims = {d: f"{name}_dim{d}" for d in varying.get(source, ())}
        outs.append(value_info(name, shape, dt, dims))
    used = {i for n in builder.nodes for i in n.input}
    initializers = [onnx.numpy_helper.from_array(np.ascontiguousarray(t.detach().cpu().numpy()), name)
                    for name, t in list(graph.params.items()) + list(graph.constants.items())
                    if name in used and name not in filled]
    initializers += [onnx.numpy_helper.from_array(a, name) for name, a in builder.initializers.items()]
    extra_inputs = []
    if not export_params:
        extra_inputs = [value_info(i.name, tuple(i.dims), _dtype.from_numpy_dtype(
            onnx.helper.tensor_dtype_to_np_dtype(i.data_type)), {}) for i in initializers
            if i.name in graph.params]
        initializers = [i for i in initializers if i.name not in graph.params]
    nodes = [_renamed(n, renames) for n in builder.nodes]
    body = onnx.helper.make_graph(nodes, type(model).__name__ if module is not None else "graph",
                                  inputs + extra_inputs, outs, initializer=initializers)
    proto = onnx.helper.make_model(body, opset_imports=[onnx.helper.make_opsetid("", opset)],
                                   producer_name="gputorch")
    return proto


def _renamed(node, renames):
    node.input[:] = [renames.get(i, i) for i in node.input]
    return node
