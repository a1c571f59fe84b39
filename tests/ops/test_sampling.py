"""Random sampling ops: factories, normal/bernoulli/multinomial and the in-place fills."""
import numpy as np
import pytest

import gputorch
from tests._helpers import to_numpy


def _torch():
    return pytest.importorskip("torch")


def _gen(device, seed=0):
    dev = gputorch.device(device)
    return gputorch.Generator(dev).manual_seed(seed)


# ---------------------------------------------------------------- rand / randn
@pytest.mark.parametrize("fn", ["rand", "randn"])
def test_rand_randn_shapes_dtypes(fn, device):
    f = getattr(gputorch, fn)
    for t in (f(2, 3, device=device), f((2, 3), device=device), f([2, 3], device=device),
              f(size=(2, 3), device=device)):
        assert t.shape == (2, 3) and t.dtype is gputorch.float32 and t.device.type == device
    assert f((), device=device).shape == ()
    assert f(0, device=device).shape == (0,)
    for dt in (gputorch.float16, gputorch.float64):
        assert f(4, dtype=dt, device=device).dtype is dt
    t = f(3, requires_grad=True, device=device)
    assert t.requires_grad and t.is_leaf


def test_rand_randn_dtype_errors(device):
    with pytest.raises(NotImplementedError, match="check_uniform_bounds.*Long"):
        gputorch.rand(2, dtype=gputorch.int64, device=device)
    with pytest.raises(NotImplementedError, match="normal_kernel_cpu.*Int"):
        gputorch.randn(2, dtype=gputorch.int32, device=device)
    with pytest.raises(RuntimeError, match="negative dimension"):
        gputorch.rand(-1, device=device)


def test_rand_randn_statistics(device):
    gen = _gen(device, 5)
    u = to_numpy(gputorch.rand(20000, generator=gen, device=device)).astype(np.float64)
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    z = to_numpy(gputorch.randn(20000, generator=gen, dtype=gputorch.float64, device=device))
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03
    h = to_numpy(gputorch.rand(5000, dtype=gputorch.float16, generator=gen, device=device))
    assert h.max() < 1 and h.min() >= 0


def test_generator_reproducibility(device):
    a = gputorch.randn(2, 3, generator=_gen(device, 3), device=device)
    b = gputorch.randn(2, 3, generator=_gen(device, 3), device=device)
    c = gputorch.randn(2, 3, generator=_gen(device, 4), device=device)
    assert a.tolist() == b.tolist() and a.tolist() != c.tolist()


def test_default_device_context_for_random(device):
    with gputorch.device(device):
        assert gputorch.rand(2).device.type == device
        assert gputorch.randint(3, (2,)).device.type == device


# ---------------------------------------------------------------- randint / randperm
def test_randint_forms(device):
    g = _gen(device)
    a = gputorch.randint(10, (1000,), generator=g, device=device)
    assert a.dtype is gputorch.int64 and a.shape == (1000,)
    v = to_numpy(a)
    assert v.min() == 0 and v.max() == 9
    b = to_numpy(gputorch.randint(-3, 3, (2, 500), generator=g, device=device))
    assert b.shape == (2, 500) and b.min() == -3 and b.max() == 2
    c = gputorch.randint(low=2, high=4, size=(50,), device=device)
    assert set(c.tolist()) == {2, 3}
    d = gputorch.randint(5, size=(3,), dtype=gputorch.float32, device=device)
    assert d.dtype is gputorch.float32 and all(x == int(x) for x in d.tolist())
    assert gputorch.randint(2, (6,), dtype=gputorch.bool, device=device).dtype is gputorch.bool
    assert gputorch.randint(0, 256, (4,), dtype=gputorch.uint8, device=device).dtype is gputorch.uint8


def test_randint_errors(device):
    with pytest.raises(RuntimeError, match="from=5 >= to=2"):
        gputorch.randint(5, 2, (3,), device=device)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for unsigned char"):
        gputorch.randint(0, 300, (3,), dtype=gputorch.uint8, device=device)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for bool"):
        gputorch.randint(3, (2,), dtype=gputorch.bool, device=device)
    with pytest.raises(RuntimeError, match="from is out of bounds for unsigned char"):
        gputorch.randint(-1, 3, (2,), dtype=gputorch.uint8, device=device)
    with pytest.raises(TypeError, match="size"):
        gputorch.randint(5, device=device)
    with pytest.raises(TypeError, match="tuple of ints"):
        gputorch.randint(0, 5, 3, device=device)


