"""Max/avg/adaptive pooling (1-D and 2-D), functional and modules: parity with torch (values, indices,
input grads, second derivatives), gradcheck/gradgradcheck, PyTorch's output-size and tie/NaN rules,
reprs, edge cases and errors."""
import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.nn import functional as F
from tests._helpers import assert_close, to_numpy

RTOL, ATOL = 1e-10, 1e-12


def _torch():
    return pytest.importorskip("torch")


def _t(array, device, requires_grad=True):
    return gputorch.tensor(array, dtype=gputorch.float64, device=device, requires_grad=requires_grad)


def _parity(fname, device, shape, data=None, **kwargs):
    """F.<fname> in both frameworks on the same float64 data: output (and indices), input grad."""
    torch = _torch()
    data = np.random.randn(*shape) if data is None else data
    x, tx = _t(data, device), torch.tensor(data, requires_grad=True)
    out = getattr(F, fname)(x, **kwargs)
    expected = getattr(torch.nn.functional, fname)(tx, **kwargs)
    if isinstance(expected, tuple):
        assert_close(out[1], expected[1], 0, 0)
        assert out[1].dtype == gputorch.int64
        out, expected = out[0], expected[0]
    assert_close(out, expected, RTOL, ATOL)
    g = np.random.randn(*expected.shape)
    out.backward(gputorch.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    assert_close(x.grad, tx.grad, RTOL, ATOL)
    return out


# ================================================================ max pooling
MAXPOOL2D_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=1),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=2, ceil_mode=True),
    dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1), dilation=(2, 1)),
    dict(kernel_size=3, stride=2, dilation=2, padding=1, ceil_mode=True),
    dict(kernel_size=(1, 4), stride=(3, 1)),
]


@pytest.mark.parametrize("kwargs", MAXPOOL2D_CASES, ids=str)
@pytest.mark.parametrize("return_indices", [False, True])
def test_max_pool2d_parity(kwargs, return_indices, device):
    _parity("max_pool2d", device, (2, 3, 9, 8), return_indices=return_indices, **kwargs)
    _parity("max_pool2d", device, (3, 7, 6), return_indices=return_indices, **kwargs)     # unbatched


@pytest.mark.parametrize("kwargs", [dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                    dict(kernel_size=2, dilation=3), dict(kernel_size=4, stride=1, padding=2)],
                         ids=str)
def test_max_pool1d_parity(kwargs, device):
    _parity("max_pool1d", device, (2, 3, 11), **kwargs)
    _parity("max_pool1d", device, (3, 11), return_indices=True, **kwargs)


def test_max_pool_ceil_mode_last_window_must_start_inside(device):
    torch = _torch()
    # 5 + 2*1 padding, kernel 2, stride 2: ceil would give 4 windows, but the 4th starts in the padding
    x = np.arange(25.0).reshape(1, 1, 5, 5)
    out = F.max_pool2d(_t(x, device, False), 2, stride=2, padding=1, ceil_mode=True)
    expected = torch.nn.functional.max_pool2d(torch.tensor(x), 2, stride=2, padding=1, ceil_mode=True)
    assert tuple(out.shape) == tuple(expected.shape) == (1, 1, 3, 3)
    assert_close(out, expected, 0, 0)
    assert F.max_pool1d(_t(np.arange(6.0).reshape(1, 1, 6), device, False), 2, 2, 1, ceil_mode=True).shape == \
        (1, 1, 4)


