"""Elementwise special functions beyond the error and gamma families: ``logit``, ``sinc``,
``entr``, ``xlog1py``, the normal distribution's ``ndtr``, ``log_ndtr`` and ``ndtri``, the
scaled complementary error function ``erfcx``, the modified Bessel functions ``i0``, ``i0e``,
``i1``, ``i1e``, the Hurwitz zeta function ``zeta``, the regularized incomplete gamma
functions ``igamma``/``igammac``, and (without gradient, as in PyTorch) ``modified_bessel_*``,
``scaled_modified_bessel_k*`` and ``spherical_bessel_j0``.

Each is a graph node whose forward runs on backend arrays (``xp``: NumPy or CuPy, the same
code for both) and whose backward is written with Tensor ops. Values are computed in float64
and rounded to the result dtype (the input's floating dtype; integer and bool inputs give the
default float dtype, as in PyTorch).

Methods (float64 relative error about 1e-15 against ``scipy.special``):

* ``ndtr(x) = erfc(-x / sqrt 2) / 2`` (accurate in the lower tail, where PyTorch's
  ``(1 + erf) / 2`` underflows to 0 from about x = -8.3); ``log_ndtr`` is
  ``log1p(-erfc(x / sqrt 2) / 2)`` for ``x >= -1`` and ``log(erfcx(-x / sqrt 2) / 2) - x**2 / 2``
  below, so it stays finite far into the tail.
* ``erfcx(x) = exp(x**2) erfc(x)`` for ``x < 1``; above, the tail fit
  ``erfcx(a) = t H(t)``, ``t = 3 / (3 + a)`` shared with ``special_math.erfc``.
* ``ndtri(p)``: with ``q = min(p, 1 - p)`` (exact), a first value from Abramowitz and Stegun
  26.2.23 (error below 5e-4), then four Newton steps on ``log_ndtr(y) = log(q)``, which
  converge quadratically and keep the relative accuracy down to ``q = 1e-300``.
* ``i0``, ``i1`` (and the exponentially scaled ``i0e``, ``i1e``): the power series
  ``(x/2)**nu sum (x**2/4)**k / (k! (k + nu)!)`` for ``|x| <= 18``; above, Hankel's
  asymptotic series ``exp(x) / sqrt(2 pi x) sum (-1)**k a_k(nu) / x**k`` (30 terms).
* ``K0``, ``K1``: the series at 0 up to x = 2, the trapezoidal rule on
  ``int_0^inf exp(-x cosh t) cosh(nu t) dt`` up to 18, Hankel's asymptotic series above.
* ``zeta(x, q)``: ``sum_{k<12} (q + k)**-x`` plus the Euler-Maclaurin tail at ``q + 12``
  (12 Bernoulli terms). Poles and domain as in PyTorch: ``x == 1`` gives inf, ``x < 1`` NaN,
  ``q`` a non-positive integer inf, ``q < 0`` with non-integer ``x`` NaN.
* ``igamma(a, x) = P(a, x)``, ``igammac = Q = 1 - P``: the power series of ``P`` where
  ``x < a + 1``, the continued fraction of ``Q`` (modified Lentz) elsewhere, each run until every
  element has converged (about 1e-13 relative against scipy; PyTorch's own is about 2e-9 off).
  Differentiable in ``x`` only, as in PyTorch.
"""
import math

import numpy as np

from .. import _dtype
from .._dispatch import apply, apply_inplace
from .._tensor import Tensor
from ..autograd.node import Node
from . import special_math
from .gamma_functions import _lgamma64, lgamma
from ._common import check_operand, grad_for, operand_arrays, quiet_errors, write_out, xp_of
from .comparison import where
from .pointwise._common import _require_tensor
from .registry import tensor_method

# torch.<name> exists for these; the others are reached through gputorch.special.
__all__ = ["logit", "logit_", "sinc", "sinc_", "i0", "i0_", "igamma", "igammac"]

_SQRT_HALF = math.sqrt(0.5)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# ================================================================ array kernels (float64)
def _horner(u, coefs):
    """``sum(coefs[k] * u**k)``."""
    p = u * 0.0 + coefs[-1]
    for c in coefs[-2::-1]:
        p = p * u + c
    return p


def _erfcx64(x, xp):
    a = xp.maximum(x, 1.0)
    t = special_math._T_SCALE / (special_math._T_SCALE + a)
    tail = t * _horner(t, special_math._ERFCX_TAIL)
    xs = xp.minimum(x, 1.0)
    direct = xp.exp(xs * xs) * special_math.erfc(xs, xp)
    return xp.where(x >= 1.0, tail, direct)


