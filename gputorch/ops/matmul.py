"""Matrix products: matmul (``@``), mm, bmm, mv, dot, vdot, inner, outer/ger.

Every product runs as one ``xp.matmul`` on the operands' arrays: NumPy hands 2-D and
batched products to BLAS without copying contiguous or transposed inputs, and a
batch multiplied by one shared matrix is folded into a single GEMM. The gradients
are products again (``grad @ b.mT``, ``a.mT @ grad``), summed over broadcast batch
dimensions, so they are differentiable twice.
"""
import math

from .. import _dtype
from .._dispatch import apply
from .._tensor import Tensor
from ..amp.autocast_mode import autocast_function
from ._gemm import product, product_grads
from ..autograd.grad_mode import GRAD_ENABLED as _GRAD_ENABLED
from ..autograd.node import Node
from ._common import sum_to_shape
from .complex_numbers import conj_physical
from ._linalg_common import C_NAME, SCALAR_NAME, mT, no_bool, require_tensor, write_out
from .einsum import tensordot
from .registry import reflected, tensor_method

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger"]


# ---------------------------------------------------------------- matmul and its special cases
class _ProductNode(Node):
    """``a @ b`` with NumPy's matmul rules (1-D operands, broadcast batch dimensions)."""

    def forward(ctx, a, b):
        need = ctx.needs_input_grad
        if need:
            ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
            ctx.shapes = (a._data.shape, b._data.shape)
        return product(a._data, b._data)

    def backward(ctx, grad):
        a, b = ctx.saved_values
        fast = array_product_grads(grad, a, b, ctx.shapes, ctx.needs_input_grad)
        if fast is not None:
            return fast
        return _product_grads(grad, a, b, ctx.shapes, ctx.needs_input_grad)


def array_product_grads(grad, a, b, shapes, need):
    """The gradients of ``a @ b`` from array products (:func:`_gemm.product_grads`) when backward is
    not recorded (no ``create_graph``) and the shapes allow it; else None (the Tensor-op rules).
    ``a`` and ``b`` are the saved operands (None where the other's gradient is not wanted)."""
    if _GRAD_ENABLED.value:
        return None
    res = product_grads(grad._data, a._data if need[1] else None, b._data if need[0] else None, *shapes)
    if res is None:
        return None
    dev = grad._device
    return tuple(None if r is None else Tensor._make(r, dev) for r in res)


class DotBackward0(_ProductNode):
    """1-D · 1-D."""

    def backward(ctx, grad):
        a, b = ctx.saved_values
        need = ctx.needs_input_grad
        return (grad * b if need[0] else None), (grad * a if need[1] else None)


class VdotBackward0(DotBackward0):
    """``vdot``: ``dot`` for real tensors."""


class MvBackward0(_ProductNode):
    """2-D · 1-D."""


class MmBackward0(_ProductNode):
    """2-D · 2-D."""

    def backward(ctx, grad):
        a, b = ctx.saved_values
        need = ctx.needs_input_grad
        fast = array_product_grads(grad, a, b, ctx.shapes, need)
        if fast is not None:
            return fast
        return (mm(grad, mT(b)) if need[0] else None), (mm(mT(a), grad) if need[1] else None)


class BmmBackward0(_ProductNode):
    """3-D · 3-D with equal batch sizes."""


class MatmulBackward0(_ProductNode):
    """The general case: 1-D · 2-D and every product with broadcast batch dimensions (a batch
    times one shared matrix is folded into one GEMM by ``_gemm.product``)."""


