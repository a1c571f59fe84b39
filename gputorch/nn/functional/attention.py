"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``.

Both are compositions of differentiable ops (matmul, softmax, masking, dropout), so
they have gradients of every order. Masks follow PyTorch's two conventions:

- ``scaled_dot_product_attention``: a bool ``attn_mask`` is True where a query may attend
  (take part); a float mask is added to the scores.
- ``multi_head_attention_forward`` / ``nn.MultiheadAttention``: a bool ``attn_mask`` or
  ``key_padding_mask`` is True where attention is NOT allowed; float masks are added.

A query row with no key it may attend to gets a zero output in
``scaled_dot_product_attention`` (PyTorch's "safe softmax"), and zero gradients. While a trace
records (``jit.trace``, ``onnx.export``) that masking always runs, so the recorded graph does
not depend on whether the example mask had such rows.
"""
import math
import warnings

from ... import _dtype, _tracing
from ...amp.autocast_mode import autocast_function
from ..._tensor import Tensor
from ...ops.creation import ones, zeros, zeros_like
from ...ops.linalg import baddbmm
from ...ops.shape import cat
from .activation import softmax
from .dropout import dropout
from .linear import linear

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

_NEG_INF = float("-inf")


def _dtype_word(dt):
    return dt.name


def _check_sdpa(query, key, value, attn_mask, dropout_p, is_causal):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention(): argument '{name}' must be Tensor, "
                            f"not {type(t).__name__}")
    if not (query._dtype is key._dtype is value._dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_dtype_word(query._dtype)} key.dtype: {_dtype_word(key._dtype)} and value.dtype: "
            f"{_dtype_word(value._dtype)} instead.")
    if not query._dtype.is_floating_point:
        raise RuntimeError(f"scaled_dot_product_attention(): expected floating point query, key and value, "
                           f"but got {query._dtype}")
    if query._data.ndim < 2 or key._data.ndim < 2 or value._data.ndim < 2:
        raise RuntimeError(
            "scaled_dot_product_attention(): expected query, key and value to have at least 2 dims "
            f"(..., L or S, E), but got {query._data.ndim}-D, {key._data.ndim}-D and {value._data.ndim}-D")
    if query._data.shape[-1] != key._data.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention(): query and key must have the same embedding size "
                           f"(last dim), but got query {list(query.shape)} and key {list(key.shape)}")
    if key._data.shape[-2] != value._data.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention(): key and value must have the same sequence length "
                           f"(dim -2), but got key {list(key.shape)} and value {list(value.shape)}")
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if attn_mask is not None:
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        if attn_mask._dtype is not _dtype.bool and attn_mask._dtype is not query._dtype:
            raise RuntimeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask.dtype: {_dtype_word(attn_mask._dtype)} and query.dtype: "
                f"{_dtype_word(query._dtype)} instead.")


def _repeat_heads(t, heads, name):
    """Grouped-query attention: repeat each of ``t``'s heads (dim -3) to reach ``heads`` heads."""
    have = t._data.shape[-3]
    if have == heads:
        return t
    if heads % have:
        raise RuntimeError(f"Number of heads in key and value must divide the number of heads in query "
                           f"(query has {heads} heads, {name} has {have})")
    shape = t._data.shape
    expanded = t.unsqueeze(-3).expand(*shape[:-3], have, heads // have, shape[-2], shape[-1])
    return expanded.reshape(*shape[:-3], heads, shape[-2], shape[-1])


@autocast_function("scaled_dot_product_attention")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None, enable_gqa=False):
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dims.

    Shapes: query ``(..., L, E)``, key ``(..., S, E)``, value ``(..., S, Ev)`` -> ``(..., L, Ev)``.

    Args:
        attn_mask: bool (True = may attend) or float (added to the scores), broadcastable
            to ``(..., L, S)``.
        dropout_p: dropout probability on the attention weights (always applied when > 0).
        is_causal: attend only to keys at or before the query position (upper-left aligned
            ``L x S`` lower triangle); cannot be combined with ``attn_mask``.
        scale: score scale; default ``1 / sqrt(E)``.
        enable_gqa: allow key/value with fewer heads (dim -3) than query, each repeated for a
            group of query heads.
    """
    _check_sdpa(query, key, value, attn_mask, dropout_p, is_causal)
    L, S = query._data.shape[-2], key._data.shape[-2]
    scale_factor = 1.0 / math.sqrt(query._data.shape[-1]) if scale is None else scale
    if enable_gqa and query._data.ndim >= 3:
        heads = query._data.shape[-3]
        key = _repeat_heads(key, heads, "key")
        value = _repeat_heads(value, heads, "value")
    scores = (query * scale_factor) @ key.transpose(-2, -1)
    dead = None
    if is_causal:
        scores = scores.masked_fill(ones(L, S, dtype=_dtype.bool, device=query.device).triu(1), _NEG_INF)
    elif attn_mask is not None:
        if attn_mask._dtype is _dtype.bool:
            dead = ~attn_mask.any(-1, keepdim=True)
            if _tracing.STATE.graph is not None or bool(dead.any()):
                scores = scores.masked_fill(~(attn_mask | dead), _NEG_INF)
            else:
                dead = None
                scores = scores.masked_fill(~attn_mask, _NEG_INF)
        else:
            dead = (attn_mask == _NEG_INF).all(-1, keepdim=True)
            if _tracing.STATE.graph is not None or bool(dead.any()):
                scores = scores + attn_mask.masked_fill(dead, 0.0)
            else:
                dead = None
                scores = scores + attn_mask
    weights = softmax(scores, dim=-1)
    if dead is not None:
        weights = weights.masked_fill(dead, 0.0)
    if dropout_p > 0.0:
        weights = dropout(weights, p=dropout_p, training=True)
    return weights @ value


# ---------------------------------------------------------------------------- multi-head attention
def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = not allowed) as a float mask of ``target_type`` (-inf where True)."""
    if mask is None:
        return None
    if mask._dtype is not _dtype.bool and not mask._dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask._dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for "
                      "both instead.", stacklevel=2)
    if mask._dtype is _dtype.bool:
        return zeros_like(mask, dtype=target_type).masked_fill_(mask, _NEG_INF)
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the input is batched (3-D query); AssertionError for inconsistent dims."""
    qd = query.dim()
    if qd == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D "
                                 f"but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                 f"but found {attn_mask.dim()}-D tensor instead")
        return True
    if qd == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                                 f"but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or "
                                     f"3-D but found {attn_mask.dim()}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{tuple(attn_mask.shape)}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {qd}-D query tensor")


def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v projected by the packed ``(3E, E)`` weight (one matmul for self-attention)."""
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = linear(q, w, b).unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        kv = linear(k, w_kv, b_kv).unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """q, k, v projected by separate weights ``(E, E)``, ``(E, kdim)``, ``(E, vdim)``."""
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for what, w, shape in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)), ("value", w_v, (Eq, Ev))):
        if tuple(w.shape) != shape:
            raise AssertionError(f"expecting {what} weights shape of {shape}, but got {tuple(w.shape)}")
    for what, bias in (("query", b_q), ("key", b_k), ("value", b_v)):
        if bias is not None and tuple(bias.shape) != (Eq,):
            raise AssertionError(f"expecting {what} bias shape of {(Eq,)}, but got {tuple(bias.shape)}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _pad_last(mask):
    """``mask`` with one more column of zeros (the key added by bias_k / add_zero_attn)."""
    return cat([mask, zeros(*mask.shape[:-1], 1, dtype=mask.dtype, device=mask.device)], -1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """The computation of ``nn.MultiheadAttention`` on sequence-first inputs ``(L, N, E)`` (or ``(L, E)``).

    Returns ``(attn_output, attn_weights)``; weights are None unless ``need_weights``
    (then ``(N, L, S)`` averaged over heads, or ``(N, num_heads, L, S)``).
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if key.shape[1] != bsz or value.shape[1] != bsz:
        raise RuntimeError(f"MultiheadAttention: query, key and value must have the same batch size, but got "
                           f"query {list(query.shape)}, key {list(key.shape)} and value {list(value.shape)}")
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention applies the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
                                 f"{tuple(value.shape[:2])}")
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, k_proj_weight or "
                                 "v_proj_weight is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key or value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must be given together")

    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, bsz, num_heads, head_dim, "static_k")
    v = _heads(v, static_v, bsz, num_heads, head_dim, "static_v")

    if add_zero_attn:
        zero_shape = (bsz * num_heads, 1, head_dim)
        k = cat([k, zeros(zero_shape, dtype=k.dtype, device=k.device)], dim=1)
        v = cat([v, zeros(zero_shape, dtype=v.dtype, device=v.device)], dim=1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)

    src_len = k.size(1)
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"Expected key_padding_mask of shape {(bsz, src_len)} (batch, source length), "
                                 f"but got {tuple(key_padding_mask.shape)}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(
            bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        if is_causal and attn_mask is None:
            raise AssertionError("is_causal without attn_mask is not supported with need_weights=True")
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        if attn_mask is not None:
            weights = baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = q_scaled.bmm(k.transpose(-2, -1))
        weights = softmax(weights, dim=-1)
        if dropout_p > 0.0:
                weights = dropout(weights, p=dropout_p)
        out = weights.bmm(v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    return out, None


def _heads(t, static, bsz, num_heads, head_dim, name):
    """``(S, N, E)`` -> ``(N * num_heads, S, head_dim)``, or the given static keys/values."""
    if static is None:
        return t.view(t.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if static.size(0) != bsz * num_heads:
        raise AssertionError(f"expecting {name}.size(0) of {bsz * num_heads}, but got {static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}")
    return static
