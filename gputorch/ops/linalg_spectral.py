"""Functions of the singular values or determinant: ``pinv``, ``matrix_rank``, ``cond``,
``lstsq``, ``slogdet``/``logdet`` (batched, with gradients).
"""
import math

from .._dispatch import apply
from .._tensor import Tensor
from ..autograd.node import Node
from ._common import quiet_errors, xp_of
from ._linalg_common import SCALAR_NAME, mH, mT, write_out
from .decompositions import _check_matrix, eigvalsh, svd_arrays, svdvals
from ..return_types import linalg_lstsq, linalg_slogdet
from .matrix_inverse import _check_square
from .registry import tensor_method
from ..amp.autocast_mode import autocast_function

__all__ = ["pinv", "matrix_rank", "cond", "lstsq", "slogdet", "logdet"]


def _eps(t):
    """The machine epsilon of ``t``'s (real) precision: double for float64 and complex128."""
    double = t._dtype.itemsize == (16 if t._dtype.is_complex else 8)
    return 2.220446049250313e-16 if double else 1.1920928955078125e-07


def _tolerance_array(xp, value, like):
    """``value`` (None, a number or a Tensor over the batch dims) as an array broadcasting against
    the batch of singular values (..., k): with a trailing axis of size 1."""
    if isinstance(value, Tensor):
        return value._data.astype(like.dtype)[..., None]
    return value


def _cutoff(xp, A, largest, atol, rtol):
    """PyTorch's rule: ``max(atol, rtol * largest)``; without either, ``rtol = eps * max(m, n)``;
    with ``atol`` given (and positive) but no ``rtol``, ``rtol = 0``."""
    if rtol is None:
        positive_atol = atol is not None and (isinstance(atol, Tensor) or atol > 0)
        rtol = 0.0 if positive_atol else _eps(A) * max(A._data.shape[-2:])
    atol = 0.0 if atol is None else atol
    a, r = _tolerance_array(xp, atol, largest), _tolerance_array(xp, rtol, largest)
    return xp.maximum(a, r * largest)


# ---------------------------------------------------------------- pseudo-inverse
class LinalgPinvBackward0(Node):
    """``P = pinv(A)`` from the SVD (or the eigendecomposition when ``hermitian``), singular values
    at or below the cutoff dropped. ``gA = -P^H gP P^H + (I - A P) gP^H P P^H + P^H P gP^H (I - P A)``
    (the derivative at fixed rank; ``^H`` is ``^T`` for real matrices)."""

    saves_result = True
    supports_complex = True

    def forward(ctx, a, atol, rtol, hermitian):
        ctx.save_for_backward(a)
        xp, x = xp_of(a), a._data
        m, n = x.shape[-2:]
        if x.size == 0:
            return xp.zeros(x.shape[:-2] + (n, m), dtype=x.dtype)
        with quiet_errors():
            if hermitian:
                w, v = xp.linalg.eigh(x)
                size = xp.abs(w)
                cut = _cutoff(xp, a, size.max(-1, keepdims=True), atol, rtol)
                keep = xp.where(size > cut, 1 / w, 0).astype(x.dtype)
                return (v * keep[..., None, :]) @ xp.conj(xp.swapaxes(v, -1, -2))
            u, s, vh = svd_arrays(xp, x, False)
            cut = _cutoff(xp, a, s[..., :1], atol, rtol)
            keep = xp.where(s > cut, 1 / s, 0).astype(x.dtype)
            return (xp.conj(xp.swapaxes(vh, -1, -2)) * keep[..., None, :]) @ xp.conj(xp.swapaxes(u, -1, -2))

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        p = ctx.saved_result
        pt = mH(p)
        result = -(pt @ grad @ pt)
        gt = mH(grad)
        result = result + (gt - a @ (p @ gt)) @ (p @ pt)
        return result + (pt @ p) @ (gt - (gt @ p) @ a)


