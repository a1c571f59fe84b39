"""LocalResponseNorm / F.local_response_norm (composite; gradcheck) and the legacy CrossMapLRN2d
(its own op, reproducing torch's forward and backward) against torch, and their errors."""
import numpy as np
import pytest

import gputorch
import gputorch.nn.functional as F
from gputorch import nn
from gputorch.autograd import gradcheck
from tests._helpers import assert_close


def _parity(device, g_module, t_module, shape, seed=0):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    g = gputorch.tensor(x, device=device, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    out, expected = g_module(g), t_module(t)
    assert_close(out, expected, rtol=1e-12, atol=1e-14)
    go = rng.standard_normal(shape)
    out.backward(gputorch.tensor(go, device=device))
    expected.backward(torch.tensor(go))
    assert_close(g.grad, t.grad, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("shape,size", [((2, 5, 3), 3), ((2, 6, 2, 3), 4), ((1, 7, 2, 1, 2), 5), ((2, 3, 2), 1)])
def test_local_response_norm_parity(shape, size, device):
    torch = pytest.importorskip("torch")
    _parity(device, nn.LocalResponseNorm(size, alpha=0.3, beta=0.6, k=2.0),
            torch.nn.LocalResponseNorm(size, alpha=0.3, beta=0.6, k=2.0), shape)
    assert repr(nn.LocalResponseNorm(size)) == repr(torch.nn.LocalResponseNorm(size))


def test_local_response_norm_gradcheck_and_errors(device):
    x = gputorch.tensor(np.random.default_rng(3).standard_normal((1, 4, 2)), device=device, requires_grad=True)
    assert gradcheck(lambda a: F.local_response_norm(a, 3, alpha=0.5, beta=0.7, k=1.5), (x,))
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality input \\(got 2 dimensions\\)"):
        F.local_response_norm(gputorch.randn(2, 3, device=device), 2)


@pytest.mark.parametrize("shape,size", [((2, 8, 2, 3), 5), ((1, 3, 2, 2), 3), ((2, 6, 1, 2), 2), ((1, 9, 1, 1), 7)])
def test_cross_map_lrn2d_parity(shape, size, device):
    torch = pytest.importorskip("torch")
    _parity(device, nn.CrossMapLRN2d(size, alpha=0.3, beta=0.6, k=2.0),
            torch.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.6, k=2.0), shape)
    assert repr(nn.CrossMapLRN2d(size)) == repr(torch.nn.CrossMapLRN2d(size))
    with pytest.raises(ValueError, match="Expected input to be 4D, got 3D instead"):
        nn.CrossMapLRN2d(size)(gputorch.randn(1, 2, 3, device=device))
