"""nn.TransformerEncoderLayer and nn.TransformerEncoder against PyTorch."""
import warnings

import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.autograd import gradcheck
from gputorch.nn import functional as F
from gputorch.nn.modules.transformer import _detect_is_causal_mask, _generate_square_subsequent_mask
from tests._helpers import assert_close
from tests.nn._models import copy_state

RTOL, ATOL = 1e-10, 1e-11


def _torch():
    return pytest.importorskip("torch")


def _pair(torch, array, device, requires_grad=True):
    return (gputorch.tensor(array, device=device, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def _randomize(torch, module):
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn_like(p) * 0.5)


def _layer_pair(torch, device, activation=None, **kwargs):
    kwargs.setdefault("dropout", 0.0)
    t_act = {"relu_fn": torch.nn.functional.relu, "gelu_str": "gelu", "gelu_module": torch.nn.GELU(),
             "tanh_callable": torch.tanh, None: torch.nn.functional.relu}[activation]
    g_act = {"relu_fn": F.relu, "gelu_str": "gelu", "gelu_module": nn.GELU(), "tanh_callable": gputorch.tanh,
             None: F.relu}[activation]
    theirs = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, activation=t_act, **kwargs).double()
    ours = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, activation=g_act, **kwargs).double().to(device)
    _randomize(torch, theirs)
    copy_state(theirs, ours, gputorch, device=device)
    return ours, theirs


def _compare_grads(ours, theirs, pairs):
    for p, tp in pairs:
        assert_close(p.grad, tp.grad, RTOL, ATOL)
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == tname
        assert_close(p.grad, tp.grad, RTOL, ATOL)


LAYER_CASES = {
    "post_norm": ({}, {}),
    "pre_norm": ({"norm_first": True}, {}),
    "batch_first": ({"batch_first": True}, {}),
    "gelu_string": ({"activation": "gelu_str"}, {}),
    "gelu_module": ({"activation": "gelu_module", "norm_first": True}, {}),
    "callable_activation": ({"activation": "tanh_callable"}, {}),
    "no_bias": ({"bias": False}, {}),
    "layer_norm_eps": ({"layer_norm_eps": 1e-2}, {}),
    "src_mask_bool": ({}, {"src_mask": "bool"}),
    "src_mask_causal_hint": ({"norm_first": True}, {"src_mask": "causal", "is_causal": True}),
    "key_padding_mask": ({}, {"src_key_padding_mask": "kpm"}),
    "both_masks": ({"batch_first": True}, {"src_mask": "float", "src_key_padding_mask": "kpm_float"}),
}


def _masks(torch, device, spec, S, N):
    ours, theirs = {}, {}
    for key, kind in spec.items():
        if kind == "bool":
            value = np.random.rand(S, S) > 0.7
            np.fill_diagonal(value, False)
        elif kind == "causal":
            value = np.triu(np.full((S, S), -np.inf), 1)
        elif kind == "float":
            value = np.random.randn(S, S)
        elif kind in ("kpm", "kpm_float"):
            value = np.zeros((N, S), bool)
            value[1, S - 2:] = True
            if kind == "kpm_float":
                value = np.where(value, -np.inf, 0.0)
        else:
            ours[key] = theirs[key] = kind
            continue
        ours[key], theirs[key] = gputorch.tensor(value, device=device), torch.tensor(value)
    return ours, theirs


@pytest.mark.parametrize("case", list(LAYER_CASES))
def test_encoder_layer_parity(device, case):
    torch = _torch()
    init_kwargs, call_spec = LAYER_CASES[case]
    ours, theirs = _layer_pair(torch, device, **init_kwargs)
    S, N = 5, 3
    shape = (N, S, 8) if init_kwargs.get("batch_first") else (S, N, 8)
    x, tx = _pair(torch, np.random.randn(*shape), device)
    kw_ours, kw_theirs = _masks(torch, device, call_spec, S, N)
    out, ref = ours(x, **kw_ours), theirs(tx, **kw_theirs)
    assert_close(out, ref, RTOL, ATOL)
    g = np.random.randn(*shape)
    out.backward(gputorch.tensor(g, device=device))
    ref.backward(torch.tensor(g))
    _compare_grads(ours, theirs, [(x, tx)])


