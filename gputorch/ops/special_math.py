"""The error-function family on backend arrays: ``erf``, ``erfc`` and ``erfinv``.

NumPy has no error function, so these are written with array-module (``xp``)
operations only and run unchanged on NumPy and CuPy. Each function takes and
returns a backend array of a floating dtype (float16 and float32 results are
rounded from a float32 or float64 computation).

Method (``a = |x|``):

* ``erf``, float64: for ``a < 1``, ``x * P(x**2)`` (degree 12); for ``a >= 1``,
  ``1 - exp(-a**2) * t * H(t)`` with ``t = 3 / (3 + a)``, where ``t * H(t)`` is
  ``erfcx(a) = exp(a**2) * erfc(a)`` (``H`` of degree 20 on ``0 <= t <= 3/4``).
  Relative error about 2e-16.
* ``erfc``: the same two pieces (``1 - erf`` below 1, ``2 - erfc(a)`` for
  ``x <= -1``); ``exp(-a**2)`` is taken as ``exp(-hi**2) * exp(-(a - hi) * (a + hi))``
  with ``hi`` a multiple of 1/16, so the tail keeps its relative accuracy
  (about 1e-15) down to the underflow near ``x = 26.5``.
* ``erf``, float32 and float16: a (5, 5) rational ``x * P(x**2) / Q(x**2)`` fitted
  on ``[-4, 4]``, evaluated in float32 on ``x`` clipped to ``[-4.1, 4.1]`` (where it
  has reached 1) and clipped to ``[-1, 1]``: at most about 5 float32 ulps.
* ``erfinv``: a first value from ``w = -log((1 - a) * (1 + a))`` (a polynomial in
  ``w`` for ``w < 6.25``, in ``sqrt(w) - 2.5`` above; relative error below 5e-7),
  then one Halley step on ``erf(y) - a`` in float64, written as
  ``(1 - a) - erfc(y)`` in the tail so that ``a`` near 1 loses nothing.

The coefficients are near-minimax fits made for this module with mpmath
(``chebyfit`` at 50 digits against ``mpmath.erf``/``erfc``/``erfinv``; the
float32 rational by iteratively reweighted least squares).

Pieces are combined by arithmetic with a 0/1 mask (``m * S + (1 - m) * T``,
exact whichever is picked) instead of ``where``, which is several times slower
than a multiply in NumPy; every piece is evaluated on clipped input, so the one
not picked stays finite. On NumPy, large arrays are processed in blocks so that
the dozen temporaries stay in cache and are reused by the allocator.
"""
import numpy as np

__all__ = ["erf", "erfc", "erfinv"]

_BLOCK_BYTES = 1 << 18    # bytes of the working dtype per block on NumPy
_SPLIT = 1.0              # erf: polynomial below, erfc tail at and above
_T_SCALE = 3.0            # t = _T_SCALE / (_T_SCALE + a)

# erf(x) / x as a polynomial in z = x**2, 0 <= z <= 1 (ascending powers).
_ERF_SMALL = (
    1.1283791670955126, -0.3761263890318375, 0.11283791670954879, -0.026866170645076792,
    0.0052239776248180145, -0.000854832698083379, 0.0001205533111164271, -1.4925595266831182e-05,
    1.6461000484121368e-06, -1.6350312701054695e-07, 1.4659775274047436e-08,
    -1.1372848856791674e-09, 5.957176147748911e-11,
)

# erfcx(a) / t with t = 3 / (3 + a), as a polynomial in t, 0 <= t <= 3/4 (a >= 1).
_ERFCX_TAIL = (
    0.18806319451591877, 0.18806319451592704, 0.17761523926341824, 0.15671932888881723,
    0.1271167837213026, 0.0922904013727885, 0.056977870223875175, 0.026242460585605542,
    0.003833669300590565, -0.006132462681700868, -0.016924258083405128, 0.022831925119833684,
    -0.08448192119186133, 0.20272211376548266, -0.35410216223899177, 0.4881396744783608,
    -0.48846420462608664, 0.330708660939434, -0.143033422489347, 0.03574921743083608,
    -0.003935291033221721,
)

