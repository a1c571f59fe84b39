"""Normalization: F.batch_norm/layer_norm/group_norm/rms_norm/instance_norm and their modules."""
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.nn import functional as F
from tests._helpers import assert_close
from tests.nn._models import copy_state

RTOL, ATOL = 1e-10, 1e-12


def _torch():
    return pytest.importorskip("torch")


def _pair(torch, array, device, requires_grad=True):
    return (gputorch.tensor(array, device=device, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def _check_backward(torch, out, ref, pairs):
    """Same values, dtype and gradients (for a random output gradient) for every (ours, torch's) pair."""
    assert_close(out, ref, RTOL, ATOL)
    g = np.random.randn(*ref.shape)
    out.backward(gputorch.tensor(g, device=out.device))
    ref.backward(torch.tensor(g))
    for ours, theirs in pairs:
        assert_close(ours.grad, theirs.grad, RTOL, ATOL)


# ================================================================ functional parity
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 3)])
def test_batch_norm_parity(device, training, shape):
    torch = _torch()
    x, tx = _pair(torch, np.random.randn(*shape) * 2 + 1, device)
    w, tw = _pair(torch, np.random.randn(3), device)
    b, tb = _pair(torch, np.random.randn(3), device)
    rm_init, rv_init = np.random.randn(3), np.random.rand(3) + 0.5
    rm, trm = _pair(torch, rm_init, device, False)
    rv, trv = _pair(torch, rv_init, device, False)
    out = F.batch_norm(x, rm, rv, w, b, training, 0.3, 1e-3)
    ref = torch.nn.functional.batch_norm(tx, trm, trv, tw, tb, training, 0.3, 1e-3)
    assert out.grad_fn.name() == type(ref.grad_fn).__name__ == "NativeBatchNormBackward0"
    _check_backward(torch, out, ref, [(x, tx), (w, tw), (b, tb)])
    assert_close(rm, trm, RTOL, ATOL)
    assert_close(rv, trv, RTOL, ATOL)
    assert (rm._version > 0) == training


def test_batch_norm_running_var_is_unbiased(device):
    x = gputorch.tensor([[1.0], [2.0], [6.0]], dtype=gputorch.float64, device=device)
    rm = gputorch.zeros(1, dtype=gputorch.float64, device=device)
    rv = gputorch.ones(1, dtype=gputorch.float64, device=device)
    F.batch_norm(x, rm, rv, training=True, momentum=0.5)
    assert rm.item() == pytest.approx(0.5 * 3.0)
    assert rv.item() == pytest.approx(0.5 * 1.0 + 0.5 * 7.0)  # unbiased var of (1, 2, 6) is 7


def test_batch_norm_no_affine_no_stats(device):
    torch = _torch()
    x, tx = _pair(torch, np.random.randn(5, 2, 3), device)
    out = F.batch_norm(x, None, None, training=True)
    ref = torch.nn.functional.batch_norm(tx, None, None, training=True)
    _check_backward(torch, out, ref, [(x, tx)])


def test_batch_norm_bias_without_weight(device):
    torch = _torch()
    x, tx = _pair(torch, np.random.randn(5, 2), device)
    b, tb = _pair(torch, np.random.randn(2), device)
    out = F.batch_norm(x, None, None, None, b, True)
    ref = torch.nn.functional.batch_norm(tx, None, None, None, tb, True)
    _check_backward(torch, out, ref, [(x, tx), (b, tb)])


@pytest.mark.parametrize("normalized_shape", [5, (4, 5), [3, 4, 5]])
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
def test_layer_norm_parity(device, normalized_shape, affine):
    torch = _torch()
    x, tx = _pair(torch, np.random.randn(2, 3, 4, 5) * 3 - 1, device)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    pairs = [(x, tx)]
    w = tw = b = tb = None
    if affine != "none":
        w, tw = _pair(torch, np.random.randn(*shape), device)
        pairs.append((w, tw))
    if affine == "both":
        b, tb = _pair(torch, np.random.randn(*shape), device)
        pairs.append((b, tb))
    out = F.layer_norm(x, normalized_shape, w, b, eps=1e-4)
    ref = torch.nn.functional.layer_norm(tx, shape, tw, tb, eps=1e-4)
    assert out.grad_fn.name() == type(ref.grad_fn).__name__ == "NativeLayerNormBackward0"
    _check_backward(torch, out, ref, pairs)


