"""F.interpolate (nearest, nearest-exact, linear, bilinear, area) and nn.Upsample: parity with torch
(values incl. PyTorch's source-index rules, input grads), gradcheck/gradgradcheck, reprs, errors."""
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


def _parity(device, data, exact=False, **kwargs):
    torch = _torch()
    x, tx = _t(data, device), torch.tensor(data, requires_grad=True)
    out = F.interpolate(x, **kwargs)
    expected = torch.nn.functional.interpolate(tx, **kwargs)
    if exact:
        np.testing.assert_array_equal(out.detach().cpu().numpy(), expected.detach().numpy())
    tol = (RTOL, ATOL) if data.dtype == np.float64 else (1e-6, 1e-6)
    assert_close(out, expected, *tol)
    g = np.random.randn(*expected.shape).astype(data.dtype)
    out.backward(gputorch.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    assert_close(x.grad, tx.grad, tol[0] * 10, tol[1] * 10)
    return out


SIZES_2D = [dict(size=(10, 14)), dict(size=(3, 4)), dict(size=(13, 5)), dict(size=(5, 7)), dict(size=1),
            dict(scale_factor=2), dict(scale_factor=1.7), dict(scale_factor=(0.5, 2.3)),
            dict(scale_factor=1.7, recompute_scale_factor=True), dict(scale_factor=(3, 1))]


@pytest.mark.parametrize("sizes", SIZES_2D, ids=str)
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nearest_2d_parity_bit_exact(sizes, mode, dtype, device):
    # PyTorch computes nearest source indices in float32: the indices (so the values) match exactly
    _parity(device, np.random.randn(2, 3, 5, 7).astype(dtype), exact=True, mode=mode, **sizes)


@pytest.mark.parametrize("sizes", SIZES_2D, ids=str)
@pytest.mark.parametrize("align_corners", [False, True])
def test_bilinear_parity(sizes, align_corners, device):
    _parity(device, np.random.randn(2, 3, 5, 7), mode="bilinear", align_corners=align_corners, **sizes)


def test_bilinear_float32(device):
    out = _parity(device, np.random.randn(2, 3, 5, 7).astype(np.float32), mode="bilinear", size=(9, 4))
    assert out.dtype == gputorch.float32


@pytest.mark.parametrize("sizes", [dict(size=13), dict(size=4), dict(scale_factor=2.5), dict(scale_factor=0.7),
                                   dict(size=6)], ids=str)
@pytest.mark.parametrize("mode,extra", [("nearest", {}), ("nearest-exact", {}), ("linear", {"align_corners": True}),
                                        ("linear", {"align_corners": False}), ("area", {})], ids=str)
def test_1d_parity(sizes, mode, extra, device):
    _parity(device, np.random.randn(2, 3, 6), mode=mode, **sizes, **extra)


@pytest.mark.parametrize("sizes", [dict(size=(3, 4)), dict(size=(10, 14)), dict(scale_factor=0.5)], ids=str)
def test_area_2d_parity(sizes, device):
    _parity(device, np.random.randn(2, 3, 5, 7), mode="area", **sizes)


def test_nearest_matches_numpy_reference(device):
    data = np.random.randn(1, 2, 3, 4)
    out = F.interpolate(_t(data, device, False), scale_factor=2)
    assert_close(out, data.repeat(2, axis=2).repeat(2, axis=3), 0, 0)


def test_nearest_integer_dtype(device):
    torch = _torch()
    data = np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4)
    out = F.interpolate(gputorch.tensor(data, device=device), size=(5, 7))
    assert out.dtype == gputorch.uint8
    assert_close(out, torch.nn.functional.interpolate(torch.tensor(data), size=(5, 7)), 0, 0)


def test_noncontiguous_input(device):
    data = np.random.randn(2, 7, 5, 3)
    x = _t(data, device, False).permute(0, 3, 2, 1)       # (2, 3, 5, 7) not contiguous
    out = F.interpolate(x, size=(4, 9), mode="bilinear")
    ref = F.interpolate(_t(np.ascontiguousarray(data.transpose(0, 3, 2, 1)), device, False), size=(4, 9),
                        mode="bilinear")
    assert_close(out, ref, 0, 0)


def test_infinities_stay_local(device):
    torch = _torch()
    data = np.random.randn(1, 1, 4, 5)
    data[0, 0, 2, 3] = float("inf")
    for mode in ("nearest", "bilinear"):
        out = F.interpolate(_t(data, device, False), size=(7, 9), mode=mode)
        expected = torch.nn.functional.interpolate(torch.tensor(data), size=(7, 9), mode=mode)
        np.testing.assert_array_equal(np.isfinite(out.cpu().numpy()), np.isfinite(expected.numpy()))


