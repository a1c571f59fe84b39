"""F.pad (every mode, negative pads, batched/unbatched, errors), F.one_hot and F.normalize
against torch, with gradcheck/gradgradcheck of the padding ops."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.nn import functional as F
from tests._helpers import assert_close, to_numpy

RTOL, ATOL = 1e-12, 1e-14


def _torch():
    return pytest.importorskip("torch")


PAD_CASES = [
    # (shape, pad, mode)
    ((2, 3), (1, 2), "constant"),
    ((2, 3, 4), (1, 0, 2, 1), "constant"),
    ((2, 3, 4), (1, 1, 1, 1, 1, 1), "constant"),
    ((2, 3, 4), (-1, 2, 0, -1), "constant"),
    ((5,), (3, 0), "constant"),
    ((2, 3, 5), (2, 3), "reflect"),
    ((3, 5), (4, 1), "reflect"),
    ((2, 2, 3, 4), (1, 2, 2, 1), "reflect"),
    ((2, 3, 4), (3, 3, 2, 2), "reflect"),
    ((1, 2, 3, 4, 3), (1, 1, 2, 2, 1, 0), "reflect"),
    ((2, 3, 5), (-1, 2), "reflect"),
    ((2, 3, 5), (2, 3), "replicate"),
    ((3, 5), (4, 1), "replicate"),
    ((2, 2, 3, 4), (3, 2, 0, 4), "replicate"),
    ((2, 3, 2, 3, 2), (1, 2, 2, 1, 3, 3), "replicate"),
    ((2, 3, 5), (-2, 1), "replicate"),
    ((2, 3, 5), (2, 3), "circular"),
    ((2, 2, 3, 4), (1, 2, 3, 1), "circular"),
    ((2, 3, 4), (4, 4), "circular"),
    ((1, 2, 3, 4, 3), (1, 1, 2, 2, 1, 0), "circular"),
    ((2, 3, 5), (-1, 2), "circular"),
]


@pytest.mark.parametrize("shape,pad,mode", PAD_CASES)
def test_pad_parity(shape, pad, mode, device):
    torch = _torch()
    data = np.random.randn(*shape)
    x = gputorch.tensor(data, device=device, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    out = F.pad(x, pad, mode=mode)
    ref = torch.nn.functional.pad(tx, pad, mode=mode)
    assert_close(out, ref, 0, 0)
    g = np.random.randn(*ref.shape)
    out.backward(gputorch.tensor(g, device=device))
    ref.backward(torch.tensor(g))
    assert_close(x.grad, tx.grad, RTOL, ATOL)
    if mode != "circular":
        assert out.grad_fn.name() == ref.grad_fn.name()


@pytest.mark.parametrize("shape,pad,mode", [c for c in PAD_CASES if c[0] != (1, 2, 3, 4, 3)])
def test_pad_gradcheck(shape, pad, mode, device):
    if len(shape) >= 3:
        shape = (1,) + shape[1:]     # one sample keeps the numerical Jacobians small
    x = gputorch.tensor(np.random.randn(*shape), device=device, requires_grad=True)
    fn = lambda t: F.pad(t, pad, mode=mode)  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_pad_constant_value_and_dtypes(device):
    torch = _torch()
    data = np.arange(6).reshape(2, 3)
    out = F.pad(gputorch.tensor(data, device=device), (1, 1), value=2.5)
    assert out.dtype == gputorch.int64
    assert_close(out, torch.nn.functional.pad(torch.tensor(data), (1, 1), value=2.5), 0, 0)
    f = F.pad(gputorch.tensor(data, dtype=gputorch.float32, device=device), [2, 0, 0, 1], value=-7.0)
    assert_close(f, torch.nn.functional.pad(torch.tensor(data, dtype=torch.float32), [2, 0, 0, 1], value=-7.0), 0, 0)
    assert F.pad(gputorch.tensor(1.0, device=device), ()).shape == ()
    r = F.pad(gputorch.tensor(np.arange(6.0).reshape(1, 2, 3), device=device), (1, 1), mode="reflect", value=0)
    assert r.shape == (1, 2, 5)


def test_pad_empty_batch(device):
    torch = _torch()
    for mode in ("reflect", "replicate", "circular", "constant"):
        out = F.pad(gputorch.zeros(0, 2, 2, 3, device=device), (1, 1, 1, 1), mode=mode)
        assert out.shape == torch.nn.functional.pad(torch.zeros(0, 2, 2, 3), (1, 1, 1, 1), mode=mode).shape


def test_pad_errors(device):
    x = gputorch.randn(1, 2, 3, device=device)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal to two times the input "
                                           "dimension but got padding length 8 and input of dimension 3"):
        F.pad(x, (1,) * 8)
    with pytest.raises(RuntimeError, match="resulted in a negative output size"):
        F.pad(x, (-2, -2))
    with pytest.raises(RuntimeError, match='Padding mode "reflect" doesn\'t take in value argument'):
        F.pad(x, (1, 1), mode="reflect", value=1.0)
    with pytest.raises(RuntimeError, match=r"Argument #4: Padding size should be less than the corresponding input "
                                           r"dimension, but got: padding \(3, 3\) at dimension 2 of input \[1, 2, 3\]"):
        F.pad(x, (3, 3), mode="reflect")
    with pytest.raises(RuntimeError, match=r"Argument #6: .* padding \(3, 3\) at dimension 2 of input \[1, 2, 3, 4\]"):
        F.pad(gputorch.randn(1, 2, 3, 4, device=device), (1, 1, 3, 3), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding value causes wrapping around more than once"):
        F.pad(x, (4, 1), mode="circular")
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 1D input tensor"):
        F.pad(gputorch.randn(3, device=device), (1, 1), mode="reflect")
    with pytest.raises(NotImplementedError, match="Padding size 4 is not supported for 2D input tensor"):
        F.pad(gputorch.randn(2, 3, device=device), (1, 1, 1, 1), mode="replicate")
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        F.pad(x, (1, 1), mode="foo")
    with pytest.raises(RuntimeError, match=r"Expected 2D or 3D \(batch mode\) tensor with possibly 0 batch size and "
                                           r"other non-zero dimensions for input, but got: \[1, 0, 3\]"):
        F.pad(gputorch.zeros(1, 0, 3, device=device), (1, 1), mode="replicate")
    with pytest.raises(TypeError, match="must be tuple of ints, but found element of type float at pos 0"):
        F.pad(x, (1.5, 1))


# ================================================================ one_hot
def test_one_hot_matches_torch(device):
    torch = _torch()
    idx = np.array([[0, 3, 1], [2, 2, 4]])
    out = F.one_hot(gputorch.tensor(idx, device=device))
    ref = torch.nn.functional.one_hot(torch.tensor(idx))
    assert out.dtype == gputorch.int64 and out.shape == (2, 3, 5)
    assert_close(out, ref, 0, 0)
    assert_close(F.one_hot(gputorch.tensor(idx, device=device), 7),
                 torch.nn.functional.one_hot(torch.tensor(idx), 7), 0, 0)
    assert_close(F.one_hot(gputorch.tensor(2, device=device), 4), [0, 0, 1, 0], 0, 0, check_dtype=False)
    assert F.one_hot(gputorch.zeros(0, dtype=gputorch.int64, device=device), 3).shape == (0, 3)
    assert not F.one_hot(gputorch.tensor([1], device=device)).requires_grad


def test_one_hot_errors(device):
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor of type LongTensor"):
        F.one_hot(gputorch.tensor([1.0, 2.0], device=device))
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor"):
        F.one_hot(gputorch.tensor([1, 2], dtype=gputorch.int32, device=device))
    with pytest.raises(RuntimeError, match="Can not infer total number of classes from empty tensor"):
        F.one_hot(gputorch.zeros(0, dtype=gputorch.int64, device=device))
    with pytest.raises(RuntimeError, match="Class values must be non-negative"):
        F.one_hot(gputorch.tensor([-1], device=device))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        F.one_hot(gputorch.tensor([3], device=device), 3)


# ================================================================ normalize
@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, 0), (3.0, -1), (float("inf"), 1)])
def test_normalize_matches_torch(p, dim, device):
    torch = _torch()
    data = np.random.randn(3, 4, 2)
    data[0, :, 0] = 0.0                      # a zero vector: eps keeps it finite
    x = gputorch.tensor(data, device=device, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    out = F.normalize(x, p=p, dim=dim)
    ref = torch.nn.functional.normalize(tx, p=p, dim=dim)
    assert_close(out, ref, RTOL, ATOL)
    g = np.random.randn(3, 4, 2)
    out.backward(gputorch.tensor(g, device=device))
    ref.backward(torch.tensor(g))
    assert_close(x.grad, tx.grad, 1e-10, 1e-12)


def test_normalize_gradcheck_and_out(device):
    x = gputorch.tensor(np.random.randn(3, 4), device=device, requires_grad=True)
    fn = lambda t: F.normalize(t, dim=1)  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))
    out = gputorch.empty(3, 4, dtype=gputorch.float64, device=device)
    with gputorch.no_grad():
        F.normalize(x, dim=0, out=out)
    assert_close(np.linalg.norm(to_numpy(out), axis=0), np.ones(4), 1e-12, 1e-12, check_dtype=False)