def test_max_pool_ties_nan_and_all_minus_inf_match_torch(device):
    torch = _torch()
    inf, nan = float("inf"), float("nan")
    cases = [
        np.array([[[[1.0, 3.0, 3.0, 2.0], [3.0, 1.0, 0.0, 3.0]]]]),                # ties: first position wins
        np.array([[[[1.0, nan, 3.0, nan], [nan, 5.0, 7.0, 1.0]]]]),               # NaN wins, the last NaN
        np.full((1, 1, 4, 4), -inf),                                            # nothing beats -inf
        np.array([[[[-inf, 2.0, inf, 1.0], [0.0, -inf, inf, inf]]]]),
    ]
    for data in cases:
        for kwargs in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                       dict(kernel_size=(2, 3), stride=1, padding=(0, 1))):
            out, idx = F.max_pool2d(_t(data, device, False), return_indices=True, **kwargs)
            t_out, t_idx = torch.nn.functional.max_pool2d(torch.tensor(data), return_indices=True, **kwargs)
            assert_close(idx, t_idx, 0, 0)
            np.testing.assert_array_equal(out.cpu().numpy(), t_out.numpy())


def test_max_pool_padding_is_at_most_half_the_undilated_kernel(device):
    for return_indices in (False, True):
        with pytest.raises(RuntimeError, match="pad should be smaller than or equal to half of kernel size, but "
                                               "got padW = 2, padH = 2, kW = 3, kH = 3"):
            F.max_pool2d(gputorch.randn(1, 2, 9, 9, device=device), 3, 2, 2, dilation=2,
                         return_indices=return_indices)


def test_max_pool_integer_dtype(device):
    torch = _torch()
    data = np.random.randint(-50, 50, size=(2, 3, 6, 7)).astype(np.int64)
    out, idx = F.max_pool2d(gputorch.tensor(data, device=device), 3, 2, 1, return_indices=True)
    t_out, t_idx = torch.nn.functional.max_pool2d(torch.tensor(data), 3, 2, 1, return_indices=True)
    assert out.dtype == gputorch.int64
    assert_close(out, t_out, 0, 0)
    assert_close(idx, t_idx, 0, 0)


# ================================================================ average pooling
AVGPOOL2D_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1), divisor_override=5),
    dict(kernel_size=2, ceil_mode=True, divisor_override=3),
]


@pytest.mark.parametrize("kwargs", AVGPOOL2D_CASES, ids=str)
def test_avg_pool2d_parity(kwargs, device):
    _parity("avg_pool2d", device, (2, 3, 9, 8), **kwargs)
    _parity("avg_pool2d", device, (3, 7, 6), **kwargs)


@pytest.mark.parametrize("kwargs", [dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                    dict(kernel_size=4, stride=3, padding=2, count_include_pad=False)], ids=str)
def test_avg_pool1d_parity(kwargs, device):
    _parity("avg_pool1d", device, (2, 3, 11), **kwargs)
    _parity("avg_pool1d", device, (3, 11), **kwargs)


def test_avg_pool2d_integer_truncates_like_torch(device):
    torch = _torch()
    data = np.array([[[[0, 1, 2], [4, 5, 7], [1, 1, 1]]]])
    for sign in (1, -1):
        out = F.avg_pool2d(gputorch.tensor(sign * data, device=device), 2, ceil_mode=True)
        expected = torch.nn.functional.avg_pool2d(torch.tensor(sign * data), 2, ceil_mode=True)
        assert out.dtype == gputorch.int64
        assert_close(out, expected, 0, 0)


def test_avg_pool_matches_numpy_reference(device):
    data = np.random.randn(2, 3, 6, 8)
    out = F.avg_pool2d(_t(data, device, False), (2, 4))
    assert_close(out, data.reshape(2, 3, 3, 2, 2, 4).mean(axis=(3, 5)), RTOL, ATOL)


# ================================================================ adaptive pooling
@pytest.mark.parametrize("output_size", [(3, 4), 1, (5, None), (12, 13), (9, 8), (3, 2), (None, 1)], ids=str)
def test_adaptive_pool2d_parity(output_size, device):
    _parity("adaptive_avg_pool2d", device, (2, 3, 9, 8), output_size=output_size)
    _parity("adaptive_max_pool2d", device, (2, 3, 9, 8), output_size=output_size, return_indices=True)
    _parity("adaptive_max_pool2d", device, (3, 9, 8), output_size=output_size)


