"""Linear, Bilinear, Identity and F.linear/F.bilinear: parity with torch (forward, input and
parameter grads), gradcheck/gradgradcheck, default initialisation, state dicts, reprs, errors."""
import math

import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.nn import functional as F
from tests._helpers import assert_close, to_numpy
from tests.nn._models import copy_state

RTOL, ATOL = 1e-10, 1e-12


def _torch():
    return pytest.importorskip("torch")


def _t(array, device, requires_grad=True):
    return gputorch.tensor(array, dtype=gputorch.float64, device=device, requires_grad=requires_grad)


# ================================================================ nn.Linear parity
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4), (4,), (0, 4)])
def test_linear_module_parity(shape, bias, device):
    torch = _torch()
    ref = torch.nn.Linear(4, 3, bias=bias).double()
    ours = nn.Linear(4, 3, bias=bias, device=device, dtype=gputorch.float64)
    copy_state(ref, ours, gputorch, device)
    data = np.random.randn(*shape)
    x, tx = _t(data, device), torch.tensor(data, requires_grad=True)
    out, expected = ours(x), ref(tx)
    assert_close(out, expected, RTOL, ATOL)
    g = np.random.randn(*expected.shape)
    out.backward(gputorch.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    assert_close(x.grad, tx.grad, RTOL, ATOL)
    for (name, p), (tname, tp) in zip(ours.named_parameters(), ref.named_parameters()):
        assert name == tname
        assert_close(p.grad, tp.grad, RTOL, ATOL)


def test_linear_training_steps_match_torch(device):
    torch = _torch()
    ref = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2)).double()
    ours = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 2)).to(device=device, dtype=gputorch.float64)
    copy_state(ref, ours, gputorch, device)
    for step in range(4):
        data, target = np.random.randn(8, 6), np.random.randn(8, 2)
        loss = ((ours(_t(data, device, False)) - _t(target, device, False)) ** 2).mean()
        tloss = ((ref(torch.tensor(data)) - torch.tensor(target)) ** 2).mean()
        assert abs(loss.item() - tloss.item()) <= 1e-12 * abs(tloss.item())
        for m in (ours, ref):
            m.zero_grad()
        loss.backward()
        tloss.backward()
        with gputorch.no_grad():
            for p in ours.parameters():
                p -= 0.1 * p.grad
        with torch.no_grad():
            for p in ref.parameters():
                p -= 0.1 * p.grad
    for (k, v), (tk, tv) in zip(ours.state_dict().items(), ref.state_dict().items()):
        assert k == tk
        assert_close(v, tv, RTOL, ATOL)


def test_linear_layout_repr_and_state_dict_keys(device):
    torch = _torch()
    m = nn.Linear(7, 3, device=device)
    tm = torch.nn.Linear(7, 3)
    assert repr(m) == repr(tm) == "Linear(in_features=7, out_features=3, bias=True)"
    assert repr(nn.Linear(2, 2, bias=False)) == repr(torch.nn.Linear(2, 2, bias=False))
    assert list(m.state_dict()) == list(tm.state_dict()) == ["weight", "bias"]
    assert m.weight.shape == (3, 7) and m.bias.shape == (3,)
    assert m.weight.device.type == device and m.weight.dtype == gputorch.float32
    assert nn.Linear(2, 3, bias=False).bias is None
    # state dicts interchange with torch in both directions
    copy_state(m, tm, torch)
    copy_state(tm, m, gputorch, device)
    assert_close(m.weight, tm.weight, 0, 0)


def test_linear_default_init_statistics(device):
    gputorch.manual_seed(0)
    m = nn.Linear(400, 300, device=device, dtype=gputorch.float64)
    bound = 1 / math.sqrt(400)    # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    w = to_numpy(m.weight)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.mean()) < 0.01 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    b = to_numpy(m.bias)
    assert np.abs(b).max() <= bound and abs(b.std() - bound / math.sqrt(3)) < 0.1 * bound


