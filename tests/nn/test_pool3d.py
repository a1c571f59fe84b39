"""3-D pooling (max, avg, adaptive avg/max), max unpooling (1-D to 3-D) and LP pooling (1-D to 3-D),
functional and modules: parity with torch (values, indices, gradients, float64), gradcheck of the
new ops and their double backward, reprs and errors. Sizes stay tiny."""
import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.nn import functional as F
from tests._helpers import assert_close

RTOL, ATOL = 1e-10, 1e-12


def _torch():
    return pytest.importorskip("torch")


def _t(array, device, requires_grad=True):
    return gputorch.tensor(array, device=device, requires_grad=requires_grad)


def _parity(ours_fn, ref_fn, device, *arrays):
    """Same float64 inputs (the first differentiable) through both; compares outputs (and indices
    when a pair comes back) and the first input's gradient."""
    torch = _torch()
    ours_in = [_t(a, device, a.dtype == np.float64) for a in arrays]
    ref_in = [torch.tensor(a, requires_grad=a.dtype == np.float64) for a in arrays]
    out, expected = ours_fn(*ours_in), ref_fn(*ref_in)
    if isinstance(expected, tuple):
        assert_close(out[1], expected[1], 0, 0)
        out, expected = out[0], expected[0]
    assert_close(out, expected, RTOL, ATOL)
    g = np.random.randn(*expected.shape)
    out.backward(gputorch.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    assert_close(ours_in[0].grad, ref_in[0].grad, RTOL, ATOL)
    return out


MAX_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), padding=1, dilation=(1, 2, 1), ceil_mode=True, return_indices=True),
    dict(kernel_size=3, stride=2, ceil_mode=True, return_indices=True),
]


@pytest.mark.parametrize("kwargs", MAX_CASES)
def test_max_pool3d_parity(device, kwargs):
    torch = _torch()
    x = np.random.randn(2, 2, 5, 6, 5)
    out = _parity(lambda t: F.max_pool3d(t, **kwargs), lambda t: torch.nn.functional.max_pool3d(t, **kwargs),
                  device, x)
    assert out.grad_fn.name() == "MaxPool3DWithIndicesBackward0"


def test_max_pool3d_unbatched_and_ties(device):
    torch = _torch()
    x = np.round(np.random.randn(2, 4, 4, 5))       # many ties: the first position wins
    _parity(lambda t: F.max_pool3d(t, 2, 1, return_indices=True),
            lambda t: torch.nn.functional.max_pool3d(t, 2, 1, return_indices=True), device, x)


AVG_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), padding=1, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=3, stride=2, padding=1, divisor_override=5),
]


@pytest.mark.parametrize("kwargs", AVG_CASES)
def test_avg_pool3d_parity(device, kwargs):
    torch = _torch()
    x = np.random.randn(2, 2, 5, 6, 5)
    out = _parity(lambda t: F.avg_pool3d(t, **kwargs), lambda t: torch.nn.functional.avg_pool3d(t, **kwargs),
                  device, x)
    assert out.grad_fn.name() == "AvgPool3DBackward0"


@pytest.mark.parametrize("size", [(2, 3, 2), 3, (None, 4, 1), 1])
def test_adaptive_pool3d_parity(device, size):
    torch = _torch()
    x = np.random.randn(2, 2, 5, 6, 5)
    _parity(lambda t: F.adaptive_avg_pool3d(t, size), lambda t: torch.nn.functional.adaptive_avg_pool3d(t, size),
            device, x)
    _parity(lambda t: F.adaptive_max_pool3d(t, size, True),
            lambda t: torch.nn.functional.adaptive_max_pool3d(t, size, True), device, x)
    _parity(lambda t: F.adaptive_avg_pool3d(t, size), lambda t: torch.nn.functional.adaptive_avg_pool3d(t, size),
            device, x[0])


