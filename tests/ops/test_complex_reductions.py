"""Complex inputs of sgn, vdot, prod, cumprod, var/std (real results), and the vector and matrix
norms (``gputorch/ops/complex_support.py`` lists them): values against NumPy, gradients by gradcheck
(PyTorch's conjugate-Wirtinger convention) and against torch where it is installed."""
import math

import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck
from tests._helpers import assert_close

Z = np.array([[1 + 2j, 3 - 1j, 0.5j], [0.5 + 0.5j, -2 + 1j, 0.3 - 0.7j]])

CASES = {
    "sgn": (lambda T, z: T.sgn(z), lambda z: z / np.abs(z)),
    "vdot": (lambda T, z: T.vdot(z[0], z[1]), lambda z: np.vdot(z[0], z[1])),
    "prod": (lambda T, z: T.prod(z), lambda z: np.prod(z)),
    "prod_dim": (lambda T, z: z.prod(1, keepdim=True), lambda z: np.prod(z, 1, keepdims=True)),
    "cumprod": (lambda T, z: T.cumprod(z, 1), lambda z: np.cumprod(z, 1)),
    "var": (lambda T, z: T.var(z, 1), lambda z: np.var(z, 1, ddof=1)),
    "std": (lambda T, z: z.std(0, correction=0), lambda z: np.std(z, 0)),
    "vector_norm": (lambda T, z: T.linalg.vector_norm(z, 3), lambda z: np.sum(np.abs(z) ** 3) ** (1 / 3)),
    "vector_norm_inf": (lambda T, z: T.linalg.vector_norm(z, math.inf, dim=1), lambda z: np.abs(z).max(1)),
    "frobenius": (lambda T, z: T.linalg.matrix_norm(z), lambda z: np.linalg.norm(z, "fro")),
    "matrix_norm_1": (lambda T, z: T.linalg.matrix_norm(z, 1), lambda z: np.linalg.norm(z, 1)),
    "norm": (lambda T, z: T.linalg.norm(z, dim=1), lambda z: np.linalg.norm(z, axis=1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_values_and_gradients(name, device):
    op, reference = CASES[name]
    z = gputorch.tensor(Z, device=device, requires_grad=True)
    result = op(gputorch, z)
    expected = np.asarray(reference(Z))
    assert result.dtype == (gputorch.complex128 if np.iscomplexobj(expected) else gputorch.float64)
    assert_close(result, expected, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda t: op(gputorch, t), (z,))


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_gradients_match_torch(name):
    torch = pytest.importorskip("torch")
    op, _ = CASES[name]
    ours, theirs = gputorch.tensor(Z, requires_grad=True), torch.tensor(Z, requires_grad=True)
    for lib, z in ((gputorch, ours), (torch, theirs)):
        out = op(lib, z)
        (out.real * 0.7 + out.imag * 1.3).sum().backward() if out.is_complex() else out.sum().backward()
    assert_close(ours.grad, theirs.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_sgn_of_zero_and_its_gradient_are_zero():
    z = gputorch.tensor([0j, 3 + 4j], requires_grad=True)
    s = z.sgn()
    assert_close(s.detach(), np.array([0j, 0.6 + 0.8j], dtype=np.complex64))
    (s.real + s.imag).sum().backward()
    assert z.grad[0].item() == 0j


def test_complex_var_mean_and_norm_dtypes():
    z = gputorch.tensor(Z.astype(np.complex64))
    var, mean = gputorch.var_mean(z, 1)
    assert var.dtype == gputorch.float32 and mean.dtype == gputorch.complex64
    assert_close(mean, Z.mean(1).astype(np.complex64))
    assert gputorch.linalg.vector_norm(z, dtype=gputorch.complex128).dtype == gputorch.float64
    with pytest.raises(RuntimeError, match="dtype should be complex for complex inputs"):
        gputorch.linalg.vector_norm(z, dtype=gputorch.float64)
    with pytest.raises(RuntimeError, match="dtype should be complex for complex inputs"):
        gputorch.linalg.matrix_norm(z, dtype=gputorch.float64)


@pytest.mark.parametrize("name", ["sgn", "vdot", "prod_dim", "cumprod", "var", "std", "vector_norm"])
def test_complex_second_derivatives(name):
    from gputorch.autograd import gradgradcheck
    op, _ = CASES[name]
    assert gradgradcheck(lambda t: op(gputorch, t), (gputorch.tensor(Z, requires_grad=True),))
