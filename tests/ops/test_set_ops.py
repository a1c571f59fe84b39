"""Set-like ops: unique, unique_consecutive, isin, compared with torch."""
import numpy as np
import pytest

import gputorch
from tests._helpers import assert_close

NAN = float("nan")


def _compare(fn, *arrays, device, dtypes=None):
    """``fn(module, *tensors)`` on gputorch and torch: the same outputs (values, dtypes, shapes)."""
    torch = pytest.importorskip("torch")
    dtypes = dtypes or [None] * len(arrays)
    g = fn(gputorch, *[gputorch.tensor(a, device=device, dtype=None if d is None else getattr(gputorch, d))
                       for a, d in zip(arrays, dtypes)])
    t = fn(torch, *[torch.tensor(a, dtype=None if d is None else getattr(torch, d)) for a, d in zip(arrays, dtypes)])
    gs, ts = (list(g), list(t)) if isinstance(t, tuple) else ([g], [t])
    assert len(gs) == len(ts)
    for a, b in zip(gs, ts):
        assert_close(a, b, rtol=0, atol=0)
    return g


UNIQUE_CASES = {
    "flat": lambda m, x: m.unique(x),
    "flat_all": lambda m, x: m.unique(x, return_inverse=True, return_counts=True),
    "unsorted": lambda m, x: x.unique(sorted=False, return_inverse=True),
    "counts": lambda m, x: x.unique(return_counts=True),
    "dim0": lambda m, x: m.unique(x, dim=0, return_inverse=True, return_counts=True),
    "dim1": lambda m, x: x.unique(dim=1, return_inverse=True, return_counts=True),
    "dim_neg": lambda m, x: m.unique(x, sorted=False, dim=-1),
    "consecutive": lambda m, x: m.unique_consecutive(x, return_inverse=True, return_counts=True),
    "consecutive_dim0": lambda m, x: x.unique_consecutive(return_inverse=True, return_counts=True, dim=0),
    "consecutive_dim1": lambda m, x: m.unique_consecutive(x, dim=1),
}
DATA = np.array([[3, 1, 3, 3], [2, 1, 2, 2], [3, 1, 3, 3], [3, 1, 3, 3], [0, 5, 0, 0]])


@pytest.mark.parametrize("name", sorted(UNIQUE_CASES))
def test_unique_parity(name, device):
    for dtype in ("int64", "float32", "uint8"):
        _compare(UNIQUE_CASES[name], DATA, device=device, dtypes=[dtype])


def test_unique_nan_bool_empty_and_zero_dim(device):
    for fn in (UNIQUE_CASES["flat_all"], UNIQUE_CASES["consecutive"]):
        _compare(fn, np.array([NAN, 1.0, NAN, NAN, 0.0, 1.0]), device=device)   # NaNs stay distinct
        _compare(fn, np.array([True, False, False, True]), device=device)
        _compare(fn, np.zeros((0,)), device=device)
        _compare(fn, np.array(4), device=device)
    _compare(UNIQUE_CASES["dim0"], np.zeros((0, 2)), device=device)
    _compare(UNIQUE_CASES["dim1"], np.zeros((2, 0)), device=device)
    _compare(UNIQUE_CASES["dim0"], np.random.default_rng(0).integers(0, 2, (12, 3)), device=device)


def test_unique_records_a_node_without_derivative(device):
    x = gputorch.tensor([2.0, 1.0, 2.0], device=device, requires_grad=True)
    for fn, name in ((lambda t: t.unique(), "_unique2"), (lambda t: t.reshape(1, 3).unique(dim=1), "unique_dim"),
                     (lambda t: t.unique_consecutive(), "unique_consecutive")):
        out = fn(x)
        assert out.requires_grad
        with pytest.raises(NotImplementedError, match=f"the derivative for '{name}' is not implemented"):
            out.sum().backward()