def _product_grads(grad, a, b, shapes, need):
    """Gradients of ``a @ b`` under matmul's rules. A 1-D ``a`` acts as a row, a 1-D ``b`` as a
    column; gradients are summed over the batch dimensions that broadcasting added."""
    a_shape, b_shape = shapes
    a_vec, b_vec = len(a_shape) == 1, len(b_shape) == 1
    if len(a_shape) <= 2 and len(b_shape) <= 2:
        if a_vec:     # (k,) @ (k, m)
            return (mv(b, grad) if need[0] else None), (outer(a, grad) if need[1] else None)
        if b_vec:     # (n, k) @ (k,)
            return (outer(grad, b) if need[0] else None), (mv(mT(a), grad) if need[1] else None)
    a2_shape = (1,) + a_shape if a_vec else a_shape
    b2_shape = b_shape + (1,) if b_vec else b_shape
    g2_shape = grad._data.shape + (1,) if b_vec else grad._data.shape
    if a_vec:
        g2_shape = g2_shape[:-1] + (1, g2_shape[-1])
    g2 = grad.reshape(g2_shape) if g2_shape != grad._data.shape else grad
    ga = gb = None
    if need[0]:
        b2 = b.reshape(b2_shape) if b_vec else b
        ga = sum_to_shape(matmul(g2, mT(b2)), a2_shape)
        if a_vec:
            ga = ga.reshape(a_shape)
    if need[1]:
        a2 = a.reshape(a2_shape) if a_vec else a
        if len(b2_shape) == 2 and len(a2_shape) > 2:
            # B was shared by the whole batch: one GEMM over the folded batch.
            rows = math.prod(a2_shape[:-1])
            gb = mm(mT(a2.reshape(rows, a2_shape[-1])), g2.reshape(rows, g2_shape[-1]))
        else:
            gb = sum_to_shape(matmul(mT(a2), g2), b2_shape)
        if b_vec:
            gb = gb.reshape(b_shape)
    return ga, gb


_NODE_BY_RANKS = {(1, 1): DotBackward0, (2, 1): MvBackward0, (2, 2): MmBackward0, (1, 2): MatmulBackward0}


@tensor_method("matmul", "__matmul__")
@autocast_function("matmul")
def matmul(input, other, *, out=None):
    """Matrix product with NumPy's rules: 1-D·1-D is a dot product, 1-D operands act as a row
    (left) or column (right) vector, and batch dimensions broadcast."""
    require_tensor("matmul", input, "input", 1)
    require_tensor("matmul", other, "other", 2)
    if input._sparse:
        from .sparse_coo import sparse_mm
        return write_out(sparse_mm(input, other), out)
    x, y = input._data, other._data
    da, db = x.ndim, y.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if input._dtype is not other._dtype:
        raise RuntimeError(_dtype_message(input, other))
    if input._dtype is _dtype.bool:   # PyTorch checks that the shapes multiply, then the kernel's dtype
        if x.shape[-1] != (y.shape[0] if db == 1 else y.shape[-2]):
            raise RuntimeError(_shape_message(x.shape, y.shape))
        no_bool(input, "dot" if da == db == 1 else "addmv_impl_cpu" if db == 1 else
                "addmm_impl_cpu_" if da <= 2 and db == 2 else "bmm")
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
    return write_out(result, out)


tensor_method("__rmatmul__")(reflected(matmul))


def _dtype_message(a, b):
    """PyTorch's message for operands of different dtypes (it depends on the kernel matmul picks)."""
    da, db = a._data.ndim, b._data.ndim
    if da == 1 and db == 1:
        return (f"dot : expected both vectors to have same dtype, but found {SCALAR_NAME[a._dtype]} and "
                f"{SCALAR_NAME[b._dtype]}")
    if db == 1 or (da == 1 and db > 2):
        mat, vec = (a, b) if db == 1 else (b, a)
        return (f"addmv input tensors must have the same dtype, but got {SCALAR_NAME[vec._dtype]}, "
                f"{SCALAR_NAME[mat._dtype]}, and {SCALAR_NAME[vec._dtype]}")
    if db == 2:
        return f"expected m1 and m2 to have the same dtype, but got: {C_NAME[a._dtype.name]} != {C_NAME[b._dtype.name]}"
    if da == 2:
        return f"expected m1 and m2 to have the same dtype, but got: {C_NAME[b._dtype.name]} != {C_NAME[a._dtype.name]}"
    return f"expected scalar type {SCALAR_NAME[a._dtype]} but found {SCALAR_NAME[b._dtype]}"


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
@autocast_function("mm")
def mm(input, mat2, *, out=None):
    """Product of two matrices, ``(n, k) @ (k, m) -> (n, m)``."""
    require_tensor("mm", input, "input", 1)
    require_tensor("mm", mat2, "mat2", 2)
    if input._sparse:
        from .sparse_coo import sparse_mm
        return write_out(sparse_mm(input, mat2), out)
    x, y = input._data, mat2._data
    if x.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if y.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input._dtype is not mat2._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {C_NAME[input._dtype.name]} != "
                           f"{C_NAME[mat2._dtype.name]}")
    if x.shape[1] != y.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({x.shape[0]}x{x.shape[1]} and "
                           f"{y.shape[0]}x{y.shape[1]})")
    no_bool(input, "addmm_impl_cpu_")
    return write_out(apply(MmBackward0, input, mat2), out)


