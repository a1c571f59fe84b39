"""``kernels/gemm.cu`` (the matrix product used while a CUDA graph is captured) on the CPU
execution harness against NumPy: 2-D, batched and broadcast operands, 1-D operands, transposed
(strided) operands, sizes that are not multiples of the tile, empty and k = 0 products,
float16 (float32 accumulation), float32 and float64. Also the other kernel CUDA graphs add:
dropout reading its Philox (seed, offset) from device memory."""
import numpy as np
import pytest

from gputorch.cuda.kernels import gemm
from tests.cuda._harness import harness  # noqa: F401 (an autouse fixture)

TOL = {np.dtype(np.float32): dict(rtol=2e-5, atol=2e-5), np.dtype(np.float16): dict(rtol=2e-3, atol=2e-3),
       np.dtype(np.float64): dict(rtol=1e-12, atol=1e-12)}


def rand(shape, dtype, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def reference(x, y):
    with np.errstate(invalid="ignore"):
        return _reference(x, y)


def _reference(x, y):
    if x.dtype == np.float16:
        return (x.astype(np.float32) @ y.astype(np.float32)).astype(np.float16)
    return x @ y


def check(x, y):
    out = gemm.matmul(np, x, y)
    expected = reference(x, y)
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_allclose(out.astype(np.float64), expected.astype(np.float64), **TOL[x.dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (5, 7, 3), (17, 33, 18), (32, 16, 48)])
def test_2d(dtype, m, k, n):
    check(rand((m, k), dtype, 0), rand((k, n), dtype, 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transposed_operands_read_through_strides(dtype):
    a = rand((9, 20), dtype, 2)
    b = rand((13, 9), dtype, 3)
    check(a.T, b.T)           # (20, 9) @ (9, 13), both column-major views
    check(a[:, ::2].T, rand((9, 4), dtype, 4))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_batched_and_broadcast(dtype):
    check(rand((3, 5, 7), dtype, 5), rand((3, 7, 4), dtype, 6))
    check(rand((2, 1, 5, 7), dtype, 7), rand((3, 7, 2), dtype, 8))     # batch (2, 3), broadcast
    check(rand((5, 7), dtype, 9), rand((4, 7, 6), dtype, 10))          # 2-D @ batched


def test_vector_operands():
    check(rand((7,), np.float64, 11), rand((7, 3), np.float64, 12))
    check(rand((4, 7), np.float64, 13), rand((7,), np.float64, 14))
    check(rand((7,), np.float64, 15), rand((7,), np.float64, 16))
    check(rand((2, 4, 7), np.float32, 17), rand((7,), np.float32, 18))


def test_empty_and_zero_k():
    check(np.zeros((0, 3), np.float32), np.zeros((3, 4), np.float32))
    check(np.ones((2, 0), np.float32), np.ones((0, 4), np.float32))


def test_refuses_what_it_does_not_take():
    assert gemm.matmul(np, np.ones((2, 2), np.int64), np.ones((2, 2), np.int64)) is None
    assert gemm.matmul(np, np.ones((2, 2), np.float32), np.ones((2, 2), np.float64)) is None


def test_special_values_propagate():
    a = np.array([[np.inf, 1.0], [np.nan, 0.0]], np.float32)
    b = np.array([[1.0, 0.0], [2.0, 1.0]], np.float32)
    check(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_dropout_state_kernel_equals_by_value_kernel(dtype):
    """``dropout_philox_state`` (seed and offset read from device memory, as captured into a CUDA
    graph) draws the mask ``dropout_philox`` draws with the same values passed by value."""
    from gputorch.cuda.kernels import _module, dropout
    from gputorch.cuda.kernels._launch import ctype, f64, i64, u64
    x = rand((301,), dtype, 20)
    seed, base, relative, p = 987654321, 40, 7, 0.3
    expected = dropout.dropout(np, x, p, seed, base + relative)
    out = np.empty_like(x)
    state = np.array([seed, base], dtype=np.uint64)
    args = (x, out, i64(x.size), state, u64(relative), f64(1 - p), dropout.keep_scale(x.dtype, p))
    _module.function(dropout.FAMILY.name, f"dropout_philox_state<{ctype(x.dtype)}>")((2,), (128,), args)
    np.testing.assert_array_equal(out, expected)
