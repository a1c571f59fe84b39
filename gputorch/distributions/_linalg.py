"""Matrix helpers of the distributions: ``cholesky`` and ``solve_triangular`` (the lower-triangular
case of ``gputorch.linalg``'s) and positive-(semi)definiteness tests.
"""
from ..ops.decompositions import cholesky as _linalg_cholesky, cholesky_factor
from ..ops.linalg_triangular import solve_triangular as _solve_triangular
from ..ops._common import xp_of

__all__ = ["cholesky", "solve_triangular", "positive_definite_mask", "positive_semidefinite_mask"]


def cholesky(A):
    """The lower Cholesky factor of the symmetric positive-definite matrices ``A`` (..., n, n)."""
    return _linalg_cholesky(A)


def solve_triangular(L, B):
    """``L^-1 B`` for lower-triangular ``L`` (..., n, n); batch dimensions broadcast."""
    return _solve_triangular(L, B, upper=False)


def positive_definite_mask(A):
    """A bool tensor over the batch dimensions of ``A``: whether each matrix has a Cholesky factor."""
    from .._tensor import Tensor
    _, info = cholesky_factor(xp_of(A), A._data)
    return Tensor._make(info == 0, A._device)


def positive_semidefinite_mask(A):
    """A bool tensor over the batch dimensions of symmetric ``A``: whether no eigenvalue is negative."""
    from .._tensor import Tensor
    eigenvalues = xp_of(A).linalg.eigvalsh(A._data)
    return Tensor._make((eigenvalues >= 0).all(-1), A._device)
