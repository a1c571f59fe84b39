"""A traced module: the recorded graph replayed op by op, without the Python model class."""
from .. import nn
from .._dispatch import apply
from .._tensor import Tensor
from ._graph import is_param_ref, node_refs, ref_names, resolve_ref

__all__ = ["TracedModule", "run_graph"]


def run_graph(graph, values, inputs):
    """The graph's outputs for ``inputs``; ``values`` maps param and constant names to tensors."""
    if len(inputs) != len(graph.inputs):
        raise TypeError(f"the traced graph takes {len(graph.inputs)} inputs, got {len(inputs)}")
    env = dict(values)
    env.update(zip(graph.inputs, inputs))
    for node, dead in zip(graph.nodes, _last_uses(graph)):
        args = [resolve_ref(r, env.__getitem__) for r in node.args]
        params = {k: resolve_ref(v, env.__getitem__) if is_param_ref(v) else v for k, v in node.params.items()}
        create = getattr(node.op, "create", None)
        if create is not None:   # a creation (arange...): made on the inputs' device
            result = create(**dict(params, device=inputs[0].device if inputs else params["device"]))
        else:
            result = apply(node.op, *args, **params)
        outs = result if isinstance(result, tuple) else (result,)
        env.update(zip(node.outputs, outs))
        for name in dead:        # as eager code does: an intermediate is freed after its last use
            env.pop(name, None)
    return [env[o] for o in graph.outputs]


def _last_uses(graph):
    """Per node, the intermediate values that no later node (nor the output) reads."""
    cached = getattr(graph, "_dead_after", None)
    if cached is not None and len(cached) == len(graph.nodes):
        return cached
    keep = set(graph.outputs) | set(graph.params) | set(graph.constants) | set(graph.inputs)
    seen, dead = set(), []
    for node in reversed(graph.nodes):
        names = set()
        for ref in node_refs(node):
            for name in ref_names(ref):
                if name not in seen and name not in keep:
                    names.add(name)
                seen.add(name)
        dead.append(names)
    graph._dead_after = dead[::-1]
    return graph._dead_after


class TracedModule(nn.Module):
    """``trace(model, example)``'s result: ``forward`` replays the graph on inputs of the traced
    shapes (other shapes are refused: the trace fixed the sizes it read); ``graph`` prints it; parameters and buffers are attributes (``param0``, ...,
    ``constant0``, ...), so ``.to(device)``, ``state_dict`` and ``parameters()`` work."""

    def __init__(self, graph, single_output):
        super().__init__()
        self.graph = graph
        self._single = single_output
        self._param_attrs = {}
        for k, (name, t) in enumerate(graph.params.items()):
            attr = f"param{k}"
            if isinstance(t, nn.Parameter):
                self.register_parameter(attr, t)
            else:
                self.register_buffer(attr, t)
            self._param_attrs[name] = attr
        for k, (name, t) in enumerate(graph.constants.items()):
            self.register_buffer(f"constant{k}", t)
            self._param_attrs[name] = f"constant{k}"

    @property
    def code(self):
        return repr(self.graph)

    def forward(self, *inputs):
        for i, (x, name) in enumerate(zip(inputs, self.graph.inputs)):
            if not isinstance(x, Tensor):
                raise TypeError(f"traced module: input {i} must be a Tensor, got {type(x).__name__}")
            traced = self.graph.info[name][0]
            if tuple(x.shape) != traced:
                raise RuntimeError(f"traced module: input {i} has shape {list(x.shape)}, but the trace was recorded "
                                   f"with shape {list(traced)} and fixes the sizes it read; trace again with this "
                                   f"shape (or export to ONNX with dynamic_axes)")
        values = {name: getattr(self, attr) for name, attr in self._param_attrs.items()}
        outputs = run_graph(self.graph, values, inputs)
        return outputs[0] if self._single else tuple(outputs)