@autocast_function("pinv")
def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The Moore-Penrose pseudo-inverse of ``A`` (..., m, n) -> (..., n, m); singular values (or
    eigenvalue magnitudes when ``hermitian``) at most ``max(atol, rtol * largest)`` count as 0."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg_pinv(): argument 'input' (position 1) must be Tensor, not {type(A).__name__}")
    if A._dtype._category not in (2, 3) or A._dtype.itemsize < 4 or A._data.ndim < 2:
        raise RuntimeError(f"linalg.pinv({SCALAR_NAME[A._dtype]}{{{list(A._data.shape)}}}): expected a tensor with 2 "
                           f"or more dimensions of float, double, cfloat or cdouble types")
    if hermitian:
        _check_square("linalg.eigh", A)
    return write_out(apply(LinalgPinvBackward0, A, atol, rtol, bool(hermitian)), out)


@tensor_method("pinverse")
@autocast_function("pinverse")
def pinverse(input, rcond=1e-15):
    """``torch.pinverse``: :func:`pinv` with ``rtol=rcond``."""
    return pinv(input, rtol=rcond)


# ---------------------------------------------------------------- rank and condition number
@autocast_function("matrix_rank")
def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values (eigenvalue magnitudes when ``hermitian``) of each matrix of
    ``A`` above ``max(atol, rtol * largest)`` (int64). ``tol`` is the older spelling of ``atol``
    (with ``rtol = 0``)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg_matrix_rank(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(A).__name__}")
    if tol is not None:
        atol, rtol = tol, 0.0
    if A._data.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if A._dtype._category not in (2, 3) or A._dtype.itemsize < 4:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if hermitian:
        values = eigvalsh(A.detach()).abs()
    else:
        values = svdvals(A.detach())
    xp, s = xp_of(A), values._data
    if s.shape[-1] == 0:
        return write_out(Tensor._make(xp.zeros(s.shape[:-1], dtype="int64"), A._device), out)
    cut = _cutoff(xp, A, s.max(-1, keepdims=True), atol, rtol)
    return write_out(Tensor._make((s > cut).sum(-1).astype("int64"), A._device), out)


def cond(A, p=None, *, out=None):
    """The condition number of ``A`` in the norm ``p``: for ``None``/2/-2 the ratio of the largest to
    the smallest singular value (inverted for -2); for 'fro', 'nuc', inf, -inf, 1, -1 the product
    ``matrix_norm(A, p) * matrix_norm(inv(A), p)`` (square ``A``; inf where ``A`` is singular)."""
    from .linalg_norms import matrix_norm
    if p not in (None, 2, -2, "fro", "nuc", math.inf, -math.inf, 1, -1) or isinstance(p, bool):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if isinstance(A, Tensor) and A._data.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    _check_matrix("linalg.svd" if p in (None, 2, -2) else "linalg.cond", A,
                  "linalg_svd_cpu" if p in (None, 2, -2) else None)
    if A._data.size == 0:
        return write_out(A.new_zeros(A._data.shape[:-2]), out)
    if p in (None, 2, -2):
        s = svdvals(A)
        big, small = s[..., 0], s[..., -1]
        return write_out(big / small if p != -2 else small / big, out)
    shape = A._data.shape
    if shape[-1] != shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they are {shape[-2]} "
                           f"by {shape[-1]} matrices")
    from .linalg_solvers import inv_ex
    inverse, info = inv_ex(A)
    singular = info._data.any()
    if singular:
        inverse = inverse.masked_fill((info != 0).unsqueeze(-1).unsqueeze(-1), 0.0)
    result = matrix_norm(A, p) * matrix_norm(inverse, p)
    if singular:
        result = result.masked_fill(info != 0, math.inf)
    return write_out(result, out)


