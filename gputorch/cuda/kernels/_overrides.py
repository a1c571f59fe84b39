"""The CUDA backend's kernel overrides: op forwards (keyed by the op's graph-node class) and the
optimizers' array-level updates that run as hand-written kernels.

Each kernel forward replaces the node's generic ``forward(ctx, ...)`` and keeps its contract:
the same result (within float rounding), the same attributes and saved tensors on ``ctx`` that
the node's ``backward`` reads. It returns ``NotImplemented`` for inputs the kernels do not take
(other dtypes, mixed dtypes, empty inputs where the generic path is simpler), and the generic
forward runs instead.

Nodes are named by module and class name and looked up among the modules already imported
(``backends.specialised_ops``: the kernel layer never imports nn or optim), so that an op missing
from this checkout is skipped rather than breaking the backend.
"""
import functools
from ...backends.specialised_ops import loaded_op
from ...ops import class_targets, normalization_stats as stats, window_geometry as geometry
from ...ops._common import quiet_errors, xp_of
from ...ops.index_counts import index_counts
from ...ops._gemm import product
from ...ops.philox_dropout import philox_dropout as generic_philox_dropout
from . import (activations, amp, cross_entropy, dropout, embedding, im2col, normalization, optimizers, pooling,
               reductions, softmax)
from ._launch import ctype

_TABLE = []     # (module, class or function name, kernel forward, whether it takes ``generic=``)


def kernel_forward(module, name, *, takes_generic=False):
    """Register ``fn`` as the kernel forward of ``module.name``; with ``takes_generic`` the
    function replacing an array-level function gets that function as ``generic=`` (for the
    arrays its kernel declines)."""
    def deco(fn):
        _TABLE.append((module, name, fn, takes_generic))
        return fn
    return deco


def _with_fallback(fn, generic):
    def forward(ctx, *args, **params):
        out = fn(ctx, *args, **params)
        if out is NotImplemented:
            return generic(ctx, *args, **params)
        return out
    forward.__name__ = fn.__name__
    forward.__qualname__ = f"kernel:{fn.__name__}"
    forward.__doc__ = fn.__doc__
    forward.kernel = fn
    forward.generic = generic
    return forward


def overrides():
    """``{node class or update function: replacement}`` for every op found in this checkout."""
    table = {}
    for module, name, fn, takes_generic in _TABLE:
        target = loaded_op(module, name)
        if target is None:
            continue
        if isinstance(target, type):
            table[target] = _with_fallback(fn, target.forward)
        else:
            table[target] = functools.partial(fn, generic=target) if takes_generic else fn
    return table


def _same_dtype(*arrays):
    first = arrays[0].dtype
    return ctype(first) is not None and all(a.dtype == first for a in arrays)


# ================================================================ activations
_ACT = "gputorch.ops.pointwise.activations"
_TRIG = "gputorch.ops.pointwise.trig"
_NN_ACT = "gputorch.nn.functional.activation"
_ACT_BACKWARD = "gputorch.ops.activation_backward"


def _unary(act):
    def forward(ctx, a):
        out = activations.forward(xp_of(a), a._data, act)
        return NotImplemented if out is None else out
    forward.__name__ = f"{act}_forward"
    return forward


kernel_forward(_ACT, "ReluBackward0")(_unary("relu"))
kernel_forward(_ACT, "SigmoidBackward0")(_unary("sigmoid"))
kernel_forward(_TRIG, "TanhBackward0")(_unary("tanh"))


@kernel_forward(_NN_ACT, "GeluBackward0")
def gelu_forward(ctx, a, approximate):
    out = activations.forward(xp_of(a), a._data, "gelu_tanh" if approximate == "tanh" else "gelu")
    if out is None:
        return NotImplemented
    ctx.save_for_backward(a)
    ctx.approximate = approximate
    ctx.saves_result = False    # the fused gradient kernel recomputes erf from the input
    return out


@kernel_forward(_NN_ACT, "SiluBackward0")
def silu_forward(ctx, a):
    out = activations.forward(xp_of(a), a._data, "silu")
    if out is None:
        return NotImplemented
    ctx.save_for_backward(a)
    return out


def _output_grad(act):
    def forward(ctx, grad, y):
        out = activations.output_backward(xp_of(y), grad._data, y._data, act)
        if out is None:
            return NotImplemented
        ctx.save_for_backward(grad, y)
        return out
    forward.__name__ = f"{act}_backward"
    return forward


