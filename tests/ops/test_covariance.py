"""cov and corrcoef (gputorch/ops/covariance.py): values with and without weights, gradients and
errors against PyTorch."""
import warnings

import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck
from tests._helpers import assert_close

torch = pytest.importorskip("torch")

DATA = np.random.default_rng(4).standard_normal((3, 6))
FWEIGHTS = [1, 2, 0, 3, 1, 1]
AWEIGHTS = [0.5, 1.0, 2.0, 0.25, 1.5, 1.0]


@pytest.mark.parametrize("kwargs", [{}, {"correction": 0}, {"fweights": FWEIGHTS}, {"aweights": AWEIGHTS},
                                    {"fweights": FWEIGHTS, "aweights": AWEIGHTS, "correction": 2}])
def test_cov_matches_torch_with_gradient(device, kwargs):
    x, tx = gputorch.tensor(DATA, device=device, requires_grad=True), torch.tensor(DATA, requires_grad=True)
    ours = {k: gputorch.tensor(v, device=device) if k != "correction" else v for k, v in kwargs.items()}
    theirs = {k: torch.tensor(v) if k != "correction" else v for k, v in kwargs.items()}
    out, tout = gputorch.cov(x, **ours), torch.cov(tx, **theirs)
    assert_close(out, tout, 1e-12, 1e-12)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    assert_close(x.grad, tx.grad, 1e-12, 1e-12)
    assert gradcheck(lambda t: t.cov(**ours), (x.detach().requires_grad_(),))


def test_cov_shapes_and_corrcoef(device):
    x = gputorch.tensor(DATA, device=device)
    tx = torch.tensor(DATA)
    assert_close(x[0].cov(), tx[0].cov(), 1e-12, 1e-12)            # one variable: 0-d
    assert gputorch.cov(x[:1]).shape == ()
    assert_close(gputorch.cov(gputorch.tensor([[1, 2, 4], [3, 1, 0]], device=device)),
                 torch.cov(torch.tensor([[1, 2, 4], [3, 1, 0]])), 1e-6, 1e-6)
    assert_close(x.corrcoef(), tx.corrcoef(), 1e-12, 1e-12)
    constant = [[1.0, 1.0, 1.0], [3.0, 1.0, 0.0]]
    assert_close(gputorch.corrcoef(gputorch.tensor(constant, device=device)), torch.corrcoef(torch.tensor(constant)),
                 1e-6, 1e-6)
    assert float(gputorch.corrcoef(x[0])) == 1.0
    assert gradcheck(gputorch.corrcoef, (gputorch.tensor(DATA, device=device, requires_grad=True),))


def test_cov_errors_and_degenerate_counts(device):
    x = gputorch.tensor(DATA, device=device)
    with pytest.raises(RuntimeError, match="two or fewer dimensions but got an input with 3"):
        gputorch.cov(x.unsqueeze(0))
    with pytest.raises(RuntimeError, match="fweights to have integral dtype but got fweights with Float"):
        gputorch.cov(x, fweights=gputorch.ones(6, device=device))
    with pytest.raises(RuntimeError, match="aweights to have floating point dtype"):
        gputorch.cov(x, aweights=gputorch.ones(6, dtype=gputorch.int64, device=device))
    with pytest.raises(RuntimeError, match="fweights cannot be negative"):
        gputorch.cov(x, fweights=gputorch.tensor([1, -1, 1, 1, 1, 1], device=device))
    with pytest.raises(RuntimeError, match="same numel as there are observations"):
        gputorch.cov(x, aweights=gputorch.ones(5, device=device, dtype=gputorch.float64))
    with pytest.raises(RuntimeError, match="weights sum to zero"):
        gputorch.cov(x, fweights=gputorch.zeros(6, dtype=gputorch.int64, device=device))
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        out = gputorch.cov(x, correction=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(out, torch.cov(torch.tensor(DATA), correction=6), 0, 0)
