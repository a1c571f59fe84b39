"""Solving with triangular matrices: ``linalg.solve_triangular``, ``cholesky_solve`` and
``cholesky_inverse`` (batched; batch dimensions broadcast; with gradients).

The backend's ``xp.linalg`` has no triangular solve (CuPy keeps it in ``cupyx.scipy``), so the
forward is a substitution loop over rows, each step one batched product on the array module:
``n`` steps for ``n``-by-``n`` matrices, every batch matrix and right-hand column at once.
"""
from .._dispatch import apply
from .._tensor import Tensor
from ..autograd.node import Node
from ._common import quiet_errors, sum_to_shape, xp_of
from ._linalg_common import SCALAR_NAME, mT, write_out
from .matrix_inverse import _broadcast
from .registry import tensor_method
from ..amp.autocast_mode import autocast_function

__all__ = ["solve_triangular", "cholesky_solve", "cholesky_inverse"]


def substitute(xp, a, b, upper, unitriangular=False):
    """``A^-1 B`` for arrays ``a`` (..., n, n), of which only the upper (or lower) triangle is read
    (and not its diagonal when ``unitriangular``), and ``b`` (..., n, k); batch dims broadcast."""
    batch = _broadcast(a.shape[:-2], b.shape[:-2])
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    n, k = a.shape[-1], b.shape[-1]
    x = xp.empty(batch + (n, k), dtype=a.dtype)
    x[...] = b
    rows = range(n - 1, -1, -1) if upper else range(n)
    with quiet_errors():
        for i in rows:
            done = slice(i + 1, n) if upper else slice(0, i)
            if (upper and i < n - 1) or (not upper and i > 0):
                x[..., i, :] -= (a[..., i:i + 1, done] @ x[..., done, :])[..., 0, :]
            if not unitriangular:
                x[..., i, :] /= a[..., i, i:i + 1]
    return x


def _triangle(t, upper, unitriangular):
    """The part of ``t`` that a triangular solve reads (a gradient lives there only)."""
    if upper:
        return t.triu(1) if unitriangular else t.triu()
    return t.tril(-1) if unitriangular else t.tril()


class LinalgSolveTriangularBackward0(Node):
    """``X = A^-1 B`` with ``A`` triangular. ``gB = A^-T gX`` and ``gA = -gB X^T`` on ``A``'s
    triangle."""

    saves_result = True

    def forward(ctx, a, b, upper, unitriangular):
        ctx.save_for_backward(a)
        ctx.flags, ctx.shapes = (upper, unitriangular), (a._data.shape, b._data.shape)
        return substitute(xp_of(a), a._data, b._data, upper, unitriangular)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        upper, unit = ctx.flags
        need = ctx.needs_input_grad
        gb = apply(LinalgSolveTriangularBackward0, mT(a), grad, not upper, unit)
        ga = None
        if need[0]:
            ga = sum_to_shape(_triangle(-(gb @ mT(ctx.saved_result)), upper, unit), ctx.shapes[0])
        return ga, (sum_to_shape(gb, ctx.shapes[1]) if need[1] else None)


def _check_pair(name, A, B, kernel, a_name="A", b_name="B"):
    for arg, t in ((a_name, A), (b_name, B)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(t).__name__}")
    for t in (A, B):
        if t._dtype._category != 2 or t._dtype.itemsize < 4:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAME[t._dtype]}'")


def _check_square(prefix, t, what="A"):
    shape = t._data.shape
    if len(shape) < 2:
        raise RuntimeError(f"{prefix}The input tensor {what} must have at least 2 dimensions.")
    if shape[-1] != shape[-2]:
        raise RuntimeError(f"{prefix}{what} must be batches of square matrices, but they are {shape[-2]} by "
                           f"{shape[-1]} matrices")


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """``X`` with ``A @ X = B`` (``X @ A = B`` when ``left=False``) for triangular ``A`` (..., n, n):
    only its upper (``upper=True``) or lower triangle is read, and its diagonal taken as ones
    when ``unitriangular``. ``B`` is (..., n, k) (``(..., k, n)`` when ``left=False``)."""
    _check_pair("linalg_solve_triangular", A, B, "triangular_solve_cpu")
    name = "linalg.solve_triangular: "
    _check_square(name, A)
    if B._data.ndim < 2:
        raise RuntimeError(f"{name}The input tensor B must have at least 2 dimensions.")
    n = A._data.shape[-1]
    rows, cols = B._data.shape[-2:]
    if (rows if left else cols) != n:
        raise RuntimeError(f"{name}Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} = B "
                           f"({n}x{n} and {rows}x{cols})")
    _batch_shape(A, B)
    if B._dtype is not A._dtype:
        B = B.to(A._dtype)
    if left:
        result = apply(LinalgSolveTriangularBackward0, A, B, bool(upper), bool(unitriangular))
    else:
        result = mT(apply(LinalgSolveTriangularBackward0, mT(A), mT(B), not upper, bool(unitriangular)))
    return write_out(result, out)


