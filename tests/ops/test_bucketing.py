"""Counting and bucketing ops: bincount, bucketize, searchsorted, histc, histogram, against torch."""
import numpy as np
import pytest

import gputorch
from tests._helpers import assert_close, to_numpy

NAN, INF = float("nan"), float("inf")


def _both(fn, device):
    """``fn(module, device)`` on gputorch (``device``) and on torch (CPU)."""
    torch = pytest.importorskip("torch")
    return fn(gputorch, device), fn(torch, "cpu")


def _same(fn, device, rtol=0.0, atol=0.0):
    g, t = _both(fn, device)
    gs, ts = (list(g), list(t)) if isinstance(t, tuple) else ([g], [t])
    for a, b in zip(gs, ts):
        assert_close(a, b, rtol=rtol, atol=atol)
    return g, t


BINCOUNT = {
    "plain": lambda m, d: m.bincount(m.tensor([1, 3, 1, 0, 7], device=d)),
    "minlength": lambda m, d: m.tensor([1, 3, 1], dtype=m.uint8, device=d).bincount(minlength=6),
    "empty": lambda m, d: m.bincount(m.tensor([], dtype=m.int64, device=d), minlength=2),
    "empty_ignores_weights": lambda m, d: m.bincount(m.tensor([], dtype=m.uint8, device=d),
                                                     m.tensor([1.5], device=d)),
    "float32_weights": lambda m, d: m.bincount(m.tensor([1, 3, 1], device=d), m.tensor([0.5, 1.0, 2.25], device=d)),
    "int_weights": lambda m, d: m.bincount(m.tensor([2, 0, 2], device=d), weights=m.tensor([1, 4, 2], device=d)),
    "half_weights": lambda m, d: m.bincount(m.tensor([2, 0], device=d),
                                            weights=m.tensor([1.5, 4.0], dtype=m.float16, device=d)),
}


@pytest.mark.parametrize("name", sorted(BINCOUNT))
def test_bincount(name, device):
    _same(BINCOUNT[name], device)


def test_bincount_errors(device):
    t = lambda *a, **k: gputorch.tensor(*a, device=device, **k)  # noqa: E731
    with pytest.raises(RuntimeError, match="1-d non-negative integral"):
        gputorch.bincount(t([1, -3]))
    with pytest.raises(RuntimeError, match="1-d non-negative integral"):
        gputorch.bincount(t([[1, 3]]))
    with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
        gputorch.bincount(t([1.0]))
    with pytest.raises(RuntimeError, match="minlength should be >= 0"):
        gputorch.bincount(t([1]), minlength=-1)
    with pytest.raises(RuntimeError, match="same length as input"):
        gputorch.bincount(t([1, 2]), weights=t([1.0]))


SEARCH = {
    "left": lambda m, d: m.searchsorted(m.tensor([1, 3, 3, 5], device=d), m.tensor([[3, 6], [0, 4]], device=d)),
    "right": lambda m, d: m.searchsorted(m.tensor([1, 3, 3, 5], device=d), m.tensor([3, 6, 0], device=d), right=True),
    "side": lambda m, d: m.searchsorted(m.tensor([1.0, 3.0], device=d), m.tensor([3.0], device=d), side="right"),
    "batched": lambda m, d: m.searchsorted(m.tensor([[1, 3, 5], [2, 4, 6]], device=d),
                                           m.tensor([[3, 6, 0], [1, 4, 9]], device=d), out_int32=True),
    "scalar": lambda m, d: m.searchsorted(m.tensor([1, 3, 5], device=d), 4),
    "promoted": lambda m, d: m.searchsorted(m.tensor([1, 3, 5], device=d), m.tensor([4.5, 3.0], device=d)),
    "sorter": lambda m, d: m.searchsorted(m.tensor([5, 1, 3], device=d), m.tensor([4, 0], device=d),
                                          sorter=m.tensor([1, 2, 0], device=d)),
    "nan": lambda m, d: m.searchsorted(m.tensor([1.0, 3.0, NAN], device=d), m.tensor([4.0, NAN, 3.0], device=d)),
    "bucketize": lambda m, d: m.bucketize(m.tensor([[1, 5], [3, 9]], device=d), m.tensor([1, 3, 5, 7, 9], device=d)),
    "bucketize_right": lambda m, d: m.bucketize(m.tensor([1.0, 5.0, NAN, -INF], device=d),
                                                m.tensor([1.0, 3.0, 5.0], device=d), right=True, out_int32=True),
    "bucketize_scalar": lambda m, d: m.bucketize(3, m.tensor([1, 3, 5], device=d)),
    "empty": lambda m, d: m.searchsorted(m.tensor([1, 3], device=d), m.tensor([], dtype=m.int64, device=d)),
}


