"""``lobpcg``: the ``k`` largest (or smallest) eigenpairs of a symmetric positive-definite ``A``,
optionally of the generalized problem ``A x = lambda B x``.

PyTorch finds them with the LOBPCG iteration (Knyazev, 2001), which pays off for large sparse
matrices. gputorch's tensors are dense, so it solves the problem directly: the Cholesky factor
``L`` of ``B`` turns it into the symmetric ``L^-1 A L^-T``, whose eigendecomposition gives the
eigenpairs (the eigenvectors ``B``-orthonormal). The result is what LOBPCG converges to, exact
rather than to ``tol``; the iteration's own options (``niter``, ``tol``, ``method``, ``tracker``,
``iK``, ``ortho_*``) are accepted and have nothing to tune. A composite of ``cholesky``,
``solve_triangular`` and ``eigh``, so gradients are those of the eigendecomposition (for
eigenvalues, PyTorch's).
"""
from .._tensor import Tensor
from ._linalg_common import mT

__all__ = ["lobpcg"]


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,  # noqa: N803
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """``(E, X)``: the ``k`` largest eigenvalues of ``A`` (..., m, m) in descending order (the
    smallest, ascending, with ``largest=False``) and their eigenvectors (..., m, k). ``k`` defaults
    to the number of columns of the initial guess ``X`` (1 without one); as in PyTorch, ``m`` must
    be at least 3 times the number of vectors iterated (``X``'s columns, or ``n``, or ``k``)."""
    from .decompositions import cholesky, eigh
    from .linalg_triangular import solve_triangular
    if not isinstance(A, Tensor):
        raise TypeError(f"lobpcg(): argument 'A' must be Tensor, not {type(A).__name__}")
    m = A._data.shape[-1]
    if A._data.ndim < 2 or A._data.shape[-2] != m:
        raise ValueError(f"A must be a square matrix or a batch of square matrices, but got shape {tuple(A.shape)}")
    if B is not None and tuple(B.shape) != tuple(A.shape):
        raise ValueError(f"A and B must have the same shapes, got {tuple(A.shape)} and {tuple(B.shape)}")
    if X is None:
        k = 1 if k is None else k
        n = k if n is None else n
    else:
        n = X.shape[-1]
        k = n if k is None else k
        if tuple(X.shape[-2:]) != (m, n):
            raise ValueError(f"X must be a {m} x {n} matrix (or a batch of them), but got shape {tuple(X.shape)}")
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x "
                         f"the number of requested eigenpairs (={n})")
    largest = True if largest is None else largest
    if B is None:
        values, vectors = eigh(A)
    else:
        L = cholesky(B)
        C = solve_triangular(L, mT(solve_triangular(L, A, upper=False)), upper=False)
        values, vectors = eigh(C)
        vectors = solve_triangular(mT(L), vectors, upper=True)
    if largest:
        values, vectors = values.flip(-1), vectors.flip(-1)
    return values[..., :k], vectors[..., :k]
