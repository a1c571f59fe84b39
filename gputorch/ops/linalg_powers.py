"""Matrix powers and the matrix exponential (composites of matmul, inv and solve, so their
gradients come from those ops).
"""
import numpy as np

from .._tensor import Tensor
from ._linalg_common import SCALAR_NAME, write_out
from .matmul import matmul
from .matrix_inverse import inv, solve
from .registry import tensor_method
from .comparison import where
from ..amp.autocast_mode import autocast_function

__all__ = ["matrix_power", "matrix_exp"]


def _identity_like(A):
    from .creation import eye
    n = A._data.shape[-1]
    return eye(n, dtype=A.dtype, device=A.device).expand(A._data.shape).clone()


def _check_square(name, A):
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    shape = A._data.shape
    prefix = f"linalg.{name}: "
    if len(shape) < 2:
        raise RuntimeError(f"{prefix}The input tensor A must have at least 2 dimensions.")
    if shape[-1] != shape[-2]:
        raise RuntimeError(f"{prefix}A must be batches of square matrices, but they are {shape[-2]} by {shape[-1]} "
                           f"matrices")


@tensor_method("matrix_power")
def matrix_power(A, n, *, out=None):
    """``A`` multiplied by itself ``n`` times (..., m, m); ``n = 0`` gives identities and negative
    ``n`` powers of ``inv(A)``. Squares ``A`` repeatedly, multiplying in the squares that the bits
    of ``|n|`` select, lowest first."""
    _check_square("matrix_power", A)
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}")
    if n == 0:
        identity = _identity_like(A)
        if A.requires_grad:   # connected to A (with zero gradient), as PyTorch's result is
            identity = A.where(identity != identity, identity)
        return write_out(identity, out)
    base = A if n > 0 else inv(A)
    n = abs(n)
    if n == 1:
        return write_out(base.clone(), out)
    if n == 2:
        return write_out(matmul(base, base), out)
    if n == 3:
        return write_out(matmul(matmul(base, base), base), out)
    result = square = None
    while n:
        square = base if square is None else matmul(square, square)
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
    return write_out(result, out)


# Pade (13, 13) approximant of exp (Higham, "The scaling and squaring method for the matrix
# exponential revisited", 2005): numerator coefficients, and the 1-norm below which it is accurate
# to double precision without scaling.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


@tensor_method("matrix_exp")
@autocast_function("matrix_exp")
def matrix_exp(A):
    """The matrix exponential ``sum_k A^k / k!`` of square ``A`` (..., n, n): scaling and squaring
    around a degree-13 Pade approximant. Each matrix of a batch is scaled by its own 1-norm and
    squared back its own number of times (a batch-wide scale would square the small matrices
    hundreds of times and lose all their precision when one matrix is huge)."""
    _check_square("matrix_exp", A)
    if A._dtype._category != 2:
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
                           f"{SCALAR_NAME[A._dtype]}")
    if A._data.size == 0:
        return A.clone()
    if A._dtype.itemsize < 4:    # half precision: computed in float32
        return matrix_exp(A.float()).to(A.dtype)
    norms = A._device.backend.to_numpy(abs(A._data).sum(-2).max(-1))      # (...,) 1-norms
    steps = np.zeros(norms.shape, dtype=np.int64)
    big = np.isfinite(norms) & (norms > _THETA13)
    steps[big] = np.ceil(np.log2(norms[big] / _THETA13)).astype(np.int64)
    most = int(steps.max()) if steps.size else 0
    x = A
    if most:
        scale = _tensor_like(np.ldexp(1.0, steps)[..., None, None], A)
        x = A / scale
    b = _PADE13
    eye = _identity_like(A)
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    odd = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * eye)
    even = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * eye
    result = solve(even - odd, even + odd)
    if most and np.all(steps == most):
        for _ in range(most):
            result = result @ result
    else:
        for k in range(most):
            still = _tensor_like((steps > k)[..., None, None], A, boolean=True)
            result = where(still, result @ result, result)
    return result


def _tensor_like(values, A, boolean=False):
    """A constant tensor of NumPy ``values`` on ``A``'s device (A's dtype, or bool)."""
    from .creation import tensor
    from .. import _dtype
    return tensor(values, dtype=_dtype.bool if boolean else A.dtype, device=A.device)
