"""Padding layers (Zero/Constant/Reflection/Replication/CircularPad 1d-3d): parity with torch
(values and gradients), reprs, stored padding and errors."""
import numpy as np
import pytest

import gputorch
from gputorch import nn
from tests._helpers import assert_close

KINDS = ["ZeroPad", "ConstantPad", "ReflectionPad", "ReplicationPad", "CircularPad"]


def _torch():
    return pytest.importorskip("torch")


def _make(lib, kind, n, padding):
    cls = getattr(lib.nn, f"{kind}{n}d")
    return cls(padding, 2.5) if kind == "ConstantPad" else cls(padding)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_padding_parity(device, kind, n):
    torch = _torch()
    padding = (1, 2, 0, 1, 2, 1)[:2 * n]
    for pad, shape in ((padding, (2, 2) + (3,) * n), (1, (2,) + (3,) * n)):    # batched tuple, unbatched int
        ours, ref = _make(gputorch, kind, n, pad), _make(torch, kind, n, pad)
        assert repr(ours) == repr(ref)
        assert ours.padding == ref.padding
        x = np.random.randn(*shape)
        xo = gputorch.tensor(x, device=device, requires_grad=True)
        xt = torch.tensor(x, requires_grad=True)
        out, expected = ours(xo), ref(xt)
        assert_close(out, expected, 0, 0)
        g = np.random.randn(*expected.shape)
        out.backward(gputorch.tensor(g, device=device))
        expected.backward(torch.tensor(g))
        assert_close(xo.grad, xt.grad, 1e-12, 1e-12)


def test_padding_reprs():
    assert repr(nn.ZeroPad2d(2)) == "ZeroPad2d((2, 2, 2, 2))"
    assert repr(nn.ConstantPad3d(1, 3.5)) == "ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=3.5)"
    assert repr(nn.ReflectionPad2d((1, 2, 0, 1))) == "ReflectionPad2d((1, 2, 0, 1))"
    assert nn.ZeroPad1d(1).value == 0.0


def test_padding_errors():
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input dimension"):
        nn.ReflectionPad2d(3)(gputorch.randn(1, 2, 2))
    with pytest.raises(ValueError, match="expected 3D or 4D input \\(got 2D input\\)"):
        nn.CircularPad2d(1)(gputorch.randn(2, 3))
    with pytest.raises(ValueError, match="expected 4D or 5D input \\(got 3D input\\)"):
        nn.CircularPad3d(1)(gputorch.randn(2, 3, 3))
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 4D input tensor"):
        nn.ReflectionPad1d(1)(gputorch.randn(2, 2, 2, 2))
