"""Dropout: mask statistics and scaling, evaluation-mode identity, reproducibility under
manual_seed (on the input's device generator), gradients, in-place forms, channel dropout,
alpha dropout, modules and errors."""
import warnings

import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.nn import functional as F
from tests._helpers import assert_close, to_numpy


def _torch():
    return pytest.importorskip("torch")


def _x(shape, device, requires_grad=False, dtype=gputorch.float64):
    data = np.random.uniform(0.5, 2.0, shape)
    return gputorch.tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5, 0.8])
def test_mask_statistics_and_scaling(p, device):
    x = _x((200, 500), device)
    out = to_numpy(F.dropout(x, p))
    xs = to_numpy(x)
    dropped = out == 0
    assert abs(dropped.mean() - p) < 0.01
    np.testing.assert_allclose(out[~dropped], xs[~dropped] / (1 - p), rtol=1e-15)
    assert abs(out.mean() / xs.mean() - 1) < 0.02     # the expectation is kept


def test_float32_keeps_dtype_and_scale(device):
    x = _x((1000,), device, dtype=gputorch.float32)
    out = F.dropout(x, 0.25)
    assert out.dtype == gputorch.float32
    kept = to_numpy(out) != 0
    np.testing.assert_allclose(to_numpy(out)[kept], to_numpy(x)[kept] / np.float32(0.75), rtol=1e-6)


def test_eval_mode_p0_and_empty_return_the_input(device):
    x = _x((3, 4), device, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    empty = gputorch.zeros(0, 3, device=device)
    assert F.dropout(empty, 0.5) is empty
    m = nn.Dropout(0.5)
    m.eval()
    assert m(x) is x
    for cls, shape in ((nn.Dropout1d, (2, 3, 4)), (nn.Dropout2d, (2, 3, 4, 5)), (nn.Dropout3d, (2, 3, 4, 5, 6)),
                       (nn.AlphaDropout, (2, 3)), (nn.FeatureAlphaDropout, (2, 3, 4))):
        y = _x(shape, device)
        assert cls(0.5).eval()(y) is y


def test_p_equal_one_zeroes_everything(device):
    x = _x((3, 4), device, requires_grad=True)
    out = F.dropout(x, 1.0)
    assert (to_numpy(out) == 0).all()
    out.sum().backward()
    assert (to_numpy(x.grad) == 0).all()


def test_reproducible_under_manual_seed(device):
    x = _x((50, 40), device)
    gputorch.manual_seed(123)
    a = to_numpy(F.dropout(x, 0.5))
    b = to_numpy(F.dropout(x, 0.5))
    gputorch.manual_seed(123)
    c = to_numpy(F.dropout(x, 0.5))
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b)
    gputorch.manual_seed(124)
    assert not np.array_equal(a, to_numpy(F.dropout(x, 0.5)))


def test_draws_from_the_input_devices_generator(device):
    x = _x((10, 10), device)
    state = gputorch.get_rng_state()
    F.dropout(x, 0.5)
    cpu_advanced = not np.array_equal(to_numpy(state), to_numpy(gputorch.get_rng_state()))
    assert cpu_advanced == (device == "cpu")


def test_gradient_is_the_scaled_mask(device):
    x = _x((30, 30), device, requires_grad=True)
    out = F.dropout(x, 0.4)
    # PyTorch's names: the composite on the CPU, the fused op where the backend has a kernel (CUDA)
    from gputorch.nn.functional._fused_dropout import available
    assert out.grad_fn.name() == ("NativeDropoutBackward0" if available(x) else "MulBackward0")
    out.backward(gputorch.ones_like(out))
    mask = to_numpy(out) != 0
    expected = np.where(mask, 1 / 0.6, 0.0)
    np.testing.assert_allclose(to_numpy(x.grad), expected, rtol=1e-15)


