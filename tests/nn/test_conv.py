"""Conv1d/Conv2d/ConvTranspose1d/ConvTranspose2d and their functional forms: parity with torch
(forward, input/weight/bias grads, second derivatives), gradcheck/gradgradcheck, initialisation,
state dicts, reprs, NumPy reference, edge cases and errors."""
import math

import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.nn import functional as F
from tests._helpers import assert_close, to_numpy
from tests.nn._models import copy_state

RTOL, ATOL = 1e-10, 1e-12
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")  # torch warns for even kernels


def _torch():
    return pytest.importorskip("torch")


def _t(array, device, requires_grad=True):
    return gputorch.tensor(array, dtype=gputorch.float64, device=device, requires_grad=requires_grad)


def _parity(fname, device, x_shape, w_shape, bias=True, **kwargs):
    """Run F.<fname> in both frameworks on the same float64 data; compare output and all grads."""
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


# ================================================================ functional parity
CONV2D_CASES = [
    dict(),
    dict(stride=2),
    dict(stride=(2, 1), padding=(1, 2)),
    dict(padding=1, dilation=2),
    dict(padding=(0, 1), dilation=(2, 1), stride=(1, 3)),
    dict(padding="same"),
    dict(padding="same", dilation=(2, 1)),
    dict(padding="valid"),
    dict(groups=2, padding=1),
]


