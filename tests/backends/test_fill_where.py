"""Backend.fill_where (masked_fill, a gradient masked by an activation): the CPU's bitwise version
against NumPy's where on every floating dtype, non-finite values and fills, broadcast masks, 0-d and
non-contiguous arrays; the ops that use it against torch's results."""
import numpy as np
import pytest

import gputorch
from gputorch.backends import get_backend
from gputorch.backends.base import Backend

CPU = get_backend("cpu")


def _reference(mask, value, values):
    return np.where(mask, np.asarray(value, values.dtype), values)


def _same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("value", [0.0, -np.inf, np.nan, 2.5, -0.0])
def test_matches_where_with_non_finite_values(dtype, value):
    rng = np.random.default_rng(0)
    values = rng.standard_normal((70, 90)).astype(dtype)
    values[0, :4] = [np.inf, -np.inf, np.nan, -0.0]
    mask = rng.random((70, 90)) < 0.5
    mask[0, :2] = True
    got = CPU.fill_where(mask, value, values)
    assert _same_bits(got, _reference(mask, value, values))


@pytest.mark.parametrize("mask_shape", [(1, 90), (70, 1), (1, 1), ()])
def test_broadcast_masks(mask_shape):
    rng = np.random.default_rng(1)
    values = rng.standard_normal((70, 90)).astype(np.float32)
    mask = np.asarray(rng.random(mask_shape) < 0.5)
    assert _same_bits(CPU.fill_where(mask, -np.inf, values), _reference(mask, -np.inf, values))


def test_small_wider_masks_and_other_dtypes_use_where():
    values = np.arange(6, dtype=np.int64).reshape(2, 3)
    mask = np.array([True, False, True])
    assert _same_bits(CPU.fill_where(mask, 7, values), _reference(mask, 7, values))
    wide = np.ones((5, 70, 90), bool)
    big = np.zeros((70, 90), np.float32)
    assert CPU.fill_where(wide, 1.0, big).shape == (5, 70, 90)
    small = np.arange(4, dtype=np.float32)
    assert _same_bits(Backend.fill_where(CPU, small > 1, 0, small), _reference(small > 1, 0, small))


def test_non_contiguous_values():
    values = np.arange(2 * 8192, dtype=np.float32).reshape(128, 128)[:, ::2].T
    mask = (values % 3) == 0
    assert _same_bits(CPU.fill_where(mask, -1.0, values), _reference(mask, -1.0, values))


def test_ops_against_torch(device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 2, 64, 64)).astype(np.float32)
    x[0, 0, 0, :3] = [np.nan, np.inf, -np.inf]
    causal = np.triu(np.ones((64, 64), bool), 1)[None, None]
    ours = gputorch.tensor(x, device=device, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    out = ours.masked_fill(gputorch.tensor(causal, device=device), float("-inf")).relu()
    ref = theirs.masked_fill(torch.tensor(causal), float("-inf")).relu()
    assert np.array_equal(out.detach().cpu().numpy(), ref.detach().numpy(), equal_nan=True)
    g = rng.standard_normal(x.shape).astype(np.float32)
    g[0, 0, 0, 3] = np.inf
    out.backward(gputorch.tensor(g, device=device))
    ref.backward(torch.tensor(g))
    assert np.array_equal(ours.grad.cpu().numpy(), theirs.grad.numpy(), equal_nan=True)


def test_relu_gradient_passes_nan_inputs_and_blocks_inf_gradients():
    x = gputorch.tensor([-1.0, 0.0, 2.0, float("nan")], requires_grad=True)
    x.relu().backward(gputorch.tensor([float("inf"), float("nan"), 5.0, 7.0]))
    assert x.grad.tolist() == [0.0, 0.0, 5.0, 7.0]    # torch: relu(NaN) is NaN and passes its gradient
    t = gputorch.tensor(-2.0, requires_grad=True)
    t.relu().backward()
    assert t.grad.shape == () and t.grad.item() == 0.0


def test_result_owns_its_memory():
    """A masked gradient is a fresh array (no view of a scratch buffer), so AccumulateGrad can keep
    it as ``.grad`` without a copy."""
    values = np.random.default_rng(2).standard_normal((70, 90)).astype(np.float32)
    got = CPU.fill_where(values < 0, 0.0, values)
    assert got.base is None and got.flags.c_contiguous and got.flags.writeable
