"""Linear-algebra ops, gathered: the products ``beta * input + alpha * (m1 . m2)`` (addmm, addmv,
baddbmm, addbmm, addr, and their in-place forms) are defined here; matmul and its special
cases live in ``matmul.py``, einsum/tensordot in ``einsum.py``, trace/diag/kron/cross in
``matrix_structure.py``, inv/det/solve in ``matrix_inverse.py``; the top-level decompositions
(cholesky, qr, svd, slogdet, ...) come from ``decompositions.py`` and the ``linalg_*.py`` modules.
"""
from .. import _dtype
from .._dispatch import apply, apply_inplace
from ..amp.autocast_mode import autocast_function
from ._gemm import product
from ..autograd.node import Node
from ._common import sum_to_shape
from ._linalg_common import C_NAME, SCALAR_NAME, mT, no_bool, require_tensor, write_out
from .einsum import einsum, tensordot
from .matmul import check_bmm, bmm, dot, ger, inner, matmul, mm, mv, outer, vdot
from .matrix_inverse import det, inverse
from .matrix_structure import cross, diag, diag_embed, kron, trace
from .householder import geqrf, ormqr
from .linalg_legacy import cholesky, lu_solve, lu_unpack, orgqr, qr, slogdet, svd
from .linalg_powers import matrix_exp, matrix_power
from .linalg_spectral import logdet, pinverse
from .linalg_triangular import cholesky_inverse, cholesky_solve
from .registry import tensor_method

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv",
           "baddbmm", "addbmm", "addr", "einsum", "tensordot", "trace", "diag", "diag_embed", "kron",
           "cross", "det", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse", "qr", "svd", "slogdet",
           "logdet", "pinverse", "matrix_exp", "matrix_power", "addmv_", "lu_solve", "lu_unpack", "orgqr",
           "geqrf", "ormqr"]


# ---------------------------------------------------------------- beta * input + alpha * product
class _AddProductNode(Node):
    """``beta * input + alpha * (m1 . m2)``; each subclass names the product and its two gradients."""

    def backward(ctx, grad):
        m1, m2 = ctx.saved_values
        need = ctx.needs_input_grad
        gi = g1 = g2 = None
        if need[0]:
            gi = sum_to_shape(grad if ctx.beta == 1 else grad * ctx.beta, ctx.in_shape)
        g = grad if ctx.alpha == 1 else grad * ctx.alpha
        if need[1]:
            g1 = ctx.grad_m1(g, m2)
        if need[2]:
            g2 = ctx.grad_m2(g, m1)
        return gi, g1, g2


def _add_product(ctx, input, m1, m2, beta, alpha, prod):
    """Finish ``beta * input + alpha * prod`` (``prod`` is a fresh array) and record what backward needs."""
    need = ctx.needs_input_grad
    if need:
        ctx.save_for_backward(m1 if need[2] else None, m2 if need[1] else None)
        ctx.beta, ctx.alpha, ctx.in_shape = beta, alpha, input._data.shape
    if alpha != 1:
        prod *= alpha
    if beta != 0:
        x = input._data
        prod += x if beta == 1 else x * beta
    return prod


class AddmmBackward0(_AddProductNode):
    def forward(ctx, input, m1, m2, beta, alpha):
        return _add_product(ctx, input, m1, m2, beta, alpha, product(m1._data, m2._data))

    @staticmethod
    def grad_m1(g, m2):
        return mm(g, mT(m2))

    @staticmethod
    def grad_m2(g, m1):
        return mm(mT(m1), g)


class AddmvBackward0(_AddProductNode):
    def forward(ctx, input, m1, m2, beta, alpha):
        return _add_product(ctx, input, m1, m2, beta, alpha, product(m1._data, m2._data))

    @staticmethod
    def grad_m1(g, vec):
        return outer(g, vec)

    @staticmethod
    def grad_m2(g, mat):
        return mv(mT(mat), g)


class BaddbmmBackward0(_AddProductNode):
    def forward(ctx, input, m1, m2, beta, alpha):
        return _add_product(ctx, input, m1, m2, beta, alpha, product(m1._data, m2._data))

    @staticmethod
    def grad_m1(g, m2):
        return bmm(g, mT(m2))

    @staticmethod
    def grad_m2(g, m1):
        return bmm(mT(m1), g)


