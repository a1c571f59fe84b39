"""Sampling: shapes (sample x batch x event), statistics of 20k draws, reproducibility under
manual_seed, reparameterised gradients; argument validation; expand; a small VAE-style loop."""
import math

import numpy as np
import pytest

import gputorch
from gputorch import distributions as D
from tests._helpers import assert_close, to_numpy


def _t(x, device, **kw):
    return gputorch.tensor(np.asarray(x, dtype=np.float64), device=device, **kw)


def _families(device):
    """(distribution, its mean and variance as arrays) with batch shape (2,)."""
    c = _t([0.7, 3.0], device)
    r = _t([1.5, 0.5], device)
    return [
        (D.Normal(_t([0.0, 2.0], device), r), [0.0, 2.0], [2.25, 0.25]),
        (D.Laplace(_t([1.0, -1.0], device), r), [1.0, -1.0], [4.5, 0.5]),
        (D.Exponential(r), [1 / 1.5, 2.0], [1 / 2.25, 4.0]),
        (D.Uniform(_t([0.0, -1.0], device), _t([1.0, 3.0], device)), [0.5, 1.0], [1 / 12, 16 / 12]),
        (D.Gamma(c, r), [0.7 / 1.5, 6.0], [0.7 / 2.25, 12.0]),
        (D.Beta(c, r), [0.7 / 2.2, 3.0 / 3.5], [0.7 * 1.5 / (2.2 ** 2 * 3.2), 1.5 / (3.5 ** 2 * 4.5)]),
        (D.LogNormal(_t([0.0, 0.5], device), _t([0.5, 0.25], device)),
         [math.exp(0.125), math.exp(0.5 + 0.03125)],
         [math.expm1(0.25) * math.exp(0.25), math.expm1(0.0625) * math.exp(1.0625)]),
        (D.Poisson(_t([0.8, 12.0], device)), [0.8, 12.0], [0.8, 12.0]),
        (D.Bernoulli(probs=_t([0.2, 0.7], device)), [0.2, 0.7], [0.16, 0.21]),
        (D.Binomial(6, probs=_t([0.2, 0.7], device)), [1.2, 4.2], [0.96, 1.26]),
        (D.StudentT(_t([5.0, 12.0], device), 1.0, r), [1.0, 1.0], [2.25 * 5 / 3, 0.25 * 12 / 10]),
        (D.HalfNormal(r), [1.5 * math.sqrt(2 / math.pi), 0.5 * math.sqrt(2 / math.pi)],
         [2.25 * (1 - 2 / math.pi), 0.25 * (1 - 2 / math.pi)]),
        (D.Chi2(_t([3.0, 7.0], device)), [3.0, 7.0], [6.0, 14.0]),
        (D.Geometric(probs=_t([0.3, 0.8], device)), [1 / 0.3 - 1, 0.25], [(1 / 0.3 - 1) / 0.3, 0.25 / 0.8]),
        (D.Categorical(probs=_t([[0.2, 0.3, 0.5], [0.6, 0.4, 0.0]], device)),
         [0.3 + 1.0, 0.4], [0.3 + 2.0 - 1.3 ** 2, 0.4 - 0.16]),
    ]


def test_sample_statistics_and_shapes(device):
    gputorch.manual_seed(0)
    n = 20000
    for dist, mean, var in _families(device):
        x = dist.sample((n,))
        assert tuple(x.shape) == (n, 2), type(dist).__name__
        assert x.device.type == device
        xs = to_numpy(x).astype(np.float64)
        mean, var = np.array(mean), np.array(var)
        se = np.sqrt(var / n)
        assert np.all(np.abs(xs.mean(0) - mean) < 5 * se + 1e-12), (type(dist).__name__, xs.mean(0), mean)
        assert np.all(np.abs(xs.var(0) - var) < 0.1 * var + 1e-12), (type(dist).__name__, xs.var(0), var)
        if type(dist).__name__ != "Categorical":
            assert_close(dist.mean, mean, rtol=1e-12, atol=1e-12, check_dtype=False)
            assert_close(dist.variance, var, rtol=1e-12, atol=1e-12, check_dtype=False)


