"""F.scaled_dot_product_attention, F.multi_head_attention_forward and nn.MultiheadAttention."""
import math
import warnings

import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.nn import functional as F
from tests._helpers import assert_close
from tests.nn._models import copy_state

RTOL, ATOL = 1e-10, 1e-11


def _torch():
    return pytest.importorskip("torch")


def _pair(torch, array, device, requires_grad=True):
    return (gputorch.tensor(array, device=device, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def _as_both(torch, value, device):
    if isinstance(value, np.ndarray):
        return gputorch.tensor(value, device=device), torch.tensor(value)
    return value, value


def _check_backward(torch, out, ref, pairs):
    assert_close(out, ref, RTOL, ATOL)
    g = np.random.randn(*ref.shape)
    out.backward(gputorch.tensor(g, device=out.device))
    ref.backward(torch.tensor(g))
    for ours, theirs in pairs:
        assert_close(ours.grad, theirs.grad, RTOL, ATOL)


def _reference_sdpa(q, k, v, allowed=None, scale=None):
    """NumPy attention; ``allowed`` a bool mask; rows with nothing allowed give zeros."""
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if allowed is not None:
        s = np.where(allowed, s, -np.inf)
    with np.errstate(all="ignore"):
        e = np.exp(s - s.max(-1, keepdims=True))
        p = e / e.sum(-1, keepdims=True)
    return np.nan_to_num(p) @ v


# ================================================================ scaled_dot_product_attention
SDPA_CASES = {
    "plain": {},
    "causal": {"is_causal": True},
    "scale": {"scale": 0.37},
    "bool_mask": {"attn_mask": "bool"},
    "bool_mask_dead_row": {"attn_mask": "bool_dead"},
    "float_mask": {"attn_mask": "float"},
    "float_mask_dead_row": {"attn_mask": "float_dead"},
}


def _mask(kind, L, S):
    if kind == "bool":
        m = np.random.rand(L, S) > 0.4
        m[:, 0] = True
        return m
    if kind == "bool_dead":
        m = np.random.rand(L, S) > 0.4
        m[1] = False
        return m
    if kind == "float":
        return np.random.randn(2, 1, L, S)
    m = np.random.randn(2, 1, L, S)
    m[0, 0, 2] = -np.inf
    return m


@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_parity(device, case):
    torch = _torch()
    kwargs = dict(SDPA_CASES[case])
    q, tq = _pair(torch, np.random.randn(2, 3, 4, 5), device)
    k, tk = _pair(torch, np.random.randn(2, 3, 6, 5), device)
    v, tv = _pair(torch, np.random.randn(2, 3, 6, 7), device)
    if "attn_mask" in kwargs:
        mask = _mask(kwargs.pop("attn_mask"), 4, 6)
        kwargs_g = dict(kwargs, attn_mask=gputorch.tensor(mask, device=device))
        kwargs_t = dict(kwargs, attn_mask=torch.tensor(mask))
    else:
        kwargs_g = kwargs_t = kwargs
    out = F.scaled_dot_product_attention(q, k, v, **kwargs_g)
    ref = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **kwargs_t)
    assert out.shape == (2, 3, 4, 7)
    _check_backward(torch, out, ref, [(q, tq), (k, tk), (v, tv)])


def test_sdpa_numpy_reference(device):
    q, k, v = np.random.randn(3, 4), np.random.randn(5, 4), np.random.randn(5, 2)
    allowed = np.random.rand(3, 5) > 0.5
    allowed[0] = False
    got = F.scaled_dot_product_attention(*(gputorch.tensor(a, device=device) for a in (q, k, v)),
                                         attn_mask=gputorch.tensor(allowed, device=device))
    assert_close(got, _reference_sdpa(q, k, v, allowed), 1e-12, 1e-12)
    assert got[0].abs().sum().item() == 0.0  # no key allowed: zeros
    causal = F.scaled_dot_product_attention(*(gputorch.tensor(a, device=device) for a in (q, k, v)),
                                            is_causal=True, scale=0.5)
    assert_close(causal, _reference_sdpa(q, k, v, np.tril(np.ones((3, 5), bool)), 0.5), 1e-12, 1e-12)


def test_sdpa_dead_rows_have_zero_grads(device):
    q = gputorch.randn(3, 4, dtype=gputorch.float64, device=device, requires_grad=True)
    k = gputorch.randn(5, 4, dtype=gputorch.float64, device=device, requires_grad=True)
    mask = gputorch.ones(3, 5, dtype=gputorch.bool, device=device)
    mask[1] = False
    F.scaled_dot_product_attention(q, k, k, attn_mask=mask).sum().backward()
    assert not q.grad.isnan().any() and q.grad[1].abs().sum().item() == 0.0
    assert not k.grad.isnan().any()


@pytest.mark.parametrize("kv_heads", [1, 2, 6])
def test_sdpa_gqa(device, kv_heads):
    torch = _torch()
    q, tq = _pair(torch, np.random.randn(2, 6, 3, 4), device)
    k, tk = _pair(torch, np.random.randn(2, kv_heads, 5, 4), device)
    v, tv = _pair(torch, np.random.randn(2, kv_heads, 5, 3), device)
    out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    ref = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, enable_gqa=True)
    _check_backward(torch, out, ref, [(q, tq), (k, tk), (v, tv)])


