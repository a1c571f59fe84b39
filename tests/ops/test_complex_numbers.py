"""Complex tensors: dtypes and promotion, creation, printing, the complex-number ops, PyTorch's
gradient convention (checked by gradcheck on real and imaginary perturbations), the refusal of
ops that do not support them yet, and serialization."""
import io
import math

import numpy as np
import pytest

import gputorch as T
from gputorch.autograd import gradcheck, gradgradcheck
from tests._helpers import assert_close, to_numpy


def _z(device, values, dtype=T.complex128, grad=False):
    return T.tensor(values, dtype=dtype, device=device, requires_grad=grad)


def test_promotion_follows_pytorch():
    assert T.promote_types(T.float32, T.complex64) is T.complex64
    assert T.promote_types(T.float64, T.complex64) is T.complex128
    assert T.promote_types(T.int64, T.complex64) is T.complex64
    assert T.promote_types(T.complex64, T.complex128) is T.complex128
    assert T.result_type(T.ones(2), 1j) is T.complex64
    assert T.result_type(T.ones(2, dtype=T.float64), 1j) is T.complex128
    assert T.result_type(T.ones(2, dtype=T.complex64), T.tensor(1.0, dtype=T.float64)) is T.complex64
    assert T.tensor([1 + 2j]).dtype is T.complex64
    assert T.complex64.is_complex and not T.complex64.is_floating_point and T.cfloat is T.complex64
    assert T.complex64.to_real() is T.float32 and T.float64.to_complex() is T.complex128


def test_arithmetic_values(device):
    a = _z(device, [1 + 2j, -3 + 0.5j])
    b = _z(device, [2 - 1j, 0.25j])
    assert_close((a * b), np.array([4 + 3j, -0.125 - 0.75j]))
    assert_close(a / b, np.array([1 + 2j, -3 + 0.5j]) / np.array([2 - 1j, 0.25j]))
    assert_close(a + 1.5, np.array([2.5 + 2j, -1.5 + 0.5j]))
    assert_close((a @ b), np.array([4 + 3j]).sum() + (-0.125 - 0.75j))
    assert_close(a.abs(), np.abs([1 + 2j, -3 + 0.5j]))
    assert (T.ones(2, device=device) * 1j).dtype is T.complex64


def test_parts_are_views(device):
    z = _z(device, [1 + 2j, 3 - 4j])
    assert_close(z.real, [1.0, 3.0])
    assert_close(z.imag, [2.0, -4.0])
    z.imag.mul_(10)
    assert_close(z, np.array([1 + 20j, 3 - 40j]))
    z.real = T.tensor([5.0, 6.0], dtype=T.float64, device=device)
    assert_close(z, np.array([5 + 20j, 6 - 40j]))
    r = T.view_as_real(z)
    assert r.shape == (2, 2) and r.dtype is T.float64
    r[0, 1] = -1.0
    assert_close(z[0], np.array(5 - 1j))
    back = T.view_as_complex(r)
    assert back.shape == (2,) and back.dtype is T.complex128
    x = T.ones(3, device=device)
    assert x.real is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        x.imag


def test_view_as_complex_checks(device):
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        T.view_as_complex(T.ones(3, 3, device=device))
    with pytest.raises(RuntimeError, match="last dimension with stride 1"):
        T.view_as_complex(T.ones(2, 4, device=device)[:, ::2])
    with pytest.raises(RuntimeError, match="only supported for half, float and double tensors.*Long"):
        T.view_as_complex(T.ones(3, 2, dtype=T.int64, device=device))
    with pytest.raises(RuntimeError, match="no complex32"):
        T.view_as_complex(T.ones(3, 2, dtype=T.float16, device=device))
    with pytest.raises(RuntimeError, match="only supported for complex tensors"):
        T.view_as_real(T.ones(3, device=device))


def test_polar_complex_angle_conj(device):
    r = T.tensor([1.0, 2.0, 0.5], dtype=T.float64, device=device)
    theta = T.tensor([0.0, math.pi / 2, -math.pi / 4], dtype=T.float64, device=device)
    z = T.polar(r, theta)
    assert_close(z, r.cpu().numpy() * np.exp(1j * theta.cpu().numpy()), atol=1e-15)
    assert_close(T.complex(r, theta), r.cpu().numpy() + 1j * theta.cpu().numpy())
    assert_close(z.angle(), theta.cpu().numpy(), atol=1e-15)
    assert_close(z.conj(), np.conj(to_numpy(z)))
    assert not z.conj().is_conj() and z.resolve_conj() is z
    assert_close(T.tensor([-2.0, 0.0, 3.0], device=device).angle(), [math.pi, 0.0, 0.0])
    with pytest.raises(RuntimeError, match="Expected object of scalar type Double but got scalar type Float"):
        T.complex(r, theta.float())


