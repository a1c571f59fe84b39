"""lgamma, digamma, polygamma, mvlgamma (values against scipy.special and torch, poles, dtypes,
gradients) and the gamma / Dirichlet / Poisson samplers."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck
from gputorch.ops import gamma_functions as G
from tests._helpers import assert_close, to_numpy

sp = pytest.importorskip("scipy.special")

# a wide float64 range: small, near the roots of lgamma/digamma, large, negative non-integers
_RNG = np.random.default_rng(1)
_X = np.concatenate([
    _RNG.uniform(1e-6, 3, 300), _RNG.uniform(3, 30, 200), 10 ** _RNG.uniform(1, 250, 100),
    np.linspace(0.95, 1.05, 21), np.linspace(1.95, 2.05, 21), np.linspace(1.40, 1.52, 21),
    [1e-300, 5e-7, 0.5, 1.0, 2.0, 9.999, 10.0, 10.001],
])
_NEG = -_RNG.uniform(0.05, 40, 300)
_NEG = _NEG[np.abs(_NEG - np.round(_NEG)) > 0.02]


def _t(x, device, dtype=gputorch.float64, **kw):
    return gputorch.tensor(np.asarray(x), dtype=dtype, device=device, **kw)


def test_lgamma_digamma_match_scipy(device):
    x = _t(_X, device)
    assert_close(gputorch.lgamma(x), sp.gammaln(_X), rtol=1e-14, atol=1e-15)   # scipy: ~1e-16 absolute at roots
    assert_close(gputorch.digamma(x), sp.digamma(_X), rtol=2e-14, atol=1e-15)
    # negative non-integers: reflection; relative accuracy is limited only near the roots there
    xn = _t(_NEG, device)
    assert_close(gputorch.lgamma(xn), sp.gammaln(_NEG), rtol=1e-12, atol=1e-13)
    assert_close(gputorch.digamma(xn), sp.digamma(_NEG), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_polygamma_matches_scipy(n, device):
    x = _t(_X[_X < 1e30], device)
    assert_close(gputorch.polygamma(n, x), sp.polygamma(n, _X[_X < 1e30]), rtol=1e-13, atol=0)
    xn = _t(_NEG[_NEG > -20], device)
    assert_close(xn.polygamma(n), sp.polygamma(n, _NEG[_NEG > -20]), rtol=1e-11, atol=1e-12)


def test_values_match_torch_including_poles(device):
    torch = pytest.importorskip("torch")
    special = [0.0, -0.0, -1.0, -2.0, -7.0, np.inf, -np.inf, np.nan, 1e-310, -1e-310, 0.25, -2.5, 171.5]
    xs = np.array(special + list(_X[:50]) + list(_NEG[:50]))
    g, t = _t(xs, device), torch.tensor(xs, dtype=torch.float64)
    assert_close(gputorch.lgamma(g), torch.lgamma(t), rtol=1e-13, atol=1e-13)
    assert_close(gputorch.digamma(g), torch.digamma(t), rtol=1e-12, atol=1e-12)
    for n in (1, 2, 3):    # torch's own polygamma is good to about 1e-9 (ours to 1e-13, above)
        assert_close(gputorch.polygamma(n, g), torch.polygamma(n, t), rtol=2e-9, atol=1e-12)
    assert_close(gputorch.polygamma(0, g), torch.digamma(t), rtol=1e-12, atol=1e-12)


def test_dtypes_and_integer_promotion(device):
    torch = pytest.importorskip("torch")
    for dt, tdt, tol in ((gputorch.float32, torch.float32, 1e-6), (gputorch.float16, torch.float16, 1e-3)):
        xs = np.array([0.3, 1.5, 4.0, 12.5, -0.5, -2.3])
        g, t = gputorch.tensor(xs, dtype=dt, device=device), torch.tensor(xs, dtype=tdt)
        assert_close(g.lgamma(), t.lgamma(), rtol=tol, atol=tol)
        assert_close(g.digamma(), t.digamma(), rtol=tol, atol=tol)
        assert_close(g.polygamma(1), t.polygamma(1), rtol=tol, atol=tol)
    i = gputorch.tensor([1, 2, 5], device=device)
    assert gputorch.lgamma(i).dtype is gputorch.float32
    assert_close(gputorch.lgamma(i), torch.lgamma(torch.tensor([1, 2, 5])))
    assert_close(gputorch.mvlgamma(i + 2, 2), torch.mvlgamma(torch.tensor([3, 4, 7]), 2), rtol=1e-6)


def test_mvlgamma_and_inplace_and_out(device):
    torch = pytest.importorskip("torch")
    xs = np.array([[1.7, 3.2], [5.0, 8.25]])
    g, t = _t(xs, device), torch.tensor(xs)
    for p in (1, 3):
        assert_close(gputorch.mvlgamma(g, p), torch.mvlgamma(t, p), rtol=1e-13)
        assert_close(g.mvlgamma(p), torch.mvlgamma(t, p), rtol=1e-13)
    for name, args in (("lgamma_", ()), ("digamma_", ()), ("polygamma_", (2,)), ("mvlgamma_", (2,))):
        a, b = g.clone(), t.clone()
        assert getattr(a, name)(*args) is a
        getattr(b, name)(*args)
        assert_close(a, b, rtol=1e-12)
    out = gputorch.empty(2, 2, dtype=gputorch.float64, device=device)
    assert gputorch.lgamma(g, out=out) is out
    assert_close(out, torch.lgamma(t), rtol=1e-14)


def test_argument_errors(device):
    x = _t([1.0], device)
    with pytest.raises(RuntimeError, match="does not support negative n"):
        gputorch.polygamma(-1, x)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        gputorch.mvlgamma(x, 0)
    with pytest.raises(TypeError, match="must be Tensor"):
        gputorch.lgamma(1.0)


def test_gradients_match_torch(device):
    torch = pytest.importorskip("torch")
    xs = np.array([0.7, 2.0, 3.5, -1.3])
    x = _t(xs, device, requires_grad=True)
    tx = torch.tensor(xs, requires_grad=True)
    y = (gputorch.lgamma(x) * 1.5 + gputorch.digamma(x) * 2 + gputorch.polygamma(2, x)).sum()
    ty = (torch.lgamma(tx) * 1.5 + torch.digamma(tx) * 2 + torch.polygamma(2, tx)).sum()
    y.backward()
    ty.backward()
    assert_close(y, ty, rtol=1e-13)
    assert_close(x.grad, tx.grad, rtol=1e-8)    # torch's polygamma(3) is itself good to ~1e-9
    xm = _t([[2.5, 4.0]], device, requires_grad=True)
    txm = torch.tensor([[2.5, 4.0]], dtype=torch.float64, requires_grad=True)
    gputorch.mvlgamma(xm, 3).sum().backward()
    torch.mvlgamma(txm, 3).sum().backward()
    assert_close(xm.grad, txm.grad, rtol=1e-13)


def test_gradcheck(device):
    x = _t([0.6, 1.9, 4.2, -0.4], device, requires_grad=True)
    assert gradcheck(gputorch.lgamma, (x,))
    assert gradcheck(gputorch.digamma, (x,))
    assert gradcheck(lambda a: gputorch.polygamma(2, a), (x,))
    # second order: digamma's backward is itself differentiable
    assert gradcheck(lambda a: gputorch.autograd.grad(gputorch.lgamma(a).sum(), a, create_graph=True)[0], (x,))


# ---------------------------------------------------------------- samplers
def test_standard_gamma_statistics_and_reproducibility(device):
    alpha = _t([0.3, 1.0, 4.5, 50.0], device).expand(20000, 4).contiguous()
    gputorch.manual_seed(3)
    x = G._standard_gamma(alpha)
    gputorch.manual_seed(3)
    assert_close(G._standard_gamma(alpha), x, rtol=0, atol=0)
    a = np.array([0.3, 1.0, 4.5, 50.0])
    m, v = to_numpy(x).mean(0), to_numpy(x).var(0)
    se = np.sqrt(a / 20000)   # standard error of the mean (the variance is alpha)
    assert np.all(np.abs(m - a) < 5 * se)
    assert np.all(np.abs(v - a) < 0.1 * a)
    assert bool((x > 0).all()) and x.dtype is gputorch.float64


def test_standard_gamma_grad_is_implicit_reparameterisation(device):
    torch = pytest.importorskip("torch")
    a = np.array([0.05, 0.4, 1.0, 2.5, 20.0, 300.0])
    u = np.array([0.01, 0.3, 0.5, 0.7, 0.9, 0.99])
    x = sp.gammaincinv(a, u)
    got = to_numpy(G._standard_gamma_grad(_t(a, device), _t(x, device)))
    # exact: d x / d alpha at fixed u, by central differences of the inverse CDF
    h = 1e-6 * a
    fd = (sp.gammaincinv(a + h, u) - sp.gammaincinv(a - h, u)) / (2 * h)
    np.testing.assert_allclose(got, fd, rtol=1e-7)
    # torch's approximation agrees to its own accuracy
    ref = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, ref, rtol=2e-3)
    # and the sampler's backward uses it
    alpha = _t([2.0, 3.0], device, requires_grad=True)
    s = G._standard_gamma(alpha)
    s.sum().backward()
    assert_close(alpha.grad, G._standard_gamma_grad(alpha.detach(), s.detach()), rtol=1e-12)


def test_dirichlet_and_poisson_sampling(device):
    conc = _t([0.5, 2.0, 3.5], device)
    gputorch.manual_seed(0)
    d = G._sample_dirichlet(conc.expand(20000, 3))
    assert_close(d.sum(-1), np.ones(20000), rtol=1e-12)
    mean = to_numpy(conc) / 6.0
    assert np.all(np.abs(to_numpy(d).mean(0) - mean) < 0.01)
    rates = _t([0.0, 0.7, 6.0, 40.0, 2500.0], device)
    gputorch.manual_seed(1)
    k = gputorch.poisson(rates.expand(20000, 5))
    gputorch.manual_seed(1)
    assert_close(gputorch.poisson(rates.expand(20000, 5)), k, rtol=0, atol=0)
    kn = to_numpy(k)
    r = to_numpy(rates)
    assert np.all(kn == np.round(kn)) and kn.min() >= 0
    assert np.all(np.abs(kn.mean(0) - r) <= 5 * np.sqrt(np.maximum(r, 1e-3) / 20000))
    assert np.all(np.abs(kn.var(0) - r) <= 0.1 * r + 1e-3)
    with pytest.raises(RuntimeError, match="invalid Poisson rate"):
        gputorch.poisson(_t([-1.0], device))
    p = _t([3.0], device, requires_grad=True)
    gputorch.poisson(p).sum().backward()
    assert_close(p.grad, np.zeros(1))


def test_gammainc_values_and_gradients(device):
    torch = pytest.importorskip("torch")
    a = np.array([0.3, 1.0, 2.5, 20.0, 300.0, 1.0, 2.0, 0.5])
    x = np.array([0.1, 2.0, 0.5, 25.0, 280.0, 0.0, 900.0, 1e-5])
    got = G._gammainc(_t(a, device), _t(x, device))
    assert_close(got, sp.gammainc(a, x), rtol=1e-12, atol=1e-300)
    ga, gx = _t(a[:5], device, requires_grad=True), _t(x[:5], device, requires_grad=True)
    tx = torch.tensor(x[:5], requires_grad=True)
    G._gammainc(ga, gx).sum().backward()
    torch.special.gammainc(torch.tensor(a[:5]), tx).sum().backward()
    assert_close(gx.grad, tx.grad, rtol=1e-12)
    h = 1e-6
    fd = (sp.gammainc(a[:5] + h, x[:5]) - sp.gammainc(a[:5] - h, x[:5])) / (2 * h)
    np.testing.assert_allclose(to_numpy(ga.grad), fd, rtol=1e-7)
    # Gamma.cdf is built on it
    conc, rate = torch.tensor([0.7, 3.0], dtype=torch.float64), torch.tensor([1.5, 0.5], dtype=torch.float64)
    v = torch.tensor([0.4, 5.0], dtype=torch.float64)
    from gputorch.distributions import Gamma
    cdf = Gamma(_t([0.7, 3.0], device), _t([1.5, 0.5], device)).cdf(_t([0.4, 5.0], device))
    assert_close(cdf, torch.distributions.Gamma(conc, rate).cdf(v), rtol=1e-12)


def test_samplers_on_invalid_parameters_terminate(device):
    x = G._standard_gamma(_t([-1.0, np.inf, np.nan, 0.0, 2.0], device))
    v = to_numpy(x)
    assert np.isnan(v[:3]).all() and v[3] > 0 and v[4] > 0
    assert to_numpy(gputorch.poisson(_t([np.inf, 0.0], device))).tolist() == [np.inf, 0.0]


def test_zero_dim_inputs(device):
    torch = pytest.importorskip("torch")
    for v in (3.42, 1.42, -2.5, 3.4875e37):
        g, t = gputorch.tensor(v, device=device), torch.tensor(v)
        assert_close(g.lgamma(), t.lgamma(), rtol=1e-6)
        assert_close(g.digamma(), t.digamma(), rtol=1e-6)
        assert_close(g.clone().digamma_(), t.clone().digamma_(), rtol=1e-6)
        assert_close(g.polygamma(2), t.polygamma(2), rtol=1e-6)
    assert_close(G._gammainc(gputorch.tensor(2.0, device=device), 1.5), torch.special.gammainc(
        torch.tensor(2.0), torch.tensor(1.5)), rtol=1e-6)