def _ndtr64(x, xp):
    return 0.5 * special_math.erfc(-x * _SQRT_HALF, xp)


def _log_ndtr64(x, xp):
    t = x * _SQRT_HALF
    upper = xp.log1p(-0.5 * special_math.erfc(xp.maximum(t, -_SQRT_HALF), xp))
    tl = xp.minimum(t, -_SQRT_HALF)
    lower = xp.log(0.5 * _erfcx64(-tl, xp)) - tl * tl
    return xp.where(x >= -1.0, upper, lower)


def _ndtri64(p, xp):
    q = xp.minimum(p, 1.0 - p)
    qs = xp.clip(q, 1e-300, 0.5)
    s = xp.sqrt(-2.0 * xp.log(qs))
    y = -(s - (2.515517 + s * (0.802853 + s * 0.010328))
          / (1.0 + s * (1.432788 + s * (0.189269 + s * 0.001308))))
    log_q = xp.log(qs)
    for _ in range(4):
        ln = _log_ndtr64(y, xp)
        # d log_ndtr / dy = pdf(y) / ndtr(y)
        y = y - (ln - log_q) * _SQRT_2PI * xp.exp(0.5 * y * y + ln)
    y = xp.where(p > 0.5, -y, y)
    y = xp.where(q == 0.5, 0.0, y)
    y = xp.where(p == 0.0, -xp.inf, xp.where(p == 1.0, xp.inf, y))
    return xp.where((p < 0) | (p > 1) | xp.isnan(p), xp.nan, y)


_BESSEL_SPLIT = 18.0
_SERIES_TERMS = 45
_HANKEL_TERMS = 30


def _series_coefs(nu):
    return tuple(1.0 / (math.factorial(k) * math.factorial(k + nu)) for k in range(_SERIES_TERMS))


def _hankel_coefs(nu):
    """``(-1)**k a_k(nu)`` of ``I_nu(x) ~ exp(x) / sqrt(2 pi x) sum (-1)**k a_k(nu) x**-k``."""
    mu = 4.0 * nu * nu
    coefs = [1.0]
    for k in range(1, _HANKEL_TERMS):
        coefs.append(-coefs[-1] * (mu - (2 * k - 1) ** 2) / (8.0 * k))
    return tuple(coefs)


_BESSEL_COEFS = {nu: (_series_coefs(nu), _hankel_coefs(nu)) for nu in (0, 1)}


def _bessel_i64(nu, x, xp, scaled):
    """``I_nu(x)`` (``scaled``: ``exp(-|x|) I_nu(x)``) for nu in (0, 1)."""
    series_c, hankel_c = _BESSEL_COEFS[nu]
    a = xp.abs(x)
    small = xp.minimum(a, _BESSEL_SPLIT)
    series = _horner(0.25 * small * small, series_c)
    if nu == 1:
        series = series * (0.5 * small)
    if scaled:
        series = series * xp.exp(-small)
    big = xp.maximum(a, _BESSEL_SPLIT)
    hankel = _horner(1.0 / big, hankel_c) / xp.sqrt(2.0 * math.pi * big)
    if not scaled:
        hankel = hankel * xp.exp(big)     # inf from |x| = 709.78, as in PyTorch
    out = xp.where(a <= _BESSEL_SPLIT, series, hankel)
    if nu == 1:
        out = xp.where(x < 0, -out, out)
    return out


_EULER_GAMMA = 0.5772156649015329
_K_SERIES_UPTO = 2.0
_K_STEP = 0.125           # trapezoid step in t for 2 < x < 18
_K_NODES = 56             # t up to 7, where exp(-x (cosh t - 1)) < 1e-300 for x >= 2


def _k_series_coefs(nu):
    """The regular part of K_nu's series at 0, in ``z = x**2 / 4`` (the Euler-gamma terms are
    gathered with the logarithm): K_0: ``sum H_k z**k / k!**2``; K_1: ``sum (H_k + H_{k+1}) z**k /
    (k! (k+1)!)``, ``H_k`` the harmonic numbers."""
    harmonic = [0.0]
    for k in range(1, _SERIES_TERMS + 2):
        harmonic.append(harmonic[-1] + 1.0 / k)
    if nu == 0:
        return tuple(harmonic[k] / math.factorial(k) ** 2 for k in range(_SERIES_TERMS))
    return tuple((harmonic[k] + harmonic[k + 1]) / (math.factorial(k) * math.factorial(k + 1))
                 for k in range(_SERIES_TERMS))


