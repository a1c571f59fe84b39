"""gputorch.special and the special-function ops: values against scipy.special and torch over wide
ranges and at edge values (float64 to ~1e-14, float32 to a few ulps), gradients against torch,
gradcheck for the new primitives, dtype promotion, in-place and top-level forms."""
import math

import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck
from tests._helpers import assert_close

special = gputorch.special
NAN, INF = math.nan, math.inf

# a float64 grid over the interesting ranges of each function, edges included
WIDE = np.concatenate([[-INF, -700.0, -40.0, -26.0, -10.0, -5.0, -1.0, -1e-300, 0.0, 1e-300, 1e-8, 0.5, 1.0,
                        5.0, 17.9, 18.0, 18.1, 26.0, 40.0, 700.0, 713.0, INF, NAN],
                       np.linspace(-30, 30, 241)])
UNIT = np.concatenate([[0.0, 1e-300, 1e-100, 1e-20, 1e-10, 1e-5, 0.5, 1 - 1e-10, 1 - 2 ** -53, 1.0,
                        -0.1, 1.1, NAN], np.linspace(0.001, 0.999, 199)])

UNARY = [  # (name, grid, scipy name)
    ("ndtr", WIDE, "ndtr"), ("log_ndtr", WIDE, "log_ndtr"), ("erfcx", WIDE, "erfcx"),
    ("i0", WIDE, "i0"), ("i0e", WIDE, "i0e"), ("i1", WIDE, "i1"), ("i1e", WIDE, "i1e"),
    ("sinc", WIDE, "sinc"), ("entr", WIDE, "entr"), ("ndtri", UNIT, "ndtri"),
    ("logit", UNIT, "logit"), ("expit", WIDE, "expit"),
]


def _ours(name, x, device="cpu"):
    return getattr(special, name)(gputorch.tensor(x, device=device)).cpu().numpy()


