"""Recurrent layers: RNN/LSTM/GRU and their cells against PyTorch, gradchecks, dropout, errors."""
import math
import warnings

import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.nn.functional import recurrent as R
from tests._helpers import assert_close
from tests.nn._models import copy_state

RTOL, ATOL = 1e-10, 1e-12
IN, HID = 3, 4

# kind -> (class name, extra constructor arguments)
KINDS = {
    "rnn_tanh": ("RNN", {}),
    "rnn_relu": ("RNN", {"nonlinearity": "relu"}),
    "lstm": ("LSTM", {}),
    "lstm_proj": ("LSTM", {"proj_size": 2}),
    "gru": ("GRU", {}),
}
CONFIGS = [
    {},
    {"num_layers": 2},
    {"bidirectional": True},
    {"num_layers": 2, "bidirectional": True, "batch_first": True},
    {"batch_first": True, "bias": False},
]


def _torch():
    return pytest.importorskip("torch")


def _pair_modules(torch, kind, config, device):
    """The same float64 layer in torch and gputorch (torch's weights copied over)."""
    name, extra = KINDS[kind]
    ref = getattr(torch.nn, name)(IN, HID, **extra, **config, dtype=torch.float64)
    ours = getattr(nn, name)(IN, HID, **extra, **config, dtype=gputorch.float64, device=device)
    result = copy_state(ref, ours, gputorch, device)
    assert not result.missing_keys and not result.unexpected_keys
    return ref, ours


def _pair(torch, array, device):
    return (gputorch.tensor(array, device=device, requires_grad=True),
            torch.tensor(array, requires_grad=True))


def _state_shapes(module, batch):
    """Shapes of the initial states of a layer (``batch`` None: unbatched)."""
    directions = 2 if module.bidirectional else 1
    lead = (module.num_layers * directions,) + ((batch,) if batch is not None else ())
    out = module.proj_size if module.proj_size > 0 else module.hidden_size
    shapes = [lead + (out,)]
    if module.mode == "LSTM":
        shapes.append(lead + (module.hidden_size,))
    return shapes


def _flatten(result):
    """``(output, h_n)`` or ``(output, (h_n, c_n))`` as a flat list of tensors."""
    output, state = result
    return [output] + (list(state) if isinstance(state, tuple) else [state])


def _check_run(torch, ref, ours, x_shape, device, with_state):
    """Forward both layers on the same random input (and initial state); compare the outputs,
    final states and the gradients of the input, the states and every parameter."""
    x, tx = _pair(torch, np.random.randn(*x_shape), device)
    batch = None if len(x_shape) == 2 else x_shape[0 if ours.batch_first else 1]
    states = [_pair(torch, np.random.randn(*s), device) for s in _state_shapes(ours, batch)] if with_state else []
    if with_state:
        ours_hx = states[0][0] if len(states) == 1 else tuple(s[0] for s in states)
        ref_hx = states[0][1] if len(states) == 1 else tuple(s[1] for s in states)
        got, want = _flatten(ours(x, ours_hx)), _flatten(ref(tx, ref_hx))
    else:
        got, want = _flatten(ours(x)), _flatten(ref(tx))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert_close(a, b, RTOL, ATOL)
    grads = [np.random.randn(*b.shape) for b in want]
    sum(((a * gputorch.tensor(g, device=device)).sum() for a, g in zip(got, grads))).backward()
    sum(((b * torch.tensor(g)).sum() for b, g in zip(want, grads))).backward()
    assert_close(x.grad, tx.grad, RTOL, ATOL)
    for s, ts in states:
        assert_close(s.grad, ts.grad, RTOL, ATOL)
    ref_params = dict(ref.named_parameters())
    for name, p in ours.named_parameters():
        assert_close(p.grad, ref_params[name].grad, RTOL, ATOL)


# ================================================================ parity with torch
@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()) or "default")
@pytest.mark.parametrize("kind", list(KINDS))
def test_layer_parity(device, kind, config, with_state):
    torch = _torch()
    ref, ours = _pair_modules(torch, kind, config, device)
    shape = (2, 5, IN) if ours.batch_first else (5, 2, IN)
    _check_run(torch, ref, ours, shape, device, with_state)


