"""Window functions for spectral analysis: ``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window``, ``kaiser_window``.

Each gives ``window_length`` samples of a window of ``N`` points, ``N = window_length + 1`` when
``periodic`` (the default: the last sample of the symmetric window dropped, as an FFT frame wants)
and ``N = window_length`` otherwise; with ``t = 2 pi n / (N - 1)``:

- hamming: ``alpha - beta cos(t)`` (hann is alpha = beta = 1/2);
- blackman: ``0.42 - 0.5 cos(t) + 0.08 cos(2 t)``;
- bartlett: ``1 - |2 n / (N - 1) - 1|``;
- kaiser: ``I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)``.

A window of length 0 is empty and one of length 1 is ``[1]``.
"""
import math

from .. import _dtype
from .creation import arange, ones, zeros

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


def _positions(name, window_length, periodic, dtype, device, requires_grad):
    """``(n, N)``: the sample indices 0 .. window_length-1 as a float tensor and the symmetric
    window's point count; ``None`` for the lengths 0 and 1, whose window is fixed."""
    dt = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if window_length <= 1:
        make = zeros if window_length == 0 else ones
        return make(window_length, dtype=dt, device=device, requires_grad=requires_grad), None
    points = window_length + 1 if periodic else window_length
    return arange(window_length, dtype=dt, device=device), points


def _finish(window, requires_grad):
    return window.detach().requires_grad_(requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None,
                   device=None, pin_memory=False, requires_grad=False):
    """``alpha - beta cos(2 pi n / (N - 1))`` (see the module docstring for ``N``)."""
    n, points = _positions("hamming_window", window_length, periodic, dtype, device, requires_grad)
    if points is None:
        return n
    return _finish(alpha - beta * (n * (2 * math.pi / (points - 1))).cos(), requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    """``0.5 - 0.5 cos(2 pi n / (N - 1))``."""
    n, points = _positions("hann_window", window_length, periodic, dtype, device, requires_grad)
    if points is None:
        return n
    return _finish(0.5 - 0.5 * (n * (2 * math.pi / (points - 1))).cos(), requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    n, points = _positions("blackman_window", window_length, periodic, dtype, device, requires_grad)
    if points is None:
        return n
    t = n * (2 * math.pi / (points - 1))
    return _finish(0.42 - 0.5 * t.cos() + 0.08 * (2 * t).cos(), requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """``1 - |2 n / (N - 1) - 1|``: a triangle."""
    n, points = _positions("bartlett_window", window_length, periodic, dtype, device, requires_grad)
    if points is None:
        return n
    return _finish(1 - (n * (2 / (points - 1)) - 1).abs(), requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    """``I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)``."""
    n, points = _positions("kaiser_window", window_length, periodic, dtype, device, requires_grad)
    if points is None:
        return n
    from .special_functions import i0
    ratio = n * (2 / (points - 1)) - 1
    inside = (1 - ratio * ratio).clamp(min=0).sqrt()
    return _finish(i0(beta * inside) / i0(n.new_tensor(beta)), requires_grad)
