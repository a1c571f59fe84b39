"""Pooling layers: MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d,
MaxUnpool1d/2d/3d, LPPool1d/2d/3d, FractionalMaxPool2d/3d.

Thin modules over ``nn.functional``'s pooling ops; they hold the arguments, print them like
PyTorch, and name the layer and the expected input shape when the input is wrong.
"""
from ..._tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
           "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d"]

_SHAPE_ERRORS = ("tensor expected for input", "tensor with optional 0 dim batch size", "-dimensional tensor for",
                 "Expected 3D or 4D tensor", "Expected 4D or 5D tensor", "Output size is too small",
                 "Invalid computed output size", "non-zero size for non-batch dimensions")


class _Pool(Module):
    _dims = 2

    def _expected_shape(self):
        spatial = {1: "L", 2: "H, W", 3: "D, H, W"}[self._dims]
        return f"(N, C, {spatial}) (batched) or (C, {spatial}) (unbatched)"

    def _call(self, fn, input, *args, **kwargs):
        try:
            return fn(input, *args, **kwargs)
        except RuntimeError as e:
            msg = str(e)
            if isinstance(input, Tensor) and any(s in msg for s in _SHAPE_ERRORS):
                raise RuntimeError(f"{self._get_name()}({self.extra_repr()}) expected input of shape "
                                   f"{self._expected_shape()}, got input of size {list(input.shape)}: "
                                   f"{msg}") from None
            raise


