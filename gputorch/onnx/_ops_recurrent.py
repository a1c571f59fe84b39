"""ONNX forms of the whole-sequence recurrent ops (``LstmSequence``, ``GruSequence``, ``RnnSequence``:
one layer, one direction each) as ONNX's ``LSTM``, ``GRU`` and ``RNN``, with initial and final
states; a model's several layers and directions are several such ops."""
import numpy as np

__all__ = ["RECURRENT_EXPORTERS"]


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


RECURRENT_EXPORTERS = {"LstmSequence": _lstm_sequence, "GruSequence": _gru_sequence, "RnnSequence": _rnn_sequence}