kernel_forward(_ACT_BACKWARD, "TanhBackwardBackward0")(_output_grad("tanh"))
kernel_forward(_ACT_BACKWARD, "SigmoidBackwardBackward0")(_output_grad("sigmoid"))


@kernel_forward(_ACT_BACKWARD, "ThresholdBackwardBackward0")
def threshold_backward(ctx, grad, y, threshold):
    out = activations.threshold_backward(xp_of(y), grad._data, y._data, threshold)
    if out is None:
        return NotImplemented
    ctx.save_for_backward(y)
    ctx.threshold = threshold
    return out


def _input_grad(act_of):
    """Gradient ops of the activations differentiated at their input (``GeluBackwardBackward0``,
    ``SiluBackwardBackward0``, when the checkout has them): forward(ctx, grad, x, *params)."""
    def forward(ctx, grad, x, *params):
        out = activations.input_backward(xp_of(x), grad._data, x._data, act_of(*params))
        if out is None:
            return NotImplemented
        ctx.save_for_backward(grad, x)
        if params:
            ctx.approximate = params[0]
        return out
    return forward


kernel_forward(_ACT_BACKWARD, "GeluBackwardBackward0")(
    _input_grad(lambda approximate="none": "gelu_tanh" if approximate == "tanh" else "gelu"))
kernel_forward(_ACT_BACKWARD, "SiluBackwardBackward0")(_input_grad(lambda: "silu"))


# ================================================================ linear
@kernel_forward("gputorch.nn.functional.linear", "LinearBackward0")
def linear_forward(ctx, x, w, b=None):
    """``x @ w.T`` through the array module (cuBLAS), then the bias added in place by the
    bias + activation kernel with the identity activation: every ``nn.Linear`` with a bias."""
    if b is None or b._data.ndim != 1 or w._data.ndim != 2 or not _same_dtype(x._data, w._data, b._data):
        return NotImplemented
    fused = activations.bias_activation(xp_of(x), product(x._data, w._data.T), b._data, "identity")
    if fused is None:
        return NotImplemented
    ctx.bias_shape = b._data.shape
    ctx.save_for_backward(x, w)
    return fused[0]


# ================================================================ softmax
def _softmax(log):
    def forward(ctx, a, dim):
        out = softmax.forward(xp_of(a), a._data, dim, log)
        if out is None:
            return NotImplemented
        ctx.dim = dim
        return out
    forward.__name__ = "log_softmax_forward" if log else "softmax_forward"
    return forward


kernel_forward(_NN_ACT, "SoftmaxBackward0")(_softmax(False))
kernel_forward(_NN_ACT, "LogSoftmaxBackward0")(_softmax(True))


def _softmax_grad(log):
    """``SoftmaxBackwardDataBackward0`` / ``LogSoftmaxBackwardDataBackward0`` (when the checkout
    has them): forward(ctx, grad, y, dim)."""
    def forward(ctx, grad, y, dim):
        out = softmax.backward(xp_of(y), grad._data, y._data, dim, log)
        if out is None:
            return NotImplemented
        ctx.save_for_backward(grad, y)
        ctx.dim = dim
        return out
    return forward


kernel_forward(_ACT_BACKWARD, "SoftmaxBackwardDataBackward0")(_softmax_grad(False))
kernel_forward(_ACT_BACKWARD, "LogSoftmaxBackwardDataBackward0")(_softmax_grad(True))


