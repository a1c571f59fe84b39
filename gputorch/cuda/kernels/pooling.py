"""Launch wrappers of ``kernels/pooling.cu``: 2-D max pooling (with flat indices) and average
pooling over ``(*, H, W)`` arrays, and their gradients (gathered per input element)."""
import math

from ._launch import BLOCK, blocks, contiguous, ctype, i32, i64
from ._module import function
from ._source import TYPES, family

FAMILY = family("pooling", "pooling.cu", [f"{k}<{t}>" for k in ("max_pool2d_forward", "max_pool2d_backward",
                                                                 "avg_pool2d_forward", "avg_pool2d_backward")
                                          for t in TYPES])


def _window(kernel, stride, padding, dilation=(1, 1)):
    return tuple(i32(v) for v in (*kernel, *stride, *padding, *dilation))


def max_pool2d(xp, x, kernel, stride, padding, dilation, out_hw):
    """``(out, indices)``: the window maxima and their flat ``H * W`` indices (int64); None when
    the kernels do not take x's dtype."""
    t = ctype(x.dtype)
    if t is None:
        return None
    lead, (h, w) = x.shape[:-2], x.shape[-2:]
    planes = math.prod(lead)
    ho, wo = out_hw
    out = xp.empty(lead + (ho, wo), dtype=x.dtype)
    indices = xp.empty(lead + (ho, wo), dtype=xp.int64)
    if out.size:
        args = (contiguous(xp, x), out, indices, i64(planes), i64(h), i64(w), i64(ho), i64(wo),
                *_window(kernel, stride, padding, dilation))
        function(FAMILY.name, f"max_pool2d_forward<{t}>")((blocks(out.size),), (BLOCK,), args)
    return out, indices


def max_pool2d_backward(xp, grad, indices, x_shape, kernel, stride, padding, dilation):
    """``grad`` added at the winning ``indices`` of each window into an ``x_shape`` array."""
    t = ctype(grad.dtype)
    if t is None:
        return None
    planes = math.prod(x_shape[:-2])
    h, w = x_shape[-2:]
    ho, wo = grad.shape[-2:]
    gx = xp.empty(tuple(x_shape), dtype=grad.dtype)
    if gx.size:
        args = (contiguous(xp, grad), contiguous(xp, indices.astype(xp.int64, copy=False)), gx, i64(planes), i64(h),
                i64(w), i64(ho), i64(wo), *_window(kernel, stride, padding, dilation))
        function(FAMILY.name, f"max_pool2d_backward<{t}>")((blocks(gx.size),), (BLOCK,), args)
    return gx


def _divisor(divisor_override):
    return i64(divisor_override if divisor_override else 0)


def avg_pool2d(xp, x, kernel, stride, padding, out_hw, count_include_pad, divisor_override):
    """Window means (PyTorch's divisor rules); None when the kernels do not take x's dtype."""
    t = ctype(x.dtype)
    if t is None:
        return None
    lead, (h, w) = x.shape[:-2], x.shape[-2:]
    ho, wo = out_hw
    out = xp.empty(lead + (ho, wo), dtype=x.dtype)
    if out.size:
        args = (contiguous(xp, x), out, i64(math.prod(lead)), i64(h), i64(w), i64(ho), i64(wo),
                *_window(kernel, stride, padding)[:6], i32(bool(count_include_pad)), _divisor(divisor_override))
        function(FAMILY.name, f"avg_pool2d_forward<{t}>")((blocks(out.size),), (BLOCK,), args)
    return out


def avg_pool2d_backward(xp, grad, x_shape, kernel, stride, padding, count_include_pad, divisor_override):
    """The input gradient of average pooling: ``grad / divisor`` summed over the windows."""
    t = ctype(grad.dtype)
    if t is None:
        return None
    h, w = x_shape[-2:]
    ho, wo = grad.shape[-2:]
    gx = xp.empty(tuple(x_shape), dtype=grad.dtype)
    if gx.size:
        args = (contiguous(xp, grad), gx, i64(math.prod(x_shape[:-2])), i64(h), i64(w), i64(ho), i64(wo),
                *_window(kernel, stride, padding)[:6], i32(bool(count_include_pad)), _divisor(divisor_override))
        function(FAMILY.name, f"avg_pool2d_backward<{t}>")((blocks(gx.size),), (BLOCK,), args)
    return gx