def _k_hankel_coefs(nu):
    """``a_k(nu)`` of ``K_nu(x) ~ sqrt(pi / 2x) exp(-x) sum a_k(nu) x**-k``."""
    mu = 4.0 * nu * nu
    coefs = [1.0]
    for k in range(1, _HANKEL_TERMS):
        coefs.append(coefs[-1] * (mu - (2 * k - 1) ** 2) / (8.0 * k))
    return tuple(coefs)


_K_SERIES = {nu: _k_series_coefs(nu) for nu in (0, 1)}
_K_HANKEL = {nu: _k_hankel_coefs(nu) for nu in (0, 1)}


def _bessel_k64(nu, x, xp, scaled):
    """``K_nu(x)`` (``scaled``: ``exp(x) K_nu(x)``) for nu in (0, 1): the series at 0 up to x = 2,
    the trapezoidal rule on ``int_0^inf exp(-x cosh t) cosh(nu t) dt`` (exponentially accurate
    for this analytic integrand) up to 18, Hankel's asymptotic series above."""
    xs = xp.clip(x, 1e-300, _K_SERIES_UPTO)
    z = 0.25 * xs * xs
    log_half = xp.log(0.5 * xs) + _EULER_GAMMA
    if nu == 0:
        series = -log_half * _bessel_i64(0, xs, xp, False) + _horner(z, _K_SERIES[0])
    else:
        series = 1.0 / xs + log_half * _bessel_i64(1, xs, xp, False) - 0.25 * xs * _horner(z, _K_SERIES[1])
    # quadrature, computed scaled: exp(-x (cosh t - 1)) with cosh t - 1 = 2 sinh(t/2)**2
    xq = xp.clip(x, _K_SERIES_UPTO, _BESSEL_SPLIT)
    quad = 0.5 * xp.ones_like(xq)      # the t = 0 node, halved
    for j in range(1, _K_NODES + 1):
        t = j * _K_STEP
        quad = quad + math.cosh(nu * t) * xp.exp(-xq * (2.0 * math.sinh(0.5 * t) ** 2))
    quad = quad * _K_STEP
    xa = xp.maximum(x, _BESSEL_SPLIT)
    hankel = _horner(1.0 / xa, _K_HANKEL[nu]) * xp.sqrt(math.pi / (2.0 * xa))
    large = xp.where(x < _BESSEL_SPLIT, quad, hankel)           # scaled, x > 2
    if scaled:
        out = xp.where(x <= _K_SERIES_UPTO, series * xp.exp(xs), large)
    else:
        out = xp.where(x <= _K_SERIES_UPTO, series, large * xp.exp(-xp.maximum(x, _K_SERIES_UPTO)))
    out = xp.where(x == 0, xp.inf, out)
    out = xp.where(x == xp.inf, 0.0, out)
    return xp.where((x < 0) | xp.isnan(x), xp.nan, out)


def _spherical_j0_64(x, xp):
    safe = xp.where(x == 0, 1.0, x)
    out = xp.where(x == 0, 1.0, xp.sin(safe) / safe)
    return xp.where(xp.isinf(x), 0.0, out)


_BERNOULLI_2J = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
                 43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730)
_ZETA_DIRECT = 12


def _zeta64(s, q, xp):
    """Hurwitz zeta ``sum_k (q + k)**-s`` elementwise (arrays broadcast)."""
    s, q = xp.broadcast_arrays(s, q)
    acc = xp.zeros(s.shape, np.float64)
    for k in range(_ZETA_DIRECT):
        acc = acc + (q + k) ** (-s)
    a = q + _ZETA_DIRECT
    # Euler-Maclaurin: a**(1-s)/(s-1) + a**-s / 2 + sum_j B_2j / (2j)! s(s+1)...(s+2j-2) a**(-s-2j+1)
    tail = a ** (1.0 - s) / (s - 1.0) + 0.5 * a ** (-s)
    term = s * a ** (-s - 1.0)          # s (s+1) ... (s + 2j - 2) a**(-s - 2j + 1), j = 1
    inv2 = 1.0 / (a * a)
    for j, b in enumerate(_BERNOULLI_2J, 1):
        tail = tail + b / math.factorial(2 * j) * term
        term = term * (s + 2 * j - 1) * (s + 2 * j) * inv2
    out = acc + tail
    out = xp.where(s == 1.0, xp.inf, out)
    out = xp.where(s < 1.0, xp.nan, out)
    q_pole = (q <= 0) & (q == xp.floor(q))
    out = xp.where((q < 0) & ~q_pole & (s != xp.floor(s)), xp.nan, out)
    return xp.where(q_pole & (s > 1.0), xp.inf, out)