@pytest.mark.parametrize("kwargs", CONV2D_CASES, ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_parity(kwargs, bias, device):
    groups = kwargs.get("groups", 1)
    _parity("conv2d", device, (2, 4, 7, 8), (6, 4 // groups, 3, 2), bias, **kwargs)


def test_conv2d_even_kernel_same_padding_pads_the_end(device):
    _parity("conv2d", device, (2, 3, 6, 5), (2, 3, 4, 2), padding="same")


@pytest.mark.parametrize("groups,out_channels", [(4, 4), (4, 8)], ids=["depthwise", "depthwise-x2"])
def test_conv2d_depthwise_parity(groups, out_channels, device):
    _parity("conv2d", device, (2, 4, 6, 6), (out_channels, 1, 3, 3), groups=groups, padding=1)


def test_conv2d_unbatched_and_1x1(device):
    out = _parity("conv2d", device, (3, 5, 6), (4, 3, 3, 3), padding=1)
    assert out.shape == (4, 5, 6) and out.grad_fn.name() == "SqueezeBackward1"
    _parity("conv2d", device, (2, 3, 5, 6), (4, 3, 1, 1))          # 1x1: the input is its own im2col


@pytest.mark.parametrize("kwargs", [dict(), dict(stride=2, padding=1), dict(dilation=3, padding=2),
                                    dict(padding="same"), dict(groups=3, padding=1)], ids=str)
def test_conv1d_parity(kwargs, device):
    groups = kwargs.get("groups", 1)
    _parity("conv1d", device, (2, 6, 11), (3, 6 // groups, 3), **kwargs)
    _parity("conv1d", device, (6, 11), (3, 6 // groups, 3), bias=False, **kwargs)


CONVT2D_CASES = [
    dict(),
    dict(stride=2),
    dict(stride=2, padding=1, output_padding=1),
    dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2)),
    dict(dilation=2, padding=1),
    dict(stride=2, output_padding=1, dilation=2),
    dict(groups=2, stride=2),
]


@pytest.mark.parametrize("kwargs", CONVT2D_CASES, ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_conv_transpose2d_parity(kwargs, bias, device):
    _parity("conv_transpose2d", device, (2, 4, 5, 4), (4, 3, 3, 2), bias, **kwargs)


def test_conv_transpose2d_unbatched(device):
    out = _parity("conv_transpose2d", device, (4, 5, 4), (4, 3, 3, 3), stride=2)
    assert out.shape == (3, 11, 9)


@pytest.mark.parametrize("kwargs", [dict(), dict(stride=3, padding=1, output_padding=2),
                                    dict(dilation=2, groups=2)], ids=str)
def test_conv_transpose1d_parity(kwargs, device):
    _parity("conv_transpose1d", device, (2, 4, 7), (4, 3, 3), **kwargs)


@pytest.mark.parametrize("transposed", [False, True])
def test_second_derivatives_match_torch(transposed, device):
    """d/d(x, w, g) of <grad_x, v1> + <grad_w, v2> (double backward through ConvolutionBackwardBackward0)."""
    torch = _torch()
    fname = "conv_transpose2d" if transposed else "conv2d"
    kwargs = dict(stride=2, padding=1, groups=2)
    if transposed:
        kwargs["output_padding"] = 1
    xs, ws = (2, 4, 5, 5), ((4, 2, 3, 3) if transposed else (6, 2, 3, 3))
    data = [np.random.randn(*xs), np.random.randn(*ws), np.random.randn(4 if transposed else 6)]
    results = []
    for lib, mk in ((gputorch, lambda a: _t(a, device)), (torch, lambda a: torch.tensor(a, requires_grad=True))):
        x, w, b = (mk(a) for a in data)
        y = getattr(lib.nn.functional, fname)(x, w, b, **kwargs)
        g = mk(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))
        gx, gw, gb = lib.autograd.grad(y, (x, w, b), g, create_graph=True)
        total = (gx * gx).sum() + (gw.sin()).sum() + (gb * gb * gb).sum()
        results.append(lib.autograd.grad(total, (x, w, g)))
    for a, b in zip(*results):
        assert_close(a, b, 1e-9, 1e-11)


# Stride 1 with no more output than input channels: the input gradient (and a stride-1
# transposed convolution's forward) runs as a convolution by the flipped weight, not col2im.
ADJOINT_CASES = [
    ("conv2d", (2, 6, 7, 8), (4, 6, 3, 2), dict(padding=1)),
    ("conv2d", (2, 5, 7, 8), (5, 5, 3, 3), dict(padding="same", dilation=2)),
    ("conv2d", (2, 5, 6, 6), (3, 5, 2, 2), dict(padding="same")),           # asymmetric padding
    ("conv2d", (2, 4, 6, 5), (4, 4, 3, 3), dict(padding=(3, 0))),          # wider than the kernel
    ("conv2d", (2, 4, 6, 5), (2, 4, 1, 1), dict()),
    ("conv1d", (2, 6, 9), (3, 6, 4), dict(padding=2, dilation=2)),
    ("conv3d", (1, 4, 4, 5, 3), (4, 4, 2, 3, 2), dict(padding=1)),
    ("conv_transpose2d", (2, 3, 5, 4), (3, 6, 3, 3), dict(padding=1)),
]


@pytest.mark.parametrize("fname,x_shape,w_shape,kwargs", ADJOINT_CASES, ids=str)
def test_stride1_input_grad_by_adjoint_convolution(fname, x_shape, w_shape, kwargs, device):
    _parity(fname, device, x_shape, w_shape, True, **kwargs)


def test_stride1_input_grad_with_an_infinite_weight_matches_torch(device):
    """The adjoint convolution would multiply the infinite weight by grad's zero padding (NaN);
    such weights take col2im, which adds nothing there, as torch does."""
    torch = _torch()
    x = np.random.randn(1, 4, 5, 5)
    w = np.random.randn(3, 4, 3, 3)
    w[0, 1, 2, 0] = np.inf
    ours = _t(x, device)
    F.conv2d(ours, _t(w, device, False), padding=1).backward(gputorch.ones(1, 3, 5, 5, dtype=gputorch.float64,
                                                                            device=device))
    ref = torch.tensor(x, requires_grad=True)
    torch.nn.functional.conv2d(ref, torch.tensor(w), padding=1).backward(torch.ones(1, 3, 5, 5, dtype=torch.float64))
    got, want = to_numpy(ours.grad), ref.grad.numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isfinite(got).sum() > 0
    np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], rtol=1e-10)


def test_adjoint_weight_flips_and_swaps_channels():
    from gputorch.nn.functional._windows import _adjoint_weight
    w = np.random.randn(4, 3, 2, 3)
    adj = _adjoint_weight(np, w, 1)
    assert adj.shape == (3, 4, 2, 3)
    np.testing.assert_array_equal(adj[2, 1, 0, 0], w[1, 2, 1, 2])
    grouped = _adjoint_weight(np, np.random.randn(4, 1, 3, 3), 2)     # two groups of 2 -> 1 channels
    assert grouped.shape == (2, 2, 3, 3)


# ================================================================ gradcheck / gradgradcheck
@pytest.mark.parametrize("fn,x_shape,w_shape", [
    (lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), (1, 2, 5, 4), (3, 2, 3, 2)),
    (lambda x, w, b: F.conv2d(x, w, b, padding="same", dilation=2, groups=2), (2, 2, 4, 4), (2, 1, 2, 3)),
    (lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=2, dilation=2), (2, 2, 7), (3, 2, 3)),
    (lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1), (1, 2, 3, 3),
     (2, 3, 3, 3)),
    (lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, groups=2), (2, 2, 4), (2, 2, 3)),
], ids=["conv2d", "conv2d-same-dilated-groups", "conv1d", "conv_transpose2d", "conv_transpose1d"])
def test_gradcheck_and_gradgradcheck(fn, x_shape, w_shape, device):
    x, w = _t(np.random.randn(*x_shape), device), _t(np.random.randn(*w_shape), device)
    out_channels = fn(x, w, None).shape[1]
    b = _t(np.random.randn(out_channels), device)
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


