"""The BLAS pool sized per product: small products on one thread, large ones on the configured count."""
import numpy as np
import pytest

import gputorch
from gputorch.backends import blas_threads
from gputorch.ops._gemm import product, product_size

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_counts():
    return [p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]


@pytest.fixture
def two_threads():
    before = gputorch.get_num_threads()
    gputorch.set_num_threads(2)
    yield
    gputorch.set_num_threads(before)


def test_small_product_runs_on_one_thread_large_on_the_configured_count(two_threads):
    rng = np.random.default_rng(0)
    small_x, small_y = rng.random((16, 256)), rng.random((256, 64))
    np.testing.assert_allclose(product(small_x, small_y), small_x @ small_y)
    assert _blas_counts() and set(_blas_counts()) == {1}
    assert gputorch.get_num_threads() == 2          # the configured count, not the momentary one
    big_x, big_y = rng.random((512, 512), dtype=np.float32), rng.random((512, 512), dtype=np.float32)
    assert product_size(big_x.shape, big_y.shape) >= blas_threads.SMALL_PRODUCT_MACS
    np.testing.assert_allclose(product(big_x, big_y), big_x @ big_y, rtol=1e-5)
    assert set(_blas_counts()) == {2}


def test_tensor_ops_size_the_pool(two_threads):
    a, b = gputorch.randn(8, 32), gputorch.randn(32, 8)
    (a @ b).sum()
    assert set(_blas_counts()) == {1}
    big = gputorch.randn(600, 600)
    expected = big.numpy().astype(np.float64) @ big.numpy().astype(np.float64)
    np.testing.assert_allclose((big @ big).numpy(), expected, rtol=1e-4, atol=1e-3)
    assert set(_blas_counts()) == {2}


def test_one_configured_thread_stays_one(two_threads):
    gputorch.set_num_threads(1)
    x = np.ones((600, 600))
    product(x, x)
    assert set(_blas_counts()) == {1} and gputorch.get_num_threads() == 1


@pytest.mark.parametrize("x_shape, y_shape, macs", [
    ((3, 4), (4, 5), 60),
    ((4,), (4, 5), 20),
    ((3, 4), (4,), 12),
    ((7, 3, 4), (4, 5), 420),
    ((7, 3, 4), (7, 4, 5), 420),
    ((2, 1, 3, 4), (6, 4, 5), 720),
    ((3, 4), (2, 6, 4, 5), 720),
])
def test_product_size_counts_broadcast_batches(x_shape, y_shape, macs):
    assert product_size(x_shape, y_shape) == macs
