"""geqrf and ormqr (gputorch/ops/householder.py): LAPACK's compact reflectors and products with
them, values and gradients against PyTorch, Q R reconstructing the input."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck
from tests._helpers import assert_close

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 4, 3), (1, 1), (5, 1), (0, 3)])
def test_geqrf_matches_lapack(device, shape):
    a = np.random.default_rng(13).standard_normal(shape)
    if shape == (4, 3):
        a[1:, 0] = 0.0           # nothing to annihilate: tau 0, the identity reflector
        a[1, 1] = -0.0           # LAPACK's sign rule takes -0.0 as non-negative
    ours, theirs = gputorch.geqrf(gputorch.tensor(a, device=device)), torch.geqrf(torch.tensor(a))
    assert type(ours).__name__ == "geqrf"
    assert_close(ours.a, theirs.a, 1e-12, 1e-12)
    assert_close(ours.tau, theirs.tau, 1e-12, 1e-12)
    if 0 not in shape and shape[-2] >= shape[-1]:
        q = gputorch.linalg.householder_product(ours.a, ours.tau)
        assert_close(q @ ours.a.triu()[..., :shape[-1], :], torch.tensor(a), 1e-12, 1e-12)


@pytest.mark.parametrize("left,transpose", [(True, False), (True, True), (False, False), (False, True)])
def test_ormqr_matches_torch_with_gradients(device, left, transpose):
    rng = np.random.default_rng(14)
    a, tau = torch.geqrf(torch.tensor(rng.standard_normal((2, 4, 3))))
    other = rng.standard_normal((2, 4, 2) if left else (2, 2, 4))
    ours = [gputorch.tensor(x, device=device, requires_grad=True) for x in (a.numpy(), tau.numpy(), other)]
    theirs = [torch.tensor(x, requires_grad=True) for x in (a.numpy(), tau.numpy(), other)]
    out, tout = gputorch.ormqr(*ours, left, transpose), torch.ormqr(*theirs, left, transpose)
    assert_close(out, tout, 1e-12, 1e-12)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    for x, y in zip(ours, theirs):
        assert_close(x.grad, y.grad, 1e-10, 1e-10)
    assert gradcheck(lambda *t: gputorch.ormqr(*t, left, transpose), tuple(x.detach().requires_grad_() for x in ours))


def test_errors(device):
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        gputorch.geqrf(gputorch.ones(3, device=device))
    with pytest.raises(NotImplementedError, match="geqrf_cpu"):
        gputorch.geqrf(gputorch.ones(2, 2, dtype=gputorch.int64, device=device))
    a, tau = gputorch.geqrf(gputorch.ones(3, 2, dtype=gputorch.float64, device=device))
    with pytest.raises(RuntimeError, match="tau.shape\\[-1\\] must be equal to min"):
        gputorch.ormqr(a, tau[:1], gputorch.ones(3, 1, dtype=gputorch.float64, device=device))
    x = gputorch.ones(2, 2, device=device, requires_grad=True)
    with pytest.raises(NotImplementedError, match="derivative for 'geqrf' is not implemented"):
        gputorch.geqrf(x).a.sum().backward()
