"""GradScaler's multi-tensor inf/NaN check and unscale (``kernels/amp.cu``) on the CPU execution
harness, against the generic path (NumPy): the same bits for float16/32/64, several tensors and
dtypes in one call, sizes across chunk boundaries, empty tensors, infs and NaNs found."""
import numpy as np
import pytest

from gputorch.amp.grad_scaler import non_finite_check_and_unscale as generic
from gputorch.cuda.kernels import amp
from tests.cuda._harness import harness  # noqa: F401 (an autouse fixture)


def _arrays(seed, poison=None):
    rng = np.random.default_rng(seed)
    sizes = [(1,), (0,), (300,), (amp.CHUNK + 37,), (7, 5)]
    arrays = []
    for i, shape in enumerate(sizes):
        dtype = (np.float16, np.float32, np.float64)[i % 3]
        arrays.append((rng.standard_normal(shape) * 1e3).astype(dtype))
    if poison is not None:
        index, value = poison
        arrays[index].reshape(-1)[-1] = value
    return arrays


def _run(fn, arrays, scale):
    found = np.zeros((), np.float32)
    inv = np.asarray(1.0 / scale, np.float32).reshape(())
    fn(np, arrays, found, inv)
    return found


@pytest.mark.parametrize("poison", [None, (0, np.inf), (3, np.nan), (4, -np.inf), (2, np.nan)])
def test_kernel_matches_the_generic_path(poison):
    ours, expected = _arrays(1, poison), _arrays(1, poison)
    kernel = lambda xp, arrays, found, inv: amp.non_finite_check_and_unscale(xp, arrays, found, inv,  # noqa: E731
                                                                            generic=generic)
    found = _run(kernel, ours, 2.0 ** 13)
    found_ref = _run(generic, expected, 2.0 ** 13)
    assert float(found) == float(found_ref) == (0.0 if poison is None else 1.0)
    for a, b in zip(ours, expected):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)      # same bits (NaN where NaN)


def test_half_gradients_are_scaled_in_float32_then_rounded():
    """float16 values times an inverse scale that is no power of two: each product is computed in
    float32 and rounded once, within half precision of the float32 reference."""
    x = (np.random.default_rng(2).standard_normal(1000) * 100).astype(np.float16)
    ref = x.astype(np.float32) * np.float32(np.float16(1 / 3.0))
    found = _run(lambda xp, a, f, i: amp.non_finite_check_and_unscale(xp, a, f, i, generic=generic), [x], 3.0)
    assert float(found) == 0.0
    np.testing.assert_allclose(x.astype(np.float32), ref, rtol=2 ** -10, atol=0)
