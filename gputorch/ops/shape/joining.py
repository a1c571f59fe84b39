"""Joining tensors: cat (concat, concatenate), stack, and hstack, vstack (row_stack), dstack,
column_stack and block_diag. Dtypes promote; the gradient of each input is cast back to its dtype.
"""
from ... import _dtype
from ..._dispatch import apply
from ..._tensor import Tensor
from ...autograd.node import Node
from .._common import write_out, xp_of
from .reshaping import atleast_1d, atleast_2d, atleast_3d

__all__ = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
           "row_stack", "block_diag"]


def _empty_grad(grad, dt):
    from ..creation import zeros
    return zeros(0, dtype=dt, device=grad._device)


class CatBackward0(Node):
    def forward(ctx, *tensors, dim, dtype):
        ctx.dim = dim
        kept = [t._data.shape != (0,) for t in tensors]
        if not any(kept):
            kept[0] = True
        ctx.meta = [(t._data.shape[dim] if k else None, t._dtype) for t, k in zip(tensors, kept)]
        arrays = [t._data if t._dtype is dtype else t._data.astype(dtype.np)
                  for t, k in zip(tensors, kept) if k]
        return xp_of(tensors[0]).concatenate(arrays, axis=dim)

    def backward(ctx, grad):
        out = []
        offset = 0
        need = ctx.needs_input_grad
        for i, (size, dt) in enumerate(ctx.meta):
            if size is None:   # a skipped legacy empty (0,) tensor: its gradient is empty too
                out.append(_empty_grad(grad, dt) if need[i] else None)
                continue
            if need[i]:
                g = grad.narrow(ctx.dim, offset, size)
                out.append(g if g._dtype is dt else g.to(dt))
            else:
                out.append(None)
            offset += size
        return tuple(out)


class StackBackward0(Node):
    def forward(ctx, *tensors, dim, dtype):
        ctx.dim = dim
        ctx.dtypes = [t._dtype for t in tensors]
        arrays = [t._data if t._dtype is dtype else t._data.astype(dtype.np) for t in tensors]
        return xp_of(tensors[0]).stack(arrays, axis=dim)

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        return tuple(g if not need[i] or g._dtype is ctx.dtypes[i] else g.to(ctx.dtypes[i])
                     for i, g in enumerate(grad.unbind(ctx.dim)))


def _tensor_list(name, tensors):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' must be tuple of Tensors, not {type(tensors).__name__}")
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, but found "
                            f"element of type {type(t).__name__} at pos {i}")
    return tensors


def _promote_all(tensors):
    dt = tensors[0]._dtype
    for t in tensors[1:]:
        if t._dtype is not dt:
            dt = _dtype._PROMOTE[dt, t._dtype]
    return dt


def cat(tensors, dim=0, *, out=None):
    """Concatenate along ``dim``. Dtypes promote; 1-D empty tensors are skipped (legacy behaviour)."""
    tensors = _tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, x in enumerate(tensors):
        if x._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    kept = [x for x in tensors if x._data.shape != (0,)]
    if not kept:
        kept = tensors[:1]
    ref = kept[0]
    d = ref._wrap_dim(dim)
    shape = ref._data.shape
    for i, x in enumerate(tensors):
        s = x._data.shape
        if s == (0,) and x is not ref:
            continue
        if len(s) != len(shape):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(shape)} and {len(s)}")
        for j in range(len(s)):
            if j != d and s[j] != shape[j]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{shape[j]} but got size {s[j]} for tensor number {i} in the list.")
    return write_out(apply(CatBackward0, *tensors, dim=d, dtype=_promote_all(tensors)), out)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    """Join equally shaped tensors along a new dim ``dim``."""
    tensors = _tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._data.shape
    for i, x in enumerate(tensors[1:], 1):
        if x._data.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                               f"and {list(x.shape)} at entry {i}")
    d = tensors[0]._wrap_dim(dim, len(shape) + 1)
    return write_out(apply(StackBackward0, *tensors, dim=d, dtype=_promote_all(tensors)), out)


def hstack(tensors, *, out=None):
    tensors = atleast_1d(_tensor_list("hstack", tensors))
    return cat(tensors, 0 if tensors[0]._data.ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    return cat(atleast_2d(_tensor_list("vstack", tensors)), 0, out=out)


row_stack = vstack


def dstack(tensors, *, out=None):
    return cat(atleast_3d(_tensor_list("dstack", tensors)), 2, out=out)


def column_stack(tensors, *, out=None):
    tensors = [x.reshape(-1, 1) if x._data.ndim <= 1 else x for x in _tensor_list("column_stack", tensors)]
    return cat(tensors, 1, out=out)


def block_diag(*tensors):
    """The block-diagonal matrix of the inputs (0-D: a 1x1 block, 1-D: a 1-row block, 2-D: as is),
    placed from top left to bottom right; zeros elsewhere. Dtypes promote."""
    from ..creation import zeros
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"block_diag(): argument 'tensors' must be tuple of Tensors, but found element of "
                            f"type {type(t).__name__} at pos {i}")
        if t._data.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t._data.ndim} dimensions")
    if not tensors:
        return zeros(1, 0)
    blocks = [t.reshape(1, -1) if t._data.ndim < 2 else t for t in tensors]
    dt = _promote_all(blocks)
    dev = blocks[0]._device
    width = sum(b._data.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        h, w = b._data.shape
        parts = [zeros(h, left, dtype=dt, device=dev), b if b._dtype is dt else b.to(dt),
                 zeros(h, width - left - w, dtype=dt, device=dev)]
        rows.append(cat(parts, 1))
        left += w
    return cat(rows, 0)