@pytest.mark.parametrize("output_size", [4, 1, 11, 15])
def test_adaptive_pool1d_parity(output_size, device):
    _parity("adaptive_avg_pool1d", device, (2, 3, 11), output_size=output_size)
    _parity("adaptive_max_pool1d", device, (2, 3, 11), output_size=output_size, return_indices=True)
    _parity("adaptive_avg_pool1d", device, (3, 11), output_size=output_size)


def test_adaptive_avg_pool_to_one_is_a_mean(device):
    x = _t(np.random.randn(2, 3, 5, 4), device)
    out = F.adaptive_avg_pool2d(x, 1)
    assert out.shape == (2, 3, 1, 1) and out.grad_fn.name() == "MeanBackward1"
    assert_close(out, x.detach().cpu().numpy().mean(axis=(2, 3), keepdims=True), RTOL, ATOL)


def test_adaptive_pool_keeps_infinities_local(device):
    torch = _torch()
    data = np.random.randn(1, 1, 5, 7)
    data[0, 0, 1, 2] = float("inf")
    for size in ((3, 4), (7, 9)):
        out = F.adaptive_avg_pool2d(_t(data, device, False), size)
        expected = torch.nn.functional.adaptive_avg_pool2d(torch.tensor(data), size)
        np.testing.assert_allclose(out.cpu().numpy(), expected.numpy(), RTOL, ATOL)


def test_empty_batch(device):
    x = _t(np.zeros((0, 3, 6, 6)), device)
    assert F.max_pool2d(x, 2).shape == (0, 3, 3, 3)
    assert F.avg_pool2d(x, 2).shape == (0, 3, 3, 3)
    out = F.adaptive_avg_pool2d(x, 2)
    assert out.shape == (0, 3, 2, 2)
    out.sum().backward()
    assert x.grad.shape == (0, 3, 6, 6)


def test_noncontiguous_and_float32_input(device):
    data = np.random.randn(2, 8, 6, 3).astype(np.float32)
    x = gputorch.tensor(data, device=device).permute(0, 3, 1, 2)       # (2, 3, 8, 6) channels-last view
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    ref = data.transpose(0, 3, 1, 2).reshape(2, 3, 4, 2, 3, 2).max(axis=(3, 5))
    assert out.dtype == gputorch.float32
    assert_close(out, ref, 0, 0)
    assert_close(F.avg_pool2d(x, 2), data.transpose(0, 3, 1, 2).reshape(2, 3, 4, 2, 3, 2).mean(axis=(3, 5)),
                 1e-6, 1e-6)


# ================================================================ gradcheck / gradgradcheck, names
@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True),
    lambda x: F.max_pool2d(x, 2, 1, dilation=2),
    lambda x: F.max_pool1d(x.flatten(2), 3, 2),
    lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda x: F.avg_pool2d(x, 2, divisor_override=3),
    lambda x: F.avg_pool1d(x.flatten(2), 4, 3, 1),
    lambda x: F.adaptive_avg_pool2d(x, (3, 4)),
    lambda x: F.adaptive_max_pool2d(x, (3, 7)),
    lambda x: F.adaptive_max_pool1d(x.flatten(2), 7),
], ids=["max2d", "max2d-dilated", "max1d", "avg2d", "avg2d-divisor", "avg1d", "adaptive-avg", "adaptive-max",
        "adaptive-max1d"])
def test_gradcheck_and_gradgradcheck(fn, device):
    # distinct values (no ties), so max pooling is differentiable at the point
    x = _t(np.random.permutation(50).reshape(1, 2, 5, 5) / 7.0, device)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_second_derivative_of_max_pool_matches_torch(device):
    torch = _torch()
    data = np.random.randn(2, 2, 6, 6)
    results = []
    weights = np.arange(72.0).reshape(2, 1, 6, 6)
    for lib, x, wt in ((gputorch, _t(data, device), _t(weights, device, False)),
                       (torch, torch.tensor(data, requires_grad=True), torch.tensor(weights))):
        y = lib.nn.functional.max_pool2d(x, 3, 2, 1)
        g = lib.ones_like(y).requires_grad_()
        (gx,) = lib.autograd.grad(y, x, g, create_graph=True)
        (gg,) = lib.autograd.grad((gx * gx * wt).sum(), g)
        results.append(gg)
    assert_close(results[0], results[1], RTOL, ATOL)


