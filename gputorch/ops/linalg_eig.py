"""``linalg.eig`` and ``linalg.eigvals``: the eigen-decomposition of general square matrices,
``A = V diag(L) V^-1``, with complex eigenvalues ``L`` and unit-norm eigenvectors ``V`` (complex64
for float32 or complex64 input, complex128 otherwise). NumPy computes it (LAPACK ``geev``); on CUDA
the matrices go to the host and back where CuPy has no general eigensolver.

The gradient (PyTorch's convention, ``F_ij = 1 / (L_j - L_i)`` off the diagonal)::

    gV' = gV - V diag(Re(diag(V^H gV)))          (the eigenvectors' unit norm)
    gA  = V^-H (diag(gL) + conj(F) * (V^H gV')) V^H

which is only defined when the loss does not depend on the eigenvectors' arbitrary phases
(``Im(diag(V^H gV)) = 0``); otherwise backward raises, as PyTorch's does.
"""
import numpy as np

from .. import _dtype
from .._dispatch import apply
from ..autograd.node import Node
from ._common import xp_of
from ._linalg_common import mT
from .complex_numbers import conj_of
from .matrix_inverse import _check_square, solve
from .. import return_types
from ..amp.autocast_mode import autocast_function

__all__ = ["eig", "eigvals"]


class LinalgEigBackward0(Node):
    supports_complex = True

    def forward(ctx, a):
        xp = xp_of(a)
        out_dt = (_dtype.complex64 if a._dtype in (_dtype.float32, _dtype.complex64) else _dtype.complex128)
        solver = getattr(xp.linalg, "eig", None)
        if solver is not None:
            values, vectors = solver(a._data)
        else:   # CuPy without a general eigensolver: NumPy on the host
            backend = a._device.backend
            values, vectors = np.linalg.eig(backend.to_numpy(a._data))
            values, vectors = (backend.asarray(v, None, a._device) for v in (values, vectors))
        ctx.real_input = not a._dtype.is_complex
        return values.astype(out_dt.np), vectors.astype(out_dt.np)

    def backward(ctx, grad_values, grad_vectors):
        values, vectors = ctx.outputs
        vh = mT(conj_of(vectors))
        eye = _eye_like(vectors, values.shape[-1])
        inner = 0
        if grad_values is not None:
            inner = grad_values.unsqueeze(-1) * eye
        if grad_vectors is not None:
            vhgv = vh @ grad_vectors
            phase = vhgv.diagonal(0, -2, -1).imag
            if bool((phase.abs() > 1e-4 * max(1.0, float(vhgv.abs().max()))).any()):
                raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                                   "multiplication by e^{i phi}. The specified loss function depends on this "
                                   "quantity, so it is ill-defined.")
            norms = vhgv.diagonal(0, -2, -1).real
            m = vhgv - (vh @ vectors) * norms.unsqueeze(-2)
            gaps = conj_of(values).unsqueeze(-2) - conj_of(values).unsqueeze(-1) + eye
            inner = inner + m / gaps * (1 - eye)
        grad = solve(vh, inner @ vh)
        return grad.real if ctx.real_input else grad


def _eye_like(t, n):
    """The ``n x n`` identity in ``t``'s dtype and device."""
    from .creation import eye
    return eye(n, dtype=t.dtype, device=t.device)


@autocast_function("eig")
def eig(A, *, out=None):
    """``(eigenvalues, eigenvectors)`` of square matrices ``A (*, n, n)``: complex ``L (*, n)`` and
    ``V (*, n, n)`` with ``A V = V diag(L)`` and unit-norm columns."""
    _check_square("linalg.eig", A)
    values, vectors = apply(LinalgEigBackward0, A)
    node = values._grad_fn
    if node is not None:
        node.outputs = (values.detach(), vectors.detach())   # values only: no version checks needed
    result = return_types.linalg_eig(values, vectors)
    if out is not None:
        out[0].copy_(values)
        out[1].copy_(vectors)
        return out
    return result


@autocast_function("eigvals")
def eigvals(A, *, out=None):
    """The complex eigenvalues ``(*, n)`` of square matrices ``A (*, n, n)``."""
    values = eig(A)[0]
    return values if out is None else out.copy_(values)
