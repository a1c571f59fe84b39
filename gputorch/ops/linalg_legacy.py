"""PyTorch's older top-level spellings of the decompositions (``torch.cholesky``, ``torch.qr``,
``torch.svd``, ``torch.slogdet``) and their Tensor methods, on top of ``gputorch.linalg``'s."""
import warnings

from .._tensor import Tensor
from ._linalg_common import mT, write_out
from .decompositions import cholesky as _linalg_cholesky, qr as _linalg_qr, svd as _linalg_svd
from ..return_types import qr as _qr_result, slogdet as _slogdet_result, svd as _svd_result
from .linalg_spectral import slogdet as _linalg_slogdet
from .registry import tensor_method

__all__ = ["cholesky", "qr", "svd", "slogdet"]

_warned = set()


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


@tensor_method("cholesky")
def cholesky(input, upper=False, *, out=None):
    """``torch.cholesky`` (deprecated in PyTorch for ``torch.linalg.cholesky``)."""
    _warn_once("cholesky", "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
                           "future PyTorch release.")
    return _linalg_cholesky(input, upper=upper, out=out)


@tensor_method("qr")
def qr(input, some=True, *, out=None):
    """``(Q, R)``: ``linalg.qr`` with mode 'reduced' (``some=True``) or 'complete'."""
    q, r = _linalg_qr(input, "reduced" if some else "complete")
    if out is not None:
        write_out(q, out[0])
        write_out(r, out[1])
        return _qr_result(*out)
    return _qr_result(q, r)


@tensor_method("svd")
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
