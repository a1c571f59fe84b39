"""Convolution layers: Conv1d/2d/3d, ConvTranspose1d/2d/3d.

Parameter names, layouts and initialisation are PyTorch's, so state dicts interchange:
``weight`` is ``(out_channels, in_channels/groups, *kernel_size)`` for a convolution and
``(in_channels, out_channels/groups, *kernel_size)`` for a transposed one; ``bias`` is
``(out_channels,)``. Both start from U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (``kaiming_uniform_``
with ``a=sqrt(5)`` for the weight; ``fan_in`` computed from the weight as PyTorch does).
"""
import math

from ..._tensor import Tensor
from ...ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n):
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,) * n


def _reverse_repeat_tuple(t, n):
    """``(a, b)`` -> ``(b, b, a, a)`` for ``n == 2``: F.pad's order (last dim first)."""
    return tuple(x for x in reversed(t) for _ in range(n))


class _ConvNd(Module):
    """What the convolution layers share: arguments, parameters, initialisation, repr, errors."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]
    _dims = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {{'replicate', 'zeros', 'circular', 'reflect'}}, but "
                             f"got padding_mode='{padding_mode}'")
        kernel_size = _ntuple(kernel_size, n)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            pads = [0, 0] * n
            if padding == "same":
                for d, k, i in zip(self.dilation, kernel_size, range(n - 1, -1, -1)):
                    total = d * (k - 1)
                    pads[2 * i] = total // 2
                    pads[2 * i + 1] = total - total // 2
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(self.padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        n = len(self.kernel_size)
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"

    # -- errors that name the layer ---------------------------------------------
    def _expected_shape(self):
        spatial = {1: "L", 2: "H, W", 3: "D, H, W"}[self._dims]
        c = self.in_channels
        return f"(N, {c}, {spatial}) (batched) or ({c}, {spatial}) (unbatched)"

    def _call(self, fn, input, *args):
        try:
            return fn(input, *args)
        except RuntimeError as e:
            msg = str(e)
            if isinstance(input, Tensor) and ("input to conv" in msg or "channels instead" in msg
                                              or "Kernel size can't be greater" in msg
                                              or "-dimensional input" in msg):
                raise RuntimeError(f"{self._get_name()}({self.extra_repr()}) expected input of shape "
                                   f"{self._expected_shape()}, got input of size {list(input.shape)}: "
                                   f"{msg}") from None
            raise


class _Conv(_ConvNd):
    _functional = None

    def _conv_forward(self, input, weight, bias):
        fn = type(self)._functional
        if self.padding_mode != "zeros" and isinstance(input, Tensor) and input.dim() in (self._dims + 1,
                                                                                        self._dims + 2):
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._call(self._conv_forward, input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution: input ``(N, C_in, L)`` or ``(C_in, L)`` -> ``(N, C_out, L_out)``.

    ``L_out = (L + 2*padding - dilation*(kernel_size-1) - 1) // stride + 1``; ``padding`` may be
    ``"valid"`` or ``"same"``; ``padding_mode`` one of zeros/reflect/replicate/circular.
    """
    _dims = 1
    _functional = staticmethod(F.conv1d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups,
                         bias, padding_mode, device, dtype)


class Conv2d(_Conv):
    """2-D convolution: input ``(N, C_in, H, W)`` or ``(C_in, H, W)`` -> ``(N, C_out, H_out, W_out)``.

    ``H_out = (H + 2*padding[0] - dilation[0]*(kernel_size[0]-1) - 1) // stride[0] + 1`` (likewise W);
    ``padding`` may be ``"valid"`` or ``"same"``; ``groups`` splits the channels into independent
    convolutions (``groups == in_channels``: depthwise); ``padding_mode`` one of
    zeros/reflect/replicate/circular.
    """
    _dims = 2
    _functional = staticmethod(F.conv2d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups,
                         bias, padding_mode, device, dtype)


class Conv3d(_Conv):
    """3-D convolution: input ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)`` ->
    ``(N, C_out, D_out, H_out, W_out)``, each size as in :class:`Conv2d`; ``padding`` may be
    ``"valid"`` or ``"same"``; ``padding_mode`` one of zeros/reflect/replicate/circular.
    """
    _dims = 3
    _functional = staticmethod(F.conv3d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups,
                         bias, padding_mode, device, dtype)


class _ConvTransposeNd(_ConvNd):
    _functional = None

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                 dilation, padding_mode, device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True,
                         output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        """The output_padding that makes the output ``output_size`` (PyTorch's rule and errors)."""
        if output_size is None:
            return self.output_padding
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial = 2 if has_batch_dim else 1
        output_size = list(output_size)
        if len(output_size) == num_non_spatial + num_spatial_dims:
            output_size = output_size[num_non_spatial:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                             f"{num_spatial_dims} or {num_non_spatial + num_spatial_dims} elements (got "
                             f"{len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            size = ((input.size(d + num_non_spatial) - 1) * stride[d] - 2 * padding[d]
                    + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)
            min_sizes.append(size)
            max_sizes.append(size + stride[d] - 1)
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                 f"{min_sizes} to {max_sizes} (for an input of {input.size()[-num_spatial_dims:]})")
        return tuple(output_size[d] - min_sizes[d] for d in range(num_spatial_dims))

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size,
                                              self._dims, self.dilation)
        return self._call(type(self)._functional, input, self.weight, self.bias, self.stride, self.padding,
                          output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution: input ``(N, C_in, L)`` or ``(C_in, L)`` -> ``(N, C_out, L_out)`` with
    ``L_out = (L-1)*stride - 2*padding + dilation*(kernel_size-1) + output_padding + 1``; ``forward``
    accepts ``output_size`` to pick the output_padding."""
    _dims = 1
    _functional = staticmethod(F.conv_transpose1d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution: input ``(N, C_in, H, W)`` or ``(C_in, H, W)`` ->
    ``(N, C_out, H_out, W_out)`` with
    ``H_out = (H-1)*stride[0] - 2*padding[0] + dilation[0]*(kernel_size[0]-1) + output_padding[0] + 1``;
    ``forward`` accepts ``output_size`` to pick the output_padding."""
    _dims = 2
    _functional = staticmethod(F.conv_transpose2d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution: input ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)`` ->
    ``(N, C_out, D_out, H_out, W_out)``, each size as in :class:`ConvTranspose2d`; ``forward``
    accepts ``output_size`` to pick the output_padding."""
    _dims = 3
    _functional = staticmethod(F.conv_transpose3d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype)
