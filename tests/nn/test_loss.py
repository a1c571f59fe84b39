"""Losses: parity with torch (values, dtypes, input gradients) for every option, gradcheck and
gradgradcheck of every loss op, edge cases, bad-input errors, and the loss modules."""
import warnings

import numpy as np
import pytest

import gputorch
import gputorch.nn.functional as F
from gputorch import nn
from gputorch.autograd import gradcheck, gradgradcheck
from tests._helpers import assert_close

REDUCTIONS = ["mean", "sum", "none"]


def _torch():
    return pytest.importorskip("torch")


def _rng(seed=0):
    return np.random.default_rng(seed)


def _parity(device, g_fn, t_fn, arrays, grads=(0,), seed=1, rtol=1e-10):
    """Run ``g_fn`` (gputorch) and ``t_fn`` (torch) on tensors made from ``arrays`` (entries whose
    index is in ``grads`` require grad; None stays None); compare the outputs (values and dtype)
    and, after backward of a random grad_output, the gradients."""
    torch = _torch()
    gs, ts = [], []
    for i, a in enumerate(arrays):
        rg = i in grads
        gs.append(None if a is None else gputorch.tensor(a, device=device, requires_grad=rg))
        ts.append(None if a is None else torch.tensor(a, requires_grad=rg))
    out, expected = g_fn(*gs), t_fn(*ts)
    assert_close(out, expected, rtol=rtol, atol=1e-12)
    go = _rng(seed).standard_normal(tuple(expected.shape))
    out.backward(gputorch.tensor(go, device=device))
    expected.backward(torch.tensor(go))
    for i in grads:
        assert gs[i].grad is not None, f"no gradient for argument {i}"
        assert_close(gs[i].grad, ts[i].grad, rtol=rtol, atol=1e-12)
    return out


def _t(a, device, requires_grad=False):
    return gputorch.tensor(a, device=device, requires_grad=requires_grad)


def _class_targets(rng, shape, n_classes, ignore):
    """Random class indices; with ``ignore`` some are replaced by (or drawn equal to) it."""
    t = rng.integers(0, n_classes, shape)
    if ignore is not None:
        flat = t.reshape(-1)
        flat[::3] = ignore
    return t


# ================================================================ regression losses: parity
PAIRWISE = {
    "mse_loss": {},
    "l1_loss": {},
    "smooth_l1_loss": {"beta": 0.6},
    "smooth_l1_loss_beta0": {"beta": 0.0},
    "huber_loss": {"delta": 0.7},
    "soft_margin_loss": {},
}


@pytest.mark.parametrize("name", sorted(PAIRWISE))
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pairwise_losses_parity(name, reduction, device):
    torch = _torch()
    rng = _rng()
    fn = name.replace("_beta0", "")
    x = rng.standard_normal((4, 5))
    y = rng.standard_normal((4, 5)) if fn != "soft_margin_loss" else rng.choice([-1.0, 1.0], (4, 5))
    kw = dict(PAIRWISE[name], reduction=reduction)
    out = _parity(device, lambda a, b: getattr(F, fn)(a, b, **kw),
                  lambda a, b: getattr(torch.nn.functional, fn)(a, b, **kw), [x, y],
                  grads=(0,) if fn == "soft_margin_loss" else (0, 1))
    assert out.shape == (() if reduction != "none" else (4, 5))


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pairwise_losses_elementwise_weight_parity(name, reduction, device):
    torch = _torch()
    rng = _rng(2)
    x, y, w = rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.uniform(0.2, 2.0, (3, 4))
    _parity(device, lambda a, b, c: getattr(F, name)(a, b, reduction=reduction, weight=c),
            lambda a, b, c: getattr(torch.nn.functional, name)(a, b, reduction=reduction, weight=c),
            [x, y, w], grads=(0, 1))


def test_mse_loss_broadcast_target_warns_like_torch(device):
    torch = _torch()
    rng = _rng(3)
    x, y = rng.standard_normal((3, 1)), rng.standard_normal(3)
    with pytest.warns(UserWarning, match=r"Using a target size .* different to the input size"):
        _parity(device, F.mse_loss, torch.nn.functional.mse_loss, [x, y], grads=(0, 1))


def test_pairwise_losses_promote_integer_and_float32_targets(device):
    torch = _torch()
    x = np.array([0.5, -1.25, 2.0], dtype=np.float32)
    y = np.array([1, 0, 3])
    for name in ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"]:
        out = getattr(F, name)(_t(x, device), _t(y, device))
        expected = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(y))
        assert_close(out, expected, rtol=1e-6)
    out = F.mse_loss(_t(x, device), _t(y.astype(np.float64), device))
    assert out.dtype == gputorch.float64


def test_pairwise_losses_non_contiguous_inputs(device):
    torch = _torch()
    rng = _rng(4)
    x, y = rng.standard_normal((5, 3)), rng.standard_normal((3, 5))
    _parity(device, lambda a, b: F.smooth_l1_loss(a.t(), b, beta=0.5),
            lambda a, b: torch.nn.functional.smooth_l1_loss(a.t(), b, beta=0.5), [x, y], grads=(0, 1))


def test_regression_loss_grad_fn_names(device):
    x = _t(np.ones((2, 2)) * 0.3, device, True)
    y = _t(np.zeros((2, 2)), device)
    assert F.mse_loss(x, y).grad_fn.name() == "MseLossBackward0"
    assert F.smooth_l1_loss(x, y).grad_fn.name() == "SmoothL1LossBackward0"
    assert F.huber_loss(x, y).grad_fn.name() == "HuberLossBackward0"
    assert F.soft_margin_loss(x, y + 1).grad_fn.name() == "SoftMarginLossBackward0"
    assert F.l1_loss(x, y).grad_fn.name() == "MeanBackward0"
    assert F.smooth_l1_loss(x, y, beta=0.0).grad_fn.name() == "MeanBackward0"


def test_empty_mean_is_nan_and_sum_is_zero(device):
    e = _t(np.zeros((0, 3)), device, True)
    for name in ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"]:
        assert np.isnan(getattr(F, name)(e, e.detach()).item())
        s = getattr(F, name)(e, e.detach(), reduction="sum")
        assert s.item() == 0.0
        s.backward()
        assert e.grad.shape == (0, 3)


# ================================================================ binary cross entropy: parity
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_parity(reduction, weighted, device):
    torch = _torch()
    rng = _rng(5)
    x, y = rng.uniform(0.05, 0.95, (4, 3)), rng.uniform(0, 1, (4, 3))
    w = rng.uniform(0.5, 2.0, 3) if weighted else None
    _parity(device, lambda a, b, c: F.binary_cross_entropy(a, b, weight=c, reduction=reduction),
            lambda a, b, c: torch.nn.functional.binary_cross_entropy(a, b, weight=c, reduction=reduction),
            [x, y, w], grads=(0, 1))