@pytest.mark.parametrize("name, grid, ref", UNARY, ids=[u[0] for u in UNARY])
def test_float64_against_scipy(device, name, grid, ref):
    scipy_special = pytest.importorskip("scipy.special")
    with np.errstate(all="ignore"):
        expected = getattr(scipy_special, ref)(grid)
    np.testing.assert_allclose(_ours(name, grid, device), expected, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("name, grid, ref", UNARY, ids=[u[0] for u in UNARY])
def test_against_torch_float64_and_float32(name, grid, ref):
    torch = pytest.importorskip("torch")
    fn = getattr(torch.special, name)
    with np.errstate(all="ignore"):
        expected = fn(torch.tensor(grid)).numpy()
    ours = _ours(name, grid)
    if name == "ndtr":   # torch's (1 + erf) / 2 underflows below -8.3; ours keeps the tail (see docstring)
        np.testing.assert_allclose(ours, expected, rtol=1e-14, atol=1e-16)
    else:
        np.testing.assert_allclose(ours, expected, rtol=1e-13, atol=1e-300)
    x32 = grid.astype(np.float32)
    expected32 = fn(torch.tensor(x32)).numpy()
    ours32 = getattr(special, name)(gputorch.tensor(x32)).numpy()
    assert ours32.dtype == np.float32
    np.testing.assert_allclose(ours32, expected32, rtol=3e-6, atol=1e-6)


def test_ndtri_and_log_ndtr_tails():
    scipy_special = pytest.importorskip("scipy.special")
    p = np.array([1e-300, 1e-200, 1e-50, 1e-17, 2.5e-16, 1e-3, 0.25, 0.75, 0.999])
    np.testing.assert_allclose(_ours("ndtri", p), scipy_special.ndtri(p), rtol=1e-14)
    x = np.array([-1e5, -300.0, -37.0, -1.0001, -0.9999, 6.0, 10.0, 38.0])
    np.testing.assert_allclose(_ours("log_ndtr", x), scipy_special.log_ndtr(x), rtol=1e-14, atol=1e-300)
    # ndtri is the inverse of ndtr
    y = np.linspace(-37, 0.5, 76)
    np.testing.assert_allclose(_ours("ndtri", _ours("ndtr", y)), y, rtol=1e-12, atol=1e-13)


def test_logit_eps_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.array([-0.5, 0.0, 1e-9, 0.3, 0.999999999, 1.0, 1.5, NAN])
    for eps in (None, 1e-6, 0.25):
        for dt in ("float32", "float64"):
            ours = special.logit(gputorch.tensor(x, dtype=getattr(gputorch, dt)), eps).numpy()
            theirs = torch.special.logit(torch.tensor(x, dtype=getattr(torch, dt)), eps).numpy()
            np.testing.assert_allclose(ours, theirs, rtol=1e-6 if dt == "float32" else 1e-15)


def test_binary_functions_against_torch(device):
    torch = pytest.importorskip("torch")
    x = np.array([0.0, 0.0, 1.0, -2.0, 3.5, NAN, 2.0, 0.0])
    y = np.array([NAN, -1.0, -1.0, 0.5, 1e-10, 1.0, INF, 3.0])
    ours = special.xlog1py(gputorch.tensor(x, device=device), gputorch.tensor(y, device=device)).cpu().numpy()
    np.testing.assert_allclose(ours, torch.special.xlog1py(torch.tensor(x), torch.tensor(y)).numpy(), rtol=1e-15)
    s = np.array([1.0, 0.5, 1.5, 2.0, 2.0, 3.0, 2.5, 3.0, 7.0, 40.0, 1.0001, 2.0])
    q = np.array([1.0, 1.0, 0.3, -1.0, 0.0, -1.5, -1.5, 1e9, 2.5, 0.7, 1.0, 1e-3])
    ours = special.zeta(gputorch.tensor(s, device=device), gputorch.tensor(q, device=device)).cpu().numpy()
    np.testing.assert_allclose(ours, torch.special.zeta(torch.tensor(s), torch.tensor(q)).numpy(), rtol=1e-13)
    # numbers on either side, and broadcasting
    t = torch.tensor([0.5, 2.0])
    np.testing.assert_allclose(special.zeta(2.0, gputorch.tensor([0.5, 2.0])).numpy(),
                               torch.special.zeta(2.0, t).numpy(), rtol=1e-6)
    np.testing.assert_allclose(special.zeta(gputorch.tensor([[2.0], [3.0]]), 1.5).numpy(),
                               torch.special.zeta(torch.tensor([[2.0], [3.0]]), 1.5).numpy(), rtol=1e-6)
    np.testing.assert_allclose(special.xlog1py(2, gputorch.tensor([1.0, 3.0])).numpy(),
                               torch.special.xlog1py(2, torch.tensor([1.0, 3.0])).numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["sinc", "entr", "ndtr", "log_ndtr", "erfcx", "i0", "i0e", "i1", "i1e",
                                  "ndtri", "logit"])
def test_gradients_match_torch(name):
    torch = pytest.importorskip("torch")
    x = (np.array([0.02, 0.2, 0.5, 0.7, 0.97]) if name in ("ndtri", "logit", "entr")
         else np.array([-25.0, -3.0, -0.4, 0.0, 0.6, 2.5, 19.0, 30.0]))
    ours_in = gputorch.tensor(x, requires_grad=True)
    getattr(special, name)(ours_in).sum().backward()
    theirs_in = torch.tensor(x, requires_grad=True)
    getattr(torch.special, name)(theirs_in).sum().backward()
    np.testing.assert_allclose(ours_in.grad.numpy(), theirs_in.grad.numpy(), rtol=1e-12, atol=1e-300)


def test_gradients_at_edges_match_torch():
    torch = pytest.importorskip("torch")
    x = np.array([-0.5, 0.0, 0.2, 0.9, 1.0, 1.5])
    for eps in (None, 0.1):
        a = gputorch.tensor(x, requires_grad=True)
        special.logit(a, eps).sum().backward()
        b = torch.tensor(x, requires_grad=True)
        torch.special.logit(b, eps).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-14)
    xs, ys = np.array([0.0, 0.0, 2.0, -1.0]), np.array([0.5, -1.0, 3.0, 1.0])
    a, b = gputorch.tensor(xs, requires_grad=True), gputorch.tensor(ys, requires_grad=True)
    special.xlog1py(a, b).sum().backward()
    ta, tb = torch.tensor(xs, requires_grad=True), torch.tensor(ys, requires_grad=True)
    torch.special.xlog1py(ta, tb).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy())
    for y in (-1.0, -2.0, 0.5):    # a number for other, at and beyond log1p's pole
        a = gputorch.tensor([0.0, 1.0], requires_grad=True)
        special.xlog1py(a, y).sum().backward()
        ta = torch.tensor([0.0, 1.0], requires_grad=True)
        torch.special.xlog1py(ta, y).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())
    q = gputorch.tensor([0.5, 2.0], requires_grad=True)
    special.zeta(3.0, q).sum().backward()
    tq = torch.tensor([0.5, 2.0], requires_grad=True)
    torch.special.zeta(3.0, tq).sum().backward()
    np.testing.assert_allclose(q.grad.numpy(), tq.grad.numpy(), rtol=1e-5)
    with pytest.raises(NotImplementedError, match="zeta"):
        special.zeta(gputorch.tensor([2.0], requires_grad=True), 1.0).sum().backward()


