"""Fractional max pooling (Graham, 2014): ``F.fractional_max_pool2d`` / ``3d`` and their
``_with_indices`` forms.

The output size is given (or a ratio of the input size) and the pooling windows, of a fixed size,
start at pseudo-random places: along a dim of ``n`` inputs, ``m`` outputs and window ``k``, with
``u`` uniform in [0, 1) per (sample, channel) and dim, window ``i < m - 1`` starts at
``int((i + u) * a) - int(u * a)`` with ``a = (n - k) / (m - 1)``, the last one at ``n - k``.
``u`` comes from ``_random_samples`` (N, C, dims) when given (the 2-d form reads the width's from
its entry 0 and the height's from entry 1; the 3-d form reads depth, height, width from 0, 1, 2,
as PyTorch does), else from the default generator of the input's device.

A composite: the window elements are gathered and their maximum taken, so the gradient reaches
the input through the chosen elements.
"""
from ..._tensor import _LEGACY_NAMES, Tensor
from ...ops.creation import arange, empty
from ...amp.autocast_mode import autocast_function

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices"]

_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}
_SAMPLE_ENTRY = {2: (1, 0), 3: (0, 1, 2)}   # which entry of a plane's samples each spatial dim reads


def _tuple(value, dims, name):
    if isinstance(value, (tuple, list)):
        if len(value) != dims:
            raise RuntimeError(f"{name} must either be a single int, or a tuple of {dims} ints")
        return tuple(value)
    return (value,) * dims


def _window_starts(samples, n, m, k):
    """(N, C, m) int64 starts of the windows along one dim from the planes' samples (N, C)."""
    if m <= 1:   # one window, at the end (or none)
        return (samples * 0).long().unsqueeze(-1).expand(tuple(samples.shape) + (m,)) + (n - k)
    alpha = (n - k) / (m - 1)
    steps = arange(m - 1, dtype=samples.dtype, device=samples.device)
    u = samples.unsqueeze(-1)
    inner = ((steps + u) * alpha).long() - (u * alpha).long()
    last = inner[..., :1] * 0 + (n - k)
    from ...ops.shape import cat
    return cat([inner, last], -1)


def _fractional_max_pool(dims, input, kernel_size, output_size, output_ratio, samples):
    name = f"fractional_max_pool{dims}d"
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    ndim = input._data.ndim
    if ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"{name}(): Expected {dims + 1}D or {dims + 2}D tensor, but got: {list(input.shape)}")
    x = input if ndim == dims + 2 else input.unsqueeze(0)
    n_batch, channels = x._data.shape[:2]
    sizes = x._data.shape[2:]
    kernel = _tuple(kernel_size, dims, "kernel_size")
    if output_size is None:
        ratio = tuple(output_ratio) if len(output_ratio) == dims else (output_ratio[0],) * dims
        output_size = tuple(int(s * r) for s, r in zip(sizes, ratio))
    out = _tuple(output_size, dims, "output_size")
    for d in range(dims):
        # PyTorch's bound: the 3-d form also refuses windows that would reach the last input exactly
        if out[d] + kernel[d] - 1 > sizes[d] - (dims == 3):
            label = _DIM_NAMES[dims][d]
            where = name if dims == 2 else name + "_out"
            raise RuntimeError(f"{where}(): pool {label} {kernel[d]} too large relative to input {label} {sizes[d]}")
    if x._dtype._category != 2:
        raise NotImplementedError(f"\"{name}_out_frame\" not implemented for '{_LEGACY_NAMES[x._dtype]}'")
    if samples is None:
        samples = empty((n_batch, channels, dims), dtype=x.dtype, device=x.device).uniform_()
    else:
        if samples._data.ndim != 3 or samples._data.shape[2] != dims:
            got = samples._data.shape[2] if samples._data.ndim == 3 else samples._data.ndim
            raise RuntimeError(f"Expect _random_samples.size(2) equals to {dims}; got {got}.")
        if tuple(samples._data.shape[:2]) != (n_batch, channels):
            raise RuntimeError(f"Expect _random_samples to have shape ({n_batch}, {channels}, {dims}); got "
                               f"{list(samples.shape)}.")
        samples = samples.detach()
    # flat input positions of every window element: (N, C, *out, *kernel)
    flat_index = None
    stride = 1
    for d in reversed(range(dims)):
        starts = _window_starts(samples[..., _SAMPLE_ENTRY[dims][d]], sizes[d], out[d], kernel[d])
        pos = starts.unsqueeze(-1) + arange(kernel[d], device=x.device)          # (N, C, out_d, k_d)
        shape = [n_batch, channels] + [1] * dims + [1] * dims
        shape[2 + d], shape[2 + dims + d] = out[d], kernel[d]
        term = pos.reshape(shape) * stride
        flat_index = term if flat_index is None else flat_index + term
        stride *= sizes[d]
    window, cells = 1, 1
    for k, o in zip(kernel, out):
        window, cells = window * k, cells * o
    flat_index = flat_index.expand([n_batch, channels] + list(out) + list(kernel)).reshape(
        n_batch, channels, cells, window)
    values = x.reshape(n_batch, channels, -1).gather(2, flat_index.reshape(n_batch, channels, cells * window))
    best, choice = values.reshape(n_batch, channels, cells, window).max(-1)
    indices = flat_index.gather(-1, choice.unsqueeze(-1)).squeeze(-1)
    best = best.reshape([n_batch, channels] + list(out))
    indices = indices.reshape([n_batch, channels] + list(out))
    if ndim == dims + 1:
        best, indices = best.squeeze(0), indices.squeeze(0)
    return best, indices


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``(output, indices)`` of a 2-d fractional max pooling of ``input`` (N, C, H, W) or (C, H, W);
    ``indices`` are flat positions in each input plane (``H * W``)."""
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)


@autocast_function("fractional_max_pool2d")
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """2-d fractional max pooling to ``output_size`` (or ``output_ratio`` of the input size, a
    tuple); with ``return_indices``, also the flat positions of the maxima."""
    result = _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return result if return_indices else result[0]


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``(output, indices)`` of a 3-d fractional max pooling of (N, C, T, H, W) or (C, T, H, W)."""
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)


@autocast_function("fractional_max_pool3d")
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """3-d fractional max pooling (see :func:`fractional_max_pool2d`)."""
    result = _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return result if return_indices else result[0]