def test_layer_norm_input_equal_to_normalized_shape(device):
    torch = _torch()
    x, tx = _pair(torch, np.random.randn(4, 5), device)
    w, tw = _pair(torch, np.random.randn(4, 5), device)
    b, tb = _pair(torch, np.random.randn(4, 5), device)
    _check_backward(torch, F.layer_norm(x, (4, 5), w, b), torch.nn.functional.layer_norm(tx, (4, 5), tw, tb),
                    [(x, tx), (w, tw), (b, tb)])


def test_layer_norm_non_contiguous_input(device):
    torch = _torch()
    base = np.random.randn(5, 3, 4)
    x, tx = _pair(torch, base, device)
    w, tw = _pair(torch, np.random.randn(5), device)
    out = F.layer_norm(x.transpose(0, 2), (5,), w)
    ref = torch.nn.functional.layer_norm(tx.transpose(0, 2), (5,), tw)
    _check_backward(torch, out, ref, [(x, tx), (w, tw)])


@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((3, 4), 2), ((2, 4, 3, 2), 1), ((2, 4, 2, 3), 4)])
def test_group_norm_parity(device, shape, groups):
    torch = _torch()
    x, tx = _pair(torch, np.random.randn(*shape) + 0.5, device)
    w, tw = _pair(torch, np.random.randn(shape[1]), device)
    b, tb = _pair(torch, np.random.randn(shape[1]), device)
    out = F.group_norm(x, groups, w, b, eps=1e-3)
    ref = torch.nn.functional.group_norm(tx, groups, tw, tb, eps=1e-3)
    assert out.grad_fn.name() == type(ref.grad_fn).__name__ == "NativeGroupNormBackward0"
    _check_backward(torch, out, ref, [(x, tx), (w, tw), (b, tb)])


def test_group_norm_without_affine(device):
    torch = _torch()
    x, tx = _pair(torch, np.random.randn(2, 4, 3), device)
    _check_backward(torch, F.group_norm(x, 2), torch.nn.functional.group_norm(tx, 2), [(x, tx)])


@pytest.mark.parametrize("eps", [None, 1e-3])
@pytest.mark.parametrize("with_weight", [True, False])
def test_rms_norm_parity(device, eps, with_weight):
    torch = _torch()
    x, tx = _pair(torch, np.random.randn(3, 4, 5), device)
    pairs = [(x, tx)]
    w = tw = None
    if with_weight:
        w, tw = _pair(torch, np.random.randn(4, 5), device)
        pairs.append((w, tw))
    out = F.rms_norm(x, (4, 5), w, eps)
    ref = torch.nn.functional.rms_norm(tx, (4, 5), tw, eps)
    _check_backward(torch, out, ref, pairs)


def test_rms_norm_default_eps_is_machine_epsilon(device):
    x = gputorch.tensor([[0.0, 0.0]], dtype=gputorch.float32, device=device)
    x[0, 0] = 1e-4
    expected = 1e-4 / np.sqrt(np.float32(1e-8) / 2 + np.finfo(np.float32).eps)
    assert F.rms_norm(x, (2,))[0, 0].item() == pytest.approx(float(expected), rel=1e-5)


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm_parity(device, use_input_stats):
    torch = _torch()
    x, tx = _pair(torch, np.random.randn(2, 3, 4, 5), device)
    w, tw = _pair(torch, np.random.randn(3), device)
    b, tb = _pair(torch, np.random.randn(3), device)
    rm, trm = _pair(torch, np.random.randn(3), device, False)
    rv, trv = _pair(torch, np.random.rand(3) + 0.5, device, False)
    out = F.instance_norm(x, rm, rv, w, b, use_input_stats, 0.2, 1e-5)
    ref = torch.nn.functional.instance_norm(tx, trm, trv, tw, tb, use_input_stats, 0.2, 1e-5)
    _check_backward(torch, out, ref, [(x, tx), (w, tw), (b, tb)])
    assert_close(rm, trm, RTOL, ATOL)
    assert_close(rv, trv, RTOL, ATOL)


