"""``gputorch.special``: the functions of ``torch.special``.

Most are the elementwise ops defined once in ``gputorch.ops`` under their PyTorch names
(``special.gammaln`` is ``lgamma``, ``special.expit`` is ``sigmoid``, ...); this module
only gives them their ``torch.special`` names and signatures. ``softmax`` and
``log_softmax`` go through the Tensor methods of the same names.
"""
from .ops.gamma_functions import digamma, lgamma, mvlgamma, polygamma
from .ops.pointwise.activations import sigmoid
from .ops.pointwise.error_functions import erf, erfc, erfinv
from .ops.pointwise.exp_log import exp2, expm1, log1p
from .ops.pointwise.binary import xlogy
from .ops.pointwise.rounding import round  # noqa: A004
from .ops.reduction import logsumexp
from .ops.special_functions import (  # noqa: F401 - the polynomials are listed in __all__ below
    chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w,
    hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l, legendre_polynomial_p,
    shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w)
from .ops.bessel_functions import airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1
from .ops.special_functions import (entr, erfcx, i0, i0e, i1, i1e, igamma, igammac, log_ndtr, logit,
                                    modified_bessel_i0, modified_bessel_i1, modified_bessel_k0,
                                    modified_bessel_k1, ndtr, ndtri, scaled_modified_bessel_k0,
                                    scaled_modified_bessel_k1, sinc, spherical_bessel_j0, xlog1py, zeta)

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
           "gammaln",
           "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
           "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
           "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p"]


def expit(input, *, out=None):
    """The logistic sigmoid ``1 / (1 + exp(-input))``."""
    return sigmoid(input, out=out)


def gammaln(input, *, out=None):
    """``log |Gamma(input)|``."""
    return lgamma(input, out=out)


def gammainc(input, other, *, out=None):
    """The regularized lower incomplete gamma function ``P(input, other)``."""
    return igamma(input, other, out=out)


def gammaincc(input, other, *, out=None):
    """The regularized upper incomplete gamma function ``Q(input, other) = 1 - P(input, other)``."""
    return igammac(input, other, out=out)


def psi(input, *, out=None):
    """The digamma function, ``d/dx log Gamma(x)``."""
    return digamma(input, out=out)


def multigammaln(input, p, *, out=None):
    """The multivariate log-gamma function of dimension ``p``."""
    return mvlgamma(input, p, out=out)


def softmax(input, dim, *, dtype=None):
    """``exp(input) / sum(exp(input))`` along ``dim``; ``dtype`` casts the input first."""
    return input.softmax(dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """``input - logsumexp(input, dim)`` along ``dim``; ``dtype`` casts the input first."""
    return input.log_softmax(dim, dtype=dtype)
