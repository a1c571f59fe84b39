"""pixel_shuffle, pixel_unshuffle, channel_shuffle and their modules against torch (values,
gradients, batch dims) and torch's errors."""
import numpy as np
import pytest

import gputorch
import gputorch.nn.functional as F
from gputorch import nn
from tests._helpers import assert_close


def _torch():
    return pytest.importorskip("torch")


def _parity(device, g_fn, t_fn, a):
    torch = _torch()
    g = gputorch.tensor(a, device=device, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    out, expected = g_fn(g), t_fn(t)
    assert_close(out, expected, rtol=0, atol=0)
    go = np.random.default_rng(1).standard_normal(tuple(expected.shape))
    out.backward(gputorch.tensor(go, device=device))
    expected.backward(torch.tensor(go))
    assert_close(g.grad, t.grad, rtol=0, atol=0)


@pytest.mark.parametrize("shape", [(8, 2, 3), (2, 8, 2, 3), (2, 1, 18, 1, 2)])
def test_pixel_shuffle_and_unshuffle_parity(shape, device):
    torch = _torch()
    r = 2 if shape[-3] == 8 else 3
    a = np.random.default_rng(0).standard_normal(shape)
    _parity(device, nn.PixelShuffle(r), torch.nn.PixelShuffle(r), a)
    up = torch.nn.functional.pixel_shuffle(torch.tensor(a), r).numpy()
    _parity(device, nn.PixelUnshuffle(r), torch.nn.PixelUnshuffle(r), up)
    assert repr(nn.PixelShuffle(r)) == repr(torch.nn.PixelShuffle(r))


@pytest.mark.parametrize("shape,groups", [((2, 6, 3), 3), ((1, 4, 2, 2), 2), ((2, 6, 1, 2, 1), 2)])
def test_channel_shuffle_parity(shape, groups, device):
    torch = _torch()
    a = np.random.default_rng(2).standard_normal(shape)
    _parity(device, nn.ChannelShuffle(groups), torch.nn.ChannelShuffle(groups), a)
    native = F.native_channel_shuffle(gputorch.tensor(a, device=device), groups)
    assert_close(native, torch.nn.functional.native_channel_shuffle(torch.tensor(a), groups), rtol=0, atol=0)


def test_errors(device):
    x = gputorch.randn(1, 5, 2, 2, device=device)
    with pytest.raises(RuntimeError, match="at least 3 dimensions, but got input with 2"):
        F.pixel_shuffle(gputorch.randn(2, 3, device=device), 2)
    with pytest.raises(RuntimeError, match=r"input.size\(-3\)=5 is not divisible by 4"):
        F.pixel_shuffle(x, 2)
    with pytest.raises(RuntimeError, match="positive upscale_factor, but got 0"):
        F.pixel_shuffle(x, 0)
    with pytest.raises(RuntimeError, match=r"height to be divisible by downscale_factor, but input.size\(-2\)=3"):
        F.pixel_unshuffle(gputorch.randn(1, 4, 3, 2, device=device), 2)
    with pytest.raises(RuntimeError, match=r"width to be divisible by downscale_factor, but input.size\(-1\)=3"):
        F.pixel_unshuffle(gputorch.randn(1, 4, 2, 3, device=device), 2)
    with pytest.raises(RuntimeError, match="Got 5 channels and 2 groups"):
        F.channel_shuffle(x, 2)
    with pytest.raises(RuntimeError, match=r"> 2 dims, but got input with sizes \[1, 4\]"):
        F.channel_shuffle(gputorch.randn(1, 4, device=device), 2)
    with pytest.raises(RuntimeError, match="must be positive. Value of groups:0"):
        F.channel_shuffle(x, 0)
