"""Gamma-family functions ``lgamma``, ``digamma``, ``polygamma(n, x)`` and ``mvlgamma(x, p)``,
and the samplers built on them: ``poisson`` and the internal standard-gamma (with its
reparameterised gradient) and Dirichlet samplers used by ``gputorch.distributions``.

Every value is computed in float64 with array-module (``xp``) operations only, so the same
code runs on NumPy and CuPy; float32 and float16 results are rounded from it. Integer and
bool inputs give the default float dtype, as in PyTorch.

Method (``x > 0`` first; negative ``x`` by reflection, ``r = x - round(x)``):

* ``lgamma``: for ``x >= 10`` Stirling's series (8 terms); below, ``x`` is shifted by an
  integer ``n`` into ``[1.5, 2.5)`` where ``lgamma(2 + z)`` is its Taylor series
  (coefficients ``(-1)**k (zeta(k) - 1) / k``), plus ``log`` of the shift's product; this keeps
  the relative accuracy at the roots 1 and 2. Reflection: ``log(pi / |sin(pi r)|) - lgamma(1 - x)``.
* ``digamma``: ``x`` shifted up past 10 then the asymptotic series; within 0.3 of the positive
  root ``x0`` a Taylor series about ``x0``. Reflection: ``digamma(1 - x) - pi / tan(pi r)``.
* ``polygamma(n >= 1)``: ``(-1)**(n+1) n! zeta(n+1, x)``, the Hurwitz zeta summed directly for
  ``n + 15`` terms, the rest by Euler-Maclaurin (12 Bernoulli terms). Reflection: differentiating
  the digamma one, ``(-1)**n polygamma(n, 1 - x) - pi**(n+1) P_n(cot(pi r))`` with
  ``P_0(c) = c``, ``P_{k+1}(c) = -(1 + c**2) P_k'(c)``.

Poles take PyTorch's values: lgamma ``+inf``; digamma ``-inf`` at ``+0``, ``+inf`` at ``-0``,
NaN at negative integers; polygamma ``(-1)**(n+1) inf`` (trigamma: PyTorch's finite
``pi**2 / sin(pi x)**2`` at negative integers).

Sampling draws from the project's generators (``manual_seed`` makes it reproducible):

* ``_standard_gamma(alpha)``: Marsaglia-Tsang, vectorised in rejection rounds over the elements
  still pending; ``alpha < 1`` sampled at ``alpha + 1`` and scaled by ``u**(1/alpha)``. Its
  gradient is the implicit reparameterisation ``dx/dalpha = -(dP/dalpha) / p(x)``
  (``_standard_gamma_grad``), with ``P`` the regularised incomplete gamma function, whose power
  series (``_gammainc``, as ``torch.special.gammainc``) also gives ``dP/dalpha`` exactly.
* ``_sample_dirichlet``: normalised gamma draws (gradient through them).
* ``poisson``: sequential inversion below rate 10, Hormann's PTRS rejection above.

The series coefficients were computed for this module with mpmath at 40 digits.
"""
import math

import numpy as np

from .. import _dtype
from .._dispatch import apply, apply_inplace
from .._tensor import Tensor
from ..autograd.node import Node
from ..random import generator_for
from ._common import quiet_errors, write_out, xp_of
from .registry import tensor_method

__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "poisson"]

_PI = math.pi
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)

# lgamma(2 + z) / z as a polynomial in z, |z| <= 1/2 (ascending powers).
_LGAMMA_AT_2 = (
    0.42278433509846713, 0.3224670334241132, -0.0673523010531981, 0.020580808427784546,
    -0.007385551028673986, 0.0028905103307415234, -0.001192753911703261, 0.0005096695247430425,
    -0.00022315475845357939, 9.945751278180853e-05, -4.492623673813314e-05, 2.050721277567069e-05,
    -9.439488275268397e-06, 4.374866789907488e-06, -2.039215753801366e-06, 9.55141213040742e-07,
    -4.492469198764566e-07, 2.1207184805554665e-07, -1.0043224823968099e-07, 4.7698101693639804e-08,
    -2.2711094608943164e-08, 1.0838659214896955e-08, -5.183475041970047e-09, 2.4836745438024785e-09,
    -1.1921401405860912e-09, 5.731367241678862e-10, -2.7595228851242334e-10, 1.330476437424449e-10,
    -6.4229645638381e-11, 3.1044247747322276e-11, -1.5021384080754142e-11,
)

