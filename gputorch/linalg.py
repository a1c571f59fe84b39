"""``gputorch.linalg``: PyTorch's linear-algebra namespace.

Norms are built from reductions (``vector_norm`` itself lives with the reductions) and singular
values (``ops/linalg_norms.py``); ``inv``, ``det`` and ``solve`` are ops of their own (``ops/matrix_inverse.py``), the
decompositions live in ``ops/decompositions.py`` and what is built on them in ``ops/linalg_*.py``.
``eig``/``eigvals`` (complex results) are in ``ops/linalg_eig.py``.
"""
from .ops._linalg_common import write_out as _write
from .ops.decompositions import cholesky, cholesky_ex, eigh, eigvalsh, qr, svd, svdvals
from .ops.linalg_eig import eig, eigvals
from .ops.linalg_generators import householder_product, tensorinv, tensorsolve, vander
from .ops.linalg_lu import lu, lu_factor, lu_factor_ex, lu_solve
from .ops.linalg_norms import matrix_norm, norm
from .ops.linalg_powers import matrix_exp, matrix_power
from .ops.linalg_solvers import inv_ex, solve_ex
from .ops.linalg_spectral import cond, lstsq, matrix_rank, pinv, slogdet
from .ops.linalg_triangular import solve_triangular
from .ops.matmul import matmul
from .ops.matrix_structure import linalg_cross as cross
from .ops.matrix_inverse import LinAlgError, det, inv, solve
from .amp.autocast_mode import autocast_function

__all__ = ["LinAlgError", "vector_norm", "matrix_norm", "norm", "inv", "inv_ex", "det", "slogdet", "solve",
           "solve_ex", "solve_triangular", "matmul", "cross", "vecdot", "multi_dot", "diagonal", "cholesky",
           "cholesky_ex", "qr", "eig", "eigvals", "eigh", "eigvalsh", "svd", "svdvals", "pinv", "lstsq", "matrix_rank", "cond",
           "matrix_power", "matrix_exp", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
           "vander", "householder_product", "tensorinv", "tensorsolve"]


def __getattr__(name):
    # vector_norm is defined with the reductions; resolved on first use so that either module may load first.
    if name == "vector_norm":
        from .ops.reduction import vector_norm
        globals()["vector_norm"] = vector_norm
        return vector_norm
    raise AttributeError(f"module 'gputorch.linalg' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | {"vector_norm"})


@autocast_function("vecdot")
def vecdot(x, y, *, dim=-1, out=None):
    """Dot products of the vectors along ``dim`` (the other dimensions broadcast)."""
    return _write((x * y).sum(dim), out)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal ``offset`` of each matrix of ``A`` (dims ``dim1``, ``dim2``), as the last dim (a view)."""
    return A.diagonal(offset, dim1, dim2)


@autocast_function("multi_dot")
def multi_dot(tensors, *, out=None):
    """``tensors[0] @ tensors[1] @ ...`` (the first may be 1-D, as may the last; the rest are 2-D)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        ndim = t._data.ndim
        edge = i == 0 or i == len(tensors) - 1
        if ndim != 2 and not (edge and ndim == 1):
            where = "first" if i == 0 else "last" if i == len(tensors) - 1 else None
            if where:
                raise RuntimeError(f"multi_dot(): the {where} tensor must be 1D or 2D but got {ndim}D")
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {ndim}D")
    result = tensors[0]
    for t in tensors[1:]:
        result = matmul(result, t)
    return _write(result, out)