def test_vector_families_sample_statistics(device):
    gputorch.manual_seed(1)
    conc = _t([0.5, 2.0, 3.5], device)
    x = to_numpy(D.Dirichlet(conc).sample((20000,)))
    assert x.shape == (20000, 3)
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-12)
    a = np.array([0.5, 2.0, 3.5])
    assert np.all(np.abs(x.mean(0) - a / 6) < 0.01)
    loc = _t([1.0, -2.0], device)
    cov = _t([[2.0, 0.6], [0.6, 0.5]], device)
    y = to_numpy(D.MultivariateNormal(loc, covariance_matrix=cov).sample((20000,)))
    assert np.all(np.abs(y.mean(0) - [1.0, -2.0]) < 0.05)
    np.testing.assert_allclose(np.cov(y.T), [[2.0, 0.6], [0.6, 0.5]], atol=0.08)
    oh = to_numpy(D.OneHotCategorical(probs=_t([0.1, 0.2, 0.7], device)).sample((20000,)))
    assert set(np.unique(oh)) <= {0.0, 1.0} and np.all(oh.sum(-1) == 1)
    assert np.all(np.abs(oh.mean(0) - [0.1, 0.2, 0.7]) < 0.015)
    mn = to_numpy(D.Multinomial(5, probs=_t([0.1, 0.2, 0.7], device)).sample((20000,)))
    assert mn.shape == (20000, 3) and np.all(mn.sum(-1) == 5)
    assert np.all(np.abs(mn.mean(0) - [0.5, 1.0, 3.5]) < 0.05)
    cauchy = to_numpy(D.Cauchy(_t(1.0, device), 2.0).sample((20000,)))
    assert abs(np.median(cauchy) - 1.0) < 0.1 and abs(np.percentile(cauchy, 75) - 3.0) < 0.15


def test_sample_shape_batch_event(device):
    loc = gputorch.zeros(4, 3, dtype=gputorch.float64, device=device)
    mvn = D.MultivariateNormal(loc, scale_tril=gputorch.eye(3, dtype=gputorch.float64, device=device))
    assert mvn.batch_shape == (4,) and mvn.event_shape == (3,)
    assert mvn.sample((5, 2)).shape == (5, 2, 4, 3)
    assert mvn.log_prob(mvn.sample((5,))).shape == (5, 4)
    ind = D.Independent(D.Normal(loc, 1.0), 1)
    assert ind.batch_shape == (4,) and ind.event_shape == (3,)
    assert ind.rsample((2,)).shape == (2, 4, 3) and ind.log_prob(ind.sample()).shape == (4,)
    cat = D.Categorical(logits=gputorch.zeros(4, 5, device=device))
    assert cat.sample((7,)).shape == (7, 4) and cat.sample().dtype is gputorch.int64
    assert cat.enumerate_support().shape == (5, 4)
    e = D.Normal(_t([0.0, 1.0], device), 1.0).expand((3, 2))
    assert e.batch_shape == (3, 2) and e.sample().shape == (3, 2)
    g = D.Gamma(_t([1.0], device), 2.0).expand((4,))
    assert g.batch_shape == (4,) and g.rsample().shape == (4,)
    b = D.Beta(_t([1.0, 2.0], device), 2.0).expand((3, 2))
    assert b.sample().shape == (3, 2)
    scalar_params = [D.Normal(0.0, 1.0), D.Gamma(2.0, 1.0), D.Beta(2.0, 1.0), D.Poisson(3.0), D.StudentT(3.0),
                     D.Chi2(2.0), D.Geometric(0.3), D.Exponential(1.0), D.Laplace(0.0, 1.0), D.Uniform(0.0, 1.0),
                     D.Cauchy(0.0, 1.0), D.HalfNormal(1.0), D.LogNormal(0.0, 1.0), D.Bernoulli(0.3)]
    for d in scalar_params:
        assert d.batch_shape == () and d.sample().shape == () and d.sample((3,)).shape == (3,), d


def test_reproducible_under_manual_seed(device):
    def draw():
        gputorch.manual_seed(123)
        c = _t([0.4, 2.5], device)
        return [to_numpy(d.sample((50,))) for d in (D.Normal(c, c), D.Gamma(c, c), D.Dirichlet(c),
                                                     D.Poisson(c), D.Categorical(probs=c), D.Beta(c, c))]
    for a, b in zip(draw(), draw()):
        np.testing.assert_array_equal(a, b)


