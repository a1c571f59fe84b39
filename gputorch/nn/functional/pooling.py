"""Pooling: max/avg pooling (1-D and 2-D), adaptive avg/max pooling.

Each 2-D pooling is one op on ``(N, C, H, W)`` or ``(C, H, W)`` arrays (PyTorch's
grad_fn names), with a dedicated backward op whose own backward is the forward's
adjoint again: max pooling's backward scatters the gradient to the recorded
indices and is differentiated by gathering at them; average pooling's backward
and forward are each other's adjoints. 1-D pooling runs the 2-D op on a height
of 1 (``unsqueeze(-2)`` ... ``squeeze(-2)``), as PyTorch does.
"""
import operator

from ..._dispatch import apply
from ..._tensor import _LEGACY_NAMES, Tensor
from ...autograd.node import Node
from ...ops._common import xp_of
from . import _pool_windows as pw
from ._windows import out_size

__all__ = ["max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d",
           "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices"]


def _gather_at(t, indices):
    """``t[..., indices]`` over the flattened last two dims (the adjoint of a scatter to ``indices``)."""
    return t.flatten(-2).gather(-1, indices.flatten(-2)).reshape(indices.shape)


def _index_tensor(array, like):
    return Tensor._make(array, like._device)


# ---------------------------------------------------------------- max pooling
class MaxPool2DWithIndicesBackward0(Node):
    """``(out, indices)`` of 2-D max pooling; with no graph and no indices asked, ``out`` only."""

    def forward(ctx, input, kernel, stride, padding, dilation, out_hw, return_indices):
        xp = xp_of(input)
        need = bool(ctx.needs_input_grad)
        out, taps = pw.max_pool(xp, input._data, kernel, stride, padding, dilation, out_hw,
                                with_taps=need or return_indices)
        if taps is None:
            return out
        indices = pw.max_pool_indices(xp, taps, input._data.shape[-2:], kernel, stride, padding, dilation)
        if need:
            ctx.save_for_backward(input)
            ctx.geometry = (kernel, stride, padding, dilation)
            ctx.taps, ctx.indices = taps, indices
        return out, indices

    def backward(ctx, grad, _grad_indices=None):
        (input,) = ctx.saved_tensors
        return apply(MaxPool2DWithIndicesBackwardBackward0, grad, input, _index_tensor(ctx.indices, grad),
                     *ctx.geometry, taps=ctx.taps)


class MaxPool2DWithIndicesBackwardBackward0(Node):
    """The gradient of 2-D max pooling: ``grad_output`` scattered to the winning ``indices``.
    ``taps`` (the winners' positions inside their windows, kept by the forward) spares
    recomputing them from the indices."""

    def forward(ctx, grad_output, input, indices, kernel, stride, padding, dilation, taps=None):
        xp = xp_of(grad_output)
        ctx.save_for_backward(indices)
        x_shape = input._data.shape
        if taps is None:
            taps = pw.taps_from_indices(xp, indices._data, x_shape[-2:], kernel, stride, padding, dilation)
        return pw.max_pool_grad(xp, grad_output._data, taps, x_shape, kernel, stride, padding, dilation)

    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return _gather_at(grad, indices), None, None     # the input only gave the shape


def _pair(fname, what, value, rule):
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(values) not in (1, 2):
        raise RuntimeError(f"{fname}: {what} {rule}")
    try:
        values = [operator.index(v) for v in values]
    except TypeError:
        raise TypeError(f"{fname}(): argument '{what}' must be tuple of ints, not "
                        f"{type(value).__name__}") from None
    return (values[0], values[-1])


def _check_dtype(fname, input):
    if input.dtype.name == "bool" or (fname.startswith("adaptive_avg") and not input.is_floating_point()):
        raise NotImplementedError(f"\"{fname}\" not implemented for '{_LEGACY_NAMES[input.dtype]}'")


