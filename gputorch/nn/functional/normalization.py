"""Normalization ops: batch_norm, layer_norm, group_norm, rms_norm, instance_norm.

Each normalization is one op (a graph node): its forward computes the statistics on the
backend arrays, accumulating float16 inputs in float32, and saves the input with the mean
and reciprocal standard deviation (``rstd``) it used. Backward is Tensor math on those:
with ``xhat = (x - mean) * rstd`` and ``gxhat`` the gradient reaching ``xhat``,

    dx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat))    (means over the reduced dims)

When backward itself is recorded (``create_graph=True``) the statistics are recomputed from
the saved input with differentiable Tensor ops, so the formula above is differentiated
through ``mean(x)`` and ``rstd(x)`` too (double backward, gradgradcheck).
"""
import numbers

import numpy as np

from ... import _dtype
from ..._dispatch import apply
from ..._tensor import Tensor
from ..._type_info import finfo
from ...autograd import grad_mode
from ...autograd.node import Node
from ...ops._common import quiet_errors, xp_of
from ...ops._gemm import GRADIENT_DTYPES
from ...ops.row_reductions import row_sum
from ...ops.normalization_stats import accumulated as _acc, record_affine as _record_affine, rstd as _rstd
from ...ops.normalization_stats import update_running as _update_running, wrap_like as _wrap

__all__ = ["batch_norm", "layer_norm", "group_norm", "rms_norm", "instance_norm"]

_GRAD_ENABLED = grad_mode.GRAD_ENABLED
_F16 = np.dtype(np.float16)
_HALF_TYPES = (_dtype.float16, _dtype.bfloat16)   # inputs that may come with float32 affine parameters
_F32 = np.dtype(np.float32)


# ---------------------------------------------------------------------------- shared helpers
def _acc_tensor(t):
    return t.float() if t is not None and t._data.dtype == _F16 else t


def _centered_moments(xp, x, axes):
    """``(mean, x - mean, sum of squares of x - mean)`` over ``axes``, keeping dims. Trailing axes
    (layer and group norm) are reduced as the rows of a 2-D view, by a row sum
    (``ops.row_reductions``) and an einsum dot product; other axes (batch norm) by the array
    library's sum."""
    k = len(axes)
    if axes == tuple(range(x.ndim - k, x.ndim)):
        n = _count(x.shape, axes)
        rows = _count(x.shape, range(x.ndim - k))
        x2 = x.reshape(rows, n)
        keep = x.shape[:x.ndim - k] + (1,) * k
        with quiet_errors():
            mean = row_sum(x2, 1) / n
            centered = x2 - mean
            sq_sum = xp.einsum("ij,ij->i", centered, centered)
        return mean.reshape(keep), centered.reshape(x.shape), sq_sum.reshape(keep)
    with quiet_errors():
        mean = x.sum(axis=axes, keepdims=True) / _count(x.shape, axes)
    centered = x - mean
    sq_sum = (centered * centered).sum(axis=axes, keepdims=True)
    return mean, centered, sq_sum


def _count(shape, axes):
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _normalized(x, mean, rstd, dims, eps):
    """``(xhat, rstd)`` as tensors: from the saved statistics, or, when backward is recorded,
    recomputed from ``x`` so that they carry its history."""
    if _GRAD_ENABLED.value and x._requires_grad:
        mean = x.mean(dims, keepdim=True)
        centered = x - mean
        rstd = ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()
        return centered * rstd, rstd
    return (x - mean) * rstd, rstd


def _normalized_grad(gxhat, xhat, rstd, dims):
    """dL/dx of ``xhat = (x - mean(x)) * rstd(x)`` (statistics over ``dims``) given dL/dxhat."""
    mean_g = gxhat.mean(dims, keepdim=True)
    mean_gx = (gxhat * xhat).mean(dims, keepdim=True)
    return (gxhat - mean_g - xhat * mean_gx) * rstd


def _affine(y, weight, bias, shape):
    """``y * weight + bias`` in place in ``y`` (a temporary of the caller's)."""
    if weight is not None:
        y *= _acc(weight._data).reshape(shape)
    if bias is not None:
        y += _acc(bias._data).reshape(shape)
    return y


