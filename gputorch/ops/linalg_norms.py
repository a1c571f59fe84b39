"""Matrix norms and ``linalg.norm``: 'fro' and the vector norms come from the reductions, 1 / -1 /
inf / -inf from sums of absolute values, 'nuc' / 2 / -2 from the singular values.
"""
import math

from .. import _dtype
from .._tensor import Tensor
from ._linalg_common import SCALAR_NAME, write_out as _write
from .decompositions import svdvals

__all__ = ["matrix_norm", "norm"]


def _vector_norm():
    from .reduction import vector_norm
    return vector_norm


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Norm of each matrix in dims ``dim``: 'fro' (Frobenius), 1 / -1 (max / min column sum of
    absolute values), inf / -inf (max / min row sum), 'nuc' / 2 / -2 (sum / max / min of the
    singular values). Complex matrices have real norms."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.matrix_norm(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A._data.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if not (A._dtype.is_floating_point or A._dtype.is_complex):
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                           f"{SCALAR_NAME[A._dtype]}")
    if dtype is not None:
        dtype = _dtype.to_dtype(dtype)
        if A._dtype.is_complex and not dtype.is_complex:
            raise RuntimeError(f"linalg.matrix_norm: dtype should be complex for complex inputs, but got "
                               f"{SCALAR_NAME[dtype]}")
        A = A.to(dtype)
    if len(tuple(dim)) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {tuple(dim)}")
    d0, d1 = (A._wrap_dim(d) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if ord == "fro":
        result = _vector_norm()(A, 2, dim=(d0, d1), keepdim=keepdim)
    elif ord in (1, -1, math.inf, -math.inf):
        summed, picked = (d0, d1) if abs(ord) == 1 else (d1, d0)
        sums = A.abs().sum(summed, keepdim=True)
        if ord > 0 and sums.shape[picked] == 0:      # no sums to pick from: 0 (without history), as PyTorch
            result = sums.detach().sum(picked, keepdim=True)
        else:
            result = sums.amax(picked, keepdim=True) if ord > 0 else sums.amin(picked, keepdim=True)
        if not keepdim:
            result = result.reshape(tuple(s for i, s in enumerate(result.shape) if i not in (d0, d1)))
    elif ord in ("nuc", 2, -2):
        if A._dtype.itemsize < 4:
            raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got {SCALAR_NAME[A._dtype]}")
        moved = A.movedim((d0, d1), (-2, -1))
        s = svdvals(moved)
        if s.shape[-1] == 0:      # as PyTorch: nuc sums nothing, 2 is 0 without history, -2 has no minimum
            if ord == -2:
                raise IndexError("amin(): Expected reduction dim -1 to have non-zero size.")
            result = s.sum(-1) if ord == "nuc" else s.detach().sum(-1)
        else:
            result = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        if keepdim:
            result = result.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return _write(result, out)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """A vector norm (``dim`` an int, or ``dim=None`` with ``ord=None`` over all elements) or a matrix
    norm (``dim`` a pair, or a 2-D input with ``ord`` given)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.norm(): argument 'A' must be Tensor, not {type(A).__name__}")
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(tuple(dim)) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, tuple(dim), keepdim, dtype=dtype, out=out)
    if dim is None and ord is not None:
        if A._data.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {A._data.ndim}D.")
        if A._data.ndim == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype, out=out)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: Order {ord} not supported for vector norms.")
    return _write(_vector_norm()(A, 2 if ord is None else ord, dim=dim, keepdim=keepdim, dtype=dtype), out)