_GAMMAINC_CHECK_EVERY = 16
_GAMMAINC_MAX_STEPS = 20000
_TINY = 1e-300


def _converged(xp, delta, eps=4.5e-16):
    """Whether every relative correction is down to rounding (checked every few steps: on a GPU
    the check waits for the device)."""
    return not bool(xp.any(xp.abs(delta) > eps))


def _gammainc_series(a, x, xp):
    """``P(a, x)`` by its power series ``x**a e**-x / Gamma(a + 1) sum x**n / ((a+1)...(a+n))``
    (used where ``x < a + 1``; other elements get finite garbage)."""
    term = xp.ones_like(a)
    total = xp.ones_like(a)
    ap = a.copy()
    for step in range(1, _GAMMAINC_MAX_STEPS):
        ap = ap + 1.0
        term = term * x / ap
        total = total + term
        if step % _GAMMAINC_CHECK_EVERY == 0 and _converged(xp, term / total):
            break
    log_front = a * xp.log(x) - x - _lgamma64(a + 1.0, xp)
    return xp.exp(log_front) * total


def _gammaincc_fraction(a, x, xp):
    """``Q(a, x)`` by its continued fraction (modified Lentz), used where ``x >= a + 1``."""
    b = x + 1.0 - a
    c = xp.full(a.shape, 1.0 / _TINY)
    d = 1.0 / b
    h = d
    for i in range(1, _GAMMAINC_MAX_STEPS):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = xp.where(xp.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = xp.where(xp.abs(c) < _TINY, _TINY, c)
        d = 1.0 / d
        delta = d * c
        h = h * delta
        if i % _GAMMAINC_CHECK_EVERY == 0 and _converged(xp, delta - 1.0):
            break
    return xp.exp(a * xp.log(x) - x - _lgamma64(a, xp)) * h


def _gammainc64(a, x, xp, upper):
    """Regularized incomplete gamma: ``P(a, x)`` (``upper``: ``Q = 1 - P``), edges as in PyTorch."""
    a, x = xp.broadcast_arrays(xp.asarray(a, dtype=np.float64), xp.asarray(x, dtype=np.float64))
    ok = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
    use_series = x < a + 1.0
    # evaluate each method only on its own elements (others get harmless stand-ins)
    a_s = xp.where(ok & use_series, a, 1.0)
    x_s = xp.where(ok & use_series, x, 0.5)
    a_f = xp.where(ok & ~use_series, a, 1.0)
    x_f = xp.where(ok & ~use_series, x, 2.0)
    p_series = _gammainc_series(a_s, x_s, xp)
    q_fraction = _gammaincc_fraction(a_f, x_f, xp)
    if upper:
        out = xp.where(use_series, 1.0 - p_series, q_fraction)
    else:
        out = xp.where(use_series, p_series, 1.0 - q_fraction)
    # the special cases, lowest priority first (PyTorch's order: x == 0 wins over a NaN a)
    p_edge = (lambda v: 1.0 - v) if upper else (lambda v: v)
    out = xp.where(xp.isnan(a) | xp.isnan(x), xp.nan, out)
    out = xp.where(xp.isinf(x), p_edge(1.0), out)
    out = xp.where(xp.isinf(a), xp.where(xp.isinf(x), xp.nan, p_edge(0.0)), out)
    out = xp.where(x == 0, p_edge(0.0), out)
    out = xp.where(a == 0, xp.where(x > 0, p_edge(1.0), xp.nan), out)
    return xp.where((x < 0) | (a < 0), xp.nan, out)


# ================================================================ helpers for the nodes
def _result_dtype(a):
    return a._dtype if a._dtype._category == 2 else _dtype.get_default_dtype()


def _unary64(kernel, a, native=False):
    """``kernel(x, xp)`` on ``a``'s elements in float64, rounded to the result dtype. ``native``:
    in float32 for float32 and narrower results (short formulas that PyTorch computes so)."""
    xp = xp_of(a)
    result = _result_dtype(a)
    work = np.float32 if native and result is not _dtype.float64 else np.float64
    with quiet_errors():
        return kernel(a._data.astype(work), xp).astype(result.np, copy=False)


def _binary64(kernel, a, b):
    """``kernel(x64, y64, xp)`` on the broadcast operands (tensors or numbers), rounded to their
    promoted dtype (the default float dtype when that is not floating)."""
    x, y, dt = operand_arrays(a, b)
    if dt._category != 2:
        dt = _dtype.get_default_dtype()
    t = a if isinstance(a, Tensor) else b
    xp = xp_of(t)
    x = x.astype(np.float64) if isinstance(a, Tensor) else float(a)
    y = y.astype(np.float64) if isinstance(b, Tensor) else float(b)
    with quiet_errors():
        return xp.asarray(kernel(x, y, xp)).astype(dt.np, copy=False)


def _unary_node(name, kernel, derivative, native=False):
    """A one-input node computing ``kernel``; ``derivative(a, result)`` gives d result / d a."""
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _unary64(kernel, a, native)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * derivative(a, ctx.saved_result)

    return type(name, (Node,), {"forward": forward, "backward": backward, "saves_result": True,
                                "__doc__": f"Graph node of ``{name}``."})


def _define(cls, name, inplace_name=None, method=False):
    """The public function (``out=`` included) and, where PyTorch has them, the Tensor method and
    in-place method for a one-input node."""
    def op(input, *, out=None):
        return write_out(apply(cls, input), out)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}`` (graph node ``{cls.__name__}``)."
    if method:
        tensor_method(name)(op)
    if inplace_name is None:
        return op, None

    def op_(self):
        return apply_inplace(cls, self)
    op_.__name__ = op_.__qualname__ = inplace_name
    op_.__doc__ = f"In-place ``{name}``."
    tensor_method(inplace_name)(op_)
    return op, op_