def _param_grads(ctx, grad, xhat, dims, shape):
    """Gradients of the affine weight and bias (summed over ``dims``, reshaped to ``shape``)."""
    gw = gb = None
    if ctx.need_w:
        gw = grad * xhat
        gw = (gw.sum(dims) if dims else gw).reshape(shape)
    if ctx.need_b:
        gb = (grad.sum(dims) if dims else grad).reshape(shape)
    return gw, gb


def _grads_for_args(ctx, gx, gw, gb):
    """One gradient per tensor argument, in order (weight/bias only when they were given)."""
    out = [_cast_to(gx, ctx.dtypes[0])]
    if ctx.has_w:
        out.append(_cast_to(gw, ctx.dtypes[1]))
    if ctx.has_b:
        out.append(_cast_to(gb, ctx.dtypes[-1]))
    return tuple(out)


def _cast_to(g, dtype):
    return g if g is None or g._dtype is dtype else g.to(dtype)


def _check_dtypes(input, *params):
    for p in params:
        if p is None:
            continue
        if p._dtype is not input._dtype and not (input._dtype in _HALF_TYPES and p._dtype is _dtype.float32):
            raise RuntimeError(f"mixed dtype: all inputs must share the same dtype, but got input "
                               f"{input._dtype} and a parameter of {p._dtype}")


def _check_float(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"{name}(): expected a floating point input, but got {input._dtype}")


def norm_backward_kernel(xp, kind, grad, x, mean, rstd, weight, axes, needs):
    """The gradients ``(gx, gw, gb)`` of layer norm (``kind`` "layer") or RMS norm ("rms") as arrays
    (float16 accumulated in float32), from the saved input and statistics, for the flags
    ``needs = (input, weight, bias)``; None to use the Tensor-op backward (batch norm, other dtypes).
    Only consulted when backward is not itself recorded. A key of ``backend.overrides``: the CUDA
    backend replaces it with its kernels; everywhere else this array code runs, one pass per term
    instead of a dozen dispatched Tensor ops."""
    if kind == "batch" or x.dtype not in GRADIENT_DTYPES or grad.dtype != x.dtype:
        return None
    need_x, need_w, need_b = needs
    n = _count(x.shape, axes)          # the normalized dims are the trailing ones: rows of n
    rows = _count(x.shape, range(x.ndim - len(axes)))
    xa, g = _acc(x).reshape(rows, n), _acc(grad).reshape(rows, n)
    mean = None if mean is None else mean.reshape(rows, 1)
    rstd = rstd.reshape(rows, 1)
    einsum = xp.einsum
    gx = gw = gb = None
    with quiet_errors():
        xhat = (xa - mean) * rstd if kind == "layer" else xa * rstd
        if need_w:
            gw = einsum("ij,ij->j", g, xhat).reshape(x.shape[x.ndim - len(axes):])
        if need_b:
            gb = g.sum(axis=0).reshape(x.shape[x.ndim - len(axes):])
        if need_x:
            gxhat = g if weight is None else g * _acc(weight).reshape(1, n)
            dot = einsum("ij,ij->i", gxhat, xhat).reshape(rows, 1)
            dot /= n
            if kind == "layer":
                gx = gxhat - row_sum(gxhat, 1) / n
                gx -= xhat * dot
            else:
                gx = gxhat - xhat * dot
            gx *= rstd
            gx = gx.reshape(x.shape)
    return gx, gw, gb


def _kernel_backward(ctx, kind, grad, x, mean, rstd, weight):
    """The gradients from the backend's :func:`norm_backward_kernel` (or the array version above),
    or None."""
    if _GRAD_ENABLED.value:
        return None
    kernel = grad._device._backend.overrides.get(norm_backward_kernel, norm_backward_kernel)
    res = kernel(xp_of(grad), kind, grad._data, x._data, None if mean is None else mean._data, rstd._data,
                 None if weight is None else weight._data, ctx.axes, (ctx.needs_input_grad[0], ctx.need_w, ctx.need_b))
    if res is None:
        return None
    gx, gw, gb = (None if a is None else _wrap(a, grad) for a in res)
    return _grads_for_args(ctx, gx, gw, gb)