def test_gradient_convention(device):
    """PyTorch's convention: the gradient is dL/d(real) + i dL/d(imag)."""
    z = _z(device, [1 + 2j, 3 - 1j], grad=True)
    z.imag.sum().backward()
    assert_close(z.grad, np.array([1j, 1j]))
    z.grad = None
    z.abs().sum().backward()
    assert_close(z.grad, np.array([1 + 2j, 3 - 1j]) / np.abs([1 + 2j, 3 - 1j]))
    z.grad = None
    (z * z).real.sum().backward()      # d Re(z^2) = 2x dx - 2y dy  ->  2x - 2iy = 2 conj(z)
    assert_close(z.grad, 2 * np.conj([1 + 2j, 3 - 1j]))
    x = T.tensor([1.0, 2.0], dtype=T.float64, device=device, requires_grad=True)
    (x * (1 + 1j)).abs().sum().backward()    # a real input of a complex op keeps the real part
    assert x.grad.dtype is T.float64
    assert_close(x.grad, [math.sqrt(2), math.sqrt(2)])
    with pytest.raises(RuntimeError, match="only for real scalar outputs"):
        _z(device, [1j], grad=True).sum().backward()


@pytest.mark.parametrize("fn", [
    lambda a, b: (a @ b).exp() / (a.sum() + 3),
    lambda a, b: (a.sqrt() + a.log() * a.sin() - a.cos().reciprocal()) ** 2 @ b.tanh(),
    lambda a, b: T.view_as_real(a.conj() * a.sinh()).sum(-1) + a.angle() + a.cosh().real,
    lambda a, b: T.cat([a, b.mT]).transpose(0, 1).reshape(-1)[::2].mean(),
], ids=["matmul_exp_div", "pointwise", "parts", "shape"])
def test_gradcheck_complex(device, fn):
    a = T.randn(3, 2, dtype=T.complex128, device=device, requires_grad=True)
    b = T.randn(2, 3, dtype=T.complex128, device=device, requires_grad=True)
    with T.no_grad():
        a.add_(2)   # away from the branch cut of log and sqrt
    assert gradcheck(fn, (a, b))


def test_gradgradcheck_complex(device):
    a = T.randn(2, 2, dtype=T.complex128, device=device, requires_grad=True)
    assert gradgradcheck(lambda x: (x @ x).exp().imag, (a,))


def test_gradcheck_catches_a_missing_conjugate(device, monkeypatch):
    from gputorch.ops import arithmetic

    def unconjugated(ctx, grad):
        a, b = ctx.saved_values
        return grad * b, grad * a
    monkeypatch.setattr(arithmetic.MulBackward0, "backward", unconjugated)
    a = T.randn(3, dtype=T.complex128, device=device, requires_grad=True)
    b = T.randn(3, dtype=T.complex128, device=device, requires_grad=True)
    assert not gradcheck(lambda x, y: x * y, (a, b), raise_exception=False)


def test_unsupported_ops_refuse_complex(device):
    z = _z(device, [1 + 1j, 2 - 1j])
    with pytest.raises(NotImplementedError, match='"Lt" not implemented for complex tensors'):
        z < 1
    with pytest.raises(NotImplementedError, match="Clamp"):
        z.clamp(0, 1)
    with pytest.raises(NotImplementedError):
        T.ones(2, device=device).sigmoid() * 1j + z.sigmoid()


def test_creation_and_random(device):
    assert_close(T.zeros(2, dtype=T.cfloat, device=device), np.zeros(2, np.complex64))
    assert_close(T.full((2,), 1 + 2j, device=device), np.full(2, 1 + 2j, np.complex64))
    assert_close(T.eye(2, dtype=T.cdouble, device=device), np.eye(2, dtype=np.complex128))
    z = T.randn(20000, dtype=T.cfloat, device=device)
    assert z.dtype is T.complex64
    assert abs(float((z.abs() ** 2).mean()) - 1.0) < 0.05        # E|z|^2 = 1
    assert abs(float(z.real.std()) - math.sqrt(0.5)) < 0.02       # each part has variance 1/2
    u = T.rand(1000, dtype=T.cdouble, device=device)
    assert 0 <= float(u.real.min()) and float(u.imag.max()) < 1
    assert T.ones(2, device=device).to(T.cfloat).dtype is T.complex64
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert_close(z[:3].float(), to_numpy(z[:3]).real)


def test_printing_matches_pytorch():
    assert repr(T.tensor(1 + 2j)) == "tensor(1.+2.j)"
    assert repr(T.tensor([1.5 + 2j, -3.25 - 1e-5j])) == "tensor([ 1.5000+2.0000e+00j, -3.2500-1.0000e-05j])"
    assert repr(T.zeros(2, dtype=T.complex128)) == "tensor([0.+0.j, 0.+0.j], dtype=gputorch.complex128)"


def test_serialization_roundtrip_and_torch_format(tmp_path):
    z = T.tensor([1 + 2j, -0.5j], dtype=T.complex128)
    buf = io.BytesIO()
    T.save({"z": z}, buf)
    buf.seek(0)
    assert_close(T.load(buf)["z"], to_numpy(z))
    torch = pytest.importorskip("torch")
    buf.seek(0)
    theirs = torch.load(buf)["z"]
    assert theirs.dtype == torch.complex128
    np.testing.assert_array_equal(theirs.numpy(), to_numpy(z))