# float32 erf(x) = x * P(z) / Q(z), z = x**2, |x| <= 4.
_ERF32_P = (1.1283791394287936, 0.19352712718963805, 0.053099386170637315,
            0.0038825915534424233, 0.00028455124770913567, 1.9869376622849817e-06)
_ERF32_Q = (1.0, 0.5048415093066074, 0.11534259981968632, 0.015205726123673794,
            0.001185394093504373, 3.7421048918735795e-05)

# erfinv(a) / a in terms of w = -log(1 - a**2): a polynomial in w for w < 6.25 ...
_ERFINV_W_SPLIT = 6.25
_ERFINV_CENTRAL = (
    0.8862269388690153, 0.23201314254082755, 0.011552841283881258, -0.0023445080946986373,
    -0.0001147022809001812, 3.5306408612331197e-05, 8.09211710363168e-06, -3.1103912833753954e-06,
    4.108372133534167e-07, -2.6431648788711068e-08, 6.98368073027241e-10,
)
# ... and in u = sqrt(w) - 2.5 for 6.25 <= w <= 38 (|a| up to the last float64 below 1).
_ERFINV_TAIL = (
    2.335945854666864, 0.9822403055507255, 0.03557182798019754, -0.03296987203427453,
    0.023264781171213906, -0.012033315817710407, 0.004410955452926234, -0.0011099388256395409,
    0.00018200101023997377, -1.7496255729250313e-05, 7.475298389975946e-07,
)

_TWO_OVER_SQRT_PI = 1.1283791670955126
_SQRT_PI_OVER_TWO = 0.886226925452758


def erf(x, xp=np):
    """The error function of a floating backend array (same shape and dtype)."""
    if x.dtype == np.float64:
        return _blockwise(_erf64, x, xp, np.float64)
    return _blockwise(_erf32, x, xp, np.float32)


def erfc(x, xp=np):
    """The complementary error function ``1 - erf(x)``, accurate in the tail."""
    return _blockwise(_erfc64, x, xp, np.float64)


def erfinv(x, xp=np):
    """The inverse error function on ``[-1, 1]`` (``±inf`` at ``±1``, NaN outside)."""
    return _blockwise(_erfinv64, x, xp, np.float64)


# ---------------------------------------------------------------- blocks and helpers
def _blockwise(kernel, x, xp, work_dtype):
    """``kernel`` over the elements of ``x`` in ``work_dtype``; the result has ``x``'s dtype."""
    out = xp.empty(x.shape, x.dtype)
    src = x.reshape(-1)
    dst = out.reshape(-1)
    n = src.size
    # NumPy: blocks that fit in cache. Array libraries on a GPU want the whole array at once.
    step = _BLOCK_BYTES // np.dtype(work_dtype).itemsize if xp is np else max(n, 1)
    with np.errstate(all="ignore"):
        for i in range(0, n, step):
            block = src[i:i + step]
            if block.dtype != work_dtype:
                block = block.astype(work_dtype)
            dst[i:i + step] = kernel(block, xp)
    return out


def _poly(u, coefs):
    """``sum(c[k] * u**k)`` by Horner's rule, in a new array."""
    p = u * coefs[-1]
    p += coefs[-2]
    for c in coefs[-3::-1]:
        p *= u
        p += c
    return p


def _mask(cond, dtype):
    """A 0/1 array of ``dtype`` from a boolean array."""
    return cond.astype(dtype)


def _pick(mask, when_true, when_false):
    """``mask * when_true + (1 - mask) * when_false`` (in place in ``when_true``); exact."""
    when_true *= mask
    when_false *= 1.0 - mask
    when_true += when_false
    return when_true


def _erf_small(x, xp):
    """``erf`` on ``x`` clipped to ``[-1, 1]`` (accurate there)."""
    xs = xp.clip(x, -_SPLIT, _SPLIT)
    s = _poly(xs * xs, _ERF_SMALL)
    s *= xs
    return s


