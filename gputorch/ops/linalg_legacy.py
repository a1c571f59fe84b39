"""PyTorch's older top-level spellings of the decompositions (``torch.cholesky``, ``torch.qr``,
``torch.svd``, ``torch.slogdet``, ``torch.lu_solve``, ``torch.lu_unpack``, ``torch.orgqr``) and
their Tensor methods, on top of ``gputorch.linalg``'s."""
import warnings

from .._tensor import Tensor
from ._linalg_common import mT, write_out
from .decompositions import cholesky as _linalg_cholesky, qr as _linalg_qr, svd as _linalg_svd
from ..return_types import lu_unpack as _lu_unpack_result, qr as _qr_result, slogdet as _slogdet_result
from ..return_types import svd as _svd_result
from .linalg_generators import householder_product as _householder_product
from .linalg_lu import _unpack, lu_solve as _linalg_lu_solve, permutation_matrix
from .linalg_spectral import slogdet as _linalg_slogdet
from .registry import tensor_method
from ..amp.autocast_mode import autocast_function

__all__ = ["cholesky", "qr", "svd", "slogdet", "lu_solve", "lu_unpack", "orgqr"]

_warned = set()


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


@tensor_method("cholesky")
@autocast_function("legacy.cholesky")
def cholesky(input, upper=False, *, out=None):
    """``torch.cholesky`` (deprecated in PyTorch for ``torch.linalg.cholesky``)."""
    _warn_once("cholesky", "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
                           "future PyTorch release.")
    return _linalg_cholesky(input, upper=upper, out=out)


@tensor_method("qr")
@autocast_function("legacy.qr")
def qr(input, some=True, *, out=None):
    """``(Q, R)``: ``linalg.qr`` with mode 'reduced' (``some=True``) or 'complete'."""
    q, r = _linalg_qr(input, "reduced" if some else "complete")
    if out is not None:
        write_out(q, out[0])
        write_out(r, out[1])
        return _qr_result(*out)
    return _qr_result(q, r)


@tensor_method("svd")
@autocast_function("legacy.svd")
def svd(input, some=True, compute_uv=True, *, out=None):
    """``(U, S, V)`` with ``input = U diag(S) V^T`` (``V``, not ``Vh``); reduced when ``some``.
    Without ``compute_uv``, ``U`` and ``V`` are zero-filled (m, m) and (n, n) matrices."""
    if not isinstance(input, Tensor):
        raise TypeError(f"svd(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if compute_uv:
        u, s, vh = _linalg_svd(input, full_matrices=not some)
        result = (u, s, mT(vh))
    else:
        from .decompositions import svdvals
        from .creation import zeros
        s = svdvals(input)
        shape = input._data.shape
        m, n = shape[-2:]
        u = zeros(shape[:-2] + (m, m), dtype=input.dtype, device=input.device)
        v = zeros(shape[:-2] + (n, n), dtype=input.dtype, device=input.device)
        result = (u, s, v)
    if out is not None:
        for src, dst in zip(result, out):
            write_out(src, dst)
        return _svd_result(*out)
    return _svd_result(*result)


@tensor_method("slogdet")
def slogdet(input):
    """``(sign, logabsdet)``: ``linalg.slogdet``."""
    return _slogdet_result(*_linalg_slogdet(input))


@tensor_method("lu_solve")
@autocast_function("legacy.lu_solve")
def lu_solve(b, LU_data, LU_pivots, *, out=None):  # noqa: N803 - PyTorch's argument names
    """``torch.lu_solve(b, LU, pivots)``: ``X`` with ``A X = b`` (deprecated in PyTorch for
    ``torch.linalg.lu_solve(LU, pivots, b)``, whose arguments are in the other order)."""
    _warn_once("lu_solve", "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
                           "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
                           "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
                           "X = torch.linalg.lu_solve(LU, pivots, B)")
    return _linalg_lu_solve(LU_data, LU_pivots, b, out=out)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):  # noqa: N803
    """``(P, L, U)`` from ``(LU, pivots)`` of ``linalg.lu_factor``: ``A = P L U``. A part not asked
    for (``unpack_data``, ``unpack_pivots`` False) is an empty tensor. ``L`` and ``U`` are the
    triangles of ``LU``, so gradients flow to it."""
    for arg, t in (("LU_data", LU_data), ("LU_pivots", LU_pivots)):
        if not isinstance(t, Tensor):
            raise TypeError(f"lu_unpack(): argument '{arg}' must be Tensor, not {type(t).__name__}")
    if LU_pivots._dtype.name != "int32":
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")
    if LU_data._data.ndim < 2:
        raise RuntimeError("torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(LU_data._data.shape)} instead")
    m, n = LU_data._data.shape[-2:]
    empty = LU_data.new_empty((0,))
    L, U = _unpack(LU_data, m, n) if unpack_data else (empty, empty)
    P = empty
    if unpack_pivots:
        pivots = LU_pivots._data
        if pivots.size and bool(((pivots < 1) | (pivots > m)).any()):
            raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you "
                               "properly pass the result of lu_factor?")
        P = permutation_matrix(LU_pivots, m, LU_data)
    result = _lu_unpack_result(P, L, U)
    if out is not None:
        return _lu_unpack_result(*[write_out(r, o) for r, o in zip(result, out)])
    return result


@tensor_method("orgqr")
@autocast_function("legacy.orgqr")
def orgqr(input, input2, *, out=None):
    """The first columns of the product of the Householder reflectors in ``input`` with scales
    ``input2`` (LAPACK's name for ``linalg.householder_product``)."""
    return _householder_product(input, input2, out=out)
