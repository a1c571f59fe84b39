"""Embedding lookup: ``F.embedding``.

Two ops: ``EmbeddingBackward0`` gathers rows of the weight; its gradient is
``EmbeddingDenseBackward0``, which adds the output gradient's rows into a zero table
(one scatter-add, skipping ``padding_idx`` and optionally dividing by each index's
frequency) -- the op a backend kernel replaces. Each is the other's gradient, so
the lookup can be differentiated any number of times. ``max_norm`` renormalises the
looked-up rows of the weight in place first (``EmbeddingRenorm``, outside autograd).
"""
import warnings

from ... import _dtype
from ..._dispatch import apply, apply_inplace
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...autograd.node import Node
from ...ops._common import quiet_errors, xp_of
from ...ops.index_counts import index_counts as _counts

__all__ = ["embedding"]

_INDEX_DTYPES = (_dtype.int64, _dtype.int32)


class EmbeddingBackward0(Node):
    """``weight[indices]``: output shape ``indices.shape + (embedding_dim,)``."""

    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq):
        w, idx = weight._data, indices._data
        if idx.size:
            if bool(idx.min() < 0) or bool(idx.max() >= w.shape[0]):
                raise IndexError("index out of range in self")
        ctx.save_for_backward(indices)
        ctx.num_weights = w.shape[0]
        ctx.padding_idx, ctx.scale = padding_idx, scale_grad_by_freq
        return xp_of(weight).take(w, idx, axis=0)

    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return apply(EmbeddingDenseBackward0, grad, indices, ctx.num_weights, ctx.padding_idx, ctx.scale), None


class EmbeddingDenseBackward0(Node):
    """The weight gradient: rows of ``grad`` added at their indices into a ``(num_weights, dim)``
    zero table; rows for ``padding_idx`` are skipped, and with ``scale_grad_by_freq`` each row
    is divided by its index's count in the batch."""

    def forward(ctx, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
        xp = xp_of(grad)
        g = grad._data
        dim = g.shape[-1]
        idx = indices._data.reshape(-1)
        rows = g.reshape(-1, dim)
        ctx.save_for_backward(indices)
        ctx.padding_idx, ctx.scale = padding_idx, scale_grad_by_freq
        if scale_grad_by_freq and idx.size:
            with quiet_errors():
                rows = rows / _counts(xp, idx, num_weights)[:, None].astype(rows.dtype)
        out = xp.zeros((num_weights, dim), dtype=g.dtype)
        if idx.size:
            xp.add.at(out, idx, rows)
        if padding_idx >= 0:
            out[padding_idx] = 0
        return out

    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        # a plain gather (its own gradient is the plain scatter-add); the mask and the scaling are
        # separate Tensor ops, so that each is differentiated once
        out = apply(EmbeddingBackward0, grad, indices, -1, False)
        if ctx.padding_idx >= 0:
            keep = (indices != ctx.padding_idx).unsqueeze(-1)
            out = out * keep
        if ctx.scale:
            idx = indices._data.reshape(-1)
            counts = _counts(xp_of(indices), idx, grad._data.shape[0]).reshape(indices._data.shape + (1,))
            out = out / Tensor._make(counts.astype(grad._data.dtype), grad._device)
        return out, None


class EmbeddingRenorm(Node):
    """In place: each row of ``weight`` that ``indices`` uses, with a ``norm_type`` norm above
    ``max_norm``, is scaled by ``max_norm / (norm + 1e-7)``. Not differentiable."""

    def forward(ctx, weight, indices, max_norm, norm_type):
        xp = xp_of(weight)
        w = weight._data
        idx = indices._data.reshape(-1)
        if idx.size and (bool(idx.min() < 0) or bool(idx.max() >= w.shape[0])):
            raise IndexError("index out of range in self")
        rows = xp.unique(idx)
        sub = w[rows]
        with quiet_errors():
            if norm_type == 2:
                norms = xp.sqrt((sub * sub).sum(axis=1))
            elif norm_type == float("inf"):
                norms = xp.abs(sub).max(axis=1) if sub.shape[1] else xp.zeros(len(rows), w.dtype)
            elif norm_type == 1:
                norms = xp.abs(sub).sum(axis=1)
            else:
                norms = (xp.abs(sub) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
            scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(w.dtype)
        out = w.copy()
        out[rows] = sub * scale[:, None]
        return out

    def backward(ctx, grad):
        raise RuntimeError("the derivative for 'embedding_renorm_' is not implemented")


def _check_indices(indices):
    if not isinstance(indices, Tensor):
        raise TypeError(f"embedding(): argument 'indices' (position 2) must be Tensor, not {type(indices).__name__}")
    if indices._dtype not in _INDEX_DTYPES:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {indices.type()} instead (while checking arguments for embedding)")


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of ``weight`` picked by the integer tensor ``input``.

    Shapes: ``input (*)`` (int64 or int32), ``weight (num_embeddings, embedding_dim)``, result
    ``(*, embedding_dim)``. ``padding_idx``: that row gets no gradient. ``max_norm``: rows used
    here with a larger ``norm_type`` norm are renormalised in place first. ``scale_grad_by_freq``:
    gradients are divided by each index's frequency in ``input``. ``sparse=True`` is accepted, but
    the gradient is dense.
    """
    _check_indices(input)
    if not isinstance(weight, Tensor):
        raise TypeError(f"embedding(): argument 'weight' (position 1) must be Tensor, not {type(weight).__name__}")
    if weight._data.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    num = weight._data.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= num:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -num:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = num + padding_idx
    else:
        padding_idx = -1
    if sparse:
        warnings.warn("gputorch has no sparse gradients: embedding(sparse=True) produces a dense gradient",
                      stacklevel=2)
    if max_norm is not None:
        with no_grad():
            apply_inplace(EmbeddingRenorm, weight.detach(), input, max_norm, norm_type)
    return apply(EmbeddingBackward0, weight, input, padding_idx, scale_grad_by_freq)