@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("config", [{}, {"num_layers": 2, "bidirectional": True, "batch_first": True}],
                         ids=["default", "deep-bidirectional-batch_first"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_layer_unbatched_parity(device, kind, config, with_state):
    torch = _torch()
    ref, ours = _pair_modules(torch, kind, config, device)
    _check_run(torch, ref, ours, (4, IN), device, with_state)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_layer_output_shapes(device, kind):
    name, _ = KINDS[kind]
    layer = getattr(nn, name)(IN, 6, num_layers=3, bidirectional=True, batch_first=True, device=device)
    out, state = layer(gputorch.randn(2, 7, IN, device=device))
    assert out.shape == (2, 7, 12)
    h_n = state[0] if kind == "lstm" else state
    assert h_n.shape == (6, 2, 6)
    out, state = layer(gputorch.randn(7, IN, device=device))
    assert out.shape == (7, 12)
    assert (state[1] if kind == "lstm" else state).shape == (6, 6)


def test_lstm_proj_shapes(device):
    layer = nn.LSTM(IN, 6, num_layers=2, proj_size=2, bidirectional=True, device=device)
    out, (h_n, c_n) = layer(gputorch.randn(5, 3, IN, device=device))
    assert out.shape == (5, 3, 4) and h_n.shape == (4, 3, 2) and c_n.shape == (4, 3, 6)
    assert layer.weight_hr_l1_reverse.shape == (2, 6) and layer.weight_ih_l1.shape == (24, 4)
    assert layer.weight_hh_l0.shape == (24, 2)


def test_final_state_is_last_step_of_output(device):
    """h_n holds the forward direction's last step and the backward direction's first."""
    layer = nn.GRU(IN, HID, bidirectional=True, dtype=gputorch.float64, device=device)
    out, h_n = layer(gputorch.randn(6, 2, IN, dtype=gputorch.float64, device=device))
    assert_close(h_n[0], out[-1, :, :HID], 0, 0)
    assert_close(h_n[1], out[0, :, HID:], 0, 0)


def test_module_state_dict_round_trip_to_torch(device):
    """Weights trained here load into PyTorch and give the same outputs."""
    torch = _torch()
    ours = nn.LSTM(IN, HID, num_layers=2, bidirectional=True, proj_size=3, dtype=gputorch.float64, device=device)
    ref = torch.nn.LSTM(IN, HID, num_layers=2, bidirectional=True, proj_size=3, dtype=torch.float64)
    result = copy_state(ours, ref, torch)
    assert not result.missing_keys and not result.unexpected_keys
    x = np.random.randn(4, 2, IN)
    out, (h, c) = ours(gputorch.tensor(x, device=device))
    tout, (th, tc) = ref(torch.tensor(x))
    for a, b in ((out, tout), (h, th), (c, tc)):
        assert_close(a, b, RTOL, ATOL)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("kind", ["rnn_tanh", "rnn_relu", "lstm", "gru"])
def test_cell_parity(device, kind, with_state, batched, bias):
    torch = _torch()
    name = {"rnn_tanh": "RNNCell", "rnn_relu": "RNNCell", "lstm": "LSTMCell", "gru": "GRUCell"}[kind]
    extra = {"nonlinearity": "relu"} if kind == "rnn_relu" else {}
    ref = getattr(torch.nn, name)(IN, HID, bias=bias, **extra, dtype=torch.float64)
    ours = getattr(nn, name)(IN, HID, bias=bias, **extra, dtype=gputorch.float64, device=device)
    copy_state(ref, ours, gputorch, device)
    assert list(ours.state_dict()) == list(ref.state_dict())
    lead = (2,) if batched else ()
    x, tx = _pair(torch, np.random.randn(*lead, IN), device)
    states = [_pair(torch, np.random.randn(*lead, HID), device) for _ in range(2 if kind == "lstm" else 1)]
    if with_state:
        args = (x, tuple(s[0] for s in states) if kind == "lstm" else states[0][0])
        targs = (tx, tuple(s[1] for s in states) if kind == "lstm" else states[0][1])
    else:
        args, targs = (x,), (tx,)
    got, want = ours(*args), ref(*targs)
    got = list(got) if kind == "lstm" else [got]
    want = list(want) if kind == "lstm" else [want]
    for a, b in zip(got, want):
        assert_close(a, b, RTOL, ATOL)
    grads = [np.random.randn(*b.shape) for b in want]
    sum(((a * gputorch.tensor(g, device=device)).sum() for a, g in zip(got, grads))).backward()
    sum(((b * torch.tensor(g)).sum() for b, g in zip(want, grads))).backward()
    assert_close(x.grad, tx.grad, RTOL, ATOL)
    if with_state:
        for s, ts in states:
            assert_close(s.grad, ts.grad, RTOL, ATOL)
    ref_params = dict(ref.named_parameters())
    for pname, p in ours.named_parameters():
        assert_close(p.grad, ref_params[pname].grad, RTOL, ATOL)


def test_cell_unrolled_equals_layer(device):
    """A GRUCell stepped by hand gives the GRU layer's outputs (same weights)."""
    layer = nn.GRU(IN, HID, dtype=gputorch.float64, device=device)
    cell = nn.GRUCell(IN, HID, dtype=gputorch.float64, device=device)
    cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})
    x = gputorch.randn(5, 2, IN, dtype=gputorch.float64, device=device)
    out, _ = layer(x)
    h = None
    for t in range(5):
        h = cell(x[t], h)
        assert_close(h, out[t], 1e-13, 1e-14)