def test_normal_rsample_gradient_is_exactly_eps(device):
    loc = _t([0.5, -1.0], device, requires_grad=True)
    scale = _t([2.0, 0.3], device, requires_grad=True)
    gputorch.manual_seed(7)
    x = D.Normal(loc, scale).rsample((3,))
    x.sum().backward()
    eps = (x.detach() - loc.detach()) / scale.detach()
    assert_close(loc.grad, np.full(2, 3.0), rtol=1e-14)
    assert_close(scale.grad, eps.sum(0), rtol=1e-12)
    # and the same draws as randn under the same seed
    gputorch.manual_seed(7)
    z = gputorch.randn(3, 2, dtype=gputorch.float64, device=device)
    assert_close(eps, z, rtol=1e-12, atol=1e-14)


def test_gamma_rsample_gradient_matches_torch_standard_gamma_grad(device):
    torch = pytest.importorskip("torch")
    conc = _t([0.3, 1.5, 8.0], device, requires_grad=True)
    rate = _t([2.0, 1.0, 0.5], device, requires_grad=True)
    x = D.Gamma(conc, rate).rsample((100,))
    x.sum().backward()
    xs = (x.detach() * rate.detach())
    expected = torch._standard_gamma_grad(torch.tensor(to_numpy(conc)).expand(100, 3),
                                          torch.tensor(to_numpy(xs))) / torch.tensor(to_numpy(rate))
    assert_close(conc.grad, expected.sum(0), rtol=2e-3)
    assert_close(rate.grad, (-x.detach() / rate.detach()).sum(0), rtol=1e-12)


def test_reparameterised_gradients_are_unbiased(device):
    # d/dtheta E[x] = d mean / d theta, estimated from 20k reparameterised draws
    gputorch.manual_seed(5)
    for build, grad_of_mean in (
            (lambda p: D.Gamma(p, 2.0), lambda a: 1 / 2.0),
            (lambda p: D.Beta(p, 3.0), lambda a: 3.0 / (a + 3.0) ** 2),
            (lambda p: D.Dirichlet(gputorch.stack([p, p * 0 + 2.0])), lambda a: 2.0 / (a + 2.0) ** 2),
            (lambda p: D.LogNormal(p, 0.5), lambda a: math.exp(a + 0.125)),
            (lambda p: D.Laplace(p, 0.5), lambda a: 1.0)):
        a = _t(1.3, device, requires_grad=True)
        x = build(a).rsample((20000,))
        (x[..., 0] if x.dim() == 2 else x).mean().backward()
        assert abs(a.grad.item() - grad_of_mean(1.3)) < 0.03 * abs(grad_of_mean(1.3)), build


def test_validation_errors(device):
    with pytest.raises(ValueError, match=r"Expected parameter scale \(Tensor of shape \(\)\) of distribution "
                                         r"Normal\(loc: 0.0, scale: -1.0\) to satisfy the constraint "
                                         r"GreaterThan\(lower_bound=0.0\), but found invalid values"):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError, match=r"Expected parameter low .* Uniform\(low: 1.0, high: 0.0\) to satisfy "
                                         r"the constraint LessThan\(upper_bound=0.0\)"):
        D.Uniform(1.0, 0.0)
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both"):
        D.Bernoulli(probs=0.3, logits=0.2)
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified"):
        D.Categorical()
    with pytest.raises(ValueError, match="`probs` parameter must be at least one-dimensional"):
        D.Categorical(probs=_t(0.5, device))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.MultivariateNormal(_t([0.0], device))
    with pytest.raises(ValueError, match="satisfy the constraint PositiveDefinite"):
        D.MultivariateNormal(_t([0.0, 0.0], device), covariance_matrix=_t([[1.0, 2.0], [2.0, 1.0]], device))
    with pytest.raises(ValueError, match="satisfy the constraint Simplex"):
        D.Categorical(probs=_t([-0.5, 1.5], device))
    n = D.Normal(_t([0.0, 1.0], device), 2.0)
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        n.log_prob([1.0])
    with pytest.raises(ValueError, match="Value is not broadcastable with batch_shape\\+event_shape"):
        n.log_prob(_t([1.0, 2.0, 3.0], device))
    with pytest.raises(ValueError, match="The right-most size of value must match event_shape"):
        D.Dirichlet(_t([1.0, 2.0], device)).log_prob(_t([0.2, 0.3, 0.5], device))
    with pytest.raises(ValueError, match=r"Expected value argument \(Tensor of shape \(\)\) to be within the "
                                         r"support \(GreaterThanEq\(lower_bound=0.0\)\) of the distribution "
                                         r"Gamma\(concentration: 1.0, rate: 1.0\)"):
        D.Gamma(1.0, 1.0).log_prob(_t(-1.0, device))
    # validation can be switched off per instance and by default
    assert D.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    D.Distribution.set_default_validate_args(False)
    try:
        assert D.Gamma(1.0, 1.0).log_prob(_t(-1.0, device)).item() == 1.0   # as torch: no check
        assert D.Normal(0.0, -1.0).scale.item() == -1.0
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)


