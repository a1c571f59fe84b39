"""conv3d / conv_transpose3d and Conv3d / ConvTranspose3d: parity with torch (forward and
input/weight/bias grads, float64), gradcheck and second derivatives, padding modes, reprs and
errors. Sizes stay tiny: the simulated GPU is slow."""
import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.nn import functional as F
from tests._helpers import assert_close
from tests.nn._models import copy_state

RTOL, ATOL = 1e-10, 1e-12
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")


def _torch():
    return pytest.importorskip("torch")


def _t(array, device, requires_grad=True):
    return gputorch.tensor(array, dtype=gputorch.float64, device=device, requires_grad=requires_grad)


def _parity(fname, device, x_shape, w_shape, bias=True, **kwargs):
    torch = _torch()
    data = [np.random.randn(*x_shape), np.random.randn(*w_shape)]
    if bias:
        data.append(np.random.randn(w_shape[1] * kwargs.get("groups", 1) if "transpose" in fname else w_shape[0]))
    ours = [_t(a, device) for a in data]
    ref = [torch.tensor(a, requires_grad=True) for a in data]
    out = getattr(F, fname)(*ours, **kwargs)
    expected = getattr(torch.nn.functional, fname)(*ref, **kwargs)
    assert_close(out, expected, RTOL, ATOL)
    g = np.random.randn(*expected.shape)
    out.backward(gputorch.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    for a, b in zip(ours, ref):
        assert_close(a.grad, b.grad, RTOL, ATOL)
    return out


CONV3D_CASES = [
    dict(),
    dict(stride=(2, 1, 2), padding=(1, 0, 2), dilation=(1, 2, 1)),
    dict(padding="same", groups=2),
    dict(padding="valid", stride=2),
]


@pytest.mark.parametrize("kwargs", CONV3D_CASES)
def test_conv3d_parity(device, kwargs):
    groups = kwargs.get("groups", 1)
    out = _parity("conv3d", device, (2, 2, 5, 4, 5), (3 * groups, 2 // groups, 3, 2, 3), **kwargs)
    assert out.grad_fn.name() == "ConvolutionBackward0"


def test_conv3d_unbatched_no_bias(device):
    _parity("conv3d", device, (2, 4, 4, 4), (3, 2, 2, 2, 2), bias=False, padding=1)


TRANSPOSE3D_CASES = [
    dict(),
    dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), output_padding=(1, 0, 1)),
    dict(stride=2, groups=2, output_padding=1),
]


@pytest.mark.parametrize("kwargs", TRANSPOSE3D_CASES)
def test_conv_transpose3d_parity(device, kwargs):
    _parity("conv_transpose3d", device, (2, 4, 3, 4, 3), (4, 2, 3, 2, 2), **kwargs)


def test_conv3d_gradcheck_and_gradgradcheck(device):
    x = _t(np.random.randn(1, 2, 3, 3, 4), device)
    w = _t(np.random.randn(2, 1, 2, 2, 2), device)
    b = _t(np.random.randn(2), device)
    fn = lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1, groups=2)  # noqa: E731
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))
    wt = _t(np.random.randn(2, 1, 2, 2, 2), device)
    fn_t = lambda x, w: F.conv_transpose3d(x, w, stride=2, padding=1, output_padding=1, groups=2)  # noqa: E731
    assert gradcheck(fn_t, (x, wt))


@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv3d_module_parity(device, padding_mode):
    torch = _torch()
    ref = torch.nn.Conv3d(2, 3, (3, 2, 3), padding=(1, 1, 2), padding_mode=padding_mode).double()
    ours = nn.Conv3d(2, 3, (3, 2, 3), padding=(1, 1, 2), padding_mode=padding_mode, dtype=gputorch.float64,
                     device=device)
    copy_state(ref, ours, gputorch, device)
    assert repr(ours) == repr(ref)
    x = np.random.randn(2, 2, 4, 4, 5)
    xt, xo = torch.tensor(x, requires_grad=True), _t(x, device)
    expected, out = ref(xt), ours(xo)
    assert_close(out, expected, RTOL, ATOL)
    expected.sum().backward()
    out.sum().backward()
    assert_close(xo.grad, xt.grad, RTOL, ATOL)
    assert_close(ours.weight.grad, ref.weight.grad, RTOL, ATOL)
    assert_close(ours.bias.grad, ref.bias.grad, RTOL, ATOL)


def test_conv_transpose3d_module_output_size(device):
    torch = _torch()
    ref = torch.nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1, groups=1).double()
    ours = nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1, dtype=gputorch.float64, device=device)
    copy_state(ref, ours, gputorch, device)
    assert repr(ours) == repr(ref)
    x = np.random.randn(1, 2, 3, 3, 3)
    out = ours(_t(x, device), output_size=(6, 5, 6))
    assert_close(out, ref(torch.tensor(x), output_size=(6, 5, 6)), RTOL, ATOL)
    assert tuple(out.shape) == (1, 3, 6, 5, 6)


def test_conv3d_module_init_shapes_and_bounds():
    m = nn.Conv3d(4, 6, (1, 2, 3), groups=2)
    assert tuple(m.weight.shape) == (6, 2, 1, 2, 3) and tuple(m.bias.shape) == (6,)
    bound = 1 / np.sqrt(2 * 1 * 2 * 3)
    assert float(m.weight.abs().max()) <= bound and float(m.bias.abs().max()) <= bound
    t = nn.ConvTranspose3d(4, 6, 2, groups=2)
    assert tuple(t.weight.shape) == (4, 3, 2, 2, 2)
    assert repr(nn.Conv3d(2, 4, 3, stride=2, padding=1, bias=False, padding_mode="circular")) \
        == "Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1), bias=False, " \
           "padding_mode=circular)"


def test_conv3d_errors():
    x = gputorch.randn(1, 2, 4, 4, 4)
    w = gputorch.randn(2, 2, 2, 2, 2)
    with pytest.raises(RuntimeError, match="Expected 4D \\(unbatched\\) or 5D \\(batched\\) input to conv3d"):
        F.conv3d(x[0, 0], w)
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        F.conv3d(x, gputorch.randn(2, 2, 5, 5, 5))
    with pytest.raises(RuntimeError, match="expected input\\[1, 2, 4, 4, 4\\] to have 3 channels"):
        F.conv3d(x, gputorch.randn(2, 3, 2, 2, 2))
    with pytest.raises(RuntimeError, match="a list of 3 values to match the convolution dimensions"):
        F.conv3d(x, w, stride=(1, 2))
    with pytest.raises(RuntimeError, match="output_padding_depth: 2 output_padding_height: 2 output_padding_width: 2 "
                                           "stride_depth: 2 stride_height: 2 stride_width: 2 dilation_depth: 1"):
        F.conv_transpose3d(x, w, output_padding=2, stride=2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.conv_transpose3d(x, w, padding=5)
    with pytest.raises(RuntimeError, match="expected input of shape \\(N, 2, D, H, W\\)"):
        nn.Conv3d(2, 2, 2)(gputorch.randn(2, 4, 4))
