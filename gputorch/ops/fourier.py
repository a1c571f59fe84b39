"""Discrete Fourier transforms: the 22 functions of ``torch.fft``, built on three primitives.

- ``C2C``: complex to complex over some dims, forward (``exp(-2 pi i jk/n)``) or inverse sign;
- ``R2C``: real to the one-sided complex spectrum over the last dim (``n // 2 + 1`` entries);
- ``C2R``: a one-sided (Hermitian) spectrum to a real signal of length ``n`` over the last dim.

Each computes the unnormalised sum on the backend's ``xp.fft`` (NumPy's pocketfft, cuFFT through
CuPy) and multiplies it by a ``scale`` that the ``norm`` argument gives ("backward": none forward,
``1/n`` inverse; "ortho": ``1/sqrt(n)`` both ways; "forward": ``1/n`` forward, none inverse). The
gradient of each primitive is another primitive (the adjoint: the opposite sign with the same
scale; one-sided spectra pad or fold their missing half), so every transform is differentiable
any number of times. The multi-dim real transforms are a ``C2C`` over the leading dims composed
with an ``R2C``/``C2R`` over the last one, as NumPy's ``rfftn``/``irfftn`` are. The Hermitian
transforms are the real ones with conjugates: ``hfft(x) = irfft(conj(x))`` unnormalised.
"""
import math
import numbers

from .. import _dtype
from .._dispatch import apply
from ..autograd.node import Node
from ._common import require_tensor, xp_of
from .complex_numbers import conj_of
from ..amp.autocast_mode import autocast_function

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn",
           "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq",
           "fftshift", "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")


# ---------------------------------------------------------------- primitives
def _scaled(out, scale, dt):
    out = out.astype(dt.np, copy=False)
    if scale != 1:
        out *= dt.to_real().np.type(scale)
    return out


class FftC2CBackward0(Node):
    supports_complex = True

    def forward(ctx, a, dims, forward, scale):
        ctx.params = (dims, forward, scale)
        fft = xp_of(a).fft
        x = a._data
        out = fft.fftn(x, axes=dims, norm="backward") if forward else fft.ifftn(x, axes=dims, norm="forward")
        return _scaled(out, scale, a._dtype)

    def backward(ctx, grad):
        dims, forward, scale = ctx.params
        return apply(FftC2CBackward0, grad, dims, not forward, scale)


class FftR2CBackward0(Node):
    supports_complex = True

    def forward(ctx, a, dim, scale):
        ctx.params = (dim, scale, a._data.shape[dim])
        out = xp_of(a).fft.rfft(a._data, axis=dim, norm="backward")
        return _scaled(out, scale, a._dtype.to_complex())

    def backward(ctx, grad):
        # The spectrum's missing half is zero in the adjoint: pad, transform back, keep the real part.
        dim, scale, n = ctx.params
        full = _resize(grad, dim, n)
        return apply(FftC2CBackward0, full, (dim,), False, scale).real


class FftC2RBackward0(Node):
    supports_complex = True

    def forward(ctx, a, dim, n, scale):
        ctx.params = (dim, n, scale)
        out = xp_of(a).fft.irfft(a._data, n=n, axis=dim, norm="forward")
        return _scaled(out, scale, a._dtype.to_real())

    def backward(ctx, grad):
        # Entries 1 .. ceil(n/2)-1 of the one-sided input stand for two entries of the full spectrum.
        dim, n, scale = ctx.params
        spectrum = apply(FftR2CBackward0, grad, dim, scale)
        twice = (n - 1) // 2
        if twice < 1:
            return spectrum
        shape = [1] * grad.dim()
        shape[dim] = spectrum.shape[dim]
        weights = grad.new_ones(shape[dim])
        weights[1:1 + twice] = 2
        return spectrum * weights.reshape(shape)


# ---------------------------------------------------------------- arguments
def _check_norm(norm):
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _scale(norm, n, forward):
    """The factor that ``norm`` puts on a transform of ``n`` points in this direction."""
    if norm in (None, "backward"):
        return 1.0 if forward else 1.0 / n
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if forward else 1.0


def _as_float_input(name, x, want_complex):
    """``x`` promoted as torch.fft promotes: integers to the default float, reals to complex where
    the transform takes complex input (``_signal_dims`` has already refused float16)."""
    if x._dtype._category < 2:
        x = x.to(_dtype.get_default_dtype())
    if want_complex and not x._dtype.is_complex:
        x = x.to(x._dtype.to_complex())
    return x


def _resize(x, dim, size):
    """``x`` cut to or zero-padded to ``size`` along ``dim`` (differentiable)."""
    have = x.shape[dim]
    if have == size:
        return x
    if have > size:
        return x.narrow(dim, 0, size)
    from .shape import cat
    shape = list(x.shape)
    shape[dim] = size - have
    return cat([x, x.new_zeros(shape)], dim)


def _wrap_dim(x, d):
    ndim = x.dim()
    if not isinstance(d, numbers.Integral) or isinstance(d, bool):
        raise TypeError(f"fft: dim must be an int, got {type(d).__name__}")
    if not ndim:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -ndim <= d < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
    return d % ndim if ndim else 0


