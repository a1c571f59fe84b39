"""The ONNX form of each traced op: one function per op kind, ``fn(b, node) -> output names``.

``b`` is the graph builder (``_export.Builder``): ``b.arg(node, i)`` is the ONNX name of argument
``i`` (a value, or a constant made an initializer in the dtype of the node's tensors),
``b.operand(node, i, dtype)`` the same cast to ``dtype`` (type promotion), ``b.add(op_type,
inputs, outputs, **attrs)`` appends an ONNX node, ``b.const(array)`` adds an initializer,
``b.shape_of(name)`` and ``b.info(name)`` give what the trace saw, and ``b.reshape_target(node,
shape)`` / ``b.runtime_size(pair)`` give sizes that follow the dynamic axes. Opset 17 throughout
(``LayerNormalization`` needs it; ``ReduceMean`` still takes attributes there).

This module holds the layers' ops (linear, convolution, pooling, embedding, softmax, casts) and
the registry; each other family has its module: ``_ops_activations``, ``_ops_arithmetic``,
``_ops_indexing``, ``_ops_normalization``, ``_ops_padding``, ``_ops_recurrent``,
``_ops_reductions``, ``_ops_shape``.
"""
import numpy as np

from ._ops_activations import ACTIVATION_EXPORTERS
from ._ops_arithmetic import ARITHMETIC_EXPORTERS
from ._ops_indexing import INDEXING_EXPORTERS
from ._ops_normalization import NORMALIZATION_EXPORTERS
from ._ops_padding import PADDING_EXPORTERS
from ._ops_recurrent import RECURRENT_EXPORTERS
from ._ops_reductions import REDUCTION_EXPORTERS, REDUCTION_EXPORTERS_BY_CLASS
from ._ops_shape import SHAPE_EXPORTERS, SHAPE_EXPORTERS_BY_CLASS

__all__ = ["EXPORTERS", "EXPORTERS_BY_CLASS", "CREATION_EXPORTERS"]


def _identity(b, node):
    return b.add("Identity", [b.arg(node, 0)], node.outputs[:1])


def _linear(b, node):
    x, w = b.arg(node, 0), b.arg(node, 1)
    wt = b.add("Transpose", [w], [b.fresh()], perm=[1, 0])[0]
    if len(node.args) < 3 or node.args[2] == ("const", None):      # no bias
        return b.add("MatMul", [x, wt], node.outputs)
    mm = b.add("MatMul", [x, wt], [b.fresh()])[0]
    return b.add("Add", [mm, b.arg(node, 2)], node.outputs)


def _matmul(b, node):
    return b.add("MatMul", [b.arg(node, 0), b.arg(node, 1)], node.outputs)


def _convolution(b, node):
    _, _, _, stride, padding, dilation, transposed, output_padding, groups = [r[1] for r in node.args]
    spatial = len(b.shape_of(b.arg(node, 0))) - 2      # conv1d runs as a 2-D convolution: keep the last dims
    stride, dilation, output_padding = (list(v)[-spatial:] for v in (stride, dilation, output_padding))
    padding = list(padding)[-spatial:]
    pads = [p[0] for p in padding] + [p[1] for p in padding] if isinstance(padding[0], tuple) else \
        list(padding) * 2
    inputs = [b.arg(node, 0), b.arg(node, 1)]
    if not (node.args[2][0] == "const" and node.args[2][1] is None):
        inputs.append(b.arg(node, 2))
    attrs = dict(strides=stride, pads=pads, dilations=dilation, group=int(groups))
    if transposed:
        attrs["output_padding"] = output_padding
        return b.add("ConvTranspose", inputs, node.outputs, **attrs)
    return b.add("Conv", inputs, node.outputs, **attrs)


def _max_pool(b, node):
    """``MaxPool``; ``ceil_mode`` is read off the traced output size (larger than the floor rule's)."""
    _, kernel, stride, padding, dilation, out_size, _ = [r[1] for r in node.args]
    in_size = b.shape_of(b.arg(node, 0))[-len(kernel):]
    floor = [(n + 2 * p - d * (k - 1) - 1) // s + 1
             for n, k, s, p, d in zip(in_size, kernel, stride, padding, dilation)]
    ceil_mode = int(any(o > f for o, f in zip(out_size, floor)))
    outs = b.add("MaxPool", [b.arg(node, 0)], node.outputs[:1], kernel_shape=list(kernel), strides=list(stride),
                 pads=list(padding) * 2, dilations=list(dilation), ceil_mode=ceil_mode)
    if len(node.outputs) > 1:
        b.unsupported_output(node, 1)
    return outs