def test_linear_init_is_reproducible_and_reset(device):
    gputorch.manual_seed(3)
    a = nn.Linear(5, 4, device=device)
    gputorch.manual_seed(3)
    b = nn.Linear(5, 4, device=device)
    assert_close(a.weight, b.weight, 0, 0)
    assert_close(a.bias, b.bias, 0, 0)
    before = to_numpy(a.weight).copy()
    a.reset_parameters()
    assert not np.allclose(before, to_numpy(a.weight))
    assert a.weight.requires_grad and a.weight.grad_fn is None


def test_linear_wrong_input_names_the_layer(device):
    m = nn.Linear(4, 5, device=device)
    with pytest.raises(RuntimeError) as info:
        m(gputorch.randn(3, 3, device=device))
    message = str(info.value)
    assert "Linear(in_features=4, out_features=5, bias=True)" in message
    assert "(*, 4)" in message and "[3, 3]" in message
    assert "mat1 and mat2 shapes cannot be multiplied (3x3 and 4x5)" in message
    with pytest.raises(RuntimeError, match="Linear"):
        m(gputorch.tensor(1.0, device=device))


def test_identity(device):
    x = gputorch.randn(2, 3, device=device)
    assert nn.Identity(54, unused="argument")(x) is x
    assert repr(nn.Identity()) == "Identity()"


# ================================================================ F.linear
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (4,)])
@pytest.mark.parametrize("bias", [True, False])
def test_f_linear_gradcheck(shape, bias, device):
    x = _t(np.random.randn(*shape), device)
    w = _t(np.random.randn(2, 4), device)
    args = (x, w, _t(np.random.randn(2), device)) if bias else (x, w)
    assert gradcheck(F.linear, args)
    assert gradgradcheck(F.linear, args)


def test_f_linear_one_op_and_noncontiguous(device):
    torch = _torch()
    data, wdata = np.random.randn(4, 3), np.random.randn(5, 4)
    x = _t(data, device).t()            # (3, 4), non-contiguous
    w = _t(wdata, device)
    out = F.linear(x, w)
    assert out.grad_fn.name() == "LinearBackward0"
    assert_close(out, torch.nn.functional.linear(torch.tensor(data).t(), torch.tensor(wdata)), RTOL, ATOL)
    assert gradcheck(F.linear, (x, w))


def test_f_linear_broadcast_bias_and_1d_weight(device):
    torch = _torch()
    x, w, b = np.random.randn(3, 4), np.random.randn(5, 4), np.random.randn(1)
    out = F.linear(_t(x, device), _t(w, device), _t(b, device))
    assert_close(out, torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b)), RTOL, ATOL)
    assert gradcheck(F.linear, (_t(x, device), _t(w, device), _t(b, device)))
    v = np.random.randn(4)
    out = F.linear(_t(x, device), _t(v, device))
    assert out.shape == (3,)
    assert_close(out, torch.nn.functional.linear(torch.tensor(x), torch.tensor(v)), RTOL, ATOL)


def test_f_linear_errors(device):
    x = gputorch.randn(2, 3, 4, dtype=gputorch.float64, device=device)
    w = gputorch.randn(5, 4, dtype=gputorch.float64, device=device)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(6x4 and 3x5\)"):
        F.linear(x, gputorch.randn(5, 3, dtype=gputorch.float64, device=device))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: double != float"):
        F.linear(x, w.float())
    with pytest.raises(RuntimeError, match="self and mat2 must have the same dtype, but got Float and Double"):
        F.linear(x, w, gputorch.randn(5, device=device))
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(5\) must match the existing size \(4\)"):
        F.linear(x, w, gputorch.randn(4, dtype=gputorch.float64, device=device))
    with pytest.raises(RuntimeError, match="both arguments to linear need to be at least 1D, but they are 0D and 2D"):
        F.linear(gputorch.tensor(1.0, dtype=gputorch.float64, device=device), w)
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions, but self is 3D"):
        F.linear(x, gputorch.randn(2, 5, 4, dtype=gputorch.float64, device=device))
    with pytest.raises(TypeError, match="must be Tensor"):
        F.linear(x, [[1.0]])