class _MaxPoolNd(_Pool):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling: ``(N, C, L)`` or ``(C, L)`` -> ``(N, C, L_out)``; see :func:`F.max_pool1d`."""
    _dims = 1

    def forward(self, input):
        return self._call(F.max_pool1d, input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling: ``(N, C, H, W)`` or ``(C, H, W)`` -> ``(N, C, H_out, W_out)`` with
    ``H_out = floor_or_ceil((H + 2*padding - dilation*(kernel-1) - 1) / stride) + 1``;
    ``return_indices`` also returns the flat H*W index of each maximum."""

    def forward(self, input):
        return self._call(F.max_pool2d, input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling: ``(N, C, D, H, W)`` or ``(C, D, H, W)`` -> ``(N, C, D_out, H_out, W_out)``, each size
    as in :class:`MaxPool2d`; ``return_indices`` also returns the flat D*H*W index of each maximum."""
    _dims = 3

    def forward(self, input):
        return self._call(F.max_pool3d, input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(_Pool):
    """1-D average pooling: ``(N, C, L)`` or ``(C, L)`` -> ``(N, C, L_out)``."""
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]
    _dims = 1

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input):
        return self._call(F.avg_pool1d, input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)


class AvgPool2d(_Pool):
    """2-D average pooling: ``(N, C, H, W)`` or ``(C, H, W)`` -> ``(N, C, H_out, W_out)``; the divisor is
    ``divisor_override`` or the window size (counting the zero padding with ``count_include_pad``)."""
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input):
        return self._call(F.avg_pool2d, input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)


class AvgPool3d(AvgPool2d):
    """3-D average pooling: ``(N, C, D, H, W)`` or ``(C, D, H, W)`` -> ``(N, C, D_out, H_out, W_out)``;
    divisor rules as :class:`AvgPool2d`."""
    _dims = 3

    def forward(self, input):
        return self._call(F.avg_pool3d, input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)


def _single(value):
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


class _AdaptivePool(_Pool):
    __constants__ = ["output_size"]

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average over adaptive windows so that ``(N, C, L)`` -> ``(N, C, output_size)``."""
    _dims = 1

    def forward(self, input):
        return self._call(F.adaptive_avg_pool1d, input, self.output_size)


class AdaptiveAvgPool2d(_AdaptivePool):
    """Average over adaptive windows so that ``(N, C, H, W)`` -> ``(N, C, *output_size)`` (``None`` in
    ``output_size`` keeps that input size)."""

    def forward(self, input):
        return self._call(F.adaptive_avg_pool2d, input, self.output_size)


class _AdaptiveMaxPool(_AdaptivePool):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Maximum over adaptive windows so that ``(N, C, L)`` -> ``(N, C, output_size)``."""
    _dims = 1

    def forward(self, input):
        return self._call(F.adaptive_max_pool1d, input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """Maximum over adaptive windows so that ``(N, C, H, W)`` -> ``(N, C, *output_size)``;
    ``return_indices`` also returns the flat H*W index of each maximum."""

    def forward(self, input):
        return self._call(F.adaptive_max_pool2d, input, self.output_size, self.return_indices)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Average over adaptive windows so that ``(N, C, D, H, W)`` -> ``(N, C, *output_size)`` (``None`` in
    ``output_size`` keeps that input size)."""
    _dims = 3

    def forward(self, input):
        return self._call(F.adaptive_avg_pool3d, input, self.output_size)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Maximum over adaptive windows so that ``(N, C, D, H, W)`` -> ``(N, C, *output_size)``;
    ``return_indices`` also returns the flat D*H*W index of each maximum."""
    _dims = 3

    def forward(self, input):
        return self._call(F.adaptive_max_pool3d, input, self.output_size, self.return_indices)


def _ntuple(value, n):
    return tuple(value) if isinstance(value, (list, tuple)) else (value,) * n


class _MaxUnpoolNd(Module):
    """The partial inverse of max pooling: ``forward(input, indices, output_size=None)``."""
    _dims = 2
    _functional = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = self._dims
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, n)
        self.padding = _ntuple(padding, n)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input, indices, output_size=None):
        return type(self)._functional(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    """Puts each value of ``(N, C, L)`` at its index from :class:`MaxPool1d` in a zero ``(N, C, L_out)``,
    ``L_out = (L-1)*stride - 2*padding + kernel_size`` (or ``output_size``)."""
    _dims = 1
    _functional = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of :class:`MaxPool2d` on ``(N, C, H, W)``; see :class:`MaxUnpool1d`."""
    _functional = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of :class:`MaxPool3d` on ``(N, C, D, H, W)``; see :class:`MaxUnpool1d`."""
    _dims = 3
    _functional = staticmethod(F.max_unpool3d)


class _LPPoolNd(Module):
    """Power-average pooling ``(sum over window of x**p) ** (1/p)``, ``p = norm_type``."""
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _functional = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")

    def forward(self, input):
        return type(self)._functional(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool1d(_LPPoolNd):
    """Power-average pooling over ``(N, C, L)`` or ``(C, L)``; see :func:`F.lp_pool1d`."""
    _functional = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over ``(N, C, H, W)`` or ``(C, H, W)``."""
    _functional = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    _functional = staticmethod(F.lp_pool3d)


class _FractionalMaxPoolNd(Module):
    """Max pooling over windows of ``kernel_size`` at pseudo-random places, to ``output_size`` or to
    ``output_ratio`` (in (0, 1)) of the input size; see :func:`F.fractional_max_pool2d`. A
    ``_random_samples`` tensor (N, C, dims), kept as a buffer, fixes the places."""
    _dims = 2
    _functional = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        dims = self._dims

        def as_tuple(value):
            return tuple(value) if isinstance(value, (tuple, list)) else (value,) * dims
        self.kernel_size = as_tuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = as_tuple(output_size) if output_size is not None else None
        self.output_ratio = as_tuple(output_ratio) if output_ratio is not None else None
        name = type(self).__name__
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return type(self)._functional(input, self.kernel_size, self.output_size, self.output_ratio,
                                      self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over ``(N, C, H, W)`` or ``(C, H, W)``."""
    _dims = 2
    _functional = staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over ``(N, C, T, H, W)`` or ``(C, T, H, W)``."""
    _dims = 3
    _functional = staticmethod(F.fractional_max_pool3d)