# ================================================================ NumPy reference, edge cases
def _numpy_conv2d(x, w, stride, padding):
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    n, c, h, wd = xp.shape
    o, _, kh, kw = w.shape
    ho, wo = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, ho, wo))
    for i in range(ho):
        for j in range(wo):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return out


def test_conv2d_matches_numpy_reference(device):
    x, w = np.random.randn(2, 3, 7, 6), np.random.randn(4, 3, 3, 3)
    out = F.conv2d(_t(x, device, False), _t(w, device, False), stride=2, padding=1)
    assert_close(out, _numpy_conv2d(x, w, 2, 1), RTOL, ATOL)


def test_conv2d_float32_and_noncontiguous_input(device):
    x = np.random.randn(2, 6, 5, 3).astype(np.float32)
    w = np.random.randn(4, 3, 3, 3).astype(np.float32)
    xt = gputorch.tensor(x, device=device).permute(0, 3, 2, 1)      # (2, 3, 5, 6), not contiguous
    assert not xt.is_contiguous()
    out = F.conv2d(xt, gputorch.tensor(w, device=device), padding=1)
    assert out.dtype == gputorch.float32 and out.is_contiguous()
    assert_close(out, _numpy_conv2d(x.transpose(0, 3, 2, 1).astype(np.float64), w.astype(np.float64), 1, 1),
                 1e-4, 1e-4, check_dtype=False)


def test_conv2d_empty_batch(device):
    x = _t(np.zeros((0, 3, 5, 5)), device)
    w = _t(np.random.randn(4, 3, 3, 3), device)
    out = F.conv2d(x, w, padding=1)
    assert out.shape == (0, 4, 5, 5)
    out.sum().backward()
    assert x.grad.shape == (0, 3, 5, 5)
    assert_close(w.grad, np.zeros((4, 3, 3, 3)))


def test_conv_grad_fn_names(device):
    x = _t(np.random.randn(1, 2, 4, 4), device)
    w = _t(np.random.randn(2, 2, 3, 3), device)
    assert F.conv2d(x, w).grad_fn.name() == "ConvolutionBackward0"
    assert F.conv_transpose2d(x, w).grad_fn.name() == "ConvolutionBackward0"
    (gx,) = gputorch.autograd.grad(F.conv2d(x, w).sum(), x, create_graph=True)
    assert gx.grad_fn.name() == "ConvolutionBackwardBackward0"