def test_float32_and_float16(device):
    torch = _torch()
    a = np.random.randn(4, 3, 5).astype(np.float32)
    x, tx = _pair(torch, a, device)
    out = F.layer_norm(x, (5,))
    ref = torch.nn.functional.layer_norm(tx, (5,))
    assert out.dtype is gputorch.float32
    assert_close(out, ref, 1e-5, 1e-5)
    half = gputorch.tensor(a, device=device).half()
    for fn in (lambda t: F.layer_norm(t, (5,)), lambda t: F.group_norm(t, 3), lambda t: F.rms_norm(t, (5,)),
               lambda t: F.batch_norm(t, None, None, training=True)):
        got = fn(half)
        assert got.dtype is gputorch.float16
        assert_close(got.float(), fn(half.float()), 2e-3, 2e-3, check_dtype=False)


def test_float16_backward_accumulates_in_float32(device):
    x = gputorch.tensor(np.random.randn(4, 6), dtype=gputorch.float16, device=device, requires_grad=True)
    w = gputorch.ones(6, dtype=gputorch.float16, device=device, requires_grad=True)
    F.layer_norm(x, (6,), w).pow(2).sum().backward()
    assert x.grad.dtype is gputorch.float16 and w.grad.dtype is gputorch.float16
    x32 = x.detach().float().requires_grad_()
    F.layer_norm(x32, (6,)).pow(2).sum().backward()
    assert_close(x.grad.float(), x32.grad, 1e-2, 1e-2, check_dtype=False)


def test_empty_batch(device):
    x = gputorch.zeros(0, 4, device=device, requires_grad=True)
    out = F.layer_norm(x, (4,))
    out.sum().backward()
    assert out.shape == (0, 4) and x.grad.shape == (0, 4)
    m = nn.BatchNorm1d(4).to(device)
    assert m(gputorch.zeros(0, 4, device=device)).shape == (0, 4)
    assert m.running_mean.tolist() == [0.0] * 4 and m.running_var.tolist() == [1.0] * 4


# ================================================================ gradcheck / gradgradcheck
def _r(device, *shape):
    return gputorch.tensor(np.random.randn(*shape), device=device, requires_grad=True)


