"""Every distribution against torch.distributions with the same float64 parameters: log_prob,
entropy, mean, variance, stddev, mode, cdf/icdf, and the gradients of their sum with respect to
the parameters."""
import numpy as np
import pytest

import gputorch
from tests._helpers import assert_close

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
_POS = R.uniform(0.5, 3.0, (2, 3))
_POS2 = R.uniform(0.5, 3.0, (2, 3))
_REAL = R.normal(size=(2, 3))
_PROBS = R.uniform(0.1, 0.9, (2, 3))
_SIMPLEX = R.uniform(0.2, 1.0, (2, 4))
_A = R.normal(size=(2, 3, 3))
_COV = _A @ np.swapaxes(_A, -1, -2) + 3 * np.eye(3)
_TRIL = np.linalg.cholesky(_COV)

# name: (params {name: array}, build(lib, params) -> distribution, value array, methods)
CASES = {
    "Normal": ({"loc": _REAL, "scale": _POS}, lambda D, p: D.Normal(p["loc"], p["scale"]),
               R.normal(size=(2, 3)), ("entropy", "mean", "variance", "stddev", "mode", "cdf", "icdf")),
    "Laplace": ({"loc": _REAL, "scale": _POS}, lambda D, p: D.Laplace(p["loc"], p["scale"]),
                R.normal(size=(2, 3)), ("entropy", "mean", "variance", "stddev", "cdf", "icdf")),
    "Exponential": ({"rate": _POS}, lambda D, p: D.Exponential(p["rate"]), R.uniform(0, 2, (2, 3)),
                    ("entropy", "mean", "variance", "stddev", "cdf", "icdf")),
    "Uniform": ({"low": _REAL, "high": _REAL + _POS}, lambda D, p: D.Uniform(p["low"], p["high"]),
                _REAL + 0.4 * _POS, ("entropy", "mean", "variance", "stddev", "cdf", "icdf")),
    "Gamma": ({"concentration": _POS, "rate": _POS2}, lambda D, p: D.Gamma(p["concentration"], p["rate"]),
              R.uniform(0.1, 3, (2, 3)), ("entropy", "mean", "variance", "mode")),
    "Beta": ({"a": _POS, "b": _POS2}, lambda D, p: D.Beta(p["a"], p["b"]), R.uniform(0.05, 0.95, (2, 3)),
             ("entropy", "mean", "variance")),
    "Dirichlet": ({"c": _SIMPLEX * 3}, lambda D, p: D.Dirichlet(p["c"]),
                  _SIMPLEX / _SIMPLEX.sum(-1, keepdims=True), ("entropy", "mean", "variance")),
    "LogNormal": ({"loc": _REAL, "scale": _POS}, lambda D, p: D.LogNormal(p["loc"], p["scale"]),
                  R.uniform(0.1, 3, (2, 3)), ("entropy", "mean", "variance", "mode", "cdf", "icdf")),
    "Poisson": ({"rate": _POS * 3}, lambda D, p: D.Poisson(p["rate"]), R.integers(0, 8, (2, 3)).astype(float),
                ("mean", "variance", "mode")),
    "Bernoulli_probs": ({"probs": _PROBS}, lambda D, p: D.Bernoulli(probs=p["probs"]),
                        R.integers(0, 2, (2, 3)).astype(float), ("entropy", "mean", "variance")),
    "Bernoulli_logits": ({"logits": _REAL}, lambda D, p: D.Bernoulli(logits=p["logits"]),
                         R.integers(0, 2, (2, 3)).astype(float), ("entropy", "mean", "variance", "mode")),
    "Binomial": ({"probs": _PROBS}, lambda D, p: D.Binomial(7, probs=p["probs"]),
                 R.integers(0, 8, (2, 3)).astype(float), ("entropy", "mean", "variance", "mode")),
    "Categorical_probs": ({"probs": _SIMPLEX}, lambda D, p: D.Categorical(probs=p["probs"]),
                          np.array([[0, 3], [2, 1]]), ("entropy", "mode")),
    "Categorical_logits": ({"logits": R.normal(size=(2, 4))}, lambda D, p: D.Categorical(logits=p["logits"]),
                           np.array([1, 3]), ("entropy", "mode")),
    "OneHotCategorical": ({"logits": R.normal(size=(2, 4))},
                          lambda D, p: D.OneHotCategorical(logits=p["logits"]),
                          np.eye(4)[[2, 0]], ("entropy", "mean", "variance", "mode")),
    "StudentT": ({"df": _POS * 2, "loc": _REAL, "scale": _POS2},
                 lambda D, p: D.StudentT(p["df"], p["loc"], p["scale"]), R.normal(size=(2, 3)),
                 ("entropy", "mean", "variance", "mode")),
    "Cauchy": ({"loc": _REAL, "scale": _POS}, lambda D, p: D.Cauchy(p["loc"], p["scale"]),
               R.normal(size=(2, 3)), ("entropy", "mode", "cdf", "icdf")),
    "HalfNormal": ({"scale": _POS}, lambda D, p: D.HalfNormal(p["scale"]), R.uniform(0, 3, (2, 3)),
                   ("entropy", "mean", "variance", "cdf", "icdf")),
    "Chi2": ({"df": _POS * 2}, lambda D, p: D.Chi2(p["df"]), R.uniform(0.1, 4, (2, 3)),
             ("entropy", "mean", "variance")),
    "Geometric": ({"probs": _PROBS}, lambda D, p: D.Geometric(probs=p["probs"]),
                  R.integers(0, 6, (2, 3)).astype(float), ("entropy", "mean", "variance")),
    "Multinomial": ({"logits": R.normal(size=(2, 4))}, lambda D, p: D.Multinomial(5, logits=p["logits"]),
                    np.array([[1.0, 0, 3, 1], [0, 0, 5, 0]]), ("entropy", "mean", "variance")),
    "Independent": ({"loc": _REAL, "scale": _POS}, lambda D, p: D.Independent(D.Normal(p["loc"], p["scale"]), 1),
                    R.normal(size=(2, 3)), ("entropy", "mean", "variance")),
    "MVN_cov": ({"loc": _REAL, "cov": _COV}, lambda D, p: D.MultivariateNormal(p["loc"], covariance_matrix=p["cov"]),
                R.normal(size=(4, 2, 3)), ("entropy", "mean", "variance")),
    "MVN_tril": ({"loc": _REAL[0], "tril": _TRIL}, lambda D, p: D.MultivariateNormal(p["loc"], scale_tril=p["tril"]),
                 R.normal(size=(2, 3)), ("entropy", "mean", "variance")),
    "MVN_prec": ({"loc": _REAL, "prec": _COV}, lambda D, p: D.MultivariateNormal(p["loc"], precision_matrix=p["prec"]),
                 R.normal(size=(2, 3)), ("entropy", "variance")),
}


