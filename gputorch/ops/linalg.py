"""Matrix products and matrix structure: matmul (``@``), mm, bmm, mv, dot, vdot, inner, outer,
addmm/addmv/baddbmm/addbmm/addr, trace, diag, diag_embed, kron, cross; einsum and tensordot
live in ``einsum.py``.

Every product runs as one ``xp.matmul`` on the operands' arrays (NumPy hands 2-D and
batched products to BLAS without copying contiguous or transposed inputs). The
gradients are products again: ``grad @ b.mT`` and ``a.mT @ grad``, summed over
broadcast batch dimensions.
"""
import math

from .. import _dtype
from .._dispatch import apply, apply_inplace
from .._tensor import _LEGACY_NAMES as _SCALAR_NAME, Tensor
from ..autograd.node import Node
from ._common import sum_to_shape, xp_of
from .einsum import einsum, tensordot
from .matrix_inverse import det, inverse
from .registry import reflected, tensor_method

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv",
           "baddbmm", "addbmm", "addr", "einsum", "tensordot", "trace", "diag", "diag_embed", "kron",
           "cross", "det", "inverse"]

# PyTorch's C++ names of dtypes in its error messages (the ScalarType names are _SCALAR_NAME).
_C_NAME = {_dtype.float16: "c10::Half", _dtype.float32: "float", _dtype.float64: "double",
           _dtype.int64: "long int", _dtype.int32: "int", _dtype.int16: "short int",
           _dtype.int8: "signed char", _dtype.uint8: "unsigned char", _dtype.bool: "bool"}


def _mT(t):
    return t.transpose(-2, -1)



def _require_tensor(fn, value, arg, pos):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {type(value).__name__}")


def _no_bool(t, kernel):
    if t._dtype is _dtype.bool:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _maybe_out(result, out):
    if out is None:
        return result
    from .arithmetic import _maybe_out as write_out
    return write_out(result, out)


# ---------------------------------------------------------------- matmul and its special cases
class _ProductNode(Node):
    """``a @ b`` with NumPy's matmul rules (1-D operands, broadcast batch dimensions)."""

    def forward(ctx, a, b):
        need = ctx.needs_input_grad
        if need:
            ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
            ctx.shapes = (a._data.shape, b._data.shape)
        return a._data @ b._data

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _product_grads(grad, a, b, ctx.shapes, ctx.needs_input_grad)


class DotBackward0(_ProductNode):
    """1-D · 1-D."""

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (grad * b if need[0] else None), (grad * a if need[1] else None)


class VdotBackward0(DotBackward0):
    """``vdot``: ``dot`` for real tensors."""


class MvBackward0(_ProductNode):
    """2-D · 1-D."""


class MmBackward0(_ProductNode):
    """2-D · 2-D."""

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (mm(grad, _mT(b)) if need[0] else None), (mm(_mT(a), grad) if need[1] else None)


class BmmBackward0(_ProductNode):
    """3-D · 3-D with equal batch sizes."""


class MatmulBackward0(_ProductNode):
    """The general case: 1-D · 2-D and every product with broadcast batch dimensions."""

    def forward(ctx, a, b):
        need = ctx.needs_input_grad
        if need:
            ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
            ctx.shapes = (a._data.shape, b._data.shape)
        x, y = a._data, b._data
        if x.ndim > 2 and y.ndim <= 2 and x.flags.c_contiguous:
            # B is shared by the whole batch: fold the batch into the rows, one GEMM in all.
            rows = math.prod(x.shape[:-1])
            return (x.reshape(rows, x.shape[-1]) @ y).reshape(x.shape[:-1] + y.shape[1:])
        return x @ y