def _erfcx_tail(ac, xp):
    """``exp(a**2) * erfc(a)`` for ``a >= 1`` (``ac`` already clipped to a finite range)."""
    t = ac + _T_SCALE
    xp.divide(_T_SCALE, t, out=t)
    h = _poly(t, _ERFCX_TAIL)
    h *= t
    return h


def _exp_neg_square(a, xp):
    """``exp(-a**2)`` without the rounding error of ``a**2`` (relative error ~1e-16)."""
    hi = a * 16.0
    xp.floor(hi, out=hi)
    hi *= 0.0625
    lo = a - hi
    lo *= a + hi
    e = hi * hi
    xp.negative(e, out=e)
    xp.exp(e, out=e)
    xp.negative(lo, out=lo)
    xp.exp(lo, out=lo)
    e *= lo
    return e


# ---------------------------------------------------------------- kernels
def _erf64(x, xp):
    a = xp.abs(x)
    ac = xp.clip(a, _SPLIT, 6.0)          # erf(6) rounds to 1
    tail = _erfcx_tail(ac, xp)
    ac *= ac
    xp.negative(ac, out=ac)
    xp.exp(ac, out=ac)
    tail *= ac                            # erfc(|x|)
    xp.subtract(1.0, tail, out=tail)
    xp.copysign(tail, x, out=tail)
    return _pick(_mask(a < _SPLIT, x.dtype), _erf_small(x, xp), tail)


def _erfc64(x, xp):
    a = xp.abs(x)
    ac = xp.clip(a, _SPLIT, 28.0)         # erfc(28) underflows to 0
    tail = _erfcx_tail(ac, xp)
    tail *= _exp_neg_square(ac, xp)       # erfc(|x|)
    neg = _mask(x < 0, x.dtype)           # erfc(x) = 2 - erfc(|x|) for x < 0
    tail *= 1.0 - 2.0 * neg
    neg *= 2.0
    tail += neg
    small = _erf_small(x, xp)
    xp.subtract(1.0, small, out=small)
    return _pick(_mask(a < _SPLIT, x.dtype), small, tail)


def _erf32(x, xp):
    xc = xp.clip(x, -4.1, 4.1)            # erf(3.92) already rounds to 1 in float32;
    z = xc * xc                           # the rational reaches 1 by 4.1, and is clipped there
    p = _poly(z, _ERF32_P)
    p *= xc
    p /= _poly(z, _ERF32_Q)
    xp.clip(p, -1.0, 1.0, out=p)
    return p


def _erfinv64(x, xp):
    a = xp.abs(x)
    w = 1.0 - a
    w *= 1.0 + a
    xp.log(w, out=w)
    xp.negative(w, out=w)                 # NaN for |x| > 1, inf at |x| = 1
    central = _poly(xp.clip(w, 0.0, _ERFINV_W_SPLIT), _ERFINV_CENTRAL)
    u = xp.clip(w, _ERFINV_W_SPLIT, 38.0)
    xp.sqrt(u, out=u)
    u -= 2.5
    y = _pick(_mask(w < _ERFINV_W_SPLIT, x.dtype), central, _poly(u, _ERFINV_TAIL))
    y *= a                                # finite at a = 1 (u is clipped); fixed up below
    # One Halley step on f(y) = erf(y) - a, f' = 2/sqrt(pi) exp(-y^2), f''/f' = -2y.
    small = _erf_small(y, xp)
    small -= a                            # erf(y) - a, for y < 1
    yc = xp.clip(y, _SPLIT, 28.0)
    tail = _erfcx_tail(yc, xp)
    tail *= _exp_neg_square(yc, xp)
    xp.subtract(1.0 - a, tail, out=tail)  # (1 - a) - erfc(y), for y >= 1 (1 - a is exact there)
    r = _pick(_mask(y < _SPLIT, x.dtype), small, tail)
    e = y * y
    xp.exp(e, out=e)
    r *= e
    r *= _SQRT_PI_OVER_TWO                # Newton step f / f'
    e = r * y
    e += 1.0
    r /= e
    y -= r
    xp.copysign(y, x, out=y)
    y /= _mask(a < 1.0, x.dtype)          # ±inf at ±1 (NaN stays NaN)
    return y
