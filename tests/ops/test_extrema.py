"""Extrema: max, min, amax, amin, argmax, argmin."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck, gradgradcheck
from tests._helpers import assert_close
from tests.ops._reduction_checks import parity, rand

CASES = {
    "max": lambda m, x: x.max(),
    "min": lambda m, x: m.min(x),
    "max_dim": lambda m, x: m.max(x, 1),
    "max_dim_keepdim": lambda m, x: x.max(-1, keepdim=True),
    "min_dim": lambda m, x: x.min(dim=0),
    "amax": lambda m, x: m.amax(x, (0, 2)),
    "amax_all": lambda m, x: x.amax(),
    "amin_keepdim": lambda m, x: x.amin(1, keepdim=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_parity_with_torch(name, device):
    data = np.random.default_rng(1).uniform(-2, 2, (3, 4, 5))
    parity(CASES[name], data, device=device)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_and_gradgradcheck(name, device):
    x = rand(2, 3, 4, device=device)
    fn = lambda t: CASES[name](gputorch, t)[0] if name.endswith(("dim", "keepdim")) and "am" not in name \
        else CASES[name](gputorch, t)  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_ties_share_or_pick_like_torch(device):
    data = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [-1.0, -5.0, -5.0, 4.0]])
    for fn in (lambda m, x: x.max(), lambda m, x: x.min(), lambda m, x: x.max(1), lambda m, x: x.min(1),
               lambda m, x: x.amax(1), lambda m, x: x.amin(1), lambda m, x: x.amax(), lambda m, x: x.amin(0),
               lambda m, x: x.argmax(1), lambda m, x: x.argmin(1), lambda m, x: x.argmax()):
        parity(fn, data, device=device)


def test_nan_propagates(device):
    nan = float("nan")
    data = np.array([[1.0, nan, 2.0], [0.5, -1.0, 3.0]])
    for fn in (lambda m, x: x.max(), lambda m, x: x.min(1), lambda m, x: x.amax(1), lambda m, x: x.argmax(1),
               lambda m, x: x.argmin(), lambda m, x: x.max(1, keepdim=True)):
        parity(fn, data, device=device)


def test_argmax_argmin(device):
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(2).integers(-5, 5, (3, 4, 5))
    g, t = gputorch.tensor(data, device=device), torch.tensor(data)
    for fn in (lambda m, x: x.argmax(), lambda m, x: x.argmin(keepdim=True), lambda m, x: m.argmax(x, 1),
               lambda m, x: x.argmin(-1, keepdim=True), lambda m, x: x.transpose(0, 2).argmax(0)):
        assert_close(fn(gputorch, g), fn(torch, t))
    s = gputorch.tensor(3.0, device=device)
    assert s.argmax().item() == 0 and s.argmax(0).item() == 0


def test_integer_and_bool_inputs(device):
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(3).integers(-5, 5, (3, 4))
    for d in (np.int64, np.int32, np.uint8, np.bool_):
        arr = np.abs(data).astype(d)
        g, t = gputorch.tensor(arr, device=device), torch.tensor(arr)
        for fn in (lambda m, x: x.max(), lambda m, x: x.min(1), lambda m, x: x.amax(0), lambda m, x: x.amin()):
            got, exp = fn(gputorch, g), fn(torch, t)
            for a, b in zip(got if isinstance(got, tuple) else [got], exp if isinstance(exp, tuple) else [exp]):
                assert_close(a, b)


def test_zero_dim_and_empty(device):
    torch = pytest.importorskip("torch")
    parity(lambda m, x: x.max(0), np.array(1.5), device=device)
    parity(lambda m, x: x.min(-1, keepdim=True), np.array(1.5), device=device)
    parity(lambda m, x: x.amax(0), np.array(1.5), device=device)
    e = gputorch.zeros(0, 3, device=device)
    values, indices = e.max(1)
    assert values.shape == (0,) and indices.shape == (0,) and indices.dtype is gputorch.int64
    assert e.amax(1).shape == (0,)
    assert e.argmax(1).shape == (0,)
    del torch


def test_errors(device):
    e = gputorch.zeros(0, 3, device=device)
    with pytest.raises(RuntimeError, match="max\\(\\): Expected reduction dim to be specified for input.numel"):
        e.max()
    with pytest.raises(RuntimeError, match="min\\(\\): Expected reduction dim to be specified"):
        gputorch.min(e)
    with pytest.raises(IndexError, match="max\\(\\): Expected reduction dim 0 to have non-zero size."):
        e.max(0)
    with pytest.raises(IndexError, match="amin\\(\\): Expected reduction dim 0 to have non-zero size."):
        e.amin(0)
    with pytest.raises(RuntimeError, match="amax\\(\\): Expected reduction dim to be specified"):
        e.amax()
    with pytest.raises(IndexError, match="argmax\\(\\): Expected reduction dim to be specified"):
        e.argmax()
    with pytest.raises(IndexError, match="argmin\\(\\): Expected reduction dim 0 to have non-zero size."):
        e.argmin(0)
    with pytest.raises(RuntimeError, match="argmax\\(\\): does not support bool input"):
        gputorch.ones(2, dtype=gputorch.bool, device=device).argmax()
    x = gputorch.zeros(2, 3, device=device)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.max(2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.argmin(-3)
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times"):
        x.amax((1, 1))


def test_binary_max_min_delegate_to_maximum(device):
    pointwise = pytest.importorskip("gputorch.ops.pointwise")
    if not hasattr(pointwise, "maximum"):
        pytest.skip("maximum is not written yet")
    a = gputorch.tensor([1.0, 5.0, -2.0], device=device)
    b = gputorch.tensor([3.0, 4.0, -1.0], device=device)
    assert_close(gputorch.max(a, b), np.array([3.0, 5.0, -1.0], dtype=np.float32))
    assert_close(a.min(b), np.array([1.0, 4.0, -2.0], dtype=np.float32))
    assert_close(gputorch.max(a, other=b), np.array([3.0, 5.0, -1.0], dtype=np.float32))


def test_return_type_fields(device):
    x = rand(2, 3, device=device, requires_grad=False)
    r = x.max(1)
    assert type(r).__name__ == "max" and r.values is r[0] and r.indices is r[1]
    values, indices = gputorch.min(x, 0)
    assert values.shape == (3,) and indices.dtype is gputorch.int64


def test_return_types_pickle_and_repr(device):
    import pickle
    x = gputorch.tensor([[1.0, 4.0], [3.0, 2.0]], device=device)
    r = pickle.loads(pickle.dumps(x.max(1)))
    assert type(r) is gputorch.return_types.max and r.indices.tolist() == [1, 0]
    assert repr(x.min(0)).startswith("min(values=tensor(")
