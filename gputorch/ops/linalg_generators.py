"""Matrices built from vectors, and solves over reshaped tensors: ``linalg.vander``,
``linalg.householder_product``, ``linalg.tensorinv``, ``linalg.tensorsolve`` (composites of
differentiable ops, so their gradients come for free).
"""
from .._dispatch import apply
from .._tensor import Tensor
from ..autograd.node import Node
from ._linalg_common import SCALAR_NAME, mT, write_out
from .matrix_inverse import inv, solve
from ..amp.autocast_mode import autocast_function

__all__ = ["vander", "householder_product", "tensorinv", "tensorsolve"]


def _prod(sizes):
    result = 1
    for s in sizes:
        result *= s
    return result


def vander(x, *, N=None):  # noqa: N803 - PyTorch's argument name
    """The Vandermonde matrix of ``x`` (..., n): (..., n, N) with columns ``x**0, x**1, ...,
    x**(N-1)`` (``N`` defaults to n), each power the previous one times ``x``."""
    if not isinstance(x, Tensor):
        raise TypeError(f"linalg_vander(): argument 'x' must be Tensor, not {type(x).__name__}")
    if x._dtype.name == "bool":
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, but got Bool")
    n = x._data.shape[-1] if x._data.ndim else 1
    N = n if N is None else N  # noqa: N806
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    column = x.unsqueeze(-1)
    from .shape import cat
    ones = column.new_ones(column.shape)
    powers = cat([ones, column.expand(column.shape[:-1] + (N - 1,))], -1)
    return powers.cumprod(-1)


@autocast_function("householder_product")
def householder_product(A, tau, *, out=None):
    """The first n columns of ``H_1 H_2 ... H_k`` for ``A`` (..., m, n) and ``tau`` (..., k),
    ``H_i = I - tau_i v_i v_i^T`` with ``v_i`` column i of ``A`` below the diagonal, 1 on it and 0
    above (LAPACK's ``orgqr``; ``A``, ``tau`` as :func:`gputorch.geqrf` returns them)."""
    for arg, t in (("input", A), ("tau", tau)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linalg_householder_product(): argument '{arg}' must be Tensor, not {type(t).__name__}")
    name = "torch.linalg.householder_product"
    if A._data.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = A._data.shape[-2:]
    k = tau._data.shape[-1] if tau._data.ndim else 1
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if n < k:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if A._dtype._category != 2 or A._dtype.itemsize < 4:
        raise NotImplementedError(f"\"orgqr_cpu\" not implemented for '{SCALAR_NAME[A._dtype]}'")
    if tau._dtype is not A._dtype:
        raise RuntimeError(f"{name}: tau dtype {SCALAR_NAME[tau._dtype]} does not match input dtype "
                           f"{SCALAR_NAME[A._dtype]}")
    from .creation import eye
    q = eye(m, n, dtype=A.dtype, device=A.device).expand(A._data.shape[:-2] + (m, n))
    reflectors = A.tril(-1) + eye(m, n, dtype=A.dtype, device=A.device)
    for i in range(k - 1, -1, -1):
        v = reflectors[..., :, i:i + 1]
        q = q - tau[..., i:i + 1].unsqueeze(-1) * (v @ (mT(v) @ q))
    if k == 0 or not A._data.size:   # no reflector: the identity, in the graph of A and tau, passing no gradient
        q = apply(LinalgHouseholderProductBackward0, A, tau, q)
    return write_out(q, out)


class LinalgHouseholderProductBackward0(Node):
    """The product of no reflectors (``tau`` empty): the given identity columns, recorded as
    PyTorch records it (the result requires grad; ``A`` and ``tau`` get no gradient)."""

    def forward(ctx, A, tau, identity):
        return identity._data

    def backward(ctx, grad):
        return None, None, None


def tensorinv(A, ind=2, *, out=None):
    """The inverse of ``A`` taken as a map from its last dims to its first ``ind`` dims: the result
    has shape ``A.shape[ind:] + A.shape[:ind]`` and contracts with ``A`` to the identity."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg_tensorinv(): argument 'input' must be Tensor, not {type(A).__name__}")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = A._data.shape
    rows, cols = _prod(shape[:ind]), _prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return write_out(inv(A.reshape(rows, cols)).reshape(shape[ind:] + shape[:ind]), out)


def tensorsolve(A, B, dims=None, *, out=None):
    """``X`` with ``tensordot(A, X, X.ndim) = B``: ``X`` has shape ``A.shape[B.ndim:]`` (after the
    dims ``dims`` of ``A`` are moved to its end)."""
    for arg, t in (("input", A), ("other", B)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linalg_tensorsolve(): argument '{arg}' must be Tensor, not {type(t).__name__}")
    if dims is not None:
        dims = [A._wrap_dim(d) for d in dims]
        rest = [d for d in range(A._data.ndim) if d not in dims]
        A = A.permute(rest + dims)
    shape = A._data.shape
    lead = B._data.shape
    result_shape = shape[B._data.ndim:]
    rows, cols = _prod(lead), _prod(result_shape)
    if shape[:B._data.ndim] != lead or rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {cols} != {_prod(shape[:B._data.ndim])}")
    return write_out(solve(A.reshape(rows, cols), B.reshape(rows)).reshape(result_shape), out)
