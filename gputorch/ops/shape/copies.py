"""Ops that copy into new storage: clone and contiguous, and those that rearrange elements:
repeat, tile, flip (fliplr, flipud), roll, tril, triu and diagflat; and the in-place tril_, triu_
and fill_diagonal_.
"""
import numbers

from ..._dispatch import apply, apply_inplace
from ..._tensor import Tensor
from ...autograd.node import Node
from .._common import stored_scalar, write_out, xp_of
from ..registry import tensor_method
from ._common import _int_args

__all__ = ["clone", "flip", "fliplr", "flipud", "roll", "tril", "triu", "tile", "diagflat"]


def _check_dims_unique(dims):
    seen = set()
    for d in dims:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)


class CloneBackward0(Node):
    def forward(ctx, a, order):
        return a._data.copy(order=order)

    def backward(ctx, grad):
        return grad


class RepeatBackward0(Node):
    def forward(ctx, a, repeats):
        ctx.in_shape, ctx.repeats = a._data.shape, repeats
        return xp_of(a).tile(a._data, repeats)

    def backward(ctx, grad):
        in_shape, repeats = ctx.in_shape, ctx.repeats
        padded = (1,) * (len(repeats) - len(in_shape)) + in_shape
        split = []
        for r, s in zip(repeats, padded):
            split += [r, s]
        g = grad.reshape(split).sum(tuple(range(0, len(split), 2)))
        return g.reshape(in_shape)


class FlipBackward0(Node):
    def forward(ctx, a, dims):
        ctx.dims = dims
        key = [slice(None)] * a._data.ndim
        for d in dims:
            if key:   # a 0-d tensor's dim 0 / -1 is the tensor itself: nothing to reverse
                key[d] = slice(None, None, -1)
        return a._data[tuple(key)].copy()

    def backward(ctx, grad):
        return grad.flip(ctx.dims)


class RollBackward0(Node):
    def forward(ctx, a, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        if dims is None:
            return xp_of(a).roll(a._data.reshape(-1), shifts[0]).reshape(a._data.shape)
        return xp_of(a).roll(a._data, shifts, dims)

    def backward(ctx, grad):
        return grad.roll(tuple(-s for s in ctx.shifts), ctx.dims)


class TrilBackward0(Node):
    def forward(ctx, a, diagonal, upper=False):
        ctx.diagonal, ctx.upper = diagonal, upper
        x = a._data
        xp = xp_of(a)
        n, m = x.shape[-2:]
        keep = xp.tri(n, m, diagonal - 1 if upper else diagonal, dtype=bool)
        if upper:
            keep = ~keep
        return xp.where(keep, x, xp.zeros((), x.dtype))

    def backward(ctx, grad):
        return grad.triu(ctx.diagonal) if ctx.upper else grad.tril(ctx.diagonal)


class TriuBackward0(TrilBackward0):
    pass


@tensor_method("clone")
def clone(input, *, memory_format=None):
    """A copy with its own storage (same strides order unless ``memory_format`` asks for contiguous)."""
    preserve = memory_format is None or "preserve" in str(memory_format)
    return apply(CloneBackward0, input, "K" if preserve else "C")


@tensor_method("contiguous")
def contiguous(self, memory_format=None):
    """``self`` if it is contiguous, else a contiguous copy."""
    if self._data.flags.c_contiguous:
        return self
    return apply(CloneBackward0, self, "C")


@tensor_method("repeat")
def repeat(input, *repeats):
    """Tile the tensor ``repeats[i]`` times along dim ``i`` (extra leading repeats add dims)."""
    repeats = _int_args(repeats)
    if len(repeats) < input._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions "
                           "of tensor")
    for r in repeats:
        if r < 0:
            shape = (1,) * (len(repeats) - input.ndim) + input._data.shape
            raise RuntimeError(f"Trying to create tensor with negative dimension {r}: "
                               f"{[a * b for a, b in zip(shape, repeats)]}")
    return apply(RepeatBackward0, input, repeats)


