"""LU factorization with partial pivoting: ``linalg.lu_factor``/``lu_factor_ex``, ``linalg.lu`` and
``linalg.lu_solve`` (batched, with gradients).

``xp.linalg`` has no LU (CuPy keeps it in ``cupyx.scipy``), so the factorization is a loop over
columns on the array module, every matrix of the batch at once: LAPACK ``getrf``'s pivoting
(the first row of largest magnitude), its 1-based int32 pivots and its ``info``.
"""
from .._dispatch import apply
from .._tensor import Tensor
from ._common import quiet_errors, xp_of
from ._linalg_common import SCALAR_NAME, mT, write_out
from ._reducing import const
from .decompositions import MultiOutputNode, keep_outputs
from ..return_types import linalg_lu, linalg_lu_factor, linalg_lu_factor_ex
from .linalg_triangular import solve_triangular
from .matrix_inverse import LinAlgError, _broadcast
from ..amp.autocast_mode import autocast_function

__all__ = ["lu_factor", "lu_factor_ex", "lu", "lu_solve"]


def lu_arrays(xp, a):
    """``(lu, pivots, info)`` for arrays ``a`` (..., m, n): ``L`` (unit diagonal, not stored) and
    ``U`` packed in ``lu``; ``pivots`` (..., k) 1-based rows swapped in turn; ``info`` per matrix,
    the first zero pivot (1-based) or 0."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    count = 1
    for size in batch:
        count *= size
    lu = a.reshape((count, m, n)).copy()
    rows = xp.arange(count)
    pivots = xp.zeros((count, k), dtype="int32")
    info = xp.zeros((count,), dtype="int32")
    with quiet_errors():
        for j in range(k):
            p = j + xp.argmax(xp.abs(lu[:, j:, j]), axis=1)
            pivots[:, j] = p + 1
            top, chosen = lu[rows, j, :].copy(), lu[rows, p, :].copy()
            lu[rows, p, :] = top
            lu[rows, j, :] = chosen
            pivot = lu[:, j, j]
            zero = pivot == 0
            info = xp.where((info == 0) & zero, j + 1, info).astype("int32")
            lu[:, j + 1:, j] /= xp.where(zero, 1, pivot)[:, None]
            lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
    return lu.reshape(a.shape), pivots.reshape(batch + (k,)), info.reshape(batch)


def permutation_of(xp, pivots, m):
    """The row order ``perm`` (..., m) with ``(P^T A)[i] = A[perm[i]]`` for the swaps ``pivots``."""
    batch, k = pivots.shape[:-1], pivots.shape[-1]
    count = 1
    for size in batch:
        count *= size
    flat = pivots.reshape((count, k)).astype("int64") - 1
    perm = xp.broadcast_to(xp.arange(m), (count, m)).copy()
    rows = xp.arange(flat.shape[0])
    for j in range(k):
        p = flat[:, j]
        here, there = perm[rows, j].copy(), perm[rows, p].copy()
        perm[rows, j] = there
        perm[rows, p] = here
    return perm.reshape(batch + (m,))


def permutation_matrix(pivots, m, like):
    """The (..., m, m) permutation matrix ``P`` of the row swaps ``pivots`` (``A = P L U``), in the
    dtype and on the device of ``like``."""
    xp = xp_of(like)
    perm = permutation_of(xp, pivots._data, m)
    P = xp.zeros(pivots._data.shape[:-1] + (m, m), dtype=like._data.dtype)
    xp.put_along_axis(P, perm[..., None, :], 1, axis=-2)
    return Tensor._make(P, like._device)


def _unpack(lu, m, n):
    k = min(m, n)
    from .creation import eye
    L = lu[..., :, :k].tril(-1) + eye(m, k, dtype=lu.dtype, device=lu.device)
    return L, lu[..., :k, :].triu()


def _square_grad(L, U, gL, gU):
    """``L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T`` for square ``L`` (unit lower) and ``U``."""
    inner = (mT(L) @ gL).tril(-1) + (gU @ mT(U)).triu()
    x = solve_triangular(mT(L), inner, upper=True, unitriangular=True)
    return solve_triangular(mT(U), x, upper=False, left=False)


class LinalgLuFactorExBackward0(MultiOutputNode):
    """``P^T A = L U`` packed in one matrix. Square: ``gA = P L^-T (tril(L^T gL, -1) +
    triu(gU U^T)) U^-T``; tall matrices add ``L2 = A2 U^-1`` below, wide ones ``U2 = L^-1 A2``
    to the right (their gradients folded into the square part's)."""

    def forward(ctx, a, out_info):
        xp = xp_of(a)
        lu, pivots, info = lu_arrays(xp, a._data)
        ctx.perm = permutation_of(xp, pivots, a._data.shape[-2])
        out_info.append(info)
        return lu, pivots

    def backward(ctx, glu, _gpivots=None):
        lu = ctx.outputs()[0]
        m, n = lu._data.shape[-2:]
        L, U = _unpack(lu, m, n)
        gL, gU = _unpack_grad(glu, m, n)
        if m == n:
            g = _square_grad(L, U, gL, gU)
        elif m > n:
            L1, L2 = L[..., :n, :], L[..., n:, :]
            gL1, gL2 = gL[..., :n, :], gL[..., n:, :]
            g2 = solve_triangular(mT(U), gL2, upper=False, left=False)
            gU = gU - mT(L2) @ g2
            from .shape import cat
            g = cat([_square_grad(L1, U, gL1, gU), g2], -2)
        else:
            U1, U2 = U[..., :, :m], U[..., :, m:]
            gU1, gU2 = gU[..., :, :m], gU[..., :, m:]
            g2 = solve_triangular(mT(L), gU2, upper=True, unitriangular=True)
            gL = gL - g2 @ mT(U2)
            from .shape import cat
            g = cat([_square_grad(L, U1, gL, gU1), g2], -1)
        return _unpermute_rows(g, ctx.perm)


def _unpack_grad(glu, m, n):
    k = min(m, n)
    return glu[..., :, :k].tril(-1), glu[..., :k, :].triu()


def _unpermute_rows(g, perm):
    """``P g``: row ``perm[i]`` of the result is row ``i`` of ``g``."""
    inverse = perm.argsort(-1)
    index = const(inverse, g).unsqueeze(-1).expand(g._data.shape)
    return g.gather(-2, index)


def _check_lu(name, A, pivot):
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A._data.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A._data.shape)} instead")
    if A._dtype._category != 2 or A._dtype.itemsize < 4:
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{SCALAR_NAME[A._dtype]}'")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """``(LU, pivots, info)``: the LU factorization with partial pivoting of ``A`` (..., m, n), ``L``
    (unit diagonal) and ``U`` packed in ``LU``, the 1-based row swaps in ``pivots`` (int32,
    (..., min(m, n))) and per matrix the first zero pivot in ``info`` (int32; 0 when none)."""
    _check_lu("torch.lu_factor", A, pivot)
    infos = []
    lu_t, pivots = keep_outputs(apply(LinalgLuFactorExBackward0, A, infos))
    info = Tensor._make(infos[0], A._device)
    if check_errors and infos[0].any():
        _raise_zero_pivot("torch.linalg.lu_factor_ex", infos[0], A)
    result = (lu_t, pivots, info)
    if out is not None:
        for src, dst in zip(result, out):
            write_out(src, dst)
        return linalg_lu_factor_ex(*out)
    return linalg_lu_factor_ex(*result)


def _raise_zero_pivot(name, info, A):
    flat = info.reshape(-1)
    for i in range(flat.shape[0]):
        k = int(flat[i])
        if k:
            where = f"(Batch element {i}): " if A._data.ndim > 2 else ""
            raise LinAlgError(f"{name}: {where}U[{k},{k}] is zero and using it on lu_solve would result in a "
                              f"division by zero. If you still want to perform the factorization, consider calling "
                              f"linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor(A, *, pivot=True, out=None):
    """``(LU, pivots)`` of :func:`lu_factor_ex`; raises when a pivot is zero."""
    _check_lu("torch.lu_factor", A, pivot)
    lu_t, pivots, info = lu_factor_ex(A)
    if info._data.any():
        _raise_zero_pivot("torch.linalg.lu_factor", info._data, A)
    if out is not None:
        write_out(lu_t, out[0])
        write_out(pivots, out[1])
        return linalg_lu_factor(*out)
    return linalg_lu_factor(lu_t, pivots)


def lu(A, *, pivot=True, out=None):
    """``(P, L, U)`` with ``A = P L U`` for ``A`` (..., m, n): ``P`` a permutation matrix, ``L``
    (m, k) unit lower trapezoidal, ``U`` (k, n) upper trapezoidal, ``k = min(m, n)``."""
    _check_lu("linalg.lu", A, pivot)
    lu_t, pivots, _ = lu_factor_ex(A)
    m, n = A._data.shape[-2:]
    L, U = _unpack(lu_t, m, n)
    P = permutation_matrix(pivots, m, A)
    if out is not None:
        for src, dst in zip((P, L, U), out):
            write_out(src, dst)
        return linalg_lu(*out)
    return linalg_lu(P, L, U)


@autocast_function("lu_solve")
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """``X`` with ``A X = B`` (``X A = B`` when not ``left``; ``A^T`` for ``A`` when ``adjoint``)
    from ``(LU, pivots)`` of :func:`lu_factor`."""
    for arg, t in (("LU", LU), ("pivots", pivots), ("B", B)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linalg_lu_solve(): argument '{arg}' must be Tensor, not {type(t).__name__}")
    if B._data.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    n = LU._data.shape[-1]
    if LU._data.ndim < 2 or LU._data.shape[-2] != n:
        raise RuntimeError("linalg.lu_solve: A must be batches of square matrices, but they are "
                           f"{LU._data.shape[-2]} by {n} matrices")
    if (B._data.shape[-2] if left else B._data.shape[-1]) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX' if left else 'XA'} = B ({n}x{n} and {B._data.shape[-2]}x{B._data.shape[-1]})")
    if pivots._dtype.name != "int32":
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type int32")
    if not left:     # X A = B  <=>  A^T X^T = B^T
        return write_out(mT(lu_solve(LU, pivots, mT(B), adjoint=not adjoint)), out)
    L = LU.tril(-1)
    U = LU.triu()
    xp = xp_of(LU)
    perm = permutation_of(xp, pivots._data, n)
    batch = _broadcast(_broadcast(LU._data.shape[:-2], B._data.shape[:-2]), perm.shape[:-1])
    if not adjoint:
        index = const(xp.broadcast_to(perm[..., :, None], batch + (n, B._data.shape[-1])), B)
        pb = B.expand(batch + B._data.shape[-2:]).gather(-2, index)
        y = solve_triangular(L, pb, upper=False, unitriangular=True)
        return write_out(solve_triangular(U, y, upper=True), out)
    y = solve_triangular(mT(U), B, upper=False)
    x = solve_triangular(mT(L), y, upper=True, unitriangular=True)
    x = x.expand(batch + x._data.shape[-2:])
    inverse = xp.argsort(perm, axis=-1)
    index = const(xp.broadcast_to(inverse[..., :, None], x._data.shape), x)
    return write_out(x.gather(-2, index), out)