# ================================================================ cross entropy
@kernel_forward("gputorch.nn.functional.loss", "CrossEntropyLossBackward0")
def cross_entropy_forward(ctx, input, target, weight, reduction, ignore_index, label_smoothing):
    """The fused cross entropy: one kernel computes the log-probabilities (kept for backward only
    when a graph is recorded), the target log-probabilities and the smoothing sums; the rest is
    the generic path's bookkeeping on one value per sample."""
    from ..._tensor import Tensor
    x = input._data
    if (ctype(x.dtype) is None or x.size == 0
            or (weight is not None and weight._data.dtype != x.dtype)):
        return NotImplemented
    xp = xp_of(input)
    cax = 0 if x.ndim == 1 else 1
    classes = x.shape[cax]
    t = target._data
    if x.ndim == 1:
        t = t.reshape(())
    if t.dtype != xp.int64:
        t = t.astype(xp.int64)
    safe, valid = class_targets.checked_targets(xp, t, classes, ignore_index)
    wdata = None if weight is None else weight._data
    logp, picked, smooth = cross_entropy.forward(xp, x, safe, wdata, bool(ctx.needs_input_grad))
    ctx.reduction, ctx.smoothing = reduction, label_smoothing
    with quiet_errors():
        w = None
        if wdata is not None:
            w = wdata[safe]
            if valid is not None:
                w = w * valid
            loss = -(picked * w)
        else:
            loss = -picked
            if valid is not None:
                w = valid.astype(x.dtype)
        if valid is not None:
            loss = xp.where(valid, loss, 0).astype(x.dtype, copy=False)
        ctx.cax, ctx.safe, ctx.valid, ctx.w = cax, safe, valid, w
        ctx.class_weight = wdata
        ctx.total_weight = loss.size if w is None else class_targets.total(w)
        out = class_targets.reduce_terms(loss, ctx.total_weight, reduction)
        if label_smoothing > 0:
            term = -smooth
            if valid is not None:
                term = xp.where(valid, term, 0).astype(x.dtype, copy=False)
            out = (1 - label_smoothing) * out + class_targets.reduce_terms(term, ctx.total_weight, reduction) * (
                label_smoothing / classes)
    if ctx.needs_input_grad:
        ctx.save_for_backward(Tensor._make(logp, input._device))
    return xp.asarray(out).astype(x.dtype, copy=False)


@kernel_forward("gputorch.nn.functional.loss", "cross_entropy_grad_kernel")
def cross_entropy_grad(xp, ctx, logp, grad_output):
    """Cross entropy's input gradient in one elementwise kernel: the weighted, smoothed target
    distribution and the reduction's scale enter as three coefficients per sample."""
    import numpy as np
    if ctype(logp.dtype) is None or logp.size == 0:
        return None
    acc = np.float64 if logp.dtype == np.float64 else np.float32
    rows = ctx.safe.shape
    classes = logp.shape[ctx.cax]
    ls = ctx.smoothing
    with quiet_errors():
        w = xp.ones(rows, acc) if ctx.w is None else ctx.w.astype(acc)
        valid = None if ctx.valid is None else ctx.valid.astype(acc)
        if ctx.reduction == "mean":
            scale = xp.true_divide(acc(1), xp.asarray(ctx.total_weight, dtype=acc))
            if valid is not None:
                scale = xp.where(ctx.valid, scale, acc(0))
        else:
            scale = acc(1)
        f = xp.broadcast_to(scale * grad_output.astype(acc), rows)
        if ls > 0:
            spread = ls / classes
            weight_sum = classes if ctx.class_weight is None else ctx.class_weight.astype(acc).sum()
            smooth = spread * (f if valid is None else valid * f)
            a = ((1 - ls) * w + (spread * weight_sum if valid is None else spread * weight_sum * valid)) * f
            b = (1 - ls) * w * f
        else:
            smooth = None
            a = w * f
            b = a
    return cross_entropy.backward(xp, logp, ctx.safe, ctx.class_weight, a, b, smooth)


# ================================================================ normalization
_NORM = "gputorch.nn.functional.normalization"


@kernel_forward(_NORM, "NativeLayerNormBackward0")
def layer_norm_forward(ctx, input, weight, bias, ndims, eps):
    x = input._data
    res = normalization.rows_forward(xp_of(input), x, ndims, None if weight is None else weight._data,
                                     None if bias is None else bias._data, eps, rms=False)
    if res is None:
        return NotImplemented
    y, mean, rstd = res
    ctx.eps, ctx.axes = eps, tuple(range(x.ndim - ndims, x.ndim))
    stats.record_affine(ctx, input, weight, bias)
    ctx.save_for_backward(input, weight, stats.wrap_like(mean, input), stats.wrap_like(rstd, input))
    return y


@kernel_forward(_NORM, "FusedRmsNormBackward0")
def rms_norm_forward(ctx, input, weight, ndims, eps):
    x = input._data
    res = normalization.rows_forward(xp_of(input), x, ndims, None if weight is None else weight._data, None, eps,
                                     rms=True)
    if res is None:
        return NotImplemented
    y, _, rstd = res
    ctx.eps, ctx.axes = eps, tuple(range(x.ndim - ndims, x.ndim))
    stats.record_affine(ctx, input, weight, None)
    ctx.save_for_backward(input, weight, stats.wrap_like(rstd, input))
    return y