@pytest.mark.parametrize("kwargs", [dict(scale_factor=2), dict(size=(5, 3), mode="bilinear"),
                                    dict(size=(5, 3), mode="bilinear", align_corners=True),
                                    dict(size=(2, 7), mode="nearest-exact")], ids=str)
def test_gradcheck_and_gradgradcheck(kwargs, device):
    x = _t(np.random.randn(1, 2, 3, 4), device)
    fn = lambda t: F.interpolate(t, **kwargs)  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))
    x1 = _t(np.random.randn(2, 2, 5), device)
    fn1 = lambda t: F.interpolate(t, size=8, mode="linear")  # noqa: E731
    assert gradcheck(fn1, (x1,))
    assert gradgradcheck(fn1, (x1,))


def test_grad_fn_names(device):
    x2, x1 = _t(np.random.randn(1, 1, 3, 3), device), _t(np.random.randn(1, 1, 3), device)
    assert F.interpolate(x2, scale_factor=2).grad_fn.name() == "UpsampleNearest2DBackward0"
    assert F.interpolate(x2, scale_factor=2, mode="bilinear").grad_fn.name() == "UpsampleBilinear2DBackward0"
    assert F.interpolate(x1, scale_factor=2).grad_fn.name() == "UpsampleNearest1DBackward0"
    assert F.interpolate(x1, scale_factor=2, mode="linear").grad_fn.name() == "UpsampleLinear1DBackward0"


# ================================================================ nn.Upsample
@pytest.mark.parametrize("kwargs", [dict(scale_factor=2), dict(scale_factor=(2, 3)),
                                    dict(size=(7, 4), mode="bilinear"),
                                    dict(scale_factor=1.5, mode="bilinear", align_corners=True)], ids=str)
def test_upsample_module(kwargs, device):
    torch = _torch()
    ours, ref = nn.Upsample(**kwargs), torch.nn.Upsample(**kwargs)
    assert repr(ours) == repr(ref)
    data = np.random.randn(2, 3, 4, 5)
    assert_close(ours(_t(data, device, False)), ref(torch.tensor(data)), RTOL, ATOL)
    assert repr(nn.UpsamplingBilinear2d(scale_factor=2)) == repr(torch.nn.UpsamplingBilinear2d(scale_factor=2))
    assert_close(nn.UpsamplingBilinear2d(size=(6, 9))(_t(data, device, False)),
                 torch.nn.UpsamplingBilinear2d(size=(6, 9))(torch.tensor(data)), RTOL, ATOL)


# ================================================================ errors
def test_errors_match_torch(device):
    x = gputorch.randn(2, 3, 8, 8, device=device)
    value_errors = [
        (lambda: F.interpolate(x), "either size or scale_factor should be defined"),
        (lambda: F.interpolate(x, size=3, scale_factor=2), "only one of size or scale_factor should be defined"),
        (lambda: F.interpolate(x, size=(3, 3, 3)), r"Input and output must have the same number of spatial "
                                                   r"dimensions, but got input with spatial dimensions of \[8, 8\]"),
        (lambda: F.interpolate(x, scale_factor=(2, 2, 2)), "Input and scale_factor must have the same number"),
        (lambda: F.interpolate(x, size=3, align_corners=True), "align_corners option can only be set with the "
                                                               "interpolating modes"),
        (lambda: F.interpolate(x, size=4, recompute_scale_factor=True),
         "recompute_scale_factor is not meaningful with an explicit size."),
    ]
    for fn, message in value_errors:
        with pytest.raises(ValueError, match=message):
            fn()
    not_implemented = [
        (lambda: F.interpolate(gputorch.randn(3, 8, device=device), scale_factor=2),
         r"Input Error: Only 3D, 4D and 5D input Tensors supported \(got 2D\) for the modes: nearest \| linear"),
        (lambda: F.interpolate(gputorch.randn(2, 3, 8, device=device), scale_factor=2, mode="bilinear"),
         "Got 3D input, but bilinear mode needs 4D input"),
        (lambda: F.interpolate(x, scale_factor=2, mode="linear"), "Got 4D input, but linear mode needs 3D input"),
        (lambda: F.interpolate(x, scale_factor=2, mode="foo"), r"\(got foo\)"),
    ]
    for fn, message in not_implemented:
        with pytest.raises(NotImplementedError, match=message):
            fn()
    with pytest.raises(RuntimeError, match=r"Input and output sizes should be greater than 0, but got input "
                                           r"\(H: 8, W: 8\) output \(H: 0, W: 0\)"):
        F.interpolate(x, scale_factor=0.01)
    with pytest.raises(TypeError, match="expected size to be one of int or Tuple"):
        F.interpolate(x, size=(2.5, 3))
