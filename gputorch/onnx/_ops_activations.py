"""ONNX forms of the activation functions. Where ONNX opset 17 has the function with PyTorch's
formula and ONNX Runtime runs it in float32 and float64 (``Relu``, ``LeakyRelu``, ``Shrink``,
``PRelu``, ``Clip``...) it is used; the others are written from ONNX primitives (GELU, SiLU,
Mish, softplus, ELU/SELU/CELU, hard sigmoid/swish, GLU, threshold)."""
import math

import numpy as np

from ._ops_arithmetic import erf_of

__all__ = ["ACTIVATION_EXPORTERS"]


def _c(b, node, value):
    """A 0-d constant of ``value`` in the dtype of ``node``'s output."""
    return b.const(np.array(value, b.info(node.outputs[0])[1].np))


def _gelu(b, node):
    """Exact: ``x/2 * (1 + erf(x / sqrt 2))``; tanh: ``x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    x = b.arg(node, 0)
    if node.args[1][1] == "tanh":
        cube = b.add("Mul", [b.add("Mul", [x, x], [b.fresh()])[0], x], [b.fresh()])[0]
        inner = b.add("Add", [x, b.add("Mul", [cube, _c(b, node, 0.044715)], [b.fresh()])[0]], [b.fresh()])[0]
        curve = b.add("Tanh", [b.add("Mul", [inner, _c(b, node, math.sqrt(2 / math.pi))], [b.fresh()])[0]],
                      [b.fresh()])[0]
    else:
        curve = erf_of(b, b.add("Mul", [x, _c(b, node, math.sqrt(0.5))], [b.fresh()])[0], b.info(node.outputs[0])[1])
    half = b.add("Mul", [x, _c(b, node, 0.5)], [b.fresh()])[0]
    return b.add("Mul", [half, b.add("Add", [curve, _c(b, node, 1.0)], [b.fresh()])[0]], node.outputs)


def _silu(b, node):
    x = b.arg(node, 0)
    return b.add("Mul", [x, b.add("Sigmoid", [x], [b.fresh()])[0]], node.outputs)


def _softplus_of(b, node, x):
    """``log(1 + exp(x))`` as ``relu(x) + log(1 + exp(-|x|))``: finite for any ``x``, and in ONNX
    Runtime for float64 too (its ``Softplus`` kernel is float32 only)."""
    tail = b.add("Exp", [b.add("Neg", [b.add("Abs", [x], [b.fresh()])[0]], [b.fresh()])[0]], [b.fresh()])[0]
    log = b.add("Log", [b.add("Add", [tail, _c(b, node, 1.0)], [b.fresh()])[0]], [b.fresh()])[0]
    return b.add("Add", [b.add("Relu", [x], [b.fresh()])[0], log], [b.fresh()])[0]


def _mish(b, node):
    """``x * tanh(softplus(x))``."""
    x = b.arg(node, 0)
    return b.add("Mul", [x, b.add("Tanh", [_softplus_of(b, node, x)], [b.fresh()])[0]], node.outputs)


def _softplus(b, node):
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``."""
    x = b.arg(node, 0)
    beta, threshold = float(node.args[1][1]), float(node.args[2][1])
    scaled = x if beta == 1 else b.add("Mul", [x, _c(b, node, beta)], [b.fresh()])[0]
    soft = _softplus_of(b, node, scaled)
    if beta != 1:
        soft = b.add("Div", [soft, _c(b, node, beta)], [b.fresh()])[0]
    linear = b.add("Greater", [scaled, _c(b, node, threshold)], [b.fresh()])[0]
    return b.add("Where", [linear, x, soft], node.outputs)


def _log_sigmoid(b, node):
    """``-softplus(-x)`` (finite for large ``|x|``, unlike ``log(sigmoid(x))``)."""
    neg = b.add("Neg", [b.arg(node, 0)], [b.fresh()])[0]
    return b.add("Neg", [_softplus_of(b, node, neg)], node.outputs)