def _product_grads(grad, a, b, shapes, need):
    """Gradients of ``a @ b`` under matmul's rules. A 1-D ``a`` acts as a row, a 1-D ``b`` as a
    column; gradients are summed over the batch dimensions that broadcasting added."""
    a_shape, b_shape = shapes
    a_vec, b_vec = len(a_shape) == 1, len(b_shape) == 1
    a2_shape = (1,) + a_shape if a_vec else a_shape
    b2_shape = b_shape + (1,) if b_vec else b_shape
    g2_shape = grad._data.shape + (1,) if b_vec else grad._data.shape
    if a_vec:
        g2_shape = g2_shape[:-1] + (1, g2_shape[-1])
    g2 = grad.reshape(g2_shape) if g2_shape != grad._data.shape else grad
    ga = gb = None
    if need[0]:
        b2 = b.reshape(b2_shape) if b_vec else b
        ga = sum_to_shape(matmul(g2, _mT(b2)), a2_shape)
        if a_vec:
            ga = ga.reshape(a_shape)
    if need[1]:
        a2 = a.reshape(a2_shape) if a_vec else a
        if len(b2_shape) == 2 and len(a2_shape) > 2:
            # B was shared by the whole batch: one GEMM over the folded batch.
            rows = math.prod(a2_shape[:-1])
            gb = mm(_mT(a2.reshape(rows, a2_shape[-1])), g2.reshape(rows, g2_shape[-1]))
        else:
            gb = sum_to_shape(matmul(_mT(a2), g2), b2_shape)
        if b_vec:
            gb = gb.reshape(b_shape)
    return ga, gb


_NODE_BY_RANKS = {(1, 1): DotBackward0, (2, 1): MvBackward0, (2, 2): MmBackward0, (1, 2): MatmulBackward0}


@tensor_method("matmul", "__matmul__")
def matmul(input, other, *, out=None):
    """Matrix product with NumPy's rules: 1-D·1-D is a dot product, 1-D operands act as a row
    (left) or column (right) vector, and batch dimensions broadcast."""
    _require_tensor("matmul", input, "input", 1)
    _require_tensor("matmul", other, "other", 2)
    x, y = input._data, other._data
    da, db = x.ndim, y.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if input._dtype is not other._dtype:
        raise RuntimeError(_dtype_message(input, other))
    _no_bool(input, "matmul")
    if da <= 2 and db <= 2:
        cls = _NODE_BY_RANKS[da, db]
    elif da == 3 and db == 3 and x.shape[0] == y.shape[0]:
        cls = BmmBackward0
    else:
        cls = MatmulBackward0
    try:
        result = apply(cls, input, other)
    except ValueError:
        raise RuntimeError(_shape_message(x.shape, y.shape)) from None
    return _maybe_out(result, out)


tensor_method("__rmatmul__")(reflected(matmul))


def _dtype_message(a, b):
    """PyTorch's message for operands of different dtypes (it depends on the kernel matmul picks)."""
    da, db = a._data.ndim, b._data.ndim
    if da == 1 and db == 1:
        return (f"dot : expected both vectors to have same dtype, but found {_SCALAR_NAME[a._dtype]} and "
                f"{_SCALAR_NAME[b._dtype]}")
    if db == 1 or (da == 1 and db > 2):
        mat, vec = (a, b) if db == 1 else (b, a)
        return (f"addmv input tensors must have the same dtype, but got {_SCALAR_NAME[vec._dtype]}, "
                f"{_SCALAR_NAME[mat._dtype]}, and {_SCALAR_NAME[vec._dtype]}")
    if db == 2:
        return f"expected m1 and m2 to have the same dtype, but got: {_C_NAME[a._dtype]} != {_C_NAME[b._dtype]}"
    if da == 2:
        return f"expected m1 and m2 to have the same dtype, but got: {_C_NAME[b._dtype]} != {_C_NAME[a._dtype]}"
    return f"expected scalar type {_SCALAR_NAME[a._dtype]} but found {_SCALAR_NAME[b._dtype]}"