# ================================================================ Bilinear
@pytest.mark.parametrize("shape", [(5,), (2, 3), ()])
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_module_parity(shape, bias, device):
    torch = _torch()
    ref = torch.nn.Bilinear(4, 3, 2, bias=bias).double()
    ours = nn.Bilinear(4, 3, 2, bias=bias, device=device, dtype=gputorch.float64)
    copy_state(ref, ours, gputorch, device)
    d1, d2 = np.random.randn(*shape, 4), np.random.randn(*shape, 3)
    x1, x2 = _t(d1, device), _t(d2, device)
    t1, t2 = torch.tensor(d1, requires_grad=True), torch.tensor(d2, requires_grad=True)
    out, expected = ours(x1, x2), ref(t1, t2)
    assert_close(out, expected, RTOL, ATOL)
    g = np.random.randn(*expected.shape)
    out.backward(gputorch.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    assert_close(x1.grad, t1.grad, RTOL, ATOL)
    assert_close(x2.grad, t2.grad, RTOL, ATOL)
    for p, tp in zip(ours.parameters(), ref.parameters()):
        assert_close(p.grad, tp.grad, RTOL, ATOL)


def test_bilinear_gradcheck_repr_init(device):
    torch = _torch()
    x1, x2 = _t(np.random.randn(3, 2), device), _t(np.random.randn(3, 4), device)
    w, b = _t(np.random.randn(5, 2, 4), device), _t(np.random.randn(5), device)
    assert gradcheck(F.bilinear, (x1, x2, w, b))
    assert gradgradcheck(F.bilinear, (x1, x2, w, b))
    assert repr(nn.Bilinear(2, 4, 5)) == repr(torch.nn.Bilinear(2, 4, 5))
    m = nn.Bilinear(100, 4, 50, device=device, dtype=gputorch.float64)
    bound = 1 / math.sqrt(100)
    for p in (m.weight, m.bias):
        v = to_numpy(p)
        assert np.abs(v).max() <= bound and abs(v.std() - bound / math.sqrt(3)) < 0.1 * bound
    assert m.weight.shape == (50, 100, 4)
    assert list(m.state_dict()) == ["weight", "bias"]


def test_bilinear_errors(device):
    w = gputorch.randn(6, 4, 3, dtype=gputorch.float64, device=device)
    x = gputorch.randn(2, 3, 4, dtype=gputorch.float64, device=device)
    with pytest.raises(RuntimeError, match="input dimensions do not match: got 3 and 2"):
        F.bilinear(x, gputorch.randn(3, 3, dtype=gputorch.float64, device=device), w)
    with pytest.raises(RuntimeError, match="input batch dimensions do not match at dim 1: got 3 and 2"):
        F.bilinear(x, gputorch.randn(2, 2, 3, dtype=gputorch.float64, device=device), w)
    with pytest.raises(RuntimeError, match="input2 size does not match weight size: got 2 but expected 3"):
        F.bilinear(x, gputorch.randn(2, 3, 2, dtype=gputorch.float64, device=device), w)
    with pytest.raises(RuntimeError, match="bias size does not match weight size: got 5 but expected 6"):
        F.bilinear(x, gputorch.randn(2, 3, 3, dtype=gputorch.float64, device=device), w,
                   gputorch.randn(5, dtype=gputorch.float64, device=device))
    with pytest.raises(RuntimeError, match="All tensors must have the same dtype"):
        F.bilinear(x.float(), gputorch.randn(2, 3, 3, device=device), w)
    with pytest.raises(RuntimeError, match=r"Bilinear\(in1_features=4, in2_features=3, out_features=6"):
        nn.Bilinear(4, 3, 6, device=device)(gputorch.randn(2, 5, device=device), gputorch.randn(2, 3, device=device))
