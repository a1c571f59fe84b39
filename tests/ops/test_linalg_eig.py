"""``linalg.eig``/``eigvals``: the decomposition reconstructs its matrix, eigenvalues against
NumPy's, gradients by gradcheck (real and complex inputs), against torch's, and PyTorch's error for
a loss that depends on the eigenvectors' phases."""
import numpy as np
import pytest

import gputorch as T
from gputorch.autograd import gradcheck
from tests._helpers import to_numpy

RNG = np.random.default_rng(5)
REAL = RNG.standard_normal((2, 4, 4))
CPLX = REAL + 1j * RNG.standard_normal((2, 4, 4))


@pytest.mark.parametrize("data", [REAL, CPLX], ids=["real", "complex"])
def test_decomposition(device, data):
    values, vectors = T.linalg.eig(T.tensor(data, device=device))
    assert values.dtype is T.complex128 and vectors.shape == (2, 4, 4)
    v, w = to_numpy(vectors), to_numpy(values)
    np.testing.assert_allclose(data @ v, v * w[..., None, :], atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.sort_complex(to_numpy(T.linalg.eigvals(T.tensor(data, device=device))).ravel()),
                               np.sort_complex(np.linalg.eigvals(data).ravel()), rtol=1e-10)
    assert T.linalg.eigvals(T.tensor(data, dtype=T.float32 if data is REAL else T.complex64,
                                     device=device)).dtype is T.complex64


def test_gradcheck(device):
    z = T.tensor(CPLX[0], device=device, requires_grad=True)
    x = T.tensor(REAL[0], device=device, requires_grad=True)
    assert gradcheck(lambda a: T.linalg.eigvals(a), (z,))
    assert gradcheck(lambda a: T.linalg.eig(a)[1].abs(), (z,))
    assert gradcheck(lambda a: T.linalg.eig(a)[0].real + T.linalg.eig(a)[1].abs().sum(0), (x,))
    with pytest.raises(RuntimeError, match="specified up to multiplication by e\\^{i phi}"):
        T.linalg.eig(z)[1].real.sum().backward()


def test_gradients_match_torch():
    torch = pytest.importorskip("torch")
    weights = RNG.standard_normal((2, 4, 4))
    for data in (REAL, CPLX):
        ours, theirs = T.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        for lib, a in ((T, ours), (torch, theirs)):
            values, vectors = lib.linalg.eig(a)
            (values.abs().sum() + (vectors.abs() ** 2 * lib.tensor(weights)).sum()).backward()
        np.testing.assert_allclose(to_numpy(ours.grad), theirs.grad.resolve_conj().numpy(), rtol=1e-7, atol=1e-9)