def _shape_message(sa, sb):
    """PyTorch's message for operands whose shapes do not multiply."""
    da, db = len(sa), len(sb)
    if da == 1 and db == 1:
        return (f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have the same "
                f"number of elements, but got {sa[0]} and {sb[0]} elements respectively")
    if db == 1:
        rows = math.prod(sa[:-1])
        return f"size mismatch, got input ({rows}), mat ({rows}x{sa[-1]}), vec ({sb[0]})"
    if da == 1 and db > 2:
        rows = math.prod(sb[:-2]) * sb[-1]
        return f"size mismatch, got input ({rows}), mat ({rows}x{sb[-2]}), vec ({sa[0]})"
    if db == 2:
        return f"mat1 and mat2 shapes cannot be multiplied ({math.prod(sa[:-1])}x{sa[-1]} and {sb[0]}x{sb[1]})"
    if da == 2:
        rows = math.prod(sb[:-2]) * sb[-1]
        return f"mat1 and mat2 shapes cannot be multiplied ({rows}x{sb[-2]} and {sa[1]}x{sa[0]})"
    batch_a, batch_b = sa[:-2], sb[:-2]
    n = max(len(batch_a), len(batch_b))
    batch = []
    for i in range(n):
        x = batch_a[i - n + len(batch_a)] if i >= n - len(batch_a) else 1
        y = batch_b[i - n + len(batch_b)] if i >= n - len(batch_b) else 1
        if x != y and x != 1 and y != 1:
            return (f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                    f"dimension {i}")
        batch.append(max(x, y))
    b = math.prod(batch)
    return (f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {sa[-1]}] but got: "
            f"[{b}, {sb[-2]}].")


@tensor_method("mm")
def mm(input, mat2, *, out=None):
    """Product of two matrices, ``(n, k) @ (k, m) -> (n, m)``."""
    _require_tensor("mm", input, "input", 1)
    _require_tensor("mm", mat2, "mat2", 2)
    x, y = input._data, mat2._data
    if x.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if y.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input._dtype is not mat2._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_C_NAME[input._dtype]} != "
                           f"{_C_NAME[mat2._dtype]}")
    if x.shape[1] != y.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({x.shape[0]}x{x.shape[1]} and "
                           f"{y.shape[0]}x{y.shape[1]})")
    _no_bool(input, "addmm_impl_cpu_")
    return _maybe_out(apply(MmBackward0, input, mat2), out)


def _check_bmm(x, y, dt1, dt2):
    if x.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if y.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if dt1 is not dt2:
        raise RuntimeError(f"expected scalar type {_SCALAR_NAME[dt1]} but found {_SCALAR_NAME[dt2]}")
    if y.shape[0] != x.shape[0] or y.shape[1] != x.shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{x.shape[0]}, "
                           f"{x.shape[2]}] but got: [{y.shape[0]}, {y.shape[1]}].")


@tensor_method("bmm")
def bmm(input, mat2, *, out=None):
    """Batched matrix product, ``(b, n, k) @ (b, k, m) -> (b, n, m)`` (no broadcasting)."""
    _require_tensor("bmm", input, "input", 1)
    _require_tensor("bmm", mat2, "mat2", 2)
    _check_bmm(input._data, mat2._data, input._dtype, mat2._dtype)
    _no_bool(input, "bmm")
    return _maybe_out(apply(BmmBackward0, input, mat2), out)


@tensor_method("mv")
def mv(input, vec, *, out=None):
    """Matrix-vector product, ``(n, k) @ (k,) -> (n,)``."""
    _require_tensor("mv", input, "input", 1)
    _require_tensor("mv", vec, "vec", 2)
    x, v = input._data, vec._data
    if x.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {x.ndim}, {v.ndim}")
    if input._dtype is not vec._dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_SCALAR_NAME[vec._dtype]}, "
                           f"{_SCALAR_NAME[input._dtype]}, and {_SCALAR_NAME[vec._dtype]}")
    if x.shape[1] != v.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({x.shape[0]}), mat ({x.shape[0]}x{x.shape[1]}), "
                           f"vec ({v.shape[0]})")
    _no_bool(input, "addmv_impl_cpu")
    return _maybe_out(apply(MvBackward0, input, vec), out)


