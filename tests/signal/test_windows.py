"""``gputorch.signal.windows`` (``gputorch/signal/windows.py``), against values written from the
formulas with NumPy (random cases against torch: tests/differential/test_complex_vs_torch.py)."""
import math

import numpy as np
import pytest

import gputorch
from gputorch.signal import windows
from tests._helpers import assert_close


def _n(M, sym):
    return np.arange(M, dtype=np.float64), (M if sym else M + 1)


@pytest.mark.parametrize("sym", [True, False])
def test_windows_follow_their_formulas(device, sym):
    M = 7
    n, N = _n(M, sym)
    k = n - (N - 1) / 2
    expected = {
        "gaussian": (dict(std=1.5), np.exp(-k ** 2 / (2 * 1.5 ** 2))),
        "cosine": ({}, np.sin(np.pi * (n + 0.5) / N)),
        "bartlett": ({}, 1 - np.abs(2 * n / (N - 1) - 1)),
        "hann": ({}, 0.5 - 0.5 * np.cos(2 * np.pi * n / (N - 1))),
        "general_hamming": (dict(alpha=0.7), 0.7 - 0.3 * np.cos(2 * np.pi * n / (N - 1))),
        "blackman": ({}, 0.42 - 0.5 * np.cos(2 * np.pi * n / (N - 1)) + 0.08 * np.cos(4 * np.pi * n / (N - 1))),
        "kaiser": (dict(beta=4.0), np.i0(4.0 * np.sqrt(np.clip(1 - (k / ((N - 1) / 2)) ** 2, 0, None))) / np.i0(4.0)),
    }
    if not sym:
        expected["exponential"] = (dict(center=2.0, tau=3.0), np.exp(-np.abs(n - 2.0) / 3.0))
    for name, (options, values) in expected.items():
        got = getattr(windows, name)(M, sym=sym, dtype=gputorch.float64, device=device, **options)
        assert got.device.type == device
        assert_close(got, values, rtol=1e-12, atol=1e-12)


def test_short_windows_dtypes_and_the_top_level_alias():
    assert gputorch.windows is windows
    assert windows.hann(0).shape == (0,) and windows.kaiser(1).tolist() == [1.0]
    assert windows.exponential(1, center=1.0, sym=False).tolist() == pytest.approx([math.exp(-1.0)])
    assert windows.nuttall(5).dtype == gputorch.get_default_dtype()
    w = windows.gaussian(3, requires_grad=True)
    assert w.requires_grad and w.grad_fn is not None


@pytest.mark.parametrize("call, error, message", [
    (lambda: windows.hann(-1), ValueError, "non-negative window length"),
    (lambda: windows.hann(3, dtype=gputorch.int64), ValueError, "float32 or float64"),
    (lambda: windows.hann(3, layout=gputorch.sparse_coo), ValueError, "strided"),
    (lambda: windows.gaussian(3, std=0.0), ValueError, "Standard deviation"),
    (lambda: windows.exponential(3, center=1.0), ValueError, "symmetric"),
    (lambda: windows.exponential(3, tau=-1.0), ValueError, "Tau"),
    (lambda: windows.kaiser(3, beta=-1.0), ValueError, "beta"),
    (lambda: windows.general_cosine(3, a=0.5), TypeError, "list/tuple"),
    (lambda: windows.general_cosine(3, a=[]), ValueError, "empty"),
])
def test_bad_arguments_raise_pytorchs_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()