def _avg_pool(b, node):
    _, kernel, stride, padding, ceil_mode, count_include_pad, divisor, _ = [r[1] for r in node.args]
    if divisor is not None:
        b.fail(node, "avg_pool with divisor_override")
    return b.add("AveragePool", [b.arg(node, 0)], node.outputs, kernel_shape=list(kernel), strides=list(stride),
                 pads=list(padding) * 2, ceil_mode=int(bool(ceil_mode)),
                 count_include_pad=int(bool(count_include_pad)))


def _adaptive_avg_pool(b, node):
    in_shape = b.shape_of(b.arg(node, 0))
    out_hw = tuple(node.args[1][1])
    if all(o == 1 for o in out_hw):
        return b.add("GlobalAveragePool", [b.arg(node, 0)], node.outputs)
    if all(i % o == 0 for i, o in zip(in_shape[-2:], out_hw)):
        kernel = [i // o for i, o in zip(in_shape[-2:], out_hw)]
        return b.add("AveragePool", [b.arg(node, 0)], node.outputs, kernel_shape=kernel, strides=kernel)
    b.fail(node, "adaptive_avg_pool2d to a size that does not divide the input")






def _softmax(op_type):
    def export(b, node):
        return b.add(op_type, [b.arg(node, 0)], node.outputs, axis=int(node.args[1][1]))
    return export


















def _embedding(b, node):
    return b.add("Gather", [b.arg(node, 0), b.arg(node, 1)], node.outputs, axis=0)


def _to_copy(b, node):
    return b.add("Cast", [b.arg(node, 0)], node.outputs, to=b.onnx_dtype(b.info(node.outputs[0])[1]))
























def _scalar_param(b, node, name, np_dtype):
    """A 0-d ONNX value for the creation parameter ``name``: a constant, or, where it changed with the
    dynamic axes, a size read from the inputs' shapes at run time."""
    value = node.params[name]
    twin = b.later(node)
    if twin is not None and twin.params[name] != value:
        size = b.runtime_size((value, twin.params[name]))
        if size is None:
            b.fail(node, f"its {name}={value}, which follows the dynamic axes in no way the inputs' shapes give")
        scalar = b.add("Squeeze", [size, b.const(np.array([0], np.int64))], [b.fresh()])[0]
        return scalar if np_dtype == np.int64 else b.add("Cast", [scalar], [b.fresh()],
                                                         to=b.onnx_dtype(np_dtype))[0]
    return b.const(np.array(value, np_dtype))


def _arange(b, node):
    dt = node.params["dtype"].np
    return b.add("Range", [_scalar_param(b, node, k, dt) for k in ("start", "end", "step")], node.outputs)


CREATION_EXPORTERS = {"Arange": _arange}








EXPORTERS = {
    "Linear": _linear, "Convolution": _convolution, "MaxPool2DWithIndices": _max_pool, "AvgPool2D": _avg_pool,
    "AdaptiveAvgPool2D": _adaptive_avg_pool, "Softmax": _softmax("Softmax"), "LogSoftmax": _softmax("LogSoftmax"),
    "Embedding": _embedding, "ToCopy": _to_copy, "Mm": _matmul, "Bmm": _matmul, "Matmul": _matmul, "Mv": _matmul,
    "Clone": _identity, "Contiguous": _identity,
    "Argmax": lambda b, node: b.add("ArgMax", [b.arg(node, 0)], node.outputs, axis=int(node.args[1][1]),
                                    keepdims=int(bool(node.args[2][1]))),
}
for _family in (ACTIVATION_EXPORTERS, ARITHMETIC_EXPORTERS, INDEXING_EXPORTERS, NORMALIZATION_EXPORTERS,
                PADDING_EXPORTERS, RECURRENT_EXPORTERS, REDUCTION_EXPORTERS, SHAPE_EXPORTERS):
    EXPORTERS.update(_family)
EXPORTERS_BY_CLASS = {**SHAPE_EXPORTERS_BY_CLASS, **REDUCTION_EXPORTERS_BY_CLASS}
