"""Distances: cosine_similarity, pairwise_distance, pdist, cdist and their modules against torch
(float64 values and gradients), broadcasting, the eps clamps, and torch's errors."""
import numpy as np
import pytest

import gputorch
import gputorch.nn.functional as F
from gputorch import nn
from gputorch.nn.functional.distance import cdist
from tests._helpers import assert_close


def _torch():
    return pytest.importorskip("torch")


def _parity(device, g_fn, t_fn, arrays, rtol=1e-10):
    """Same float64 inputs through both; outputs and the gradients of every input must agree."""
    torch = _torch()
    gs = [gputorch.tensor(a, device=device, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = g_fn(*gs), t_fn(*ts)
    assert_close(out, expected, rtol=rtol, atol=1e-12)
    go = np.random.default_rng(5).standard_normal(tuple(expected.shape))
    out.backward(gputorch.tensor(go, device=device))
    expected.backward(torch.tensor(go))
    for g, t in zip(gs, ts):
        assert_close(g.grad, t.grad, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("dim", [1, -1, 0])
def test_cosine_similarity_parity_with_broadcasting(dim, device):
    torch = _torch()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4, 5)), rng.standard_normal((1, 4, 5))
    _parity(device, lambda x, y: F.cosine_similarity(x, y, dim),
            lambda x, y: torch.nn.functional.cosine_similarity(x, y, dim), [a, b])


def test_cosine_similarity_eps_clamp_keeps_the_norms_gradient(device):
    torch = _torch()
    a = np.array([[1e-9, 2e-9], [1.0, 2.0], [0.0, 0.0]])
    b = np.array([[3.0, 1.0], [0.5, 1.0], [1.0, -1.0]])
    _parity(device, F.cosine_similarity, torch.nn.functional.cosine_similarity, [a, b], rtol=1e-9)
    m = nn.CosineSimilarity(dim=0, eps=0.5)
    _parity(device, m, torch.nn.CosineSimilarity(dim=0, eps=0.5), [a, b], rtol=1e-9)


def test_cosine_similarity_dtypes_and_errors(device):
    torch = _torch()
    x = gputorch.ones(3, 2, dtype=gputorch.int64, device=device)
    with pytest.raises(RuntimeError, match="expected common dtype to be floating point, yet common dtype is Long"):
        F.cosine_similarity(x, x)
    h = np.array([[1.5, -2.0], [0.5, 3.0], [2.0, 1.0]], dtype=np.float16)
    out = F.cosine_similarity(x.to(gputorch.uint8), gputorch.tensor(h, device=device))
    assert_close(out, torch.nn.functional.cosine_similarity(torch.ones(3, 2, dtype=torch.uint8), torch.tensor(h)),
                 rtol=1e-3, atol=1e-3)
    with pytest.raises(RuntimeError, match="must match the size"):
        F.cosine_similarity(gputorch.randn(3, 2, device=device), gputorch.randn(4, 2, device=device))
    with pytest.raises(TypeError, match=r"cosine_similarity\(\): argument 'x2' \(position 2\) must be Tensor, not float"):
        F.cosine_similarity(x, 0.5)
    with pytest.raises(TypeError, match=r"pairwise_distance\(\): argument 'x2' \(position 2\) must be Tensor, not int"):
        F.pairwise_distance(x, 3)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf")])
def test_pairwise_distance_parity(p, device):
    torch = _torch()
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    _parity(device, lambda x, y: F.pairwise_distance(x, y, p),
            lambda x, y: torch.nn.functional.pairwise_distance(x, y, p), [a, b])
    _parity(device, nn.PairwiseDistance(p, eps=1e-3, keepdim=True),
            torch.nn.PairwiseDistance(p, eps=1e-3, keepdim=True), [a, b[:1]])
    _parity(device, lambda x, y: F.pairwise_distance(x, y, p),
            lambda x, y: torch.nn.functional.pairwise_distance(x, y, p), [a[0], b[0]])


@pytest.mark.parametrize("p", [2, 1, 0.5, float("inf")])
def test_pdist_parity(p, device):
    torch = _torch()
    x = np.random.default_rng(2).standard_normal((5, 3))
    x[3] = x[1]     # a zero distance: its gradient is 0 in both
    _parity(device, lambda t: F.pdist(t, p), lambda t: torch.nn.functional.pdist(t, p), [x])


def test_pdist_errors(device):
    with pytest.raises(RuntimeError, match="only supports 2D tensors, got: 1D"):
        F.pdist(gputorch.randn(3, device=device))
    with pytest.raises(RuntimeError, match="non-negative p"):
        F.pdist(gputorch.randn(3, 2, device=device), -1)


@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                                  "donot_use_mm_for_euclid_dist"])
@pytest.mark.parametrize("rows", [4, 27])
def test_cdist_parity_euclidean(mode, rows, device):
    torch = _torch()
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, rows, 3)), rng.standard_normal((1, 5, 3))
    _parity(device, lambda x, y: cdist(x, y, compute_mode=mode),
            lambda x, y: torch.cdist(x, y, compute_mode=mode), [a, b], rtol=1e-8)


@pytest.mark.parametrize("p", [1.0, 0.5, 3.0, float("inf")])
def test_cdist_parity_other_norms(p, device):
    torch = _torch()
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
    _parity(device, lambda x, y: cdist(x, y, p), lambda x, y: torch.cdist(x, y, p), [a, b])


def test_cdist_errors(device):
    x = gputorch.randn(3, 2, device=device)
    with pytest.raises(TypeError, match=r"cdist\(\): argument 'x2' \(position 2\) must be Tensor, not float"):
        cdist(x, 2.0)
    with pytest.raises(RuntimeError, match="at least 2D tensors, X1 got: 1D"):
        cdist(gputorch.randn(3, device=device), x)
    with pytest.raises(RuntimeError, match="same number of columns. X1: 2 X2: 3"):
        cdist(x, gputorch.randn(3, 3, device=device))
    with pytest.raises(RuntimeError, match="non-negative p"):
        cdist(x, x, p=-1)
    with pytest.raises(ValueError, match="x is not a valid value for compute_mode"):
        cdist(x, x, compute_mode="x")
    with pytest.raises(RuntimeError, match="floating-point dtypes, X1 got: Long"):
        cdist(x.long(), x.long())


def test_top_level_names_are_the_functional_ones():
    assert gputorch.cdist is cdist and not hasattr(F, "cdist")      # as in torch
    for name in ("pdist", "cosine_similarity", "pairwise_distance"):
        assert getattr(gputorch, name) is getattr(F, name)
