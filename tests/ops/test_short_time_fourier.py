"""``stft``/``istft``: frames against a direct NumPy computation (pad, frame, window, transform),
the round trip, gradients (gradcheck), and PyTorch's argument errors."""
import warnings

import numpy as np
import pytest

import gputorch as T
from gputorch.autograd import gradcheck
from tests._helpers import assert_close

RNG = np.random.default_rng(3)
SIGNAL = RNG.standard_normal((2, 50))


def _numpy_stft(x, n_fft, hop, window, center, pad_mode, onesided):
    if center:
        x = np.pad(x, [(0, 0), (n_fft // 2, n_fft // 2)], mode={"constant": "constant", "reflect": "reflect",
                                                                  "replicate": "edge", "circular": "wrap"}[pad_mode])
    count = 1 + (x.shape[-1] - n_fft) // hop
    frames = np.stack([x[:, i * hop:i * hop + n_fft] * window for i in range(count)], 1)
    spectrum = np.fft.rfft(frames, axis=-1) if onesided else np.fft.fft(frames, axis=-1)
    return np.swapaxes(spectrum, -1, -2)


@pytest.mark.parametrize("n_fft,hop,win_length,center,pad_mode", [
    (16, 4, None, True, "reflect"), (15, 5, 9, True, "constant"), (8, 3, None, False, "reflect"),
    (10, 2, 10, True, "replicate"), (12, 6, 7, True, "circular"),
])
def test_stft_matches_numpy(device, n_fft, hop, win_length, center, pad_mode):
    win_length = win_length or n_fft
    window = np.hanning(win_length + 1)[:-1]
    left = (n_fft - win_length) // 2
    full = np.zeros(n_fft)
    full[left:left + win_length] = window
    got = T.stft(T.tensor(SIGNAL, device=device), n_fft, hop, win_length,
                 T.tensor(window, device=device), center=center, pad_mode=pad_mode, return_complex=True)
    assert_close(got, _numpy_stft(SIGNAL, n_fft, hop, full, center, pad_mode, True), rtol=1e-10, atol=1e-10)
    complex_signal = SIGNAL + 1j * SIGNAL[::-1]
    got = T.stft(T.tensor(complex_signal, device=device), n_fft, hop, win_length, T.tensor(window, device=device),
                 center=center, pad_mode=pad_mode, onesided=False)
    expected = _numpy_stft(complex_signal, n_fft, hop, full, center, pad_mode, False)
    assert_close(got, expected, rtol=1e-10, atol=1e-10)


def test_round_trip_and_shapes(device):
    x = T.tensor(SIGNAL, device=device)
    w = T.hann_window(16, dtype=T.float64, device=device)
    spec = T.stft(x, 16, 4, window=w, return_complex=True)
    assert spec.shape == (2, 9, 13) and spec.dtype is T.complex128
    assert_close(T.istft(spec, 16, 4, window=w, length=50), SIGNAL, rtol=1e-10, atol=1e-10)
    assert_close(x[0].stft(16, 4, window=w, return_complex=True), spec[0].cpu())
    real_view = T.stft(x[0], 16, 4, window=w, return_complex=False)
    assert real_view.shape == (9, 13, 2)
    normalized = T.stft(x, 16, 4, window=w, normalized=True, return_complex=True)
    assert_close(normalized, spec.cpu().numpy() / 4, rtol=1e-12, atol=1e-12)
    assert_close(T.istft(normalized, 16, 4, window=w, normalized=True, length=50), SIGNAL, rtol=1e-10, atol=1e-10)


def test_gradients(device):
    w = T.hann_window(8, dtype=T.float64, device=device)
    s = T.tensor(SIGNAL[0, :30], device=device, requires_grad=True)
    assert gradcheck(lambda v: T.stft(v, 8, 3, window=w, return_complex=True), (s,))
    spec = T.stft(s.detach(), 8, 2, window=w, return_complex=True).requires_grad_()
    assert gradcheck(lambda z: T.istft(z, 8, 2, window=w, length=30), (spec,))


def test_errors(device):
    x = T.tensor(SIGNAL, device=device)
    with pytest.raises(RuntimeError, match="stft requires the return_complex parameter"):
        T.stft(x, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="expected 0 < win_length <= n_fft"):
            T.stft(x, 8, win_length=9, return_complex=True)
        with pytest.raises(RuntimeError, match="hop_length > 0"):
            T.stft(x, 8, hop_length=0, return_complex=True)
    with pytest.raises(RuntimeError, match="istft requires a complex-valued input tensor"):
        T.istft(x, 8)
    spec = T.stft(x, 16, 4, window=T.ones(16, dtype=T.float64, device=device), return_complex=True)
    with pytest.raises(RuntimeError, match="match n_fft / 2 \\+ 1"):
        T.istft(spec, 18, 4)
    with pytest.raises(RuntimeError, match="window overlap add min"):
        T.istft(spec, 16, 4, window=T.zeros(16, dtype=T.float64, device=device))
