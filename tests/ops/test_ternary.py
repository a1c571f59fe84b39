"""addcmul / addcdiv: values in PyTorch's order, promotion, broadcasting, gradients, in-place forms, errors."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck, gradgradcheck
from tests._helpers import assert_close

OPS = ["addcmul", "addcdiv"]


def rand(*shape, device="cpu", lo=-2.0, hi=2.0, requires_grad=True, seed=0):
    data = np.random.default_rng(seed).uniform(lo, hi, shape)
    return gputorch.tensor(data, dtype=gputorch.float64, device=device, requires_grad=requires_grad)


def _inputs(device, requires_grad=True):
    # tensor2 kept away from zero (it divides in addcdiv)
    return (rand(2, 3, device=device, requires_grad=requires_grad, seed=1),
            rand(3, device=device, requires_grad=requires_grad, seed=2),
            rand(2, 1, device=device, lo=0.5, hi=1.5, requires_grad=requires_grad, seed=3))


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("value", [1, -0.75])
def test_gradcheck_and_gradgradcheck(name, value, device):
    fn = getattr(gputorch, name)
    inputs = _inputs(device)
    assert gradcheck(lambda a, b, c: fn(a, b, c, value=value), inputs)
    assert gradgradcheck(lambda a, b, c: fn(a, b, c, value=value), inputs)


@pytest.mark.parametrize("name", OPS)
def test_parity_with_torch(name, device):
    torch = pytest.importorskip("torch")
    ours = [t.detach().requires_grad_() for t in _inputs(device)]
    theirs = [torch.tensor(t.detach().cpu().numpy(), requires_grad=True) for t in ours]
    out = getattr(gputorch, name)(*ours, value=0.3)
    expected = getattr(torch, name)(*theirs, value=0.3)
    assert_close(out, expected, rtol=1e-15, atol=0)
    assert out.grad_fn.name() == expected.grad_fn.name()
    weights = np.random.default_rng(5).standard_normal((2, 3))
    (out * gputorch.tensor(weights, device=device)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    for a, b in zip(ours, theirs):
        assert_close(a.grad, b.grad, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", OPS)
def test_float32_parity_with_torch(name, device):
    # PyTorch evaluates input + (value * tensor1) op tensor2 (its vectorised loop may fuse the
    # multiply-add, so allow one rounding step)
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x, y, z = (rng.uniform(0.5, 2.0, 1000).astype(np.float32) for _ in range(3))
    ours = getattr(gputorch, name)(*(gputorch.tensor(a, device=device) for a in (x, y, z)), value=0.1)
    expected = getattr(torch, name)(*(torch.tensor(a) for a in (x, y, z)), value=0.1)
    assert_close(ours, expected, rtol=1.2e-7, atol=0)


def test_numpy_reference_and_methods(device):
    a, b, c = (t.detach() for t in _inputs(device))
    an, bn, cn = (t.cpu().numpy() for t in (a, b, c))
    assert_close(a.addcmul(b, c, value=2), an + 2 * bn * cn, rtol=1e-14, atol=0)
    assert_close(a.addcdiv(b, c), an + bn / cn, rtol=1e-14, atol=0)


@pytest.mark.parametrize("name", OPS)
def test_inplace(name, device):
    a, b, c = (t.detach() for t in _inputs(device))
    expected = getattr(gputorch, name)(a, b, c, value=-2)
    version = a._version
    result = getattr(a, name + "_")(b, c, value=-2)
    assert result is a
    assert a._version == version + 1
    assert_close(a, expected, rtol=0, atol=0)


@pytest.mark.parametrize("name", OPS)
def test_inplace_gradients(name, device):
    a, b, c = _inputs(device)
    base = a * 1.0
    getattr(base, name + "_")(b, c, value=0.5)
    assert base.grad_fn.name() == ("AddcmulBackward0" if name == "addcmul" else "AddcdivBackward0")
    base.sum().backward()
    ref = [t.detach().requires_grad_() for t in (a, b, c)]
    getattr(gputorch, name)(*ref, value=0.5).sum().backward()
    for x, y in zip((a, b, c), ref):
        assert_close(x.grad, y.grad, rtol=1e-14, atol=0)


def test_inplace_on_leaf_requiring_grad_raises(device):
    a, b, c = _inputs(device)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        a.addcmul_(b, c)


def test_promotion_and_integers(device):
    i64 = gputorch.ones(2, dtype=gputorch.int64, device=device)
    i32 = gputorch.ones(2, dtype=gputorch.int32, device=device)
    f32 = gputorch.ones(2, dtype=gputorch.float32, device=device)
    assert gputorch.addcmul(i64, i32, f32, value=2).dtype == gputorch.float32
    assert gputorch.addcmul(i64, i32, i32).dtype == gputorch.int64
    # an integer result truncates a float value, like PyTorch
    two = gputorch.full((2,), 2, dtype=gputorch.int64, device=device)
    assert gputorch.addcmul(i64, two, i64, value=2.7).tolist() == [5, 5]
    assert gputorch.addcmul(i64, two, i64, value=-2.7).tolist() == [-3, -3]
    u8 = gputorch.ones(2, dtype=gputorch.uint8, device=device)
    assert gputorch.addcmul(u8, u8 * 2, u8, value=-1).tolist() == [255, 255]
    f64 = gputorch.ones(2, dtype=gputorch.float64, device=device)
    assert gputorch.addcmul(f32, f64, f32).dtype == gputorch.float64
    # a 0-dim input does not promote dimensioned float operands
    zero_dim = gputorch.ones((), dtype=gputorch.float32, device=device)
    assert gputorch.addcmul(zero_dim, f64, f64).dtype == gputorch.float64
    assert gputorch.addcdiv(i64, f32, i64).dtype == gputorch.float32


def test_edge_shapes(device):
    empty = gputorch.ones(0, 3, dtype=gputorch.float64, device=device)
    assert gputorch.addcmul(empty, empty, empty).shape == (0, 3)
    s = gputorch.tensor(2.0, device=device)
    assert gputorch.addcdiv(s, s, s, value=3).item() == 5.0
    base = gputorch.arange(12.0, device=device).reshape(3, 4)
    t = base.t()  # non-contiguous
    out = gputorch.addcmul(t, t, t[:, :1])
    ref = base.cpu().numpy().T
    assert_close(out, ref + ref * ref[:, :1], rtol=1e-15, atol=0)
    assert out.shape == (4, 3)


def test_out_and_tensor_value(device):
    a, b, c = (t.detach() for t in _inputs(device))
    out = gputorch.empty(0, dtype=gputorch.float64, device=device)
    result = gputorch.addcmul(a, b, c, out=out)
    assert result is out
    assert_close(out, gputorch.addcmul(a, b, c), rtol=0, atol=0)
    value = gputorch.tensor(2.0)
    assert_close(gputorch.addcdiv(a, b, c, value=value), gputorch.addcdiv(a, b, c, value=2.0), rtol=0, atol=0)


def test_errors(device):
    f = gputorch.ones(2, device=device)
    i = gputorch.ones(2, dtype=gputorch.int64, device=device)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
        gputorch.addcdiv(f, i, i)
    with pytest.raises(RuntimeError, match="must match the size of tensor"):
        gputorch.addcmul(f, gputorch.ones(3, device=device), f)
    with pytest.raises(TypeError, match="argument 'tensor1' .* must be Tensor, not int"):
        gputorch.addcmul(f, 2, f)
    with pytest.raises(TypeError, match="argument 'value' must be Number, not str"):
        gputorch.addcmul(f, f, f, value="a")
    with pytest.raises(TypeError, match="positional"):
        gputorch.addcmul(f, f, f, 3)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        i.addcmul_(f, f)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        f.addcmul_(gputorch.ones(2, 2, device=device), f)
    b = gputorch.ones(2, dtype=gputorch.bool, device=device)
    with pytest.raises(NotImplementedError, match="Bool"):
        gputorch.addcmul(b, b, b)