def test_sdpa_unbatched_and_float32(device):
    torch = _torch()
    a = [np.random.randn(3, 4).astype(np.float32) for _ in range(3)]
    out = F.scaled_dot_product_attention(*(gputorch.tensor(x, device=device) for x in a))
    ref = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(x) for x in a))
    assert out.dtype is gputorch.float32
    assert_close(out, ref, 1e-5, 1e-6)


def test_sdpa_non_contiguous_inputs(device):
    torch = _torch()
    q, tq = _pair(torch, np.random.randn(4, 2, 3), device)
    k, tk = _pair(torch, np.random.randn(5, 2, 3), device)
    out = F.scaled_dot_product_attention(q.transpose(0, 1), k.transpose(0, 1), k.transpose(0, 1))
    ref = torch.nn.functional.scaled_dot_product_attention(tq.transpose(0, 1), tk.transpose(0, 1),
                                                           tk.transpose(0, 1))
    _check_backward(torch, out, ref, [(q, tq), (k, tk)])


def test_sdpa_dropout_statistics(device):
    gputorch.manual_seed(0)
    v = gputorch.eye(200, dtype=gputorch.float64, device=device)
    q = gputorch.zeros(50, 4, dtype=gputorch.float64, device=device)
    k = gputorch.zeros(200, 4, dtype=gputorch.float64, device=device)
    # uniform weights 1/200; dropout zeroes a fraction p and scales the rest by 1/(1-p)
    values = F.scaled_dot_product_attention(q, k, v, dropout_p=0.25).cpu().numpy()
    kept = values[values != 0]
    assert abs(kept.size / values.size - 0.75) < 0.02
    assert_close(kept, np.full(kept.size, 1 / 200 / 0.75), 1e-12, 1e-12)
    assert F.scaled_dot_product_attention(q, k, v, dropout_p=0.0).cpu().numpy().min() > 0


SDPA_GRAD = {
    "plain": lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
    "causal_scale": lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.7),
    "bool_mask": lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=gputorch.tensor([[True, False, True], [False, False, False]], device=q.device)),
    "float_mask": lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=gputorch.tensor([[0.5, -1.0, 0.0], [1.0, 0.0, -2.0]], dtype=q.dtype, device=q.device)),
}


@pytest.mark.parametrize("case", list(SDPA_GRAD))
def test_sdpa_gradcheck(device, case):
    def r(*shape):
        return gputorch.tensor(np.random.randn(*shape), device=device, requires_grad=True)
    inputs = (r(2, 2, 3), r(2, 3, 3), r(2, 3, 2))
    assert gradcheck(SDPA_GRAD[case], inputs)
    assert gradgradcheck(SDPA_GRAD[case], inputs)