def _dot(name, cls, input, other, out):
    _require_tensor(name, input, "input", 1)
    _require_tensor(name, other, "other", 2)
    x, y = input._data, other._data
    if x.ndim != 1 or y.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {x.ndim}D and {y.ndim}D tensors")
    if input._dtype is not other._dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_SCALAR_NAME[input._dtype]} and {_SCALAR_NAME[other._dtype]}")
    if x.shape[0] != y.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{x.shape[0]}] and src [{y.shape[0]}] to "
                           f"have the same number of elements, but got {x.shape[0]} and {y.shape[0]} elements "
                           f"respectively")
    _no_bool(input, name)
    return _maybe_out(apply(cls, input, other), out)


@tensor_method("dot")
def dot(input, other, *, out=None):
    """Inner product of two 1-D tensors of the same length and dtype."""
    return _dot("dot", DotBackward0, input, other, out)


@tensor_method("vdot")
def vdot(input, other, *, out=None):
    """``dot`` with the first argument conjugated (the same as ``dot`` for real tensors)."""
    return _dot("vdot", VdotBackward0, input, other, out)


@tensor_method("inner")
def inner(input, other, *, out=None):
    """Sum of products over the last dimension of both tensors (a product when one is 0-d)."""
    _require_tensor("inner", input, "input", 1)
    _require_tensor("inner", other, "other", 2)
    if input._data.ndim == 0 or other._data.ndim == 0:
        return _maybe_out(input * other, out)
    if input._dtype is not other._dtype:
        raise RuntimeError("both inputs should have same dtype")
    if input._data.shape[-1] != other._data.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return _maybe_out(tensordot(input, other, ([-1], [-1])), out)


@tensor_method("outer", "ger")
def outer(input, vec2, *, out=None):
    """Outer product of two 1-D tensors, ``(n,) x (m,) -> (n, m)``."""
    _require_tensor("outer", input, "input", 1)
    _require_tensor("outer", vec2, "vec2", 2)
    if input._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input._data.ndim}-D")
    if vec2._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2._data.ndim}-D")
    return _maybe_out(input.reshape(input._data.shape[0], 1) * vec2, out)


ger = outer


# ---------------------------------------------------------------- beta * input + alpha * product
class _AddProductNode(Node):
    """``beta * input + alpha * (m1 . m2)``; each subclass names the product and its two gradients."""

    def backward(ctx, grad):
        m1, m2 = ctx.saved_tensors
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
        return _add_product(ctx, input, m1, m2, beta, alpha, m1._data @ m2._data)

    @staticmethod
    def grad_m1(g, m2):
        return mm(g, _mT(m2))

    @staticmethod
    def grad_m2(g, m1):
        return mm(_mT(m1), g)


class AddmvBackward0(_AddProductNode):
    def forward(ctx, input, m1, m2, beta, alpha):
        return _add_product(ctx, input, m1, m2, beta, alpha, m1._data @ m2._data)

    @staticmethod
    def grad_m1(g, vec):
        return outer(g, vec)

    @staticmethod
    def grad_m2(g, mat):
        return mv(_mT(mat), g)


class BaddbmmBackward0(_AddProductNode):
    def forward(ctx, input, m1, m2, beta, alpha):
        return _add_product(ctx, input, m1, m2, beta, alpha, m1._data @ m2._data)

    @staticmethod
    def grad_m1(g, m2):
        return bmm(g, _mT(m2))

    @staticmethod
    def grad_m2(g, m1):
        return bmm(_mT(m1), g)


class AddbmmBackward0(_AddProductNode):
    def forward(ctx, input, m1, m2, beta, alpha):
        return _add_product(ctx, input, m1, m2, beta, alpha, (m1._data @ m2._data).sum(0))

    @staticmethod
    def grad_m1(g, m2):
        return matmul(g, _mT(m2))

    @staticmethod
    def grad_m2(g, m1):
        return matmul(_mT(m1), g)