def _elu(b, node):
    """``scale * (x if x > 0 else alpha * (exp(input_scale * x) - 1))`` (ELU, SELU; CELU has
    ``input_scale = 1 / alpha``), written out: ONNX Runtime's ``Elu``/``Selu``/``Celu`` are float32 only."""
    x = b.arg(node, 0)
    alpha, scale, input_scale = (float(node.args[i][1]) for i in (1, 2, 3))
    scaled = x if input_scale == 1 else b.add("Mul", [x, _c(b, node, input_scale)], [b.fresh()])[0]
    grown = b.add("Sub", [b.add("Exp", [scaled], [b.fresh()])[0], _c(b, node, 1.0)], [b.fresh()])[0]
    negative = b.add("Mul", [grown, _c(b, node, alpha)], [b.fresh()])[0]
    positive = b.add("Greater", [x, _c(b, node, 0.0)], [b.fresh()])[0]
    out = b.add("Where", [positive, x, negative], [b.fresh()])[0]
    if scale != 1:
        out = b.add("Mul", [out, _c(b, node, scale)], [b.fresh()])[0]
    return b.add("Identity", [out], node.outputs)


def _hardtanh(b, node):
    return b.add("Clip", [b.arg(node, 0), _c(b, node, node.args[1][1]), _c(b, node, node.args[2][1])],
                 node.outputs)


def _threshold(b, node):
    """``x if x > threshold else value``."""
    x = b.arg(node, 0)
    keep = b.add("Greater", [x, _c(b, node, node.args[1][1])], [b.fresh()])[0]
    return b.add("Where", [keep, x, _c(b, node, node.args[2][1])], node.outputs)


def _prelu(b, node):
    """``PRelu`` with the slope shaped ``(C, 1, ...)`` so that it broadcasts over dim 1, as PyTorch's does."""
    x, weight = b.arg(node, 0), b.arg(node, 1)
    rank, slopes = len(b.shape_of(x)), b.shape_of(weight)
    if slopes and slopes[0] > 1:
        shape = [slopes[0]] + [1] * (rank - 2)
        weight = b.add("Reshape", [weight, b.const(np.array(shape, np.int64))], [b.fresh()])[0]
    return b.add("PRelu", [x, weight], node.outputs)


def _glu(b, node):
    """``a * sigmoid(g)`` with ``a`` and ``g`` the two halves of ``dim``."""
    x = b.arg(node, 0)
    rank = len(b.shape_of(x))
    dim = int(node.args[1][1]) % rank
    half = b.shape_of(x)[dim] // 2
    a, g = b.add("Split", [x, b.const(np.array([half, half], np.int64))], [b.fresh(), b.fresh()], axis=dim)
    return b.add("Mul", [a, b.add("Sigmoid", [g], [b.fresh()])[0]], node.outputs)


def _shrink(soft):
    def export(b, node):
        lambd = float(node.args[1][1])
        return b.add("Shrink", [b.arg(node, 0)], node.outputs, lambd=lambd, bias=lambd if soft else 0.0)
    return export


def _one(op_type, **attrs):
    return lambda b, node: b.add(op_type, [b.arg(node, 0)], node.outputs, **attrs)


def _hard_sigmoid_of(b, node, x):
    """``clip(x / 6 + 1/2, 0, 1)`` (ONNX Runtime's ``HardSigmoid`` is float32 only)."""
    shifted = b.add("Add", [b.add("Div", [x, _c(b, node, 6.0)], [b.fresh()])[0], _c(b, node, 0.5)], [b.fresh()])[0]
    return b.add("Clip", [shifted, _c(b, node, 0.0), _c(b, node, 1.0)], [b.fresh()])[0]


def _hardsigmoid(b, node):
    return b.add("Identity", [_hard_sigmoid_of(b, node, b.arg(node, 0))], node.outputs)


def _hardswish(b, node):
    x = b.arg(node, 0)
    return b.add("Mul", [x, _hard_sigmoid_of(b, node, x)], node.outputs)


def _leaky_relu(b, node):
    return b.add("LeakyRelu", [b.arg(node, 0)], node.outputs, alpha=float(node.args[1][1]))


ACTIVATION_EXPORTERS = {
    "Relu": _one("Relu"), "Sigmoid": _one("Sigmoid"), "Tanh": _one("Tanh"), "Gelu": _gelu, "Silu": _silu,
    "Mish": _mish, "Softplus": _softplus, "LogSigmoid": _log_sigmoid, "Elu": _elu, "Celu": _elu,
    "Hardtanh": _hardtanh, "Threshold": _threshold, "PreluKernel": _prelu, "Glu": _glu,
    "Softshrink": _shrink(True), "Hardshrink": _shrink(False), "LeakyRelu": _leaky_relu,
    "Hardsigmoid": _hardsigmoid, "Hardswish": _hardswish,
}