# ================================================================ parameters and construction
@pytest.mark.parametrize("config", CONFIGS + [{"proj_size": 2, "num_layers": 2, "bidirectional": True}],
                         ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()) or "default")
@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_state_dict_keys_and_shapes_match_torch(name, config):
    torch = _torch()
    if "proj_size" in config and name != "LSTM":
        pytest.skip("proj_size is LSTM only")
    ref, ours = getattr(torch.nn, name)(5, HID, **config), getattr(nn, name)(5, HID, **config)
    want = {k: tuple(v.shape) for k, v in ref.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in ours.state_dict().items()}
    assert list(got) == list(want) and got == want
    assert ours._flat_weights_names == ref._flat_weights_names
    assert [[tuple(p.shape) for p in ws] for ws in ours.all_weights] == \
        [[tuple(p.shape) for p in ws] for ws in ref.all_weights]
    assert str(ours) == str(ref)


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_state_dict_and_repr_match_torch(name):
    torch = _torch()
    extra = {"nonlinearity": "relu"} if name == "RNNCell" else {}
    for bias in (True, False):
        ref, ours = getattr(torch.nn, name)(5, HID, bias, **extra), getattr(nn, name)(5, HID, bias, **extra)
        assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
            {k: tuple(v.shape) for k, v in ref.state_dict().items()}
        assert str(ours) == str(ref)


@pytest.mark.parametrize("name", ["GRU", "LSTMCell"])
def test_init_is_uniform_within_one_over_sqrt_hidden(name):
    gputorch.manual_seed(0)
    hidden = 100
    layer = getattr(nn, name)(16, hidden)
    bound = 1 / math.sqrt(hidden)
    for pname, p in layer.named_parameters():
        a = p.detach().numpy()
        assert np.abs(a).max() <= bound, pname
        if a.size >= 1000:
            assert a.std() == pytest.approx(bound / math.sqrt(3), rel=0.06), pname
            assert abs(a.mean()) < 0.1 * bound, pname


def test_factory_kwargs_and_dtype_moves(device):
    layer = nn.LSTM(IN, HID, num_layers=2, dtype=gputorch.float64, device=device)
    assert all(p.dtype == gputorch.float64 and p.device.type == device for p in layer.parameters())
    layer.float()
    assert all(w.dtype == gputorch.float32 for w in layer._flat_weights)
    out, (h, c) = layer(gputorch.randn(3, 2, IN, device=device))
    assert out.dtype == h.dtype == c.dtype == gputorch.float32


def test_replacing_a_parameter_is_used_by_forward(device):
    layer = nn.RNN(IN, HID, bias=False, dtype=gputorch.float64, device=device)
    layer.weight_hh_l0 = nn.Parameter(gputorch.zeros(HID, HID, dtype=gputorch.float64, device=device))
    x = gputorch.randn(2, 1, IN, dtype=gputorch.float64, device=device)
    out, _ = layer(x)
    assert_close(out, (x @ layer.weight_ih_l0.t()).tanh(), 1e-14, 1e-15)


