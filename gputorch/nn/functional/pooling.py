"""Pooling: max/avg pooling (1-D, 2-D, 3-D), adaptive avg/max pooling.

Each 2-D pooling is one op on ``(N, C, H, W)`` or ``(C, H, W)`` arrays (PyTorch's
grad_fn names), with a dedicated backward op whose own backward is the forward's
adjoint again: max pooling's backward scatters the gradient to the recorded
indices and is differentiated by gathering at them; average pooling's backward
and forward are each other's adjoints. 1-D pooling runs the 2-D op on a height
of 1 (``unsqueeze(-2)`` ... ``squeeze(-2)``), as PyTorch does. 3-D pooling runs the
same array code over three dims, under 3-D subclasses of the 2-D ops (so that a
backend's 2-D specialisations, keyed by node class, never see 3-D windows).
Max unpooling and power-average (LP) pooling, composites of Tensor ops, close the file.
"""
import math
import operator

from ..._dispatch import apply
from ..._tensor import _LEGACY_NAMES, Tensor
from ...autograd.node import Node
from ...ops._common import xp_of
from . import _pool_windows as pw
from ._windows import out_size
from ...amp.autocast_mode import autocast_function

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d",
           "lp_pool2d", "lp_pool3d"]


def _gather_at(t, indices, k=2):
    """``t[..., indices]`` over the flattened last ``k`` dims (the adjoint of a scatter to ``indices``)."""
    return t.flatten(-k).gather(-1, indices.flatten(-k)).reshape(indices.shape)


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
        indices = pw.max_pool_indices(xp, taps, input._data.shape[-len(kernel):], kernel, stride, padding,
                                      dilation)
        if need:
            ctx.save_for_backward(input)
            ctx.geometry = (kernel, stride, padding, dilation)
            ctx.taps, ctx.indices = taps, indices
        return out, indices

    def backward(ctx, grad, _grad_indices=None):
        (input,) = ctx.saved_values
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
            taps = pw.taps_from_indices(xp, indices._data, x_shape[-len(kernel):], kernel, stride, padding,
                                        dilation)
        return pw.max_pool_grad(xp, grad_output._data, taps, x_shape, kernel, stride, padding, dilation)

    def backward(ctx, grad):
        (indices,) = ctx.saved_values
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
    out = _pooled_sizes(shape, kernel, stride, padding, dilation, ceil_mode)   # before the dtype, as PyTorch
    _check_dtype(fname, input)
    return kernel, stride, padding, dilation, out


def _pooled_sizes(shape, kernel, stride, padding, dilation, ceil_mode):
    """The output sizes of the pooled (last ``len(kernel)``) dims of an input of ``shape``;
    PyTorch's error when one is below 1."""
    k = len(kernel)
    out = tuple(out_size(shape[d - k], kernel[d], stride[d], padding[d], padding[d], dilation[d], ceil_mode)
                for d in range(k))
    if any(o < 1 for o in out):
        sizes = tuple(shape[-k - 1:])
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, sizes))}). Calculated output size: "
                           f"({'x'.join(map(str, sizes[:1] + out))}). Output size is too small")
    return out