# ================================================================ unary functions
def _sinc64(x, xp):
    px = x.dtype.type(math.pi) * x
    one = x.dtype.type(1.0)
    return xp.where(x == 0, one, xp.sin(px) / xp.where(x == 0, one, px))


def _sinc_derivative(a, r):
    # (pi x cos(pi x) - sin(pi x)) / (pi x**2), written so that tiny x does not make 0 / 0
    d = ((a * math.pi).cos() - r) / a
    return where(a == 0, 0.0, d)


def _entr64(x, xp):
    zero = x.dtype.type(0.0)
    return xp.where(x > 0, -x * xp.log(xp.where(x > 0, x, x.dtype.type(1.0))),
                    xp.where(x == 0, zero, xp.where(xp.isnan(x), x, x.dtype.type(-np.inf))))


SincBackward0 = _unary_node("SincBackward0", _sinc64, _sinc_derivative, native=True)
EntrBackward0 = _unary_node("EntrBackward0", _entr64, lambda a, r: -(a.log() + 1), native=True)
NdtrBackward0 = _unary_node("NdtrBackward0", _ndtr64, lambda a, r: (a * a * -0.5).exp() / _SQRT_2PI)
LogNdtrBackward0 = _unary_node("LogNdtrBackward0", _log_ndtr64,
                               lambda a, r: (-(r + a * a * 0.5)).exp() / _SQRT_2PI)
NdtriBackward0 = _unary_node("NdtriBackward0", _ndtri64, lambda a, r: (r * r * 0.5).exp() * _SQRT_2PI)
ErfcxBackward0 = _unary_node("ErfcxBackward0", _erfcx64, lambda a, r: a * r * 2.0 - _TWO_OVER_SQRT_PI)
I0Backward0 = _unary_node("I0Backward0", lambda x, xp: _bessel_i64(0, x, xp, False), lambda a, r: i1(a))
I0eBackward0 = _unary_node("I0eBackward0", lambda x, xp: _bessel_i64(0, x, xp, True),
                           lambda a, r: i1e(a) - a.sgn() * r)
I1Backward0 = _unary_node("I1Backward0", lambda x, xp: _bessel_i64(1, x, xp, False),
                          lambda a, r: where(a == 0, 0.5, i0(a) - r / a))
I1eBackward0 = _unary_node("I1eBackward0", lambda x, xp: _bessel_i64(1, x, xp, True),
                           lambda a, r: where(a == 0, 0.5, i0e(a) - r * (a.sgn() + a.reciprocal())))

sinc, sinc_ = _define(SincBackward0, "sinc", "sinc_", method=True)
i0, i0_ = _define(I0Backward0, "i0", "i0_", method=True)
entr, _ = _define(EntrBackward0, "entr")
ndtr, _ = _define(NdtrBackward0, "ndtr")
log_ndtr, _ = _define(LogNdtrBackward0, "log_ndtr")
ndtri, _ = _define(NdtriBackward0, "ndtri")
erfcx, _ = _define(ErfcxBackward0, "erfcx")
i0e, _ = _define(I0eBackward0, "i0e")
i1, _ = _define(I1Backward0, "i1")
i1e, _ = _define(I1eBackward0, "i1e")