def test_gradcheck_new_primitives(device):
    x = gputorch.tensor([-2.3, -0.7, 0.4, 1.3, 3.1], dtype=gputorch.float64, device=device, requires_grad=True)
    p = gputorch.tensor([0.1, 0.3, 0.55, 0.9], dtype=gputorch.float64, device=device, requires_grad=True)
    for name in ("sinc", "ndtr", "log_ndtr", "erfcx", "i0", "i0e", "i1", "i1e"):
        assert gradcheck(getattr(special, name), (x,)), name
    for name in ("entr", "ndtri", "logit"):
        assert gradcheck(getattr(special, name), (p,)), name
    assert gradcheck(lambda t: special.logit(t, 0.2), (p,))
    y = gputorch.tensor([0.5, 1.5, 2.0, 0.1], dtype=gputorch.float64, device=device, requires_grad=True)
    assert gradcheck(special.xlog1py, (p, y))
    assert gradcheck(lambda t: special.zeta(gputorch.tensor([2.5, 3.0, 4.0, 1.5], dtype=gputorch.float64,
                                                            device=device), t), (y,))


def test_dtypes_promotion_and_forms(device):
    ints = gputorch.tensor([1, 2, 3], device=device)
    for name in ("i0", "i1", "ndtr", "sinc", "logit", "erfcx", "entr"):
        assert getattr(special, name)(ints).dtype is gputorch.float32, name
    half = gputorch.tensor([0.25, 0.5], dtype=gputorch.float16, device=device)
    assert special.i0e(half).dtype is gputorch.float16
    assert special.xlog1py(ints, 2).dtype is gputorch.float32
    assert special.xlog1py(gputorch.tensor([1.0], dtype=gputorch.float64, device=device), 2).dtype is gputorch.float64
    # top level and Tensor methods where torch has them, with in-place variants
    x = gputorch.tensor([0.2, 0.6], device=device)
    for name in ("i0", "sinc", "logit"):
        top = getattr(gputorch, name)(x)
        np.testing.assert_array_equal(getattr(x, name)().cpu().numpy(), top.cpu().numpy())
        y = x.clone()
        assert getattr(y, name + "_")() is y
        np.testing.assert_array_equal(y.cpu().numpy(), top.cpu().numpy())
    out = gputorch.empty(2, device=device)
    assert special.ndtr(x, out=out) is out
    with pytest.raises(TypeError, match="at least one of 'self' and 'other' must be a Tensor"):
        special.xlog1py(1.0, 2.0)


