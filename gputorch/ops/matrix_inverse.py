"""Ops built on solving with a square matrix: inv, det, solve (batched, with gradients).

Forwards call the backend's LAPACK-style routines (``xp.linalg``); backwards are written
with matmul and these ops again, so they are differentiable twice. The gradient of
``det`` uses the inverse, so it is undefined at singular matrices (PyTorch's is not).
"""
from .._dispatch import apply
from .._tensor import Tensor
from ..autograd.node import Node
from ._common import sum_to_shape, xp_of
from ._linalg_common import SCALAR_NAME, mT, write_out
from .registry import tensor_method
from ..amp.autocast_mode import autocast_function

__all__ = ["inverse", "det"]


class LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input (a singular matrix, ...)."""


def _check_square(name, t):
    _check_square_shape(name, t)
    _check_float(name, t)


def _check_square_shape(name, t):
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(t).__name__}")
    shape = t._data.shape
    if len(shape) < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if shape[-1] != shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {shape[-2]} by "
                           f"{shape[-1]} matrices")


def _check_float(name, t):
    dt = t._dtype
    if dt._category < 2:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {SCALAR_NAME[dt]}")
    if dt.itemsize < 4:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got Half")


def _linalg_call(name, xp, fn, *arrays):
    """Run an ``xp.linalg`` routine; a singular input raises :class:`LinAlgError` with PyTorch's
    message (which batch element, and for ``inv`` which LU pivot is zero)."""
    x = arrays[0]
    try:
        result = fn(*arrays)
        # CuPy raises only under cupyx.errstate(linalg='raise'): a singular input shows as
        # non-finite output from finite input there; the LU pivots then decide.
        if bool(xp.isfinite(result).all()) or not bool(xp.isfinite(x).all()):
            return result
    except xp.linalg.LinAlgError:
        result = None
    from .linalg_solvers import singular_info
    info = singular_info(xp, x).reshape(-1)
    if result is not None and not info.any():
        return result
    first = next((i for i in range(info.shape[0]) if int(info[i])), 0)
    where = f"(Batch element {first}): " if x.ndim > 2 else ""
    if name == "linalg.inv":
        k = int(info[first]) if info.shape[0] else 0
        raise LinAlgError(f"{name}: {where}The diagonal element {k} is zero, the inversion could not be completed "
                          f"because the input matrix is singular.")
    raise LinAlgError(f"{name}: {where}The solver failed because the input matrix is singular.")


class LinalgInvExBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        xp = xp_of(a)
        return _linalg_call("linalg.inv", xp, xp.linalg.inv, a._data)

    def backward(ctx, grad):
        inv_t = mT(ctx.saved_result)
        return -(inv_t @ grad @ inv_t)


class LinalgDetBackward0(Node):
    saves_result = True

    def forward(ctx, a):
        ctx.save_for_backward(a)
        return xp_of(a).linalg.det(a._data)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        scale = grad * ctx.saved_result
        return scale.reshape(scale._data.shape + (1, 1)) * mT(inv(a))


class LinalgSolveExBackward0(Node):
    """``X = A^-1 B`` for (batches of) matrices ``B``, or vectors ``B`` when ``vector``; batch
    dimensions broadcast."""

    saves_result = True

    def forward(ctx, a, b, vector):
        ctx.save_for_backward(a)
        ctx.shapes, ctx.vector = (a._data.shape, b._data.shape), vector
        xp = xp_of(a)
        x, y = a._data, b._data
        if vector:
            y = y[..., None]
        batch = _broadcast(x.shape[:-2], y.shape[:-2])
        if x.shape[:-2] != batch:
            x = xp.broadcast_to(x, batch + x.shape[-2:])
        if y.shape[:-2] != batch:
            y = xp.broadcast_to(y, batch + y.shape[-2:])
        out = _linalg_call("torch.linalg.solve", xp, xp.linalg.solve, x, y)
        return out[..., 0] if vector else out

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        a_shape, b_shape = ctx.shapes
        need = ctx.needs_input_grad
        gb = apply(LinalgSolveExBackward0, mT(a), grad, ctx.vector)
        ga = None
        if need[0]:
            x = ctx.saved_result
            if ctx.vector:
                ga = -(gb.reshape(gb._data.shape + (1,)) * x.reshape(x._data.shape[:-1] + (1, x._data.shape[-1])))
            else:
                ga = -(gb @ mT(x))
            ga = sum_to_shape(ga, a_shape)
        return ga, (sum_to_shape(gb, b_shape) if need[1] else None)


@autocast_function("inv")
def inv(A, *, out=None):
    """Inverse of a square matrix (or of each matrix in a batch)."""
    _check_square("linalg.inv", A)
    return write_out(apply(LinalgInvExBackward0, A), out)


def det(A, *, out=None):
    """Determinant of a square matrix (or of each matrix in a batch)."""
    _check_square_shape("linalg.det", A)
    if A._dtype._category == 2 and A._dtype.itemsize < 4:
        if A._data.size:     # PyTorch's LU kernel has no half-precision version
            raise NotImplementedError(f'"lu_cpu" not implemented for \'{SCALAR_NAME[A._dtype]}\'')
        # nothing to factor (0x0 matrices: det 1, or no matrices): PyTorch skips its dtype check
        return write_out(det(A.float()).to(A._dtype), out)
    _check_float("linalg.det", A)
    return write_out(apply(LinalgDetBackward0, A), out)


@autocast_function("solve")
def solve(A, B, *, left=True, out=None):
    """``X`` with ``A @ X = B`` (``X @ A = B`` when ``left=False``). ``B`` is a vector (or a batch
    of vectors) when it is 1-D or has exactly the shape ``A.shape[:-1]``."""
    _check_square("linalg.solve", A)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve(): argument 'B' must be Tensor, not {type(B).__name__}")
    if A._dtype is not B._dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{SCALAR_NAME[A._dtype]} and B of type {SCALAR_NAME[B._dtype]} instead")
    a_shape, b_shape = A._data.shape, B._data.shape
    vector = len(b_shape) == 1 or (len(b_shape) == len(a_shape) - 1 and b_shape == a_shape[:-1])
    if not left:
        if vector:
            raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for "
                               "left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)")
        return write_out(mT(solve(mT(A), mT(B))), out)
    n = a_shape[-1]
    rows, cols = (b_shape[-1], 1) if vector else b_shape[-2:]
    batch_ok = True
    try:
        _broadcast(a_shape[:-2], b_shape[:-1] if vector else b_shape[:-2])
    except ValueError:
        batch_ok = False
    if rows != n or not batch_ok:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({a_shape[-2]}x{n} and {rows}x{cols})")
    return write_out(apply(LinalgSolveExBackward0, A, B, vector), out)


def _broadcast(s1, s2):
    """The broadcast of two batch shapes (ValueError when they do not broadcast)."""
    n = max(len(s1), len(s2))
    s1, s2 = (1,) * (n - len(s1)) + tuple(s1), (1,) * (n - len(s2)) + tuple(s2)
    for x, y in zip(s1, s2):
        if x != y and x != 1 and y != 1:
            raise ValueError("shapes do not broadcast")
    return tuple(max(x, y) if x and y else 0 for x, y in zip(s1, s2))


@tensor_method("inverse")
@autocast_function("inverse")
def inverse(input, *, out=None):
    """``linalg.inv``."""
    return inv(input, out=out)


tensor_method("det")(det)
