"""nn.TransformerDecoderLayer, nn.TransformerDecoder and nn.Transformer against PyTorch."""
import math
import warnings

import numpy as np
import pytest

import gputorch
from gputorch import nn
from tests._helpers import assert_close
from tests.nn._models import copy_state

RTOL, ATOL = 1e-10, 1e-11
E, HEADS, FF = 8, 2, 16

# nn.Transformer's encoder (batch_first=False) notes that it cannot use nested tensors, as PyTorch's does
pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")


def _torch():
    return pytest.importorskip("torch")


def _pair(torch, array, device, requires_grad=True):
    return (gputorch.tensor(array, device=device, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def _randomize(torch, module):
    torch.manual_seed(0)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn_like(p) * 0.5)


def _build_pair(torch, device, make):
    """``make(lib)`` builds the module for ``lib``; torch's weights are randomised, copied into ours."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TransformerEncoder's nested-tensor note, on both sides
        theirs = make(torch).double()
        ours = make(gputorch).double().to(device)
    _randomize(torch, theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    copy_state(theirs, ours, gputorch, device=device)
    return ours, theirs


def _compare_grads(ours, theirs, pairs):
    for p, tp in pairs:
        assert_close(p.grad, tp.grad, RTOL, ATOL)
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == tname
        assert_close(p.grad, tp.grad, RTOL, ATOL, check_dtype=False)


def _mask(torch, device, kind, rows, cols=None, batch=None):
    """A mask of ``kind`` for both libraries: "causal" (float -inf above the diagonal),
    "causal_bool", "float" (random additive), "kpm"/"kpm_float" (key padding: the last two
    keys of batch entry 1 padded)."""
    cols = rows if cols is None else cols
    if kind == "causal":
        value = np.triu(np.full((rows, cols), -np.inf), 1)
    elif kind == "causal_bool":
        value = np.triu(np.ones((rows, cols), bool), 1)
    elif kind == "float":
        value = np.random.randn(rows, cols)
    else:
        value = np.zeros((batch, rows), bool)
        value[1, rows - 2:] = True
        if kind == "kpm_float":
            value = np.where(value, -np.inf, 0.0)
    return gputorch.tensor(value, device=device), torch.tensor(value)


def _masks(torch, device, spec, T, S, N):
    ours, theirs = {}, {}
    shapes = {"tgt_mask": (T, T), "memory_mask": (T, S), "src_mask": (S, S),
              "tgt_key_padding_mask": (T,), "memory_key_padding_mask": (S,), "src_key_padding_mask": (S,)}
    for key, kind in spec.items():
        if not isinstance(kind, str):
            ours[key] = theirs[key] = kind
            continue
        ours[key], theirs[key] = _mask(torch, device, kind, *shapes[key], batch=N)
    return ours, theirs


def _seq(shape_tb, batch_first):
    t, b = shape_tb
    return (b, t, E) if batch_first else (t, b, E)


# ------------------------------------------------------------------------------------ decoder layer
LAYER_CASES = {
    "post_norm": ({}, {}),
    "pre_norm_causal": ({"norm_first": True}, {"tgt_mask": "causal", "tgt_is_causal": True}),
    "batch_first_kpm": ({"batch_first": True},
                        {"tgt_mask": "causal_bool", "tgt_key_padding_mask": "kpm",
                         "memory_key_padding_mask": "kpm"}),
    "float_masks_gelu": ({"activation": "gelu", "bias": False},
                         {"memory_mask": "float", "tgt_key_padding_mask": "kpm_float",
                          "memory_key_padding_mask": "kpm_float"}),
}


@pytest.mark.parametrize("case", list(LAYER_CASES))
def test_decoder_layer_parity(device, case):
    torch = _torch()
    init_kwargs, spec = LAYER_CASES[case]
    ours, theirs = _build_pair(torch, device, lambda lib: lib.nn.TransformerDecoderLayer(
        E, HEADS, dim_feedforward=FF, dropout=0.0, **init_kwargs))
    T, S, N = 4, 5, 3
    bf = init_kwargs.get("batch_first", False)
    x, tx = _pair(torch, np.random.randn(*_seq((T, N), bf)), device)
    m, tm = _pair(torch, np.random.randn(*_seq((S, N), bf)), device)
    kw, tkw = _masks(torch, device, spec, T, S, N)
    out, ref = ours(x, m, **kw), theirs(tx, tm, **tkw)
    assert_close(out, ref, RTOL, ATOL)
    g = np.random.randn(*out.shape)
    out.backward(gputorch.tensor(g, device=device))
    ref.backward(torch.tensor(g))
    _compare_grads(ours, theirs, [(x, tx), (m, tm)])


def test_decoder_layer_structure_like_torch():
    torch = _torch()
    for kwargs in ({}, {"bias": False, "norm_first": True}, {"activation": "gelu", "batch_first": True}):
        ours = nn.TransformerDecoderLayer(E, HEADS, dim_feedforward=FF, **kwargs)
        theirs = torch.nn.TransformerDecoderLayer(E, HEADS, dim_feedforward=FF, **kwargs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert tuple(p.shape) == tuple(tp.shape), name
        assert repr(ours) == repr(theirs)
    layer = nn.TransformerDecoderLayer(E, HEADS)
    assert layer.linear1.out_features == 2048 and layer.dropout3.p == 0.1 and layer.norm3.eps == 1e-5
    assert layer.activation is gputorch.nn.functional.relu and not layer.norm_first
    assert nn.TransformerDecoderLayer(E, HEADS, activation="gelu").activation is gputorch.nn.functional.gelu
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerDecoderLayer(E, HEADS, activation="tanh")


def test_decoder_layer_unbatched(device):
    torch = _torch()
    ours, theirs = _build_pair(torch, device, lambda lib: lib.nn.TransformerDecoderLayer(
        E, HEADS, dim_feedforward=FF, dropout=0.0))
    x, tx = _pair(torch, np.random.randn(3, E), device)
    m, tm = _pair(torch, np.random.randn(4, E), device)
    kpm = np.array([False, False, True, True])
    out = ours(x, m, memory_key_padding_mask=gputorch.tensor(kpm, device=device))
    ref = theirs(tx, tm, memory_key_padding_mask=torch.tensor(kpm))
    assert_close(out, ref, RTOL, ATOL)


# ------------------------------------------------------------------------------------ decoder stack
@pytest.mark.parametrize("norm", [False])  # with a final norm: inside nn.Transformer below
def test_decoder_parity_and_causal_detection(device, norm):
    torch = _torch()
    ours, theirs = _build_pair(torch, device, lambda lib: lib.nn.TransformerDecoder(
        lib.nn.TransformerDecoderLayer(E, HEADS, dim_feedforward=FF, dropout=0.0), 2,
        norm=lib.nn.LayerNorm(E) if norm else None))
    x, tx = _pair(torch, np.random.randn(4, 2, E), device)
    m, tm = _pair(torch, np.random.randn(5, 2, E), device)
    mask, tmask = _mask(torch, device, "causal", 4)
    seen = []
    ours.layers[1].register_forward_pre_hook(lambda mod, args, kwargs: seen.append(kwargs["tgt_is_causal"]),
                                             with_kwargs=True)
    out, ref = ours(x, m, tgt_mask=mask), theirs(tx, tm, tgt_mask=tmask)
    assert seen == [True]  # tgt_is_causal=None: the causal mask is detected and passed down
    assert_close(out, ref, RTOL, ATOL)
    out.sum().backward()
    ref.sum().backward()
    _compare_grads(ours, theirs, [(x, tx), (m, tm)])
    assert ours.layers[0] is not ours.layers[1] and ours.num_layers == 2


# ------------------------------------------------------------------------------------ Transformer
def _make_transformer(batch_first=False, norm_first=False, dropout=0.0, **kwargs):
    def make(lib):
        return lib.nn.Transformer(E, HEADS, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=FF,
                                  dropout=dropout, batch_first=batch_first, norm_first=norm_first, **kwargs)
    return make


@pytest.mark.parametrize("batch_first,norm_first,train", [(False, False, True), (True, True, False),
                                                          (True, False, True)])
def test_transformer_parity(device, batch_first, norm_first, train):
    torch = _torch()
    ours, theirs = _build_pair(torch, device, _make_transformer(batch_first, norm_first))
    ours.train(train)
    theirs.train(train)
    S, T, N = 5, 4, 3
    src, tsrc = _pair(torch, np.random.randn(*_seq((S, N), batch_first)), device)
    tgt, ttgt = _pair(torch, np.random.randn(*_seq((T, N), batch_first)), device)
    spec = {"tgt_mask": "causal", "src_key_padding_mask": "kpm", "tgt_key_padding_mask": "kpm_float",
            "memory_key_padding_mask": "kpm"}
    if norm_first:
        spec = {"tgt_mask": "causal", "src_key_padding_mask": "kpm_float", "memory_mask": "float",
                "memory_key_padding_mask": "kpm_float", "tgt_is_causal": True}
    kw, tkw = _masks(torch, device, spec, T, S, N)
    out, ref = ours(src, tgt, **kw), theirs(tsrc, ttgt, **tkw)
    assert_close(out, ref, RTOL, ATOL)
    g = np.random.randn(*out.shape)
    out.backward(gputorch.tensor(g, device=device))
    ref.backward(torch.tensor(g))
    _compare_grads(ours, theirs, [(src, tsrc), (tgt, ttgt)])


def test_transformer_unbatched_and_src_mask(device):
    torch = _torch()
    ours, theirs = _build_pair(torch, device, _make_transformer(dropout=0.3))
    ours.eval()
    theirs.eval()
    src, tsrc = _pair(torch, np.random.randn(5, E), device)
    tgt, ttgt = _pair(torch, np.random.randn(3, E), device)
    smask, tsmask = _mask(torch, device, "causal_bool", 5)
    out = ours(src, tgt, src_mask=smask, tgt_mask=nn.Transformer.generate_square_subsequent_mask(
        3, device=device, dtype=gputorch.float64))
    ref = theirs(tsrc, ttgt, src_mask=tsmask, tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(
        3, dtype=torch.float64))
    assert_close(out, ref, RTOL, ATOL)


def test_transformer_structure_and_init_like_torch():
    torch = _torch()
    with warnings.catch_warnings(record=True) as ours_w:
        warnings.simplefilter("always")
        ours = nn.Transformer(E, HEADS, 2, 1, FF)
    with warnings.catch_warnings(record=True) as theirs_w:
        warnings.simplefilter("always")
        theirs = torch.nn.Transformer(E, HEADS, 2, 1, FF)
    assert [str(w.message) for w in ours_w] == [str(w.message) for w in theirs_w]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    assert (ours.d_model, ours.nhead, ours.batch_first) == (E, HEADS, False)
    assert isinstance(ours.encoder.norm, nn.LayerNorm) and isinstance(ours.decoder.norm, nn.LayerNorm)
    # xavier_uniform_ on every matrix: values within the bound, spread like U(-a, a)
    for name, p in ours.named_parameters():
        if p.dim() > 1:
            a = math.sqrt(6.0 / (p.shape[0] + p.shape[1]))
            values = p.detach().numpy()
            assert np.abs(values).max() <= a and values.std() > 0.4 * a, name
    # the state dict of a torch model loads as is (through NumPy)
    copy_state(theirs, ours, gputorch)
    assert_close(ours.decoder.layers[0].multihead_attn.in_proj_weight,
                 theirs.decoder.layers[0].multihead_attn.in_proj_weight, 0, 0)
    defaults = nn.Transformer()
    assert (len(defaults.encoder.layers), len(defaults.decoder.layers)) == (6, 6)
    assert defaults.encoder.layers[0].linear1.out_features == 2048 and defaults.d_model == 512


def test_transformer_custom_parts_and_factory_kwargs():
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, HEADS, FF), 1, enable_nested_tensor=False)
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(E, HEADS, FF), 1)
    model = nn.Transformer(E, HEADS, custom_encoder=enc, custom_decoder=dec)
    assert model.encoder is enc and model.decoder is dec
    assert model(gputorch.randn(4, 2, E), gputorch.randn(3, 2, E)).shape == (3, 2, E)
    model = nn.Transformer(E, HEADS, 1, 1, FF, dtype=gputorch.float64, activation="gelu", bias=False)
    assert all(p.dtype == gputorch.float64 for p in model.parameters())
    assert model.decoder.norm.bias is None


def test_transformer_errors():
    model = nn.Transformer(E, HEADS, 1, 1, FF)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(gputorch.randn(4, 2, E), gputorch.randn(3, 3, E))
    bf = nn.Transformer(E, HEADS, 1, 1, FF, batch_first=True)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        bf(gputorch.randn(2, 4, E), gputorch.randn(3, 4, E))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        model(gputorch.randn(4, 2, E), gputorch.randn(3, 2, E + 2))
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.Transformer(E, 3)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        model(gputorch.randn(4, 2, E), gputorch.randn(3, 2, E), tgt_is_causal=True)


def test_generate_square_subsequent_mask(device):
    torch = _torch()
    ours = nn.Transformer.generate_square_subsequent_mask(4, device=device)
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(4)
    assert_close(ours, theirs, 0, 0)
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=gputorch.float64).dtype == gputorch.float64


def test_seq2seq_copy_task_training_parity(device):
    """A few Adam steps of a tiny copy-task seq2seq model, step for step equal to PyTorch's."""
    torch = _torch()
    vocab, S = 6, 5

    def make(lib):
        nn_ = lib.nn
        return nn_.ModuleDict({"embed": nn_.Embedding(vocab, E),
                               "core": nn_.Transformer(E, HEADS, 1, 1, FF, dropout=0.0, batch_first=True),
                               "head": nn_.Linear(E, vocab)})
    ours, theirs = _build_pair(torch, device, make)
    opt = gputorch.optim.Adam(ours.parameters(), lr=1e-2)
    topt = torch.optim.Adam(theirs.parameters(), lr=1e-2)
    seq = np.random.randint(1, vocab, size=(3, S))
    tgt_in = np.concatenate([np.zeros((3, 1), np.int64), seq[:, :-1]], 1)  # 0 = start token

    def run(lib, model, device=None):
        kw = {} if device is None else {"device": device}
        src, tgt, target = (lib.tensor(a, **kw) for a in (seq, tgt_in, seq))
        mask = model["core"].generate_square_subsequent_mask(S, dtype=lib.float64, **kw)
        hidden = model["core"](model["embed"](src), model["embed"](tgt), tgt_mask=mask)
        logits = model["head"](hidden)
        return lib.nn.functional.cross_entropy(logits.reshape(-1, vocab), target.reshape(-1))
    losses = []
    for step in range(4):  # the same batch each step: the loss must fall
        loss, tloss = run(gputorch, ours, device), run(torch, theirs)
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-10), step
        losses.append(loss.item())
        for o in (opt, topt):
            o.zero_grad()
        loss.backward()
        tloss.backward()
        opt.step()
        topt.step()
    assert losses[-1] < losses[0]
    for key, value in theirs.state_dict().items():
        assert_close(ours.state_dict()[key], value, 1e-9, 1e-9)
