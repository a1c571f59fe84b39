"""Convolutions: conv1d/2d/3d, conv_transpose1d/2d/3d.

All six are one op, :class:`ConvolutionBackward0` (PyTorch's ``convolution``: a
``transposed`` flag picks the direction), computed on ``(N, C, *spatial)`` arrays by
``_windows``: im2col, then one matrix product per sample and group, so the output
comes out in NC... order. 1-D convolutions run as 2-D ones with a height of 1.
3-D convolutions run the same generic code under the subclasses
:class:`Convolution3DBackward0` / :class:`Convolution3DBackwardBackward0`, so that a
backend's 2-D specialisations (keyed by node class) are not handed 5-D arrays.

The backward is :class:`ConvolutionBackwardBackward0`, one op that returns the
requested input/weight/bias gradients (col2im of ``weight^T @ grad``, and
``grad @ columns^T``). Its own backward is written with these two ops again, so
convolutions are differentiable any number of times. A backend overrides either
op's forward (e.g. with im2col/col2im kernels) without touching the autograd.
"""
import operator

from ..._dispatch import apply
from ...amp.autocast_mode import autocast_function
from ..._tensor import Tensor
from ...autograd.node import Node
from ...ops._common import xp_of
from ...ops.window_geometry import as_4d as _as_4d, as_nd as _as_nd
from . import _windows

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]


# ---------------------------------------------------------------- the ops
class ConvolutionBackward0(Node):
    """``convolution(input, weight, bias, ...)``: a convolution, or with ``transposed`` its adjoint.

    Parameters have one entry per spatial dim (2 or 3): ``stride``/``dilation``/``output_padding``
    tuples and ``padding`` as ``((before, after), ...)``; 3-D arrays (1-D convolutions) get a
    height of 1.
    """

    def forward(ctx, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
        xp = xp_of(input)
        ctx.save_for_backward(input, weight)
        ctx.has_bias = bias is not None
        ctx.params = (stride, padding, dilation, transposed, output_padding, groups)
        x, w = _as_4d(input._data), _as_4d(weight._data)
        if transposed:
            out_shape = _windows.transposed_conv_out_shape(x.shape, w.shape, stride, padding, dilation,
                                                           output_padding)
            y_shape = (x.shape[0], w.shape[1] * groups) + out_shape
            y = _windows.conv_input_grad(xp, x, w, y_shape, stride, padding, dilation, groups)
        else:
            out_shape = _windows.conv_out_shape(x.shape, w.shape, stride, padding, dilation)
            y = _windows.conv_forward(xp, x, w, stride, padding, dilation, groups, out_shape)
        if bias is not None:
            y += bias._data.reshape((-1,) + (1,) * (y.ndim - 2))
        return _as_nd(y, input._data.ndim)

    def backward(ctx, grad):
        input, weight = ctx.saved_values
        need = ctx.needs_input_grad
        mask = (need[0], need[1], ctx.has_bias and need[2])
        gi, gw, gb = convolution_backward(grad, input, weight, *ctx.params, mask)
        return (gi, gw, gb) if ctx.has_bias else (gi, gw)


class ConvolutionBackwardBackward0(Node):
    """The gradients of :class:`ConvolutionBackward0` that ``output_mask`` asks for, as a tuple
    (input, weight, bias order; unrequested ones are left out)."""

    def forward(ctx, grad_output, input, weight, stride, padding, dilation, transposed, output_padding,
                groups, output_mask):
        xp = xp_of(input)
        ctx.save_for_backward(grad_output, input, weight)
        ctx.params = (stride, padding, dilation, transposed, output_padding, groups)
        ctx.output_mask = output_mask
        ndim = input._data.ndim
        g, x, w = _as_4d(grad_output._data), _as_4d(input._data), _as_4d(weight._data)
        outs = []
        if output_mask[0]:
            if transposed:
                gi = _windows.conv_forward(xp, g, w, stride, padding, dilation, groups, x.shape[2:])
            else:
                gi = _windows.conv_input_grad(xp, g, w, x.shape, stride, padding, dilation, groups)
            outs.append(_as_nd(gi, ndim))
        if output_mask[1]:
            if transposed:   # the weight gradient of the forward convolution that maps grad -> input
                gw = _windows.conv_weight_grad(xp, g, x, w.shape, stride, padding, dilation, groups)
            else:
                gw = _windows.conv_weight_grad(xp, x, g, w.shape, stride, padding, dilation, groups)
            outs.append(_as_nd(gw, ndim))
        if output_mask[2]:
            outs.append(g.sum(axis=(0,) + tuple(range(2, g.ndim))))
        return tuple(outs)

    def backward(ctx, *grads):
        # Every output is bilinear in (grad_output, input or weight): differentiate each product.
        g, x, w = ctx.saved_values
        mask = ctx.output_mask
        it = iter(grads)
        ggi = next(it) if mask[0] else None
        ggw = next(it) if mask[1] else None
        ggb = next(it) if mask[2] else None
        need = ctx.needs_input_grad
        params = ctx.params
        d_grad = d_input = d_weight = None
        if need[0]:
            if ggi is not None:
                d_grad = _convolution(ggi, w, None, *params)
            if ggw is not None:
                term = _convolution(x, ggw, None, *params)
                d_grad = term if d_grad is None else d_grad + term
            if ggb is not None:
                term = ggb.reshape((1, -1) + (1,) * (g.ndim - 2))
                d_grad = term.expand_as(g) if d_grad is None else d_grad + term
        if need[1] and ggw is not None:
            d_input = convolution_backward(g, x, ggw, *params, (True, False, False))[0]
        if need[2] and ggi is not None:
            d_weight = convolution_backward(g, ggi, w, *params, (False, True, False))[1]
        return d_grad, d_input, d_weight


class Convolution3DBackward0(ConvolutionBackward0):
    """:class:`ConvolutionBackward0` of a 3-D convolution (the generic code on every backend)."""

    def name(self):
        return "ConvolutionBackward0"


class Convolution3DBackwardBackward0(ConvolutionBackwardBackward0):
    """:class:`ConvolutionBackwardBackward0` of a 3-D convolution."""

    def name(self):
        return "ConvolutionBackwardBackward0"


def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    op = Convolution3DBackward0 if input.dim() == 5 else ConvolutionBackward0
    return apply(op, input, weight, bias, stride, padding, dilation, transposed,
                 output_padding, groups)


def convolution_backward(grad_output, input, weight, stride, padding, dilation, transposed, output_padding,
                         groups, output_mask):
    """``(grad_input, grad_weight, grad_bias)`` of a convolution, None where ``output_mask`` is False."""
    if not any(output_mask):
        return None, None, None
    op = Convolution3DBackwardBackward0 if input.dim() == 5 else ConvolutionBackwardBackward0
    outs = iter(apply(op, grad_output, input, weight, stride, padding, dilation,
                      transposed, output_padding, groups, output_mask=tuple(output_mask)))
    return tuple(next(outs) if m else None for m in output_mask)


# ---------------------------------------------------------------- argument checks
def _expand(value, n, name):
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    for pos, v in enumerate(values):
        try:
            values[pos] = operator.index(v)
        except TypeError:
            raise TypeError(f"argument '{name}' must be tuple of ints, but found element of type "
                            f"{type(v).__name__} at pos {pos}") from None
    if len(values) == 1:
        return (values[0],) * n
    if len(values) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to "
                           f"match the convolution dimensions, but got {name}={values}")
    return tuple(values)


