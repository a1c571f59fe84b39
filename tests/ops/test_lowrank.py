"""svd_lowrank and pca_lowrank (gputorch/ops/lowrank.py): exact on matrices of rank at most q,
shapes and singular values as PyTorch's, gradients, errors."""
import numpy as np
import pytest

import gputorch
from tests._helpers import assert_close

torch = pytest.importorskip("torch")


def _rank_two(shape, seed=15):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape[:-1] + (2,)) @ rng.standard_normal(shape[:-2] + (2, shape[-1]))


@pytest.mark.parametrize("shape,q", [((6, 5), 3), ((4, 7), 2), ((2, 5, 4), 3)])
def test_svd_lowrank_is_exact_at_low_rank(device, shape, q):
    a = _rank_two(shape)
    A = gputorch.tensor(a, device=device)
    U, S, V = gputorch.svd_lowrank(A, q=q)
    tU, tS, tV = torch.svd_lowrank(torch.tensor(a), q=q)
    assert (U.shape, S.shape, V.shape) == (tU.shape, tS.shape, tV.shape)
    assert_close(S, tS, 1e-10, 1e-10)                           # the true singular values (then zeros)
    assert_close(U @ gputorch.diag_embed(S) @ V.mT, torch.tensor(a), 1e-10, 1e-10)


def test_svd_lowrank_with_mean_and_pca(device):
    a = _rank_two((7, 4))
    mean = np.random.default_rng(16).standard_normal(4)
    shifted = a + mean
    U, S, V = gputorch.svd_lowrank(gputorch.tensor(shifted, device=device), q=2,
                                   M=gputorch.tensor(mean, device=device).expand(7, 4))
    assert_close(U @ gputorch.diag(S) @ V.t(), torch.tensor(a), 1e-10, 1e-10)
    ours = gputorch.pca_lowrank(gputorch.tensor(shifted, device=device), q=3)
    theirs = torch.pca_lowrank(torch.tensor(shifted), q=3)
    assert_close(ours[1], theirs[1], 1e-10, 1e-10)
    assert_close(gputorch.pca_lowrank(gputorch.tensor(a, device=device), center=False)[1],
                 torch.pca_lowrank(torch.tensor(a), center=False)[1], 1e-10, 1e-10)


def test_lowrank_gradient_and_errors(device):
    a = gputorch.tensor(_rank_two((5, 4)), device=device, requires_grad=True)
    _, S, _ = gputorch.svd_lowrank(a, q=2)
    S.sum().backward()
    _, tS, _ = torch.svd_lowrank(ta := torch.tensor(_rank_two((5, 4)), requires_grad=True), q=2)
    tS.sum().backward()
    assert_close(a.grad, ta.grad, 1e-8, 1e-8)                  # d(nuclear norm)/dA = U V^T
    with pytest.raises(ValueError, match="must be non-negative integer and not greater than min"):
        gputorch.pca_lowrank(a, q=7)
    with pytest.raises(ValueError, match="niter\\(=-1\\)"):
        gputorch.pca_lowrank(a, niter=-1)