# ================================================================ modules
@pytest.mark.parametrize("kwargs", [
    dict(), dict(stride=2, padding=1, bias=False), dict(padding="same", dilation=2), dict(groups=2, padding=(1, 0)),
    dict(padding=1, padding_mode="reflect"), dict(padding=(1, 2), padding_mode="replicate"),
    dict(padding=2, padding_mode="circular"), dict(padding="same", padding_mode="reflect"),
], ids=str)
def test_conv2d_module_parity(kwargs, device):
    torch = _torch()
    ref = torch.nn.Conv2d(4, 6, (3, 2), **kwargs).double()
    ours = nn.Conv2d(4, 6, (3, 2), device=device, dtype=gputorch.float64, **kwargs)
    copy_state(ref, ours, gputorch, device)
    assert repr(ours) == repr(ref)
    data = np.random.randn(2, 4, 7, 6)
    x, tx = _t(data, device), torch.tensor(data, requires_grad=True)
    out, expected = ours(x), ref(tx)
    assert_close(out, expected, RTOL, ATOL)
    g = np.random.randn(*expected.shape)
    out.backward(gputorch.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    assert_close(x.grad, tx.grad, RTOL, ATOL)
    for (name, p), (tname, tp) in zip(ours.named_parameters(), ref.named_parameters()):
        assert name == tname
        assert_close(p.grad, tp.grad, RTOL, ATOL)


@pytest.mark.parametrize("cls,kwargs,shape", [
    ("Conv1d", dict(kernel_size=3, stride=2, padding=1), (2, 4, 9)),
    ("Conv1d", dict(kernel_size=4, padding="same", padding_mode="circular"), (4, 9)),
    ("ConvTranspose1d", dict(kernel_size=3, stride=2, output_padding=1, groups=2), (2, 4, 6)),
    ("ConvTranspose2d", dict(kernel_size=(3, 2), stride=2, padding=1, dilation=(1, 2), bias=False), (2, 4, 5, 5)),
    ("ConvTranspose2d", dict(kernel_size=3, groups=4), (4, 3, 3)),
], ids=str)
def test_other_modules_parity(cls, kwargs, shape, device):
    torch = _torch()
    ref = getattr(torch.nn, cls)(4, 8, **kwargs).double()
    ours = getattr(nn, cls)(4, 8, device=device, dtype=gputorch.float64, **kwargs)
    copy_state(ref, ours, gputorch, device)
    assert repr(ours) == repr(ref)
    data = np.random.randn(*shape)
    x, tx = _t(data, device), torch.tensor(data, requires_grad=True)
    out, expected = ours(x), ref(tx)
    assert_close(out, expected, RTOL, ATOL)
    out.sum().backward()
    expected.sum().backward()
    assert_close(x.grad, tx.grad, RTOL, ATOL)
    assert_close(ours.weight.grad, ref.weight.grad, RTOL, ATOL)


@pytest.mark.parametrize("output_size", [[17, 17], [18, 18], [17, 18], [2, 4, 18, 17]])
def test_conv_transpose2d_output_size(output_size, device):
    torch = _torch()
    ref = torch.nn.ConvTranspose2d(4, 4, 3, stride=2).double()
    ours = nn.ConvTranspose2d(4, 4, 3, stride=2, device=device, dtype=gputorch.float64)
    copy_state(ref, ours, gputorch, device)
    data = np.random.randn(2, 4, 8, 8)
    out = ours(_t(data, device, False), output_size=output_size)
    expected = ref(torch.tensor(data), output_size=output_size)
    assert tuple(out.shape) == tuple(expected.shape)
    assert_close(out, expected, RTOL, ATOL)


def test_module_training_steps_match_torch(device):
    """A conv net trained for a few SGD steps: the same losses and weights as torch."""
    torch = _torch()

    def build(lib):
        return lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3, padding=1), lib.nn.Tanh(),
                                 lib.nn.Conv2d(4, 3, 3, stride=2, groups=1), lib.nn.Tanh(),
                                 lib.nn.ConvTranspose2d(3, 2, 3, stride=2, output_padding=1))
    ref = build(torch).double()
    ours = build(gputorch).to(device=device, dtype=gputorch.float64)
    copy_state(ref, ours, gputorch, device)
    for _ in range(3):
        data, target = np.random.randn(4, 2, 8, 8), np.random.randn(4, 2, 8, 8)
        loss = ((ours(_t(data, device, False)) - _t(target, device, False)) ** 2).mean()
        tloss = ((ref(torch.tensor(data)) - torch.tensor(target)) ** 2).mean()
        assert abs(loss.item() - tloss.item()) <= 1e-10 * abs(tloss.item())
        for m in (ours, ref):
            m.zero_grad()
        loss.backward()
        tloss.backward()
        with gputorch.no_grad():
            for p in ours.parameters():
                p -= 0.1 * p.grad
        with torch.no_grad():
            for p in ref.parameters():
                p -= 0.1 * p.grad
    for (k, v), (tk, tv) in zip(ours.state_dict().items(), ref.state_dict().items()):
        assert k == tk
        assert_close(v, tv, 1e-9, 1e-11)