def test_constructor_errors():
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.RNN(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sig'. Select from 'tanh' or 'relu'."):
        nn.RNN(3, 4, nonlinearity="sig")
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.GRU(3, 4, dropout=1.5)
    with pytest.raises(TypeError, match="bias should be of type bool"):
        nn.GRU(3, 4, bias=1)
    with pytest.raises(ValueError, match="input_size must be greater than zero"):
        nn.LSTM(0, 4)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.LSTM(3, 0)
    with pytest.raises(ValueError, match="num_layers must be greater than zero"):
        nn.LSTM(3, 4, num_layers=0)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.2)


def test_rnn_nonlinearity_positional_argument():
    layer = nn.RNN(3, 4, 2, "relu")
    assert layer.mode == "RNN_RELU" and layer.nonlinearity == "relu" and layer.num_layers == 2


# ================================================================ gradients
def _randn(device, *shape):
    return gputorch.tensor(np.random.randn(*shape), device=device, requires_grad=True)


@pytest.mark.parametrize("kind", ["rnn_tanh", "lstm", "gru"])
def test_cell_gradcheck_gradgradcheck(device, kind):
    gates = {"rnn_tanh": 1, "lstm": 4, "gru": 3}[kind]
    n, i, h = 2, 3, 2
    x, w_ih, w_hh = _randn(device, n, i), _randn(device, gates * h, i), _randn(device, gates * h, h)
    b_ih, b_hh = _randn(device, gates * h), _randn(device, gates * h)
    hx, cx = _randn(device, n, h), _randn(device, n, h)
    if kind == "lstm":
        def fn(x, hx, cx, w_ih, w_hh, b_ih, b_hh):
            return R.lstm_cell(x, (hx, cx), w_ih, w_hh, b_ih, b_hh)
        inputs = (x, hx, cx, w_ih, w_hh, b_ih, b_hh)
    else:
        cell = R.gru_cell if kind == "gru" else R.rnn_cell
        fn = cell
        inputs = (x, hx, w_ih, w_hh, b_ih, b_hh)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("mode", ["RNN_TANH", "LSTM", "GRU"])
def test_layer_gradcheck_gradgradcheck(device, mode):
    """A whole (reversed) layer over 3 steps, with an LSTM projection: first and second derivatives."""
    gates = {"RNN_TANH": 1, "LSTM": 4, "GRU": 3}[mode]
    h = 3
    out = 2 if mode == "LSTM" else h
    x, h0, c0 = _randn(device, 3, 2, 2), _randn(device, 2, out), _randn(device, 2, h)
    w_ih, w_hh = _randn(device, gates * h, 2), _randn(device, gates * h, out)
    b_ih, b_hh = _randn(device, gates * h), _randn(device, gates * h)
    w_hr = _randn(device, out, h)

    def fn(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr):
        state = (h0, c0) if mode == "LSTM" else (h0,)
        output, final = R.recurrent_layer(mode, x, state, w_ih, w_hh, b_ih, b_hh,
                                          w_hr if mode == "LSTM" else None, reverse=True)
        return (output,) + final

    inputs = (x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr)
    if mode != "LSTM":
        fn_all = fn

        def fn(x, h0, w_ih, w_hh, b_ih, b_hh):  # noqa: F811 (no cell state, no projection)
            return fn_all(x, h0, None, w_ih, w_hh, b_ih, b_hh, None)
        inputs = (x, h0, w_ih, w_hh, b_ih, b_hh)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_fused_backward_equals_differentiable_backward(device, kind):
    """The one-op backward (no graph) and the Tensor-op backward (create_graph) agree."""
    size = 5
    gates = 4 if kind == "lstm" else 3
    gi, gh, s = _randn(device, 3, gates * size), _randn(device, 3, gates * size), _randn(device, 3, size)
    if kind == "lstm":
        outs = R.fused_lstm_cell(gi, gh, s)
    else:
        outs = (R.fused_gru_cell(gi, gh, s),)
    grads = [gputorch.tensor(np.random.randn(*o.shape), device=device) for o in outs]
    fast = gputorch.autograd.grad(outs, (gi, gh, s), grads, retain_graph=True)
    slow = gputorch.autograd.grad(outs, (gi, gh, s), grads, create_graph=True)
    for a, b in zip(fast, slow):
        assert b.requires_grad and not a.requires_grad
        assert_close(a, b, 1e-14, 1e-15)