class AddbmmBackward0(_AddProductNode):
    def forward(ctx, input, m1, m2, beta, alpha):
        prods = product(m1._data, m2._data)   # summed over the batch in the operands' dtype (NumPy would widen ints)
        return _add_product(ctx, input, m1, m2, beta, alpha, prods.sum(0, dtype=prods.dtype))

    @staticmethod
    def grad_m1(g, m2):
        return matmul(g, mT(m2))

    @staticmethod
    def grad_m2(g, m1):
        return matmul(mT(m1), g)


class AddrBackward0(_AddProductNode):
    def forward(ctx, input, m1, m2, beta, alpha):
        x, y = m1._data, m2._data
        return _add_product(ctx, input, m1, m2, beta, alpha, x.reshape(x.shape[0], 1) * y)

    @staticmethod
    def grad_m1(g, vec2):
        return mv(g, vec2)

    @staticmethod
    def grad_m2(g, vec1):
        return mv(mT(g), vec1)


def _check_expand(t, target):
    """``t`` must broadcast to ``target`` (PyTorch's expand messages)."""
    shape = t._data.shape
    if len(shape) > len(target):
        raise RuntimeError(f"expand({t.type()}{{{list(shape)}}}, size={list(target)}): the number of sizes provided "
                           f"({len(target)}) must be greater or equal to the number of dimensions in the tensor "
                           f"({len(shape)})")
    lead = len(target) - len(shape)
    for i, s in enumerate(shape):
        if s != 1 and s != target[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({target[lead + i]}) must match the existing size "
                               f"({s}) at non-singleton dimension {lead + i}.  Target sizes: {list(target)}.  "
                               f"Tensor sizes: {list(shape)}")


def _scalars(dt, beta, alpha):
    """Integer tensors take integer factors (PyTorch truncates float ones)."""
    if dt._category < 2:
        return int(beta), int(alpha)
    return beta, alpha


def _addmm_args(input, mat1, mat2, name="addmm"):
    for arg, t, pos in (("input", input, 1), ("mat1", mat1, 2), ("mat2", mat2, 3)):
        require_tensor(name, t, arg, pos)
    x, y = mat1._data, mat2._data
    if x.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {x.ndim}-D tensor")
    if y.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {y.ndim}-D tensor")
    if input._dtype is not mat2._dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {SCALAR_NAME[input._dtype]} and "
                           f"{SCALAR_NAME[mat2._dtype]}")
    if mat1._dtype is not mat2._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {C_NAME[mat1._dtype.name]} != "
                           f"{C_NAME[mat2._dtype.name]}")
    if x.shape[1] != y.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({x.shape[0]}x{x.shape[1]} and "
                           f"{y.shape[0]}x{y.shape[1]})")
    no_bool(input, "addmm_impl_cpu_")
    _check_expand(input, (x.shape[0], y.shape[1]))


@tensor_method("addmm")
@autocast_function("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)`` for matrices; ``input`` broadcasts. With ``beta=0``
    ``input`` is ignored (its NaNs do not propagate)."""
    _addmm_args(input, mat1, mat2)
    beta, alpha = _scalars(input._dtype, beta, alpha)
    return write_out(apply(AddmmBackward0, input, mat1, mat2, beta, alpha), out)


@tensor_method("addmm_")
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    _addmm_args(self, mat1, mat2, "addmm_")
    beta, alpha = _scalars(self._dtype, beta, alpha)
    return apply_inplace(AddmmBackward0, self, mat1, mat2, beta, alpha)


def _addmv_args(input, mat, vec, name="addmv"):
    for arg, t, pos in (("input", input, 1), ("mat", mat, 2), ("vec", vec, 3)):
        require_tensor(name, t, arg, pos)
    x, v = mat._data, vec._data
    if input._data.ndim > 1 or x.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._data.ndim}, {x.ndim}, {v.ndim}")
    if not input._dtype is mat._dtype is vec._dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {SCALAR_NAME[input._dtype]}, "
                           f"{SCALAR_NAME[mat._dtype]}, and {SCALAR_NAME[vec._dtype]}")
    n = input._data.shape[0] if input._data.ndim else 1
    if x.shape[1] != v.shape[0] or n not in (1, x.shape[0]):
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({x.shape[0]}x{x.shape[1]}), vec ({v.shape[0]})")
    no_bool(input, "addmv_impl_cpu")


@tensor_method("addmv")
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``."""
    _addmv_args(input, mat, vec)
    beta, alpha = _scalars(input._dtype, beta, alpha)
    return write_out(apply(AddmvBackward0, input, mat, vec, beta, alpha), out)


@tensor_method("addmv_")
def addmv_(self, mat, vec, *, beta=1, alpha=1):
    _addmv_args(self, mat, vec, "addmv_")
    beta, alpha = _scalars(self._dtype, beta, alpha)
    return apply_inplace(AddmvBackward0, self, mat, vec, beta, alpha)


def _baddbmm_args(input, batch1, batch2, name="baddbmm"):
    for arg, t, pos in (("input", input, 1), ("batch1", batch1, 2), ("batch2", batch2, 3)):
        require_tensor(name, t, arg, pos)
    if not input._dtype is batch1._dtype is batch2._dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {C_NAME[input._dtype.name]}, batch1: "
                           f"{C_NAME[batch1._dtype.name]}, batch2: {C_NAME[batch2._dtype.name]}")
    x, y = batch1._data, batch2._data
    check_bmm(x, y, batch1._dtype, batch2._dtype)
    no_bool(input, "bmm")
    _check_expand(input, (x.shape[0], x.shape[1], y.shape[2]))