@pytest.mark.parametrize("cls,args,weight_shape", [
    ("Conv1d", (4, 6, 3), (6, 4, 3)),
    ("Conv2d", (4, 6, (3, 2), 1, 0, 1, 2), (6, 2, 3, 2)),
    ("ConvTranspose1d", (4, 6, 3), (4, 6, 3)),
    ("ConvTranspose2d", (4, 6, 3, 1, 0, 0, 2), (4, 3, 3, 3)),
])
def test_parameter_layout_and_state_dict_keys(cls, args, weight_shape, device):
    torch = _torch()
    ours, ref = getattr(nn, cls)(*args, device=device), getattr(torch.nn, cls)(*args)
    assert list(ours.state_dict()) == list(ref.state_dict()) == ["weight", "bias"]
    assert tuple(ours.weight.shape) == tuple(ref.weight.shape) == weight_shape
    assert ours.weight.device.type == device and ours.weight.dtype == gputorch.float32
    # torch's state dict loads as is
    ours.load_state_dict({k: gputorch.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    assert_close(ours.weight, ref.weight.detach(), 0, 0)
    assert getattr(nn, cls)(*args, bias=False).bias is None


def test_default_init_distribution(device):
    gputorch.manual_seed(0)
    m = nn.Conv2d(16, 32, 3, device=device)
    bound = 1 / math.sqrt(16 * 9)          # kaiming_uniform_(a=sqrt(5)) == U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    w, b = to_numpy(m.weight).copy(), to_numpy(m.bias)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert np.abs(b).max() <= bound and b.std() > 0
    t = nn.ConvTranspose2d(16, 8, 3, groups=2)       # fan_in from weight dim 1: (8 / 2) * 9
    assert np.abs(to_numpy(t.weight)).max() <= 1 / math.sqrt(4 * 9)
    m.reset_parameters()
    assert not np.array_equal(to_numpy(m.weight), w)
    d = nn.Conv1d(2, 3, 3, dtype=gputorch.float64)
    assert d.weight.dtype == gputorch.float64 and d.bias.dtype == gputorch.float64


def test_reprs_match_torch():
    torch = _torch()
    cases = [("Conv2d", (3, 4, 3), {}),
             ("Conv2d", (4, 8, (3, 5)), dict(stride=2, padding=(1, 2), dilation=2, groups=2, bias=False,
                                            padding_mode="reflect")),
             ("Conv2d", (3, 4, 3), dict(padding="same")),
             ("Conv1d", (3, 4, 3), dict(padding="valid")),
             ("ConvTranspose2d", (3, 4, 3), dict(stride=2, output_padding=1)),
             ("ConvTranspose1d", (3, 4, 3), dict(dilation=2))]
    for cls, args, kwargs in cases:
        assert repr(getattr(nn, cls)(*args, **kwargs)) == repr(getattr(torch.nn, cls)(*args, **kwargs))


# ================================================================ errors
def test_wrong_input_shape_names_the_layer(device):
    m = nn.Conv2d(3, 4, 3, device=device)
    with pytest.raises(RuntimeError, match=r"Conv2d\(3, 4, kernel_size=\(3, 3\), stride=\(1, 1\)\) expected "
                                           r"input of shape \(N, 3, H, W\).*\[2, 3, 4, 5, 6\].*Expected 3D "
                                           r"\(unbatched\) or 4D \(batched\) input to conv2d"):
        m(gputorch.randn(2, 3, 4, 5, 6, device=device))
    with pytest.raises(RuntimeError, match=r"Conv2d.*expected input\[2, 5, 8, 8\] to have 3 channels, but got "
                                           r"5 channels instead"):
        m(gputorch.randn(2, 5, 8, 8, device=device))
    with pytest.raises(RuntimeError, match=r"Conv2d.*Kernel size can't be greater than actual input size"):
        m(gputorch.randn(2, 3, 2, 2, device=device))
    with pytest.raises(RuntimeError, match=r"Conv2d.*padding_mode=reflect\) expected input of shape.*Expected 3D"):
        nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect", device=device)(gputorch.randn(2, 3, 4, 5, 6,
                                                                                           device=device))
    with pytest.raises(RuntimeError, match=r"Conv1d.*\(N, 3, L\).*input to conv1d"):
        nn.Conv1d(3, 4, 3, device=device)(gputorch.randn(2, 3, 4, 5, device=device))
    with pytest.raises(RuntimeError, match=r"ConvTranspose2d.*Given transposed=1, weight of size \[3, 4, 3, 3\], "
                                           r"expected input\[1, 2, 3, 8\] to have 3 channels"):
        nn.ConvTranspose2d(3, 4, 3, device=device)(gputorch.randn(2, 3, 8, device=device))


