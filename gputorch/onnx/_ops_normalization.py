"""ONNX forms of the normalization layers in eval mode: batch norm (running statistics), layer norm
(``LayerNormalization``, opset 17) and group norm (mean and variance over the input seen as
``(N, groups, -1)``, then the per-channel affine; ONNX's ``GroupNormalization`` needs opset 18 and
ONNX Runtime's ``InstanceNormalization`` is float32 only)."""
import numpy as np

__all__ = ["NORMALIZATION_EXPORTERS"]


def _absent(ref):
    return ref[0] == "const" and ref[1] is None


def _batch_norm(b, node):
    training, eps = node.args[5][1], node.args[7][1]
    if training:
        b.fail(node, "batch_norm in training mode (export with model.eval())")
    return b.add("BatchNormalization", [b.arg(node, i) for i in range(5)], node.outputs[:1], epsilon=float(eps))


def _layer_norm(b, node):
    ndims, eps = node.args[3][1], node.args[4][1]
    rank = len(b.shape_of(b.arg(node, 0)))
    inputs = [b.arg(node, 0), b.arg(node, 1)]
    if not _absent(node.args[2]):
        inputs.append(b.arg(node, 2))
    return b.add("LayerNormalization", inputs, node.outputs[:1], axis=rank - int(ndims), epsilon=float(eps))


def _group_norm(b, node):
    """``(x - mean) / sqrt(var + eps)`` per sample and group, then ``* weight + bias`` per channel.
    The batch dim and the spatial dims are read at run time (reshape ``0`` and ``-1``, ``Shape(x)``)."""
    x, groups, eps = b.arg(node, 0), int(node.args[3][1]), float(node.args[4][1])
    shape = b.shape_of(x)
    dt = b.np_dtype_of(x)
    grouped = b.add("Reshape", [x, b.const(np.array([0, groups, -1], np.int64))], [b.fresh()])[0]
    mean = b.add("ReduceMean", [grouped], [b.fresh()], axes=[2], keepdims=1)[0]
    centred = b.add("Sub", [grouped, mean], [b.fresh()])[0]
    var = b.add("ReduceMean", [b.add("Mul", [centred, centred], [b.fresh()])[0]], [b.fresh()], axes=[2], keepdims=1)[0]
    spread = b.add("Sqrt", [b.add("Add", [var, b.const(np.array(eps, dt))], [b.fresh()])[0]], [b.fresh()])[0]
    normal = b.add("Div", [centred, spread], [b.fresh()])[0]
    out = b.add("Reshape", [normal, b.add("Shape", [x], [b.fresh()])[0]], [b.fresh()])[0]
    per_channel = b.const(np.array([shape[1]] + [1] * (len(shape) - 2), np.int64))
    for ref, op_type in ((node.args[1], "Mul"), (node.args[2], "Add")):
        if not _absent(ref):
            affine = b.add("Reshape", [b.arg(node, 1 if op_type == "Mul" else 2), per_channel], [b.fresh()])[0]
            out = b.add(op_type, [out, affine], [b.fresh()])[0]
    return b.add("Identity", [out], node.outputs[:1])


NORMALIZATION_EXPORTERS = {"NativeBatchNorm": _batch_norm, "NativeLayerNorm": _layer_norm,
                           "NativeGroupNorm": _group_norm}