def _check_tensor(fname, value, arg, position):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def _same_padding(weight, dilation, stride, n):
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    pads = []
    for d in range(n):
        total = dilation[d] * (weight.shape[2 + d] - 1)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def _prepare(fname, n, input, weight, bias, stride, padding, dilation, groups, transposed, output_padding):
    """Validate a convolution call like PyTorch; returns the batched input and the parameters
    (2-D ones for a 1-D convolution)."""
    _check_tensor(fname, input, "input", 1)
    _check_tensor(fname, weight, "weight", 2)
    if bias is not None:
        _check_tensor(fname, bias, "bias", 3)
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {fname}, but got "
                           f"input of size: {list(input.shape)}")
    batched = input.dim() == n + 2
    x = input if batched else input.unsqueeze(0)
    k = weight.dim() - 2
    stride = _expand(stride, k, "stride")
    if isinstance(padding, str):
        if transposed:
            raise TypeError(f"{fname}(): argument 'padding' must be tuple of ints, not str")
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        dilation = _expand(dilation, k, "dilation")
        pads = tuple((0, 0) for _ in range(k)) if padding == "valid" else None
    else:
        padding = _expand(padding, k, "padding")
        dilation = _expand(dilation, k, "dilation")
        pads = tuple((p, p) for p in padding)
    output_padding = _expand(output_padding, k, "output_padding")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if pads is not None and any(p < 0 for p, _ in pads):
        raise RuntimeError("negative padding is not supported")
    if any(op < 0 for op in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if x.dim() != weight.dim():
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
                           f"{list(weight.shape)}, but got {x.dim()}-dimensional input of size "
                           f"{list(x.shape)} instead")
    if pads is None:
        pads = _same_padding(weight, dilation, stride, k)
    w_shape, x_shape = list(weight.shape), list(x.shape)
    if w_shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size [{w_shape}] instead")
    if transposed:
        if x_shape[1] != w_shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {w_shape}, expected input{x_shape} to have "
                               f"{w_shape[0]} channels, but got {x_shape[1]} channels instead")
        out_channels = w_shape[1] * groups
    else:
        if x_shape[1] != w_shape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {w_shape}, expected input{x_shape} to "
                               f"have {w_shape[1] * groups} channels, but got {x_shape[1]} channels instead")
        out_channels = w_shape[0]
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"Given weight of size {w_shape}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {list(bias.shape)} instead")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"Input type ({input.type()}) and weight type ({weight.type()}) should be the same")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({input.dtype.name}) and bias type ({bias.dtype.name}) should be the "
                           "same")
    spatial = x_shape[2:]
    kernel = [dilation[d] * (w_shape[2 + d] - 1) + 1 for d in range(k)]
    if transposed:
        if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
            lead = (0, 1, 1) if k == 1 else ()   # PyTorch reports 1-D convolutions as 2-D ones
            ops, ss, ds = (lead[i:i + 1] + v for i, v in enumerate((output_padding, stride, dilation)))
            dims = ("depth", "height", "width")[-len(ops):]
            parts = [f"{what}_{dim}: {v}" for what, vals in (("output_padding", ops), ("stride", ss),
                                                             ("dilation", ds)) for dim, v in zip(dims, vals)]
            raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                               + " ".join(parts))
        out = [(spatial[d] - 1) * stride[d] - sum(pads[d]) + kernel[d] + output_padding[d] for d in range(k)]
        if any(o < 1 for o in out):
            raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, spatial))}). Calculated "
                               f"output size per channel: ({' x '.join(map(str, out))}). Output size is too small")
    else:
        padded = [spatial[d] + sum(pads[d]) for d in range(k)]
        if any(p < kk for p, kk in zip(padded, kernel)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                               f"Kernel size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater "
                               "than actual input size")
    if k == 1:   # run as 2-D with a height of 1
        stride, pads, dilation, output_padding = (1,) + stride, ((0, 0),) + pads, (1,) + dilation, \
            (0,) + output_padding
    return x, batched, (stride, pads, dilation, output_padding)