def _signal_dims(x, s, dim, default_all):
    """``(sizes or None, dims)`` for the n-dim transforms' ``s`` and ``dim`` arguments."""
    require_tensor("fft", x)
    if x._dtype is _dtype.float16:   # no half-precision FFT on the CPU; checked before the dims, as PyTorch does
        raise RuntimeError("Unsupported dtype Half")
    if dim is not None:
        dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
        dims = tuple(_wrap_dim(x, d) for d in dims)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > x.dim():
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {x.dim()} dimensions.")
        dims = tuple(range(x.dim() - len(s), x.dim()))
    else:
        dims = tuple(range(x.dim())) if default_all else tuple(range(x.dim()))[-2:]
    if s is not None:
        s = tuple(int(v) for v in s)
        for v in s:
            if v != -1 and v < 1:
                raise RuntimeError(f"Invalid number of data points ({v}) specified")
    return s, dims


def _resized(x, dims, s):
    """``x`` cut or padded to the signal sizes ``s`` over ``dims``; every transformed dim must have
    a point."""
    if s is not None:
        for d, size in zip(dims, s):
            if size != -1:
                x = _resize(x, d, size)
    for d in dims:
        if x.shape[d] == 0:
            raise RuntimeError("Invalid number of data points (0) specified")
    return x


def _require_dims(name, dims):
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")


def _require_real(name, x):
    require_tensor(name, x)
    if x._dtype.is_complex:
        raise RuntimeError(f"{name} expects a real-valued input tensor, but got {_dtype.legacy_name(x._dtype)}")


def _check_n(n):
    if n is not None and n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _out(result, out):
    return result if out is None else out.copy_(result)


# ---------------------------------------------------------------- complex transforms
def _c2c(name, x, s, dims, norm, forward):
    _check_norm(norm)
    x = _resized(_as_float_input(name, x, True), dims, s)
    if not dims:   # nothing to transform: the input as a complex tensor
        return x
    n = math.prod(x.shape[d] for d in dims)
    return apply(FftC2CBackward0, x, dims, forward, _scale(norm, n, forward))


@autocast_function("fft.fft")
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D discrete Fourier transform along ``dim`` (``n``: cut or zero-pad the signal first)."""
    s, dims = _signal_dims(input, None if n is None else (n,), (dim,), True)
    _check_n(n)
    return _out(_c2c("fft_fft", input, s, dims, norm, True), out)


@autocast_function("fft.ifft")
def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D inverse discrete Fourier transform along ``dim``."""
    s, dims = _signal_dims(input, None if n is None else (n,), (dim,), True)
    _check_n(n)
    return _out(_c2c("fft_ifft", input, s, dims, norm, False), out)


@autocast_function("fft.fft2")
def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D discrete Fourier transform (over the last two dims by default)."""
    s, dims = _signal_dims(input, s, dim, False)
    return _out(_c2c("fft_fft2", input, s, dims, norm, True), out)


@autocast_function("fft.ifft2")
def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D inverse discrete Fourier transform."""
    s, dims = _signal_dims(input, s, dim, False)
    return _out(_c2c("fft_ifft2", input, s, dims, norm, False), out)


@autocast_function("fft.fftn")
def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D discrete Fourier transform (over all dims, or the last ``len(s)``, by default)."""
    s, dims = _signal_dims(input, s, dim, True)
    return _out(_c2c("fft_fftn", input, s, dims, norm, True), out)


@autocast_function("fft.ifftn")
def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D inverse discrete Fourier transform."""
    s, dims = _signal_dims(input, s, dim, True)
    return _out(_c2c("fft_ifftn", input, s, dims, norm, False), out)


# ---------------------------------------------------------------- real-input transforms
def _r2c(name, x, s, dims, norm, forward):
    """The one-sided spectrum of real ``x`` over ``dims`` (halved along the last of them); with
    ``forward=False``, the conjugate of the inverse transform's (``ihfft``)."""
    _check_norm(norm)
    _require_real(name.replace("fft_", ""), x)
    _require_dims(name.replace("fft_", ""), dims)
    x = _resized(_as_float_input(name, x, False), dims, s)
    n = math.prod(x.shape[d] for d in dims)
    scale = _scale(norm, n, forward)
    result = apply(FftR2CBackward0, x, dims[-1], scale)
    if len(dims) > 1:
        result = apply(FftC2CBackward0, result, dims[:-1], True, 1.0)
    return result if forward else conj_of(result)


