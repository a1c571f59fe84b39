"""lobpcg (gputorch/ops/lobpcg.py): the extreme eigenpairs of symmetric positive-definite matrices,
standard and generalized, against PyTorch's LOBPCG (to its tolerance) and the exact spectrum."""
import numpy as np
import pytest

import gputorch
from tests._helpers import assert_close

torch = pytest.importorskip("torch")


def _spd(n, seed):
    a = np.random.default_rng(seed).standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


@pytest.mark.parametrize("kwargs", [{"k": 2}, {"k": 3, "largest": False}, {"k": 2, "n": 3}, {}])
def test_eigenpairs_match_torch(device, kwargs):
    a = _spd(10, 19)
    E, X = gputorch.lobpcg(gputorch.tensor(a, device=device), **kwargs)
    tE, tX = torch.lobpcg(torch.tensor(a), **kwargs)
    assert E.shape == tE.shape and X.shape == tX.shape
    assert_close(E, tE, 1e-7, 1e-7)
    assert_close(X.abs(), tX.abs(), 1e-5, 1e-5)            # eigenvectors up to sign
    assert_close(gputorch.tensor(a, device=device) @ X, X * E, 1e-10, 1e-10)


def test_generalized_problem_batches_and_gradient(device):
    a, b = _spd(9, 20), _spd(9, 21)
    E, X = gputorch.lobpcg(gputorch.tensor(a, device=device), k=2, B=gputorch.tensor(b, device=device))
    tE, _ = torch.lobpcg(torch.tensor(a), k=2, B=torch.tensor(b))
    assert_close(E, tE, 1e-7, 1e-7)
    assert_close(X.mT @ gputorch.tensor(b, device=device) @ X, torch.eye(2, dtype=torch.float64), 1e-10, 1e-10)
    batch = gputorch.lobpcg(gputorch.tensor(np.stack([a, b]), device=device), k=1)[0]
    assert batch.shape == (2, 1)
    A = gputorch.tensor(a, device=device, requires_grad=True)
    tA = torch.tensor(a, requires_grad=True)
    gputorch.lobpcg(A, k=2)[0].sum().backward()
    torch.lobpcg(tA, k=2)[0].sum().backward()
    assert_close(A.grad, tA.grad, 1e-6, 1e-6)
    with pytest.raises(ValueError, match="smaller than 3 x the number of requested eigenpairs \\(=4\\)"):
        gputorch.lobpcg(gputorch.tensor(a, device=device), k=4)
