"""The ``_ex`` forms of inverse and solve (``linalg.inv_ex``, ``linalg.solve_ex``): results with an
int32 ``info`` per matrix instead of an error, and the LU pivot check that finds ``info``.
"""
from .._tensor import Tensor
from ._common import quiet_errors, xp_of
from ._linalg_common import write_out
from ..return_types import linalg_inv_ex, linalg_solve_ex
from .matrix_inverse import LinAlgError, inv, solve
from ..amp.autocast_mode import autocast_function

__all__ = ["inv_ex", "solve_ex", "singular_info"]


def _first_zero_pivot(xp, m):
    """LAPACK ``getrf``'s info for one square array: the 1-based index of the first exactly zero
    pivot of the LU factorization with partial pivoting (0 when there is none)."""
    u = m.copy()
    n = u.shape[-1]
    with quiet_errors():
        for k in range(n):
            p = k + int(xp.argmax(xp.abs(u[k:, k])))
            if u[p, k] == 0:
                return k + 1
            if p != k:
                u[[k, p]] = u[[p, k]]
            u[k + 1:, k:] -= u[k + 1:, k:k + 1] / u[k, k] * u[k:k + 1, k:]
    return 0


def singular_info(xp, x):
    """``info`` (int32 array over the batch dims of ``x`` (..., n, n)): per matrix, its first zero
    LU pivot (1-based), 0 for invertible matrices."""
    flat = x.reshape((-1,) + x.shape[-2:])
    return xp.asarray([_first_zero_pivot(xp, m) for m in flat], dtype="int32").reshape(x.shape[:-2])


def _nan_result(A, shape):
    xp = xp_of(A)
    return Tensor._make(xp.full(shape, float("nan"), dtype=A._data.dtype), A._device)


@autocast_function("inv_ex")
def inv_ex(A, *, check_errors=False, out=None):
    """``(inverse, info)``: :func:`gputorch.linalg.inv` reporting singular matrices in ``info``
    (int32 per matrix, the first zero LU pivot, else 0); their inverse is NaN."""
    try:
        result = inv(A)
        info = Tensor._make(xp_of(A).zeros(A._data.shape[:-2], dtype="int32"), A._device)
    except LinAlgError:
        if check_errors:
            raise_singular("linalg.inv_ex", A)
        xp = xp_of(A)
        info = Tensor._make(singular_info(xp, A._data), A._device)
        good = (info == 0).unsqueeze(-1).unsqueeze(-1)
        safe = A.where(good, _eye_like(A))
        result = inv(safe).where(good, _nan_result(A, A._data.shape))
    return _pair(linalg_inv_ex, result, info, out)


@autocast_function("solve_ex")
def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``(result, info)``: :func:`gputorch.linalg.solve` reporting singular matrices in ``info``
    (int32 over ``A``'s batch dims) instead of raising; their results are NaN."""
    xp = xp_of(A)
    try:
        result = solve(A, B, left=left)
        info = xp.zeros(A._data.shape[:-2], dtype="int32")
    except LinAlgError as e:
        if check_errors:
            raise LinAlgError(str(e).replace("torch.linalg.solve:", "torch.linalg.solve_ex:")) from None
        info = singular_info(xp, A._data)
        good = Tensor._make(info == 0, A._device).unsqueeze(-1).unsqueeze(-1)
        result = solve(A.where(good, _eye_like(A)), B, left=left)
        vector = result._data.ndim < max(A._data.ndim, B._data.ndim) or result._data.ndim == B._data.ndim == \
            A._data.ndim - 1
        result = result.where(good.squeeze(-1) if vector and left else good, _nan_result(A, ()))
    info = Tensor._make(info, A._device)
    return _pair(linalg_solve_ex, result, info, out)


def _eye_like(A):
    from .creation import eye
    n = A._data.shape[-1]
    return eye(n, dtype=A.dtype, device=A.device)


def _pair(kind, result, info, out):
    if out is not None:
        write_out(result, out[0])
        write_out(info, out[1])
        return kind(*out)
    return kind(result, info)


def raise_singular(name, A):
    """PyTorch's error for a singular input of ``inv``: which pivot is zero, in which batch element."""
    info = singular_info(xp_of(A), A._data).reshape(-1)
    for i in range(info.shape[0]):
        k = int(info[i])
        if k:
            where = f"(Batch element {i}): " if A._data.ndim > 2 else ""
            raise LinAlgError(f"{name}: {where}The diagonal element {k} is zero, the inversion could not be "
                              f"completed because the input matrix is singular.")
    raise LinAlgError(f"{name}: The inversion could not be completed because the input matrix is singular.")