def test_randperm(device):
    p = gputorch.randperm(100, generator=_gen(device), device=device)
    assert p.dtype is gputorch.int64 and sorted(p.tolist()) == list(range(100))
    assert p.tolist() != list(range(100))
    assert gputorch.randperm(0, device=device).shape == (0,)
    f = gputorch.randperm(5, dtype=gputorch.float64, device=device)
    assert f.dtype is gputorch.float64 and sorted(f.tolist()) == [0.0, 1.0, 2.0, 3.0, 4.0]
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        gputorch.randperm(-1, device=device)
    with pytest.raises(RuntimeError, match="too large"):
        gputorch.randperm(300, dtype=gputorch.uint8, device=device)


def test_like_variants(device):
    x = gputorch.zeros(2, 3, dtype=gputorch.float64, device=device)
    for fn in (gputorch.rand_like, gputorch.randn_like):
        y = fn(x)
        assert y.shape == (2, 3) and y.dtype is gputorch.float64 and y.device == x.device
    assert gputorch.rand_like(x, dtype=gputorch.float32).dtype is gputorch.float32
    r = gputorch.randint_like(x, 10)
    assert r.dtype is gputorch.float64 and 0 <= to_numpy(r).min() and to_numpy(r).max() < 10
    r = gputorch.randint_like(gputorch.zeros(100, dtype=gputorch.int32, device=device), 3, 6)
    assert r.dtype is gputorch.int32 and set(r.tolist()) <= {3, 4, 5}
    with pytest.raises(NotImplementedError, match="Long"):
        gputorch.rand_like(gputorch.zeros(2, dtype=gputorch.int64, device=device))
    a = gputorch.rand_like(x, generator=_gen(device, 1))
    b = gputorch.rand_like(x, generator=_gen(device, 1))
    assert a.tolist() == b.tolist()


# ---------------------------------------------------------------- normal
def test_normal_overloads(device):
    torch = _torch()
    t = gputorch.normal(2.0, 3.0, (2, 3), device=device)
    assert t.shape == (2, 3) and t.dtype is gputorch.float32
    assert gputorch.normal(0.0, 1.0, size=(2,), dtype=gputorch.float64, device=device).dtype is gputorch.float64
    mean = gputorch.zeros(3, device=device)
    cases = [
        (gputorch.normal(mean, 1.0), torch.normal(torch.zeros(3), 1.0)),
        (gputorch.normal(mean, gputorch.ones(2, 3, device=device)), torch.normal(torch.zeros(3), torch.ones(2, 3))),
        (gputorch.normal(0.0, gputorch.ones(3, dtype=gputorch.float64, device=device)),
         torch.normal(0.0, torch.ones(3, dtype=torch.float64))),
        (gputorch.normal(mean), torch.normal(torch.zeros(3))),
    ]
    for ours, theirs in cases:
        assert ours.shape == tuple(theirs.shape) and ours.dtype.name == str(theirs.dtype).split(".")[1]


def test_normal_statistics(device):
    g = _gen(device, 2)
    mean = gputorch.full((20000,), 3.0, dtype=gputorch.float64, device=device)
    x = to_numpy(gputorch.normal(mean, 2.0, generator=g))
    assert abs(x.mean() - 3) < 0.06 and abs(x.std() - 2) < 0.05
    y = to_numpy(gputorch.normal(-1.0, 0.5, (20000,), generator=g, device=device))
    assert abs(y.mean() + 1) < 0.02 and abs(y.std() - 0.5) < 0.02
    std = gputorch.tensor([0.0, 1.0], device=device).expand(10000, 2)
    z = to_numpy(gputorch.normal(5.0, std, generator=g))
    assert (z[:, 0] == 5).all() and abs(z[:, 1].std() - 1) < 0.05


def test_normal_gradient_is_zero(device):
    torch = _torch()
    m = gputorch.ones(3, dtype=gputorch.float64, device=device, requires_grad=True)
    s = gputorch.ones(3, dtype=gputorch.float64, device=device, requires_grad=True)
    for out, name in ((gputorch.normal(m * 2, 1.0), "NormalBackward1"),
                      (gputorch.normal(0.0, s * 2), "NormalBackward2"),
                      (gputorch.normal(m * 2, s * 3), "NormalBackward3")):
        assert type(out.grad_fn).__name__ == name
    out.sum().backward()
    assert m.grad.tolist() == [0.0] * 3 and s.grad.tolist() == [0.0] * 3
    tm = torch.ones(3, requires_grad=True)
    assert type(torch.normal(tm * 2, 1.0).grad_fn).__name__ == "NormalBackward1"