# The positive root of digamma as hi + lo, and digamma(x0 + t) / t as a polynomial in t.
_X0_HI = 1.4616321449683622
_X0_LO = 9.549995429965697e-17
_ROOT_RADIUS = 0.3
_DIGAMMA_AT_ROOT = (
    0.9676722454476212, -0.4427631689835921, 0.258499760955651, -0.16394270544240652,
    0.10782405069126237, -0.07219956125645471, 0.04880428816414311, -0.03316112647484736,
    0.022597648232218104, -0.01542476590494896, 0.010538791616612175, -0.007204534386356869,
    0.004926781395729853, -0.003369801655439328, 0.002305126326734928, -0.0015769367714301972,
    0.0010788252019162967, -0.0007380709389960052, 0.000504953265834602, -0.0003454680251063077,
    0.00023635601564027053, -0.00016170622091974803, 0.0001106337276874741, -7.569179582195066e-05,
    5.178575795222081e-05, -3.5430070947659604e-05, 2.424006611860132e-05, -1.6584242271854135e-05,
    1.134638458466385e-05,
)

# Bernoulli numbers B_2, B_4, ..., B_24.
_BERNOULLI = (
    1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
    -174611 / 330, 854513 / 138, -236364091 / 2730,
)
_STIRLING = tuple(b / (2 * j * (2 * j - 1)) for j, b in enumerate(_BERNOULLI[:8], 1))
_DIGAMMA_ASYMPTOTIC = tuple(b / (2 * j) for j, b in enumerate(_BERNOULLI[:8], 1))
_STIRLING_FROM = 10.0
_DIGAMMA_SHIFT = 10


# ================================================================ array kernels (float64)
def _poly(u, coefs):
    """``sum(c[k] * u**k)`` by Horner's rule."""
    p = u * coefs[-1] + coefs[-2]
    for c in coefs[-3::-1]:
        p = p * u + c
    return p


def _flat(kernel):
    """Run an array kernel that assigns through boolean masks on a 1-d view of its input (NumPy
    turns 0-d results into scalars, which cannot be assigned into)."""
    def run(x, xp):
        return kernel(x.reshape(-1), xp).reshape(x.shape)
    run.__name__ = kernel.__name__
    run.__doc__ = kernel.__doc__
    return run


@_flat
def _lgamma_pos(x, xp):
    """lgamma of ``x > 0`` (other elements: finite garbage). Each element takes one of two
    paths, evaluated only on the elements that take it."""
    big = x >= _STIRLING_FROM
    out = xp.empty_like(x)
    out[big] = _lgamma_stirling(x[big], xp)
    small = ~big
    out[small] = _lgamma_shifted(xp.clip(x[small], 5e-324, _STIRLING_FROM), xp)
    return out


def _lgamma_stirling(x, xp):
    """Stirling's series, ``x >= 10``."""
    inv = 1.0 / x
    return (x - 0.5) * xp.log(x) - x + _HALF_LOG_2PI + _poly(inv * inv, _STIRLING) * inv


def _lgamma_shifted(x, xp):
    """``0 < x < 10``: shifted by an integer into [1.5, 2.5), the Taylor series there."""
    n = xp.floor(x - 1.5)                  # -2 .. 8: x - n lies in [1.5, 2.5)
    z = x - (n + 2.0)                      # exact (Sterbenz)
    taylor = _poly(z, _LGAMMA_AT_2) * z
    up = xp.ones_like(x)                   # Gamma(x) = (x-1)...(x-n) Gamma(x-n)
    for k in range(1, 9):
        up = up * xp.where(n >= k, x - k, 1.0)
    down = xp.where(n <= -1, x, 1.0) * xp.where(n <= -2, x + 1.0, 1.0)
    return taylor + xp.log(up) - xp.log(down)