def test_pool3d_gradcheck_and_gradgradcheck(device):
    x = _t(np.random.randn(1, 2, 3, 4, 3), device)
    for fn in (lambda t: F.max_pool3d(t, 2, 1, padding=1),
               lambda t: F.avg_pool3d(t, 2, (1, 2, 1), padding=1, count_include_pad=False),
               lambda t: F.adaptive_avg_pool3d(t, (2, 3, 2)),
               lambda t: F.adaptive_max_pool3d(t, (2, 3, 2))):
        assert gradcheck(fn, (x,))
        assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_parity(device, n):
    torch = _torch()
    x = np.random.randn(*(2, 2) + (5,) * n)
    pool = getattr(torch.nn.functional, f"max_pool{n}d")
    y, i = pool(torch.tensor(x), 3, 2, 1, return_indices=True)
    ours, ref = getattr(F, f"max_unpool{n}d"), getattr(torch.nn.functional, f"max_unpool{n}d")
    _parity(lambda a, b: ours(a, b, 3, 2, 1), lambda a, b: ref(a, b, 3, 2, 1), device, y.numpy(), i.numpy())
    size = tuple(s + 1 for s in x.shape[-n:])
    _parity(lambda a, b: ours(a, b, 3, 2, 1, size), lambda a, b: ref(a, b, 3, 2, 1, size), device,
            y.numpy(), i.numpy())
    _parity(lambda a, b: ours(a, b, 3, 2, 1), lambda a, b: ref(a, b, 3, 2, 1), device, y[0].numpy(), i[0].numpy())


@pytest.mark.parametrize("n", [1, 2, 3])
def test_lp_pool_parity(device, n):
    torch = _torch()
    x = np.abs(np.random.randn(*(2, 2) + (5,) * n)) + 0.1
    ours, ref = getattr(F, f"lp_pool{n}d"), getattr(torch.nn.functional, f"lp_pool{n}d")
    for p, kwargs in ((2, dict(kernel_size=2)), (1.5, dict(kernel_size=3, stride=2, ceil_mode=True))):
        _parity(lambda t: ours(t, p, **kwargs), lambda t: ref(t, p, **kwargs), device, x)


def test_pool3d_modules_parity_and_repr(device):
    torch = _torch()
    x = np.random.randn(1, 2, 4, 5, 4)
    x1, x2 = np.abs(x[0, :, 0]) + 0.1, np.abs(x[0]) + 0.1
    cases = [
        (nn.MaxPool3d(2, 1, 1, return_indices=True), torch.nn.MaxPool3d(2, 1, 1, return_indices=True), x),
        (nn.AvgPool3d(3, 2, 1, ceil_mode=True), torch.nn.AvgPool3d(3, 2, 1, ceil_mode=True), x),
        (nn.AdaptiveAvgPool3d((2, None, 3)), torch.nn.AdaptiveAvgPool3d((2, None, 3)), x),
        (nn.AdaptiveMaxPool3d(2, return_indices=True), torch.nn.AdaptiveMaxPool3d(2, return_indices=True), x),
        (nn.LPPool3d(2, 2), torch.nn.LPPool3d(2, 2), np.abs(x) + 0.1),
        (nn.LPPool1d(1.5, 3, 2, ceil_mode=True), torch.nn.LPPool1d(1.5, 3, 2, ceil_mode=True), x1),
        (nn.LPPool2d(2, (2, 3)), torch.nn.LPPool2d(2, (2, 3)), x2),
    ]
    for ours, ref, data in cases:
        assert repr(ours) == repr(ref)
        _parity(ours, ref, device, data)
    for ours, ref in ((nn.MaxUnpool1d(2, stride=1), torch.nn.MaxUnpool1d(2, stride=1)),
                      (nn.MaxUnpool2d(2), torch.nn.MaxUnpool2d(2)),
                      (nn.MaxUnpool3d((2, 1, 2), padding=1), torch.nn.MaxUnpool3d((2, 1, 2), padding=1))):
        assert repr(ours) == repr(ref)
    y, i = torch.nn.functional.max_pool3d(torch.tensor(x), 2, return_indices=True)
    _parity(lambda a, b: nn.MaxUnpool3d(2)(a, b, output_size=x.shape), lambda a, b: torch.nn.MaxUnpool3d(2)(
        a, b, output_size=x.shape), device, y.numpy(), i.numpy())