def check_bmm(x, y, dt1, dt2):
    if x.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if y.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if dt1 is not dt2:
        raise RuntimeError(f"expected scalar type {SCALAR_NAME[dt1]} but found {SCALAR_NAME[dt2]}")
    if y.shape[0] != x.shape[0] or y.shape[1] != x.shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{x.shape[0]}, "
                           f"{x.shape[2]}] but got: [{y.shape[0]}, {y.shape[1]}].")


@tensor_method("bmm")
@autocast_function("bmm")
def bmm(input, mat2, *, out=None):
    """Batched matrix product, ``(b, n, k) @ (b, k, m) -> (b, n, m)`` (no broadcasting)."""
    require_tensor("bmm", input, "input", 1)
    require_tensor("bmm", mat2, "mat2", 2)
    check_bmm(input._data, mat2._data, input._dtype, mat2._dtype)
    no_bool(input, "bmm")
    return write_out(apply(BmmBackward0, input, mat2), out)


@tensor_method("mv")
@autocast_function("mv")
def mv(input, vec, *, out=None):
    """Matrix-vector product, ``(n, k) @ (k,) -> (n,)``."""
    require_tensor("mv", input, "input", 1)
    require_tensor("mv", vec, "vec", 2)
    x, v = input._data, vec._data
    if x.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {x.ndim}, {v.ndim}")
    if input._dtype is not vec._dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {SCALAR_NAME[vec._dtype]}, "
                           f"{SCALAR_NAME[input._dtype]}, and {SCALAR_NAME[vec._dtype]}")
    if x.shape[1] != v.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({x.shape[0]}), mat ({x.shape[0]}x{x.shape[1]}), "
                           f"vec ({v.shape[0]})")
    no_bool(input, "addmv_impl_cpu")
    return write_out(apply(MvBackward0, input, vec), out)


def _dot(name, cls, input, other, out):
    require_tensor(name, input, "input", 1)
    require_tensor(name, other, "other", 2)
    x, y = input._data, other._data
    if x.ndim != 1 or y.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {x.ndim}D and {y.ndim}D tensors")
    if input._dtype is not other._dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{SCALAR_NAME[input._dtype]} and {SCALAR_NAME[other._dtype]}")
    if x.shape[0] != y.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{x.shape[0]}] and src [{y.shape[0]}] to "
                           f"have the same number of elements, but got {x.shape[0]} and {y.shape[0]} elements "
                           f"respectively")
    no_bool(input, name)
    return write_out(apply(cls, input, other), out)


@tensor_method("dot")
@autocast_function("dot")
def dot(input, other, *, out=None):
    """Inner product of two 1-D tensors of the same length and dtype."""
    return _dot("dot", DotBackward0, input, other, out)


@tensor_method("vdot")
def vdot(input, other, *, out=None):
    """``dot`` with the first argument conjugated (the same as ``dot`` for real tensors): for
    complex ones, ``dot(conj(input), other)``, whose gradient the conjugation carries."""
    if isinstance(input, Tensor) and input._dtype.is_complex:
        return _dot("vdot", DotBackward0, conj_physical(input), other, out)
    return _dot("vdot", VdotBackward0, input, other, out)


@tensor_method("inner")
def inner(input, other, *, out=None):
    """Sum of products over the last dimension of both tensors (a product when one is 0-d)."""
    require_tensor("inner", input, "input", 1)
    require_tensor("inner", other, "other", 2)
    if input._data.ndim == 0 or other._data.ndim == 0:
        return write_out(input * other, out)
    if input._dtype is not other._dtype:
        raise RuntimeError("both inputs should have same dtype")
    if input._data.shape[-1] != other._data.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return write_out(tensordot(input, other, ([-1], [-1])), out)


@tensor_method("outer", "ger")
def outer(input, vec2, *, out=None):
    """Outer product of two 1-D tensors, ``(n,) x (m,) -> (n, m)``."""
    require_tensor("outer", input, "input", 1)
    require_tensor("outer", vec2, "vec2", 2)
    if input._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input._data.ndim}-D")
    if vec2._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2._data.ndim}-D")
    return write_out(input.reshape(input._data.shape[0], 1) * vec2, out)


ger = outer