@tensor_method("baddbmm")
@autocast_function("baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (batch1 @ batch2)`` for 3-D batches; ``input`` broadcasts."""
    _baddbmm_args(input, batch1, batch2)
    beta, alpha = _scalars(input._dtype, beta, alpha)
    return write_out(apply(BaddbmmBackward0, input, batch1, batch2, beta, alpha), out)


@tensor_method("baddbmm_")
def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    _baddbmm_args(self, batch1, batch2, "baddbmm_")
    beta, alpha = _scalars(self._dtype, beta, alpha)
    return apply_inplace(BaddbmmBackward0, self, batch1, batch2, beta, alpha)


def _addbmm_args(input, batch1, batch2, name="addbmm"):
    for arg, t, pos in (("input", input, 1), ("batch1", batch1, 2), ("batch2", batch2, 3)):
        require_tensor(name, t, arg, pos)
    x, y = batch1._data, batch2._data
    if x.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if y.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    for t in (batch1, batch2):
        if t._dtype is not input._dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {SCALAR_NAME[input._dtype]} "
                               f"and {SCALAR_NAME[t._dtype]}")
    if x.shape[0] != y.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {x.shape[0]} and {y.shape[0]}")
    if x.shape[2] != y.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({x.shape[1]}x{x.shape[2]} and "
                           f"{y.shape[1]}x{y.shape[2]})")
    no_bool(input, "bmm")
    _check_expand(input, (x.shape[1], y.shape[2]))


@tensor_method("addbmm")
@autocast_function("addbmm")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    _addbmm_args(input, batch1, batch2)
    beta, alpha = _scalars(input._dtype, beta, alpha)
    return write_out(apply(AddbmmBackward0, input, batch1, batch2, beta, alpha), out)


@tensor_method("addbmm_")
def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    _addbmm_args(self, batch1, batch2, "addbmm_")
    beta, alpha = _scalars(self._dtype, beta, alpha)
    return apply_inplace(AddbmmBackward0, self, batch1, batch2, beta, alpha)


def _addr_args(input, vec1, vec2, beta, alpha, name="addr"):
    for arg, t, pos in (("input", input, 1), ("vec1", vec1, 2), ("vec2", vec2, 3)):
        require_tensor(name, t, arg, pos)
    for arg, t in (("vec1", vec1), ("vec2", vec2)):
        if t._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {arg}, but got {t._data.ndim}-D")
    dt = _dtype.result_dtype((input, vec1, vec2))
    if dt._category < 2:
        for arg, value in (("beta", beta), ("alpha", alpha)):
            if isinstance(value, float):
                raise RuntimeError(f"For integral input tensors, argument {arg} must not be a floating point number.")
    _check_expand(input, (vec1._data.shape[0], vec2._data.shape[0]))
    return dt


@tensor_method("addr")
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)`` (the dtypes promote)."""
    dt = _addr_args(input, vec1, vec2, beta, alpha)
    input, vec1, vec2 = (t if t._dtype is dt else t.to(dt) for t in (input, vec1, vec2))
    return write_out(apply(AddrBackward0, input, vec1, vec2, beta, alpha), out)


@tensor_method("addr_")
def addr_(self, vec1, vec2, *, beta=1, alpha=1):
    dt = _addr_args(self, vec1, vec2, beta, alpha, "addr_")
    vec1, vec2 = (t if t._dtype is dt else t.to(dt) for t in (vec1, vec2))
    return apply_inplace(AddrBackward0, self, vec1, vec2, beta, alpha)