GRAD_CASES = {
    "batch_norm_train": (lambda x, w, b: F.batch_norm(x, None, None, w, b, True), (3, 2, 2), 2),
    "batch_norm_eval": (lambda x, w, b: F.batch_norm(
        x, gputorch.tensor([0.3, -0.2], dtype=x.dtype, device=x.device),
        gputorch.tensor([0.8, 1.5], dtype=x.dtype, device=x.device), w, b, False), (3, 2, 2), 2),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (2, 3), w.view(2, 3), b.view(2, 3)), (2, 2, 3), 6),
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b), (2, 4, 2), 4),
    "rms_norm": (lambda x, w, b: F.rms_norm(x, (3,), w) + b, (2, 2, 3), 3),
    "instance_norm": (lambda x, w, b: F.instance_norm(x, weight=w, bias=b), (2, 2, 3), 2),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradcheck_and_gradgradcheck(device, name):
    fn, shape, c = GRAD_CASES[name]
    inputs = (_r(device, *shape), _r(device, c), _r(device, c))
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("name", ["batch_norm", "layer_norm", "group_norm", "rms_norm"])
def test_gradgradcheck_without_affine(device, name):
    fn = {"batch_norm": lambda x: F.batch_norm(x, None, None, training=True),
          "layer_norm": lambda x: F.layer_norm(x, (3,)),
          "group_norm": lambda x: F.group_norm(x, 3),
          "rms_norm": lambda x: F.rms_norm(x, (3,))}[name]
    x = _r(device, 4, 3)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_double_backward_parity_layer_norm(device):
    torch = _torch()
    x, tx = _pair(torch, np.random.randn(3, 4), device)
    w, tw = _pair(torch, np.random.randn(4), device)
    (gx,) = gputorch.autograd.grad(F.layer_norm(x, (4,), w).pow(3).sum(), x, create_graph=True)
    (tgx,) = torch.autograd.grad(torch.nn.functional.layer_norm(tx, (4,), tw).pow(3).sum(), tx, create_graph=True)
    assert_close(gx, tgx, RTOL, ATOL)
    gx.pow(2).sum().backward()
    tgx.pow(2).sum().backward()
    assert_close(x.grad, tx.grad, 1e-9, 1e-11)
    assert_close(w.grad, tw.grad, 1e-9, 1e-11)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("name", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize("affine", [True, False])
def test_array_backward_equals_tensor_op_backward(device, dtype, name, affine):
    """Plain backward runs the normalization's array gradients (``norm_backward_kernel``); backward
    with ``create_graph=True`` runs the differentiable Tensor ops. Both give the same gradients."""
    rng = np.random.default_rng(0)
    dt = getattr(gputorch, dtype)
    x = gputorch.tensor(rng.standard_normal((3, 5, 8)) * 3 + 1, dtype=dt, device=device, requires_grad=True)
    w = gputorch.tensor(rng.standard_normal((5, 8)), dtype=dt, device=device, requires_grad=True) if affine else None
    b = gputorch.tensor(rng.standard_normal((5, 8)), dtype=dt, device=device, requires_grad=True) if affine else None
    g = gputorch.tensor(rng.standard_normal((3, 5, 8)), dtype=dt, device=device)
    leaves = [t for t in (x, w, b if name == "layer_norm" else None) if t is not None]

    def run(create_graph):
        args = (x, (5, 8), w, b) if name == "layer_norm" else (x, (5, 8), w)
        return gputorch.autograd.grad(getattr(F, name)(*args), leaves, g, create_graph=create_graph)

    plain, recorded = run(False), run(True)
    tol = dict(float64=(1e-12, 1e-12), float32=(1e-5, 1e-5), float16=(2e-3, 2e-3))[dtype]
    for p_, r_ in zip(plain, recorded):
        assert p_.dtype == r_.dtype == dt and p_.shape == r_.shape
        np.testing.assert_allclose(p_.detach().cpu().numpy().astype(np.float64),
                                   r_.detach().cpu().numpy().astype(np.float64), rtol=tol[0], atol=tol[1])


# ================================================================ modules
def _module_pair(torch, name, *args, device="cpu", **kwargs):
    ours = getattr(nn, name)(*args, **kwargs).double().to(device)
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.randn_like(p))
    copy_state(theirs, ours, gputorch, device=device)
    return ours, theirs


@pytest.mark.parametrize("name,shape", [("BatchNorm1d", (8, 3)), ("BatchNorm1d", (4, 3, 5)),
                                        ("BatchNorm2d", (4, 3, 2, 3)), ("BatchNorm3d", (2, 3, 2, 2, 2))])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_module_training_steps(device, name, shape, momentum):
    torch = _torch()
    ours, theirs = _module_pair(torch, name, 3, momentum=momentum, device=device)
    for _ in range(4):
        x, tx = _pair(torch, np.random.randn(*shape) * 3 + 2, device)
        out, ref = ours(x), theirs(tx)
        _check_backward(torch, out, ref, [(x, tx), (ours.weight, theirs.weight), (ours.bias, theirs.bias)])
        ours.zero_grad()
        theirs.zero_grad()
    for key, value in theirs.state_dict().items():
        assert_close(ours.state_dict()[key], value, RTOL, ATOL)
    assert ours.num_batches_tracked.item() == 4 and ours.num_batches_tracked.dtype is gputorch.int64
    ours.eval()
    theirs.eval()
    x, tx = _pair(torch, np.random.randn(*shape), device)
    _check_backward(torch, ours(x), theirs(tx), [(x, tx), (ours.weight, theirs.weight)])
    assert ours.num_batches_tracked.item() == 4


