"""``gputorch.fft``: values against NumPy's transforms (an independent implementation), the norm
modes, signal sizes, gradients by gradcheck (every primitive and the composed N-D transforms, twice
differentiable), frequencies and shifts, and PyTorch's errors."""
import numpy as np
import pytest

import gputorch as T
from gputorch.autograd import gradcheck, gradgradcheck
from tests._helpers import assert_close

RNG = np.random.default_rng(7)
REAL = RNG.standard_normal((3, 4, 5))
CPLX = REAL + 1j * RNG.standard_normal((3, 4, 5))


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("name,data,kw,np_kw", [
    ("fft", CPLX, {}, {}), ("ifft", CPLX, {"n": 7, "dim": 1}, {"n": 7, "axis": 1}),
    ("rfft", REAL, {"n": 4}, {"n": 4}), ("irfft", CPLX, {}, {}), ("irfft", CPLX, {"n": 9, "dim": 0}, {"n": 9, "axis": 0}),
    ("hfft", CPLX, {"n": 6}, {"n": 6}), ("ihfft", REAL, {"dim": 1}, {"axis": 1}),
    ("fft2", CPLX, {"s": (3, 6)}, {"s": (3, 6), "axes": (-2, -1)}), ("ifftn", CPLX, {"dim": (0, 2)}, {"axes": (0, 2)}),
    ("rfftn", REAL, {}, {}), ("rfft2", REAL, {"dim": (0, 1)}, {"axes": (0, 1)}),
    ("irfftn", CPLX, {"s": (4, 7)}, {"s": (4, 7), "axes": (-2, -1)}), ("irfft2", CPLX, {}, {}),
], ids=lambda v: v if isinstance(v, str) else None)
def test_values_match_numpy(device, name, data, kw, np_kw, norm):
    got = getattr(T.fft, name)(T.tensor(data, device=device), norm=norm, **kw)
    expected = getattr(np.fft, name)(data, norm=norm, **np_kw)
    assert got.dtype is (T.complex128 if np.iscomplexobj(expected) else T.float64)
    assert_close(got, expected, rtol=1e-10, atol=1e-10)


def test_hermitian_nd_and_single_precision(device):
    # hfftn is the forward transform of the Hermitian signal: irfftn of the conjugate, unnormalised
    x = T.tensor(CPLX, device=device)
    expected = np.fft.irfftn(np.conj(CPLX), norm="forward")
    assert_close(T.fft.hfftn(x), expected, rtol=1e-10, atol=1e-10)
    assert_close(T.fft.ihfftn(T.tensor(REAL, device=device)), np.conj(np.fft.rfftn(REAL, norm="forward")),
                 rtol=1e-10, atol=1e-10)
    single = T.fft.fft(T.tensor(REAL, dtype=T.float32, device=device))
    assert single.dtype is T.complex64
    assert_close(single, np.fft.fft(REAL), rtol=1e-4, atol=1e-4, check_dtype=False)
    assert T.fft.rfft(T.arange(4, device=device)).dtype is T.complex64   # integers: default float


@pytest.mark.parametrize("fn,complex_input", [
    (lambda a: T.fft.fft(a, n=5), True), (lambda a: T.fft.ifft(a, dim=0, norm="ortho"), True),
    (lambda a: T.fft.rfft(a), False), (lambda a: T.fft.rfft(a, n=3, norm="forward"), False),
    (lambda a: T.fft.irfft(a), True), (lambda a: T.fft.irfft(a, n=5), True),
    (lambda a: T.fft.hfft(a, n=4, norm="ortho"), True), (lambda a: T.fft.ihfft(a), False),
    (lambda a: T.fft.rfftn(a), False), (lambda a: T.fft.irfftn(a, s=(2, 3)), True),
    (lambda a: T.fft.hfft2(a), True), (lambda a: T.fft.fftn(a, s=(3, 2, 2)), True),
], ids=["fft", "ifft", "rfft", "rfft_n", "irfft", "irfft_odd", "hfft", "ihfft", "rfftn", "irfftn", "hfft2",
        "fftn"])
def test_gradcheck(device, fn, complex_input):
    dtype = T.complex128 if complex_input else T.float64
    a = T.randn(2, 3, 4, dtype=dtype, device=device, requires_grad=True)
    assert gradcheck(fn, (a,))


def test_gradgradcheck(device):
    a = T.randn(3, 4, dtype=T.float64, device=device, requires_grad=True)
    assert gradgradcheck(lambda x: T.fft.irfft(T.fft.rfft(x) ** 2, n=4), (a,))


def test_frequencies_and_shifts(device):
    assert_close(T.fft.fftfreq(5, 0.1, device=device), np.fft.fftfreq(5, 0.1).astype(np.float32))
    assert_close(T.fft.fftfreq(6, dtype=T.float64, device=device), np.fft.fftfreq(6))
    assert_close(T.fft.rfftfreq(7, 2.0, dtype=T.float64, device=device), np.fft.rfftfreq(7, 2.0))
    x = T.tensor(REAL, device=device)
    assert_close(T.fft.fftshift(x), np.fft.fftshift(REAL))
    assert_close(T.fft.ifftshift(x, dim=(0, 2)), np.fft.ifftshift(REAL, axes=(0, 2)))
    assert_close(T.fft.ifftshift(T.fft.fftshift(x, 1), 1), REAL)


def test_errors(device):
    x = T.tensor(REAL, device=device)
    with pytest.raises(RuntimeError, match='Invalid normalization mode: "sideways"'):
        T.fft.fft(x, norm="sideways")
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        T.fft.fft(x, n=0)
    with pytest.raises(RuntimeError, match="rfft expects a real-valued input tensor, but got ComplexDouble"):
        T.fft.rfft(T.tensor(CPLX, device=device))
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        T.fft.fft(x.half())
    with pytest.raises(RuntimeError, match="FFT dims must be unique"):
        T.fft.fftn(x, dim=(0, 0))
    with pytest.raises(IndexError, match="Dimension out of range"):
        T.fft.fft(x, dim=3)
    with pytest.raises(RuntimeError, match="rfftn must transform at least one axis"):
        T.fft.rfftn(T.tensor(2.0, device=device))
