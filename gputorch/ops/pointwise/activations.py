"""The two activations that are Tensor methods too: sigmoid (computed in float32 for float16
inputs) and relu (integer dtypes kept). Both differentiate through their output.
"""
from ... import _dtype
from ..._dispatch import apply, apply_inplace
from ...autograd.node import Node
from .._common import quiet_errors, xp_of
from ..activation_backward import sigmoid_backward, threshold_backward
from ..registry import tensor_method
from ._common import _compute_dtype_array, define_unary_ops

__all__ = ["sigmoid", "relu", "sigmoid_", "relu_"]


# ================================================================ activations
class SigmoidBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        xp = xp_of(a)
        x, back = _compute_dtype_array(a)
        with quiet_errors():
            e = xp.negative(x)
            xp.exp(e, out=e)          # exp(-x) overflows to inf for x << 0: 1 / inf = 0
            e += 1
            xp.reciprocal(e, out=e)
        return e if back is None else e.astype(back)

    def backward(ctx, grad):
        return sigmoid_backward(grad, ctx.saved_result)


class ReluBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        if a._dtype is _dtype.bool:
            raise RuntimeError("Boolean inputs not supported for relu")
        return a._device._backend.relu(a._data)

    def backward(ctx, grad):
        return threshold_backward(grad, ctx.saved_result, 0)


_UNARY = [
    # (node, names of the function/method, names of the in-place method)
    (SigmoidBackward0, ("sigmoid",), ("sigmoid_",)),
]

define_unary_ops(_UNARY, globals())


@tensor_method("relu")
def relu(input):
    """``max(input, 0)``; integer dtypes are kept."""
    return apply(ReluBackward0, input)


@tensor_method("relu_")
def relu_(input):
    return apply_inplace(ReluBackward0, input)