def test_unique_errors(device):
    x = gputorch.tensor([[1, 2]], device=device)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.unique(dim=2)
    with pytest.raises(IndexError, match="tensor has no dimensions"):
        gputorch.tensor(3, device=device).unique(dim=0)
    with pytest.raises(IndexError, match="tensor has no dimensions"):
        gputorch.unique_consecutive(gputorch.tensor(3, device=device), dim=0)
    with pytest.raises(RuntimeError, match="0 sized dimensions, and they aren't selected"):
        gputorch.zeros(2, 0, device=device).unique(dim=0)
    with pytest.raises(RuntimeError, match="Number of zero sized dimensions is more than one"):
        gputorch.zeros(0, 0, 2, device=device).unique(dim=0)
    with pytest.raises(RuntimeError, match="Number of zero sized dimensions is more than one"):
        gputorch.zeros(0, 0, device=device).unique_consecutive(dim=1)


ISIN_CASES = {
    "tensors": (lambda m, a, b: m.isin(a, b), [[1, 2, 3], [4, 5, 9]], [[9, 1], [4, 4]], ("int64", "int64")),
    "invert": (lambda m, a, b: m.isin(a, b, invert=True), [1.5, 2.0, NAN, 3.0], [NAN, 2.0], ("float32", "float64")),
    "promotes": (lambda m, a, b: m.isin(a, b), [1, 2, 3], [1.5, 2.0], ("int64", "float32")),
    "widens": (lambda m, a, b: m.isin(a, b, assume_unique=True), [1, -1], [255], ("int8", "uint8")),
    "empty_test": (lambda m, a, b: m.isin(a, b), [1.0, 2.0], [], ("float32", "float32")),
    "zero_dim": (lambda m, a, b: m.isin(a, b), 3, [3, 4], ("int16", "int64")),
}


@pytest.mark.parametrize("name", sorted(ISIN_CASES))
def test_isin_parity(name, device):
    fn, a, b, dtypes = ISIN_CASES[name]
    _compare(fn, np.array(a), np.array(b), device=device, dtypes=list(dtypes))


def test_isin_scalars(device):
    torch = pytest.importorskip("torch")
    cases = [(lambda m, d: m.isin(m.tensor([1, -1], dtype=m.int8, device=d), 255)),   # 255 wraps to -1
             (lambda m, d: m.isin(m.tensor([1.0, 2.5], device=d), 2.5)),
             (lambda m, d: m.isin(2, m.tensor([1, 2], device=d))),
             (lambda m, d: m.isin(m.tensor([1, 2], device=d), 1.5))]
    for fn in cases:
        assert_close(fn(gputorch, device), fn(torch, "cpu"), rtol=0, atol=0)


def test_isin_errors(device):
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        gputorch.isin(2, 3)
    with pytest.raises(RuntimeError, match="Unsupported input type encountered for isin\\(\\): Bool"):
        gputorch.isin(gputorch.tensor([True], device=device), gputorch.tensor([1], device=device))


def test_isin_follows_torchs_three_algorithms(device):
    """Few test elements: pairwise; many: sorted, where ``assume_unique`` with duplicates gives
    torch's (neighbour-based) answers."""
    rng = np.random.default_rng(2)
    elements = rng.integers(0, 30, (4, 5))
    for test in (rng.integers(0, 30, (3,)), rng.integers(0, 30, (40,))):
        for kw in ({}, {"invert": True}, {"assume_unique": True}, {"assume_unique": True, "invert": True}):
            _compare(lambda m, a, b: m.isin(a, b, **kw), elements, test, device=device)


def test_isin_flattens_few_test_elements_as_a_view(device):
    torch = pytest.importorskip("torch")
    for lib, dev in ((torch, "cpu"), (gputorch, device)):
        e = lib.tensor([1.0], device=dev)
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            lib.isin(e, lib.arange(9.0, device=dev).reshape(3, 3).t())      # pairwise: a view
        assert lib.isin(e, lib.arange(12.0, device=dev).reshape(3, 4).t()).tolist() == [True]   # sorted
        ints = lib.arange(9, device=dev).reshape(3, 3)
        assert lib.isin(e, ints[::2]).tolist() == [True]                  # cast: a contiguous copy