def _conv(fname, n, input, weight, bias, stride, padding, dilation, groups, transposed=False, output_padding=0):
    x, batched, (stride, pads, dilation, output_padding) = _prepare(
        fname, n, input, weight, bias, stride, padding, dilation, groups, transposed, output_padding)
    y = _convolution(x, weight, bias, stride, pads, dilation, transposed, output_padding, groups)
    return y if batched else y.squeeze(0)


# ---------------------------------------------------------------- public functions
@autocast_function("conv1d")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution over ``input`` (N, C_in, L) or (C_in, L) with ``weight`` (C_out, C_in/groups, k).

    ``padding`` is an int, a 1-tuple, ``"valid"`` (none) or ``"same"`` (output length = input length;
    stride 1 only).
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@autocast_function("conv2d")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution over ``input`` (N, C_in, H, W) or (C_in, H, W) with ``weight``
    (C_out, C_in/groups, kH, kW) and optional ``bias`` (C_out,).

    ``stride``, ``padding`` and ``dilation`` are ints or pairs; ``padding`` may also be ``"valid"``
    or ``"same"`` (stride 1 only; an odd total padding puts the extra row/column at the end).
    Output: (N, C_out, H_out, W_out) with ``H_out = (H + 2*pad - dilation*(kH-1) - 1) // stride + 1``.
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@autocast_function("conv_transpose1d")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution (the gradient of conv1d with respect to its input); ``weight`` is
    (C_in, C_out/groups, k). ``L_out = (L-1)*stride - 2*padding + dilation*(k-1) + output_padding + 1``."""
    return _conv("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation, groups, True,
                 output_padding)


@autocast_function("conv_transpose2d")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution ("deconvolution"); ``weight`` is (C_in, C_out/groups, kH, kW).
    ``H_out = (H-1)*stride - 2*padding + dilation*(kH-1) + output_padding + 1`` (likewise W)."""
    return _conv("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, groups, True,
                 output_padding)


@autocast_function("conv3d")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution over ``input`` (N, C_in, D, H, W) or (C_in, D, H, W) with ``weight``
    (C_out, C_in/groups, kD, kH, kW) and optional ``bias`` (C_out,); arguments as :func:`conv2d`
    with triples. ``D_out = (D + 2*pad - dilation*(kD-1) - 1) // stride + 1`` (likewise H, W)."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


@autocast_function("conv_transpose3d")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-D transposed convolution; ``weight`` is (C_in, C_out/groups, kD, kH, kW).
    ``D_out = (D-1)*stride - 2*padding + dilation*(kD-1) + output_padding + 1`` (likewise H, W)."""
    return _conv("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation, groups, True,
                 output_padding)
