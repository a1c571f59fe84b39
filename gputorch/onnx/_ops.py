"""The ONNX form of each traced op: one function per op kind, ``fn(b, node) -> output names``.

``b`` is the graph builder (``_export.Builder``): ``b.arg(node, i)`` is the ONNX name of argument
``i`` (a value, or a constant made an initializer in the dtype of the node's tensors),
``b.add(op_type, inputs, outputs, **attrs)`` appends an ONNX node, ``b.const(array)`` adds an
initializer, ``b.shape_of(name)`` and ``b.dtype_of(name)`` give what the trace saw, and
``b.reshape_target(node, shape)`` gives a target-shape tensor that follows the dynamic axes. Opset 17 throughout (``LayerNormalization`` needs it; ``ReduceMean`` still takes
attributes there).
"""
import numpy as np

from ._ops_activations import ACTIVATION_EXPORTERS
from ._ops_arithmetic import ARITHMETIC_EXPORTERS
from ._ops_normalization import NORMALIZATION_EXPORTERS
from ._ops_padding import PADDING_EXPORTERS
from ._ops_reductions import REDUCTION_EXPORTERS, REDUCTION_EXPORTERS_BY_CLASS

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






def _reshape(b, node):
    return b.add("Reshape", [b.arg(node, 0), b.reshape_target(node, b.info(node.outputs[0])[0])], node.outputs)


def _permute(b, node):
    return b.add("Transpose", [b.arg(node, 0)], node.outputs, perm=[int(d) % len(node.args[1][1])
                                                                    for d in node.args[1][1]])


def _transpose(b, node):
    rank = len(b.shape_of(b.arg(node, 0)))
    perm = list(range(rank))
    d0, d1 = int(node.args[1][1]) % rank, int(node.args[2][1]) % rank
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return b.add("Transpose", [b.arg(node, 0)], node.outputs, perm=perm)


def _t(b, node):
    rank = len(b.shape_of(b.arg(node, 0)))
    return b.add("Transpose", [b.arg(node, 0)], node.outputs, perm=list(range(rank))[::-1])


def _cat(b, node):
    tensors = [b.arg(node, i) for i in range(len(node.args))]
    dim = node.params["dim"]
    rank = len(b.shape_of(tensors[0]))
    return b.add("Concat", tensors, node.outputs, axis=int(dim) % rank)


def _stack(b, node):
    tensors = [b.arg(node, i) for i in range(len(node.args))]
    rank = len(b.shape_of(tensors[0])) + 1
    axis = int(node.params["dim"]) % rank
    axes = b.const(np.array([axis], np.int64))
    expanded = [b.add("Unsqueeze", [t, axes], [b.fresh()])[0] for t in tensors]
    return b.add("Concat", expanded, node.outputs, axis=axis)


def _embedding(b, node):
    return b.add("Gather", [b.arg(node, 0), b.arg(node, 1)], node.outputs, axis=0)


def _to_copy(b, node):
    return b.add("Cast", [b.arg(node, 0)], node.outputs, to=b.onnx_dtype(b.info(node.outputs[0])[1]))










def _expanded_key(key, rank):
    """A NumPy basic index as one entry per input dim (``...`` spread out), ``None`` kept."""
    key = key if isinstance(key, tuple) else (key,)
    explicit = sum(1 for k in key if k is not None and k is not Ellipsis)
    out = []
    for k in key:
        if k is Ellipsis:
            out += [slice(None)] * (rank - explicit)
        else:
            out.append(k)
    return out + [slice(None)] * (rank - sum(1 for k in out if k is not None))