def test_normal_errors(device):
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        gputorch.normal(gputorch.zeros(3, device=device), -1.0)
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        gputorch.normal(0.0, gputorch.tensor([1.0, -1.0], device=device))
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        gputorch.normal(0.0, -2.0, (2,), device=device)
    with pytest.raises(NotImplementedError, match="Long"):
        gputorch.normal(gputorch.zeros(3, dtype=gputorch.int64, device=device), 1.0)
    with pytest.raises(TypeError, match="size"):
        gputorch.normal(1.0, 2.0)
    with pytest.raises(RuntimeError, match="broadcast"):
        gputorch.normal(gputorch.zeros(3, device=device), gputorch.ones(4, device=device))


# ---------------------------------------------------------------- bernoulli / multinomial
def test_bernoulli(device):
    p = gputorch.tensor([0.0, 1.0, 0.3], dtype=gputorch.float64, device=device).repeat(4000)
    g = _gen(device, 1)
    s = gputorch.bernoulli(p, generator=g)
    assert s.dtype is gputorch.float64 and s.shape == p.shape
    v = to_numpy(s).reshape(-1, 3)
    assert set(np.unique(v)) <= {0.0, 1.0}
    assert (v[:, 0] == 0).all() and (v[:, 1] == 1).all() and abs(v[:, 2].mean() - 0.3) < 0.03
    q = gputorch.bernoulli(gputorch.zeros(4000, device=device), 0.25, generator=g)
    assert q.dtype is gputorch.float32 and abs(to_numpy(q).mean() - 0.25) < 0.03
    assert p.bernoulli(generator=g).shape == p.shape


def test_bernoulli_grad_and_errors(device):
    x = gputorch.full((3,), 0.5, device=device, requires_grad=True)
    y = gputorch.bernoulli(x * 1)
    assert type(y.grad_fn).__name__ == "BernoulliBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [0.0] * 3
    with pytest.raises(RuntimeError, match="p_in >= 0 && p_in <= 1"):
        gputorch.bernoulli(gputorch.tensor([0.2, 1.5], device=device))
    with pytest.raises(NotImplementedError, match="Long"):
        gputorch.bernoulli(gputorch.tensor([0, 1], device=device))


def test_multinomial_with_replacement(device):
    probs = gputorch.tensor([0.1, 0.0, 0.6, 0.3], device=device)
    s = gputorch.multinomial(probs, 20000, replacement=True, generator=_gen(device, 3))
    assert s.dtype is gputorch.int64 and s.shape == (20000,)
    counts = np.bincount(to_numpy(s), minlength=4)
    assert counts[1] == 0
    np.testing.assert_allclose(counts / 20000, [0.1, 0.0, 0.6, 0.3], atol=0.015)
    rows = gputorch.tensor([[1.0, 0.0], [0.0, 5.0], [1.0, 1.0]], device=device)
    r = to_numpy(gputorch.multinomial(rows, 100, True))
    assert r.shape == (3, 100) and (r[0] == 0).all() and (r[1] == 1).all()
    assert 20 < r[2].sum() < 80


def test_multinomial_without_replacement(device):
    g = _gen(device, 9)
    weights = gputorch.tensor([1.0, 2.0, 0.0, 3.0, 4.0], dtype=gputorch.float64, device=device)
    first = []
    for _ in range(400):
        s = gputorch.multinomial(weights, 4, generator=g).tolist()
        assert len(set(s)) == 4 and 2 not in s
        first.append(s[0])
    freq = np.bincount(first, minlength=5) / 400
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.0, 0.3, 0.4], atol=0.08)
    all5 = gputorch.multinomial(weights, 5, generator=g).tolist()
    assert sorted(all5) == [0, 1, 2, 3, 4] and all5[-1] == 2   # zero weight comes last
    two_d = gputorch.multinomial(gputorch.ones(3, 6, device=device), 6, generator=g)
    assert two_d.shape == (3, 6) and all(sorted(r) == list(range(6)) for r in two_d.tolist())
    assert gputorch.ones(4, device=device).multinomial(2).shape == (2,)


