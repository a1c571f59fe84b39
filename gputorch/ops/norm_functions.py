"""The norm-based functions of torch's top level: ``dist`` (the p-norm of a difference), ``renorm``
(slices rescaled to a maximum norm) and the deprecated ``frobenius_norm`` / ``nuclear_norm`` (kept
by PyTorch for old code; ``linalg.vector_norm`` / ``linalg.matrix_norm`` replace them).

All are composites of ``linalg.vector_norm`` and ``linalg.matrix_norm``, so their gradients are
those of the norms.
"""
import warnings

from .._tensor import Tensor
from ._common import require_tensor, write_out
from .registry import tensor_method
from ..amp.autocast_mode import autocast_function

__all__ = ["dist", "renorm", "frobenius_norm", "nuclear_norm"]

_RENORM_EPS = 1e-7   # PyTorch's: a slice over the limit is scaled by maxnorm / (norm + 1e-7)


def _vector_norm(*args, **kwargs):
    from .reduction import vector_norm
    return vector_norm(*args, **kwargs)


@tensor_method("dist")
@autocast_function("dist")
def dist(input, other, p=2):
    """``||input - other||_p`` over all elements (the operands broadcast); 0-d result."""
    require_tensor("dist", input)
    require_tensor("dist", other, "other", 2)
    return _vector_norm(input - other, p)


def _renorm_factor(input, p, dim, maxnorm):
    """Per slice along ``dim``: ``maxnorm / (norm + 1e-7)`` where the slice's p-norm exceeds ``maxnorm``,
    else 1 (shaped to broadcast against ``input``)."""
    require_tensor("renorm", input)
    ndim = input._data.ndim
    if ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {ndim} dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = input._wrap_dim(dim)
    norms = _vector_norm(input, p, [i for i in range(ndim) if i != d], keepdim=True)
    from .comparison import where
    return where(norms > maxnorm, maxnorm / (norms + _RENORM_EPS), 1.0).to(input._dtype)


@tensor_method("renorm")
@autocast_function("renorm")
def renorm(input, p, dim, maxnorm, *, out=None):
    """``input`` with each slice ``input.select(dim, i)`` whose p-norm exceeds ``maxnorm`` scaled
    down to norm ``maxnorm`` (floating inputs of at least 2 dims)."""
    return write_out(input * _renorm_factor(input, p, dim, maxnorm), out)


@tensor_method("renorm_")
def renorm_(self, p, dim, maxnorm):
    """In-place ``renorm``."""
    source = self.clone()   # the graph keeps the old values, not ``self``, which is overwritten
    return self.copy_(source * _renorm_factor(source, p, dim, maxnorm))


def frobenius_norm(input, dim=(), keepdim=False, *, out=None):
    """Deprecated: ``linalg.vector_norm(input, 2, dim, keepdim)`` over at most 2 dims (an empty
    ``dim``: all of them)."""
    require_tensor("frobenius_norm", input)
    warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be "
                  "removed in a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` "
                  "instead", stacklevel=2)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    return write_out(_vector_norm(input, 2, dims or None, keepdim), out)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """Deprecated: the sum of the singular values, ``linalg.matrix_norm(input, 'nuc', dim, keepdim)``;
    called as ``nuclear_norm(input, keepdim)`` too (then over the last two dims)."""
    require_tensor("nuclear_norm", input)
    warnings.warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be "
                  "removed in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` "
                  "instead", stacklevel=2)
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    from .linalg_norms import matrix_norm
    if dim is None:
        dim = (-2, -1)
    elif isinstance(dim, Tensor) or len(dim) != 2:
        raise RuntimeError("nuclear_norm: dim must be a pair of dims")
    return write_out(matrix_norm(input, "nuc", tuple(dim), keepdim), out)