def _subview(b, node):
    """Views given by a NumPy basic index (``Key``): slices, integers, ``None`` and ``...``. A slice
    bound that changed with the dynamic axes is read from the inputs' shapes at run time."""
    where = node.args[1][1]
    key = getattr(where, "key", None)
    if key is None:
        b.fail(node, f"the view {type(where).__name__}")
    x = b.arg(node, 0)
    rank = len(b.shape_of(x))
    expanded = _expanded_key(key, rank)
    twin = b.later(node)
    later = _expanded_key(twin.args[1][1].key, rank) if twin is not None else expanded
    big = np.iinfo(np.int64).max

    def bound(value, other):
        if value == other:
            return b.const(np.array([big if value is None else value], np.int64))
        size = b.runtime_size((value, other), [x])
        if size is None:
            b.fail(node, f"a slice bound {value} that follows the dynamic axes in no way the inputs' shapes give")
        return size
    starts, ends, axes, steps, drop, insert = [], [], [], [], [], []
    dim = out_dim = 0
    for k, k2 in zip(expanded, later):
        if k is None:
            insert.append(out_dim)
            out_dim += 1
            continue
        if isinstance(k, slice):
            if k != slice(None):
                starts.append(bound(k.start or 0, k2.start or 0))
                ends.append(bound(k.stop, k2.stop))
                axes.append(dim)
                steps.append(1 if k.step is None else k.step)
            dim += 1
            out_dim += 1
        else:
            starts.append(b.const(np.array([int(k)], np.int64)))
            ends.append(b.const(np.array([int(k) + 1 if int(k) != -1 else big], np.int64)))
            axes.append(dim)
            steps.append(1)
            drop.append(dim)
            dim += 1
    out = x
    if axes:
        start = b.add("Concat", starts, [b.fresh()], axis=0)[0]
        end = b.add("Concat", ends, [b.fresh()], axis=0)[0]
        out = b.add("Slice", [out, start, end, b.const(np.array(axes, np.int64)), b.const(np.array(steps, np.int64))],
                    [b.fresh()])[0]
    if drop:
        out = b.add("Squeeze", [out, b.const(np.array(drop, np.int64))], [b.fresh()])[0]
    if insert:
        out = b.add("Unsqueeze", [out, b.const(np.array(insert, np.int64))], [b.fresh()])[0]
    return b.add("Identity", [out], node.outputs)


def _expand(b, node):
    target = b.reshape_target(node, tuple(node.args[1][1]), ones_for_dynamic=True)
    return b.add("Expand", [b.arg(node, 0), target], node.outputs)


def _recurrent(b, node, op_type, gate_order, states, **attrs):
    """A whole-sequence LSTM/GRU op as ONNX's ``op_type``. Its input is the traced projection ``gi``
    (argument 0), so ``W`` is an identity that reorders the gates into ONNX's order (``gate_order``:
    PyTorch's gate blocks in ONNX's order); ``R`` and ``B`` come from ``W_hh``/``b_hh`` (the arguments
    after the ``states`` initial-state arguments) in that order; ``B``'s input half is zero. The
    outputs are the sequence, then one final state per initial state."""
    gi = b.arg(node, 0)
    h0s = [b.arg(node, 1 + k) for k in range(states)]
    w_hh = b.arg(node, 1 + states)
    bias_ref = node.args[2 + states]
    reverse = node.args[3 + states][1]
    size = b.shape_of(h0s[0])[-1]
    width = len(gate_order) * size
    order = np.concatenate([np.arange(k * size, (k + 1) * size) for k in gate_order])
    dtype = b.np_dtype_of(gi)
    index = b.const(order)
    axes0 = b.const(np.array([0], np.int64))

    def batch_of_one(name):
        return b.add("Unsqueeze", [name, axes0], [b.fresh()])[0]
    inputs = [gi, b.const(np.eye(width, dtype=dtype)[order][None]),
              batch_of_one(b.add("Gather", [w_hh, index], [b.fresh()], axis=0)[0])]
    if bias_ref[0] == "const" and bias_ref[1] is None:
        inputs.append("")
    else:
        hidden_bias = b.add("Gather", [b.arg(node, 2 + states), index], [b.fresh()], axis=0)[0]
        inputs.append(batch_of_one(b.add("Concat", [b.const(np.zeros(width, dtype)), hidden_bias], [b.fresh()],
                                         axis=0)[0]))
    inputs += [""] + [batch_of_one(h) for h in h0s]
    outs = [b.fresh() for _ in range(1 + states)]
    b.add(op_type, inputs, outs, hidden_size=int(size), direction="reverse" if reverse else "forward", **attrs)
    b.add("Squeeze", [outs[0], b.const(np.array([1], np.int64))], [node.outputs[0]])
    for out, final in zip(outs[1:], node.outputs[1:]):
        b.add("Squeeze", [out, axes0], [final])
    return node.outputs


def _lstm_sequence(b, node):
    """ONNX's LSTM: gates i, o, f, c (PyTorch's i, f, g, o); initial and final h and c."""
    return _recurrent(b, node, "LSTM", (0, 3, 1, 2), 2)


def _gru_sequence(b, node):
    """ONNX's GRU with ``linear_before_reset=1`` (PyTorch's formula: the reset gate multiplies
    ``h @ W_hn.T + b_hn``): gates z, r, h (PyTorch's r, z, n); initial and final h."""
    return _recurrent(b, node, "GRU", (1, 0, 2), 1, linear_before_reset=1)