def test_pool3d_errors():
    x = gputorch.randn(1, 2, 4, 4, 4)
    with pytest.raises(RuntimeError, match="non-empty 4D or 5D \\(batch mode\\) tensor expected for input"):
        F.max_pool3d(x[0, 0], 2)
    with pytest.raises(RuntimeError, match="max_pool3d: kernel_size must either be a single int, or a tuple of "
                                           "three ints"):
        F.max_pool3d(x, (2, 2))
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size, but got pad=2"):
        F.max_pool3d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="Given input size: \\(2x4x4x4\\). Calculated output size: "
                                           "\\(2x0x0x0\\). Output size is too small"):
        F.max_pool3d(x, 5)
    with pytest.raises(RuntimeError, match="stride should not be zero"):
        F.avg_pool3d(x, 2, stride=0)
    with pytest.raises(RuntimeError, match="dilation should be greater than zero, but got dilationT: 0"):
        F.max_pool3d(x, 2, dilation=0)
    with pytest.raises(RuntimeError, match="input image \\(T: 4 H: 4 W: 4\\) smaller than kernel size"):
        F.avg_pool3d(x, 5)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        F.avg_pool3d(x, 2, divisor_override=0)
    with pytest.raises(RuntimeError, match="adaptive_avg_pool3d\\(\\): Expected 4D or 5D tensor, but got "
                                           "\\[4, 4, 4\\]"):
        F.adaptive_avg_pool3d(x[0, 0], 2)
    with pytest.raises(RuntimeError, match="adaptive_avg_pool3d: output_size must be 3"):
        F.adaptive_avg_pool3d(x, (2, 2))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        F.adaptive_avg_pool3d(x.long(), 2)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        F.adaptive_max_pool3d(x.long(), 2)
    with pytest.raises(NotImplementedError, match="not implemented for 'Int'"):
        F.avg_pool3d(x.int(), 2)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        F.max_pool3d(x > 0, 2)
    assert F.avg_pool3d(x.long(), 2).dtype == gputorch.int64
    with pytest.raises(RuntimeError, match="expected input of shape \\(N, C, D, H, W\\)"):
        nn.MaxPool3d(2)(x[0, 0])


def test_max_unpool_errors():
    x = gputorch.randn(1, 2, 4, 4)
    y, i = F.max_pool2d(x, 2, return_indices=True)
    with pytest.raises(ValueError, match='invalid output_size "\\(6, 6\\)" \\(dim 0 must be between 2 and 6\\)'):
        F.max_unpool2d(y, i, 2, output_size=(6, 6))
    with pytest.raises(ValueError, match="output_size should be a sequence containing 2 or 4 elements"):
        F.max_unpool2d(y, i, 2, output_size=(5,))
    first = int(i.reshape(-1)[0]) + 100
    with pytest.raises(RuntimeError, match=f"Found an invalid max index: {first} \\(output volumes are of size 4x4\\)"):
        F.max_unpool2d(y, i + 100, 2)
    with pytest.raises(RuntimeError, match="elements in indices should be type int64 but got: Float"):
        F.max_unpool2d(y, i.float(), 2)
    with pytest.raises(RuntimeError, match="Expected shape of indices to be same as that of the input tensor"):
        F.max_unpool2d(y, i[..., :1], 2)


def test_pool3d_empty_batch(device):
    x = gputorch.zeros(0, 2, 4, 4, 4, device=device, requires_grad=True)
    out, idx = F.max_pool3d(x, 2, return_indices=True)
    results = [out, F.avg_pool3d(x, 2), F.adaptive_avg_pool3d(x, 2), F.adaptive_max_pool3d(x, 2),
               F.max_unpool3d(out, idx, 2), F.lp_pool3d(x, 2, 2)]
    assert [tuple(r.shape) for r in results] == [(0, 2, 2, 2, 2)] * 4 + [(0, 2, 4, 4, 4), (0, 2, 2, 2, 2)]
    sum(r.sum() for r in results).backward()
    assert tuple(x.grad.shape) == (0, 2, 4, 4, 4)