def test_multinomial_errors(device):
    with pytest.raises(RuntimeError, match="n_sample > prob_dist.size\\(-1\\)"):
        gputorch.multinomial(gputorch.tensor([0.2, 0.8], device=device), 3)
    with pytest.raises(RuntimeError, match="`inf`, `nan` or element < 0"):
        gputorch.multinomial(gputorch.tensor([0.2, -0.8], device=device), 1)
    with pytest.raises(RuntimeError, match="`inf`, `nan` or element < 0"):
        gputorch.multinomial(gputorch.tensor([1.0, float("nan")], device=device), 1)
    with pytest.raises(RuntimeError, match="sum of probabilities <= 0"):
        gputorch.multinomial(gputorch.tensor([0.0, 0.0], device=device), 1)
    with pytest.raises(RuntimeError, match="prob_dist must be 1 or 2 dim"):
        gputorch.multinomial(gputorch.tensor(0.2, device=device), 2)
    with pytest.raises(RuntimeError, match="n_sample <= 0"):
        gputorch.multinomial(gputorch.tensor([1.0, 2.0], device=device), 0)
    with pytest.raises(RuntimeError, match="floating-point dtypes.*Long"):
        gputorch.multinomial(gputorch.tensor([1, 2], device=device), 1)


# ---------------------------------------------------------------- in-place fills
def test_inplace_fills_statistics(device):
    g = _gen(device, 4)
    x = gputorch.empty(20000, dtype=gputorch.float64, device=device)
    assert x.normal_(2.0, 0.5, generator=g) is x
    v = to_numpy(x)
    assert abs(v.mean() - 2) < 0.02 and abs(v.std() - 0.5) < 0.02
    v = to_numpy(x.uniform_(-2, 3, generator=g))
    assert v.min() >= -2 and v.max() < 3 and abs(v.mean() - 0.5) < 0.05
    v = to_numpy(x.exponential_(4.0, generator=g))
    assert v.min() >= 0 and abs(v.mean() - 0.25) < 0.01
    v = to_numpy(x.geometric_(0.25, generator=g))
    assert v.min() >= 1 and (v == np.floor(v)).all() and abs(v.mean() - 4) < 0.15
    v = to_numpy(x.log_normal_(0.0, 0.5, generator=g))
    assert v.min() > 0 and abs(np.log(v).std() - 0.5) < 0.02
    v = to_numpy(x.cauchy_(1.0, 2.0, generator=g))
    assert abs(np.median(v) - 1) < 0.1 and abs(np.percentile(v, 75) - 3) < 0.2
    v = to_numpy(x.bernoulli_(0.7, generator=g))
    assert set(np.unique(v)) == {0.0, 1.0} and abs(v.mean() - 0.7) < 0.02
    assert x.uniform_(**{"from": 1.0, "to": 2.0}).min().item() >= 1.0


def test_bernoulli_inplace_with_tensor_p(device):
    x = gputorch.zeros(3, device=device)
    x.bernoulli_(gputorch.tensor([0.0, 1.0, 1.0], device=device))
    assert x.tolist() == [0.0, 1.0, 1.0]
    y = gputorch.zeros(2, 3, dtype=gputorch.int64, device=device)
    y.bernoulli_(gputorch.tensor([1.0, 0.0, 1.0], device=device))     # broadcast p
    assert y.tolist() == [[1, 0, 1], [1, 0, 1]]
    with pytest.raises(RuntimeError, match="expanded size"):
        gputorch.zeros(3, device=device).bernoulli_(gputorch.tensor([0.0, 1.0], device=device))
    with pytest.raises(RuntimeError, match="bernoulli_ expects p to be in \\[0, 1\\], but got p=1.5"):
        gputorch.zeros(3, device=device).bernoulli_(1.5)


@pytest.mark.parametrize("dtype,top", [("float32", 2**24), ("float64", 2**53), ("float16", 2**11),
                                       ("uint8", 255), ("int8", 127), ("int16", 2**15 - 1),
                                       ("int32", 2**31 - 1), ("int64", 2**63 - 1), ("bool", 1)])