def _rnn_sequence(b, node):
    """ONNX's RNN (one gate) with ``Tanh`` or ``Relu`` (argument 5); initial and final h."""
    return _recurrent(b, node, "RNN", (0,), 1, activations=["Relu" if node.args[5][1] else "Tanh"])


def _unbind(b, node):
    x = b.arg(node, 0)
    rank = len(b.shape_of(x))
    dim = int(node.args[2][1]) % rank
    count = len(node.outputs)
    parts = b.add("Split", [x, b.const(np.ones(count, np.int64))], [b.fresh() for _ in range(count)], axis=dim)
    axes = b.const(np.array([dim], np.int64))
    for part, out in zip(parts, node.outputs):
        b.add("Squeeze", [part, axes], [out])
    return node.outputs


def _split(b, node):
    x = b.arg(node, 0)
    rank = len(b.shape_of(x))
    dim = int(node.args[2][1]) % rank
    sizes = [b.shape_of(o)[dim] for o in node.outputs]
    return b.add("Split", [x, b.const(np.array(sizes, np.int64))], node.outputs, axis=dim)




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


def _triangle(b, node):
    """``tril``/``triu`` (argument 2 says which) as ``Trilu`` with the diagonal offset ``k``."""
    k = b.const(np.array(int(node.args[1][1]), np.int64))
    return b.add("Trilu", [b.arg(node, 0), k], node.outputs, upper=int(bool(node.args[2][1])))


def _repeat(b, node):
    """``Tile``, after leading 1-dims where ``repeats`` is longer than the input's rank."""
    x, repeats = b.arg(node, 0), [int(r) for r in node.args[1][1]]
    extra = len(repeats) - len(b.shape_of(x))
    if extra:
        x = b.add("Unsqueeze", [x, b.const(np.arange(extra, dtype=np.int64))], [b.fresh()])[0]
    return b.add("Tile", [x, b.const(np.array(repeats, np.int64))], node.outputs)


def _flip(b, node):
    """A ``Slice`` that walks each flipped dim backwards."""
    x = b.arg(node, 0)
    rank = len(b.shape_of(x))
    axes = sorted({int(d) % rank for d in node.args[1][1]})
    low = np.iinfo(np.int64).min
    consts = [b.const(np.array(v, np.int64)) for v in ([-1] * len(axes), [low] * len(axes), axes, [-1] * len(axes))]
    return b.add("Slice", [x] + consts, node.outputs)


EXPORTERS = {
    "Linear": _linear, "Convolution": _convolution, "MaxPool2DWithIndices": _max_pool, "AvgPool2D": _avg_pool,
    "AdaptiveAvgPool2D": _adaptive_avg_pool, "Softmax": _softmax("Softmax"), "LogSoftmax": _softmax("LogSoftmax"),
    "View": _reshape, "UnsafeView": _reshape, "Squeeze": _reshape, "Flatten": _reshape,
    "Permute": _permute, "Transpose": _transpose, "T": _t, "Cat": _cat, "Stack": _stack,
    "Embedding": _embedding, "ToCopy": _to_copy,
    "Unsqueeze": _subview, "Slice": _subview, "Select": _subview, "Alias": _subview, "Expand": _expand,
    "Mm": _matmul, "Bmm": _matmul, "Matmul": _matmul, "Mv": _matmul,
    "Clone": _identity, "Contiguous": _identity, "LstmSequence": _lstm_sequence, "GruSequence": _gru_sequence,
    "RnnSequence": _rnn_sequence,
    "Unbind": _unbind, "Split": _split, "SplitWithSizes": _split, "Tril": _triangle, "Triu": _triangle,
    "Repeat": _repeat, "Flip": _flip,
    "Argmax": lambda b, node: b.add("ArgMax", [b.arg(node, 0)], node.outputs, axis=int(node.args[1][1]),
                                    keepdims=int(bool(node.args[2][1]))),
}
EXPORTERS.update(ACTIVATION_EXPORTERS)
EXPORTERS.update(ARITHMETIC_EXPORTERS)
EXPORTERS.update(NORMALIZATION_EXPORTERS)
EXPORTERS.update(PADDING_EXPORTERS)
EXPORTERS.update(REDUCTION_EXPORTERS)
EXPORTERS_BY_CLASS = {"SqueezeBackward0": _reshape, "SqueezeBackward1": _reshape, "SqueezeBackward2": _reshape,
                      **REDUCTION_EXPORTERS_BY_CLASS}
