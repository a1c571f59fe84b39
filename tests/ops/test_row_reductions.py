"""ops/row_reductions: the last-axis max (halving tree) and sum (one matrix-vector product) against
NumPy's reductions, with NaN/inf rows, odd and short rows, other axes and dtypes."""
import numpy as np
import pytest

from gputorch.ops.row_reductions import MAX_GEMV_ROW, MIN_GEMV_ROW, row_max, row_sum


@pytest.mark.parametrize("shape", [(5, 128), (2, 3, 96), (7, 2), (4, 33), (3, 1), (2, 0), (6, MAX_GEMV_ROW + 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_against_numpy(shape, dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    if x.size > 4:
        x.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
    if x.shape[-1]:
        got = row_max(x, -1)
        assert got.shape == x.shape[:-1] + (1,) and got.dtype == x.dtype
        np.testing.assert_array_equal(got, x.max(axis=-1, keepdims=True))     # exact, NaN included
    got = row_sum(x, x.ndim - 1)
    expected = x.sum(axis=-1, keepdims=True)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-6 if dtype == np.float32 else 1e-13, atol=1e-4)


def test_other_axes_dtypes_and_layouts_use_numpy():
    x = np.arange(2 * MIN_GEMV_ROW * 3, dtype=np.float32).reshape(2, MIN_GEMV_ROW, 3)
    np.testing.assert_array_equal(row_sum(x, 1), x.sum(axis=1, keepdims=True))
    np.testing.assert_array_equal(row_max(x, 1), x.max(axis=1, keepdims=True))
    h = x.astype(np.float16)
    np.testing.assert_array_equal(row_sum(h, -1), h.sum(axis=-1, keepdims=True))
    t = np.ascontiguousarray(x.transpose(0, 2, 1)).transpose(0, 2, 1)[..., :2]   # non-contiguous rows
    np.testing.assert_array_equal(row_sum(t, -1), t.sum(axis=-1, keepdims=True))
    long_rows = np.ones((3, MIN_GEMV_ROW), np.float32)
    np.testing.assert_array_equal(row_sum(long_rows, -1, rounded_later=True), np.full((3, 1), MIN_GEMV_ROW))


@pytest.mark.parametrize("shape", [(64, 64), (4, 8, 16), (40, 2), (100, 3), (33, 17), (20, 48), (20, 96),
                                   (20, 256), (20, 512), (8, 1000), (2, 3, 7)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_max_every_path_is_exact(shape, dtype):
    """The halving tree down to 16 columns, the transposed-column maximum (even rows up to 256 wide,
    odd rows up to 64), NumPy's loop for longer rows and for a few rows: each exactly NumPy's max,
    with NaN in one row and -inf in another (NaN wins in its row, as in ``max``)."""
    x = (np.random.default_rng(1).standard_normal(shape) * 10).astype(dtype)
    rows = x.reshape(-1, shape[-1])
    rows[0, -1] = np.nan
    rows[-1, 0] = -np.inf
    got = row_max(x, -1)
    assert got.shape == x.shape[:-1] + (1,) and got.dtype == x.dtype
    np.testing.assert_array_equal(got, x.max(axis=-1, keepdims=True))
    assert np.isnan(got.reshape(-1)[0])
