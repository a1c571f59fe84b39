"""Views of parts of a tensor: narrow, select and diagonal, and the multi-output views split
(split_with_sizes), chunk, tensor_split, hsplit, vsplit, dsplit and unbind (one output per piece,
all sharing the input's storage). Also their copying relatives: narrow_copy, and select_scatter,
slice_scatter and diagonal_scatter (a copy of the input with that part replaced).
"""
import numbers

from ..._dispatch import apply, apply_view
from ..._tensor import Tensor
from ...autograd.node import Node
from .._common import require_tensor, xp_of
from ..registry import tensor_method
from .joining import cat, stack
from .view_nodes import DiagonalBackward0, SelectBackward0, SliceBackward0, _DiagonalOf, sub_view
from ..._bfloat16 import VIEW_OPS

__all__ = ["split", "chunk", "tensor_split", "unbind", "narrow", "select", "diagonal", "hsplit", "vsplit",
           "dsplit", "split_with_sizes", "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes", "narrow_copy",
           "select_scatter", "slice_scatter", "diagonal_scatter"]


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
    VIEW_OPS.add(cls)   # bfloat16 operands stay as they are (see gputorch._bfloat16)
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


@tensor_method("split_with_sizes", "unsafe_split_with_sizes")
def split_with_sizes(input, split_sizes, dim=0):
    """``split`` into pieces of the given sizes (which must sum to the size of ``dim``)."""
    return split(input, list(split_sizes), dim)


@tensor_method("unsafe_split")
def unsafe_split(input, split_size, dim=0):
    """``split`` into pieces of ``split_size`` (an int) each (PyTorch's variant without view
    tracking; here the same views)."""
    return split(input, _split_size("unsafe_split", split_size), dim)


def _split_size(name, split_size):
    if not isinstance(split_size, numbers.Integral):
        raise TypeError(f"{name}(): argument 'split_size' (position 2) must be int, not {type(split_size).__name__}")
    return split_size


@tensor_method("unsafe_chunk")
def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` (PyTorch's variant without view tracking; here the same views)."""
    return chunk(input, chunks, dim)


unsafe_split_with_sizes = split_with_sizes


def _directional_split(name, input, indices_or_sections, dim, min_ndim):
    ndim = input._data.ndim
    if ndim < min_ndim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_ndim} dimension, but got a tensor "
                           f"with {ndim} dimensions!")
    if isinstance(indices_or_sections, numbers.Integral):
        n = int(indices_or_sections)
        size = input._data.shape[dim]
        if n == 0 or size % n:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {size} is not divisible by the split_size {n}!")
    return tensor_split(input, indices_or_sections, dim)


@tensor_method("hsplit")
def hsplit(input, indices_or_sections):
    """``tensor_split`` along dim 1 (dim 0 for a 1-D tensor); a number of sections must divide it."""
    if input._data.ndim == 0:
        raise RuntimeError("torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 "
                           "dimensions!")
    return _directional_split("hsplit", input, indices_or_sections, 1 if input._data.ndim > 1 else 0, 1)


@tensor_method("vsplit")
def vsplit(input, indices_or_sections):
    """``tensor_split`` along dim 0 of a tensor of 2 or more dims; a number of sections must divide it."""
    return _directional_split("vsplit", input, indices_or_sections, 0, 2)


@tensor_method("dsplit")
def dsplit(input, indices_or_sections):
    """``tensor_split`` along dim 2 of a tensor of 3 or more dims; a number of sections must divide it."""
    return _directional_split("dsplit", input, indices_or_sections, 2, 3)


@tensor_method("narrow_copy")
def narrow_copy(input, dim, start, length):
    """``narrow`` as a new tensor (a copy)."""
    return narrow(input, dim, start, length).clone(memory_format="contiguous_format")


def scatter_into(input, part, src):
    """A copy of ``input`` whose view ``part(copy)`` holds ``src`` (differentiable in both)."""
    if not isinstance(src, Tensor):
        raise TypeError(f"argument 'src' (position 2) must be Tensor, not {type(src).__name__}")
    out = input.clone()
    where = part(out)
    if where._data.shape != src._data.shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src._data.shape)}, slice size = {list(where._data.shape)}")
    where.copy_(src)
    return out


@tensor_method("select_scatter")
def select_scatter(input, src, dim, index):
    """A copy of ``input`` with ``input.select(dim, index)`` replaced by ``src``."""
    return scatter_into(input, lambda t: select(t, dim, index), src)


@tensor_method("slice_scatter")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` with the slice ``start:end:step`` along ``dim`` replaced by ``src``."""
    require_tensor("slice_scatter", input)
    d = input._wrap_dim(dim)
    key = (slice(None),) * d + (slice(start, end, step),)
    return scatter_into(input, lambda t: sub_view(SliceBackward0, t, key), src)


@tensor_method("diagonal_scatter")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src``."""
    return scatter_into(input, lambda t: diagonal(t, offset, dim1, dim2), src)