# ---------------------------------------------------------------------------- batch norm
class NativeBatchNormBackward0(Node):
    """Batch normalization over every dim but 1 (the channels); updates the running stats."""

    output_follows_input = True   # a float16/bfloat16 input with float32 parameters stays float16/bfloat16
    updates_operands = True   # the running statistics, in place

    def forward(ctx, input, weight, bias, running_mean, running_var, training, momentum, eps):
        xp = xp_of(input)
        x = _acc(input._data)
        channels = x.shape[1]
        axes = (0,) + tuple(range(2, x.ndim))
        shape = (1, channels) + (1,) * (x.ndim - 2)
        if training:
            mean, centered, sq_sum = _centered_moments(xp, x, axes)
            n = _count(x.shape, axes)
            with quiet_errors():
                rstd = _rstd(xp, sq_sum / n, eps)
            if running_mean is not None and n > 0:
                _update_running(running_mean, mean, momentum)
            if running_var is not None and n > 0:
                with quiet_errors():
                    _update_running(running_var, sq_sum / (n - 1), momentum)
        else:
            mean = _acc(running_mean._data).reshape(shape).copy()
            rstd = _rstd(xp, _acc(running_var._data).reshape(shape), eps)
            centered = x - mean
        y = _affine(centered * rstd, weight, bias, shape)
        ctx.training, ctx.eps, ctx.axes, ctx.shape = training, eps, axes, shape
        _record_affine(ctx, input, weight, bias)
        ctx.save_for_backward(input, weight, _wrap(mean, input), _wrap(rstd, input))
        return y.astype(input._data.dtype, copy=False)

    def backward(ctx, grad):
        x, weight, mean, rstd = ctx.saved_values
        if ctx.training:
            fused = _kernel_backward(ctx, "batch", grad, x, mean, rstd, weight)
            if fused is not None:
                return fused
        xa, g = _acc_tensor(x), _acc_tensor(grad)
        dims = list(ctx.axes)
        if ctx.training:
            xhat, rstd = _normalized(xa, mean, rstd, dims, ctx.eps)
        else:
            xhat = (xa - mean) * rstd
        gx = None
        if ctx.needs_input_grad[0]:
            gxhat = g if weight is None else g * _acc_tensor(weight).reshape(ctx.shape)
            gx = _normalized_grad(gxhat, xhat, rstd, dims) if ctx.training else gxhat * rstd
        gw, gb = _param_grads(ctx, g, xhat, dims, (-1,))
        return _grads_for_args(ctx, gx, gw, gb)


def _verify_batch_size(size):
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    """Batch normalization over the channel dim 1 of ``input`` ``(N, C, *)``.

    In training (or when no running stats are given) the batch statistics are used and
    ``running_mean``/``running_var`` (when given) are updated in place with ``momentum``
    (the variance update uses the unbiased batch variance, as PyTorch does).
    """
    _check_float("batch_norm", input)
    if input._data.ndim < 2:
        input._wrap_dim(1)  # PyTorch's IndexError for 0-d/1-d input
    if training:
        _verify_batch_size(input.shape)
    return batch_norm_unchecked(input, running_mean, running_var, weight, bias, training, momentum, eps)


def batch_norm_unchecked(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
                         eps=1e-5):
    """:func:`batch_norm` without its check of one value per channel in training (``torch.batch_norm``,
    the ATen function, has none: the variance of one value is 0 and the output is the bias)."""
    _check_float("batch_norm", input)
    if input._data.ndim < 2:
        input._wrap_dim(1)
    if not training and (running_mean is None or running_var is None):
        if running_mean is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        raise RuntimeError("running_var must be defined in evaluation mode")
    channels = input._data.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t._data.size != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t._data.size}")
    _check_dtypes(input, weight, bias)
    return apply(NativeBatchNormBackward0, input, weight, bias, running_mean, running_var,
                 bool(training), float(momentum if momentum is not None else 0.0), float(eps))