# ---------------------------------------------------------------- least squares
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@autocast_function("lstsq")
def lstsq(A, B, rcond=None, *, driver=None):
    """``(solution, residuals, rank, singular_values)`` of ``min ||A X - B||`` for ``A`` (..., m, n)
    and ``B`` (..., m, k) (or (..., m)), as PyTorch on CPU: the minimum-norm solution with
    singular values below ``rcond * largest`` (default ``eps * max(m, n)``) dropped; ``rank`` for
    every driver but 'gels'; ``residuals`` (squared, per column) for 'gelsd', 'gelss' and 'gels'
    when ``m > n`` and every matrix has full rank; ``singular_values`` for 'gelsd' and 'gelss'."""
    for arg, t in (("self", A), ("b", B)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linalg_lstsq(): argument '{arg}' must be Tensor, not {type(t).__name__}")
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if A._data.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if A._dtype is not B._dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {SCALAR_NAME[A._dtype]} and other's dtype {SCALAR_NAME[B._dtype]}")
    if A._dtype._category != 2 or A._dtype.itemsize < 4:
        raise RuntimeError("This function doesn't handle types other than float and double")
    vector = B._data.ndim == A._data.ndim - 1
    if B._data.ndim < 1 or not (vector or B._data.ndim == A._data.ndim):
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    rhs = B.unsqueeze(-1) if vector else B
    m, n = A._data.shape[-2:]
    if rhs._data.shape[-2] != m:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    tol = _eps(A) * max(m, n) if rcond is None or rcond < 0 else rcond
    solution = pinv(A, rtol=tol) @ rhs
    xp, dev = xp_of(A), A._device
    s = svdvals(A.detach())
    empty = Tensor._make(xp.zeros((0,), dtype=A._data.dtype), dev)
    if driver == "gels":
        rank = Tensor._make(xp.zeros((0,), dtype="int64"), dev)
    else:
        rank = matrix_rank(A.detach(), rtol=tol)
    full = bool((rank._data == min(m, n)).all()) if driver != "gels" else True
    residuals = empty
    if driver != "gelsy" and m > n and full:
        residuals = ((A @ solution - rhs) ** 2).sum(-2)
    values = s if driver in ("gelsd", "gelss") else empty
    if vector:
        solution = solution.squeeze(-1)
    return linalg_lstsq(solution, residuals, rank, values)


# ---------------------------------------------------------------- log-determinants
class LinalgSlogdetBackward0(Node):
    """``(sign, log|det A|)``; the sign is piecewise constant, so ``gA = g_logabsdet * A^-T``.

    ``A^-T`` is solved through an LU factorization that does not refuse singular matrices (as
    PyTorch's): a zero pivot gives inf/NaN gradients where ``log|det A|`` is -inf, not an error."""

    def forward(ctx, a):
        ctx.save_for_backward(a)
        sign, logabs = xp_of(a).linalg.slogdet(a._data)
        return sign, logabs

    def backward(ctx, gsign, glogabs):
        (a,) = ctx.saved_values
        g = glogabs.reshape(glogabs._data.shape + (1, 1))
        return g * _inverse_transpose(a)


def _inverse_transpose(a):
    """``A^-T`` by LU with partial pivoting, completed even at a zero pivot (inf/NaN entries then)."""
    from .creation import eye
    from .linalg_lu import lu_factor_ex, lu_solve
    n = a.shape[-1]
    LU, pivots, _ = lu_factor_ex(mT(a))   # noqa: N806 - the factorization's usual name
    with quiet_errors():
        return lu_solve(LU, pivots, eye(n, dtype=a.dtype, device=a.device).expand(a.shape))


def slogdet(A, *, out=None):
    """``(sign, logabsdet)`` of square ``A`` (..., n, n): ``det A = sign * exp(logabsdet)``
    (sign 0 and logabsdet -inf for singular matrices)."""
    _check_matrix("linalg.slogdet", A)
    _check_square("linalg.slogdet", A)
    sign, logabs = apply(LinalgSlogdetBackward0, A)
    if out is not None:
        write_out(sign, out[0])
        write_out(logabs, out[1])
        return linalg_slogdet(*out)
    return linalg_slogdet(sign, logabs)


@tensor_method("logdet")
def logdet(input):
    """``log det A`` of square ``input`` (..., n, n): NaN where the determinant is negative, -inf
    where it is 0."""
    if isinstance(input, Tensor) and input._dtype._category == 2:
        _check_square("logdet", input)
    sign, logabs = slogdet(input)
    # PyTorch's composite: NaN where the determinant is negative, with no gradient there (a NaN constant)
    from .comparison import where
    sign = sign.detach()
    return where(sign < 0, math.nan, logabs + sign.log())

