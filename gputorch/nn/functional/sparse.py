"""Embedding lookup: ``F.embedding`` and ``F.embedding_bag``.

Two ops: ``EmbeddingBackward0`` gathers rows of the weight; its gradient is
``EmbeddingDenseBackward0``, which adds the output gradient's rows into a zero table
(one scatter-add, skipping ``padding_idx`` and optionally dividing by each index's
frequency) -- the op a backend kernel replaces. Each is the other's gradient, so
the lookup can be differentiated any number of times. ``max_norm`` renormalises the
looked-up rows of the weight in place first (``EmbeddingRenorm``, outside autograd).

``embedding_bag`` is a composite: the looked-up rows are laid out as ``(bags, longest bag,
dim)`` and summed, averaged or maximised over each bag, so the weight's gradient comes from the
lookup's own scatter-add.
"""
import warnings

import numpy as np

from ... import _dtype
from ..._dispatch import apply, apply_inplace
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...autograd.node import Node
from ...ops._common import quiet_errors, xp_of
from ...ops._reducing import const
from ...ops.comparison import where
from ...ops.creation import zeros
from ...ops.index_counts import index_counts as _counts

__all__ = ["embedding", "embedding_bag"]

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
        (indices,) = ctx.saved_values
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
        (indices,) = ctx.saved_values
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


_BAG_MODES = ("sum", "mean", "max")


def _bag_bounds(offsets, n_indices, include_last_offset):
    """``(start, end)`` of every bag from ``offsets`` (a 1-D tensor of bag starts)."""
    starts = [int(v) for v in offsets.tolist()]
    if starts and starts[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {starts[0]}")
    if starts and starts[-1] > n_indices:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n_indices} but got offsets[-1] "
                           f"of {starts[-1]}")
    if include_last_offset:
        bounds = list(zip(starts[:-1], starts[1:]))
    else:
        bounds = list(zip(starts, starts[1:] + [n_indices]))
    if any(end < start for start, end in bounds):
        raise RuntimeError("offsets must be non-decreasing")
    return bounds


def _bag_layout(input, bounds, padding_idx):
    """Positions ``(bags, longest)`` into the flat ``input`` (0 where a bag is shorter) and the
    mask of the entries that count (inside the bag and not ``padding_idx``)."""
    longest = max((end - start for start, end in bounds), default=0)
    positions = np.zeros((len(bounds), longest), dtype=np.int64)
    inside = np.zeros((len(bounds), longest), dtype=bool)
    for b, (start, end) in enumerate(bounds):
        positions[b, :end - start] = np.arange(start, end)
        inside[b, :end - start] = True
    xp = xp_of(input)
    positions, inside = xp.asarray(positions), xp.asarray(inside)
    if padding_idx is not None and input._data.size:
        inside &= input._data[positions] != padding_idx
    return positions, inside


def _check_bag_args(input, weight, offsets, per_sample_weights, mode, scale_grad_by_freq, sparse):
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embedding rows, without materialising the rows per index.

    Shapes: ``input`` ``(B, N)`` (B bags of N indices; ``offsets`` None) or ``(L,)`` with
    ``offsets`` ``(B,)`` giving each bag's start (``(B + 1,)`` with ``include_last_offset``);
    ``weight`` ``(num_embeddings, dim)``; result ``(B, dim)``. ``per_sample_weights`` (input's
    shape, ``mode='sum'`` only) scales each row. Entries equal to ``padding_idx`` are left out
    of their bag (and of its count for 'mean'); an empty bag gives zeros.
    """
    if weight._dtype in _INDEX_DTYPES and input._dtype.is_floating_point:
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=2)
        weight, input = input, weight
    _check_bag_args(input, weight, offsets, per_sample_weights, mode, scale_grad_by_freq, sparse)
    if input._dtype not in _INDEX_DTYPES:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding_bag)")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                  "on GitHub.")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} through {num - 1}, "
                               f"but got {padding_idx}")
        padding_idx = padding_idx + num if padding_idx < 0 else padding_idx
    if input.dim() == 2:
        n_bags, width = input.shape
        bounds = [(b * width, (b + 1) * width) for b in range(n_bags)]
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    else:
        bounds = _bag_bounds(offsets, input.shape[0], include_last_offset)
    flat = input._data
    if flat.size and (bool(flat.min() < 0) or bool(flat.max() >= num)):
        bad = int(((flat < 0) | (flat >= num)).argmax())
        raise RuntimeError(f"Index {bad} of input takes value {int(flat[bad])} which is not in the valid range "
                           f"[0, {num})")
    rows = embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)
    dim = weight.shape[1]
    positions, inside = _bag_layout(input, bounds, padding_idx)
    n_bags, longest = positions.shape
    if longest == 0 or input.shape[0] == 0:
        return zeros((n_bags, dim), dtype=weight.dtype, device=weight.device) + weight.sum() * 0
    index = Tensor._make(positions.reshape(-1), input._device)
    bags = rows.index_select(0, index).reshape(n_bags, longest, dim)
    mask = const(inside[:, :, None], bags)
    if per_sample_weights is not None:
        bags = bags * per_sample_weights.index_select(0, index).reshape(n_bags, longest, 1)
    if mode == "max":
        best = where(mask, bags, bags.new_full((), float("-inf"))).max(1).values
        filled = const(inside.any(axis=1)[:, None], best)
        return where(filled, best, best.new_zeros(()))
    total = where(mask, bags, bags.new_zeros(())).sum(1)
    if mode == "sum":
        return total
    counts = inside.sum(axis=1).astype(total._data.dtype)
    counts = xp_of(total).maximum(counts, 1)[:, None]
    return total / const(counts, total)