def test_aliases_and_reexports(device):
    torch = pytest.importorskip("torch")
    x = np.array([0.3, 1.7, 4.2])
    g, t = gputorch.tensor(x, device=device), torch.tensor(x)
    pairs = [("expit", ()), ("gammaln", ()), ("psi", ()), ("digamma", ()), ("erf", ()), ("erfc", ()),
             ("exp2", ()), ("expm1", ()), ("log1p", ()), ("round", ()), ("multigammaln", (2,))]
    for name, extra in pairs:
        assert_close(getattr(special, name)(g, *extra), getattr(torch.special, name)(t, *extra).numpy(),
                     rtol=1e-13, atol=1e-14)
    assert_close(special.polygamma(2, g), torch.special.polygamma(2, t).numpy(), rtol=1e-12, atol=0)
    assert_close(special.xlogy(g, g), torch.special.xlogy(t, t).numpy(), rtol=1e-14, atol=0)
    assert_close(special.erfinv(g / 5), torch.special.erfinv(t / 5).numpy(), rtol=1e-13, atol=0)
    m = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, 1.0]])
    gm, tm = gputorch.tensor(m, device=device), torch.tensor(m)
    assert_close(special.logsumexp(gm, 1), torch.special.logsumexp(tm, 1).numpy(), rtol=1e-14, atol=0)
    assert_close(special.softmax(gm, 0), torch.special.softmax(tm, 0).numpy(), rtol=1e-14, atol=0)
    assert_close(special.log_softmax(gm, 1, dtype=gputorch.float32),
                 torch.special.log_softmax(tm, 1, dtype=torch.float32).numpy(), rtol=1e-6, atol=1e-7)