class AddrBackward0(_AddProductNode):
    def forward(ctx, input, m1, m2, beta, alpha):
        x, y = m1._data, m2._data
        return _add_product(ctx, input, m1, m2, beta, alpha, x.reshape(x.shape[0], 1) * y)

    @staticmethod
    def grad_m1(g, vec2):
        return mv(g, vec2)

    @staticmethod
    def grad_m2(g, vec1):
        return mv(_mT(g), vec1)


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
        _require_tensor(name, t, arg, pos)
    x, y = mat1._data, mat2._data
    if x.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {x.ndim}-D tensor")
    if y.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {y.ndim}-D tensor")
    if input._dtype is not mat2._dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_SCALAR_NAME[input._dtype]} and "
                           f"{_SCALAR_NAME[mat2._dtype]}")
    if mat1._dtype is not mat2._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_C_NAME[mat1._dtype]} != "
                           f"{_C_NAME[mat2._dtype]}")
    if x.shape[1] != y.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({x.shape[0]}x{x.shape[1]} and "
                           f"{y.shape[0]}x{y.shape[1]})")
    _no_bool(input, "addmm_impl_cpu_")
    _check_expand(input, (x.shape[0], y.shape[1]))


@tensor_method("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)`` for matrices; ``input`` broadcasts. With ``beta=0``
    ``input`` is ignored (its NaNs do not propagate)."""
    _addmm_args(input, mat1, mat2)
    beta, alpha = _scalars(input._dtype, beta, alpha)
    return _maybe_out(apply(AddmmBackward0, input, mat1, mat2, beta, alpha), out)


@tensor_method("addmm_")
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    _addmm_args(self, mat1, mat2, "addmm_")
    beta, alpha = _scalars(self._dtype, beta, alpha)
    return apply_inplace(AddmmBackward0, self, mat1, mat2, beta, alpha)


def _addmv_args(input, mat, vec, name="addmv"):
    for arg, t, pos in (("input", input, 1), ("mat", mat, 2), ("vec", vec, 3)):
        _require_tensor(name, t, arg, pos)
    x, v = mat._data, vec._data
    if input._data.ndim > 1 or x.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._data.ndim}, {x.ndim}, {v.ndim}")
    if not input._dtype is mat._dtype is vec._dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_SCALAR_NAME[input._dtype]}, "
                           f"{_SCALAR_NAME[mat._dtype]}, and {_SCALAR_NAME[vec._dtype]}")
    n = input._data.shape[0] if input._data.ndim else 1
    if x.shape[1] != v.shape[0] or n not in (1, x.shape[0]):
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({x.shape[0]}x{x.shape[1]}), vec ({v.shape[0]})")
    _no_bool(input, "addmv_impl_cpu")


@tensor_method("addmv")
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``."""
    _addmv_args(input, mat, vec)
    beta, alpha = _scalars(input._dtype, beta, alpha)
    return _maybe_out(apply(AddmvBackward0, input, mat, vec, beta, alpha), out)


@tensor_method("addmv_")
def addmv_(self, mat, vec, *, beta=1, alpha=1):
    _addmv_args(self, mat, vec, "addmv_")
    beta, alpha = _scalars(self._dtype, beta, alpha)
    return apply_inplace(AddmvBackward0, self, mat, vec, beta, alpha)


def _baddbmm_args(input, batch1, batch2, name="baddbmm"):
    for arg, t, pos in (("input", input, 1), ("batch1", batch1, 2), ("batch2", batch2, 3)):
        _require_tensor(name, t, arg, pos)
    if not input._dtype is batch1._dtype is batch2._dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_C_NAME[input._dtype]}, batch1: "
                           f"{_C_NAME[batch1._dtype]}, batch2: {_C_NAME[batch2._dtype]}")
    x, y = batch1._data, batch2._data
    _check_bmm(x, y, batch1._dtype, batch2._dtype)
    _no_bool(input, "bmm")
    _check_expand(input, (x.shape[0], x.shape[1], y.shape[2]))