def test_encoder_layer_structure_like_torch():
    torch = _torch()
    for kwargs in ({}, {"bias": False}, {"norm_first": True, "batch_first": True}):
        ours = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, **kwargs)
        theirs = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, **kwargs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert tuple(p.shape) == tuple(tp.shape), name
        assert repr(ours) == repr(theirs)
    layer = nn.TransformerEncoderLayer(8, 2)
    assert layer.linear1.out_features == 2048 and layer.dropout.p == 0.1 and layer.norm1.eps == 1e-5
    assert layer.activation is F.relu and layer.activation_relu_or_gelu == 1
    assert nn.TransformerEncoderLayer(8, 2, activation="gelu").activation_relu_or_gelu == 2
    assert nn.TransformerEncoderLayer(8, 2, activation=gputorch.tanh).activation_relu_or_gelu == 0


def test_encoder_layer_unbatched_and_eval(device):
    torch = _torch()
    ours, theirs = _layer_pair(torch, device, dropout=0.3)
    ours.eval()
    theirs.eval()
    x, tx = _pair(torch, np.random.randn(4, 8), device)
    assert_close(ours(x), theirs(tx), RTOL, ATOL)
    with torch.no_grad(), gputorch.no_grad():  # PyTorch takes its fused inference path here
        xb, txb = _pair(torch, np.random.randn(4, 2, 8), device, requires_grad=False)
        assert_close(ours(xb), theirs(txb), 1e-9, 1e-10)


def _zero_fraction(module, call):
    seen = []
    handles = [m.register_forward_hook(lambda mod, inp, out: seen.append(out)) for m in module]
    call()
    for h in handles:
        h.remove()
    arrays = [np.asarray(o.detach().cpu().numpy()) for o in seen]
    return sum(int((a == 0).sum()) for a in arrays) / sum(a.size for a in arrays)


def test_encoder_layer_dropout_mask_statistics(device):
    torch = _torch()
    p = 0.4
    ours, theirs = _layer_pair(torch, device, dropout=p)
    x, tx = _pair(torch, np.random.randn(40, 8, 8), device)
    gputorch.manual_seed(0)
    ours_frac = _zero_fraction([ours.dropout1, ours.dropout2], lambda: ours(x))
    theirs_frac = _zero_fraction([theirs.dropout1, theirs.dropout2], lambda: theirs(tx))
    assert abs(ours_frac - p) < 0.02 and abs(theirs_frac - p) < 0.02
    ours.eval()
    assert _zero_fraction([ours.dropout1, ours.dropout2], lambda: ours(x)) == 0.0
    # the training output differs from the deterministic one, the eval output is reproducible
    ours.train()
    assert not np.allclose(ours(x).detach().cpu().numpy(), ours(x).detach().cpu().numpy())


def test_encoder_layer_gradcheck(device):
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, activation="gelu").double().to(device)
    x = gputorch.randn(3, 1, 4, dtype=gputorch.float64, device=device, requires_grad=True)
    assert gradcheck(lambda t: layer(t), (x,))