@tensor_method("tile")
def tile(input, dims):
    """``repeat`` with ``dims`` padded with leading 1s to the tensor's number of dims."""
    dims = _int_args((dims,)) if not isinstance(dims, numbers.Integral) else (int(dims),)
    return repeat(input, (1,) * (input._data.ndim - len(dims)) + dims)


@tensor_method("flip")
def flip(input, *dims):
    """A copy with the order of elements reversed along ``dims``."""
    dims = tuple(input._wrap_dim(d) for d in _int_args(dims))
    _check_dims_unique(dims)
    return apply(FlipBackward0, input, dims)


@tensor_method("__reversed__")
def _reversed(self):
    """``reversed(tensor)``: the tensor flipped along dim 0 (a 0-d tensor: itself)."""
    return self if self._data.ndim == 0 else flip(self, 0)


@tensor_method("fliplr")
def fliplr(input):
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


@tensor_method("flipud")
def flipud(input):
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


@tensor_method("roll")
def roll(input, shifts, dims=None):
    """Rotate elements by ``shifts`` along ``dims`` (over the flattened tensor when ``dims`` is None)."""
    shifts = (int(shifts),) if isinstance(shifts, numbers.Integral) or isinstance(shifts, Tensor) \
        else tuple(int(s) for s in shifts)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return apply(RollBackward0, input, shifts, None)
    dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    return apply(RollBackward0, input, shifts, tuple(input._wrap_dim(d) for d in dims))


def _tri(cls, name, input, diagonal):
    if input._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return apply(cls, input, int(diagonal), cls is TriuBackward0)


@tensor_method("tril")
def tril(input, diagonal=0, *, out=None):
    """Zero the elements above diagonal ``diagonal`` of the last two dims."""
    return write_out(_tri(TrilBackward0, "tril", input, diagonal), out)


@tensor_method("triu")
def triu(input, diagonal=0, *, out=None):
    """Zero the elements below diagonal ``diagonal`` of the last two dims."""
    return write_out(_tri(TriuBackward0, "triu", input, diagonal), out)


@tensor_method("tril_")
def tril_(self, diagonal=0):
    """``tril`` in place."""
    if self._data.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return apply_inplace(TrilBackward0, self, int(diagonal), False)


@tensor_method("triu_")
def triu_(self, diagonal=0):
    """``triu`` in place."""
    if self._data.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return apply_inplace(TriuBackward0, self, int(diagonal), True)


class FillDiagonalBackward0(Node):
    """A copy of ``a`` with its main diagonal (all indices equal) set to ``value``; with ``wrap``,
    a tall matrix's diagonal starts again every ``columns + 1`` rows. The gradient is the
    incoming one with the diagonal zeroed."""

    def forward(ctx, a, value, wrap):
        ctx.wrap = wrap
        x = a._data
        out = x.copy(order="C")
        flat = out.reshape(-1)
        step, inner = 1, 1
        for n in reversed(x.shape[1:]):
            inner *= n
            step += inner
        if wrap and x.ndim == 2:
            flat[::step] = value
        else:
            flat[:min(x.shape) * step:step] = value
        return out

    def backward(ctx, grad):
        return apply(FillDiagonalBackward0, grad, 0, ctx.wrap)


@tensor_method("fill_diagonal_")
def fill_diagonal_(self, fill_value, wrap=False):
    """Set the main diagonal of ``self`` (2-D or more, all dims equal when more) to ``fill_value``,
    in place. ``wrap``: for a tall matrix, the diagonal restarts after every ``columns + 1`` rows."""
    shape = self._data.shape
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    return apply_inplace(FillDiagonalBackward0, self, stored_scalar(fill_value, self._dtype), bool(wrap))


@tensor_method("diagflat")
def diagflat(input, offset=0):
    """The square matrix with ``input``'s elements (flattened) on diagonal ``offset``, zeros elsewhere."""
    return input.reshape(-1).diag(offset)