@tensor_method("baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (batch1 @ batch2)`` for 3-D batches; ``input`` broadcasts."""
    _baddbmm_args(input, batch1, batch2)
    beta, alpha = _scalars(input._dtype, beta, alpha)
    return _maybe_out(apply(BaddbmmBackward0, input, batch1, batch2, beta, alpha), out)


@tensor_method("baddbmm_")
def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    _baddbmm_args(self, batch1, batch2, "baddbmm_")
    beta, alpha = _scalars(self._dtype, beta, alpha)
    return apply_inplace(BaddbmmBackward0, self, batch1, batch2, beta, alpha)


def _addbmm_args(input, batch1, batch2, name="addbmm"):
    for arg, t, pos in (("input", input, 1), ("batch1", batch1, 2), ("batch2", batch2, 3)):
        _require_tensor(name, t, arg, pos)
    x, y = batch1._data, batch2._data
    if x.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if y.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    for t in (batch1, batch2):
        if t._dtype is not input._dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {_SCALAR_NAME[input._dtype]} "
                               f"and {_SCALAR_NAME[t._dtype]}")
    if x.shape[0] != y.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {x.shape[0]} and {y.shape[0]}")
    if x.shape[2] != y.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({x.shape[1]}x{x.shape[2]} and "
                           f"{y.shape[1]}x{y.shape[2]})")
    _no_bool(input, "bmm")
    _check_expand(input, (x.shape[1], y.shape[2]))


@tensor_method("addbmm")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    _addbmm_args(input, batch1, batch2)
    beta, alpha = _scalars(input._dtype, beta, alpha)
    return _maybe_out(apply(AddbmmBackward0, input, batch1, batch2, beta, alpha), out)


@tensor_method("addbmm_")
def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    _addbmm_args(self, batch1, batch2, "addbmm_")
    beta, alpha = _scalars(self._dtype, beta, alpha)
    return apply_inplace(AddbmmBackward0, self, batch1, batch2, beta, alpha)


def _addr_args(input, vec1, vec2, beta, alpha, name="addr"):
    for arg, t, pos in (("input", input, 1), ("vec1", vec1, 2), ("vec2", vec2, 3)):
        _require_tensor(name, t, arg, pos)
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
    return _maybe_out(apply(AddrBackward0, input, vec1, vec2, beta, alpha), out)


@tensor_method("addr_")
def addr_(self, vec1, vec2, *, beta=1, alpha=1):
    dt = _addr_args(self, vec1, vec2, beta, alpha, "addr_")
    vec1, vec2 = (t if t._dtype is dt else t.to(dt) for t in (vec1, vec2))
    return apply_inplace(AddrBackward0, self, vec1, vec2, beta, alpha)


# ---------------------------------------------------------------- diagonals and traces
class DiagEmbedBackward0(Node):
    """Puts the last dimension of ``a`` on a diagonal of two new dimensions ``dim1``, ``dim2`` of the
    output (of sizes ``sizes``, by default just big enough), zeros elsewhere."""

    def forward(ctx, a, offset, dim1, dim2, sizes):
        x = a._data
        n = x.shape[-1]
        s1, s2 = sizes if sizes is not None else (n + abs(offset), n + abs(offset))
        shape = list(x.shape[:-1])
        for d, s in sorted(((dim1, s1), (dim2, s2))):
            shape.insert(d, s)
        xp = xp_of(a)
        out = xp.zeros(shape, x.dtype)
        target = xp.moveaxis(out, (dim1, dim2), (-2, -1))
        i = xp.arange(n)
        target[..., i + max(-offset, 0), i + max(offset, 0)] = x
        ctx.args = (offset, dim1, dim2)
        return out

    def backward(ctx, grad):
        return apply(DiagonalBackward0_copy, grad, *ctx.args)


class DiagonalBackward0_copy(Node):  # noqa: N801 - PyTorch's name for this node
    """A copy of the diagonal ``offset`` of dimensions ``dim1``, ``dim2`` (as the last dimension)."""

    def forward(ctx, a, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        ctx.sizes = (a._data.shape[dim1], a._data.shape[dim2])
        return xp_of(a).diagonal(a._data, offset, dim1, dim2).copy()

    def backward(ctx, grad):
        return apply(DiagEmbedBackward0, grad, *ctx.args, ctx.sizes)


class TraceBackward0(Node):
    def forward(ctx, a):
        x = a._data
        ctx.shape = x.shape
        return x.trace(dtype=x.dtype if a._dtype._category == 2 else "int64")

    def backward(ctx, grad):
        n, m = ctx.shape
        k = min(n, m)
        return apply(DiagEmbedBackward0, grad.reshape(1).expand(k), 0, 0, 1, (n, m))


@tensor_method("trace")
def trace(input):
    """Sum of the main diagonal of a matrix (integer inputs sum to int64)."""
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input._data.ndim}")
    _no_bool(input, "trace")
    return apply(TraceBackward0, input)