def _pool_geometry(fname, input, kernel_size, stride, padding, dilation, ceil_mode):
    """Validate a 2-D pooling call like PyTorch; returns ``(kernel, stride, padding, dilation, out_hw)``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    kernel = _pair(fname, "kernel_size", kernel_size, "must either be a single int, or a tuple of two ints")
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else \
        _pair(fname, "stride", stride, "must either be omitted, a single int, or a tuple of two ints")
    padding = _pair(fname, "padding", padding, "must either be a single int, or a tuple of two ints")
    dilation = _pair(fname, "dilation", dilation, "must be either a single int, or a tuple of two ints")
    shape = list(input.shape)
    if input.dim() not in (3, 4):
        if fname == "max_pool2d":
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                           f"but got:{shape}")
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    for p, k, d in zip(padding, kernel, dilation):
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = "
                           f"{padding[1]}, padH = {padding[0]}, kW = {kernel[1]}, kH = {kernel[0]}")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel[0]} kW: {kernel[1]}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"stride should be greater than zero, but got dH: {stride[0]} dW: {stride[1]}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dilation[0]} "
                           f"dilationW: {dilation[1]}")
    if any(s == 0 for s in shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                           f"but got:{shape}")
    _check_dtype(fname, input)
    out_hw = tuple(out_size(shape[-2 + d], kernel[d], stride[d], padding[d], padding[d], dilation[d], ceil_mode)
                   for d in range(2))
    if any(o < 1 for o in out_hw):
        c, h, w = shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{out_hw[0]}x{out_hw[1]}). Output size is too small")
    return kernel, stride, padding, dilation, out_hw


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """``(output, indices)`` of :func:`max_pool2d`; indices are flat positions in each H*W plane."""
    kernel, stride, padding, dilation, out_hw = _pool_geometry(
        "max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    result = apply(MaxPool2DWithIndicesBackward0, input, kernel, stride, padding, dilation, out_hw,
                   bool(return_indices))
    if return_indices:
        return result
    return result[0] if isinstance(result, tuple) else result


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-D max pooling over ``input`` (N, C, H, W) or (C, H, W).

    ``stride`` defaults to ``kernel_size``; ``padding`` (at most half the dilated kernel) pads with
    -inf. ``H_out = floor_or_ceil((H + 2*padding - dilation*(kH-1) - 1) / stride) + 1``; with
    ``ceil_mode`` the last window must start inside the input or the left padding.
    With ``return_indices``, also returns the flat index in each H*W plane of every maximum.
    """
    return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _check_1d(fname, input, expected):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.dim() not in (2, 3):
        if expected:
            raise RuntimeError(f"{fname}: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
                               f"for input, but got:{list(input.shape)}")
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument "
                           f"#1 'self' (while checking arguments for {fname})")


