"""The matrix operations ``MultivariateNormal`` needs and ``gputorch.linalg`` does not have yet:
``cholesky`` (a graph node of its own), ``solve_triangular`` (a composite of
``gputorch.linalg.solve``) and a positive-definiteness test.
"""
from ..autograd.node import Node
from .._dispatch import apply
from ..ops._common import xp_of

__all__ = ["cholesky", "solve_triangular", "positive_definite_mask", "positive_semidefinite_mask"]


class CholeskyBackward0(Node):
    """``L = cholesky(A)`` (lower, ``A = L L^T``). Backward, with ``Phi(X)`` the lower triangle of
    ``X`` with its diagonal halved: ``S = L^-T Phi(L^T gL) L^-1`` and ``gA = (S + S^T) / 2``."""
    saves_result = True

    def forward(ctx, a):
        xp = xp_of(a)
        try:
            return xp.linalg.cholesky(a._data)
        except xp.linalg.LinAlgError:
            from ..ops.matrix_inverse import LinAlgError
            raise LinAlgError("linalg.cholesky: The factorization could not be completed because the "
                              "input is not positive-definite.") from None

    def backward(ctx, grad):
        L = ctx.saved_result
        phi = (L.mT @ grad.tril()).tril()
        phi = phi - 0.5 * phi.diagonal(dim1=-2, dim2=-1).diag_embed()
        eye = _eye_like(L)
        L_inv = solve_triangular(L, eye)
        s = L_inv.mT @ phi @ L_inv
        return 0.5 * (s + s.mT)


def _eye_like(m):
    from .. import eye
    return eye(m.shape[-1], dtype=m.dtype, device=m.device)


def cholesky(A):
    """The lower Cholesky factor of the symmetric positive-definite matrices ``A`` (..., n, n)."""
    return apply(CholeskyBackward0, A)


def solve_triangular(L, B):
    """``L^-1 B`` for lower-triangular ``L`` (..., n, n) and ``B`` (..., n, k), batch dimensions
    broadcast. Only the lower triangle of ``L`` is read, so its gradient is lower-triangular."""
    from ..linalg import solve
    return solve(L.tril(), B)


def positive_definite_mask(A):
    """A bool tensor over the batch dimensions of ``A``: whether each matrix has a Cholesky factor."""
    from .. import tensor
    xp = xp_of(A)
    flat = A._data.reshape((-1,) + A._data.shape[-2:])
    ok = []
    for m in flat:
        try:
            xp.linalg.cholesky(m)
            ok.append(True)
        except xp.linalg.LinAlgError:
            ok.append(False)
    return tensor(ok, device=A.device).reshape(A.shape[:-2])


def positive_semidefinite_mask(A):
    """A bool tensor over the batch dimensions of symmetric ``A``: whether no eigenvalue is negative."""
    from .._tensor import Tensor
    eigenvalues = xp_of(A).linalg.eigvalsh(A._data)
    return Tensor._make((eigenvalues >= 0).all(-1), A._device)