def test_sdpa_gqa_gradcheck(device):
    def r(*shape):
        return gputorch.tensor(np.random.randn(*shape), device=device, requires_grad=True)
    fn = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)  # noqa: E731
    inputs = (r(1, 4, 2, 2), r(1, 2, 3, 2), r(1, 2, 3, 2))
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_sdpa_errors():
    q, k, v = gputorch.randn(2, 3, 4), gputorch.randn(2, 5, 4), gputorch.randn(2, 5, 4)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=gputorch.ones(3, 5, dtype=gputorch.bool), is_causal=True)
    with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float or to match query dtype"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=gputorch.ones(3, 5, dtype=gputorch.int64))
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same dtype"):
        F.scaled_dot_product_attention(q, k, v.double())
    with pytest.raises(RuntimeError, match="same embedding size"):
        F.scaled_dot_product_attention(q, gputorch.randn(2, 5, 3), v)
    with pytest.raises(RuntimeError, match="same sequence length"):
        F.scaled_dot_product_attention(q, k, gputorch.randn(2, 4, 4))
    with pytest.raises(RuntimeError):  # mask that does not broadcast to (L, S)
        F.scaled_dot_product_attention(q, k, v, attn_mask=gputorch.ones(3, 4, dtype=gputorch.bool))
    with pytest.raises(RuntimeError, match="Number of heads in key and value must divide"):
        F.scaled_dot_product_attention(gputorch.randn(1, 6, 3, 4), gputorch.randn(1, 4, 5, 4),
                                       gputorch.randn(1, 4, 5, 4), enable_gqa=True)
    with pytest.raises(ValueError, match="dropout probability"):
        F.scaled_dot_product_attention(q, k, v, dropout_p=1.5)
    with pytest.raises(TypeError, match="must be Tensor"):
        F.scaled_dot_product_attention(np.ones((2, 2)), k, v)


# ================================================================ MultiheadAttention
def _mha_pair(torch, device, embed_dim=8, num_heads=2, **kwargs):
    theirs = torch.nn.MultiheadAttention(embed_dim, num_heads, **kwargs).double()
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.randn_like(p))
    ours = nn.MultiheadAttention(embed_dim, num_heads, **kwargs).double().to(device)
    copy_state(theirs, ours, gputorch, device=device)
    return ours, theirs


MHA_CASES = {
    "cross": ({}, {}, "cross"),
    "self": ({}, {}, "self"),
    "shared_kv": ({}, {}, "kv"),
    "no_weights": ({}, {"need_weights": False}, "cross"),
    "per_head_weights": ({}, {"average_attn_weights": False}, "cross"),
    "batch_first": ({"batch_first": True}, {}, "cross"),
    "batch_first_self_no_weights": ({"batch_first": True}, {"need_weights": False}, "self"),
    "kdim_vdim": ({"kdim": 6, "vdim": 7}, {}, "cross"),
    "kdim_vdim_no_weights": ({"kdim": 6, "vdim": 7}, {"need_weights": False}, "cross"),
    "bool_attn_mask": ({}, {"attn_mask": "bool2d"}, "cross"),
    "bool_attn_mask_no_weights": ({}, {"attn_mask": "bool2d", "need_weights": False}, "cross"),
    "float_attn_mask_3d": ({}, {"attn_mask": "float3d"}, "cross"),
    "float_attn_mask_3d_no_weights": ({}, {"attn_mask": "float3d", "need_weights": False}, "cross"),
    "key_padding_mask": ({}, {"key_padding_mask": "kpm"}, "cross"),
    "key_padding_mask_no_weights": ({}, {"key_padding_mask": "kpm", "need_weights": False}, "cross"),
    "both_masks": ({}, {"key_padding_mask": "kpm", "attn_mask": "bool2d"}, "cross"),
    "both_masks_no_weights": ({}, {"key_padding_mask": "kpm", "attn_mask": "bool2d", "need_weights": False},
                              "cross"),
    "bias_kv_zero_attn": ({"add_bias_kv": True, "add_zero_attn": True},
                          {"key_padding_mask": "kpm", "attn_mask": "bool2d"}, "cross"),
    "no_bias": ({"bias": False}, {}, "cross"),
    "causal_hint": ({}, {"attn_mask": "causal", "is_causal": True, "need_weights": False}, "self"),
    "causal_hint_with_weights": ({}, {"attn_mask": "causal", "is_causal": True}, "self"),
}


