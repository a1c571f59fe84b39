"""Matrix structure: trace, diag, diag_embed, kron, cross."""
from .._dispatch import apply
from ..autograd.node import Node
from ._common import sum_to_shape, xp_of
from ._linalg_common import SCALAR_NAME, no_bool, require_tensor, write_out
from .registry import tensor_method
from ..amp.autocast_mode import autocast_function

__all__ = ["trace", "diag", "diag_embed", "kron", "cross"]


# ---------------------------------------------------------------- diagonals and traces
class DiagEmbedBackward0(Node):
    """Puts the last dimension of ``a`` on a diagonal of two new dimensions ``dim1``, ``dim2`` of the
    output (of sizes ``sizes``, by default just big enough), zeros elsewhere."""

    def forward(ctx, a, offset, dim1, dim2, sizes):
        x = a._data
        n = x.shape[-1]
        s1, s2 = sizes if sizes is not None else (n + abs(offset), n + abs(offset))
        shape = list(x.shape[:-1])
        for d, s in sorted(((dim1, s1), (dim2, s2))):
            shape.insert(d, s)
        xp = xp_of(a)
        out = xp.zeros(shape, x.dtype)
        target = xp.moveaxis(out, (dim1, dim2), (-2, -1))
        i = xp.arange(n)
        target[..., i + max(-offset, 0), i + max(offset, 0)] = x
        ctx.args = (offset, dim1, dim2)
        return out

    def backward(ctx, grad):
        return apply(DiagonalBackward0_copy, grad, *ctx.args)


class DiagonalBackward0_copy(Node):  # noqa: N801 - PyTorch's name for this node
    """A copy of the diagonal ``offset`` of dimensions ``dim1``, ``dim2`` (as the last dimension)."""

    def forward(ctx, a, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        ctx.sizes = (a._data.shape[dim1], a._data.shape[dim2])
        return xp_of(a).diagonal(a._data, offset, dim1, dim2).copy()

    def backward(ctx, grad):
        return apply(DiagEmbedBackward0, grad, *ctx.args, ctx.sizes)


class TraceBackward0(Node):
    def forward(ctx, a):
        x = a._data
        ctx.shape = x.shape
        return x.trace(dtype=x.dtype if a._dtype._category >= 2 else "int64")

    def backward(ctx, grad):
        n, m = ctx.shape
        k = min(n, m)
        return apply(DiagEmbedBackward0, grad.reshape(1).expand(k), 0, 0, 1, (n, m))


@tensor_method("trace")
def trace(input):
    """Sum of the main diagonal of a matrix (integer inputs sum to int64)."""
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input._data.ndim}")
    no_bool(input, "trace")
    return apply(TraceBackward0, input)


@tensor_method("diag")
def diag(input, diagonal=0, *, out=None):
    """1-D input: a square matrix with ``input`` on diagonal ``diagonal``; 2-D input: a copy of
    that diagonal."""
    ndim = input._data.ndim
    if ndim == 1:
        result = apply(DiagEmbedBackward0, input, diagonal, 0, 1, None)
    elif ndim == 2:
        result = apply(DiagonalBackward0_copy, input, diagonal, 0, 1)
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")
    return write_out(result, out)


@tensor_method("diag_embed")
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Tensor whose diagonals (of dims ``dim1``, ``dim2``, offset ``offset``) hold the last dimension of
    ``input``; the result has one dimension more."""
    ndim = input._data.ndim + 1
    d1, d2 = input._wrap_dim(dim1, ndim), input._wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(DiagEmbedBackward0, input, offset, d1, d2, None)


# ---------------------------------------------------------------- kron, cross
@tensor_method("kron")
def kron(input, other, *, out=None):
    """Kronecker product: block ``i`` of the result is ``input[i] * other`` (dims aligned on the right)."""
    require_tensor("kron", input, "input", 1)
    require_tensor("kron", other, "other", 2)
    sa, sb = input._data.shape, other._data.shape
    nd = max(len(sa), len(sb))
    sa = (1,) * (nd - len(sa)) + sa
    sb = (1,) * (nd - len(sb)) + sb
    a = input.reshape(tuple(x for s in sa for x in (s, 1)))
    b = other.reshape(tuple(x for s in sb for x in (1, s)))
    return write_out((a * b).reshape(tuple(x * y for x, y in zip(sa, sb))), out)


class LinalgCrossBackward0(Node):
    def forward(ctx, a, b, dim):
        need = ctx.needs_input_grad
        if need:
            ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
            ctx.dim, ctx.shapes = dim, (a._data.shape, b._data.shape)
        return xp_of(a).cross(a._data, b._data, axis=dim)

    def backward(ctx, grad):
        a, b = ctx.saved_values
        need = ctx.needs_input_grad
        ga = sum_to_shape(apply(LinalgCrossBackward0, b, grad, ctx.dim), ctx.shapes[0]) if need[0] else None
        gb = sum_to_shape(apply(LinalgCrossBackward0, grad, a, ctx.dim), ctx.shapes[1]) if need[1] else None
        return ga, gb


@autocast_function("cross")
def linalg_cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along ``dim``; the other dimensions broadcast."""
    require_tensor("linalg_cross", input, "input", 1)
    require_tensor("linalg_cross", other, "other", 2)
    ndim = input._data.ndim
    if other._data.ndim != ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input._dtype is not other._dtype:
        raise RuntimeError(f"expected scalar type {SCALAR_NAME[input._dtype]} but found "
                           f"{SCALAR_NAME[other._dtype]}")
    d = input._wrap_dim(dim, ndim)
    sa, sb = input._data.shape[d], other._data.shape[d]
    if sa != 3 or sb != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {sa} and {sb}")
    no_bool(input, "linalg_cross")
    return write_out(apply(LinalgCrossBackward0, input, other, d - ndim), out)


@tensor_method("cross")
def cross(input, other, dim=None, *, out=None):
    """Cross product along ``dim``; without ``dim``, the first dimension of size 3 (deprecated in PyTorch)."""
    if dim is None:
        import warnings
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the "
                      "dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to "
                      "agree with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        dim = next((i for i, s in enumerate(input._data.shape) if s == 3), -1)
    return linalg_cross(input, other, dim=dim, out=out)