# ================================================================ logit
class LogitBackward0(Node):
    """``log(x / (1 - x))`` on ``x`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""

    def forward(ctx, a, eps):
        ctx.save_for_backward(a)
        ctx.eps = eps
        xp = xp_of(a)
        # float64 in float64, everything else in float32, as PyTorch's kernel computes
        work = np.float64 if a._dtype is _dtype.float64 else np.float32
        x = a._data.astype(work, copy=False)
        with quiet_errors():
            if eps is not None:
                lo, hi = work(eps), work(1.0 - eps)
                x = xp.where(x < lo, lo, xp.where(x > hi, hi, x))   # NaN stays NaN
            out = xp.log(x / (work(1.0) - x))
        return out.astype(_result_dtype(a).np, copy=False)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        g = grad / (a * (1 - a))
        if ctx.eps is None:
            return where((a < 0) | (a > 1), math.nan, g)
        return where((a < ctx.eps) | (a > 1 - ctx.eps), 0.0, g)


@tensor_method("logit")
def logit(input, eps=None, *, out=None):
    """``log(p / (1 - p))``; with ``eps``, ``p`` is first clamped to ``[eps, 1 - eps]``
    (NaN outside ``[0, 1]`` without it)."""
    return write_out(apply(LogitBackward0, input, None if eps is None else float(eps)), out)


@tensor_method("logit_")
def logit_(self, eps=None):
    """In-place ``logit``."""
    return apply_inplace(LogitBackward0, self, None if eps is None else float(eps))


# ================================================================ two-input functions
def _xlog1py64(x, y, xp):
    r = x * xp.log1p(y)
    return xp.where((x == 0) & ~xp.isnan(y), 0.0, r)


def _save_operands(ctx, a, b):
    """Save the tensor operands for backward and remember the numbers."""
    ctx.save_for_backward(*[t for t in (a, b) if isinstance(t, Tensor)])
    ctx.numbers = (None if isinstance(a, Tensor) else a, None if isinstance(b, Tensor) else b)


def _saved_operands(ctx):
    saved = list(ctx.saved_values)
    return tuple(saved.pop(0) if n is None else n for n in ctx.numbers)


def _tensor_grads(a, b, grad_a, grad_b):
    """The gradients of the tensor operands only (one gradient: not a tuple)."""
    grads = [g for t, g in ((a, grad_a), (b, grad_b)) if isinstance(t, Tensor)]
    return tuple(grads) if len(grads) > 1 else grads[0]


class Xlog1pyBackward0(Node):
    """``x * log1p(y)``, 0 where ``x`` is 0 (unless ``y`` is NaN); either side may be a number."""

    def forward(ctx, a, b):
        _save_operands(ctx, a, b)
        return _binary64(_xlog1py64, a, b)

    def backward(ctx, grad):
        a, b = _saved_operands(ctx)
        ga = gb = None
        if isinstance(a, Tensor) and ctx.needs_input_grad[0]:
            if isinstance(b, Tensor):
                log1p_b = b.log1p()
            else:
                with quiet_errors():
                    log1p_b = float(np.log1p(float(b)))    # -inf at -1, NaN below, as the tensor op
            ga = grad_for(where((a == 0) & (b <= -1), 0.0, grad * log1p_b), a)
        if isinstance(b, Tensor) and ctx.needs_input_grad[-1]:
            gb = grad_for(grad * a / (b + 1), b)
        return _tensor_grads(a, b, ga, gb)


class ZetaBackward0(Node):
    """Hurwitz zeta ``zeta(x, q)``; differentiable in ``q`` only (as in PyTorch)."""

    def forward(ctx, a, b):
        _save_operands(ctx, a, b)
        return _binary64(_zeta64, a, b)

    def backward(ctx, grad):
        a, b = _saved_operands(ctx)
        if isinstance(a, Tensor) and ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'zeta' with respect to 'self' is not implemented.")
        gb = None
        if isinstance(b, Tensor) and ctx.needs_input_grad[-1]:
            gb = grad_for(grad * -a * zeta(a + 1.0, b), b)
        return _tensor_grads(a, b, None, gb)


def _binary(name, cls, input, other, out):
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{name}(): at least one of 'self' and 'other' must be a Tensor")
    check_operand(name, input, "self")
    check_operand(name, other)
    return write_out(apply(cls, input, other), out)


def xlog1py(input, other, *, out=None):
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    return _binary("xlog1py", Xlog1pyBackward0, input, other, out)


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function ``sum_k (other + k)**-input``."""
    return _binary("zeta", ZetaBackward0, input, other, out)