def _batch_shape(A, B):
    sa, sb = A._data.shape[:-2], B._data.shape[:-2]
    try:
        return _broadcast(sa, sb)
    except ValueError:
        n = max(len(sa), len(sb))
        pa, pb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
        i = next(i for i in range(n - 1, -1, -1) if pa[i] != pb[i] and 1 not in (pa[i], pb[i]))
        raise RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                           f"non-singleton dimension {i}") from None


class CholeskySolveBackward0(Node):
    """``X = (L L^T)^-1 B`` (``(U^T U)^-1 B`` when ``upper``). The gradient for the factor is taken
    as if all of it were used (PyTorch's convention): with ``gB = (L L^T)^-1 gX`` and
    ``C = gB X^T + X gB^T``, ``gL = -C L`` (``gU = -U C``)."""

    saves_result = True

    def forward(ctx, b, factor, upper):
        ctx.save_for_backward(factor)
        ctx.upper, ctx.shapes = upper, (b._data.shape, factor._data.shape)
        xp, f = xp_of(factor), factor._data
        first = xp.swapaxes(f, -1, -2) if upper else f
        y = substitute(xp, first, b._data, False)
        return substitute(xp, xp.swapaxes(first, -1, -2), y, True)

    def backward(ctx, grad):
        (factor,) = ctx.saved_values
        need = ctx.needs_input_grad
        gb = apply(CholeskySolveBackward0, grad, factor, ctx.upper)
        gf = None
        if need[1]:
            c = gb @ mT(ctx.saved_result)
            c = c + mT(c)
            gf = sum_to_shape(-(factor @ c) if ctx.upper else -(c @ factor), ctx.shapes[1])
        return (sum_to_shape(gb, ctx.shapes[0]) if need[0] else None), gf


@tensor_method("cholesky_solve")
@autocast_function("cholesky_solve")
def cholesky_solve(input, input2, upper=False, *, out=None):
    """``X`` with ``A @ X = B`` given ``B = input`` (..., n, k) and the Cholesky factor
    ``input2`` of ``A`` (lower, or upper when ``upper``)."""
    _check_pair("cholesky_solve", input, input2, "cholesky_solve_cpu", "input", "input2")
    if input._data.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {input._data.ndim} dimensions instead")
    if input2._data.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {input2._data.ndim} dimensions instead")
    _check_square("", input2)
    n = input2._data.shape[-1]
    if input._data.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {n} by {n} but each b "
                           f"matrix is {input._data.shape[-2]} by {input._data.shape[-1]}")
    if input._dtype is not input2._dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{SCALAR_NAME[input._dtype]} and A of type {SCALAR_NAME[input2._dtype]} instead.")
    _batch_shape(input2, input)
    return write_out(apply(CholeskySolveBackward0, input, input2, bool(upper)), out)


@tensor_method("cholesky_inverse")
@autocast_function("cholesky_inverse")
def cholesky_inverse(input, upper=False, *, out=None):
    """``(L L^T)^-1`` (``(U^T U)^-1`` when ``upper``) from the Cholesky factor ``input`` (..., n, n)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"cholesky_inverse(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input._dtype._category != 2 or input._dtype.itemsize < 4:
        raise NotImplementedError(f"\"cholesky_inverse_out_cpu\" not implemented for '{SCALAR_NAME[input._dtype]}'")
    _check_square("cholesky_inverse: ", input)
    from .creation import eye
    n = input._data.shape[-1]
    identity = eye(n, dtype=input.dtype, device=input.device).expand(input._data.shape)
    return write_out(apply(CholeskySolveBackward0, identity, input, bool(upper)), out)