@_flat
def _lgamma64(x, xp):
    neg = x < 0
    out = _lgamma_pos(xp.where(neg, 1.0 - x, x), xp)
    xn = x[neg]
    r = xn - xp.round(xn)
    out[neg] = math.log(_PI) - xp.log(xp.abs(xp.sin(_PI * r))) - out[neg]
    pole = (x <= 0) & (x == xp.round(x))
    return xp.where(pole | xp.isinf(x), xp.inf, out)


@_flat
def _digamma_pos(x, xp):
    """digamma of ``x > 0``."""
    shift = x < _DIGAMMA_SHIFT
    recip = xp.zeros_like(x)
    for k in range(_DIGAMMA_SHIFT):
        recip = recip + 1.0 / (x + k)
    recip = xp.where(shift, recip, 0.0)
    a = xp.where(shift, x + _DIGAMMA_SHIFT, x)
    u = 1.0 / (a * a)
    out = xp.log(a) - 0.5 / a - _poly(u, _DIGAMMA_ASYMPTOTIC) * u - recip
    t = (x - _X0_HI) - _X0_LO
    near_root = xp.abs(t) < _ROOT_RADIUS
    t = t[near_root]
    out[near_root] = _poly(t, _DIGAMMA_AT_ROOT) * t
    return out


def _digamma64(x, xp):
    neg = x < 0
    r = x - xp.round(x)
    pos = _digamma_pos(xp.where(neg, 1.0 - x, xp.where(x > 0, x, 1.0)), xp)
    out = xp.where(neg, pos - _PI / xp.tan(_PI * r), pos)
    out = xp.where(neg & (r == 0), xp.nan, out)
    out = xp.where(x == 0, xp.where(xp.signbit(x), xp.inf, -xp.inf), out)
    return xp.where((x == -xp.inf) | xp.isnan(x), xp.nan, out)


def _cot_derivative_poly(n):
    """Coefficients (ascending) of ``P_n`` with ``d^n/dx^n cot(pi x) = pi**n P_n(cot(pi x))``."""
    p = [0, 1]
    for _ in range(n):
        d = [k * p[k] for k in range(1, len(p))]        # P'
        q = [0] * (len(d) + 2)
        for k, c in enumerate(d):                        # -(1 + c**2) P'
            q[k] -= c
            q[k + 2] -= c
        p = q
    return tuple(float(c) for c in p)


def _hurwitz_pos(s, x, xp):
    """Hurwitz zeta ``zeta(s, x)`` for an integer ``s >= 2`` and ``x > 0``."""
    terms = int(s) + 14
    acc = xp.zeros_like(x)
    for k in range(terms):
        acc = acc + (x + k) ** (-s)
    a = x + terms
    coefs = []
    rising = float(s)                                   # s (s+1) ... (s + 2j - 2)
    for j, b in enumerate(_BERNOULLI, 1):
        coefs.append(b / math.factorial(2 * j) * rising)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    inv = 1.0 / a
    tail = 0.5 + _poly(inv * inv, tuple(coefs)) * inv
    return acc + a ** (1 - s) / (s - 1) + a ** (-s) * tail


def _polygamma_pos(n, x, xp):
    return (-1.0) ** (n + 1) * math.factorial(n) * _hurwitz_pos(n + 1, x, xp)


