"""``gputorch.signal.windows``: window functions of ``M`` samples, as ``torch.signal.windows``.

Each window is a composite of tensor ops on the sample positions, so it is differentiable in its
inputs' sense (``requires_grad=True`` makes the positions require a gradient, as PyTorch does).
With ``sym=True`` (the default) the window is symmetric, for filter design; with ``sym=False`` it is
periodic, for spectral analysis: the first ``M`` samples of the symmetric window of ``M + 1``.
Writing ``N`` for that point count (``M`` or ``M + 1``) and ``n = 0 .. M-1``:

- ``gaussian``: ``exp(-k^2 / (2 std^2))`` with ``k = n - (N - 1) / 2``;
- ``exponential``: ``exp(-|n - center| / tau)``, ``center`` ``(N - 1) / 2`` unless given (periodic only);
- ``cosine``: ``sin(pi (n + 1/2) / N)``;
- ``general_cosine``: ``sum_i (-1)^i a_i cos(2 pi i n / (N - 1))``; ``hann``, ``hamming``
  (``general_hamming``, ``a = [alpha, 1 - alpha]``), ``blackman`` and ``nuttall`` are instances;
- ``bartlett``: ``1 - |2 n / (N - 1) - 1|``;
- ``kaiser``: ``I0(beta sqrt(1 - (k / ((N - 1) / 2))^2)) / I0(beta)``.

``M = 0`` gives an empty window and ``M = 1`` the window ``[1]`` (for ``exponential`` with a
``center``: its value at sample 0). Bad arguments raise ValueError
(TypeError for coefficients that are not a list or tuple), as in PyTorch.
"""
import math

from .. import _dtype
from .._layouts import strided
from ..ops.creation import arange, ones, tensor, zeros
from ..ops.special_functions import i0

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]

_NUTTALL = [0.3635819, 0.4891775, 0.1365995, 0.0106411]


def _samples(name, M, sym, dtype, layout, device, requires_grad):
    """``(n, N)``: positions ``0 .. M-1`` (float, of ``dtype``) and the point count, or
    ``(window, None)`` for ``M`` of 0 and 1, whose windows are fixed."""
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    dt = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    if dt not in (_dtype.float32, _dtype.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dt}")
    if M <= 1:
        make = zeros if M == 0 else ones
        return make(M, dtype=dt, device=device, requires_grad=requires_grad), None
    return arange(M, dtype=dt, device=device, requires_grad=requires_grad), (M if sym else M + 1)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """A Gaussian window of standard deviation ``std`` samples (``(M,)``)."""
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    n, N = _samples("gaussian", M, sym, dtype, layout, device, requires_grad)
    if N is None:
        return n
    k = n - (N - 1) / 2
    return (-(k * k) / (2 * std * std)).exp()


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided, device=None,
                requires_grad=False):
    """An exponential (Poisson) window decaying by ``e`` every ``tau`` samples from ``center``."""
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    n, N = _samples("exponential", M, sym, dtype, layout, device, requires_grad)
    if N is None and (M == 0 or center is None):
        return n
    c = (N - 1) / 2 if center is None else center       # a given center moves even one sample
    if N is None:
        n = n - 1
    return (-(n - c).abs() / tau).exp()


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """A cosine (sine) window: half a sine period over the ``N`` points."""
    n, N = _samples("cosine", M, sym, dtype, layout, device, requires_grad)
    if N is None:
        return n
    return ((n + 0.5) * (math.pi / N)).sin()


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """A sum of cosines with coefficients ``a`` (a list or tuple; see the module docstring)."""
    n, N = _samples("general_cosine", M, sym, dtype, layout, device, requires_grad)
    if N is None:                               # as in PyTorch, ``a`` is not looked at for M <= 1
        return n
    if not isinstance(a, (list, tuple)):
        raise TypeError(f"Coefficients must be a list/tuple, got {type(a).__name__}")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * math.pi / (N - 1)
    window = None
    for i, coefficient in enumerate(a):
        term = (n * (i * step)).cos() * (coefficient if i % 2 == 0 else -coefficient)
        window = term if window is None else window + term
    return window


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """``general_cosine`` with ``a = [alpha, 1 - alpha]``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Hann window: ``general_hamming`` with ``alpha = 0.5``."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Hamming window: ``general_hamming`` with ``alpha = 0.54``."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Blackman window: ``general_cosine`` with ``a = [0.42, 0.5, 0.08]``."""
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Nuttall's minimum four-term Blackman-Harris window (a ``general_cosine``)."""
    return general_cosine(M, a=_NUTTALL, sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Bartlett (triangular, zero at both ends) window."""
    n, N = _samples("bartlett", M, sym, dtype, layout, device, requires_grad)
    if N is None:
        return n
    return 1 - (n * (2 / (N - 1)) - 1).abs()


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Kaiser window of shape parameter ``beta`` (0: rectangular; larger: narrower)."""
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    n, N = _samples("kaiser", M, sym, dtype, layout, device, requires_grad)
    if N is None:
        return n
    half = (N - 1) / 2
    ratio = (n - half) / half
    beta_t = tensor(float(beta), dtype=n.dtype, device=n.device)
    return i0((1 - ratio * ratio).clamp(min=0).sqrt() * beta) / i0(beta_t)