def test_gradcheck_with_fixed_seed(device):
    x = _x((3, 4), device, requires_grad=True)

    def fn(t):
        gputorch.manual_seed(7)
        return F.dropout(t, 0.3)

    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_inplace(device):
    x = _x((20, 20), device, requires_grad=True)
    y = x * 1.0
    out = F.dropout(y, 0.5, inplace=True)
    assert out is y and y._version == 1
    out.sum().backward()
    kept = to_numpy(out) != 0
    np.testing.assert_allclose(to_numpy(x.grad), np.where(kept, 2.0, 0.0))
    leaf = _x((3,), device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        F.dropout(leaf, 0.5, inplace=True)
    m = nn.Dropout(0.5, inplace=True)
    z = _x((4, 4), device)
    assert m(z) is z


# ================================================================ channel dropout
def _channels_all_or_nothing(out, x, p, channel_shape):
    o, xs = to_numpy(out), to_numpy(x)
    per_channel = o.reshape(channel_shape + (-1,))
    xs = xs.reshape(channel_shape + (-1,))
    zero = (per_channel == 0).all(-1)
    kept = np.isclose(per_channel, xs / (1 - p), rtol=1e-14).all(-1)
    assert (zero | kept).all()
    return zero


@pytest.mark.parametrize("fn,shape,channels", [
    (F.dropout2d, (8, 50, 3, 4), (8, 50)),
    (F.dropout1d, (8, 50, 6), (8, 50)),
    (F.dropout1d, (50, 6), (50,)),
    (F.dropout3d, (4, 50, 2, 3, 2), (4, 50)),
    (F.dropout3d, (50, 2, 3, 2), (50,)),
])
def test_channel_dropout(fn, shape, channels, device):
    x = _x(shape, device, requires_grad=True)
    out = fn(x, 0.4)
    assert out.shape == x.shape
    zero = _channels_all_or_nothing(out, x, 0.4, channels)
    assert 0.25 < zero.mean() < 0.55
    out.sum().backward()
    assert_close(x.grad, np.where(to_numpy(out) != 0, 1 / 0.6, 0.0), 1e-14, 0)


def test_channel_dropout_inplace_unbatched(device):
    x = _x((50, 6), device)
    out = F.dropout1d(x, 0.5, inplace=True)
    assert out is x
    per_channel = to_numpy(out)
    assert ((per_channel == 0).all(1) | (per_channel != 0).all(1)).all()


def test_dropout2d_warnings_like_torch(device):
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(_x((2, 3, 4), device), 0.5)
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        F.dropout2d(_x((2, 3), device), 0.5)
    with pytest.warns(UserWarning, match="Received a 3-D input to dropout3d"):
        F.dropout3d(_x((2, 3, 4), device), 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.dropout2d(_x((2, 3, 4, 4), device), 0.5)


def test_dropout1d_rejects_other_ranks(device):
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        F.dropout1d(_x((2, 3, 4, 5), device), 0.5)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            F.dropout2d(_x((5,), device), 0.5)


# ================================================================ alpha dropout
def test_alpha_dropout_keeps_mean_and_variance(device):
    x = gputorch.randn(400, 500, dtype=gputorch.float64, device=device)
    out = to_numpy(F.alpha_dropout(x, 0.2, training=True))
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.02
    dropped_value = -1.7580993408473766
    a = 1 / np.sqrt((dropped_value ** 2 * 0.2 + 1) * 0.8)
    b = -a * dropped_value * 0.2
    dropped = np.isclose(out, a * dropped_value + b)
    assert abs(dropped.mean() - 0.2) < 0.01
    np.testing.assert_allclose(out[~dropped], a * to_numpy(x)[~dropped] + b, rtol=1e-12, atol=1e-12)
    assert F.alpha_dropout(x, 0.2) is x          # training defaults to False


def test_feature_alpha_dropout_whole_channels(device):
    x = gputorch.randn(6, 40, 5, dtype=gputorch.float64, device=device, requires_grad=True)
    out = F.feature_alpha_dropout(x, 0.5, training=True)
    o = to_numpy(out)
    value = o[..., :1]
    dropped = np.isclose(o, value).all(-1) & ~np.isclose(to_numpy(x), to_numpy(x)[..., :1]).all(-1)
    assert 0.2 < dropped.mean() < 0.8
    out.sum().backward()
    assert x.grad is not None


# ================================================================ modules and errors
@pytest.mark.parametrize("name", ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                  "FeatureAlphaDropout"])
def test_module_repr_and_p_check(name, device):
    torch = _torch()
    assert repr(getattr(nn, name)(0.2)) == repr(getattr(torch.nn, name)(0.2))
    assert repr(getattr(nn, name)(0.2, True)) == repr(getattr(torch.nn, name)(0.2, True))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        getattr(nn, name)(1.5)


@pytest.mark.parametrize("fn", [F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout,
                                F.feature_alpha_dropout])
def test_functional_p_check(fn, device):
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
        fn(_x((2, 3, 4, 5), device), -0.1)


def test_module_training_flag_switches(device):
    m = nn.Sequential(nn.Linear(5, 5), nn.Dropout(0.5)).to(device)
    x = gputorch.randn(64, 5, device=device)
    m.eval()
    a, b = to_numpy(m(x)), to_numpy(m(x))
    np.testing.assert_array_equal(a, b)
    m.train()
    assert (to_numpy(m(x)) == 0).any()
