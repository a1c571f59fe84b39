"""Householder reflectors in LAPACK's compact form: ``geqrf`` (a QR decomposition kept as
reflectors) and ``ormqr`` (a matrix multiplied by the product of such reflectors; ``orgqr``,
that product itself, is ``linalg.householder_product``).

``geqrf(A)`` returns ``(a, tau)``: ``R`` on and above the diagonal of ``a``, below it the
vectors ``v_i`` (``v_i[i] = 1`` implied), with ``Q = H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^T``.
Each reflector is LAPACK's (``dlarfg``): it maps ``x = A[i:, i]`` to ``beta e_1`` with ``beta``
of the opposite sign to ``x[0]``, and is the identity (``tau = 0``) where ``x`` has nothing
below its first entry to annihilate.
"""
from .. import return_types
from .._dispatch import apply
from .._tensor import _LEGACY_NAMES, Tensor
from ..autograd.node import Node
from ._common import quiet_errors, xp_of
from ._linalg_common import mT, write_out
from .registry import tensor_method
from ..amp.autocast_mode import autocast_function

__all__ = ["geqrf", "ormqr"]


def _geqrf_arrays(xp, a):
    """``(a, tau)`` of LAPACK's geqrf for the batched matrices ``a`` (..., m, n), float arrays."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    count = 1
    for size in batch:
        count *= size
    work = a.reshape((count, m, n)).copy()
    tau = xp.zeros((work.shape[0], k), dtype=a.dtype)
    with quiet_errors():
        for i in range(k):
            alpha = work[:, i, i].copy()
            below = work[:, i + 1:, i]
            xnorm = xp.sqrt((below * below).sum(axis=1))
            reflect = xnorm != 0
            beta = -xp.where(alpha >= 0, 1, -1) * xp.hypot(alpha, xnorm)   # Fortran's SIGN: -0.0 counts as >= 0
            t = xp.where(reflect, (beta - alpha) / beta, 0)
            scale = xp.where(reflect, 1 / (alpha - beta), 0)
            work[:, i + 1:, i] = xp.where(reflect[:, None], below * scale[:, None], below)
            work[:, i, i] = xp.where(reflect, beta, alpha)
            tau[:, i] = t
            if i + 1 < n:   # apply H_i to the columns on the right
                v = xp.concatenate([xp.ones((work.shape[0], 1), a.dtype), work[:, i + 1:, i]], axis=1)
                rest = work[:, i:, i + 1:]
                w = (v[:, :, None] * rest).sum(axis=1)
                work[:, i:, i + 1:] = rest - t[:, None, None] * v[:, :, None] * w[:, None, :]
    return work.reshape(a.shape), tau.reshape(batch + (k,))


class GeqrfBackward0(Node):
    def forward(ctx, A):
        return _geqrf_arrays(xp_of(A), A._data)

    def backward(ctx, *grads):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


@tensor_method("geqrf")
@autocast_function("geqrf")
def geqrf(input, *, out=None):
    """``(a, tau)``: the QR decomposition of ``input`` (..., m, n) as LAPACK keeps it (see the
    module docstring). Not differentiable (as in PyTorch)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"geqrf(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input._data.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if input._dtype._category != 2 or input._dtype.itemsize < 4:
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{_LEGACY_NAMES[input._dtype]}'")
    a, tau = apply(GeqrfBackward0, input)
    result = return_types.geqrf(a, tau)
    if out is not None:
        return return_types.geqrf(*[write_out(r, o) for r, o in zip(result, out)])
    return result


@tensor_method("ormqr")
@autocast_function("ormqr")
def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    """``Q @ input3`` (``input3 @ Q`` when not ``left``; ``Q^T`` for ``Q`` with ``transpose``), ``Q``
    the product of the reflectors ``(input, input2)`` of :func:`geqrf`, applied one by one (a
    composite, so differentiable in all three)."""
    for position, t in enumerate((input, input2, input3), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"ormqr(): argument at position {position} must be Tensor, not {type(t).__name__}")
    if input._data.ndim < 2 or input3._data.ndim < 2:
        raise RuntimeError("torch.ormqr: input and other must have at least 2 dimensions.")
    side = -2 if left else -1
    m = input3._data.shape[side]
    k = input2._data.shape[-1]
    if k != min(m, input._data.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1])")
    if input._data.shape[-2] != m:
        raise RuntimeError(f"torch.ormqr: input.shape[-2] must be equal to other.shape[{side}]")
    if input._dtype is not input3._dtype or input._dtype is not input2._dtype:
        raise RuntimeError(f"torch.ormqr: Expected input and other to have the same dtype, but input has dtype "
                           f"{input.dtype} and other has dtype {input3.dtype}")
    from .creation import eye
    reflectors = input.tril(-1)[..., :, :k] + eye(m, k, dtype=input.dtype, device=input.device)
    c = input3 if left else mT(input3)       # work on the left: C Q = (Q^T C^T)^T
    forward_order = left == transpose        # Q^T C = H_k ... H_1 C applies H_1 first
    order = range(k) if forward_order else range(k - 1, -1, -1)
    for i in order:
        v = reflectors[..., :, i:i + 1]
        c = c - input2[..., i:i + 1].unsqueeze(-1) * (v @ (mT(v) @ c))
    return write_out(c if left else mT(c), out)