def test_incomplete_gamma_against_scipy_and_torch(device):
    torch = pytest.importorskip("torch")
    scipy_special = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(0)
    a = np.exp(rng.uniform(-5, math.log(2000), 300))
    x = a * np.exp(rng.uniform(-3, 3, 300))
    x[:40] = np.abs(a[:40] + rng.uniform(-1, 1, 40) * np.sqrt(a[:40]))   # the hard middle, x near a
    ga, gx = gputorch.tensor(a, device=device), gputorch.tensor(x, device=device)
    p = special.gammainc(ga, gx).cpu().numpy()
    q = special.gammaincc(ga, gx).cpu().numpy()
    np.testing.assert_allclose(p, scipy_special.gammainc(a, x), rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(q, scipy_special.gammaincc(a, x), rtol=1e-10, atol=1e-300)
    # torch itself is about 2e-9 from scipy here, so against torch only to that
    theirs = torch.special.gammainc(torch.tensor(a), torch.tensor(x)).numpy()
    np.testing.assert_allclose(p, theirs, rtol=1e-8, atol=1e-9)
    # edges, in PyTorch's order of precedence
    ea = np.array([0., 0., 0., -1., 1., 1., 2., 1., INF, 1., NAN, 0.5, NAN, -0., NAN, INF, 0.5, INF])
    ex = np.array([0., 1., INF, 1., -1., 0., INF, 1e-300, 1., INF, 1., 0., 0., 0., INF, INF, -0., NAN])
    for ours, theirs in ((special.gammainc, torch.special.gammainc), (special.gammaincc, torch.special.gammaincc)):
        got = ours(gputorch.tensor(ea, device=device), gputorch.tensor(ex, device=device)).cpu().numpy()
        np.testing.assert_allclose(got, theirs(torch.tensor(ea), torch.tensor(ex)).numpy(), rtol=1e-14, atol=1e-300)


def test_incomplete_gamma_forms_and_gradient(device):
    torch = pytest.importorskip("torch")
    a = gputorch.tensor([0.5, 2.0, 7.5], dtype=gputorch.float64, device=device)
    x = gputorch.tensor([0.3, 2.5, 6.0], dtype=gputorch.float64, device=device, requires_grad=True)
    assert gradcheck(lambda t: special.gammainc(a, t), (x,))
    assert gradcheck(lambda t: special.gammaincc(a, t), (x,))
    tx = torch.tensor([0.3, 2.5, 6.0], dtype=torch.float64, requires_grad=True)
    torch.special.gammaincc(torch.tensor([0.5, 2.0, 7.5], dtype=torch.float64), tx).sum().backward()
    special.gammaincc(a, x).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(gputorch.igamma(a, x.detach()).cpu().numpy(), a.igamma(x.detach()).cpu().numpy())
    b = a.clone()
    assert b.igammac_(x.detach()) is b
    np.testing.assert_allclose(b.cpu().numpy(), special.gammaincc(a, x.detach()).cpu().numpy())
    with pytest.raises(TypeError, match=r"igamma\(\): argument 'other' \(position 2\) must be Tensor, not float"):
        gputorch.igamma(a, 2.0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        gputorch.igamma(gputorch.tensor([1, 2], device=device), gputorch.tensor([1, 2], device=device))
    with pytest.raises(NotImplementedError, match="igamma"):
        special.gammainc(a.clone().requires_grad_(), x.detach()).sum().backward()


NO_GRAD = [("modified_bessel_i0", "i0"), ("modified_bessel_i1", "i1"), ("modified_bessel_k0", "k0"),
           ("modified_bessel_k1", "k1"), ("scaled_modified_bessel_k0", "k0e"), ("scaled_modified_bessel_k1", "k1e")]


@pytest.mark.parametrize("name, ref", NO_GRAD + [("spherical_bessel_j0", None)], ids=[n for n, _ in NO_GRAD] + ["j0"])
def test_no_grad_bessel_functions(device, name, ref):
    torch = pytest.importorskip("torch")
    scipy_special = pytest.importorskip("scipy.special")
    x = np.concatenate([[-3.0, 0.0, 1e-300, 1e-10, 2.0, 17.9, 18.0, 18.1, 700.0, 800.0, INF, NAN],
                        np.linspace(0.01, 40, 200)])
    ours_t = getattr(special, name)(gputorch.tensor(x, device=device, requires_grad=True))
    assert not ours_t.requires_grad and ours_t.grad_fn is None       # no gradient, as in torch
    ours = ours_t.detach().cpu().numpy()
    np.testing.assert_allclose(ours, getattr(torch.special, name)(torch.tensor(x)).numpy(), rtol=1e-14, atol=1e-300)
    with np.errstate(all="ignore"):
        expected = (getattr(scipy_special, ref)(x) if ref else scipy_special.spherical_jn(0, x))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(ours[finite], expected[finite], rtol=1e-14, atol=1e-300)
    assert getattr(special, name)(gputorch.tensor([1, 2], device=device)).dtype is gputorch.float32


POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
               "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_match_torch(device, name):
    torch = pytest.importorskip("torch")
    x = np.array([-1.5, -1.0, -0.3, 0.0, 0.2, 0.7, 0.999, 1.0, 2.0])
    n = np.array([[-1], [0], [1], [2], [3], [7], [12], [25]])
    ours = getattr(special, name)(gputorch.tensor(x, device=device), gputorch.tensor(n, device=device))
    assert ours.grad_fn is None
    theirs = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n)).numpy()
    scale = np.maximum(1.0, np.abs(theirs))
    np.testing.assert_array_less(np.abs(ours.cpu().numpy() - theirs) / scale, 1e-12)
    # a number on either side, a fractional degree (truncated), integer input -> default float dtype
    for args in ((gputorch.tensor(x, device=device), 3.7), (0.4, gputorch.tensor([2, 5], device=device))):
        targs = tuple(torch.tensor(a.cpu().numpy()) if isinstance(a, gputorch.Tensor) else a for a in args)
        np.testing.assert_allclose(getattr(special, name)(*args).cpu().numpy(),
                                   getattr(torch.special, name)(*targs).numpy(), rtol=1e-6, atol=1e-6)
    assert getattr(special, name)(gputorch.tensor([1, 2], device=device), 3).dtype is gputorch.float32
