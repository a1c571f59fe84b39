"""Sliding blocks: ``unfold`` (im2col) and its adjoint ``fold`` (col2im).

``unfold`` turns ``(N, C, H, W)`` into ``(N, C*kh*kw, L)``: one column per window position
(``L = Ho * Wo``), its rows the window's values channel by channel, kernel rows then columns.
``fold`` sums such columns back into ``(N, C, H, W)`` (overlapping windows add up). The two
are one pair of ops, :class:`Im2ColBackward0` and :class:`Col2ImBackward0` (PyTorch's grad_fn
names), each the other's gradient, computed by ``_windows.im2col`` / ``_windows.col2im``.
"""
import operator

from ... import _dtype
from ..._dispatch import apply
from ..._tensor import _LEGACY_NAMES, Tensor
from ...autograd.node import Node
from ...ops._common import xp_of
from . import _windows

__all__ = ["unfold", "fold"]


class Im2ColBackward0(Node):
    """``unfold``: the windows of ``input`` (N, C, H, W) as columns (N, C*kh*kw, Ho*Wo)."""

    def forward(ctx, input, kernel, dilation, padding, stride, out):
        ctx.params = (input._data.shape[-2:], kernel, dilation, padding, stride)
        x = input._data
        cols = _windows.im2col(xp_of(input), x, kernel, stride, tuple((p, p) for p in padding), dilation, out)
        n, c = x.shape[:2]
        return cols.reshape(n, c * kernel[0] * kernel[1], out[0] * out[1])

    def backward(ctx, grad):
        size, kernel, dilation, padding, stride = ctx.params
        return apply(Col2ImBackward0, grad, size, kernel, dilation, padding, stride)


class Col2ImBackward0(Node):
    """``fold``: columns (N, C*kh*kw, L) summed back into an image (N, C, *output_size)."""

    def forward(ctx, input, size, kernel, dilation, padding, stride):
        out = _blocks(size, kernel, dilation, padding, stride)
        ctx.params = (kernel, dilation, padding, stride, out)
        cols = input._data
        n = cols.shape[0]
        c = cols.shape[1] // (kernel[0] * kernel[1])
        cols = cols.reshape((n, c) + tuple(kernel) + tuple(out))
        return _windows.col2im(xp_of(input), cols, (n, c) + tuple(size), stride, tuple((p, p) for p in padding),
                               dilation)

    def backward(ctx, grad):
        return apply(Im2ColBackward0, grad, *ctx.params)


def _blocks(size, kernel, dilation, padding, stride):
    """Window positions along each of the two dims."""
    return tuple(_windows.out_size(size[d], kernel[d], stride[d], padding[d], padding[d], dilation[d])
                 for d in range(2))


def _pair(fname, value, name, position):
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    for pos, v in enumerate(values):
        try:
            values[pos] = operator.index(v)
        except TypeError:
            raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be tuple of ints, but found "
                            f"element of type {type(v).__name__} at pos {pos}") from None
    if len(values) == 1:
        values = values * 2
    if len(values) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(values)}")
    return tuple(values)


def _check_geometry(kernel, dilation, padding, stride):
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {kernel[0]} "
                           f"kernel_width: {kernel[1]}")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {stride[0]} "
                           f"stride_width: {stride[1]}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {dilation[0]} "
                           f"dilation_width: {dilation[1]}")
    if any(p < 0 for p in padding):
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {padding[0]} "
                           f"pad_width: {padding[1]}")


def _check_float(name, input):
    """PyTorch's im2col/col2im take floating point and bool (moved, never summed into), no integers."""
    if not input.is_floating_point() and not input.is_complex() and input.dtype is not _dtype.bool:
        raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for '{_LEGACY_NAMES[input.dtype]}'")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding windows of ``input`` (N, C, H, W) or (C, H, W) as columns: (N, C*kh*kw, L) with
    ``L`` the number of window positions (``Ho * Wo``, each as in :func:`conv2d`)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"unfold(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.dim() == 2:
        raise IndexError("Dimension out of range (expected to be in range of [-2, 1], but got 2)")
    kernel = _pair("im2col", kernel_size, "kernel_size", 2)
    dilation = _pair("im2col", dilation, "dilation", 3)
    padding = _pair("im2col", padding, "padding", 4)
    stride = _pair("im2col", stride, "stride", 5)
    _check_geometry(kernel, dilation, padding, stride)
    shape = list(input.shape)
    if input.dim() not in (3, 4) or any(s == 0 for s in shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {shape}")
    _check_float("im2col", input)
    size = tuple(shape[-2:])
    out = _blocks(size, kernel, dilation, padding, stride)
    if any(o < 1 for o in out):
        raise RuntimeError(f"Given input with spatial size {size}, kernel_size={kernel}, dilation={dilation}, "
                           f"padding={padding}, calculated shape of the array of sliding blocks as {out}, but its "
                           "components must be at least one.")
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    y = apply(Im2ColBackward0, x, kernel, dilation, padding, stride, out)
    return y if batched else y.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of :func:`unfold`: columns (N, C*kh*kw, L) or (C*kh*kw, L) summed into an image
    (N, C, *output_size); ``L`` must be the number of window positions in ``output_size``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fold(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    size = _pair("col2im", output_size, "output_size", 2)
    kernel = _pair("col2im", kernel_size, "kernel_size", 3)
    dilation = _pair("col2im", dilation, "dilation", 4)
    padding = _pair("col2im", padding, "padding", 5)
    stride = _pair("col2im", stride, "stride", 6)
    _check_geometry(kernel, dilation, padding, stride)
    shape = list(input.shape)
    if input.dim() not in (2, 3) or any(s == 0 for s in shape[-2:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {shape}")
    window = kernel[0] * kernel[1]
    if shape[-2] % window:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={shape[-2]} and kernel_size={kernel}.")
    out = _blocks(size, kernel, dilation, padding, stride)
    if out[0] * out[1] != shape[-1]:
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, padding={padding}, "
                           f"stride={stride}, expected size of input's dimension 2 to match the calculated number of "
                           f"sliding blocks {out[0]} * {out[1]} = {out[0] * out[1]}, but got "
                           f"input.size(2)={shape[-1]}.")
    _check_float("col2im", input)
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(0)
    y = apply(Col2ImBackward0, x, size, kernel, dilation, padding, stride)
    return y if batched else y.squeeze(0)
