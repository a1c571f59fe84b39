"""torch.lu_unpack and torch.lu_solve (gputorch/ops/linalg_legacy.py): P L U reconstructs the
matrix, values and gradients against PyTorch, the empty parts and the errors."""
import warnings

import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck
from tests._helpers import assert_close

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape", [(3, 3), (3, 4), (4, 3), (2, 3, 3)])
def test_lu_unpack_matches_torch_and_reconstructs(device, shape):
    a = np.random.default_rng(7).standard_normal(shape) + 3 * np.eye(*shape[-2:])
    A, tA = gputorch.tensor(a, device=device), torch.tensor(a)
    LU, pivots = gputorch.linalg.lu_factor(A)
    tLU, tpivots = torch.linalg.lu_factor(tA)
    P, L, U = gputorch.lu_unpack(LU, pivots)
    for ours, theirs in zip((P, L, U), torch.lu_unpack(tLU, tpivots)):
        assert_close(ours, theirs, 1e-12, 1e-12)
    assert_close(P @ L @ U, tA, 1e-12, 1e-12)
    only_p = gputorch.lu_unpack(LU, pivots, False, True)
    assert only_p.L.shape == (0,) and only_p.U.shape == (0,) and only_p.P.shape == P.shape
    assert gputorch.lu_unpack(LU, pivots, True, False).P.shape == (0,)
    assert gradcheck(lambda t: gputorch.lu_unpack(t, pivots)[1:], (LU.detach().requires_grad_(),))


def test_lu_solve_takes_the_right_hand_side_first(device):
    a = np.random.default_rng(8).standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = np.random.default_rng(9).standard_normal((2, 3, 2))
    A, B = gputorch.tensor(a, device=device, requires_grad=True), gputorch.tensor(b, device=device, requires_grad=True)
    tA, tB = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X = gputorch.lu_solve(B, *gputorch.linalg.lu_factor(A))
        tX = torch.lu_solve(tB, *torch.linalg.lu_factor(tA))
        assert_close(B.lu_solve(*gputorch.linalg.lu_factor(A)), tX, 1e-12, 1e-12)
    assert_close(X, tX, 1e-12, 1e-12)
    X.sum().backward()
    tX.sum().backward()
    assert_close(A.grad, tA.grad, 1e-10, 1e-10)
    assert_close(B.grad, tB.grad, 1e-10, 1e-10)


def test_lu_unpack_errors(device):
    LU, pivots = gputorch.linalg.lu_factor(gputorch.eye(3, device=device) * 2)
    with pytest.raises(RuntimeError, match="LU_pivots is expected to be a contiguous tensor of torch.int32"):
        gputorch.lu_unpack(LU, pivots.long())
    with pytest.raises(RuntimeError, match="must be between 1 and LU.size\\(-2\\) inclusive"):
        gputorch.lu_unpack(LU[:2], pivots)
    with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
        import gputorch.ops.linalg_legacy as legacy
        legacy._warned.discard("lu_solve")
        gputorch.lu_solve(gputorch.ones(3, 1, device=device), LU, pivots)