def test_fused_cell_detects_inplace_change_of_saved_input(device):
    gi, gh, h = _randn(device, 2, 6), _randn(device, 2, 6), _randn(device, 2, 2)
    gh2 = gh * 1
    out = R.fused_gru_cell(gi, gh2, h)
    with gputorch.no_grad():
        gh2.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_float32_layer_close_to_float64(device):
    layer = nn.LSTM(IN, HID, num_layers=2, device=device)
    x = gputorch.randn(6, 2, IN, device=device)
    out32, _ = layer(x)
    out64, _ = layer.double()(x.double())
    assert out32.dtype == gputorch.float32
    assert_close(out32, out64.float(), 1e-5, 1e-6)


def test_no_grad_forward_records_nothing(device):
    layer = nn.GRU(IN, HID, device=device)
    with gputorch.no_grad():
        out, h = layer(gputorch.randn(3, 2, IN, device=device))
    assert out.grad_fn is None and not out.requires_grad and h.grad_fn is None


# ================================================================ dropout between layers
def _identity_relu_rnn(p, device, layers=2):
    """A relu RNN whose layers pass their input through (W_ih = I, W_hh = 0, no bias), so the
    output shows exactly what dropout did between layers."""
    layer = nn.RNN(8, 8, num_layers=layers, nonlinearity="relu", bias=False, dropout=p, device=device)
    with gputorch.no_grad():
        for k in range(layers):
            getattr(layer, f"weight_ih_l{k}").copy_(gputorch.eye(8, device=device))
            getattr(layer, f"weight_hh_l{k}").zero_()
    return layer


@pytest.mark.parametrize("p", [0.25, 0.5])
def test_dropout_between_layers_in_training(device, p):
    gputorch.manual_seed(1)
    layer = _identity_relu_rnn(p, device)
    out, h_n = layer(gputorch.ones(200, 10, 8, device=device))
    values = out.detach().cpu().numpy()
    dropped = values == 0
    assert abs(dropped.mean() - p) < 0.03
    np.testing.assert_allclose(values[~dropped], 1 / (1 - p), rtol=1e-6)
    # The first layer's final state has no dropout; the second sees the dropped input.
    np.testing.assert_allclose(h_n[0].detach().cpu().numpy(), 1.0)
    np.testing.assert_array_equal(h_n[1].detach().cpu().numpy(), values[-1])


def test_dropout_off_in_eval_and_not_after_last_layer(device):
    layer = _identity_relu_rnn(0.5, device)
    layer.eval()
    out, _ = layer(gputorch.ones(50, 4, 8, device=device))
    np.testing.assert_array_equal(out.detach().cpu().numpy(), 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        single = _identity_relu_rnn(0.5, device, layers=1)
    out, _ = single(gputorch.ones(50, 4, 8, device=device))
    np.testing.assert_array_equal(out.detach().cpu().numpy(), 1.0)


def test_dropout_gradient_follows_mask(device):
    gputorch.manual_seed(2)
    layer = _identity_relu_rnn(0.5, device)
    x = gputorch.ones(20, 3, 8, device=device, requires_grad=True)
    out, _ = layer(x)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), out.detach().cpu().numpy())


# ================================================================ errors (PyTorch's messages)
def test_input_errors(device):
    lstm, gru, rnn = nn.LSTM(10, 20, 2, device=device), nn.GRU(10, 20, 2, device=device), nn.RNN(10, 20, 2,
                                                                                                device=device)
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D instead"):
        lstm(gputorch.randn(1, 5, 3, 10, device=device))
    with pytest.raises(ValueError, match="GRU: Expected input to be 2D or 3D, got 1D instead"):
        gru(gputorch.randn(10, device=device))
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 5D tensor instead"):
        rnn(gputorch.randn(1, 2, 5, 3, 10, device=device))
    for layer in (lstm, gru, rnn):
        with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size. Expected 10, got 7"):
            layer(gputorch.randn(5, 3, 7, device=device))
    with pytest.raises(ValueError, match=r"RNN input dtype \(gputorch.float64\) does not match weight dtype "
                                         r"\(gputorch.float32\)"):
        gru(gputorch.randn(5, 3, 10, dtype=gputorch.float64, device=device))
    with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0 in RNN"):
        gru(gputorch.randn(0, 3, 10, device=device))