def _polygamma64(n, x, xp):
    if n == 0:
        return _digamma64(x, xp)
    neg = x < 0
    r = x - xp.round(x)
    pos = _polygamma_pos(n, xp.where(neg, 1.0 - x, xp.where(x > 0, x, 1.0)), xp)
    cot = 1.0 / xp.tan(_PI * r)
    refl = (-1.0) ** n * pos - _PI ** (n + 1) * _poly(cot, _cot_derivative_poly(n))
    out = xp.where(neg, refl, pos)
    pole = (x <= 0) & (r == 0)
    if n == 1:
        s = xp.sin(_PI * x)
        out = xp.where(pole, _PI * _PI / (s * s) + pos, out)
        out = xp.where(x == xp.inf, 0.0, out)
    else:
        out = xp.where(pole, (-1.0) ** (n + 1) * xp.inf, out)
        out = xp.where(x == xp.inf, xp.nan, out)
    out = xp.where(x == -xp.inf, xp.nan if n == 1 else (-1.0) ** (n + 1) * xp.inf, out)
    return xp.where(xp.isnan(x), xp.nan, out)


# ================================================================ graph nodes
def _result_dtype(a):
    """The floating dtype of the result for input tensor ``a``."""
    return a._dtype if a._dtype._category == 2 else _dtype.get_default_dtype()


def _evaluate(kernel, a, *args):
    """``kernel(*args, x64, xp)`` on ``a``'s elements in float64, cast to the result dtype."""
    xp = xp_of(a)
    x = a._data.astype(np.float64)
    with quiet_errors():    # overflow in the cast to float32/float16 gives inf, as in PyTorch
        return kernel(*args, x, xp).astype(_result_dtype(a).np, copy=False)


class LgammaBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _evaluate(_lgamma64, a)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * digamma(a)


class DigammaBackward0(Node):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _evaluate(_digamma64, a)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * polygamma(1, a)


class PolygammaBackward0(Node):
    def forward(ctx, a, n=1):
        ctx.save_for_backward(a)
        ctx.n = n
        return _evaluate(_polygamma64, a, n)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        return grad * polygamma(ctx.n + 1, a)


# ================================================================ public functions
def _check_tensor(name, value, arg="input", position=1):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


@tensor_method("lgamma")
def lgamma(input, *, out=None):
    """``log|Gamma(x)|`` elementwise (``+inf`` at the poles 0, -1, -2, ...)."""
    _check_tensor("lgamma", input)
    return write_out(apply(LgammaBackward0, input), out)


@tensor_method("digamma")
def digamma(input, *, out=None):
    """The logarithmic derivative of the gamma function, ``Gamma'(x) / Gamma(x)``."""
    _check_tensor("digamma", input)
    return write_out(apply(DigammaBackward0, input), out)


def _check_order(n):
    if isinstance(n, Tensor) or not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return int(n)


def polygamma(n, input, *, out=None):
    """The ``n``-th derivative of digamma (``n = 0``: digamma itself)."""
    n = _check_order(n)
    _check_tensor("polygamma", input, position=2)
    result = apply(DigammaBackward0, input) if n == 0 else apply(PolygammaBackward0, input, n=n)
    return write_out(result, out)


@tensor_method("polygamma")
def _polygamma_method(self, n):
    """``Tensor.polygamma(n)``."""
    return polygamma(n, self)


@tensor_method("lgamma_")
def lgamma_(self):
    return apply_inplace(LgammaBackward0, self)


@tensor_method("digamma_")
def digamma_(self):
    return apply_inplace(DigammaBackward0, self)


@tensor_method("polygamma_")
def polygamma_(self, n):
    n = _check_order(n)
    if n == 0:
        return apply_inplace(DigammaBackward0, self)
    return apply_inplace(PolygammaBackward0, self, n=n)


