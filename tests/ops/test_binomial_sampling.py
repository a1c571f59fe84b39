"""binomial (gputorch/ops/binomial_sampling.py): the sampled frequencies follow the Binomial pmf
on both of its paths (inversion, BTRS), edge counts and probabilities, reproducibility, errors."""
import math

import numpy as np
import pytest

import gputorch


def _pmf(n, p):
    return np.array([math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1)])


@pytest.mark.parametrize("n,p", [(12, 0.3), (60, 0.4), (40, 0.85)])   # inversion, BTRS, BTRS of 1 - p
def test_frequencies_follow_the_pmf(device, n, p):
    gputorch.manual_seed(1)
    draws = 40000
    k = gputorch.binomial(gputorch.full((draws,), float(n), dtype=gputorch.float64, device=device),
                          gputorch.full((draws,), p, dtype=gputorch.float64, device=device)).cpu().numpy()
    assert k.min() >= 0 and k.max() <= n and np.all(k == np.floor(k))
    observed = np.bincount(k.astype(np.int64), minlength=n + 1) / draws
    expected = _pmf(n, p)
    # each frequency within 5 standard errors of its probability
    assert np.all(np.abs(observed - expected) <= 5 * np.sqrt(expected * (1 - expected) / draws) + 1e-4)


def test_edges_broadcasting_and_reproducibility(device):
    count = gputorch.tensor([0.0, 7.0, 7.0, -3.0, 20.7], device=device)
    prob = gputorch.tensor([0.5, 0.0, 1.0, 0.5, 1.0], device=device)
    assert gputorch.binomial(count, prob).tolist() == [0.0, 0.0, 7.0, 0.0, 20.0]
    gputorch.manual_seed(3)
    first = gputorch.binomial(gputorch.full((2, 50), 30.0, device=device), gputorch.tensor([0.25], device=device))
    gputorch.manual_seed(3)
    second = gputorch.binomial(gputorch.full((2, 50), 30.0, device=device), gputorch.tensor([0.25], device=device))
    assert first.shape == (2, 50) and first.tolist() == second.tolist()


def test_errors(device):
    c = gputorch.ones(2, device=device)
    with pytest.raises(ValueError, match="floating-point dtypes for count, got: Long"):
        gputorch.binomial(c.long(), c)
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        gputorch.binomial(c, c.double())
    with pytest.raises(RuntimeError, match="derivative for aten::binomial is not implemented"):
        gputorch.binomial(c.requires_grad_(), c.detach()).sum().backward()
