"""Backend.zero_where (a gradient masked by an activation): the CPU's bitwise version against
NumPy's where, on every floating dtype, non-finite values, 0-d and non-contiguous arrays."""
import numpy as np
import pytest

import gputorch
from gputorch.backends import get_backend
from gputorch.backends.base import Backend

CPU = get_backend("cpu")


def _reference(mask, values):
    return np.where(mask, values.dtype.type(0), values)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_matches_where_with_non_finite_values(dtype):
    rng = np.random.default_rng(0)
    values = rng.standard_normal((5, 7)).astype(dtype)
    values[0, :3] = [np.inf, -np.inf, np.nan]
    values[1, 0] = -0.0
    mask = rng.random((5, 7)) < 0.5
    mask[0, :3] = True
    got = CPU.zero_where(mask, values)
    expected = _reference(mask, values)
    assert got.dtype == values.dtype and got.shape == values.shape
    assert np.array_equal(got.view(np.uint8), expected.view(np.uint8))   # bit for bit (signed zeros too)
    assert not np.isnan(got[0, :3]).any() and (got[0, :3] == 0).all()


def test_zero_dim_and_non_contiguous():
    values = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2].T
    mask = (values % 3) == 0
    assert np.array_equal(CPU.zero_where(mask, values), _reference(mask, values))
    t = gputorch.tensor(-2.0, requires_grad=True)
    t.relu().backward()
    assert t.grad.shape == () and t.grad.item() == 0.0
    t = gputorch.tensor(3.0, requires_grad=True)
    t.relu().backward()
    assert t.grad.item() == 1.0


def test_other_dtypes_and_broadcast_masks_use_where():
    values = np.arange(6, dtype=np.int64).reshape(2, 3)
    mask = np.array([True, False, True])
    assert np.array_equal(CPU.zero_where(mask, values), _reference(mask, values))
    assert np.array_equal(Backend.zero_where(CPU, mask, values.astype(np.float32)),
                          _reference(mask, values.astype(np.float32)))


def test_relu_gradient_passes_nan_inputs_and_blocks_inf_gradients():
    x = gputorch.tensor([-1.0, 0.0, 2.0, float("nan")], requires_grad=True)
    x.relu().backward(gputorch.tensor([float("inf"), float("nan"), 5.0, 7.0]))
    assert x.grad.tolist()[:3] == [0.0, 0.0, 5.0]
    assert x.grad.tolist()[3] == 7.0    # torch: relu(NaN) is NaN and passes its gradient