_TRIGAMMA_GRADS = {"Gamma", "Beta", "Dirichlet", "StudentT", "Chi2"}


def _params(lib, params, device=None):
    if lib is torch:
        return {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in params.items()}
    return {k: gputorch.tensor(v, dtype=gputorch.float64, device=device, requires_grad=True)
            for k, v in params.items()}


def _value(lib, v, device=None):
    dt = torch.int64 if lib is torch else gputorch.int64
    if v.dtype.kind == "i":
        return torch.tensor(v, dtype=dt) if lib is torch else gputorch.tensor(v, dtype=dt, device=device)
    if lib is torch:
        return torch.tensor(v, dtype=torch.float64)
    return gputorch.tensor(v, dtype=gputorch.float64, device=device)


def _outputs(dist, value, methods, lib):
    out = {"log_prob": dist.log_prob(value)}
    for m in methods:
        if m in ("cdf",):
            out[m] = dist.cdf(value)
        elif m == "icdf":
            q = lib.tensor(np.full(tuple(dist.batch_shape), 0.3), dtype=lib.float64)
            if lib is gputorch:
                q = q.to(value.device)
            out[m] = dist.icdf(q)
        elif m == "entropy":
            out[m] = dist.entropy()
        else:
            out[m] = getattr(dist, m)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name, device):
    params, build, value, methods = CASES[name]
    tp, gp = _params(torch, params), _params(gputorch, params, device)
    td, gd = build(torch.distributions, tp), build(gputorch.distributions, gp)
    assert tuple(gd.batch_shape) == tuple(td.batch_shape)
    assert tuple(gd.event_shape) == tuple(td.event_shape)
    tv, gv = _value(torch, value), _value(gputorch, value, device)
    t_out, g_out = _outputs(td, tv, methods, torch), _outputs(gd, gv, methods, gputorch)
    weights = np.random.default_rng(1)
    t_total, g_total = 0, 0
    for key in t_out:
        assert_close(g_out[key], t_out[key], rtol=1e-10, atol=1e-12, check_dtype=False)
        if t_out[key].dtype.is_floating_point and t_out[key].requires_grad:
            w = weights.uniform(0.5, 1.5, tuple(t_out[key].shape))
            t_total = t_total + (t_out[key] * torch.tensor(w)).nan_to_num(0.0, 0.0, 0.0).sum()
            g_total = g_total + (g_out[key] * gputorch.tensor(w, device=device)).nan_to_num(0.0, 0.0, 0.0).sum()
    t_total.backward()
    g_total.backward()
    # torch's trigamma (the derivative of digamma) is good to about 1e-9 relative; ours to 1e-13
    rtol = 1e-7 if name in _TRIGAMMA_GRADS else 1e-9
    for k in params:
        assert_close(gp[k].grad, tp[k].grad, rtol=rtol, atol=1e-11)