def _c2r(name, x, s, dims, norm, forward):
    """The real signal of the one-sided spectrum ``x`` over ``dims`` (its last dim has ``n // 2 + 1``
    entries, ``n`` the last of ``s`` or ``2 * (m - 1)``); with ``forward=True``, the Hermitian
    transform (``hfft``: the forward transform of the Hermitian-symmetric signal)."""
    _check_norm(norm)
    _require_dims(name.replace("fft_", ""), dims)
    x = _as_float_input(name, x, True)
    last = dims[-1]
    n = s[-1] if s is not None and s[-1] != -1 else 2 * (x.shape[last] - 1)
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    x = _resized(x, dims[:-1], None if s is None else s[:-1])
    x = _resize(x, last, n // 2 + 1)
    if forward:
        x = conj_of(x)
    total = n * math.prod(x.shape[d] for d in dims[:-1])
    scale = _scale(norm, total, forward)
    if len(dims) > 1:
        x = apply(FftC2CBackward0, x, dims[:-1], False, 1.0)
    return apply(FftC2RBackward0, x, last, n, scale)


@autocast_function("fft.rfft")
def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-sided 1-D transform of a real signal: ``n // 2 + 1`` frequencies."""
    _require_real("rfft", input)
    s, dims = _signal_dims(input, None if n is None else (n,), (dim,), True)
    _check_n(n)
    return _out(_r2c("fft_rfft", input, s, dims, norm, True), out)


@autocast_function("fft.irfft")
def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The real signal (length ``n``, default ``2 * (m - 1)``) of a one-sided spectrum."""
    s, dims = _signal_dims(input, None if n is None else (n,), (dim,), True)
    _check_n(n)
    return _out(_c2r("fft_irfft", input, s, dims, norm, False), out)


@autocast_function("fft.rfft2")
def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    s, dims = _signal_dims(input, s, dim, False)
    return _out(_r2c("fft_rfft2", input, s, dims, norm, True), out)


@autocast_function("fft.irfft2")
def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    s, dims = _signal_dims(input, s, dim, False)
    return _out(_c2r("fft_irfft2", input, s, dims, norm, False), out)


@autocast_function("fft.rfftn")
def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    s, dims = _signal_dims(input, s, dim, True)
    return _out(_r2c("fft_rfftn", input, s, dims, norm, True), out)


@autocast_function("fft.irfftn")
def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    s, dims = _signal_dims(input, s, dim, True)
    return _out(_c2r("fft_irfftn", input, s, dims, norm, False), out)


# ---------------------------------------------------------------- Hermitian transforms
@autocast_function("fft.hfft")
def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The real spectrum of a signal with Hermitian symmetry, given by its one-sided half."""
    s, dims = _signal_dims(input, None if n is None else (n,), (dim,), True)
    _check_n(n)
    return _out(_c2r("fft_hfft", input, s, dims, norm, True), out)


@autocast_function("fft.ihfft")
def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`hfft`: the one-sided half of a real signal's inverse transform."""
    _require_real("ihfft", input)
    s, dims = _signal_dims(input, None if n is None else (n,), (dim,), True)
    _check_n(n)
    return _out(_r2c("fft_ihfft", input, s, dims, norm, False), out)


@autocast_function("fft.hfft2")
def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    s, dims = _signal_dims(input, s, dim, False)
    return _out(_c2r("fft_hfft2", input, s, dims, norm, True), out)


@autocast_function("fft.ihfft2")
def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    s, dims = _signal_dims(input, s, dim, False)
    return _out(_r2c("fft_ihfft2", input, s, dims, norm, False), out)


@autocast_function("fft.hfftn")
def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    s, dims = _signal_dims(input, s, dim, True)
    return _out(_c2r("fft_hfftn", input, s, dims, norm, True), out)


@autocast_function("fft.ihfftn")
def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    s, dims = _signal_dims(input, s, dim, True)
    return _out(_r2c("fft_ihfftn", input, s, dims, norm, False), out)


# ---------------------------------------------------------------- frequencies and shifts
def _frequencies(count, n, d, dtype, device, wrap):
    """``[0, 1, ..., count - 1] * (1 / (d * n))`` in ``dtype`` (the default float when None); with
    ``wrap``, the second half of the indices less ``n`` first (negative frequencies)."""
    from .creation import arange
    dt = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    k = arange(count, dtype=dt, device=device)
    if wrap:
        k[(n + 1) // 2:] -= n
    k.mul_(1.0 / (n * d) if n * d else math.inf)
    return k


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``:
    ``[0, 1, ..., ceil(n/2)-1, -floor(n/2), ..., -1] / (d * n)``."""
    return _out(_frequencies(n, n, d, dtype, device, True).requires_grad_(requires_grad), out)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``n``-point real transform: ``[0, 1, ..., n // 2] / (d * n)``."""
    return _out(_frequencies(n // 2 + 1, n, d, dtype, device, False).requires_grad_(requires_grad), out)


def _shift(name, input, dim, direction):
    require_tensor(name, input)
    if dim is None:
        dims = tuple(range(input.dim()))
    else:
        dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
    if not dims:
        raise RuntimeError("`shifts` required")
    return input.roll([direction * (input.shape[d] // 2) for d in dims], dims)


def fftshift(input, dim=None):
    """Move the zero frequency to the centre: roll each of ``dim`` (all by default) by ``n // 2``."""
    return _shift("fftshift", input, dim, 1)


def ifftshift(input, dim=None):
    """The inverse of :func:`fftshift`: roll each of ``dim`` by ``-(n // 2)``."""
    return _shift("ifftshift", input, dim, -1)