@tensor_method("mvlgamma")
def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma of dimension ``p``:
    ``p (p - 1) / 4 log(pi) + sum_{j=0}^{p-1} lgamma(x - j / 2)`` (a composite)."""
    _check_tensor("mvlgamma", input)
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    from .creation import arange
    x = input if input._dtype._category == 2 else input.to(_dtype.get_default_dtype())
    offsets = arange(-(p - 1) * 0.5, 0.5, 0.5, dtype=x.dtype, device=x.device)
    result = lgamma(x.unsqueeze(-1) + offsets).sum(-1) + p * (p - 1) * math.log(math.pi) / 4
    return write_out(result, out)


@tensor_method("mvlgamma_")
def mvlgamma_(self, p):
    return self.copy_(mvlgamma(self, p))


# ================================================================ sampling
def _engine(t, generator):
    return generator_for(t._device, generator).engine


def _gamma_array(alpha, engine, xp):
    """Standard gamma samples (float64) for the 1-d float64 shape array ``alpha`` (Marsaglia-Tsang;
    ``alpha < 1`` is sampled at ``alpha + 1`` and scaled by ``u**(1/alpha)``)."""
    boost = alpha < 1
    a = xp.where(boost, alpha + 1.0, alpha)
    d = a - 1.0 / 3.0
    c = 1.0 / xp.sqrt(9.0 * d)
    valid = (alpha >= 0) & (alpha < xp.inf)
    out = xp.where(valid, 0.0, xp.nan)
    pending = valid.copy()
    while True:
        todo = xp.nonzero(pending)[0]
        if todo.size == 0:
            break
        dd, cc = d[todo], c[todo]
        z = engine.standard_normal(todo.shape, np.float64)
        u = engine.random(todo.shape, np.float64)
        v = (1.0 + cc * z) ** 3
        with quiet_errors():
            ok = (v > 0) & (xp.log(u) < 0.5 * z * z + dd - dd * v + dd * xp.log(v))
        out[todo] = xp.where(ok, dd * v, 0.0)
        pending[todo] = ~ok
    if bool(boost.any()):
        u = engine.random(a.shape, np.float64)
        out = xp.where(boost, out * u ** (1.0 / xp.where(boost, alpha, 1.0)), out)
    return out


class StandardGammaBackward0(Node):
    """``_standard_gamma(alpha)``: Gamma(alpha, 1) samples, differentiable in ``alpha`` by implicit
    reparameterisation (see :func:`_standard_gamma_grad`)."""
    saves_result = True

    def forward(ctx, alpha, generator=None):
        ctx.save_for_backward(alpha)
        xp = xp_of(alpha)
        with quiet_errors():
            flat = xp.ascontiguousarray(alpha._data, dtype=np.float64).reshape(-1)
            x = _gamma_array(flat, _engine(alpha, generator), xp).reshape(alpha._data.shape)
            x = x.astype(alpha._data.dtype)
        return xp.maximum(x, np.finfo(x.dtype).tiny)

    def backward(ctx, grad):
        (alpha,) = ctx.saved_values
        return grad * _standard_gamma_grad(alpha, ctx.saved_result)


def _standard_gamma(alpha, generator=None):
    """Gamma(alpha, 1) samples of ``alpha``'s shape and dtype; differentiable in ``alpha``."""
    return apply(StandardGammaBackward0, alpha, generator=generator)


_SERIES_MAX_TERMS = 200_000


def _gamma_p_series(alpha, x, xp):
    """The lower incomplete gamma series for ``alpha > 0``, ``x > 0`` (float64 arrays):
    ``P(alpha, x) = t0 * S`` and ``dP/dalpha = t0 * dS`` with
    ``t0 = x**alpha exp(-x) / Gamma(alpha + 1)``, ``S = sum_k tau_k``,
    ``dS = sum_k tau_k (log x - digamma(alpha + k + 1))`` and ``tau_k = x**k / prod_{j<=k}(alpha + j)``.
    Returns ``(S, dS)``; summed until the terms are below 1e-17 of the total."""
    logx = xp.log(x)
    term = xp.ones_like(x)
    psi = _digamma_pos(alpha + 1.0, xp)
    dsum = logx - psi
    total = term
    finite_max = float(xp.max(xp.where(xp.isfinite(x), x, 0.0))) if x.size else -100.0
    limit = min(int(finite_max) * 2 + 200, _SERIES_MAX_TERMS)
    for k in range(1, limit):
        term = term * x / (alpha + k)
        psi = psi + 1.0 / (alpha + k)
        dsum = dsum + term * (logx - psi)
        total = total + term
        if k % 16 == 0 and not bool((term > 1e-17 * total).any()):
            break
    return total, dsum


