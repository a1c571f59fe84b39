"""ONNX forms of padding: ``F.pad`` in constant, reflect and replicate modes (ONNX's ``Pad``, modes
``constant``, ``reflect``, ``edge``) and circular mode (wrap-around slices concatenated: ONNX's
``wrap`` mode needs opset 19), also where a convolution's ``padding_mode`` runs them."""
import numpy as np

__all__ = ["PADDING_EXPORTERS"]

_ONNX_MODE = {"reflect": "reflect", "replicate": "edge"}


def _pad(b, x, before_after, rank, outputs, mode, value=None):
    """``Pad`` of ``x`` by ``{axis: (before, after)}``."""
    pads = [before_after.get(d, (0, 0))[0] for d in range(rank)] + \
        [before_after.get(d, (0, 0))[1] for d in range(rank)]
    inputs = [x, b.const(np.array(pads, np.int64))]
    if value is not None:
        inputs.append(value)
    return b.add("Pad", inputs, outputs, mode=mode)


def _constant_pad(b, node):
    """``(left, right)`` pairs from the last dim backwards; negative pads crop (ONNX's ``Pad`` crops too)."""
    x, pad = b.arg(node, 0), list(node.args[1][1])
    rank = len(b.shape_of(x))
    before_after = {rank - 1 - i: (int(pad[2 * i]), int(pad[2 * i + 1])) for i in range(len(pad) // 2)}
    dt = b.info(node.outputs[0])[1]
    return _pad(b, x, before_after, rank, node.outputs, "constant", b.const(np.array(node.args[2][1], dt.np)))


def _slice(b, x, axis, start, end):
    consts = [b.const(np.array([v], np.int64)) for v in (start, end, axis)]
    return b.add("Slice", [x] + consts, [b.fresh()])[0]


def _index_pad(b, node):
    """The reflect/replicate/circular pads: argument 1 lists ``(axis, size, mode, left, right)``."""
    x, plan = b.arg(node, 0), node.args[1][1]
    rank = len(b.shape_of(x))
    mode = plan[0][2]
    if mode != "circular":
        return _pad(b, x, {axis: (left, right) for axis, _, _, left, right in plan}, rank, node.outputs,
                    _ONNX_MODE[mode])
    big = np.iinfo(np.int64).max
    for axis, _, _, left, right in plan:
        if left < 0 or right < 0:
            b.fail(node, "circular padding with negative pads")
        parts = ([_slice(b, x, axis, -left, big)] if left else []) + [x] + \
            ([_slice(b, x, axis, 0, right)] if right else [])
        x = b.add("Concat", parts, [b.fresh()], axis=axis)[0]
    return b.add("Identity", [x], node.outputs)


PADDING_EXPORTERS = {"ConstantPadNd": _constant_pad, "CircularPad": _index_pad}
PADDING_EXPORTERS.update({f"{kind}Pad{n}D": _index_pad for kind in ("Reflection", "Replication") for n in (1, 2, 3)})