@pytest.mark.parametrize("name", sorted(SEARCH))
def test_searchsorted_and_bucketize(name, device):
    _same(SEARCH[name], device)


def test_searchsorted_matches_numpy_on_random_data(device):
    rng = np.random.default_rng(3)
    seq = np.sort(rng.integers(0, 20, (3, 17)), axis=1).astype(np.float64)
    vals = rng.integers(-2, 22, (3, 40)).astype(np.float64)
    for right in (False, True):
        got = gputorch.searchsorted(gputorch.tensor(seq, device=device), gputorch.tensor(vals, device=device),
                                    right=right)
        want = np.stack([np.searchsorted(s, v, side="right" if right else "left") for s, v in zip(seq, vals)])
        assert_close(got, want, rtol=0, atol=0, check_dtype=False)


def test_search_errors(device):
    t = lambda *a, **k: gputorch.tensor(*a, device=device, **k)  # noqa: E731
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        gputorch.searchsorted(t([1, 3]), t([2]), side="left", right=True)
    with pytest.raises(RuntimeError, match="side can only be 'left' or 'right'"):
        gputorch.searchsorted(t([1, 3]), t([2]), side="middle")
    with pytest.raises(RuntimeError, match="first N-1 dimensions"):
        gputorch.searchsorted(t([[1, 3], [2, 4]]), t([2, 3]))
    with pytest.raises(RuntimeError, match="positive dimension"):
        gputorch.searchsorted(t(5), t([2]))
    with pytest.raises(RuntimeError, match="sorter must be a tensor of long dtype"):
        gputorch.searchsorted(t([1, 3]), t([2]), sorter=t([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="boundary and sorter must have the same size"):
        gputorch.searchsorted(t([1, 3]), t([2]), sorter=t([0]))
    with pytest.raises(RuntimeError, match=r"boundaries tensor must be 1 dimension, but got dim\(2\)"):
        gputorch.bucketize(t([1]), t([[1, 3]]))
    with pytest.raises(NotImplementedError, match="'Bool'"):
        gputorch.searchsorted(t([True, False]), t([True]))


HIST = {
    "histc": lambda m, d: m.histc(m.tensor([1.0, 2.0, 1.0, 3.0, 0.5, 4.0], device=d), bins=4, min=1, max=3),
    "histc_data_range": lambda m, d: m.tensor([0.1, 0.7, 0.3, 0.9, 0.5], dtype=m.float64, device=d).histc(5),
    "histc_point": lambda m, d: m.histc(m.tensor([2.0, 2.0], device=d), bins=4),
    "histc_nan_ignored": lambda m, d: m.histc(m.tensor([1.0, NAN, 3.0], device=d), bins=3, min=0, max=3),
    "histc_empty": lambda m, d: m.histc(m.tensor([], device=d), bins=3),
    "histc_zero_width": lambda m, d: m.histc(m.tensor([1e10], device=d), bins=7),         # middle bin
    "histc_overflow": lambda m, d: m.histc(m.tensor([3e37, 2e37, 2.5e37, 2.0001e37], device=d)),
    "histc_half": lambda m, d: m.histc(m.tensor([-6000.0, -0.15, 3.0, 100.0], dtype=m.float16, device=d), 7),
    "histogram": lambda m, d: m.histogram(m.tensor([[1.0, 2.0], [1.0, 5.0]], device=d), 3),
    "histogram_range_weight": lambda m, d: m.histogram(m.tensor([1.0, 2.0, 1.0, 9.0], device=d), bins=4,
                                                       range=(0.0, 3.0), weight=m.tensor([1.0, 2.0, 4.0, 8.0],
                                                                                         device=d)),
    "histogram_edges_density": lambda m, d: m.tensor([1.0, 2.0, 1.0, 2.5], dtype=m.float64, device=d).histogram(
        m.tensor([0.0, 1.0, 2.0, 4.0], dtype=m.float64, device=d), density=True),
    "histogram_point": lambda m, d: m.histogram(m.tensor([2.0, 2.0], device=d), 3),
    "histogram_empty": lambda m, d: m.histogram(m.tensor([], device=d), 2),
    "histogram_default_bins": lambda m, d: m.tensor([0.31, 0.1, 0.227]).to(d).histogram(),
    "histogram_huge_density": lambda m, d: m.histogram(m.tensor([1.0, 2.0], device=d), 1,
                                                       weight=m.tensor([3e38, 3e38], device=d) / 2, density=True),
}


@pytest.mark.parametrize("name", sorted(HIST))
def test_histograms(name, device):
    g, t = _same(HIST[name], device, rtol=1e-6, atol=1e-7)
    if name.startswith("histogram"):
        assert type(g).__name__ == "histogram" and g._fields == ("hist", "bin_edges")


def test_histc_bins_match_torch_on_random_data(device):
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(5).uniform(-1, 1, 2000)
    for dtype in ("float32", "float64"):
        g = gputorch.tensor(data, dtype=getattr(gputorch, dtype), device=device).histc(37, min=-0.9, max=0.8)
        assert_close(g, torch.tensor(data, dtype=getattr(torch, dtype)).histc(37, min=-0.9, max=0.8), rtol=0, atol=0)
        g = gputorch.histogram(gputorch.tensor(data, dtype=getattr(gputorch, dtype), device=device), 23)
        t = torch.histogram(torch.tensor(data, dtype=getattr(torch, dtype)), 23)
        assert_close(g.hist, t.hist, rtol=0, atol=0)
        assert_close(g.bin_edges, t.bin_edges)


def test_histogram_errors(device):
    t = lambda *a, **k: gputorch.tensor(*a, device=device, **k)  # noqa: E731
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        gputorch.histc(t([1, 2]))
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        gputorch.histc(t([1.0]), bins=3, min=3, max=1)
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        gputorch.histc(t([1.0]), bins=0)
    with pytest.raises(RuntimeError, match="is not finite"):
        gputorch.histc(t([1.0, INF]))
    with pytest.raises(RuntimeError, match="cannot be converted to type uint8_t without overflow"):
        gputorch.histc(t([1, 2], dtype=gputorch.uint8), 3, min=-1, max=3)     # checked before the dtype
    with pytest.raises(RuntimeError, match="cannot be converted to type c10::Half without overflow"):
        gputorch.histc(t([1.0], dtype=gputorch.float16), 3, min=-1e6, max=3)
    with pytest.raises(RuntimeError, match="min should not exceed max"):
        gputorch.histogram(t([1.0]), 2, range=(3.0, 1.0))
    with pytest.raises(RuntimeError, match="should have the same dtype"):
        gputorch.histogram(t([1.0]), t([0, 2]))
    with pytest.raises(RuntimeError, match="should have one dimension"):
        gputorch.histogram(t([1.0]), t([[0.0, 2.0]]))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        gputorch.histogram(t([1]), 2)
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        gputorch.histogram(t([1.0], dtype=gputorch.float16), 2)
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        gputorch.histogram(t([1.0]), t([1.0]))


def test_histograms_record_no_derivative(device):
    x = gputorch.tensor([1.0, 2.0], device=device, requires_grad=True)
    assert not x.histc(3).requires_grad
    hist, edges = x.histogram(3)
    assert hist.requires_grad and edges.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::histogram is not implemented"):
        hist.sum().backward()


def test_histogramdd_matches_torch(device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    points = rng.standard_normal((40, 3)).round(2)
    weights = rng.uniform(0, 2, 40)
    cases = [((4, 3, 5), {"weight": True, "density": True}), (5, {"range": [-1.0, 1.0, -2.0, 0.0, 0.0, 3.0]}),
             ("edges", {}), (2, {})]
    for bins, kwargs in cases:
        ours_kw, theirs_kw = dict(kwargs), dict(kwargs)
        if kwargs.get("weight"):
            ours_kw["weight"] = gputorch.tensor(weights, device=device)
            theirs_kw["weight"] = torch.tensor(weights)
        if bins == "edges":
            edges = [[-1.0, 0.0, 0.5, 2.0], [-3.0, 3.0], [-0.5, 0.0, 0.5]]
            ours_bins = [gputorch.tensor(e, dtype=gputorch.float64, device=device) for e in edges]
            theirs_bins = [torch.tensor(e, dtype=torch.float64) for e in edges]
        else:
            ours_bins = theirs_bins = bins
        ours = gputorch.histogramdd(gputorch.tensor(points, device=device), ours_bins, **ours_kw)
        theirs = torch.histogramdd(torch.tensor(points), theirs_bins, **theirs_kw)
        assert type(ours).__name__ == "histogramdd" and isinstance(ours.bin_edges, tuple)
        np.testing.assert_allclose(to_numpy(ours.hist), theirs.hist.numpy(), rtol=1e-12)
        for a, e in zip(ours.bin_edges, theirs.bin_edges):
            np.testing.assert_allclose(to_numpy(a), e.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        gputorch.histogramdd(gputorch.ones(3, device=device), 2)
    with pytest.raises(RuntimeError, match="size of bins must be equal to the innermost dimension"):
        gputorch.histogramdd(gputorch.ones(3, 2, device=device), [2])
    with pytest.raises(RuntimeError, match="range should have 4 elements, but got 2"):
        gputorch.histogramdd(gputorch.ones(3, 2, device=device), 2, range=[0.0, 1.0])
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        gputorch.histogramdd(gputorch.ones(3, 2, dtype=gputorch.int64, device=device), 2)