def test_hidden_state_errors(device):
    gru, rnn = nn.GRU(10, 20, 2, device=device), nn.RNN(10, 20, 2, device=device)
    x = gputorch.randn(5, 3, 10, device=device)
    for layer in (gru, rnn):
        with pytest.raises(RuntimeError, match=r"Expected hidden size \(2, 3, 20\), got \[1, 3, 20\]"):
            layer(x, gputorch.randn(1, 3, 20, device=device))
        with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D but got 2-D tensor"):
            layer(x, gputorch.randn(3, 20, device=device))
        with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"):
            layer(x[:, 0], gputorch.randn(2, 1, 20, device=device))
        with pytest.raises(RuntimeError, match=r"Expected hidden size \(2, 1, 20\), got \[2, 1, 5\]"):
            layer(x[:, 0], gputorch.randn(2, 5, device=device))
    lstm = nn.LSTM(10, 20, 2, device=device)
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(2, 3, 20\), got \[1, 3, 20\]"):
        lstm(x, (gputorch.randn(1, 3, 20, device=device), gputorch.randn(2, 3, 20, device=device)))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(2, 3, 20\), got \[2, 3, 5\]"):
        lstm(x, (gputorch.randn(2, 3, 20, device=device), gputorch.randn(2, 3, 5, device=device)))
    with pytest.raises(RuntimeError, match=r"For batched 3-D input, hx and cx should also be 3-D but got "
                                           r"\(3-D, 2-D\) tensors"):
        lstm(x, (gputorch.randn(2, 3, 20, device=device), gputorch.randn(3, 20, device=device)))
    with pytest.raises(RuntimeError, match=r"For unbatched 2-D input, hx and cx should also be 2-D but got "
                                           r"\(3-D, 3-D\) tensors"):
        lstm(x[:, 0], (gputorch.randn(2, 1, 20, device=device), gputorch.randn(2, 1, 20, device=device)))
    proj = nn.LSTM(10, 20, proj_size=4, device=device)
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 3, 4\), got \[1, 3, 20\]"):
        proj(x, (gputorch.randn(1, 3, 20, device=device), gputorch.randn(1, 3, 20, device=device)))


def test_cell_errors(device):
    gru, lstm, rnn = nn.GRUCell(10, 20, device=device), nn.LSTMCell(10, 20, device=device), nn.RNNCell(
        10, 20, device=device)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 7 expected 10"):
        gru(gputorch.randn(3, 7, device=device))
    with pytest.raises(RuntimeError, match="Input batch size 3 doesn't match hidden0 batch size 2"):
        gru(gputorch.randn(3, 10, device=device), gputorch.randn(2, 20, device=device))
    with pytest.raises(RuntimeError, match="hidden0 has inconsistent hidden_size: got 5, expected 20"):
        rnn(gputorch.randn(3, 10, device=device), gputorch.randn(3, 5, device=device))
    with pytest.raises(RuntimeError, match="hidden1 has inconsistent hidden_size: got 5, expected 20"):
        lstm(gputorch.randn(3, 10, device=device),
             (gputorch.randn(3, 20, device=device), gputorch.randn(3, 5, device=device)))
    with pytest.raises(ValueError, match="GRUCell: Expected input to be 1D or 2D, got 3D instead"):
        gru(gputorch.randn(1, 3, 10, device=device))
    with pytest.raises(ValueError, match="RNNCell: Expected hidden to be 1D or 2D, got 3D instead"):
        rnn(gputorch.randn(3, 10, device=device), gputorch.randn(1, 3, 20, device=device))
    with pytest.raises(ValueError, match=r"LSTMCell: Expected hx\[1\] to be 1D or 2D, got 3D instead"):
        lstm(gputorch.randn(3, 10, device=device),
             (gputorch.randn(3, 20, device=device), gputorch.randn(1, 3, 20, device=device)))