def test_grad_fn_names(device):
    x = _t(np.random.randn(1, 2, 6, 6), device)
    assert F.max_pool2d(x, 2).grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert F.avg_pool2d(x, 2).grad_fn.name() == "AvgPool2DBackward0"
    assert F.adaptive_avg_pool2d(x, 4).grad_fn.name() == "AdaptiveAvgPool2DBackward0"
    assert F.adaptive_max_pool2d(x, 4).grad_fn.name() == "AdaptiveMaxPool2DBackward0"
    assert F.max_pool1d(x[0], 2).grad_fn.name() == "SqueezeBackward1"
    (gx,) = gputorch.autograd.grad(F.max_pool2d(x, 2).sum(), x, create_graph=True)
    assert gx.grad_fn.name() == "MaxPool2DWithIndicesBackwardBackward0"


# ================================================================ modules
@pytest.mark.parametrize("cls,args,kwargs,shape", [
    ("MaxPool2d", (3,), dict(stride=2, padding=1, ceil_mode=True), (2, 3, 9, 8)),
    ("MaxPool2d", (2,), dict(return_indices=True), (3, 8, 8)),
    ("MaxPool1d", (3,), dict(stride=2, dilation=2), (2, 3, 11)),
    ("AvgPool2d", (3, 2, 1), dict(ceil_mode=True, count_include_pad=False), (2, 3, 9, 8)),
    ("AvgPool2d", ((2, 3),), dict(divisor_override=4), (2, 3, 9, 8)),
    ("AvgPool1d", (3,), dict(stride=2, padding=1), (2, 3, 11)),
    ("AdaptiveAvgPool2d", ((3, None),), {}, (2, 3, 9, 8)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 11)),
    ("AdaptiveMaxPool2d", (4,), dict(return_indices=True), (2, 3, 9, 8)),
    ("AdaptiveMaxPool1d", (4,), {}, (3, 11)),
], ids=str)
def test_module_parity_and_repr(cls, args, kwargs, shape, device):
    torch = _torch()
    ours, ref = getattr(nn, cls)(*args, **kwargs), getattr(torch.nn, cls)(*args, **kwargs)
    assert repr(ours) == repr(ref)
    data = np.random.randn(*shape)
    x, tx = _t(data, device), torch.tensor(data, requires_grad=True)
    out, expected = ours(x), ref(tx)
    if isinstance(expected, tuple):
        assert_close(out[1], expected[1], 0, 0)
        out, expected = out[0], expected[0]
    assert_close(out, expected, RTOL, ATOL)
    out.sum().backward()
    expected.sum().backward()
    assert_close(x.grad, tx.grad, RTOL, ATOL)
    assert list(ours.state_dict()) == []


# ================================================================ errors
def test_module_errors_name_the_layer(device):
    with pytest.raises(RuntimeError, match=r"MaxPool2d\(kernel_size=2, stride=2, padding=0, dilation=1, "
                                           r"ceil_mode=False\) expected input of shape \(N, C, H, W\).*"
                                           r"\[2, 3, 4, 5, 6\]"):
        nn.MaxPool2d(2)(gputorch.randn(2, 3, 4, 5, 6, device=device))
    with pytest.raises(RuntimeError, match=r"AvgPool1d.*\(N, C, L\).*Expected 2 to 3 dimensions"):
        nn.AvgPool1d(2)(gputorch.randn(2, 3, 4, 5, device=device))
    with pytest.raises(RuntimeError, match=r"AdaptiveAvgPool2d.*got input of size \[3\]"):
        nn.AdaptiveAvgPool2d(2)(gputorch.randn(3, device=device))
    with pytest.raises(RuntimeError, match=r"MaxPool1d.*Invalid computed output size: 0"):
        nn.MaxPool1d(3)(gputorch.randn(2, 3, 2, device=device))


