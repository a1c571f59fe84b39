"""Shapes of sliding-window ops (convolution, pooling) on ``(N, C, H, W)`` arrays.

Array-level arithmetic only, shared by the generic op forwards in ``nn.functional`` and by the
backends' specialised forwards (the CUDA backend's im2col convolution), so that both compute the
same output sizes.

- :func:`out_size`: window positions along one dim (PyTorch's rule, with ``ceil_mode``);
- :func:`conv_out_hw` / :func:`transposed_conv_out_hw`: the two spatial sizes of a
  convolution's / transposed convolution's output;
- :func:`as_4d` / :func:`as_nd`: 1-D convolutions run as 2-D ones with a height of 1.
"""
__all__ = ["out_size", "conv_out_hw", "transposed_conv_out_hw", "as_4d", "as_nd"]


def out_size(size, kernel, stride, pad_before, pad_after, dilation, ceil_mode=False):
    """Number of window positions along one dim (PyTorch's rule, incl. ceil_mode's rule that the
    last window must start inside the input or the left padding)."""
    span = size + pad_before + pad_after - dilation * (kernel - 1) - 1
    n = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (n - 1) * stride >= size + pad_before:
        n -= 1
    return n


def conv_out_hw(x_shape, w_shape, stride, padding, dilation):
    """``(Ho, Wo)`` of a convolution of an ``(N, C, H, W)`` input by ``(O, C/g, kh, kw)`` weights;
    ``padding`` holds ``(before, after)`` per spatial dim."""
    return tuple(out_size(x_shape[2 + d], w_shape[2 + d], stride[d], padding[d][0], padding[d][1], dilation[d])
                 for d in range(2))


def transposed_conv_out_hw(x_shape, w_shape, stride, padding, dilation, output_padding):
    """``(Ho, Wo)`` of a transposed convolution (the input size of the convolution it reverses,
    plus ``output_padding``)."""
    return tuple((x_shape[2 + d] - 1) * stride[d] - padding[d][0] - padding[d][1]
                 + dilation[d] * (w_shape[2 + d] - 1) + output_padding[d] + 1 for d in range(2))


def as_4d(a):
    """A 1-D-spatial array (N, C, L) as (N, C, 1, L) (a view); 4-D arrays as they are."""
    return a[:, :, None, :] if a.ndim == 3 else a


def as_nd(a, ndim):
    """The inverse of :func:`as_4d` for a result that should have ``ndim`` dims."""
    return a.reshape(a.shape[0], a.shape[1], a.shape[3]) if ndim == 3 else a