def test_batch_norm_cumulative_average(device):
    m = nn.BatchNorm1d(1, momentum=None, affine=False).double().to(device)
    batches = [[1.0, 3.0], [2.0, 6.0], [0.0, 10.0]]
    for b in batches:
        m(gputorch.tensor(b, dtype=gputorch.float64, device=device).view(2, 1))
    assert m.running_mean.item() == pytest.approx(np.mean([np.mean(b) for b in batches]))
    assert m.running_var.item() == pytest.approx(np.mean([np.var(b, ddof=1) for b in batches]))


@pytest.mark.parametrize("track", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_module_options(device, track, affine):
    torch = _torch()
    ours, theirs = _module_pair(torch, "BatchNorm1d", 3, affine=affine, track_running_stats=track, device=device)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert repr(ours) == repr(theirs)
    for mode in ("train", "eval"):
        getattr(ours, mode)()
        getattr(theirs, mode)()
        x, tx = _pair(torch, np.random.randn(6, 3), device)
        _check_backward(torch, ours(x), theirs(tx), [(x, tx)])
    if track:
        assert_close(ours.running_mean, theirs.running_mean, RTOL, ATOL)
    else:
        assert ours.running_mean is None and ours.num_batches_tracked is None


def test_batch_norm_module_defaults_and_dtype(device):
    m = nn.BatchNorm2d(4, device=device)
    assert m.weight.tolist() == [1.0] * 4 and m.bias.tolist() == [0.0] * 4
    assert m.running_mean.tolist() == [0.0] * 4 and m.running_var.tolist() == [1.0] * 4
    assert m.num_batches_tracked.item() == 0 and m.num_batches_tracked.dtype is gputorch.int64
    assert m.weight.dtype is gputorch.float32 and m.weight.device.type == device
    m64 = nn.BatchNorm1d(2, dtype=gputorch.float64)
    assert m64.running_var.dtype is gputorch.float64 and m64.num_batches_tracked.dtype is gputorch.int64
    assert nn.BatchNorm1d(3, bias=False).bias is None
    m.running_mean.fill_(3)
    m.num_batches_tracked.fill_(5)
    m.reset_running_stats()
    assert m.running_mean.tolist() == [0.0] * 4 and m.num_batches_tracked.item() == 0


def test_batch_norm_state_dict_interchange(device):
    torch = _torch()
    theirs = torch.nn.BatchNorm1d(3)
    theirs(torch.randn(5, 3) * 4)
    ours = nn.BatchNorm1d(3).to(device)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == [
        "weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    copy_state(theirs, ours, gputorch, device=device)
    assert_close(ours.running_var, theirs.running_var)
    assert ours.num_batches_tracked.item() == 1


def test_batch_norm_load_old_state_dict_without_num_batches_tracked(device):
    m = nn.BatchNorm1d(2).to(device)
    m.num_batches_tracked.fill_(7)
    state = OrderedDict(weight=gputorch.ones(2) * 2, bias=gputorch.zeros(2),
                        running_mean=gputorch.ones(2), running_var=gputorch.ones(2) * 3)
    state._metadata = OrderedDict({"": {"version": 1}})
    result = m.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert m.num_batches_tracked.item() == 7 and m.running_var.tolist() == [3.0, 3.0]
    # Without version metadata the state dict also counts as old.
    plain = OrderedDict((k, v) for k, v in state.items())
    assert nn.BatchNorm1d(2).load_state_dict(plain).missing_keys == []
    # A current (version 2) state dict must have the key.
    current = OrderedDict(state)
    current._metadata = OrderedDict({"": {"version": 2}})
    with pytest.raises(RuntimeError, match="num_batches_tracked"):
        nn.BatchNorm1d(2).load_state_dict(current)
    assert nn.BatchNorm1d(2).state_dict()._metadata[""]["version"] == 2


@pytest.mark.parametrize("shape", [(2, 3, 5), (3, 5)])
def test_instance_norm_module(device, shape):
    torch = _torch()
    ours, theirs = _module_pair(torch, "InstanceNorm1d", 3, affine=True, track_running_stats=True, device=device)
    x, tx = _pair(torch, np.random.randn(*shape), device)
    _check_backward(torch, ours(x), theirs(tx), [(x, tx), (ours.weight, theirs.weight)])
    assert_close(ours.running_mean, theirs.running_mean, RTOL, ATOL)
    ours.eval()
    theirs.eval()
    assert_close(ours(x), theirs(tx), RTOL, ATOL)
    assert repr(ours) == repr(theirs)


def test_instance_norm2d_default_module(device):
    torch = _torch()
    ours, theirs = _module_pair(torch, "InstanceNorm2d", 2, device=device)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == []
    x, tx = _pair(torch, np.random.randn(2, 2, 3, 3), device)
    _check_backward(torch, ours(x), theirs(tx), [(x, tx)])


@pytest.mark.parametrize("kwargs", [{}, {"elementwise_affine": False}, {"bias": False}, {"eps": 1e-3}])
def test_layer_norm_module(device, kwargs):
    torch = _torch()
    ours, theirs = _module_pair(torch, "LayerNorm", [3, 4], device=device, **kwargs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    x, tx = _pair(torch, np.random.randn(2, 3, 4), device)
    pairs = [(x, tx)] + list(zip(ours.parameters(), theirs.parameters()))
    _check_backward(torch, ours(x), theirs(tx), pairs)
    assert ours.normalized_shape == (3, 4)


def test_layer_norm_module_defaults(device):
    m = nn.LayerNorm(3, device=device)
    assert m.normalized_shape == (3,) and m.eps == 1e-5
    assert m.weight.tolist() == [1.0] * 3 and m.bias.tolist() == [0.0] * 3


@pytest.mark.parametrize("kwargs", [{}, {"affine": False}, {"bias": False}])
def test_group_norm_module(device, kwargs):
    torch = _torch()
    ours, theirs = _module_pair(torch, "GroupNorm", 2, 4, device=device, **kwargs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    x, tx = _pair(torch, np.random.randn(3, 4, 5), device)
    pairs = [(x, tx)] + list(zip(ours.parameters(), theirs.parameters()))
    _check_backward(torch, ours(x), theirs(tx), pairs)


@pytest.mark.parametrize("kwargs", [{}, {"elementwise_affine": False}, {"eps": 1e-4}])
def test_rms_norm_module(device, kwargs):
    torch = _torch()
    ours, theirs = _module_pair(torch, "RMSNorm", 4, device=device, **kwargs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    x, tx = _pair(torch, np.random.randn(3, 2, 4), device)
    pairs = [(x, tx)] + list(zip(ours.parameters(), theirs.parameters()))
    _check_backward(torch, ours(x), theirs(tx), pairs)


def test_reprs():
    assert repr(nn.BatchNorm2d(4)) == (
        "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)")
    assert repr(nn.LayerNorm((2, 3), elementwise_affine=False)) == (
        "LayerNorm((2, 3), eps=1e-05, elementwise_affine=False, bias=False)")
    assert repr(nn.GroupNorm(2, 4)) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"
    assert repr(nn.RMSNorm(3)) == "RMSNorm((3,), eps=None, elementwise_affine=True)"


def test_module_moves_keep_buffers(device):
    m = nn.BatchNorm1d(2)
    m.to(device).double()
    assert m.running_mean.dtype is gputorch.float64 and m.running_mean.device.type == device
    assert m.num_batches_tracked.dtype is gputorch.int64
    m(gputorch.randn(4, 2, dtype=gputorch.float64, device=device))
    assert m.num_batches_tracked.item() == 1


# ================================================================ errors
def test_batch_norm_input_dim_errors():
    with pytest.raises(ValueError, match=r"BatchNorm1d.*expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(4)(gputorch.randn(2, 4, 3, 3))
    with pytest.raises(ValueError, match=r"BatchNorm2d.*expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(4)(gputorch.randn(2, 4, 3))
    with pytest.raises(ValueError, match=r"expected 5D input \(got 4D input\)"):
        nn.BatchNorm3d(4)(gputorch.randn(2, 4, 3, 3))
    with pytest.raises(ValueError, match=r"InstanceNorm2d.*expected 3D or 4D input \(got 2D input\)"):
        nn.InstanceNorm2d(4)(gputorch.randn(2, 4))


def test_batch_norm_value_errors():
    with pytest.raises(ValueError, match=r"Expected more than 1 value per channel when training, got input size"):
        nn.BatchNorm1d(4)(gputorch.randn(1, 4))
    nn.BatchNorm1d(4).eval()(gputorch.randn(1, 4))  # fine in eval mode
    with pytest.raises(RuntimeError, match="running_mean should contain 5 elements not 4"):
        nn.BatchNorm1d(4)(gputorch.randn(2, 5))
    with pytest.raises(RuntimeError, match="weight should contain 4 elements not 5"):
        F.batch_norm(gputorch.randn(3, 4), None, None, gputorch.ones(5), training=True)
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        F.batch_norm(gputorch.randn(3, 4), None, None, training=False)
    with pytest.raises(RuntimeError, match="floating point"):
        F.batch_norm(gputorch.ones(3, 4, dtype=gputorch.int64), None, None, training=True)
    with pytest.raises(RuntimeError, match="mixed dtype"):
        F.batch_norm(gputorch.randn(3, 4, dtype=gputorch.float64), None, None, gputorch.ones(4), training=True)
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        F.instance_norm(gputorch.randn(2, 3, 1))


def test_layer_norm_errors():
    x = gputorch.randn(3, 4, 5)
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], "
                                           r"but got input of size\[3, 4, 5\]"):
        F.layer_norm(x, (4,))
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\]"):
        nn.LayerNorm(5)(gputorch.randn(3, 4))
    with pytest.raises(RuntimeError, match=r"Expected weight to be of same shape as normalized_shape, but got "
                                           r"weight of shape \[5\] and normalized_shape = \[4, 5\]"):
        F.layer_norm(x, (4, 5), gputorch.ones(5))
    with pytest.raises(RuntimeError, match="Expected bias to be of same shape"):
        F.layer_norm(x, (4, 5), None, gputorch.ones(5))
    with pytest.raises(RuntimeError, match="at least 1-dimensional"):
        F.layer_norm(x, ())
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4, 6\], expected input with shape \[\*4, 6\]"):
        F.rms_norm(x, (4, 6))
    with pytest.raises(TypeError, match="must be Tensor"):
        F.layer_norm(np.ones((2, 3)), (3,))


def test_group_norm_errors():
    with pytest.raises(ValueError, match=r"num_channels \(4\) must be divisible by num_groups \(3\)"):
        nn.GroupNorm(3, 4)
    with pytest.raises(RuntimeError, match="Expected number of channels in input to be divisible by num_groups"):
        F.group_norm(gputorch.randn(3, 4, 5), 3)
    with pytest.raises(RuntimeError, match="Expected weight to be a vector of size equal to the number of channels"):
        nn.GroupNorm(2, 4)(gputorch.randn(2, 6, 3))
    with pytest.raises(RuntimeError, match="Expected at least 2 dimensions for input tensor but received 1"):
        F.group_norm(gputorch.randn(4), 2)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.group_norm(gputorch.randn(1, 2), 2)


def test_saved_input_modified_in_place_is_detected(device):
    x = gputorch.randn(4, 3, device=device, requires_grad=True)
    y = x * 1
    out = F.layer_norm(y, (3,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


# ================================================================ training parity
def test_training_parity_with_batch_and_layer_norm(device):
    torch = _torch()

    def build(lib):
        nn_ = lib.nn
        return nn_.Sequential(nn_.Linear(4, 6), nn_.BatchNorm1d(6), nn_.ReLU(), nn_.Linear(6, 6),
                              nn_.GroupNorm(2, 6), nn_.Linear(6, 6), nn_.LayerNorm(6), nn_.Linear(6, 6),
                              nn_.RMSNorm(6), nn_.Linear(6, 1)).double()
    theirs = build(torch)
    ours = build(gputorch).to(device)
    copy_state(theirs, ours, gputorch, device=device)
    opt = gputorch.optim.SGD(ours.parameters(), lr=0.05, momentum=0.9)
    topt = torch.optim.SGD(theirs.parameters(), lr=0.05, momentum=0.9)
    for step in range(5):
        xb, yb = np.random.randn(8, 4), np.random.randn(8, 1)
        loss = ((ours(gputorch.tensor(xb, device=device)) - gputorch.tensor(yb, device=device)) ** 2).mean()
        tloss = ((theirs(torch.tensor(xb)) - torch.tensor(yb)) ** 2).mean()
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-10), step
        opt.zero_grad()
        topt.zero_grad()
        loss.backward()
        tloss.backward()
        opt.step()
        topt.step()
    for key, value in theirs.state_dict().items():
        assert_close(ours.state_dict()[key], value, 1e-9, 1e-11)
    ours.eval()
    theirs.eval()
    xb = np.random.randn(3, 4)
    assert_close(ours(gputorch.tensor(xb, device=device)), theirs(torch.tensor(xb)), 1e-9, 1e-11)


def test_batch_norm_eval_gradients_do_not_depend_on_layout(device):
    """On a channels_last_3d-like input (a permuted one with a spatial size of 1) the gradients are
    those of the contiguous input: bias = the upstream gradient summed per channel. (torch 2.13's
    CPU kernel gets this case wrong; the differential suite lists it as a torch bug.)"""
    rng = np.random.default_rng(0)
    x = gputorch.tensor(rng.standard_normal((2, 1, 2, 2, 3)).astype(np.float32), device=device)
    w = rng.standard_normal((2, 3, 2, 2, 1)).astype(np.float32)
    grads = []
    for inp in (x.permute(0, 4, 2, 3, 1), x.permute(0, 4, 2, 3, 1).contiguous()):
        inp = inp.detach().requires_grad_(True)
        m = gputorch.nn.BatchNorm3d(3).to(device).eval()
        (m(inp) * gputorch.tensor(w, device=device)).sum().backward()
        grads.append((m.bias.grad.cpu().numpy(), m.weight.grad.cpu().numpy(), inp.grad.cpu().numpy()))
    np.testing.assert_allclose(grads[0][0], w.sum((0, 2, 3, 4)), rtol=1e-5)
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_aten_batch_norm_takes_one_value_per_channel_in_training(device):
    # torch.batch_norm (ATen's argument order) has no check of the batch size: the variance of one value
    # is 0, so the output is the bias; F.batch_norm refuses it (differential seeds 1 and 2).
    x = gputorch.tensor([[0.38], [0.0]], device=device)[:1]
    w = gputorch.tensor([-3.74], device=device, requires_grad=True)
    b = gputorch.tensor([0.5], device=device, requires_grad=True)
    out = gputorch.batch_norm(x, w, b, None, None, True, 0.5, 0.1, False)
    assert_close(out, np.array([[0.5]], np.float32))
    out.sum().backward()
    assert_close(b.grad, np.array([1.0], np.float32))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.batch_norm(x, None, None, w, b, training=True)


def test_batch_norm_backward_with_a_strided_weight(device):
    # The input gradient in eval mode is g * w / sqrt(var + eps) with the weight's own elements, w[::2]
    # here (torch's CPU kernel reads a strided weight as contiguous: a torch bug, in _known.py).
    x = gputorch.tensor([[[[-0.38]], [[-1.74]], [[-0.1]]]], dtype=gputorch.float64, device=device,
                        requires_grad=True)
    full = gputorch.tensor([-0.16, -0.65, 0.91, -0.81, -0.44, -0.27], dtype=gputorch.float64, device=device)
    var = np.array([1.32, 1.23, 1.53])
    out = gputorch.batch_norm(x, full[::2], None, gputorch.zeros(3, dtype=gputorch.float64, device=device),
                              gputorch.tensor(var, device=device), False, 0.5, 0.1, False)
    g = np.array([0.3, -1.2, 0.7])
    (out * gputorch.tensor(g.reshape(1, 3, 1, 1), device=device)).sum().backward()
    expected = g * np.array([-0.16, 0.91, -0.44]) / np.sqrt(var + 0.1)
    assert_close(x.grad.reshape(3), expected, rtol=1e-12, atol=1e-12)