def test_functional_errors_match_torch(device):
    x = gputorch.randn(2, 3, 8, 8, device=device)
    cases = [
        (lambda: F.max_pool2d(x, 2, padding=2), "pad should be at most half of effective kernel size, but got "
                                                "pad=2, kernel_size=2 and dilation=1"),
        (lambda: F.max_pool2d(x, 0), "stride should not be zero"),
        (lambda: F.max_pool2d(x, 2, dilation=0), "dilation should be greater than zero, but got dilationH: 0 "
                                                 "dilationW: 0"),
        (lambda: F.max_pool2d(x, 9), r"Given input size: \(3x8x8\). Calculated output size: \(3x0x0\). Output "
                                     r"size is too small"),
        (lambda: F.max_pool2d(x, (2, 2, 2)), "max_pool2d: kernel_size must either be a single int, or a tuple "
                                             "of two ints"),
        (lambda: F.max_pool2d(gputorch.randn(2, 0, 8, 8, device=device), 2),
         r"Expected 3D or 4D \(batch mode\) tensor with optional 0 dim batch size for input, but got:\[2, 0, 8, 8\]"),
        (lambda: F.avg_pool2d(x, 2, stride=(1, 2, 3)), "avg_pool2d: stride must either be omitted, a single int, "
                                                       "or a tuple of two ints"),
        (lambda: F.avg_pool2d(x, 2, divisor_override=0), "divisor must be not zero"),
        (lambda: F.max_pool1d(gputorch.randn(2, 3, 4, 5, device=device), 2),
         r"max_pool1d: Expected 2D or 3D \(batch mode\) tensor"),
        (lambda: F.max_pool1d(gputorch.randn(1, 1, 4, device=device), 2, padding=2),
         "max_pool1d\\(\\) padding should be at most half of kernel size, but got padding=2 and kernel_size=2"),
        (lambda: F.adaptive_avg_pool2d(x, (2, 2, 2)), "adaptive_avg_pool2d: output_size must be 2"),
        (lambda: F.adaptive_avg_pool2d(gputorch.randn(2, 3, 0, 5, device=device), 2),
         r"Expected input to have non-zero size for non-batch dimensions, but input has sizes \[2, 3, 0, 5\] "
         r"with dimension 2 being empty"),
        (lambda: F.adaptive_max_pool2d(gputorch.randn(2, 3, 4, 5, 6, device=device), 2),
         r"adaptive_max_pool2d\(\): Expected 3D or 4D tensor, but got: \[2, 3, 4, 5, 6\]"),
    ]
    for fn, message in cases:
        with pytest.raises(RuntimeError, match=message):
            fn()
    with pytest.raises(NotImplementedError, match="\"adaptive_avg_pool2d\" not implemented for 'Long'"):
        F.adaptive_avg_pool2d(gputorch.zeros(1, 2, 4, 4, dtype=gputorch.int64, device=device), 2)
    with pytest.raises(TypeError, match="must be Tensor"):
        F.max_pool2d([1.0], 2)


@pytest.mark.parametrize("kernel,padding", [(3, 1), ((1, 3), (0, 1))])
def test_max_pool_index_when_the_first_real_element_wins_beside_padding(kernel, padding, device):
    # The first window starts in the padding; its maximum is its first real element (index 0).
    torch = pytest.importorskip("torch")
    data = np.array([[[[-0.05, -4.82, -1.59], [0.3, -0.2, 0.1]]]], dtype=np.float32)
    out, idx = F.max_pool2d(gputorch.tensor(data, device=device), kernel, stride=kernel, padding=padding,
                            return_indices=True)
    ref, ref_idx = torch.nn.functional.max_pool2d(torch.tensor(data), kernel, stride=kernel, padding=padding,
                                                  return_indices=True)
    assert_close(out, ref, 0, 0)
    assert to_numpy(idx).tolist() == ref_idx.numpy().tolist()