def _gamma_grad_array(alpha, x, xp):
    """``dx/dalpha = -(dP(alpha, x)/dalpha) / p(x; alpha)`` for the regularised lower incomplete
    gamma ``P`` and the Gamma(alpha, 1) density ``p = t0 * alpha / x`` (float64 arrays)."""
    _, dsum = _gamma_p_series(alpha, x, xp)
    return -dsum * x / alpha


# beyond alpha + 30 sqrt(alpha) + 40, P(alpha, x) is 1 in float64 (and the series would overflow)
def _gamma_p_saturated(alpha, x, xp):
    return x > alpha + 30.0 * xp.sqrt(alpha) + 40.0


def _log_t0(alpha, x, xp):
    return alpha * xp.log(x) - x - _lgamma_pos(alpha + 1.0, xp)


class GammaincBackward0(Node):
    """The regularised lower incomplete gamma ``P(a, x)`` (``torch.special.gammainc``), by its
    power series; differentiable in ``x`` (the Gamma(a, 1) density) and in ``a`` (the series'
    derivative)."""

    def forward(ctx, a, x):
        from ._common import operand_arrays
        xp = xp_of(a if isinstance(a, Tensor) else x)
        av, xv, dt = operand_arrays(a, x)
        dt = dt if dt._category == 2 else _dtype.get_default_dtype()
        av = xp.asarray(av, dtype=np.float64)
        xv = xp.asarray(xv, dtype=np.float64)
        av, xv = xp.broadcast_arrays(av, xv)
        ctx.save_for_backward(*(t for t in (a, x) if isinstance(t, Tensor)))
        ctx.inputs = (a, x)
        with quiet_errors():
            ok = (av > 0) & (xv > 0) & ~_gamma_p_saturated(av, xv, xp)
            aa, xx = xp.where(ok, av, 1.0), xp.where(ok, xv, 1.0)
            total, _ = _gamma_p_series(aa, xx, xp)
            p = xp.exp(_log_t0(aa, xx, xp)) * total
            p = xp.where(ok, xp.minimum(p, 1.0), xp.where(xv <= 0, 0.0, 1.0))
            p = xp.where((av < 0) | (xv < 0) | xp.isnan(av) | xp.isnan(xv), xp.nan, p)
        return p.astype(dt.np)

    def backward(ctx, grad):
        from ._common import grad_for
        a, x = ctx.inputs
        need = ctx.needs_input_grad
        at = a if isinstance(a, Tensor) else None
        xt = x if isinstance(x, Tensor) else None
        ga = gx = None
        av = a.detach() if at is not None else a
        xv = x.detach() if xt is not None else x
        if xt is not None and need[-1]:
            # the Gamma(a, 1) density at x
            dens = ((av - 1) * xv.log() - xv - lgamma(av if at is not None else xv * 0 + av)).exp()
            gx = grad_for(grad * dens, x)
        if at is not None and need[0]:
            ga = grad_for(grad * apply(GammaincDaBackward0, at.detach(), xv if xt is not None else at * 0 + xv), a)
        return tuple(g for g, t in ((ga, at), (gx, xt)) if t is not None)


class GammaincDaBackward0(Node):
    """``dP(a, x)/da`` (not itself differentiable)."""

    def forward(ctx, a, x):
        xp = xp_of(a)
        av, xv = xp.broadcast_arrays(a._data.astype(np.float64), x._data.astype(np.float64))
        with quiet_errors():
            ok = (av > 0) & (xv > 0) & ~_gamma_p_saturated(av, xv, xp)
            aa, xx = xp.where(ok, av, 1.0), xp.where(ok, xv, 1.0)
            _, dsum = _gamma_p_series(aa, xx, xp)
            d = xp.where(ok, xp.exp(_log_t0(aa, xx, xp)) * dsum, 0.0)
        return d.astype(a._data.dtype)

    def backward(ctx, grad):
        raise RuntimeError("the second derivative of gammainc with respect to its first argument is "
                           "not implemented")