def test_functional_errors_match_torch(device):
    x, w = gputorch.randn(2, 3, 8, 8, device=device), gputorch.randn(4, 3, 3, 3, device=device)
    cases = [
        (lambda: F.conv2d(gputorch.randn(3, 5, device=device), w),
         r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of size: \[3, 5\]"),
        (lambda: F.conv2d(x, w, gputorch.randn(5, device=device)),
         r"expected bias to be 1-dimensional with 4 elements, but got bias of size \[5\] instead"),
        (lambda: F.conv2d(x, w, stride=0), "non-positive stride is not supported"),
        (lambda: F.conv2d(x, w, padding=-1), "negative padding is not supported"),
        (lambda: F.conv2d(x, w, dilation=0), "non-positive dilation is not supported"),
        (lambda: F.conv2d(x, w, groups=0), "non-positive groups is not supported"),
        (lambda: F.conv2d(x, w, stride=(1, 1, 1)), r"expected stride to be a single integer value or a list of 2 "
                                                   r"values to match the convolution dimensions, but got "
                                                   r"stride=\[1, 1, 1\]"),
        (lambda: F.conv2d(x, w, padding="same", stride=2), "padding='same' is not supported for strided"),
        (lambda: F.conv2d(x, w, padding="bad"), "Invalid padding string: 'bad'"),
        (lambda: F.conv2d(x, w.double()), r"Input type \(torch.(cuda.)?FloatTensor\) and weight type "
                                          r"\(torch.(cuda.)?DoubleTensor\) should be the same"),
        (lambda: F.conv2d(x, w, groups=2), r"Given groups=2, weight of size \[4, 3, 3, 3\], expected "
                                           r"input\[2, 3, 8, 8\] to have 6 channels, but got 3 channels instead"),
        (lambda: F.conv2d(gputorch.randn(2, 4, 8, 8, device=device), gputorch.randn(3, 2, 3, 3, device=device),
                          groups=2),
         r"Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size "
         r"\[\[3, 2, 3, 3\]\] instead"),
        (lambda: F.conv1d(gputorch.randn(2, 3, 8, device=device), w),
         r"Expected 4-dimensional input for 4-dimensional weight \[4, 3, 3, 3\], but got 3-dimensional input"),
        (lambda: F.conv_transpose2d(x, gputorch.randn(3, 3, 3, 3, device=device), stride=2, output_padding=2),
         r"output padding must be smaller than either stride or dilation, but got output_padding_height: 2"),
    ]
    for fn, message in cases:
        with pytest.raises(RuntimeError, match=message):
            fn()
    with pytest.raises(TypeError, match="must be Tensor"):
        F.conv2d([1.0], w)
    with pytest.raises(TypeError, match="argument 'stride' must be tuple of ints, but found element of type float"):
        F.conv2d(x, w, stride=1.5)


def test_constructor_errors():
    cases = [
        (lambda: nn.Conv2d(3, 4, 3, groups=2), "in_channels must be divisible by groups"),
        (lambda: nn.Conv2d(4, 3, 3, groups=2), "out_channels must be divisible by groups"),
        (lambda: nn.Conv2d(3, 4, 3, groups=0), "groups must be a positive integer"),
        (lambda: nn.Conv2d(3, 4, 3, padding="same", stride=2), "padding='same' is not supported for strided"),
        (lambda: nn.Conv2d(3, 4, 3, padding="foo"), r"Invalid padding string 'foo', should be one of"),
        (lambda: nn.Conv2d(3, 4, 3, padding_mode="foo"), "padding_mode must be one of"),
        (lambda: nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect"),
         'Only "zeros" padding mode is supported for ConvTranspose2d'),
    ]
    for fn, message in cases:
        with pytest.raises(ValueError, match=message):
            fn()


def test_conv_transpose_output_size_errors(device):
    m = nn.ConvTranspose2d(3, 4, 3, stride=2, device=device)
    x = gputorch.randn(2, 3, 8, 8, device=device)
    with pytest.raises(ValueError, match=r"requested an output size of \[20, 20\], but valid sizes range from "
                                         r"\[17, 17\] to \[18, 18\]"):
        m(x, output_size=[20, 20])
    with pytest.raises(ValueError, match=r"ConvTranspose2D: for 4D input, output_size must have 2 or 4 elements "
                                         r"\(got 3\)"):
        m(x, output_size=[1, 2, 3])


def test_cnn_adam_training_matches_torch(device):
    """The benchmark's CNN (conv-relu-maxpool x2, linear, cross-entropy, Adam) in float64: the same
    loss at every step and the same final weights as torch."""
    torch = _torch()

    def build(lib):
        n = lib.nn
        return n.Sequential(n.Conv2d(1, 4, 3, padding=1), n.ReLU(), n.MaxPool2d(2),
                            n.Conv2d(4, 6, 3, padding=1), n.ReLU(), n.MaxPool2d(2, ceil_mode=True),
                            n.Flatten(), n.Linear(6 * 3 * 3, 5))
    ref = build(torch).double()
    ours = build(gputorch).to(device=device, dtype=gputorch.float64)
    copy_state(ref, ours, gputorch, device)
    opt, topt = gputorch.optim.Adam(ours.parameters(), lr=1e-2), torch.optim.Adam(ref.parameters(), lr=1e-2)
    for _ in range(4):
        data, labels = np.random.randn(8, 1, 10, 10), np.random.randint(0, 5, size=8)
        loss = F.cross_entropy(ours(_t(data, device, False)), gputorch.tensor(labels, device=device))
        tloss = torch.nn.functional.cross_entropy(ref(torch.tensor(data)), torch.tensor(labels))
        assert abs(loss.item() - tloss.item()) <= 1e-10 * abs(tloss.item())
        opt.zero_grad()
        topt.zero_grad()
        loss.backward()
        tloss.backward()
        opt.step()
        topt.step()
    for (k, v), (tk, tv) in zip(ours.state_dict().items(), ref.state_dict().items()):
        assert k == tk
        assert_close(v, tv, 1e-9, 1e-11)
