"""Window functions against NumPy's own (symmetric) windows; the periodic form is the symmetric
window one sample longer without its last sample."""
import numpy as np
import pytest

import gputorch as T
from tests._helpers import assert_close

NUMPY = {"hann_window": np.hanning, "hamming_window": np.hamming, "blackman_window": np.blackman,
         "bartlett_window": np.bartlett, "kaiser_window": lambda n: np.kaiser(n, 12.0)}


@pytest.mark.parametrize("name", sorted(NUMPY))
@pytest.mark.parametrize("length", [0, 1, 2, 7, 16])
def test_matches_numpy(device, name, length):
    fn = getattr(T, name)
    symmetric = fn(length, periodic=False, dtype=T.float64, device=device)
    periodic = fn(length, dtype=T.float64, device=device)
    expected = NUMPY[name](length) if length > 1 else np.ones(length)
    assert_close(symmetric, expected, rtol=1e-12, atol=1e-12)
    expected = NUMPY[name](length + 1)[:-1] if length > 1 else np.ones(length)
    assert_close(periodic, expected, rtol=1e-12, atol=1e-12)
    assert fn(length, device=device).dtype is T.float32
    assert str(periodic.device).startswith(device)


def test_hamming_coefficients_and_errors(device):
    w = T.hamming_window(9, False, alpha=0.6, beta=0.4, dtype=T.float64, device=device)
    n = np.arange(9)
    assert_close(w, 0.6 - 0.4 * np.cos(2 * np.pi * n / 8), rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match="hann_window expects floating point dtypes"):
        T.hann_window(4, dtype=T.int64)
    with pytest.raises(RuntimeError, match="requires non-negative window_length, got window_length=-1"):
        T.blackman_window(-1)
    assert T.hann_window(4, requires_grad=True).requires_grad