@kernel_forward(_NORM, "NativeBatchNormBackward0")
def batch_norm_forward(ctx, input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Batch statistics in one kernel (Welford per channel), normalization with the affine
    parameters in another; running statistics updated as the generic path does."""
    x = input._data
    if ctype(x.dtype) is None or x.ndim < 2:
        return NotImplemented
    xp = xp_of(input)
    channels = x.shape[1]
    shape = (1, channels) + (1,) * (x.ndim - 2)
    if training:
        mean, m2 = normalization.batch_stats(xp, x)
        n = x.size // channels if channels else 0
        with quiet_errors():
            rstd = stats.rstd(xp, m2 / n, eps)
            if running_mean is not None and n > 0:
                stats.update_running(running_mean, mean.reshape(shape), momentum)
            if running_var is not None and n > 0:
                stats.update_running(running_var, m2.reshape(shape) / (n - 1), momentum)
    else:
        mean = stats.accumulated(running_mean._data).reshape(-1).copy()
        rstd = stats.rstd(xp, stats.accumulated(running_var._data).reshape(-1), eps)
    y = normalization.channel_affine(xp, x, mean, rstd, None if weight is None else weight._data,
                                     None if bias is None else bias._data)
    ctx.training, ctx.eps, ctx.axes, ctx.shape = training, eps, (0,) + tuple(range(2, x.ndim)), shape
    stats.record_affine(ctx, input, weight, bias)
    ctx.save_for_backward(input, weight, stats.wrap_like(mean.reshape(shape), input),
                          stats.wrap_like(rstd.reshape(shape), input))
    return y


@kernel_forward(_NORM, "norm_backward_kernel")
def norm_backward(xp, kind, grad, x, mean, rstd, weight, axes, needs):
    """Layer/RMS/batch norm gradients: one row (or channel) reduction and one elementwise pass
    for the input, column sums for the affine parameters."""
    need_x, need_w, need_b = needs
    if kind == "batch":
        return normalization.batch_backward(xp, grad, x, mean, rstd, weight, need_x, need_w, need_b)
    return normalization.rows_backward(xp, grad, x, mean, rstd, weight, len(axes), kind == "rms", need_x, need_w,
                                       need_b)


# ================================================================ convolution
_CONV = "gputorch.nn.functional.conv"


@kernel_forward(_CONV, "ConvolutionBackward0")
def convolution_forward(ctx, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """A convolution as im2col (one kernel launch) and a batched matrix product (cuBLAS); the
    transposed convolution as a matrix product and col2im."""
    if not _same_dtype(input._data, weight._data) or (bias is not None and bias._data.dtype != input._data.dtype):
        return NotImplemented
    xp = xp_of(input)
    x, w = geometry.as_4d(input._data), geometry.as_4d(weight._data)
    if transposed:
        out_hw = geometry.transposed_conv_out_hw(x.shape, w.shape, stride, padding, dilation, output_padding)
        y = im2col.conv_input_grad(xp, x, w, (x.shape[0], w.shape[1] * groups) + out_hw, stride, padding, dilation,
                                   groups)
    else:
        y = im2col.conv_forward(xp, x, w, stride, padding, dilation, groups,
                                geometry.conv_out_hw(x.shape, w.shape, stride, padding, dilation))
    if bias is not None:
        y += bias._data.reshape(-1, 1, 1)
    ctx.save_for_backward(input, weight)
    ctx.has_bias = bias is not None
    ctx.params = (stride, padding, dilation, transposed, output_padding, groups)
    return geometry.as_nd(y, input._data.ndim)


@kernel_forward(_CONV, "ConvolutionBackwardBackward0")
def convolution_backward(ctx, grad_output, input, weight, stride, padding, dilation, transposed, output_padding,
                         groups, output_mask):
    if not _same_dtype(grad_output._data, input._data, weight._data):
        return NotImplemented
    xp = xp_of(input)
    ndim = input._data.ndim
    g, x, w = geometry.as_4d(grad_output._data), geometry.as_4d(input._data), geometry.as_4d(weight._data)
    outs = []
    if output_mask[0]:
        if transposed:
            gi = im2col.conv_forward(xp, g, w, stride, padding, dilation, groups, x.shape[2:])
        else:
            gi = im2col.conv_input_grad(xp, g, w, x.shape, stride, padding, dilation, groups)
        outs.append(geometry.as_nd(gi, ndim))
    if output_mask[1]:
        if transposed:
            gw = im2col.conv_weight_grad(xp, g, x, w.shape, stride, padding, dilation, groups)
        else:
            gw = im2col.conv_weight_grad(xp, x, g, w.shape, stride, padding, dilation, groups)
        outs.append(geometry.as_nd(gw, ndim))
    if output_mask[2]:
        outs.append(g.sum(axis=(0, 2, 3)))
    ctx.save_for_backward(grad_output, input, weight)
    ctx.params = (stride, padding, dilation, transposed, output_padding, groups)
    ctx.output_mask = output_mask
    return tuple(outs)


# ================================================================ pooling
_POOL = "gputorch.nn.functional.pooling"


@kernel_forward(_POOL, "MaxPool2DWithIndicesBackward0")
def max_pool2d_forward(ctx, input, kernel, stride, padding, dilation, out_hw, return_indices):
    res = pooling.max_pool2d(xp_of(input), input._data, kernel, stride, padding, dilation, out_hw)
    if res is None:
        return NotImplemented
    out, indices = res
    need = bool(ctx.needs_input_grad)
    if not (need or return_indices):
        return out
    if need:
        ctx.save_for_backward(input)
        ctx.geometry = (kernel, stride, padding, dilation)
        ctx.taps, ctx.indices = None, indices      # the backward kernel works from the indices
    return out, indices


@kernel_forward(_POOL, "MaxPool2DWithIndicesBackwardBackward0")
def max_pool2d_backward(ctx, grad_output, input, indices, kernel, stride, padding, dilation, taps=None):
    gx = pooling.max_pool2d_backward(xp_of(grad_output), grad_output._data, indices._data, input._data.shape, kernel,
                                     stride, padding, dilation)
    if gx is None:
        return NotImplemented
    ctx.save_for_backward(indices)
    return gx


@kernel_forward(_POOL, "AvgPool2DBackward0")
def avg_pool2d_forward(ctx, input, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override, out_hw):
    out = pooling.avg_pool2d(xp_of(input), input._data, kernel, stride, padding, out_hw, count_include_pad,
                             divisor_override)
    if out is None:
        return NotImplemented
    ctx.params = (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
    ctx.save_for_backward(input)
    return out


@kernel_forward(_POOL, "AvgPool2DBackwardBackward0")
def avg_pool2d_backward(ctx, grad_output, input, kernel, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    gx = pooling.avg_pool2d_backward(xp_of(grad_output), grad_output._data, input._data.shape, kernel, stride,
                                     padding, count_include_pad, divisor_override)
    if gx is None:
        return NotImplemented
    ctx.params = (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
    ctx.out_hw = grad_output._data.shape[-2:]
    return gx


# ================================================================ embedding
@kernel_forward("gputorch.nn.functional.sparse", "EmbeddingDenseBackward0")
def embedding_dense_backward(ctx, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The weight gradient by atomic scatter-add of the output gradient's rows."""
    g = grad._data
    if ctype(g.dtype) is None or not g.ndim:
        return NotImplemented
    xp = xp_of(grad)
    idx = indices._data.reshape(-1)
    counts = index_counts(xp, idx, num_weights) if scale_grad_by_freq and idx.size else None
    out = embedding.embedding_backward(xp, g, idx, num_weights, padding_idx, counts)
    ctx.save_for_backward(indices)
    ctx.padding_idx, ctx.scale = padding_idx, scale_grad_by_freq
    return out


# ================================================================ dropout
@kernel_forward("gputorch.ops.philox_dropout", "philox_dropout")
def philox_dropout(xp, x, p, seed, offset):
    """The fused dropout's mask from the Philox stream at ``(seed, offset)``, in one kernel."""
    out = dropout.dropout(xp, x, p, seed, offset)
    return generic_philox_dropout(xp, x, p, seed, offset) if out is None else out


# ================================================================ gradient norms
@kernel_forward("gputorch.nn.utils.clip_grad", "sum_of_squares_kernel")
def sum_of_squares(xp, arrays):
    """The squares of every gradient summed in one multi-tensor launch. Gradients of mixed dtypes
    go the generic way (per-tensor norms in each tensor's own dtype, then promoted)."""
    if not arrays or any(a.dtype != arrays[0].dtype for a in arrays):
        return None
    return reductions.total_sum_of_squares(xp, arrays)


# ================================================================ optimizers
kernel_forward("gputorch.optim.sgd", "sgd_update", takes_generic=True)(optimizers.multi_tensor_sgd)
kernel_forward("gputorch.optim.adam", "adam_update", takes_generic=True)(optimizers.multi_tensor_adam)


# ================================================================ mixed precision
kernel_forward("gputorch.amp.grad_scaler", "non_finite_check_and_unscale", takes_generic=True)(
    amp.non_finite_check_and_unscale)