def _float_only(name, a, b):
    _, _, dt = operand_arrays(a, b)
    if dt._category != 2:
        from .._tensor import _LEGACY_NAMES
        raise NotImplementedError(f'"{name}" not implemented for \'{_LEGACY_NAMES[dt]}\'')


class IgammaBackward0(Node):
    """Regularized lower incomplete gamma ``P(a, x)``; differentiable in ``x`` only (as in PyTorch)."""
    upper = False

    def forward(ctx, a, b):
        _float_only("igamma", a, b)
        _save_operands(ctx, a, b)
        return _binary64(_gammainc_lower64, a, b)

    def backward(ctx, grad):
        a, b = _saved_operands(ctx)
        if isinstance(a, Tensor) and ctx.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{'igammac' if ctx.upper else 'igamma'}' "
                                      "with respect to 'self' is not implemented.")
        gb = None
        if isinstance(b, Tensor) and ctx.needs_input_grad[-1]:
            log_gamma_a = lgamma(a) if isinstance(a, Tensor) else math.lgamma(a)
            density = ((a - 1) * b.log() - b - log_gamma_a).exp()
            gb = grad_for(grad * (-density if ctx.upper else density), b)
        return _tensor_grads(a, b, None, gb)


class IgammacBackward0(IgammaBackward0):
    """Regularized upper incomplete gamma ``Q(a, x) = 1 - P(a, x)``."""
    upper = True

    def forward(ctx, a, b):
        _float_only("igammac", a, b)
        _save_operands(ctx, a, b)
        return _binary64(_gammaincc64, a, b)


def _gammainc_lower64(a, x, xp):
    return _gammainc64(a, x, xp, False)


def _gammaincc64(a, x, xp):
    return _gammainc64(a, x, xp, True)


def _tensors_only(name, input, other):
    _require_tensor(name, input, "input", 1)
    _require_tensor(name, other, "other", 2)


@tensor_method("igamma")
def igamma(input, other, *, out=None):
    """The regularized lower incomplete gamma function ``P(input, other)`` (tensors only)."""
    _tensors_only("igamma", input, other)
    return write_out(apply(IgammaBackward0, input, other), out)


@tensor_method("igammac")
def igammac(input, other, *, out=None):
    """The regularized upper incomplete gamma function ``Q(input, other) = 1 - P`` (tensors only)."""
    _tensors_only("igammac", input, other)
    return write_out(apply(IgammacBackward0, input, other), out)


def _check_inplace_shape(self, other):
    """PyTorch checks that the result fits ``self`` before the dtypes."""
    try:
        shape = np.broadcast_shapes(self.shape, other.shape)
    except ValueError:
        shape = None
    if shape is not None and tuple(shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(shape)}")


@tensor_method("igamma_")
def igamma_(self, other):
    """In-place ``igamma``."""
    _require_tensor("igamma_", other, "other", 1)
    _check_inplace_shape(self, other)
    return apply_inplace(IgammaBackward0, self, other)


@tensor_method("igammac_")
def igammac_(self, other):
    """In-place ``igammac``."""
    _require_tensor("igammac_", other, "other", 1)
    _check_inplace_shape(self, other)
    return apply_inplace(IgammacBackward0, self, other)


# ================================================================ no-gradient functions
# torch.special's modified_bessel_*, scaled_modified_bessel_* and spherical_bessel_j0 give results
# that do not require grad; these return plain tensors likewise.
def _no_grad(name, kernel):
    def op(input, *, out=None):
        _require_tensor(name, input, "input", 1)
        result = Tensor._make(_unary64(kernel, input), input._device)
        return write_out(result, out)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}`` (no gradient, as in PyTorch)."
    return op


