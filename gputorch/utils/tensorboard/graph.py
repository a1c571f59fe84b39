"""A model's traced graph (``gputorch.jit``) as the GraphDef that TensorBoard's Graphs tab draws.

Node names follow the module tree (``Sequential/0/Linear_3``), so TensorBoard folds each module into
one box that opens onto its ops; inputs sit under ``input/``, parameters and buffers under their
module (``0/weight``) and outputs under ``output/``. Every node carries its traced output shapes
(``_output_shapes``) and the op's name (``op``), as PyTorch's writer does with its own op names.
"""
from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from ...jit._tracer import trace_graph

__all__ = ["graph_def"]


def _shapes_attr(shapes):
    protos = [TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(s)) for s in shape]) for shape in shapes]
    return AttrValue(list=AttrValue.ListValue(shape=protos))


def _path(scope, leaf):
    return "/".join([p for p in scope.split(".") if p] + [leaf])


def graph_def(model, inputs):
    """The GraphDef of ``model(*inputs)`` (``inputs`` a tensor or a tuple of tensors)."""
    from ... import nn
    module = model if isinstance(model, nn.Module) else None
    graph, _ = trace_graph(model, inputs, module)
    names, nodes = {}, []

    def node(name, op, inputs, shapes, device="cpu"):
        nodes.append(NodeDef(name=name, op=op, input=inputs, device=device,
                             attr={"_output_shapes": _shapes_attr(shapes)}))

    for i, value in enumerate(graph.inputs):
        names[value] = f"input/{value}"
        node(names[value], "IO Node", [], [graph.info[value][0]])
    for value, tensor in list(graph.params.items()) + list(graph.constants.items()):
        names[value] = _path("", value.replace(".", "/")) if value in graph.params else f"constant/{value}"
        node(names[value], "prim::GetAttr" if value in graph.params else "prim::Constant", [],
             [tuple(tensor.shape)], str(tensor.device))
    for k, op in enumerate(graph.nodes):
        name = _path(op.scope, f"{op.kind}_{k}")
        for out in op.outputs:
            names[out] = name if len(op.outputs) == 1 else f"{name}:{op.outputs.index(out)}"
        args = [names[v] for kind, v in op.args if kind == "value"]
        args += [names[r[1]] for kind, v in op.args if kind == "list" for r in v if r[0] == "value"]
        node(name, op.kind, args, [graph.info[o][0] for o in op.outputs])
    for i, value in enumerate(graph.outputs):
        node(f"output/output{i}", "IO Node", [names[value].split(":")[0]], [graph.info[value][0]])
    return GraphDef(node=nodes, versions=VersionDef(producer=22))