def _single(value):
    return value[0] if isinstance(value, (list, tuple)) and len(value) == 1 else value


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    _check_1d("max_pool1d", input, True)
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        stride = kernel_size
    kernel_size, stride, padding, dilation = (_single(v) for v in (kernel_size, stride, padding, dilation))
    if all(isinstance(v, int) for v in (kernel_size, stride, padding, dilation)):
        if kernel_size <= 0:
            raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {kernel_size}")
        if stride <= 0:
            raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {stride}")
        if padding < 0:
            raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {padding}")
        if padding > kernel_size // 2:
            raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got "
                               f"padding={padding} and kernel_size={kernel_size}")
        if dilation <= 0:
            raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {dilation}")
        size = out_size(input.shape[-1], kernel_size, stride, padding, padding, dilation, ceil_mode)
        if size <= 0:
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {size}")
    result = max_pool2d_with_indices(input.unsqueeze(-2), (1, kernel_size), (1, stride), (0, padding),
                                     (1, dilation), ceil_mode, return_indices)
    if return_indices:
        return result[0].squeeze(-2), result[1].squeeze(-2)
    return result.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-D max pooling over ``input`` (N, C, L) or (C, L); see :func:`max_pool2d`."""
    return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


# ---------------------------------------------------------------- average pooling
class AvgPool2DBackward0(Node):
    def forward(ctx, input, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override, out_hw):
        ctx.params = (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
        ctx.save_for_backward(input)
        return pw.avg_pool(xp_of(input), input._data, kernel, stride, padding, out_hw, count_include_pad,
                           divisor_override)

    def backward(ctx, grad):
        return apply(AvgPool2DBackwardBackward0, grad, ctx.saved_tensors[0], *ctx.params)


class AvgPool2DBackwardBackward0(Node):
    """The gradient of average pooling: ``grad / divisor`` summed back over each window."""

    def forward(ctx, grad_output, input, kernel, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        ctx.params = (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
        ctx.out_hw = grad_output._data.shape[-2:]
        return pw.avg_pool_grad(xp_of(grad_output), grad_output._data, input._data.shape, kernel, stride,
                                padding, count_include_pad, divisor_override)

    def backward(ctx, grad):
        return apply(AvgPool2DBackward0, grad, *ctx.params, ctx.out_hw), None


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-D average pooling over ``input`` (N, C, H, W) or (C, H, W).

    The divisor is ``divisor_override`` if given, else the window size counted over the input
    plus its zero padding (``count_include_pad=True``) or over the input only. Output size as
    :func:`max_pool2d` (dilation 1).
    """
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kernel, stride, padding, _, out_hw = _pool_geometry("avg_pool2d", input, kernel_size, stride, padding, 1,
                                                        ceil_mode)
    return apply(AvgPool2DBackward0, input, kernel, stride, padding, bool(ceil_mode), bool(count_include_pad),
                 divisor_override, out_hw)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling over ``input`` (N, C, L) or (C, L); see :func:`avg_pool2d`."""
    _check_1d("avg_pool1d", input, False)
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        stride = kernel_size
    kernel_size, stride, padding = (_single(v) for v in (kernel_size, stride, padding))
    out = avg_pool2d(input.unsqueeze(-2), (1, kernel_size), (1, stride), (0, padding), ceil_mode,
                     count_include_pad)
    return out.squeeze(-2)


# ---------------------------------------------------------------- adaptive pooling
class AdaptiveAvgPool2DBackward0(Node):
    def forward(ctx, input, out_hw):
        ctx.save_for_backward(input)
        return pw.adaptive_avg_pool(xp_of(input), input._data, out_hw)

    def backward(ctx, grad):
        return apply(AdaptiveAvgPool2DBackwardBackward0, grad, ctx.saved_tensors[0])


class AdaptiveAvgPool2DBackwardBackward0(Node):
    def forward(ctx, grad_output, input):
        ctx.out_hw = grad_output._data.shape[-2:]
        return pw.adaptive_avg_pool_grad(xp_of(grad_output), grad_output._data, input._data.shape)

    def backward(ctx, grad):
        return apply(AdaptiveAvgPool2DBackward0, grad, ctx.out_hw), None


class AdaptiveMaxPool2DBackward0(Node):
    def forward(ctx, input, out_hw):
        out, indices = pw.adaptive_max_pool(xp_of(input), input._data, out_hw)
        ctx.save_for_backward(input)
        ctx.indices = indices
        return out, indices

    def backward(ctx, grad, _grad_indices=None):
        return apply(AdaptiveMaxPool2DBackwardBackward0, grad, ctx.saved_tensors[0],
                     _index_tensor(ctx.indices, grad))


class AdaptiveMaxPool2DBackwardBackward0(Node):
    def forward(ctx, grad_output, input, indices):
        ctx.save_for_backward(indices)
        return pw.scatter_add_indices(xp_of(grad_output), grad_output._data, indices._data, input._data.shape)

    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return _gather_at(grad, indices), None, None


def _adaptive_size(fname, input, output_size, n):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.dim() not in (n + 1, n + 2):
        if n == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument "
                               f"#1 'self' (while checking arguments for {fname})")
        sep = ": " if "max" in fname else " "
        raise RuntimeError(f"{fname}(): Expected 3D or 4D tensor, but got{sep}{list(input.shape)}")
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != n:
            raise RuntimeError(f"{fname}: output_size must be {n}")
        sizes = tuple(input.shape[-n + d] if s is None else int(s) for d, s in enumerate(output_size))
    else:
        sizes = (int(output_size),) * n
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"{fname}: elements of output_size must be greater than or equal to 0 but received "
                           f"{list(sizes)}")
    for d in range(1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"{fname}(): Expected input to have non-zero size for non-batch dimensions, but "
                               f"input has sizes {list(input.shape)} with dimension {d} being empty")
    _check_dtype(fname, input)
    return sizes


def _empty_result(input, out_hw):
    return input.new_zeros(tuple(input.shape[:-2]) + tuple(out_hw))


def adaptive_avg_pool2d(input, output_size):
    """Average over PyTorch's adaptive windows (``start = floor(i*H/H_out)``, ``end = ceil((i+1)*H/H_out)``)
    so that the output is ``output_size`` (an int, or a pair whose ``None`` keeps the input size)."""
    out_hw = _adaptive_size("adaptive_avg_pool2d", input, output_size, 2)
    if out_hw == (1, 1):
        return input.mean((-1, -2), keepdim=True)
    if 0 in out_hw:
        return _empty_result(input, out_hw)
    return apply(AdaptiveAvgPool2DBackward0, input, out_hw)


def adaptive_avg_pool1d(input, output_size):
    """1-D :func:`adaptive_avg_pool2d` over ``input`` (N, C, L) or (C, L)."""
    (size,) = _adaptive_size("adaptive_avg_pool1d", input, _single(output_size), 1)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    out_hw = _adaptive_size("adaptive_max_pool2d", input, output_size, 2)
    if 0 in out_hw:
        out = _empty_result(input, out_hw)
        return out, out.long()
    return apply(AdaptiveMaxPool2DBackward0, input, out_hw)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Maximum over the adaptive windows of :func:`adaptive_avg_pool2d`; with ``return_indices`` also the
    flat H*W index of each maximum."""
    out, indices = adaptive_max_pool2d_with_indices(input, output_size)
    return (out, indices) if return_indices else out


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    (size,) = _adaptive_size("adaptive_max_pool1d", input, _single(output_size), 1)
    out, indices = adaptive_max_pool2d_with_indices(input.unsqueeze(-2), (1, size))
    return out.squeeze(-2), indices.squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-D :func:`adaptive_max_pool2d` over ``input`` (N, C, L) or (C, L)."""
    out, indices = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, indices) if return_indices else out