modified_bessel_i0 = _no_grad("modified_bessel_i0", lambda x, xp: _bessel_i64(0, x, xp, False))
modified_bessel_i1 = _no_grad("modified_bessel_i1", lambda x, xp: _bessel_i64(1, x, xp, False))
modified_bessel_k0 = _no_grad("modified_bessel_k0", lambda x, xp: _bessel_k64(0, x, xp, False))
modified_bessel_k1 = _no_grad("modified_bessel_k1", lambda x, xp: _bessel_k64(1, x, xp, False))
scaled_modified_bessel_k0 = _no_grad("scaled_modified_bessel_k0", lambda x, xp: _bessel_k64(0, x, xp, True))
scaled_modified_bessel_k1 = _no_grad("scaled_modified_bessel_k1", lambda x, xp: _bessel_k64(1, x, xp, True))
spherical_bessel_j0 = _no_grad("spherical_bessel_j0", _spherical_j0_64)


# ================================================================ orthogonal polynomials (no gradient)
def _three_term(x, n, xp, first, step):
    """``p_n(x)`` elementwise from ``p_0 = 1``, ``p_1 = first(x)`` and ``p_{k+1} = step(k, x, p_k,
    p_{k-1})``; ``n`` (integers as float64) may differ per element, negative ``n`` gives 0."""
    x, n = xp.broadcast_arrays(xp.asarray(x, dtype=np.float64), n)
    top = int(n.max()) if n.size else 0
    out = xp.where(n == 0, 1.0, 0.0)
    if top >= 1:
        prev, cur = xp.ones_like(x), first(x)
        out = xp.where(n == 1, cur, out)
        for k in range(1, top):
            prev, cur = cur, step(k, x, cur, prev)
            out = xp.where(n == k + 1, cur, out)
    return out


def _chebyshev(kind, shift=False):
    """T, U, V, W (``shift``: of ``2x - 1``): ``p_{k+1} = 2x p_k - p_{k-1}`` from their own ``p_1``."""
    first = {"t": lambda x: x, "u": lambda x: 2.0 * x, "v": lambda x: 2.0 * x - 1.0,
             "w": lambda x: 2.0 * x + 1.0}[kind]

    def kernel(x, n, xp):
        if shift:
            x = 2.0 * x - 1.0
        return _three_term(x, n, xp, first, lambda k, x, p, q: 2.0 * x * p - q)
    return kernel


_POLYNOMIALS = {
    "chebyshev_polynomial_t": _chebyshev("t"), "chebyshev_polynomial_u": _chebyshev("u"),
    "chebyshev_polynomial_v": _chebyshev("v"), "chebyshev_polynomial_w": _chebyshev("w"),
    "shifted_chebyshev_polynomial_t": _chebyshev("t", True),
    "shifted_chebyshev_polynomial_u": _chebyshev("u", True),
    "shifted_chebyshev_polynomial_v": _chebyshev("v", True),
    "shifted_chebyshev_polynomial_w": _chebyshev("w", True),
    "hermite_polynomial_h": lambda x, n, xp: _three_term(
        x, n, xp, lambda x: 2.0 * x, lambda k, x, p, q: 2.0 * x * p - 2.0 * k * q),
    "hermite_polynomial_he": lambda x, n, xp: _three_term(
        x, n, xp, lambda x: x, lambda k, x, p, q: x * p - k * q),
    "laguerre_polynomial_l": lambda x, n, xp: _three_term(
        x, n, xp, lambda x: 1.0 - x, lambda k, x, p, q: ((2 * k + 1 - x) * p - k * q) / (k + 1)),
    "legendre_polynomial_p": lambda x, n, xp: _three_term(
        x, n, xp, lambda x: x, lambda k, x, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1)),
}


def _polynomial(name, kernel):
    def op(input, n, *, out=None):
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"{name}(): at least one of 'input' and 'n' must be a Tensor")
        check_operand(name, input, "input")
        check_operand(name, n, "n")
        degree = (n._data.astype(np.float64) if isinstance(n, Tensor) else float(n))
        xp = xp_of(input if isinstance(input, Tensor) else n)
        degree = xp.trunc(xp.asarray(degree, dtype=np.float64))     # PyTorch takes n as an integer
        degree = xp.where(xp.isfinite(degree), degree, -1.0)        # (a non-finite n gives 0 here)

        def kernel_on(x, _, xp):
            return kernel(x, degree, xp)
        result = Tensor._make(_binary64(kernel_on, input, n), (input if isinstance(input, Tensor) else n)._device)
        return write_out(result, out)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"``{name}(input, n)``: the polynomial of degree ``n`` (truncated to an integer; "
                  "0 for negative ``n``) at ``input``, by its three-term recurrence (no gradient, as in PyTorch).")
    return op


for _name, _kernel in _POLYNOMIALS.items():
    globals()[_name] = _polynomial(_name, _kernel)
del _name, _kernel