def test_binary_cross_entropy_clamps_logs_at_minus_100(device):
    torch = _torch()
    x, y = np.array([0.0, 1.0, 0.5, 1e-50]), np.array([1.0, 0.0, 0.5, 1.0])
    out = F.binary_cross_entropy(_t(x, device), _t(y, device), reduction="none")
    expected = torch.nn.functional.binary_cross_entropy(torch.tensor(x), torch.tensor(y), reduction="none")
    assert_close(out, expected, rtol=1e-12)
    assert out[0].item() == 100.0


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weights", ["none", "weight", "pos_weight", "both"])
def test_binary_cross_entropy_with_logits_parity(reduction, weights, device):
    torch = _torch()
    rng = _rng(6)
    x, y = rng.standard_normal((4, 3)) * 3, rng.uniform(0, 1, (4, 3))
    w = rng.uniform(0.5, 2.0, (4, 3)) if weights in ("weight", "both") else None
    pw = rng.uniform(0.5, 3.0, 3) if weights in ("pos_weight", "both") else None
    _parity(device,
            lambda a, b, c, d: F.binary_cross_entropy_with_logits(a, b, c, reduction=reduction, pos_weight=d),
            lambda a, b, c, d: torch.nn.functional.binary_cross_entropy_with_logits(
                a, b, c, reduction=reduction, pos_weight=d),
            [x, y, w, pw], grads=(0, 1))


def test_binary_cross_entropy_with_logits_is_stable_for_large_logits(device):
    torch = _torch()
    x, y = np.array([800.0, -800.0, 40.0, -40.0]), np.array([0.0, 1.0, 1.0, 0.0])
    out = F.binary_cross_entropy_with_logits(_t(x, device), _t(y, device), reduction="none")
    expected = torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor(x), torch.tensor(y),
                                                                     reduction="none")
    assert_close(out, expected, rtol=1e-12)
    assert np.isfinite(out.cpu().numpy()).all()


def test_binary_cross_entropy_with_logits_promotes_like_torch(device):
    x = _t(np.zeros(3, dtype=np.float32), device)
    y = _t(np.ones(3), device)
    assert F.binary_cross_entropy_with_logits(x, y).dtype == gputorch.float64
    w = _t(np.ones(3), device)
    x64 = _t(np.zeros(3), device)
    assert F.binary_cross_entropy(x64 + 0.5, x64 + 0.5, weight=w.float()).dtype == gputorch.float64


# ================================================================ cross entropy / nll: parity
CLASS_SHAPES = {
    "2d": ((5, 4), (5,)),
    "unbatched": ((4,), ()),
    "3d": ((3, 4, 5), (3, 5)),
    "4d": ((2, 4, 3, 2), (2, 3, 2)),
    "5d": ((2, 4, 2, 2, 3), (2, 2, 2, 3)),
}


def _class_case(shape_name, weighted, ignore, seed=7):
    rng = _rng(seed)
    in_shape, t_shape = CLASS_SHAPES[shape_name]
    n_classes = in_shape[0] if len(in_shape) == 1 else in_shape[1]
    x = rng.standard_normal(in_shape) * 2
    t = _class_targets(rng, t_shape, n_classes, ignore if shape_name != "unbatched" else None)
    w = rng.uniform(0.3, 2.0, n_classes) if weighted else None
    return x, t, w


@pytest.mark.parametrize("shape_name", sorted(CLASS_SHAPES))
@pytest.mark.parametrize("ignore", [None, -100, 2])
@pytest.mark.parametrize("smoothing", [0.0, 0.15])
def test_cross_entropy_class_indices_parity(shape_name, ignore, smoothing, device):
    torch = _torch()
    for weighted in (False, True):
        x, t, w = _class_case(shape_name, weighted, ignore)
        for reduction in REDUCTIONS:
            kw = dict(reduction=reduction, label_smoothing=smoothing,
                      ignore_index=-100 if ignore is None else ignore)
            out = _parity(device, lambda a, b, c: F.cross_entropy(a, b, weight=c, **kw),
                          lambda a, b, c: torch.nn.functional.cross_entropy(a, b, weight=c, **kw), [x, t, w])
            assert out.grad_fn.name() == "CrossEntropyLossBackward0"


@pytest.mark.parametrize("shape_name", sorted(CLASS_SHAPES))
@pytest.mark.parametrize("ignore", [None, -100, 2])
def test_nll_loss_parity(shape_name, ignore, device):
    torch = _torch()
    for weighted in (False, True):
        x, t, w = _class_case(shape_name, weighted, ignore, seed=8)
        for reduction in REDUCTIONS:
            kw = dict(reduction=reduction, ignore_index=-100 if ignore is None else ignore)
            out = _parity(device, lambda a, b, c: F.nll_loss(a, b, weight=c, **kw),
                          lambda a, b, c: torch.nn.functional.nll_loss(a, b, weight=c, **kw), [x, t, w])
            assert out.grad_fn.name() == ("NllLoss2DBackward0" if x.ndim >= 3 else "NllLossBackward0")


