"""Backend.relu (the ReLU forward): the CPU's blockwise maximum against a zero block, and every
backend's result, against NumPy and torch: sizes around the block, -0.0, NaN of both signs,
infinities, non-contiguous and integer inputs."""
import numpy as np
import pytest

import gputorch
from gputorch.backends import get_backend
from gputorch.backends.base import Backend

CPU = get_backend("cpu")
_NEG_NAN32 = np.array([0xFFC00000], np.uint32).view(np.float32)[0]   # x86's default NaN: sign bit set


def _special(dtype, n):
    x = np.random.default_rng(0).standard_normal(n).astype(dtype)
    x[:7] = [-0.0, 0.0, np.inf, -np.inf, np.nan, -1e-45 if dtype == np.float32 else -5e-324, 3.0]
    if dtype == np.float32:
        x[7] = _NEG_NAN32
    return x


def _expected(x):
    """max(x, 0) with PyTorch's -0.0 for -0.0 and NaN for NaN."""
    out = np.where(x > 0, x, np.zeros_like(x))
    out[x == 0] = x[x == 0]
    out[np.isnan(x)] = np.nan
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [10, 4095, 4096, (1 << 16) + 3, 3 * (1 << 16)])
def test_cpu_relu_matches_reference(dtype, n):
    x = _special(dtype, n)
    got = CPU.relu(x)
    want = _expected(x)
    assert got.dtype == x.dtype and got.shape == x.shape and got.base is None
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got[:2]), [True, False])      # -0.0 stays -0.0, as in PyTorch
    assert np.isnan(got[4]) and (dtype != np.float32 or np.isnan(got[7]))


def test_cpu_relu_other_layouts_and_dtypes_take_the_generic_path():
    x = _special(np.float32, 2 * 8192).reshape(128, 128)[:, ::2]      # non-contiguous
    np.testing.assert_array_equal(CPU.relu(x), _expected(x))
    ints = np.arange(-5000, 5000, dtype=np.int32)
    np.testing.assert_array_equal(CPU.relu(ints), np.maximum(ints, 0))
    half = _special(np.float16, 5000)
    np.testing.assert_array_equal(Backend.relu(CPU, half), _expected(half))


def test_relu_op_against_torch(device):
    torch = pytest.importorskip("torch")
    x = _special(np.float32, 70000).reshape(70, 1000)
    got = gputorch.tensor(x, device=device).relu().cpu().numpy()
    want = torch.relu(torch.from_numpy(x)).numpy()
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32)) or \
        (np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(got[~np.isnan(got)], want[~np.isnan(want)]))
    assert np.array_equal(np.signbit(got[0, :2]), np.signbit(want[0, :2]))