# ---------------------------------------------------------------------------- layer norm
class NativeLayerNormBackward0(Node):
    """Normalization over the last ``len(normalized_shape)`` dims, with elementwise affine."""

    output_follows_input = True   # a float16/bfloat16 input with float32 parameters stays float16/bfloat16

    def forward(ctx, input, weight, bias, ndims, eps):
        xp = xp_of(input)
        x = _acc(input._data)
        axes = tuple(range(x.ndim - ndims, x.ndim))
        n = _count(x.shape, axes)
        mean, centered, sq_sum = _centered_moments(xp, x, axes)
        with quiet_errors():
            rstd = _rstd(xp, sq_sum / n, eps)
        centered *= rstd
        y = _affine(centered, weight, bias, x.shape[x.ndim - ndims:])
        ctx.eps, ctx.axes = eps, axes
        _record_affine(ctx, input, weight, bias)
        ctx.save_for_backward(input, weight, _wrap(mean, input), _wrap(rstd, input))
        return y.astype(input._data.dtype, copy=False)

    def backward(ctx, grad):
        x, weight, mean, rstd = ctx.saved_values
        fused = _kernel_backward(ctx, "layer", grad, x, mean, rstd, weight)
        if fused is not None:
            return fused
        xa, g = _acc_tensor(x), _acc_tensor(grad)
        dims = list(ctx.axes)
        xhat, rstd = _normalized(xa, mean, rstd, dims, ctx.eps)
        gx = None
        if ctx.needs_input_grad[0]:
            gxhat = g if weight is None else g * _acc_tensor(weight)
            gx = _normalized_grad(gxhat, xhat, rstd, dims)
        lead = list(range(x._data.ndim - len(dims)))
        shape = x._data.shape[len(lead):]
        gw, gb = _param_grads(ctx, g, xhat, lead, shape)
        return _grads_for_args(ctx, gx, gw, gb)


def _normalized_shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(s) for s in normalized_shape)


def _check_normalized_shape(input, shape, star):
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                           f"least one element, but got normalized_shape = {list(shape)}")
    k = len(shape)
    if input._data.ndim < k or tuple(input._data.shape[-k:]) != shape:
        shown = ", ".join(str(s) for s in shape)
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [{star}{shown}], "
                           f"but got input of size{list(input.shape)}")


def _check_param_shape(name, param, shape):
    if param is not None and tuple(param._data.shape) != shape:
        raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                           f"{list(param.shape)} and normalized_shape = {list(shape)}")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalization over the trailing dims given by ``normalized_shape``."""
    _check_float("layer_norm", input)
    shape = _normalized_shape(normalized_shape)
    _check_normalized_shape(input, shape, "*, ")
    _check_param_shape("weight", weight, shape)
    _check_param_shape("bias", bias, shape)
    _check_dtypes(input, weight, bias)
    return apply(NativeLayerNormBackward0, input, weight, bias, len(shape), float(eps))


# ---------------------------------------------------------------------------- group norm
class NativeGroupNormBackward0(Node):
    """Normalization over groups of channels (and all spatial dims) of ``(N, C, *)``."""

    output_follows_input = True   # a float16/bfloat16 input with float32 parameters stays float16/bfloat16

    def forward(ctx, input, weight, bias, num_groups, eps):
        xp = xp_of(input)
        x = _acc(input._data)
        n_batch, channels = x.shape[0], x.shape[1]
        grouped = x.reshape(n_batch, num_groups, -1)
        mean, centered, sq_sum = _centered_moments(xp, grouped, (2,))
        with quiet_errors():
            rstd = _rstd(xp, sq_sum / grouped.shape[2], eps)
        shape = (1, channels) + (1,) * (x.ndim - 2)
        y = _affine((centered * rstd).reshape(x.shape), weight, bias, shape)
        ctx.eps, ctx.groups, ctx.shape = eps, num_groups, shape
        _record_affine(ctx, input, weight, bias)
        ctx.save_for_backward(input, weight, _wrap(mean, input), _wrap(rstd, input))
        return y.astype(input._data.dtype, copy=False)

    def backward(ctx, grad):
        x, weight, mean, rstd = ctx.saved_values
        xa, g = _acc_tensor(x), _acc_tensor(grad)
        full = x._data.shape
        grouped = (full[0], ctx.groups, -1)
        xhat, rstd = _normalized(xa.reshape(grouped), mean, rstd, [2], ctx.eps)
        gx = None
        if ctx.needs_input_grad[0]:
            gxhat = g if weight is None else g * _acc_tensor(weight).reshape(ctx.shape)
            gx = _normalized_grad(gxhat.reshape(grouped), xhat, rstd, [2]).reshape(full)
        dims = [0] + list(range(2, len(full)))
        gw, gb = _param_grads(ctx, g, xhat.reshape(full), dims, (-1,))
        return _grads_for_args(ctx, gx, gw, gb)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalization of ``(N, C, *)``: channels split into ``num_groups`` groups."""
    _check_float("group_norm", input)
    if input._data.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input._data.ndim}")
    shape = input._data.shape
    channels = shape[1]
    if num_groups > 0:   # PyTorch's functional checks the batch before the group count
        _verify_batch_size([shape[0] * channels // num_groups, num_groups, *shape[2:]])
    if num_groups <= 0 or channels % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {list(shape)} and num_groups={num_groups}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p._data.ndim != 1 or p._data.shape[0] != channels):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in "
                               f"input, but got {name} of shape {list(p.shape)} and input of shape {list(shape)}")
    _check_dtypes(input, weight, bias)
    return apply(NativeGroupNormBackward0, input, weight, bias, int(num_groups), float(eps))