@tensor_method("diag")
def diag(input, diagonal=0, *, out=None):
    """1-D input: a square matrix with ``input`` on diagonal ``diagonal``; 2-D input: a copy of
    that diagonal."""
    ndim = input._data.ndim
    if ndim == 1:
        result = apply(DiagEmbedBackward0, input, diagonal, 0, 1, None)
    elif ndim == 2:
        result = apply(DiagonalBackward0_copy, input, diagonal, 0, 1)
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")
    return _maybe_out(result, out)


@tensor_method("diag_embed")
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Tensor whose diagonals (of dims ``dim1``, ``dim2``, offset ``offset``) hold the last dimension of
    ``input``; the result has one dimension more."""
    ndim = input._data.ndim + 1
    d1, d2 = input._wrap_dim(dim1, ndim), input._wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(DiagEmbedBackward0, input, offset, d1, d2, None)


# ---------------------------------------------------------------- kron, cross
@tensor_method("kron")
def kron(input, other, *, out=None):
    """Kronecker product: block ``i`` of the result is ``input[i] * other`` (dims aligned on the right)."""
    _require_tensor("kron", input, "input", 1)
    _require_tensor("kron", other, "other", 2)
    sa, sb = input._data.shape, other._data.shape
    nd = max(len(sa), len(sb))
    sa = (1,) * (nd - len(sa)) + sa
    sb = (1,) * (nd - len(sb)) + sb
    a = input.reshape(tuple(x for s in sa for x in (s, 1)))
    b = other.reshape(tuple(x for s in sb for x in (1, s)))
    return _maybe_out((a * b).reshape(tuple(x * y for x, y in zip(sa, sb))), out)


class LinalgCrossBackward0(Node):
    def forward(ctx, a, b, dim):
        need = ctx.needs_input_grad
        if need:
            ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
            ctx.dim, ctx.shapes = dim, (a._data.shape, b._data.shape)
        return xp_of(a).cross(a._data, b._data, axis=dim)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = sum_to_shape(apply(LinalgCrossBackward0, b, grad, ctx.dim), ctx.shapes[0]) if need[0] else None
        gb = sum_to_shape(apply(LinalgCrossBackward0, grad, a, ctx.dim), ctx.shapes[1]) if need[1] else None
        return ga, gb


def linalg_cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along ``dim``; the other dimensions broadcast."""
    _require_tensor("linalg_cross", input, "input", 1)
    _require_tensor("linalg_cross", other, "other", 2)
    ndim = input._data.ndim
    if other._data.ndim != ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input._dtype is not other._dtype:
        raise RuntimeError(f"expected scalar type {_SCALAR_NAME[input._dtype]} but found "
                           f"{_SCALAR_NAME[other._dtype]}")
    d = input._wrap_dim(dim, ndim)
    sa, sb = input._data.shape[d], other._data.shape[d]
    if sa != 3 or sb != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {sa} and {sb}")
    _no_bool(input, "linalg_cross")
    return _maybe_out(apply(LinalgCrossBackward0, input, other, d - ndim), out)


@tensor_method("cross")
def cross(input, other, dim=None, *, out=None):
    """Cross product along ``dim``; without ``dim``, the first dimension of size 3 (deprecated in PyTorch)."""
    if dim is None:
        import warnings
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the "
                      "dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to "
                      "agree with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        dim = next((i for i, s in enumerate(input._data.shape) if s == 3), -1)
    return linalg_cross(input, other, dim=dim, out=out)