def test_random_default_range(dtype, top, device):
    x = gputorch.zeros(2000, dtype=getattr(gputorch, dtype), device=device)
    v = to_numpy(x.random_(generator=_gen(device, 1))).astype(np.float64)
    assert v.min() >= 0 and v.max() <= top and (v == np.floor(v)).all()
    assert v.max() > top / 2   # spans the range


def test_random_ranges(device):
    x = gputorch.zeros(3000, dtype=gputorch.int64, device=device)
    v = to_numpy(x.random_(5))
    assert v.min() == 0 and v.max() == 4
    v = to_numpy(x.random_(-3, 3))
    assert v.min() == -3 and v.max() == 2
    v = to_numpy(x.random_(-(2**62), None))
    assert v.min() >= -(2**62) and v.max() > 2**62
    v = to_numpy(x.random_(**{"from": 10}))
    assert v.min() >= 10
    f = to_numpy(gputorch.zeros(1000, device=device).random_(3))
    assert set(np.unique(f)) == {0.0, 1.0, 2.0}
    with pytest.raises(RuntimeError, match="from=3 >= to=3"):
        x.random_(3, 3)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for unsigned char"):
        gputorch.zeros(2, dtype=gputorch.uint8, device=device).random_(0, 257)


def test_inplace_fill_errors(device):
    x = gputorch.zeros(3, device=device)
    with pytest.raises(RuntimeError, match="uniform_ expects to return a \\[from, to\\) range"):
        x.uniform_(2, 1)
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        x.normal_(0, -1)
    with pytest.raises(RuntimeError, match="exponential_ expects lambda > 0.0"):
        x.exponential_(0)
    with pytest.raises(RuntimeError, match="geometric_ expects p to be in \\(0, 1\\)"):
        x.geometric_(1.5)
    with pytest.raises(RuntimeError, match="log_normal_ expects std > 0.0"):
        x.log_normal_(0, 0)
    with pytest.raises(NotImplementedError, match="normal_kernel_cpu.*Long"):
        gputorch.zeros(3, dtype=gputorch.int64, device=device).normal_()
    with pytest.raises(NotImplementedError, match="Long"):
        gputorch.zeros(3, dtype=gputorch.int64, device=device).uniform_()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        gputorch.zeros(3, device=device, requires_grad=True).normal_()


@pytest.mark.parametrize("call,name", [
    (lambda y: y.normal_(), "NormalBackward0"), (lambda y: y.uniform_(), "UniformBackward0"),
    (lambda y: y.bernoulli_(0.5), "BernoulliBackward2"),
    (lambda y: y.bernoulli_(gputorch.full(y.shape, 0.5, device=y.device)), "BernoulliBackward1"),
    (lambda y: y.random_(1, 5), "RandomBackward0"), (lambda y: y.random_(5), "RandomBackward1"),
    (lambda y: y.random_(), "RandomBackward2"), (lambda y: y.exponential_(), "ExponentialBackward0"),
    (lambda y: y.geometric_(0.5), "GeometricBackward0"), (lambda y: y.log_normal_(), "LogNormalBackward0"),
    (lambda y: y.cauchy_(), "CauchyBackward0"),
])
def test_inplace_fill_grad_fn_and_zero_grad(call, name, device):
    torch = _torch()
    x = gputorch.ones(3, device=device, requires_grad=True)
    y = x * 1
    version = y._version
    call(y)
    assert type(y.grad_fn).__name__ == name and y._version == version + 1
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    tx = torch.ones(3, requires_grad=True)
    ty = tx * 1
    torch_call = {"BernoulliBackward1": lambda t: t.bernoulli_(torch.full(t.shape, 0.5))}.get(name)
    (torch_call or (lambda t: call(t)))(ty)
    assert type(ty.grad_fn).__name__ == name


def test_inplace_fill_reproducible_and_keeps_dtype(device):
    for dt in (gputorch.float16, gputorch.float32, gputorch.float64):
        a = gputorch.empty(5, dtype=dt, device=device).normal_(generator=_gen(device, 7))
        b = gputorch.empty(5, dtype=dt, device=device).normal_(generator=_gen(device, 7))
        assert a.dtype is dt and a.tolist() == b.tolist()
    s = gputorch.zeros(4, 4, device=device)
    s[:, 1].uniform_(5, 6)     # fills a strided view in place
    v = to_numpy(s)
    assert (v[:, 1] >= 5).all() and (v[:, [0, 2, 3]] == 0).all()