# ---------------------------------------------------------------------------- RMS norm
class FusedRmsNormBackward0(Node):
    """Root-mean-square normalization over the last ``ndims`` dims, with elementwise scale."""

    output_follows_input = True   # a float16/bfloat16 input with float32 parameters stays float16/bfloat16

    def forward(ctx, input, weight, ndims, eps):
        xp = xp_of(input)
        x = _acc(input._data)
        axes = tuple(range(x.ndim - ndims, x.ndim))
        rstd = _rstd(xp, (x * x).mean(axis=axes, keepdims=True), eps)
        y = x * rstd
        if weight is not None:
            y = y * _acc(weight._data)
        ctx.eps, ctx.axes = eps, axes
        _record_affine(ctx, input, weight, None)
        ctx.save_for_backward(input, weight, _wrap(rstd, input))
        return y.astype(input._data.dtype, copy=False)

    def backward(ctx, grad):
        x, weight, rstd = ctx.saved_values
        fused = _kernel_backward(ctx, "rms", grad, x, None, rstd, weight)
        if fused is not None:
            return fused
        xa, g = _acc_tensor(x), _acc_tensor(grad)
        dims = list(ctx.axes)
        if _GRAD_ENABLED.value and xa._requires_grad:
            rstd = ((xa * xa).mean(dims, keepdim=True) + ctx.eps).rsqrt()
        xhat = xa * rstd
        gx = gw = None
        if ctx.needs_input_grad[0]:
            gxhat = g if weight is None else g * _acc_tensor(weight)
            gx = (gxhat - xhat * (gxhat * xhat).mean(dims, keepdim=True)) * rstd
        if ctx.need_w:
            lead = list(range(x._data.ndim - len(dims)))
            gw = (g * xhat).sum(lead) if lead else g * xhat
        return _grads_for_args(ctx, gx, gw, None)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``input / sqrt(mean(input**2) + eps) * weight`` over the trailing ``normalized_shape`` dims.

    ``eps=None`` uses the machine epsilon of the computation dtype (float32 for float16 and bfloat16
    input)."""
    _check_float("rms_norm", input)
    shape = _normalized_shape(normalized_shape)
    _check_normalized_shape(input, shape, "*")
    _check_param_shape("weight", weight, shape)
    _check_dtypes(input, weight)
    if eps is None:
        eps = finfo(_dtype.float32 if input._dtype in _HALF_TYPES else input._dtype).eps
    return apply(FusedRmsNormBackward0, input, weight, len(shape), float(eps))


# ---------------------------------------------------------------------------- instance norm
def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalization of each channel of each sample over its spatial dims ``(N, C, *)``.

    Computed as batch_norm on the input viewed as ``(1, N*C, *)``; the running stats (when
    given) are updated with the mean over the batch of the per-instance statistics."""
    _check_float("instance_norm", input)
    if use_input_stats:
        shape = input.shape
        n = 1
        for s in shape[2:]:
            n *= s
        if n == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {shape}")
    shape = input._data.shape
    n_batch, channels = shape[0], shape[1]
    folded = input.reshape((1, n_batch * channels) + tuple(shape[2:]))
    w = None if weight is None else weight.repeat(n_batch)
    b = None if bias is None else bias.repeat(n_batch)
    rm = None if running_mean is None else running_mean.repeat(n_batch)
    rv = None if running_var is None else running_var.repeat(n_batch)
    out = batch_norm(folded, rm, rv, w, b, use_input_stats, momentum, eps)
    if use_input_stats:
        for stat, folded_stat in ((running_mean, rm), (running_var, rv)):
            if stat is not None:
                stat._data[...] = folded_stat._data.reshape(n_batch, channels).mean(axis=0).astype(
                    stat._data.dtype, copy=False)
                stat._vc[0] += 1
    return out.reshape(shape)