def _mha_masks(torch, device, spec, L, S, N, H):
    ours, theirs = {}, {}
    for key, kind in spec.items():
        if kind == "bool2d":
            value = np.random.rand(L, S) > 0.7
        elif kind == "float3d":
            value = np.random.randn(N * H, L, S)
        elif kind == "kpm":
            value = np.zeros((N, S), bool)
            value[0, S - 2:] = True
        elif kind == "causal":
            value = np.triu(np.full((L, S), -np.inf), 1)
        else:
            value = kind
        ours[key], theirs[key] = _as_both(torch, value, device)
    return ours, theirs


@pytest.mark.parametrize("case", list(MHA_CASES))
def test_mha_parity(device, case):
    torch = _torch()
    init_kwargs, call_spec, mode = MHA_CASES[case]
    ours, theirs = _mha_pair(torch, device, **init_kwargs)
    L, S, N = 4, 4 if mode == "self" else 5, 3
    batch_first = init_kwargs.get("batch_first", False)
    kdim, vdim = init_kwargs.get("kdim", 8), init_kwargs.get("vdim", 8)

    def shape(length, dim):
        return (N, length, dim) if batch_first else (length, N, dim)
    q_pair = _pair(torch, np.random.randn(*shape(L, 8)), device)
    k_pair = _pair(torch, np.random.randn(*shape(S, kdim)), device)
    v_pair = _pair(torch, np.random.randn(*shape(S, vdim)), device)
    if mode == "self":
        inputs = [q_pair] * 3
    elif mode == "kv":
        inputs = [q_pair, k_pair, k_pair]
    else:
        inputs = [q_pair, k_pair, v_pair]
    kw_ours, kw_theirs = _mha_masks(torch, device, call_spec, L, S, N, 2)
    out, weights = ours(*(p[0] for p in inputs), **kw_ours)
    ref, ref_weights = theirs(*(p[1] for p in inputs), **kw_theirs)
    assert_close(out, ref, RTOL, ATOL)
    if ref_weights is None:
        assert weights is None
        total, ref_total = (out * out).sum(), (ref * ref).sum()
    else:
        assert_close(weights, ref_weights, RTOL, ATOL)
        total, ref_total = out.sum() + (weights * weights).sum(), ref.sum() + (ref_weights * ref_weights).sum()
    total.backward()
    ref_total.backward()
    for p, tp in {id(p[0]): p for p in inputs}.values():
        assert_close(p.grad, tp.grad, RTOL, ATOL)
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == tname
        assert_close(p.grad, tp.grad, RTOL, ATOL)


def test_mha_unbatched(device):
    torch = _torch()
    ours, theirs = _mha_pair(torch, device)
    q, tq = _pair(torch, np.random.randn(3, 8), device)
    k, tk = _pair(torch, np.random.randn(5, 8), device)
    kpm = np.array([False, False, True, False, True])
    out, w = ours(q, k, k, key_padding_mask=gputorch.tensor(kpm, device=device))
    ref, tw = theirs(tq, tk, tk, key_padding_mask=torch.tensor(kpm))
    assert out.shape == (3, 8) and w.shape == (3, 5)
    assert_close(w, tw, RTOL, ATOL)
    _check_backward(torch, out, ref, [(q, tq), (k, tk)])


