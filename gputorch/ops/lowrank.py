"""Randomized low-rank decompositions: ``svd_lowrank`` and ``pca_lowrank``.

The range of ``A`` (..., m, n) is captured by ``A`` applied to ``q`` random Gaussian vectors,
sharpened by ``niter`` power iterations (each re-orthonormalised by a QR decomposition); the SVD of
the small projection ``Q^H A`` then gives ``A ~= U diag(S) V^H`` (Halko, Martinsson and Tropp,
2011, algorithms 4.4 and 5.1). The result is exact when ``A`` has rank at most ``q``. The random
vectors come from the default generator of ``A``'s device; the whole computation is a composite
of matmul, QR and SVD, so it is differentiable.
"""
from .._tensor import Tensor
from ._linalg_common import mT

__all__ = ["svd_lowrank", "pca_lowrank"]


def _approximate_range(A, q, niter, M):
    """An orthonormal basis (..., m, min(m, q)) of the approximate range of ``A - M``."""
    from .sampling import randn
    from .decompositions import qr
    R = randn(tuple(A.shape[:-2]) + (A.shape[-1], q), dtype=A.dtype, device=A.device)

    def times(X):
        return A @ X if M is None else A @ X - M @ X

    def times_adjoint(X):
        return mT(A) @ X if M is None else mT(A) @ X - mT(M) @ X

    Q = qr(times(R)).Q
    for _ in range(niter):
        Q = qr(times_adjoint(Q)).Q
        Q = qr(times(Q)).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """``(U, S, V)`` with ``A - M ~= U diag(S) V^T`` of rank at most ``q`` (``M`` defaults to 0 and
    broadcasts to ``A``); ``niter`` power iterations improve the estimate."""
    from .decompositions import svd
    if not isinstance(A, Tensor):
        raise TypeError(f"svd_lowrank(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A._data.ndim < 2:
        raise ValueError(f"not enough values to unpack (expected 2, got {A._data.ndim})")
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    if M is not None:
        M = M.expand(A.shape)
    m, n = A._data.shape[-2:]
    transposed = m < n
    if transposed:
        A = mT(A)
        M = None if M is None else mT(M)
    Q = _approximate_range(A, q, niter, M)
    B = mT(Q) @ (A if M is None else A - M)
    U, S, Vh = svd(B, full_matrices=False)
    U, V = Q @ U, mT(Vh)
    return (V, S, U) if transposed else (U, S, V)


def pca_lowrank(A, q=None, center=True, niter=2):
    """``(U, S, V)``: the principal components of the rows of ``A`` (..., m, n) as a rank-``q`` SVD
    of ``A`` centred on its column means (``q`` defaults to ``min(6, m, n)``)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"pca_lowrank(): argument 'A' must be Tensor, not {type(A).__name__}")
    m, n = A._data.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (isinstance(q, int) and 0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not (isinstance(niter, int) and niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter)
    return svd_lowrank(A - A.mean(-2, keepdim=True), q, niter)
