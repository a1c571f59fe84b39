"""The whole-sequence LSTM and GRU layer ops: equal to the per-step ops they replace (values and
gradients, both directions, with and without biases), gradcheck, and double backward through their
recomputing fallback."""
import numpy as np
import pytest

import gputorch as T
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.nn.functional import recurrent, recurrent_sequence

RNG = np.random.default_rng(11)


def _inputs(device, steps=5, batch=3, size=4, bias=True):
    def t(*shape):
        return T.tensor(RNG.standard_normal(shape), device=device, requires_grad=True)
    return t(steps, batch, 4 * size), t(batch, size), t(batch, size), t(4 * size, size), (t(4 * size) if bias else None)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_matches_per_step_ops(device, reverse, bias):
    gi, h0, c0, w, b = _inputs(device, bias=bias)
    fused = recurrent_sequence.lstm_sequence(gi, h0, c0, w, b, reverse)
    stepped = recurrent.recurrent_steps("LSTM", gi, (h0, c0), w, b, None, reverse)
    outputs = (fused[0],) + fused[1]
    weights = [T.tensor(RNG.standard_normal(o.shape), device=device) for o in outputs]
    leaves = [x for x in (gi, h0, c0, w, b) if x is not None]
    grads_fused = T.autograd.grad(sum((o * k).sum() for o, k in zip(outputs, weights)), leaves)
    grads_stepped = T.autograd.grad(sum((o * k).sum() for o, k in zip(stepped, weights)), leaves)
    for a, e in zip(outputs + grads_fused, tuple(stepped) + grads_stepped):
        np.testing.assert_allclose(a.detach().cpu().numpy(), e.detach().cpu().numpy(), rtol=1e-12, atol=1e-13)


def test_gradcheck_and_double_backward(device):
    gi, h0, c0, w, b = _inputs(device, steps=3, batch=2, size=2)
    assert gradcheck(lambda *a: recurrent_sequence.lstm_sequence(*a, False)[0], (gi, h0, c0, w, b))
    assert gradgradcheck(lambda *a: recurrent_sequence.lstm_sequence(*a, True)[1][1], (gi, h0, c0, w, b))


def test_lstm_module_uses_it(device):
    lstm = T.nn.LSTM(3, 4, 2, bidirectional=True).to(device)
    out, _ = lstm(T.randn(5, 2, 3, device=device))
    node = out.grad_fn
    seen, names = set(), set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        names.add(type(n).__name__)
        stack.extend(f for f, _ in n.next_functions)
    assert "LstmSequenceBackward0" in names and "ThnnFusedLstmCellBackward0" not in names


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_gru_matches_per_step_ops(device, reverse, bias):
    def t(*shape):
        return T.tensor(RNG.standard_normal(shape), device=device, requires_grad=True)
    gi, h0, w, b = t(5, 3, 12), t(3, 4), t(12, 4), (t(12) if bias else None)
    fused = recurrent_sequence.gru_sequence(gi, h0, w, b, reverse)
    stepped = recurrent.recurrent_steps("GRU", gi, (h0,), w, b, None, reverse)
    outputs = (fused[0],) + fused[1]
    weights = [T.tensor(RNG.standard_normal(o.shape), device=device) for o in outputs]
    leaves = [x for x in (gi, h0, w, b) if x is not None]
    grads_fused = T.autograd.grad(sum((o * k).sum() for o, k in zip(outputs, weights)), leaves)
    grads_stepped = T.autograd.grad(sum((o * k).sum() for o, k in zip(stepped, weights)), leaves)
    for a, e in zip(outputs + grads_fused, tuple(stepped) + grads_stepped):
        np.testing.assert_allclose(a.detach().cpu().numpy(), e.detach().cpu().numpy(), rtol=1e-12, atol=1e-13)
    assert gradgradcheck(lambda *a: recurrent_sequence.gru_sequence(a[0], a[1], a[2], a[3] if bias else None,
                                                                    reverse)[0].sum(0),
                         tuple(x.detach()[:2].clone().requires_grad_() if x is gi else x for x in leaves))


def test_outputs_do_not_alias_the_saved_workspace(device):
    """Writing into a layer's outputs must not change the hidden states its backward reads."""
    def weight_grad(inplace):
        T.manual_seed(0)
        lstm = T.nn.LSTM(3, 4).to(device)
        out, _ = lstm(T.randn(5, 2, 3, device=device))
        kept = out * 1
        if inplace:
            out.mul_(0)
        kept.sum().backward()
        return lstm.weight_hh_l0.grad.cpu().numpy()
    np.testing.assert_array_equal(weight_grad(True), weight_grad(False))