KL_PAIRS = {
    "Normal": lambda D, a, b, c, d: (D.Normal(a, b), D.Normal(c, d)),
    "Laplace": lambda D, a, b, c, d: (D.Laplace(a, b), D.Laplace(c, d)),
    "Exponential": lambda D, a, b, c, d: (D.Exponential(b), D.Exponential(d)),
    "Gamma": lambda D, a, b, c, d: (D.Gamma(b, d), D.Gamma(d, b)),
    "Beta": lambda D, a, b, c, d: (D.Beta(b, d), D.Beta(d + 0.5, b)),
    "Dirichlet": lambda D, a, b, c, d: (D.Dirichlet(b), D.Dirichlet(d)),
    "Uniform": lambda D, a, b, c, d: (D.Uniform(a, a + b), D.Uniform(a - 0.5, a + b + d)),
    "Poisson": lambda D, a, b, c, d: (D.Poisson(b), D.Poisson(d)),
    "Bernoulli": lambda D, a, b, c, d: (D.Bernoulli(logits=a), D.Bernoulli(logits=c)),
    "Categorical": lambda D, a, b, c, d: (D.Categorical(logits=a), D.Categorical(probs=d)),
    "OneHotCategorical": lambda D, a, b, c, d: (D.OneHotCategorical(logits=a), D.OneHotCategorical(logits=c)),
    "Binomial": lambda D, a, b, c, d: (D.Binomial(5, logits=a), D.Binomial(5, logits=c)),
    "Geometric": lambda D, a, b, c, d: (D.Geometric(logits=a), D.Geometric(logits=c)),
    "HalfNormal": lambda D, a, b, c, d: (D.HalfNormal(b), D.HalfNormal(d)),
    "Chi2": lambda D, a, b, c, d: (D.Chi2(b), D.Chi2(d)),
    "Independent": lambda D, a, b, c, d: (D.Independent(D.Normal(a, b), 1), D.Independent(D.Normal(c, d), 1)),
    "LogNormal": lambda D, a, b, c, d: (D.LogNormal(a, b), D.LogNormal(c, d)),
    "MVN": lambda D, a, b, c, d: (D.MultivariateNormal(a, scale_tril=b.diag_embed() + a.tril(-1).unsqueeze(-1) * 0),
                                  D.MultivariateNormal(c, covariance_matrix=(d.unsqueeze(-1) * d.unsqueeze(-2))
                                                       + 2 * b.diag_embed())),
}


@pytest.mark.parametrize("name", sorted(KL_PAIRS))
def test_kl_divergence_matches_torch(name, device):
    vals = [R.normal(size=(2, 3)), R.uniform(0.5, 2, (2, 3)), R.normal(size=(2, 3)), R.uniform(0.5, 2, (2, 3))]
    tp = [torch.tensor(v, requires_grad=True) for v in vals]
    gp = [gputorch.tensor(v, device=device, requires_grad=True) for v in vals]
    tk = torch.distributions.kl_divergence(*KL_PAIRS[name](torch.distributions, *tp))
    gk = gputorch.distributions.kl_divergence(*KL_PAIRS[name](gputorch.distributions, *gp))
    assert_close(gk, tk, rtol=1e-10, atol=1e-12, check_dtype=False)
    w = np.random.default_rng(2).uniform(0.5, 1.5, tuple(tk.shape))
    (tk * torch.tensor(w)).sum().backward()
    (gk * gputorch.tensor(w, device=device)).sum().backward()
    for g, t in zip(gp, tp):
        if t.grad is None:
            assert g.grad is None or not bool(g.grad.abs().sum() > 0)
        else:
            assert_close(g.grad, t.grad, rtol=1e-7 if name in _TRIGAMMA_GRADS else 1e-9, atol=1e-11)


def test_kl_infinite_cases_and_registry(device):
    D = gputorch.distributions
    p = D.Uniform(gputorch.tensor([0.0, 0.0], device=device), gputorch.tensor([1.0, 1.0], device=device))
    q = D.Uniform(gputorch.tensor([0.5, -1.0], device=device), gputorch.tensor([2.0, 2.0], device=device))
    k = D.kl_divergence(p, q)
    assert np.isinf(k[0].item()) and abs(k[1].item() - np.log(3.0)) < 1e-6
    c = D.Categorical(probs=gputorch.tensor([0.5, 0.5, 0.0], device=device))
    c0 = D.Categorical(probs=gputorch.tensor([0.5, 0.0, 0.5], device=device))
    assert np.isinf(D.kl_divergence(c, c0).item())
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Normal"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Gamma(1.0, 1.0))

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Gamma)
    def _kl(p, q):
        return p.loc * 0 + 7.0
    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Gamma(1.0, 1.0)).item() == 7.0
    # subclasses dispatch to the most specific registered pair
    assert abs(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() - 0.5) < 1e-6
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        D.register_kl(int, D.Normal)
