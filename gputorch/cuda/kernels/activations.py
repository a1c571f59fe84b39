"""Launch wrappers of ``kernels/activations.cu``: elementwise activations and their gradients.

Every function takes backend arrays and returns the result array, or None when the kernels do
not take the input (a dtype other than float16/32/64): the caller then runs the generic path.
Empty arrays are returned without a launch; non-contiguous inputs are made contiguous.
"""
from ._launch import BLOCK, blocks, contiguous, ctype, i64, rounded
from ._module import function
from ._source import TYPES, family

#: The ACT codes of the kernels.
ACT = {"identity": 0, "relu": 1, "gelu": 2, "gelu_tanh": 3, "silu": 4, "sigmoid": 5, "tanh": 6}
INPUT_GRADS = ("gelu", "gelu_tanh", "silu")      # differentiated at the input
OUTPUT_GRADS = ("sigmoid", "tanh")               # differentiated at the output

FAMILY = family("activations", "activations.cu", (
    [f"activation_forward<{t}, {a}>" for t in TYPES for a in range(1, 7)]
    + [f"activation_backward<{t}, {ACT[a]}>" for t in TYPES for a in INPUT_GRADS]
    + [f"output_backward<{t}, {ACT[a]}>" for t in TYPES for a in OUTPUT_GRADS]
    + [f"threshold_backward<{t}>" for t in TYPES]
    + [f"bias_activation_forward<{t}, {a}>" for t in TYPES for a in range(7)]))


def _launch(xp, name, arrays, dtype):
    """Run elementwise kernel ``name`` on ``arrays`` (inputs, same shape) into a new output."""
    out = xp.empty(arrays[0].shape, dtype=dtype)
    n = out.size
    if n:
        args = tuple(contiguous(xp, a) for a in arrays) + (out, i64(n))
        function(FAMILY.name, name)((blocks(n),), (BLOCK,), args)
    return out


def forward(xp, x, act):
    """``act(x)`` for ``act`` in ACT (not identity)."""
    t = ctype(x.dtype)
    if t is None:
        return None
    return _launch(xp, f"activation_forward<{t}, {ACT[act]}>", (x,), x.dtype)


def input_backward(xp, grad, x, act):
    """``grad * act'(x)`` for gelu, gelu_tanh and silu."""
    t = ctype(x.dtype)
    if t is None or grad.dtype != x.dtype or grad.shape != x.shape:
        return None
    return _launch(xp, f"activation_backward<{t}, {ACT[act]}>", (grad, x), x.dtype)


def output_backward(xp, grad, y, act):
    """sigmoid: ``(1 - y) * grad * y``; tanh: ``(1 - y * y) * grad``."""
    t = ctype(y.dtype)
    if t is None or grad.dtype != y.dtype or grad.shape != y.shape:
        return None
    return _launch(xp, f"output_backward<{t}, {ACT[act]}>", (grad, y), y.dtype)


def threshold_backward(xp, grad, y, threshold):
    """``grad`` except 0 where ``y <= threshold`` (threshold rounded to y's dtype, as the generic
    comparison does; a NaN ``y`` passes the gradient)."""
    t = ctype(y.dtype)
    if t is None or grad.dtype != y.dtype or grad.shape != y.shape:
        return None
    out = xp.empty(y.shape, dtype=y.dtype)
    n = out.size
    if n:
        args = (contiguous(xp, grad), contiguous(xp, y), out, rounded(threshold, y.dtype), i64(n))
        function(FAMILY.name, f"threshold_backward<{t}>")((blocks(n),), (BLOCK,), args)
    return out


def bias_activation(xp, x, bias, act, keep_pre=False):
    """``act(x + bias)`` with ``bias`` (cols,) broadcast over the rows of ``x`` (..., cols), in
    place on ``x`` (a fresh matrix product); returns ``(y, pre)`` (``pre``: the pre-activation,
    when ``keep_pre``, else None), or None."""
    t = ctype(x.dtype)
    if t is None or bias.dtype != x.dtype or bias.ndim != 1 or not x.ndim or x.shape[-1] != bias.shape[0]:
        return None
    if not x.flags.c_contiguous:
        x = xp.ascontiguousarray(x)
    pre = xp.empty_like(x) if keep_pre and act != "identity" else None
    n = x.size
    if n:
        args = (x, contiguous(xp, bias), pre, x, i64(n), i64(bias.shape[0]))
        function(FAMILY.name, f"bias_activation_forward<{t}, {ACT[act]}>")((blocks(n),), (BLOCK,), args)
    return x, (x if keep_pre and pre is None else pre)
