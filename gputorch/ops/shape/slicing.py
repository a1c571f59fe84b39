"""Views of parts of a tensor: narrow, select and diagonal, and the multi-output views split,
chunk, tensor_split and unbind (one output per piece, all sharing the input's storage).
"""
import numbers

from ..._dispatch import apply, apply_view
from ..._tensor import Tensor
from ...autograd.node import Node
from .._common import xp_of
from ..registry import tensor_method
from .joining import cat, stack
from .view_nodes import DiagonalBackward0, SelectBackward0, SliceBackward0, _DiagonalOf, sub_view

__all__ = ["split", "chunk", "tensor_split", "unbind", "narrow", "select", "diagonal"]


class _MultiView(Node):
    """Views of consecutive pieces along ``dim`` (split, unbind): one output per piece."""

    def forward(ctx, a, keys, dim):
        ctx.dim = dim
        x = a._data
        return tuple([x[k] for k in keys])


class SplitBackward0(_MultiView):
    def backward(ctx, *grads):
        return cat(grads, ctx.dim)


class SplitWithSizesBackward0(SplitBackward0):
    pass


class UnbindBackward0(_MultiView):
    def backward(ctx, *grads):
        return stack(grads, ctx.dim)


def _multi_view(cls, t, keys, dim):
    outs = apply(cls, t, keys, dim)
    root = t if t._base is None else t._base
    for o in outs:
        o._vc = t._vc
        o._base = root
    return outs


@tensor_method("narrow")
def narrow(input, dim, start, length):
    """The view ``input[..., start:start + length, ...]`` along ``dim``."""
    d = input._wrap_dim(dim)
    size = input._data.shape[d]
    start, length = int(start), int(length)
    if start < -size or start > size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return sub_view(SliceBackward0, input, (slice(None),) * d + (slice(start, start + length),))


@tensor_method("select")
def select(input, dim, index):
    """The view ``input[..., index, ...]`` (dim ``dim`` removed)."""
    if input._data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = input._wrap_dim(dim)
    size = input._data.shape[d]
    index = int(index)
    if index < -size or index >= size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} "
                         f"at dimension {d}")
    return sub_view(SelectBackward0, input, (slice(None),) * d + (index % size,))


@tensor_method("diagonal")
def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the diagonal ``offset`` of the ``(dim1, dim2)`` planes, as the last dim."""
    d1, d2 = input._wrap_dim(dim1), input._wrap_dim(dim2)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply_view(DiagonalBackward0, input, _DiagonalOf(xp_of(input), int(offset), d1, d2))


def _split_keys(ndim, dim, sizes):
    keys, start = [], 0
    lead = (slice(None),) * dim
    for s in sizes:
        keys.append(lead + (slice(start, start + s), Ellipsis))
        start += s
    return keys


@tensor_method("split")
def split(tensor, split_size_or_sections, dim=0):
    """Views of consecutive pieces along ``dim``: of ``split_size`` each (the last may be smaller),
    or of the given list of sizes."""
    d = tensor._wrap_dim(dim)
    size = tensor._data.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != size or any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                               f"size at dimension {d}), but got split_sizes={sizes}")
        return _multi_view(SplitWithSizesBackward0, tensor, _split_keys(tensor.ndim, d, sizes), d)
    step = int(split_size_or_sections)
    if step < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
    if step == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
    count = max(1, -(-size // step)) if step else 1
    sizes = [step] * (count - 1) + [size - step * (count - 1)]
    return _multi_view(SplitBackward0, tensor, _split_keys(tensor.ndim, d, sizes), d)


@tensor_method("chunk")
def chunk(input, chunks, dim=0):
    """Split into at most ``chunks`` views of (nearly) equal size along ``dim``."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = input._wrap_dim(dim)
    size = input._data.shape[d]
    if size == 0:
        return _multi_view(SplitWithSizesBackward0, input, _split_keys(input.ndim, d, [0] * chunks), d)
    return split(input, -(-size // chunks), d)


@tensor_method("tensor_split")
def tensor_split(input, indices_or_sections, dim=0):
    """Views split at ``indices`` or into ``sections`` pieces whose sizes differ by at most one."""
    d = input._wrap_dim(dim)
    size = input._data.shape[d]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec._dtype._category != 1 or spec._data.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have integer dtype and "
                               "be 0-D or 1-D")
        spec = spec.item() if spec._data.ndim == 0 else spec.tolist()
    if isinstance(spec, numbers.Integral):
        n = int(spec)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        base, extra = divmod(size, n)
        bounds, start = [], 0
        for i in range(n):
            end = start + base + (1 if i < extra else 0)
            bounds.append((start, end))
            start = end
    else:
        cuts = [int(i) for i in spec]
        edges = [0] + cuts + [size]
        bounds = list(zip(edges[:-1], edges[1:]))
    lead = (slice(None),) * d
    return tuple(sub_view(SliceBackward0, input, lead + (slice(a, b),)) for a, b in bounds)


@tensor_method("unbind")
def unbind(input, dim=0):
    """Views of each slice along ``dim`` (that dim removed)."""
    d = input._wrap_dim(dim)
    lead = (slice(None),) * d
    return _multi_view(UnbindBackward0, input, [lead + (i, Ellipsis) for i in range(input._data.shape[d])], d)
