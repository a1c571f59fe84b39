"""F.unfold / F.fold and nn.Unfold / nn.Fold: parity with torch (values and gradients, float64),
gradcheck of both ops and of their double backward, reprs and errors."""
import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.nn import functional as F
from tests._helpers import assert_close

RTOL, ATOL = 1e-12, 1e-12
CASES = [dict(kernel_size=2), dict(kernel_size=(3, 2), dilation=(1, 2), padding=(1, 0), stride=(2, 1))]


def _torch():
    return pytest.importorskip("torch")


def _parity(ours_fn, ref_fn, device, x):
    torch = _torch()
    ours_in = gputorch.tensor(x, device=device, requires_grad=True)
    ref_in = torch.tensor(x, requires_grad=True)
    out, expected = ours_fn(ours_in), ref_fn(ref_in)
    assert_close(out, expected, RTOL, ATOL)
    g = np.random.randn(*expected.shape)
    out.backward(gputorch.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    assert_close(ours_in.grad, ref_in.grad, RTOL, ATOL)
    return out


@pytest.mark.parametrize("kwargs", CASES)
def test_unfold_fold_parity(device, kwargs):
    torch = _torch()
    tf = torch.nn.functional
    x = np.random.randn(2, 3, 5, 6)
    out = _parity(lambda t: F.unfold(t, **kwargs), lambda t: tf.unfold(t, **kwargs), device, x)
    assert out.grad_fn.name() == "Im2ColBackward0"
    _parity(lambda t: F.unfold(t, **kwargs), lambda t: tf.unfold(t, **kwargs), device, x[0])
    cols = np.random.randn(*out.shape)
    folded = _parity(lambda t: F.fold(t, (5, 6), **kwargs), lambda t: tf.fold(t, (5, 6), **kwargs), device, cols)
    assert folded.grad_fn.name() == "Col2ImBackward0"
    _parity(lambda t: F.fold(t, (5, 6), **kwargs), lambda t: tf.fold(t, (5, 6), **kwargs), device, cols[0])


def test_fold_unfold_gradcheck(device):
    x = gputorch.tensor(np.random.randn(1, 2, 4, 5), device=device, requires_grad=True)
    unfold = lambda t: F.unfold(t, (2, 3), padding=1, stride=2)  # noqa: E731
    assert gradcheck(unfold, (x,))
    assert gradgradcheck(unfold, (x,))
    cols = gputorch.tensor(np.random.randn(1, 12, 9), device=device, requires_grad=True)
    fold = lambda t: F.fold(t, (4, 5), (2, 3), padding=1, stride=2)  # noqa: E731
    assert gradcheck(fold, (cols,))
    assert gradgradcheck(fold, (cols,))


def test_fold_modules(device):
    torch = _torch()
    x = np.random.randn(1, 2, 4, 5)
    ours, ref = nn.Unfold(2, padding=1, stride=(1, 2)), torch.nn.Unfold(2, padding=1, stride=(1, 2))
    assert repr(ours) == repr(ref)
    cols = _parity(ours, ref, device, x)
    ours, ref = nn.Fold((4, 5), 2, padding=1, stride=(1, 2)), torch.nn.Fold((4, 5), 2, padding=1, stride=(1, 2))
    assert repr(ours) == repr(ref)
    _parity(ours, ref, device, np.random.randn(*cols.shape))


def test_fold_unfold_errors():
    x = gputorch.randn(2, 3, 5, 5)
    with pytest.raises(RuntimeError, match="It is expected kernel_size equals to 2, but got size 3"):
        F.unfold(x, (2, 2, 2))
    with pytest.raises(RuntimeError, match="calculated shape of the array of sliding blocks as \\(0, 0\\)"):
        F.unfold(x, 6)
    with pytest.raises(RuntimeError, match="kernel size should be greater than zero, but got kernel_height: 0"):
        F.unfold(x, 0)
    with pytest.raises(RuntimeError, match="stride should be greater than zero"):
        F.unfold(x, 2, stride=0)
    with pytest.raises(RuntimeError, match="padding should be non-negative, but got pad_height: -1"):
        F.unfold(x, 2, padding=-1)
    with pytest.raises(RuntimeError, match="Expected 3D or 4D \\(batch mode\\) tensor"):
        F.unfold(gputorch.randn(2, 3, 5, 5, 5), 2)
    with pytest.raises(TypeError, match="must be tuple of ints, but found element of type float"):
        F.unfold(x, 2.0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        F.unfold(x.long(), 2)
    with pytest.raises(RuntimeError, match="divisible by the product of kernel_size, but got input.size\\(1\\)=13"):
        F.fold(gputorch.randn(2, 13, 16), (5, 5), 2)
    with pytest.raises(RuntimeError, match="match the calculated number of sliding blocks 4 \\* 4 = 16, but got "
                                           "input.size\\(2\\)=15"):
        F.fold(gputorch.randn(2, 12, 15), (5, 5), 2)
    with pytest.raises(RuntimeError, match="It is expected output_size equals to 2, but got size 3"):
        F.fold(gputorch.randn(2, 12, 16), (5, 5, 5), 2)
    with pytest.raises(RuntimeError, match="Expected 2D or 3D \\(batch mode\\) tensor for input"):
        F.fold(gputorch.randn(2, 2, 12, 16), 5, 2)
