"""Linear maps: ``F.linear`` (``x @ weight.T + bias``) and ``F.bilinear`` (``x1^T W x2 + b``).

``linear`` is one op for every input rank: the product is taken on the arrays with
the input's leading dims kept (no reshape nodes), the bias is added in place, and
backward is three products written with Tensor ops. It is the op behind
``nn.Linear`` and the one a backend kernel would replace.
"""
import numpy as np

from ..._dispatch import apply
from ...amp.autocast_mode import autocast_function
from ...autograd.grad_mode import GRAD_ENABLED as _GRAD_ENABLED
from ...ops._gemm import GRADIENT_DTYPES, product
from ..._tensor import Tensor
from ...autograd.node import Node
from ...ops._common import sum_to_shape

__all__ = ["linear", "bilinear"]

_C_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}
_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double", "int64": "Long",
          "int32": "Int",
          "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


class LinearBackward0(Node):
    """``input @ weight.T (+ bias)``; ``input`` of shape ``(*, in)``, ``weight`` ``(out, in)``,
    ``bias`` broadcastable to ``(*, out)``."""

    def forward(ctx, x, w, b=None):
        xa, wa = x._data, w._data
        out = product(xa, wa.T)
        if b is not None:
            ctx.bias_shape = b._data.shape
            out += b._data
        ctx.save_for_backward(x, w)
        return out

    def backward(ctx, grad):
        x, w = ctx.saved_values
        need = ctx.needs_input_grad
        gx = gw = gb = None
        g = grad._data
        if not _GRAD_ENABLED.value and g.ndim >= 2 and g.dtype in GRADIENT_DTYPES and \
                x._data.dtype == g.dtype and w._data.dtype == g.dtype:
            # backward not recorded: two array products, the weight's over the folded rows
            dev = grad._device
            if need[0]:
                gx = Tensor._make(product(g, w._data), dev)
            if need[1]:
                xa = x._data
                gw = Tensor._make(product(g.reshape(-1, g.shape[-1]).T, xa.reshape(-1, xa.shape[-1])), dev)
        else:
            if need[0]:
                gx = grad.matmul(w)
            if need[1]:
                if g.ndim == 2:
                    gw = grad.t().mm(x)
                elif g.ndim == 1:
                    gw = grad.unsqueeze(1).mm(x.unsqueeze(0))
                else:
                    gw = grad.reshape(-1, g.shape[-1]).t().mm(x.reshape(-1, x._data.shape[-1]))
        if len(need) == 3 and need[2]:
            gshape = grad._data.shape
            if ctx.bias_shape == gshape[-1:] and len(gshape) > 1:
                gb = grad.sum(tuple(range(len(gshape) - 1)))
            else:
                gb = sum_to_shape(grad, ctx.bias_shape)
        return (gx, gw, gb) if len(need) == 3 else (gx, gw)


def _shape_error(xs, ws):
    rows = int(np.prod(xs[:-1])) if len(xs) > 1 else 1
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{xs[-1]} and {ws[1]}x{ws[0]})")


def _check_linear(input, weight, bias):
    for name, t in (("input", input), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linear(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(f"linear(): argument 'bias' must be Tensor, not {type(bias).__name__}")
    xs, ws = input._data.shape, weight._data.shape
    if not xs or not ws:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {len(xs)}D and "
                           f"{len(ws)}D")
    if len(ws) > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {len(ws)}D")
    if len(ws) == 2 and xs[-1] != ws[1]:
        raise _shape_error(xs, ws)
    if input._dtype is not weight._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_C_NAMES.get(input._dtype.name, input._dtype.name)} != "
                           f"{_C_NAMES.get(weight._dtype.name, weight._dtype.name)}")
    if bias is not None:
        if bias._dtype is not input._dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {_NAMES[bias._dtype.name]} and "
                               f"{_NAMES[input._dtype.name]}")
        out_shape = xs[:-1] + ws[:1]
        try:
            ok = np.broadcast_shapes(bias._data.shape, out_shape) == out_shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"The expanded size of the tensor ({out_shape[-1] if out_shape else 1}) must match "
                               f"the existing size ({bias._data.shape[-1] if bias._data.ndim else 1}) at "
                               f"non-singleton dimension {max(len(out_shape) - 1, 0)}.  Target sizes: "
                               f"{list(out_shape)}.  Tensor sizes: {list(bias._data.shape)}")


@autocast_function("linear")
def linear(input, weight, bias=None):
    """``input @ weight.T + bias``.

    Shapes: ``input (*, in_features)``, ``weight (out_features, in_features)``,
    ``bias (out_features)`` or None; result ``(*, out_features)``.
    """
    try:
        if weight._data.ndim == 2 and input._data.ndim and input._dtype is weight._dtype and \
                input._data.shape[-1] == weight._data.shape[1]:
            if bias is None:
                return apply(LinearBackward0, input, weight)
            if bias._dtype is input._dtype and bias._data.shape == weight._data.shape[:1]:
                return apply(LinearBackward0, input, weight, bias)
    except AttributeError:
        pass
    _check_linear(input, weight, bias)
    if weight._data.ndim == 1:
        out = input.matmul(weight)
        return out if bias is None else out + bias
    return apply(LinearBackward0, input, weight, bias)


@autocast_function("bilinear")
def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``.

    Shapes: ``input1 (*, in1)``, ``input2 (*, in2)`` (same leading dims), ``weight (out, in1, in2)``,
    ``bias (out)`` or None; result ``(*, out)``.
    """
    for name, t in (("input1", input1), ("input2", input2), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"bilinear(): argument '{name}' must be Tensor, not {type(t).__name__}")
    s1, s2, ws = input1._data.shape, input2._data.shape, weight._data.shape
    if len(s1) != len(s2):
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {len(s1)} and {len(s2)}")
    for i in range(len(s1) - 1):
        if s1[i] != s2[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {s1[i]} and {s2[i]}")
    if len(ws) != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional (out, in1, in2), got {len(ws)}D")
    if not s1:
        raise RuntimeError("bilinear(): inputs must be at least 1-dimensional")
    if s1[-1] != ws[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {s1[-1]} but expected {ws[1]}")
    if s2[-1] != ws[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {s2[-1]} but expected {ws[2]}")
    if bias is not None and (bias._data.ndim != 1 or bias._data.shape[0] != ws[0]):
        got = bias._data.shape[-1] if bias._data.ndim else 1
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {got} but expected {ws[0]}")
    dts = {input1._dtype, input2._dtype, weight._dtype} | ({bias._dtype} if bias is not None else set())
    if len(dts) > 1:
        raise RuntimeError(f"All tensors must have the same dtype, got input1: {_C_NAMES.get(input1._dtype.name)}, "
                           f"input2: {_C_NAMES.get(input2._dtype.name)}, weight: {_C_NAMES.get(weight._dtype.name)}")
    out_f, in1, in2 = ws
    lead = s1[:-1]
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # (B, in1) @ (in1, out * in2): every output's quadratic form in one product
    t = x1.mm(weight.permute(1, 0, 2).reshape(in1, out_f * in2))
    y = (t.reshape(-1, out_f, in2) * x2.unsqueeze(1)).sum(2)
    if bias is not None:
        y = y + bias
    return y.reshape(lead + (out_f,))