def test_constraints_and_repr(device):
    c = D.constraints
    assert repr(c.positive) == "GreaterThan(lower_bound=0.0)"
    assert repr(c.unit_interval) == "Interval(lower_bound=0.0, upper_bound=1.0)"
    assert repr(c.real_vector) == "IndependentConstraint(Real(), 1)"
    assert repr(c.simplex) == "Simplex()" and repr(c.nonnegative_integer) == "IntegerGreaterThan(lower_bound=0)"
    x = _t([[0.2, 0.8], [0.5, 0.6]], device)
    assert to_numpy(c.simplex.check(x)).tolist() == [True, False]
    assert to_numpy(c.real_vector.check(_t([[1.0, float("nan")], [1.0, 2.0]], device))).tolist() == [False, True]
    tril = _t([[1.0, 0.0], [3.0, 2.0]], device)
    assert bool(c.lower_cholesky.check(tril)) and not bool(c.lower_cholesky.check(tril.mT))
    mats = _t([[[2.0, 1.0], [1.0, 2.0]], [[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]], device)
    assert to_numpy(c.positive_definite.check(mats)).tolist() == [True, False, False]
    assert to_numpy(c.positive_semidefinite.check(mats)).tolist() == [True, True, False]
    counts = _t([[1.0, 2.0, 0.0], [3.0, 2.0, 1.0], [-1.0, 2.0, 0.0]], device)
    assert to_numpy(c.multinomial(5).check(counts)).tolist() == [True, False, False]
    expected = "Normal(loc: gputorch.Size([2]), scale: gputorch.Size([2]))"
    assert repr(D.Normal(_t([0.0, 1.0], device), 2.0)) == expected
    assert repr(D.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert D.Normal(0.0, 1.0).has_rsample and not D.Bernoulli(0.3).has_rsample
    assert D.Uniform(0.0, 2.0).support.upper_bound.item() == 2.0


def test_vae_and_reinforce_loop(device):
    """A tiny VAE-style objective (Normal.rsample + KL to the prior) and a REINFORCE term
    (Categorical.log_prob), trained a few steps; the loss must go down."""
    gputorch.manual_seed(0)
    nn = gputorch.nn
    enc = nn.Linear(4, 4).to(device)           # -> (mu, log_sigma) of a 2-d latent
    dec = nn.Linear(2, 4).to(device)
    policy = nn.Linear(4, 3).to(device)
    params = list(enc.parameters()) + list(dec.parameters()) + list(policy.parameters())
    opt = gputorch.optim.Adam(params, lr=0.05)
    data = gputorch.randn(16, 4, device=device)
    prior = D.Normal(gputorch.zeros(16, 2, device=device), gputorch.ones(16, 2, device=device))
    losses = []
    for _ in range(8):
        h = enc(data)
        q = D.Normal(h[:, :2], h[:, 2:].exp())
        z = q.rsample()
        recon = ((dec(z) - data) ** 2).sum(-1)
        kl = D.kl_divergence(q, prior).sum(-1)
        pi = D.Categorical(logits=policy(data))
        action = pi.sample()
        reward = (action == 2).float()
        reinforce = -(pi.log_prob(action) * reward).mean()
        loss = (recon + kl).mean() + reinforce
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append((recon + kl).mean().item())
    assert all(p.grad is not None for p in params)
    assert np.mean(losses[-3:]) < losses[0]