@pytest.mark.parametrize("shape", [(5, 4), (4,), (2, 4, 3)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_class_probabilities_parity(shape, weighted, smoothing, device):
    torch = _torch()
    rng = _rng(9)
    x = rng.standard_normal(shape)
    p = rng.uniform(0, 1, shape)
    n_classes = shape[0] if len(shape) == 1 else shape[1]
    p /= p.sum(axis=0 if len(shape) == 1 else 1, keepdims=True)
    w = rng.uniform(0.3, 2.0, n_classes) if weighted else None
    for reduction in REDUCTIONS:
        kw = dict(reduction=reduction, label_smoothing=smoothing)
        _parity(device, lambda a, b, c: F.cross_entropy(a, b, weight=c, **kw),
                lambda a, b, c: torch.nn.functional.cross_entropy(a, b, weight=c, **kw), [x, p, w],
                grads=(0, 1))


def test_cross_entropy_uint8_targets_and_float32(device):
    torch = _torch()
    rng = _rng(10)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    t = rng.integers(0, 5, 6).astype(np.uint8)
    out = F.cross_entropy(_t(x, device), _t(t, device))
    expected = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(t))
    assert out.dtype == gputorch.float32
    assert_close(out, expected, rtol=1e-6)


def test_cross_entropy_float16_matches_float32(device):
    rng = _rng(11)
    x = rng.standard_normal((6, 5)).astype(np.float16)
    t = rng.integers(0, 5, 6)
    xh = _t(x, device, True)
    out = F.cross_entropy(xh, _t(t, device))
    ref = F.cross_entropy(_t(x.astype(np.float32), device), _t(t, device))
    assert out.dtype == gputorch.float16
    assert abs(out.item() - ref.item()) < 2e-3
    out.backward()
    assert xh.grad.dtype == gputorch.float16


def test_cross_entropy_non_contiguous_logits(device):
    torch = _torch()
    rng = _rng(12)
    x, t = rng.standard_normal((4, 6)), rng.integers(0, 4, 6)
    _parity(device, lambda a, b: F.cross_entropy(a.t(), b, label_smoothing=0.1),
            lambda a, b: torch.nn.functional.cross_entropy(a.t(), b, label_smoothing=0.1), [x, t])


def test_cross_entropy_large_logits_are_stable(device):
    torch = _torch()
    x, t = np.array([[1000.0, -1000.0, 0.0], [-5e3, 5e3, 5e3]]), np.array([1, 2])
    _parity(device, F.cross_entropy, torch.nn.functional.cross_entropy, [x, t])


def test_all_targets_ignored_gives_nan_mean_and_zero_grads(device):
    torch = _torch()
    x, t = _rng(13).standard_normal((3, 4)), np.full(3, -100)
    for smoothing in (0.0, 0.3):
        _parity(device, lambda a, b: F.cross_entropy(a, b, label_smoothing=smoothing),
                lambda a, b: torch.nn.functional.cross_entropy(a, b, label_smoothing=smoothing),
                [x, t], rtol=0)
        xg = _t(x, device, True)
        loss = F.cross_entropy(xg, _t(t, device), label_smoothing=smoothing)
        assert np.isnan(loss.item())
        loss.backward()
        assert (xg.grad.cpu().numpy() == 0).all()
    _parity(device, F.nll_loss, torch.nn.functional.nll_loss, [x, t], rtol=0)
    s = F.cross_entropy(_t(x, device), _t(t, device), reduction="sum")
    assert s.item() == 0.0


def test_zero_class_weights_give_nan_like_torch(device):
    x = _t(_rng(14).standard_normal((3, 4)), device, True)
    loss = F.cross_entropy(x, _t(np.array([1, 2, 3]), device), weight=_t(np.zeros(4), device))
    assert np.isnan(loss.item())
    loss.backward()
    assert np.isnan(x.grad.cpu().numpy()).all()


def test_cross_entropy_empty_batch(device):
    x = _t(np.zeros((0, 5)), device, True)
    t = _t(np.zeros(0, dtype=np.int64), device)
    assert np.isnan(F.cross_entropy(x, t).item())
    assert F.cross_entropy(x, t, reduction="sum").item() == 0.0
    assert F.cross_entropy(x, t, reduction="none").shape == (0,)
    F.cross_entropy(x, t, reduction="sum").backward()
    assert x.grad.shape == (0, 5)
    assert np.isnan(F.cross_entropy(x, _t(np.zeros((0, 5)), device)).item())


def test_ignore_index_out_of_class_range_is_allowed(device):
    torch = _torch()
    x, t = _rng(15).standard_normal((3, 5)), np.array([0, 1, 7])
    _parity(device, lambda a, b: F.cross_entropy(a, b, ignore_index=7),
            lambda a, b: torch.nn.functional.cross_entropy(a, b, ignore_index=7), [x, t])


def test_unbatched_input_with_one_element_target(device):
    """(C,) input with a (1,) target: torch's forward accepts it (its backward raises a size
    mismatch); here backward works and matches the 0-d target's."""
    torch = _torch()
    x = _rng(16).standard_normal(5)
    for reduction in REDUCTIONS:
        out = F.nll_loss(_t(x, device), _t(np.array([2]), device), reduction=reduction)
        expected = torch.nn.functional.nll_loss(torch.tensor(x), torch.tensor([2]), reduction=reduction)
        assert_close(out, expected, rtol=1e-12)
        grads = []
        for t in (np.array([2]), np.array(2)):
            xl = _t(x, device, True)
            F.cross_entropy(xl, _t(t, device), reduction=reduction).backward()
            grads.append(xl.grad)
        assert_close(grads[0], grads[1], rtol=0, atol=0)


def test_negative_label_smoothing_is_ignored_like_torch(device):
    torch = _torch()
    x, t = _rng(17).standard_normal((3, 4)), np.array([0, 1, 3])
    _parity(device, lambda a, b: F.cross_entropy(a, b, label_smoothing=-0.2),
            lambda a, b: torch.nn.functional.cross_entropy(a, b, label_smoothing=-0.2), [x, t])


def test_cross_entropy_saves_only_the_log_probabilities(device):
    """Like torch (which keeps log_softmax's output), the fused op keeps one (N, C) tensor for
    backward, the log-probabilities, and not the logits as well."""
    packed = []

    def pack(t):
        packed.append(t)
        return t

    x = _t(_rng(18).standard_normal((4, 3)), device, True)
    with gputorch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = F.cross_entropy(x, _t(np.array([0, 2, 1, 1]), device))
    assert len(packed) == 1
    assert_close(packed[0], F.log_softmax(x.detach(), 1), rtol=1e-14)
    loss.backward()
    assert_close(x.grad, (F.softmax(x.detach(), 1) - F.one_hot(_t(np.array([0, 2, 1, 1]), device), 3)) / 4,
                 rtol=1e-12)


def test_cross_entropy_double_backward_matches_torch(device):
    torch = _torch()
    rng = _rng(19)
    x, t, w = rng.standard_normal((4, 5)), np.array([0, 4, -100, 2]), rng.uniform(0.5, 2, 5)
    gx, tx = _t(x, device, True), torch.tensor(x, requires_grad=True)
    for inp, mod, tens in ((gx, gputorch, lambda a: _t(a, device)), (tx, torch, torch.tensor)):
        h = inp * 1.5  # a non-leaf input: second-order grads flow through its history
        loss = (mod.nn.functional.cross_entropy(h, tens(t), weight=tens(w), label_smoothing=0.1))
        (g,) = mod.autograd.grad(loss, inp, create_graph=True)
        (g * g).sum().backward()
    assert_close(gx.grad, tx.grad, rtol=1e-10, atol=1e-12)


# ================================================================ kl_div and the other losses: parity
@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none", "mean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_parity(reduction, log_target, device):
    torch = _torch()
    rng = _rng(20)
    x = np.log(rng.dirichlet(np.ones(4), 3))
    y = rng.dirichlet(np.ones(4), 3)
    y[0, 1] = 0.0
    if log_target:
        y = np.log(y + 0.1)
    kw = dict(reduction=reduction, log_target=log_target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _parity(device, lambda a, b: F.kl_div(a, b, **kw),
                lambda a, b: torch.nn.functional.kl_div(a, b, **kw),
                [x, y], grads=(0, 1) if log_target else (0,))


def test_kl_div_mean_warns(device):
    x = _t(np.zeros((2, 2)), device)
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(x, x.exp())


@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_poisson_nll_loss_parity(log_input, full, reduction, device):
    torch = _torch()
    rng = _rng(21)
    x = rng.uniform(0.2, 2.0, (3, 4))
    y = rng.integers(0, 5, (3, 4)).astype(np.float64)
    kw = dict(log_input=log_input, full=full, reduction=reduction)
    _parity(device, lambda a, b: F.poisson_nll_loss(a, b, **kw),
            lambda a, b: torch.nn.functional.poisson_nll_loss(a, b, **kw), [x, y])


@pytest.mark.parametrize("var_shape", [(3, 4), (3,), (3, 1)])
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gaussian_nll_loss_parity(var_shape, full, reduction, device):
    torch = _torch()
    rng = _rng(22)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    var = rng.uniform(0.1, 2.0, var_shape)
    var.reshape(-1)[0] = 1e-9  # clamped at eps, gradient still flows
    kw = dict(full=full, reduction=reduction)
    _parity(device, lambda a, b, c: F.gaussian_nll_loss(a, b, c, **kw),
            lambda a, b, c: torch.nn.functional.gaussian_nll_loss(a, b, c, **kw), [x, y, var],
            grads=(0, 1, 2))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_ranking_loss_parity(reduction, device):
    torch = _torch()
    rng = _rng(23)
    a, b, t = rng.standard_normal(6), rng.standard_normal(6), rng.choice([-1.0, 1.0], 6)
    _parity(device, lambda p, q, r: F.margin_ranking_loss(p, q, r, margin=0.3, reduction=reduction),
            lambda p, q, r: torch.nn.functional.margin_ranking_loss(p, q, r, margin=0.3, reduction=reduction),
            [a, b, t], grads=(0, 1))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("batched", [True, False])
def test_cosine_embedding_loss_parity(reduction, batched, device):
    torch = _torch()
    rng = _rng(24)
    shape = (5, 3) if batched else (3,)
    a, b = rng.standard_normal(shape), rng.standard_normal(shape)
    t = np.array([1.0, -1.0, 1.0, -1.0, -1.0]) if batched else np.array(-1.0)
    _parity(device, lambda p, q, r: F.cosine_embedding_loss(p, q, r, margin=-0.5, reduction=reduction),
            lambda p, q, r: torch.nn.functional.cosine_embedding_loss(p, q, r, margin=-0.5,
                                                                      reduction=reduction),
            [a, b, t], grads=(0, 1))


def test_cosine_embedding_loss_zero_input_uses_torchs_single_precision_epsilon(device):
    """PyTorch adds its 1e-12 epsilon as a float (9.99999996e-13): visible in the gradient at a
    zero input, where the magnitude is that epsilon alone."""
    torch = _torch()
    a, b = np.zeros((2, 3)), _rng(26).standard_normal((2, 3))
    _parity(device, F.cosine_embedding_loss, torch.nn.functional.cosine_embedding_loss,
            [a, b, np.array([1.0, -1.0])], grads=(0, 1))


# ================================================================ gradcheck / gradgradcheck
def _gg(fn, inputs):
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def _leaf(a, device):
    return _t(np.asarray(a, dtype=np.float64), device, True)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck_pairwise_ops(reduction, device):
    rng = _rng(30)
    x = _leaf(rng.uniform(-2, 2, (3, 4)), device)
    # keep |x - y| away from the kinks at 0, beta and delta
    y = _leaf(x.detach().cpu().numpy() + rng.choice([-1.5, -0.3, 0.3, 1.5], (3, 4)), device)
    s = _t(rng.choice([-1.0, 1.0], (3, 4)), device)
    _gg(lambda a, b: F.mse_loss(a, b, reduction=reduction), (x, y))
    _gg(lambda a, b: F.l1_loss(a, b, reduction=reduction), (x, y))
    _gg(lambda a, b: F.smooth_l1_loss(a, b, reduction=reduction, beta=0.8), (x, y))
    _gg(lambda a, b: F.huber_loss(a, b, reduction=reduction, delta=0.9), (x, y))
    _gg(lambda a: F.soft_margin_loss(a, s, reduction=reduction), (x,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck_binary_cross_entropy(reduction, device):
    rng = _rng(31)
    x, y = _leaf(rng.uniform(0.1, 0.9, (3, 2)), device), _leaf(rng.uniform(0, 1, (3, 2)), device)
    w = _t(rng.uniform(0.5, 2, 2), device)
    _gg(lambda a, b: F.binary_cross_entropy(a, b, weight=w, reduction=reduction), (x, y))
    z = _leaf(rng.standard_normal((3, 2)), device)
    pw = _t(rng.uniform(0.5, 3, 2), device)
    _gg(lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction=reduction), (z, y))
    _gg(lambda a, b: F.binary_cross_entropy_with_logits(a, b, w.expand(3, 2), reduction=reduction,
                                                         pos_weight=pw), (z, y))


@pytest.mark.parametrize("shape_name", ["2d", "unbatched", "4d"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck_cross_entropy_and_nll(shape_name, reduction, device):
    x, t, w = _class_case(shape_name, True, -100, seed=32)
    xl, tt, wt = _leaf(x, device), _t(t, device), _t(w, device)
    _gg(lambda a: F.cross_entropy(a, tt, weight=wt, reduction=reduction, label_smoothing=0.2), (xl,))
    _gg(lambda a: F.cross_entropy(a * 1.5, tt, reduction=reduction), (xl,))
    _gg(lambda a: F.nll_loss(a, tt, weight=wt, reduction=reduction), (xl,))


def test_gradcheck_cross_entropy_probabilities(device):
    rng = _rng(33)
    x, p = _leaf(rng.standard_normal((3, 4)), device), _leaf(rng.dirichlet(np.ones(4), 3), device)
    w = _t(rng.uniform(0.5, 2, 4), device)
    _gg(lambda a, b: F.cross_entropy(a, b, weight=w, label_smoothing=0.1), (x, p))


def test_gradcheck_composite_losses(device):
    rng = _rng(34)
    x = _leaf(np.log(rng.dirichlet(np.ones(4), 2)), device)
    y = _leaf(rng.dirichlet(np.ones(4), 2), device)
    _gg(lambda a, b: F.kl_div(a, b, reduction="batchmean"), (x, y))
    _gg(lambda a, b: F.kl_div(a, b, reduction="sum", log_target=True), (x, y))
    r = _leaf(rng.uniform(0.5, 2.0, (2, 3)), device)
    k = _leaf(rng.integers(2, 5, (2, 3)).astype(np.float64), device)
    _gg(lambda a, b: F.poisson_nll_loss(a, b, full=True), (r, k))
    _gg(lambda a, b: F.poisson_nll_loss(a, b, log_input=False), (r, k))
    m, v = _leaf(rng.standard_normal((2, 3)), device), _leaf(rng.uniform(0.5, 2.0, (2, 1)), device)
    _gg(lambda a, b, c: F.gaussian_nll_loss(a, b, c, full=True), (m, k, v))
    p, q = _leaf(rng.standard_normal((4, 3)), device), _leaf(rng.standard_normal((4, 3)), device)
    s = _t(np.array([1.0, -1.0, 1.0, -1.0]), device)
    _gg(lambda a, b: F.cosine_embedding_loss(a, b, s, margin=-0.9), (p, q))
    a1, a2 = _leaf(np.array([0.1, 1.3, -0.7]), device), _leaf(np.array([0.9, -0.2, 0.4]), device)
    _gg(lambda a, b: F.margin_ranking_loss(a, b, s[:3], margin=0.1), (a1, a2))


# ================================================================ bad inputs
def _expect(exc, fragment, fn):
    with pytest.raises(exc) as info:
        fn()
    assert fragment in str(info.value), str(info.value)


def test_class_loss_target_errors(device):
    x = _t(np.zeros((3, 5)), device)
    long = lambda a: _t(np.array(a), device)  # noqa: E731
    _expect(RuntimeError, "expected target dtype to be Long or Byte, but got Double",
            lambda: F.cross_entropy(x, _t(np.array([0.0, 1.0, 2.0]), device)))
    _expect(RuntimeError, "expected target dtype to be Long or Byte, but got Int",
            lambda: F.nll_loss(x, long([0, 1, 2]).int()))
    _expect(IndexError, "Target 5 is out of bounds.", lambda: F.cross_entropy(x, long([0, 1, 5])))
    _expect(IndexError, "Target -1 is out of bounds.", lambda: F.nll_loss(x, long([0, -1, 1])))
    _expect(IndexError, "Target 5 is out of bounds.",
            lambda: F.cross_entropy(x, long([0, 1, 5]), label_smoothing=0.1, reduction="none"))
    _expect(IndexError, "Target 3 is out of bounds.",
            lambda: F.nll_loss(_t(np.zeros((2, 3, 2, 2)), device), long(np.full((2, 2, 2), 3))))
    _expect(ValueError, "Expected input batch_size (3) to match target batch_size (2).",
            lambda: F.cross_entropy(x, long([0, 1])))
    _expect(RuntimeError, "Expected target size [2, 4], got [2, 5]",
            lambda: F.cross_entropy(_t(np.zeros((2, 3, 4)), device), long(np.zeros((2, 5), dtype=np.int64))))
    _expect(RuntimeError, "size mismatch (got input: [2, 3, 4, 4] , target: [2, 5, 4]",
            lambda: F.nll_loss(_t(np.zeros((2, 3, 4, 4)), device), long(np.zeros((2, 5, 4), dtype=np.int64))))
    _expect(RuntimeError, "only batches of spatial targets supported (3D tensors)",
            lambda: F.nll_loss(_t(np.zeros((2, 3, 4, 4)), device), long(np.zeros((2, 4), dtype=np.int64))))
    _expect(RuntimeError, "0D or 1D target tensor expected, multi-target not supported",
            lambda: F.nll_loss(x, long(np.zeros((3, 1), dtype=np.int64))))
    _expect(ValueError, "For 1D input, 1D target must have size 1, but got target size: 2",
            lambda: F.nll_loss(_t(np.zeros(5), device), long([1, 2])))
    _expect(ValueError, "Expected 1 or more dimensions (got 0)",
            lambda: F.nll_loss(_t(np.array(1.0), device), long(0)))
    _expect(RuntimeError, "Expected floating point type for target with class probabilities, got Long",
            lambda: F.cross_entropy(x, long(np.zeros((3, 5), dtype=np.int64))))
    _expect(RuntimeError, "ignore_index is not supported for floating point target",
            lambda: F.cross_entropy(x, _t(np.zeros((3, 5)), device), ignore_index=1))


def test_class_loss_weight_and_option_errors(device):
    x = _t(np.zeros((3, 5)), device)
    t = _t(np.array([0, 1, 2]), device)
    _expect(RuntimeError, "weight tensor should be defined either for all 5 classes or no classes but got "
            "weight tensor of shape: [4]", lambda: F.cross_entropy(x, t, weight=_t(np.ones(4), device)))
    _expect(RuntimeError, "weight tensor of shape: [1, 5]",
            lambda: F.nll_loss(x, t, weight=_t(np.ones((1, 5)), device)))
    _expect(RuntimeError, "cross_entropy: weight tensor should be defined either for all 5 classes",
            lambda: F.cross_entropy(x, _t(np.zeros((3, 5)), device), weight=_t(np.ones(4), device)))
    _expect(RuntimeError, "expected scalar type Double but found Float",
            lambda: F.cross_entropy(x, t, weight=_t(np.ones(5, dtype=np.float32), device)))
    _expect(RuntimeError, "label_smoothing must be between 0.0 and 1.0. Got: 1.5",
            lambda: F.cross_entropy(x, t, label_smoothing=1.5))
    _expect(ValueError, "foo is not a valid value for reduction",
            lambda: F.cross_entropy(x, t, reduction="foo"))
    _expect(NotImplementedError, "not implemented for 'Long'",
            lambda: F.cross_entropy(t.reshape(3, 1), _t(np.zeros(3, dtype=np.int64), device)))
    _expect(NotImplementedError, "not implemented for 'Long'",
            lambda: F.nll_loss(t.reshape(3, 1), _t(np.zeros(3, dtype=np.int64), device)))
    w = _t(np.ones(5), device, True)
    _expect(RuntimeError, "is not differentiable with respect to argument 'weight'",
            lambda: F.cross_entropy(_t(np.zeros((3, 5)), device, True), t, weight=w))
    with gputorch.no_grad():
        F.nll_loss(x, t, weight=w)


def test_binary_loss_errors(device):
    p = _t(np.array([0.2, 0.5, 0.9]), device)
    _expect(RuntimeError, "Found dtype Long but expected Double",
            lambda: F.binary_cross_entropy(p, _t(np.array([0, 1, 1]), device)))
    _expect(RuntimeError, "Found dtype Float but expected Double",
            lambda: F.binary_cross_entropy(p, p.float()))
    _expect(ValueError, "that is different to the input size",
            lambda: F.binary_cross_entropy(p, p[:2]))
    _expect(RuntimeError, "all elements of input should be between 0 and 1",
            lambda: F.binary_cross_entropy(p + 1, p))
    _expect(RuntimeError, "all elements of target should be between 0 and 1",
            lambda: F.binary_cross_entropy(p, p * 2))
    _expect(RuntimeError, "all elements of input should be between 0 and 1",
            lambda: F.binary_cross_entropy(p * float("nan"), p))
    _expect(RuntimeError, "result type Double can't be cast to the desired output type Long",
            lambda: F.binary_cross_entropy_with_logits(p, _t(np.array([0, 1, 1]), device)))
    _expect(ValueError, "must be the same as input size",
            lambda: F.binary_cross_entropy_with_logits(p, p[:2]))
    x2 = _t(np.zeros((3, 2)), device)
    _expect(RuntimeError, "The size of tensor a (3) must match the size of tensor b (2) at non-singleton "
            "dimension 1",
            lambda: F.binary_cross_entropy_with_logits(x2, x2, pos_weight=_t(np.ones(3), device)))
    _expect(RuntimeError, "The size of tensor a (2) must match the size of tensor b (3)",
            lambda: F.binary_cross_entropy_with_logits(x2, x2, weight=_t(np.ones(3), device)))
    _expect(RuntimeError, "not differentiable with respect to argument 'pos_weight'",
            lambda: F.binary_cross_entropy_with_logits(x2, x2, pos_weight=_t(np.ones(2), device, True)))
    _expect(NotImplementedError, "not implemented for 'Long'",
            lambda: F.binary_cross_entropy_with_logits(_t(np.array([1, 2]), device), p[:2]))


def test_regression_and_other_loss_errors(device):
    x = _t(np.zeros(3), device)
    _expect(RuntimeError, "smooth_l1_loss does not support negative values for beta.",
            lambda: F.smooth_l1_loss(x, x, beta=-1.0))
    _expect(RuntimeError, "huber_loss does not support non-positive values for delta.",
            lambda: F.huber_loss(x, x, delta=0.0))
    _expect(ValueError, "bad is not a valid value for reduction", lambda: F.mse_loss(x, x, reduction="bad"))
    _expect(ValueError, "Invalid reduction mode: bad.", lambda: F.mse_loss(x, x, reduction="bad", weight=x))
    _expect(ValueError, "Weights and input must have the same size.", lambda: F.l1_loss(x, x, weight=x[:1]))
    with pytest.warns(UserWarning):
        _expect(RuntimeError, "The size of tensor a (3) must match the size of tensor b (2)",
                lambda: F.mse_loss(x, x[:2]))
    ints = _t(np.array([1, 2]), device)
    _expect(NotImplementedError, "not implemented for 'Long'", lambda: F.mse_loss(ints, ints))
    _expect(RuntimeError, "kl_div: Integral inputs not supported.",
            lambda: F.kl_div(x[:2], ints, reduction="sum"))
    _expect(RuntimeError, "margin_ranking_loss : All input tensors should have same dimension",
            lambda: F.margin_ranking_loss(x, x, x.reshape(3, 1)))
    _expect(RuntimeError,
            "1D target tensor expects 2D input tensors, but found inputs with sizes [3] and [3, 2].",
            lambda: F.cosine_embedding_loss(x, _t(np.zeros((3, 2)), device), x))
    _expect(ValueError, "var has negative entry/entries", lambda: F.gaussian_nll_loss(x, x, x - 1))
    _expect(ValueError, "var is of incorrect size",
            lambda: F.gaussian_nll_loss(x.reshape(3, 1).expand(3, 2), x.reshape(3, 1).expand(3, 2), x[:2]))
    _expect(ValueError, "x is not a valid value for reduction",
            lambda: F.poisson_nll_loss(x, x, reduction="x"))


# ================================================================ legacy reduction arguments
@pytest.mark.parametrize("size_average,reduce,expected", [(False, None, "sum"), (None, False, "none"),
                                                          (True, True, "mean"), (False, True, "sum")])
def test_legacy_size_average_and_reduce(size_average, reduce, expected, device):
    x = _t(np.array([1.0, 2.0, 4.0]), device)
    y = _t(np.zeros(3), device)
    with pytest.warns(UserWarning, match=f"reduction='{expected}'"):
        out = F.mse_loss(x, y, size_average=size_average, reduce=reduce)
    assert_close(out, F.mse_loss(x, y, reduction=expected), rtol=0)
    with pytest.warns(UserWarning):
        assert nn.NLLLoss(size_average=size_average, reduce=reduce).reduction == expected


def test_elementwise_mean_is_mean_with_warning(device):
    x = _t(np.array([1.0, 3.0]), device)
    with pytest.warns(UserWarning, match="elementwise_mean"):
        assert F.l1_loss(x, x * 0, reduction="elementwise_mean").item() == 2.0


# ================================================================ modules
def test_loss_modules_match_functional(device):
    rng = _rng(40)
    x, t = _t(rng.standard_normal((4, 3)), device), _t(np.array([0, 2, 1, 2]), device)
    w = _t(rng.uniform(0.5, 2, 3), device)
    y = _t(rng.uniform(0, 1, (4, 3)), device)
    cases = [
        (nn.CrossEntropyLoss(weight=w, ignore_index=1, label_smoothing=0.1),
         F.cross_entropy(x, t, weight=w, ignore_index=1, label_smoothing=0.1), (x, t)),
        (nn.NLLLoss(weight=w, reduction="sum"), F.nll_loss(x, t, weight=w, reduction="sum"), (x, t)),
        (nn.MSELoss(reduction="none"), F.mse_loss(x, y, reduction="none"), (x, y)),
        (nn.L1Loss(), F.l1_loss(x, y), (x, y)),
        (nn.SmoothL1Loss(beta=0.5), F.smooth_l1_loss(x, y, beta=0.5), (x, y)),
        (nn.HuberLoss(delta=0.5), F.huber_loss(x, y, delta=0.5), (x, y)),
        (nn.SoftMarginLoss(), F.soft_margin_loss(x, y), (x, y)),
        (nn.BCELoss(weight=w), F.binary_cross_entropy(y * 0.5, y, weight=w), (y * 0.5, y)),
        (nn.BCEWithLogitsLoss(pos_weight=w), F.binary_cross_entropy_with_logits(x, y, pos_weight=w), (x, y)),
        (nn.KLDivLoss(reduction="batchmean", log_target=True),
         F.kl_div(x, y, reduction="batchmean", log_target=True), (x, y)),
        (nn.PoissonNLLLoss(full=True), F.poisson_nll_loss(x, y, full=True), (x, y)),
        (nn.GaussianNLLLoss(eps=1e-3), F.gaussian_nll_loss(x, y, y + 0.5, eps=1e-3), (x, y, y + 0.5)),
        (nn.MarginRankingLoss(margin=0.2), F.margin_ranking_loss(x[0], y[0], x[1].sign(), margin=0.2),
         (x[0], y[0], x[1].sign())),
        (nn.CosineEmbeddingLoss(margin=0.1), F.cosine_embedding_loss(x, y, t.float() - 1, margin=0.1),
         (x, y, t.float() - 1)),
    ]
    for module, expected, args in cases:
        assert_close(module(*args), expected, rtol=0, atol=0)


def test_loss_module_buffers_state_dict_and_repr(device):
    torch = _torch()
    w = _t(np.array([1.0, 2.0, 3.0]), device)
    ce = nn.CrossEntropyLoss(weight=w)
    assert list(ce.state_dict()) == ["weight"]
    assert list(nn.CrossEntropyLoss().state_dict()) == []
    assert nn.CrossEntropyLoss().weight is None
    assert list(nn.BCEWithLogitsLoss(pos_weight=w).state_dict()) == ["pos_weight"]
    assert ce.float().weight.dtype == gputorch.float32
    for name in ["CrossEntropyLoss", "MSELoss", "HuberLoss", "KLDivLoss", "BCEWithLogitsLoss"]:
        assert repr(getattr(nn, name)()) == repr(getattr(torch.nn, name)())
    assert nn.CrossEntropyLoss().ignore_index == -100
    assert nn.CrossEntropyLoss().reduction == "mean"
    assert nn.HuberLoss().delta == 1.0 and nn.SmoothL1Loss().beta == 1.0
    assert nn.GaussianNLLLoss().eps == 1e-6 and nn.PoissonNLLLoss().eps == 1e-8


def test_cross_entropy_module_parity_with_torch_module(device):
    torch = _torch()
    rng = _rng(41)
    x, t, w = rng.standard_normal((6, 4)), rng.integers(0, 4, 6), rng.uniform(0.5, 2, 4)
    mine = nn.CrossEntropyLoss(weight=_t(w, device), label_smoothing=0.05, ignore_index=3)
    theirs = torch.nn.CrossEntropyLoss(weight=torch.tensor(w), label_smoothing=0.05, ignore_index=3)
    _parity(device, mine, theirs, [x, t])


# ================================================================ training parity
@pytest.mark.parametrize("loss_name", ["cross_entropy", "bce_with_logits", "mse"])
def test_training_steps_match_torch(loss_name, device):
    """Same float64 weights and batches in both: the same loss at every SGD step."""
    torch = _torch()
    rng = _rng(50)
    w0, b0 = rng.standard_normal((3, 4)) * 0.5, rng.standard_normal(3) * 0.1
    cw = rng.uniform(0.5, 2.0, 3)
    models = []
    for mod, tens in ((gputorch, lambda a: _t(a, device)), (torch, torch.tensor)):
        lin = mod.nn.Linear(4, 3, dtype=mod.float64, device=device if mod is gputorch else "cpu")
        with mod.no_grad():
            lin.weight.copy_(tens(w0))
            lin.bias.copy_(tens(b0))
        if loss_name == "cross_entropy":
            crit = mod.nn.CrossEntropyLoss(weight=tens(cw), label_smoothing=0.1, ignore_index=2)
        elif loss_name == "bce_with_logits":
            crit = mod.nn.BCEWithLogitsLoss(pos_weight=tens(cw))
        else:
            crit = mod.nn.MSELoss()
        opt = mod.optim.SGD(lin.parameters(), lr=0.3, momentum=0.9)
        models.append((lin, crit, opt, tens))
    for step in range(6):
        x = rng.standard_normal((8, 4))
        y = rng.integers(0, 3, 8) if loss_name == "cross_entropy" else rng.uniform(0, 1, (8, 3))
        losses = []
        for lin, crit, opt, tens in models:
            opt.zero_grad()
            loss = crit(lin(tens(x)), tens(y))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert losses[0] == pytest.approx(losses[1], rel=1e-10, abs=1e-12), f"step {step}"
    assert_close(models[0][0].weight, models[1][0].weight, rtol=1e-10, atol=1e-12)


# ================================================================ margin, triplet, multi-label, CTC
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_hinge_embedding_loss_parity(reduction, device):
    torch = _torch()
    rng = _rng(20)
    x, y = rng.standard_normal((4, 3)), rng.choice([-1.0, 1.0], (4, 3))
    _parity(device, nn.HingeEmbeddingLoss(margin=0.7, reduction=reduction),
            torch.nn.HingeEmbeddingLoss(margin=0.7, reduction=reduction), [x, y])


@pytest.mark.parametrize("p,swap", [(2.0, False), (1.0, True), (3.0, True)])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_triplet_margin_loss_parity(p, swap, reduction, device):
    torch = _torch()
    rng = _rng(21)
    a, pos, neg = (rng.standard_normal((5, 3)) for _ in range(3))
    kw = dict(margin=1.5, p=p, eps=1e-4, swap=swap, reduction=reduction)
    _parity(device, nn.TripletMarginLoss(**kw), torch.nn.TripletMarginLoss(**kw), [a, pos, neg], grads=(0, 1, 2))
    _parity(device, lambda *t: F.triplet_margin_loss(*t, **kw),
            lambda *t: torch.nn.functional.triplet_margin_loss(*t, **kw), [a[0], pos[0], neg[0]], grads=(0, 1, 2))


@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_with_distance_loss_parity(swap, device):
    torch = _torch()
    rng = _rng(22)
    a, pos, neg = (rng.standard_normal((4, 3)) for _ in range(3))
    _parity(device, nn.TripletMarginWithDistanceLoss(swap=swap, margin=2.0),
            torch.nn.TripletMarginWithDistanceLoss(swap=swap, margin=2.0), [a, pos, neg], grads=(0, 1, 2))

    def g_dist(x, y):
        return 1 - F.cosine_similarity(x, y)

    def t_dist(x, y):
        return 1 - torch.nn.functional.cosine_similarity(x, y)
    _parity(device, lambda *t: F.triplet_margin_with_distance_loss(*t, distance_function=g_dist, swap=swap,
                                                                   reduction="sum"),
            lambda *t: torch.nn.functional.triplet_margin_with_distance_loss(*t, distance_function=t_dist,
                                                                              swap=swap, reduction="sum"),
            [a, pos, neg], grads=(0, 1, 2))


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multi_margin_loss_parity(p, reduction, device):
    torch = _torch()
    rng = _rng(23)
    x, y, w = rng.standard_normal((5, 4)), rng.integers(0, 4, 5), rng.uniform(0.5, 2.0, 4)
    _parity(device, lambda a, b: F.multi_margin_loss(a, b, p=p, margin=0.8, reduction=reduction),
            lambda a, b: torch.nn.functional.multi_margin_loss(a, b, p=p, margin=0.8, reduction=reduction), [x, y])
    _parity(device, lambda a, b, c: nn.MultiMarginLoss(p, 0.8, c, reduction=reduction)(a, b),
            lambda a, b, c: torch.nn.MultiMarginLoss(p, 0.8, c, reduction=reduction)(a, b), [x, y, w])
    _parity(device, lambda a, b: F.multi_margin_loss(a, b, p=p, reduction=reduction),
            lambda a, b: torch.nn.functional.multi_margin_loss(a, b, p=p, reduction=reduction), [x[0], y[0]])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss_parity(reduction, device):
    torch = _torch()
    rng = _rng(24)
    x = rng.standard_normal((3, 5))
    y = np.array([[3, 0, -1, 1, 2], [4, 4, 1, 2, 3], [-1, 1, 2, 3, 4]])   # a repeat; an empty row
    _parity(device, nn.MultiLabelMarginLoss(reduction=reduction),
            torch.nn.MultiLabelMarginLoss(reduction=reduction), [x, y])
    _parity(device, nn.MultiLabelMarginLoss(reduction=reduction),
            torch.nn.MultiLabelMarginLoss(reduction=reduction), [x[1], y[1]])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_soft_margin_loss_parity(reduction, device):
    torch = _torch()
    rng = _rng(25)
    x, y, w = rng.standard_normal((4, 3)), rng.integers(0, 2, (4, 3)).astype(float), rng.uniform(0.5, 2, 3)
    _parity(device, lambda a, b, c: nn.MultiLabelSoftMarginLoss(c, reduction=reduction)(a, b),
            lambda a, b, c: torch.nn.MultiLabelSoftMarginLoss(c, reduction=reduction)(a, b), [x, y, w])
    _parity(device, lambda a, b: F.multilabel_soft_margin_loss(a, b, reduction=reduction),
            lambda a, b: torch.nn.functional.multilabel_soft_margin_loss(a, b, reduction=reduction), [x, y],
            grads=(0, 1))


def test_margin_and_triplet_loss_errors(device):
    x = _t(np.zeros((2, 3)), device)
    y = _t(np.zeros(2, dtype=np.int64), device)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        F.multi_margin_loss(x, y, p=3)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(RuntimeError, match=r"Expected target size \[2\], but got \[3\]"):
        F.multi_margin_loss(x, _t(np.zeros(3, dtype=np.int64), device))
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, _t(np.array([0, 5]), device))
    with pytest.raises(RuntimeError, match=r"inconsistent weight size, expected 3 but got \[2\]"):
        F.multi_margin_loss(x, y, weight=_t(np.ones(2), device))
    with pytest.raises(RuntimeError, match=r"inconsistent target size: \[2\] for input of size: \[2, 3\]"):
        F.multilabel_margin_loss(x, y)
    with pytest.raises(RuntimeError, match="anchor 2D, positive 2D, and negative 1D inputs"):
        F.triplet_margin_loss(x, x, x[0])
    with pytest.raises(ValueError, match="margin must be greater than 0, got 0"):
        F.triplet_margin_with_distance_loss(x, x, x, margin=0)
    with pytest.raises(ValueError, match="expected margin to be greater than 0, got -1 instead"):
        nn.TripletMarginLoss(margin=-1)
    with pytest.raises(ValueError, match="x is not a valid value for reduction"):
        F.triplet_margin_loss(x, x, x, reduction="x")
    with pytest.raises(ValueError, match="x is not valid"):
        F.multilabel_soft_margin_loss(x, x, reduction="x")


def _ctc_case(rng, t_max=7, n=3, c=5):
    logits = rng.standard_normal((t_max, n, c))
    targets = np.array([[1, 2, 2, 0], [3, 1, 0, 0], [4, 4, 4, 1]])
    return logits, targets


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_parity_padded_targets(reduction, zero_infinity, device):
    """Through a log_softmax (as CTC is used), and with respect to the log-probabilities
    themselves (where PyTorch's gradient is its own formula), lengths as lists and tensors."""
    torch = _torch()
    logits, targets = _ctc_case(_rng(30))
    il, tl = [7, 5, 3], [3, 2, 4]              # the last is impossible: an infinite loss
    kw = dict(reduction=reduction, zero_infinity=zero_infinity)
    if zero_infinity:
        _parity(device, lambda x, y: F.ctc_loss(x.log_softmax(2), y, _t(np.array(il), device),
                                             _t(np.array(tl), device), **kw),
                lambda x, y: torch.nn.functional.ctc_loss(x.log_softmax(2), y, torch.tensor(il), torch.tensor(tl),
                                                          **kw),
                [logits, targets])
    il = [7, 5, 6]
    _parity(device, lambda x, y: nn.CTCLoss(**kw)(x, y, il, tl),
            lambda x, y: torch.nn.CTCLoss(**kw)(x, y, il, tl), [logits, targets])


def test_ctc_loss_concatenated_targets_blank_and_unbatched(device):
    torch = _torch()
    rng = _rng(31)
    logits = rng.standard_normal((6, 2, 4))
    cat, tl, il = np.array([0, 1, 1, 2, 0]), [3, 2], [6, 4]
    _parity(device, lambda x, y: F.ctc_loss(x.log_softmax(2), y, il, tl, blank=3, reduction="none"),
            lambda x, y: torch.nn.functional.ctc_loss(x.log_softmax(2), y, il, tl, blank=3, reduction="none"),
            [logits, cat])
    _parity(device, lambda x, y: F.ctc_loss(x.log_softmax(1), y, [6], [2], reduction="none"),
            lambda x, y: torch.nn.functional.ctc_loss(x.log_softmax(1), y, [6], [2], reduction="none"),
            [logits[:, 0], np.array([1, 2])])


def test_ctc_loss_gradcheck_through_log_softmax(device):
    rng = _rng(32)
    x = _t(rng.standard_normal((5, 2, 3)), device, True)
    y = _t(np.array([[1, 1], [2, 0]]), device)
    assert gradcheck(lambda a: F.ctc_loss(a.log_softmax(2), y, [5, 4], [2, 1], reduction="sum"), (x,))


def test_ctc_loss_errors(device):
    lp = _t(np.zeros((4, 2, 3)), device)
    y = _t(np.ones((2, 2), dtype=np.int64), device)
    with pytest.raises(RuntimeError, match="Expected input_lengths to have value at most 4, but got value 5"):
        F.ctc_loss(lp, y, [5, 4], [2, 2])
    with pytest.raises(RuntimeError, match="Expected tensor to have size at least 3 at dimension 1"):
        F.ctc_loss(lp, y, [4, 4], [3, 2])
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp, y, [4, 4], [2, 2], blank=3)
    with pytest.raises(TypeError, match="both"):
        F.ctc_loss(lp, y, [4, 4], _t(np.array([2, 2]), device))


def test_margin_losses_empty_batch_mean_is_zero_and_ctc_without_frames(device):
    torch = _torch()
    empty = _t(np.zeros((0, 5)), device)
    assert F.multi_margin_loss(empty, _t(np.zeros(0, dtype=np.int64), device)).item() == 0.0
    assert F.multilabel_margin_loss(empty, _t(np.zeros((0, 5), dtype=np.int64), device)).item() == 0.0
    lp = np.log(_rng(33).dirichlet(np.ones(4), (3, 2)))
    targets = np.array([[1, 2], [3, 0]])
    for lengths in ([0, 0], [1, 1]):
        out = F.ctc_loss(_t(lp, device), _t(targets, device), [0, 3], lengths, reduction="none")
        expected = torch.nn.functional.ctc_loss(torch.tensor(lp), torch.tensor(targets), [0, 3], lengths,
                                                reduction="none")
        assert_close(out, expected, rtol=1e-12, atol=1e-14)


def test_hinge_embedding_loss_of_integers_keeps_their_dtype(device):
    # PyTorch computes in the input's integer dtype, with the margin cast to it (1.5 -> 1); the result
    # was float32 (differential seed 2).
    x = gputorch.tensor([[9], [3], [-3]], device=device).expand(3, 3)
    t = gputorch.tensor([[1, -1, 3], [1, 1, -1], [0, 2, -1]], device=device)
    for margin in (1.0, 1.5):
        out = F.hinge_embedding_loss(x, t, margin=margin, reduction="none")
        assert out.dtype == gputorch.int64
        np.testing.assert_array_equal(out.cpu().numpy(), [[9, 0, 9], [3, 3, 0], [1, 1, 4]])
    assert F.hinge_embedding_loss(x, t.abs().to(gputorch.uint8), reduction="none").dtype == gputorch.int64
    assert F.hinge_embedding_loss(x.float(), t, reduction="none").dtype == gputorch.float32


def test_multi_margin_loss_counts_only_positive_terms_as_torch(device):
    """PyTorch adds a term where ``margin - x[y] + x[i] > 0``: a NaN term (a NaN input) adds nothing
    and passes no gradient, and a term at exactly 0 passes none either."""
    torch = pytest.importorskip("torch")
    x = np.array([[-0.27, -0.95, -1.24, -0.27], [2.74, np.nan, -1.25, 0.64], [0.5, 0.0, 1.0, -0.5]])
    y = np.array([3, 1, 0])
    w = np.array([0.57, 1.96, 1.27, 0.33])
    for p in (1, 2):
        ours = gputorch.tensor(x, device=device, requires_grad=True)
        ref = torch.tensor(x, requires_grad=True)
        out = F.multi_margin_loss(ours, gputorch.tensor(y, device=device), p=p,
                                  weight=gputorch.tensor(w, device=device), reduction="sum")
        expected = torch.nn.functional.multi_margin_loss(ref, torch.tensor(y), p=p, weight=torch.tensor(w),
                                                         reduction="sum")
        out.backward()
        expected.backward()
        np.testing.assert_allclose(out.item(), expected.item(), rtol=1e-12)
        np.testing.assert_allclose(ours.grad.cpu().numpy(), ref.grad.numpy(), rtol=1e-12, atol=0)