def _max_pool_result(cls, input, geometry, return_indices):
    """Run max-pool node ``cls`` with ``geometry`` ``(kernel, stride, padding, dilation, out)``:
    ``(output, indices)`` with ``return_indices``, else the output."""
    result = apply(cls, input, *geometry, bool(return_indices))
    if return_indices:
        return result
    return result[0] if isinstance(result, tuple) else result


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """``(output, indices)`` of :func:`max_pool2d`; indices are flat positions in each H*W plane."""
    geometry = _pool_geometry("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    return _max_pool_result(MaxPool2DWithIndicesBackward0, input, geometry, return_indices)


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
        return apply(AvgPool2DBackwardBackward0, grad, ctx.saved_values[0], *ctx.params)


class AvgPool2DBackwardBackward0(Node):
    """The gradient of average pooling: ``grad / divisor`` summed back over each window."""

    def forward(ctx, grad_output, input, kernel, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        ctx.params = (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
        ctx.out_hw = grad_output._data.shape[-len(kernel):]
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
        return apply(AdaptiveAvgPool2DBackwardBackward0, grad, ctx.saved_values[0])


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
        return apply(AdaptiveMaxPool2DBackwardBackward0, grad, ctx.saved_values[0],
                     _index_tensor(ctx.indices, grad))


class AdaptiveMaxPool2DBackwardBackward0(Node):
    def forward(ctx, grad_output, input, indices):
        ctx.save_for_backward(indices)
        return pw.scatter_add_indices(xp_of(grad_output), grad_output._data, indices._data, input._data.shape)

    def backward(ctx, grad):
        (indices,) = ctx.saved_values
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
    """An empty pooling result that stays in ``input``'s graph (its gradient is zero), as PyTorch's."""
    empty = input.new_zeros(tuple(input.shape[:-2]) + tuple(out_hw))
    return empty + input.sum() * 0 if input.requires_grad else empty


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


# ---------------------------------------------------------------- 3-D pooling
class MaxPool3DWithIndicesBackward0(MaxPool2DWithIndicesBackward0):
    """``(out, indices)`` of 3-D max pooling (indices flat in each D*H*W volume)."""

    def backward(ctx, grad, _grad_indices=None):
        (input,) = ctx.saved_values
        return apply(MaxPool3DWithIndicesBackwardBackward0, grad, input, _index_tensor(ctx.indices, grad),
                     *ctx.geometry, taps=ctx.taps)


class MaxPool3DWithIndicesBackwardBackward0(MaxPool2DWithIndicesBackwardBackward0):
    def backward(ctx, grad):
        (indices,) = ctx.saved_values
        return _gather_at(grad, indices, 3), None, None


class AvgPool3DBackward0(AvgPool2DBackward0):
    def backward(ctx, grad):
        return apply(AvgPool3DBackwardBackward0, grad, ctx.saved_values[0], *ctx.params)


class AvgPool3DBackwardBackward0(AvgPool2DBackwardBackward0):
    def backward(ctx, grad):
        return apply(AvgPool3DBackward0, grad, *ctx.params, ctx.out_hw), None


class AdaptiveAvgPool3DBackward0(Node):
    def forward(ctx, input, out_size):
        ctx.save_for_backward(input)
        return pw.adaptive_avg_pool(xp_of(input), input._data, out_size)

    def backward(ctx, grad):
        return apply(AdaptiveAvgPool3DBackwardBackward0, grad, ctx.saved_values[0])


class AdaptiveAvgPool3DBackwardBackward0(Node):
    def forward(ctx, grad_output, input):
        ctx.out_size = grad_output._data.shape[-3:]
        return pw.adaptive_avg_pool_grad(xp_of(grad_output), grad_output._data, input._data.shape, 3)

    def backward(ctx, grad):
        return apply(AdaptiveAvgPool3DBackward0, grad, ctx.out_size), None


class AdaptiveMaxPool3DBackward0(AdaptiveMaxPool2DBackward0):
    def backward(ctx, grad, _grad_indices=None):
        return apply(AdaptiveMaxPool3DBackwardBackward0, grad, ctx.saved_values[0],
                     _index_tensor(ctx.indices, grad))


class AdaptiveMaxPool3DBackwardBackward0(Node):
    def forward(ctx, grad_output, input, indices):
        ctx.save_for_backward(indices)
        return pw.scatter_add_indices(xp_of(grad_output), grad_output._data, indices._data, input._data.shape, 3)

    def backward(ctx, grad):
        (indices,) = ctx.saved_values
        return _gather_at(grad, indices, 3), None, None


def _triple(fname, what, value, rule):
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(values) not in (1, 3):
        raise RuntimeError(f"{fname}: {what} {rule}")
    try:
        values = [operator.index(v) for v in values]
    except TypeError:
        raise TypeError(f"{fname}(): argument '{what}' must be tuple of ints, not "
                        f"{type(value).__name__}") from None
    return tuple(values) if len(values) == 3 else (values[0],) * 3


def _check_dtype_3d(fname, input):
    """PyTorch's 3-D dtype support: average pooling takes floats and int64, adaptive max pooling
    floats only (on top of :func:`_check_dtype`)."""
    _check_dtype(fname, input)
    floating = input.is_floating_point()
    if (fname == "avg_pool3d" and not floating and input.dtype.name != "int64") or \
            (fname == "adaptive_max_pool3d" and not floating):
        raise NotImplementedError(f"\"{fname}\" not implemented for '{_LEGACY_NAMES[input.dtype]}'")


def _pool3d_geometry(fname, input, kernel_size, stride, padding, dilation, ceil_mode):
    """Validate a 3-D pooling call like PyTorch; returns ``(kernel, stride, padding, dilation, out)``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    be = "must either be" if fname == "max_pool3d" else "must be"
    kernel = _triple(fname, "kernel_size", kernel_size, f"{be} a single int, or a tuple of three ints")
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else \
        _triple(fname, "stride", stride, "must either be omitted, a single int, or a tuple of three ints")
    padding = _triple(fname, "padding", padding, f"{be} a single int, or a tuple of three ints")
    dilation = _triple(fname, "dilation", dilation, "must be either a single int, or a tuple of three ints")
    shape = list(input.shape)
    if input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {kernel[0]} kH: {kernel[1]} "
                           f"kW: {kernel[2]}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"stride should be greater than zero, but got dT: {stride[0]} dH: {stride[1]} "
                           f"dW: {stride[2]}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {dilation[0]} "
                           f"dilationH: {dilation[1]} dilationW: {dilation[2]}")
    for p, k, d in zip(padding, kernel, dilation):
        if p < 0 or p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    if any(s == 0 for s in shape[-4:]):
        raise RuntimeError(f"{fname}(): Expected input's non-batch dimensions to have positive length, but input "
                           f"has a shape of {shape}")
    t, h, w = shape[-3:]
    if fname == "avg_pool3d" and any(sz < k for sz, k in zip((t, h, w), kernel)):
        raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size (kT: {kernel[0]} "
                           f"kH: {kernel[1]} kW: {kernel[2]})")
    out = _pooled_sizes(shape, kernel, stride, padding, dilation, ceil_mode)
    _check_dtype_3d(fname, input)
    return kernel, stride, padding, dilation, out


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """``(output, indices)`` of :func:`max_pool3d`; indices are flat positions in each D*H*W volume."""
    geometry = _pool3d_geometry("max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode)
    return _max_pool_result(MaxPool3DWithIndicesBackward0, input, geometry, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-D max pooling over ``input`` (N, C, D, H, W) or (C, D, H, W); arguments and output sizes as
    :func:`max_pool2d`, with triples. With ``return_indices``, also the flat D*H*W index of every
    maximum."""
    return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-D average pooling over ``input`` (N, C, D, H, W) or (C, D, H, W); divisor rules as
    :func:`avg_pool2d`."""
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kernel, stride, padding, _, out = _pool3d_geometry("avg_pool3d", input, kernel_size, stride, padding, 1,
                                                       ceil_mode)
    return apply(AvgPool3DBackward0, input, kernel, stride, padding, bool(ceil_mode), bool(count_include_pad),
                 divisor_override, out)


def _adaptive_size_3d(fname, input, output_size):
    if isinstance(output_size, (list, tuple)) and len(output_size) != 3:
        if "max" in fname:
            raise RuntimeError(f"{fname}(): internal error: output_size.size() must be 3")
        raise RuntimeError(f"{fname}: output_size must be 3")
    if isinstance(input, Tensor) and input.dim() not in (4, 5):
        sep = ": " if "max" in fname else " "
        raise RuntimeError(f"{fname}(): Expected 4D or 5D tensor, but got{sep}{list(input.shape)}")
    sizes = _adaptive_size(fname, input, output_size, 3)
    _check_dtype_3d(fname, input)
    return sizes


def adaptive_avg_pool3d(input, output_size):
    """Average over adaptive windows (as :func:`adaptive_avg_pool2d`) of ``input`` (N, C, D, H, W) or
    (C, D, H, W), so that the output is ``output_size`` (an int, or a triple whose ``None`` keeps the
    input size)."""
    out = _adaptive_size_3d("adaptive_avg_pool3d", input, output_size)
    if out == (1, 1, 1):
        return input.mean((-1, -2, -3), keepdim=True)
    if 0 in out:
        return input.new_zeros(tuple(input.shape[:-3]) + out)
    return apply(AdaptiveAvgPool3DBackward0, input, out)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    out_size3 = _adaptive_size_3d("adaptive_max_pool3d", input, output_size)
    if 0 in out_size3:
        out = input.new_zeros(tuple(input.shape[:-3]) + out_size3)
        return out, out.long()
    return apply(AdaptiveMaxPool3DBackward0, input, out_size3)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Maximum over the adaptive windows of :func:`adaptive_avg_pool3d`; with ``return_indices`` also
    the flat D*H*W index of each maximum."""
    out, indices = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, indices) if return_indices else out


# ---------------------------------------------------------------- max unpooling (composite)
def _ints(value, n):
    values = tuple(value) if isinstance(value, (list, tuple)) else (value,)
    return values * n if len(values) == 1 else values


def _unpool_size(input, kernel, stride, padding, output_size):
    """The unpooled spatial sizes: the default inverse of the pooling's size rule, or ``output_size``
    (with or without its leading batch/channel dims) when it is within one stride of it."""
    n = len(kernel)
    default = [(input.shape[-n + d] - 1) * stride[d] - 2 * padding[d] + kernel[d] for d in range(n)]
    if output_size is None:
        return tuple(default)
    sizes = list(output_size)
    if len(sizes) == n + 2:
        sizes = sizes[2:]
    if len(sizes) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a "
                         f"length of '{len(sizes)}'")
    for d in range(n):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < sizes[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
    return tuple(int(v) for v in sizes)


def _max_unpool(n, input, indices, kernel_size, stride, padding, output_size):
    kernel = _ints(kernel_size, n)
    stride = kernel if stride is None else _ints(stride, n)
    padding = _ints(padding, n)
    if indices.dtype.name != "int64":
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{_LEGACY_NAMES[indices.dtype]}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    sizes = _unpool_size(input, kernel, stride, padding, output_size)
    volume = math.prod(sizes)
    invalid = ((indices < 0) | (indices >= volume)).reshape(-1)
    if bool(invalid.any()):
        bad = int(indices.reshape(-1)[int(invalid.int().argmax())])       # the first one
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, sizes))})")
    lead, pooled = tuple(input.shape[:-n]), math.prod(input.shape[-n:])
    flat_x, flat_i = input.reshape(lead + (pooled,)), indices.reshape(lead + (pooled,))
    out = input.new_zeros(lead + (volume,)).scatter(-1, flat_i, flat_x)
    return out.reshape(lead + sizes)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool1d`: each value of ``input`` (N, C, L) or (C, L) put back at
    its ``indices`` (from ``return_indices=True``) in a zero output; the output length is
    ``(L-1)*stride - 2*padding + kernel_size`` unless ``output_size`` picks one within a stride."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


@autocast_function("max_unpool2d")
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool2d` over ``input`` (N, C, H, W) or (C, H, W); see
    :func:`max_unpool1d`."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


@autocast_function("max_unpool3d")
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool3d` over ``input`` (N, C, D, H, W) or (C, D, H, W); see
    :func:`max_unpool1d`."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


# ---------------------------------------------------------------- power-average pooling (composite)
def _lp_pool(avg, n, input, norm_type, kernel_size, stride, ceil_mode):
    window = math.prod(_ints(kernel_size, n))
    if stride is not None:
        out = avg(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (out.sign() * out.abs().relu()).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over ``input`` (N, C, L) or (C, L): ``(sum over window of x**p) ** (1/p)``
    with ``p = norm_type`` (``inf``: max pooling; ``1``: sum pooling)."""
    return _lp_pool(avg_pool1d, 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-D :func:`lp_pool1d` over ``input`` (N, C, H, W) or (C, H, W)."""
    return _lp_pool(avg_pool2d, 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D :func:`lp_pool1d` over ``input`` (N, C, D, H, W) or (C, D, H, W)."""
    return _lp_pool(avg_pool3d, 3, input, norm_type, kernel_size, stride, ceil_mode)