def test_mha_parameters_and_init_like_torch(device):
    torch = _torch()
    for kwargs in ({}, {"kdim": 3, "vdim": 5}, {"bias": False, "add_bias_kv": True}):
        ours = nn.MultiheadAttention(6, 3, device=device, **kwargs)
        theirs = torch.nn.MultiheadAttention(6, 3, **kwargs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert tuple(p.shape) == tuple(tp.shape), name
        assert repr(ours) == repr(theirs)
    m = nn.MultiheadAttention(6, 3)
    assert m.in_proj_bias.abs().sum().item() == 0 and m.out_proj.bias.abs().sum().item() == 0
    bound = math.sqrt(6.0 / (6 + 18))  # xavier_uniform_ on the (18, 6) packed weight
    w = m.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear" and isinstance(m.out_proj, nn.Linear)
    assert m.head_dim == 2 and m._qkv_same_embed_dim and m.q_proj_weight is None


def test_mha_dropout_only_in_training(device):
    gputorch.manual_seed(0)
    m = nn.MultiheadAttention(4, 2, dropout=0.5).double().to(device)
    x = gputorch.randn(5, 2, 4, dtype=gputorch.float64, device=device)
    _, w_train = m(x, x, x, average_attn_weights=False)
    zeros = (w_train == 0).sum().item()
    assert 0.3 < zeros / w_train.numel() < 0.7
    m.eval()
    _, w_eval = m(x, x, x, average_attn_weights=False)
    assert (w_eval == 0).sum().item() == 0
    assert_close(w_eval.sum(-1), np.ones((2, 2, 5)), 1e-12, 1e-12)


def test_mha_gradcheck(device):
    m = nn.MultiheadAttention(4, 2).double().to(device)
    x = gputorch.randn(3, 1, 4, dtype=gputorch.float64, device=device, requires_grad=True)
    mask = gputorch.tensor([[False, True, False], [False, False, False], [True, False, False]], device=device)
    assert gradcheck(lambda t: m(t, t, t, attn_mask=mask)[0], (x,))
    assert gradcheck(lambda t: m(t, t, t, need_weights=False)[0], (x,))
    assert gradgradcheck(lambda t: m(t, t, t, need_weights=False)[0], (x,))


def test_mha_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(5, 2)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nn.MultiheadAttention(0, 2)
    m = nn.MultiheadAttention(4, 2)
    q, kv = gputorch.randn(3, 2, 4), gputorch.randn(5, 2, 4)
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is \(3, 4\), but should be \(3, 5\)"):
        m(q, kv, kv, attn_mask=gputorch.ones(3, 4, dtype=gputorch.bool))
    with pytest.raises(RuntimeError, match=r"The shape of the 3D attn_mask is \(2, 3, 5\), but should be \(4, 3, 5\)"):
        m(q, kv, kv, attn_mask=gputorch.ones(2, 3, 5, dtype=gputorch.bool))
    with pytest.raises(AssertionError, match="expected `attn_mask` to be `None`, 2-D or 3-D but found 4-D"):
        m(q, kv, kv, attn_mask=gputorch.ones(1, 2, 3, 5, dtype=gputorch.bool))
    with pytest.raises(AssertionError, match=r"key_padding_mask of shape \(2, 5\)"):
        m(q, kv, kv, key_padding_mask=gputorch.ones(2, 4, dtype=gputorch.bool))
    with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask are supported"):
        m(q, kv, kv, key_padding_mask=gputorch.ones(2, 5, dtype=gputorch.int64))
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 4, but got 5"):
        m(gputorch.randn(3, 2, 5), kv, kv)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(q, kv, kv, is_causal=True)
    with pytest.raises(RuntimeError, match="same batch size"):
        m(q, gputorch.randn(5, 3, 4), gputorch.randn(5, 3, 4))
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D tensor but received 4-D"):
        m(gputorch.randn(3, 2, 2, 4), kv, kv)
    with pytest.warns(UserWarning, match="mismatched key_padding_mask and attn_mask"):
        m(q, kv, kv, attn_mask=gputorch.zeros(3, 5, dtype=gputorch.bool), key_padding_mask=gputorch.zeros(2, 5))


def test_multi_head_attention_forward_functional(device):
    torch = _torch()
    ours, theirs = _mha_pair(torch, device)
    q, tq = _pair(torch, np.random.randn(4, 2, 8), device)
    args = [ours.in_proj_weight, ours.in_proj_bias, None, None, False, 0.0, ours.out_proj.weight,
            ours.out_proj.bias]
    targs = [theirs.in_proj_weight, theirs.in_proj_bias, None, None, False, 0.0, theirs.out_proj.weight,
             theirs.out_proj.bias]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, w = F.multi_head_attention_forward(q, q, q, 8, 2, *args)
        ref, tw = torch.nn.functional.multi_head_attention_forward(tq, tq, tq, 8, 2, *targs)
    assert_close(w, tw, RTOL, ATOL)
    _check_backward(torch, out, ref, [(q, tq)])