@pytest.mark.parametrize("norm", [False, True])
def test_encoder_parity(device, norm):
    torch = _torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
        theirs = torch.nn.TransformerEncoder(t_layer, 3, norm=torch.nn.LayerNorm(8) if norm else None).double()
        g_layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
        ours = nn.TransformerEncoder(g_layer, 3, norm=nn.LayerNorm(8) if norm else None).double().to(device)
    _randomize(torch, theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    copy_state(theirs, ours, gputorch, device=device)
    x, tx = _pair(torch, np.random.randn(5, 2, 8), device)
    mask = np.triu(np.full((5, 5), -np.inf), 1)
    kpm = np.where(np.array([[False] * 5, [False, False, False, True, True]]), -np.inf, 0.0)
    out = ours(x, mask=gputorch.tensor(mask, device=device), src_key_padding_mask=gputorch.tensor(kpm, device=device))
    ref = theirs(tx, mask=torch.tensor(mask), src_key_padding_mask=torch.tensor(kpm))
    assert_close(out, ref, RTOL, ATOL)
    out.sum().backward()
    ref.sum().backward()
    _compare_grads(ours, theirs, [(x, tx)])
    assert ours.layers[0] is not ours.layers[1]


def test_encoder_nested_tensor_warning_like_torch():
    torch = _torch()
    with warnings.catch_warnings(record=True) as ours_w:
        warnings.simplefilter("always")
        ours = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2), 2)
    with warnings.catch_warnings(record=True) as theirs_w:
        warnings.simplefilter("always")
        theirs = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2), 2)
    assert [str(w.message) for w in ours_w] == [str(w.message) for w in theirs_w]
    assert ours.use_nested_tensor is theirs.use_nested_tensor is False


def test_causal_mask_helpers(device):
    mask = _generate_square_subsequent_mask(3, device=device, dtype=gputorch.float64)
    assert mask.tolist() == [[0.0, -np.inf, -np.inf], [0.0, 0.0, -np.inf], [0.0, 0.0, 0.0]]
    assert _detect_is_causal_mask(mask) is True
    assert _detect_is_causal_mask(mask, is_causal=False) is False
    assert _detect_is_causal_mask(mask, size=4) is False
    assert _detect_is_causal_mask(gputorch.zeros(3, 3, device=device)) is False
    assert _detect_is_causal_mask(None) is False


def test_encoder_layer_errors():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.TransformerEncoderLayer(8, 3)
    layer = nn.TransformerEncoderLayer(8, 2)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 8, but got 6"):
        layer(gputorch.randn(4, 2, 6))
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is \(3, 3\), but should be \(4, 4\)"):
        layer(gputorch.randn(4, 2, 8), src_mask=gputorch.zeros(3, 3))


@pytest.mark.parametrize("norm_first", [False, True])
def test_training_parity_adam(device, norm_first):
    torch = _torch()

    def build(lib):
        nn_ = lib.nn
        layer = nn_.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, norm_first=norm_first,
                                            batch_first=True)
        return nn_.ModuleDict({"enc": layer, "head": nn_.Linear(8, 1)}).double()
    theirs = build(torch)
    ours = build(gputorch).to(device)
    copy_state(theirs, ours, gputorch, device=device)
    opt = gputorch.optim.Adam(ours.parameters(), lr=1e-2)
    topt = torch.optim.Adam(theirs.parameters(), lr=1e-2)
    mask = np.triu(np.full((6, 6), -np.inf), 1)
    g_mask = gputorch.tensor(mask, device=device)
    for step in range(5):
        xb, yb = np.random.randn(3, 6, 8), np.random.randn(3, 6, 1)
        out = ours["head"](ours["enc"](gputorch.tensor(xb, device=device), src_mask=g_mask))
        tout = theirs["head"](theirs["enc"](torch.tensor(xb), src_mask=torch.tensor(mask)))
        loss = ((out - gputorch.tensor(yb, device=device)) ** 2).mean()
        tloss = ((tout - torch.tensor(yb)) ** 2).mean()
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-10), step
        opt.zero_grad()
        topt.zero_grad()
        loss.backward()
        tloss.backward()
        opt.step()
        topt.step()
    # The key part of in_proj_bias has an exactly-zero true gradient (softmax ignores a shift of
    # every score of a row), so both sides step on rounding noise (~1e-11 after Adam): atol 1e-9.
    for key, value in theirs.state_dict().items():
        assert_close(ours.state_dict()[key], value, 1e-9, 1e-9)
