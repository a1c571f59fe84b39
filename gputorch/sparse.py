"""``gputorch.sparse``: PyTorch's sparse namespace for COO tensors (see ``ops/sparse_coo.py``)."""
from .ops.sparse_coo import sparse_coo_tensor, sparse_mm, sparse_sum as sum  # noqa: F401,A004

__all__ = ["mm", "sum", "addmm", "FloatTensor", "DoubleTensor", "LongTensor"]


def mm(mat1, mat2):
    """``mat1 @ mat2`` with ``mat1`` sparse COO; the gradient for ``mat1`` is sparse (at its stored
    positions), where ``gputorch.mm`` gives a dense one, as in PyTorch."""
    return sparse_mm(mat1, mat2, masked=True)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * mat + alpha * (mat1 @ mat2)`` with ``mat1`` sparse COO and ``mat2``, ``mat`` dense."""
    return mat * beta + mm(mat1, mat2) * alpha


def _legacy_constructor(name, dtype_name):
    def construct(indices, values, size=None):
        from . import _dtype
        return sparse_coo_tensor(indices, values, size, dtype=getattr(_dtype, dtype_name))
    construct.__name__ = name
    construct.__doc__ = (f"Legacy ``torch.sparse.{name}(indices, values, size)``: a sparse COO tensor of "
                         f"{dtype_name} values.")
    return construct


FloatTensor = _legacy_constructor("FloatTensor", "float32")
DoubleTensor = _legacy_constructor("DoubleTensor", "float64")
LongTensor = _legacy_constructor("LongTensor", "int64")