def _gammainc(input, other):
    """``P(input, other)``, the regularised lower incomplete gamma function (tensors or numbers,
    broadcast), as ``torch.special.gammainc``; 0 at ``other = 0``, NaN for negative arguments."""
    return apply(GammaincBackward0, input, other)


class StandardGammaGradBackward0(Node):
    def forward(ctx, alpha, x):
        xp = xp_of(alpha)
        with quiet_errors():
            g = _gamma_grad_array(alpha._data.astype(np.float64), x._data.astype(np.float64), xp)
            return g.astype(alpha._data.dtype)

    def backward(ctx, grad):
        raise RuntimeError("the derivative of _standard_gamma_grad is not implemented")


def _standard_gamma_grad(alpha, x):
    """The implicit reparameterisation gradient ``d sample / d alpha`` of Gamma(alpha, 1) samples
    ``x`` (as ``torch._standard_gamma_grad(alpha, x)``); not itself differentiable."""
    return apply(StandardGammaGradBackward0, alpha.detach(), x.detach())


def _sample_dirichlet(concentration, generator=None):
    """Dirichlet samples over the last dimension of ``concentration`` (gammas normalised);
    differentiable in ``concentration`` through the gamma samples."""
    g = _standard_gamma(concentration, generator)
    return g / g.sum(-1, keepdim=True)


def _poisson_array(lam, engine, xp):
    """Poisson samples (float64) of the 1-d float64 rate array ``lam``: inversion by sequential search
    below rate 10, Hormann's transformed rejection (PTRS) above."""
    flat = lam
    out = xp.zeros(flat.shape, dtype=np.float64)
    small = xp.nonzero(flat < 10)[0]
    if small.size:
        ls = flat[small]
        u = engine.random(ls.shape, np.float64)
        p = xp.exp(-ls)
        cdf = p.copy()
        k = xp.zeros_like(ls)
        for i in range(1, 80):
            more = u > cdf
            if not bool(more.any()):
                break
            k = k + more
            p = p * ls / i
            cdf = cdf + p
        out[small] = k
    todo = xp.nonzero((flat >= 10) & (flat < xp.inf))[0]
    out = xp.where(flat == xp.inf, xp.inf, out)
    while todo.size:
        ls = flat[todo]
        slam, loglam = xp.sqrt(ls), xp.log(ls)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        u = engine.random(ls.shape, np.float64) - 0.5
        v = engine.random(ls.shape, np.float64)
        us = 0.5 - xp.abs(u)
        k = xp.floor((2 * a / us + b) * u + ls + 0.43)
        quick = (us >= 0.07) & (v <= vr)
        lhs = xp.log(v) + xp.log(inv_alpha) - xp.log(a / (us * us) + b)
        rhs = -ls + k * loglam - _lgamma_pos(xp.maximum(k + 1.0, 1.0), xp)
        ok = quick | ((k >= 0) & ~((us < 0.013) & (v > us)) & (lhs <= rhs))
        out[todo[ok]] = k[ok]
        todo = todo[~ok]
    return out


class PoissonBackward0(Node):
    def forward(ctx, input, generator=None):
        ctx.shape = input._data.shape
        lam = input._data
        if lam.size and not bool((lam >= 0).all()):
            raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
        xp = xp_of(input)
        with quiet_errors():
            flat = xp.ascontiguousarray(lam, dtype=np.float64).reshape(-1)
            k = _poisson_array(flat, _engine(input, generator), xp).reshape(lam.shape)
            return k.astype(lam.dtype)

    def backward(ctx, grad):
        return grad.new_zeros(ctx.shape)


def poisson(input, generator=None):
    """Samples from Poisson distributions with the rates in ``input`` (same shape and dtype);
    the gradient with respect to the rates is zero, as in PyTorch."""
    _check_tensor("poisson", input)
    if input._dtype._category != 2:
        raise RuntimeError(f"\"poisson_cpu\" not implemented for '{input._dtype}'")
    return apply(PoissonBackward0, input, generator=generator)
