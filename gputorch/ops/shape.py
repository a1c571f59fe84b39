"""Shape and layout ops.

Views (the result shares the input's storage and version counter, made through
``apply_view``): view, reshape (when the strides allow), flatten, unflatten, squeeze,
unsqueeze, permute, transpose, t/T/mT, expand, narrow, select, diagonal, split, chunk,
unbind, movedim and the basic-index views that ``__getitem__`` uses.

Copies: clone, contiguous, cat/stack (and h/v/dstack), repeat/tile, flip, roll, tril/triu.

The backward of a view that picks a part of its input (slice, select, diagonal) writes
the gradient into zeros of the input's shape (:class:`ViewScatterBackward0`), whose own
backward is the same view again, so double backward works.
"""
import numbers
import warnings

from .. import _dtype
from .._dispatch import apply, apply_view
from .._tensor import Tensor
from ..autograd.node import Node
from ._common import sum_to_shape, write_out, xp_of
from .registry import tensor_method

__all__ = ["reshape", "flatten", "unflatten", "permute", "transpose", "swapaxes", "swapdims", "t",
           "adjoint", "squeeze", "unsqueeze", "clone", "cat", "concat", "concatenate", "stack",
           "hstack", "vstack", "dstack", "column_stack", "row_stack", "split", "chunk", "tensor_split",
           "unbind", "narrow", "select", "flip", "fliplr", "flipud", "roll", "tril", "triu", "movedim",
           "moveaxis", "diagonal", "broadcast_to", "broadcast_tensors", "broadcast_shapes",
           "atleast_1d", "atleast_2d", "atleast_3d", "tile"]


# ----------------------------------------------------------------------------- helpers
def infer_shape(shape, numel, op="view"):
    """Resolve one ``-1`` entry and check that ``shape`` holds ``numel`` elements."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    known = 1
    infer = None
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s}")
        else:
            known *= s
    if infer is not None:
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                               "unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[:infer] + (numel // known,) + shape[infer + 1:]
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _int_args(args):
    """``f(1, 2)`` and ``f((1, 2))`` alike: the ints as a tuple."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    return tuple(int(a) for a in args)


def _viewable(shape, strides, new_shape):
    """Whether an array with ``shape`` and ``strides`` can be seen as ``new_shape`` without a copy.

    The input's dims are merged into runs that are laid out one after the other in memory;
    ``new_shape`` (size-1 dims aside) must split each run exactly."""
    runs = []
    last_stride = None
    for size, stride in zip(shape, strides):
        if size == 1:
            continue
        if size == 0:
            return True
        if runs and last_stride == size * stride:
            runs[-1] *= size
        else:
            runs.append(size)
        last_stride = stride
    i, acc = 0, 1
    for size in new_shape:
        if size == 1:
            continue
        acc *= size
        if acc == runs[i]:
            i, acc = i + 1, 1
        elif acc > runs[i]:
            return False
    return True


def _check_dims_unique(dims):
    seen = set()
    for d in dims:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)


class Key:
    """A basic NumPy index used as a view function: ``Key(k)(array)`` is ``array[k]``.

    ``reshape_only`` marks indexes made of ``None`` and full slices: their view only adds
    size-1 dims, so the gradient goes back with a reshape."""

    __slots__ = ("key", "reshape_only")

    def __init__(self, key, reshape_only=False):
        self.key = key
        self.reshape_only = reshape_only

    def __call__(self, array):
        return array[self.key]


class _DiagonalOf:
    """The view function of ``diagonal(offset, dim1, dim2)`` (a writable strided view)."""

    __slots__ = ("xp", "offset", "dim1", "dim2", "reshape_only")

    def __init__(self, xp, offset, dim1, dim2):
        self.xp, self.offset, self.dim1, self.dim2 = xp, offset, dim1, dim2
        self.reshape_only = False

    def __call__(self, array):
        out = self.xp.diagonal(array, self.offset, self.dim1, self.dim2)
        flags = out.flags
        if getattr(flags, "writeable", True) is False:   # NumPy hands out read-only diagonals
            try:
                flags.writeable = True
            except ValueError:   # the input itself is read-only (an expanded tensor)
                pass
        return out


# ----------------------------------------------------------------------------- view nodes
class _ReshapeView(Node):
    """A view that only changes the shape; the gradient is reshaped back."""

    def forward(ctx, a, shape):
        ctx.in_shape = a._data.shape
        return a._data.reshape(shape)

    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape)


class ViewBackward0(_ReshapeView):
    pass


class UnsafeViewBackward0(_ReshapeView):
    """``reshape`` that had to copy (the input's strides do not allow a view)."""


class SqueezeBackward0(_ReshapeView):
    pass


class SqueezeBackward1(_ReshapeView):
    pass


class SqueezeBackward2(_ReshapeView):
    pass


class _SubView(Node):
    """A view given by a view function (``Key`` or ``_DiagonalOf``) of the input array."""

    def forward(ctx, a, where):
        ctx.in_shape = a._data.shape
        ctx.where = where
        return where(a._data)

    def backward(ctx, grad):
        if ctx.where.reshape_only:
            return grad.reshape(ctx.in_shape)
        return apply(ViewScatterBackward0, grad, ctx.in_shape, ctx.where, type(ctx))


class SliceBackward0(_SubView):
    pass


class SelectBackward0(_SubView):
    pass


class UnsqueezeBackward0(_SubView):
    pass


class AliasBackward0(_SubView):
    pass


class DiagonalBackward0(_SubView):
    pass


class ViewScatterBackward0(Node):
    """The backward of a sub-view as an op: ``grad`` written into zeros of the input's shape."""

    def forward(ctx, grad, shape, where, view_cls):
        ctx.where, ctx.view_cls = where, view_cls
        out = xp_of(grad).zeros(shape, grad._data.dtype)
        where(out)[...] = grad._data
        return out

    def backward(ctx, grad):
        return apply_view(ctx.view_cls, grad, ctx.where)


def sub_view(cls, t, key, reshape_only=False):
    """``t[key]`` for a basic NumPy index ``key`` (a tuple), as a view recorded as ``cls``."""
    if Ellipsis not in key:
        key = key + (Ellipsis,)   # keeps an all-integer index a 0-d view, not a scalar copy
    return apply_view(cls, t, Key(key, reshape_only))


class PermuteBackward0(Node):
    def forward(ctx, a, dims):
        ctx.dims = dims
        return a._data.transpose(dims)

    def backward(ctx, grad):
        inverse = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inverse[d] = i
        return grad.permute(inverse)


class TransposeBackward0(Node):
    def forward(ctx, a, dim0, dim1):
        ctx.dim0, ctx.dim1 = dim0, dim1
        return a._data.swapaxes(dim0, dim1)

    def backward(ctx, grad):
        return grad.transpose(ctx.dim0, ctx.dim1)


class TBackward0(Node):
    def forward(ctx, a):
        return a._data.T if a._data.ndim == 2 else a._data.view()

    def backward(ctx, grad):
        return grad.t()


class ExpandBackward0(Node):
    def forward(ctx, a, shape):
        ctx.in_shape = a._data.shape
        return xp_of(a).broadcast_to(a._data, shape)

    def backward(ctx, grad):
        return sum_to_shape(grad, ctx.in_shape)


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


# ----------------------------------------------------------------------------- copy nodes
class CloneBackward0(Node):
    def forward(ctx, a, order):
        return a._data.copy(order=order)

    def backward(ctx, grad):
        return grad


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
            if size is None:   # a skipped legacy empty tensor
                out.append(None)
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


# ----------------------------------------------------------------------------- reshaping views
@tensor_method("view")
def view(self, *shape):
    """A view with a new shape (one dim may be -1); the strides must allow it.
    ``view(dtype)`` reinterprets the elements (no gradient)."""
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        return _view_dtype(self, shape[0])
    x = self._data
    shape = infer_shape(shape, x.size)
    if not _viewable(x.shape, x.strides, shape):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension "
            "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return apply_view(ViewBackward0, self, shape)


def _view_dtype(self, dt):
    x = self._data
    if dt.itemsize != self._dtype.itemsize and x.ndim and x.strides[-1] != self._dtype.itemsize:
        raise RuntimeError(f"self.stride(-1) must be 1 to view {self._dtype} as {dt} (different element sizes)")
    try:
        out = x.view(dt.np)
    except ValueError as e:
        raise RuntimeError(f"cannot view {self._dtype} tensor of shape {list(self.shape)} as {dt}: {e}") from None
    t = Tensor._make(out, self._device, dt)
    t._vc = self._vc
    t._base = self if self._base is None else self._base
    return t


@tensor_method("reshape")
def reshape(input, *shape):
    """Like ``view`` when the strides allow it, else a copy."""
    x = input._data
    shape = infer_shape(shape, x.size)
    if _viewable(x.shape, x.strides, shape):
        return apply_view(ViewBackward0, input, shape)
    return apply(UnsafeViewBackward0, input, shape)


@tensor_method("view_as")
def view_as(self, other):
    return view(self, other._data.shape)


@tensor_method("reshape_as")
def reshape_as(self, other):
    return reshape(self, other._data.shape)


@tensor_method("flatten")
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one (a view when the strides allow it)."""
    shape = input._data.shape
    if not shape:
        return reshape(input, (1,))
    start, end = input._wrap_dim(start_dim), input._wrap_dim(end_dim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    return reshape(input, shape[:start] + (-1,) + shape[end + 1:])


@tensor_method("unflatten")
def unflatten(input, dim, sizes):
    """Split dim ``dim`` into ``sizes`` (one entry may be -1)."""
    d = input._wrap_dim(dim)
    shape = input._data.shape
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        sizes = infer_shape(sizes, shape[d])
    except RuntimeError:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
                           f"{dim} ({shape[d]}) in the input tensor") from None
    return view(input, shape[:d] + sizes + shape[d + 1:])


@tensor_method("squeeze")
def squeeze(input, dim=None):
    """Remove size-1 dims (all of them, or those among ``dim``: an int or a tuple)."""
    shape = input._data.shape
    if dim is None:
        return apply_view(SqueezeBackward0, input, tuple(s for s in shape if s != 1))
    if isinstance(dim, (tuple, list)):
        dims = {input._wrap_dim(d) for d in dim}
        cls = SqueezeBackward2
    else:
        dims = {input._wrap_dim(dim)}
        cls = SqueezeBackward1
    return apply_view(cls, input, tuple(s for i, s in enumerate(shape) if s != 1 or i not in dims))


@tensor_method("unsqueeze")
def unsqueeze(input, dim):
    """Insert a size-1 dim at ``dim``."""
    d = input._wrap_dim(dim, input._data.ndim + 1)
    return sub_view(UnsqueezeBackward0, input, (slice(None),) * d + (None,), True)


@tensor_method("expand")
def expand(self, *sizes):
    """Broadcast to ``sizes`` without copying (-1 keeps a dimension)."""
    sizes = _int_args(sizes)
    ndim = self._data.ndim
    if len(sizes) < ndim:
        raise RuntimeError(
            f"expand(torch.{self._dtype.name}{{{list(self.shape)}}}, size={list(sizes)}): the number of sizes "
            f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in the tensor ({ndim})")
    lead = len(sizes) - ndim
    shape = []
    for i, s in enumerate(sizes):
        cur = self._data.shape[i - lead] if i >= lead else None
        if s == -1:
            if cur is None:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            s = cur
        elif s < 0:
            raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed")
        elif cur is not None and cur != 1 and cur != s:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: {list(self.shape)}")
        shape.append(s)
    return apply_view(ExpandBackward0, self, tuple(shape))


@tensor_method("expand_as")
def expand_as(self, other):
    return expand(self, other._data.shape)


def broadcast_to(input, size):
    return expand(input, size)


tensor_method("broadcast_to")(broadcast_to)


def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` broadcast to."""
    shapes = [(s,) if isinstance(s, numbers.Integral) else tuple(s) for s in shapes]
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, size in enumerate(s):
            j = ndim - len(s) + i
            if size < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {list(s)}")
            if out[j] == 1:
                out[j] = size
            elif size != 1 and size != out[j]:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape.  "
                                   f"Mismatch is between {list(shapes[0])} and {list(s)}.")
    from .._size import Size
    return Size(out)


def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (those already of it are returned as is)."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    shape = ()
    for t in tensors:
        shape = _broadcast_pair(shape, t._data.shape)
    return tuple(t if t._data.shape == shape else expand(t, shape) for t in tensors)


def _broadcast_pair(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                               f"non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def _atleast(ndim, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        return tuple(_atleast(ndim, (t,)) for t in tensors[0])
    if len(tensors) != 1:
        return tuple(_atleast(ndim, (t,)) for t in tensors)
    t = tensors[0]
    shape = t._data.shape
    if len(shape) >= ndim:
        return t
    if ndim == 3 and len(shape) == 2:
        return unsqueeze(t, 2)
    if ndim == 3 and len(shape) == 1:
        return reshape(t, (1, shape[0], 1))
    return reshape(t, (1,) * (ndim - len(shape)) + shape)


def atleast_1d(*tensors):
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    return _atleast(3, tensors)


# ----------------------------------------------------------------------------- dim reordering
@tensor_method("permute")
def permute(input, *dims):
    """A view with the dims reordered: output dim ``i`` is input dim ``dims[i]``."""
    dims = _int_args(dims)
    ndim = input._data.ndim
    if len(dims) != ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the length of the "
            f"desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to len(dims) = {len(dims)}")
    dims = tuple(input._wrap_dim(d) for d in dims)
    if len(set(dims)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply_view(PermuteBackward0, input, dims)


@tensor_method("transpose", "swapaxes", "swapdims")
def transpose(input, dim0, dim1):
    """A view with dims ``dim0`` and ``dim1`` swapped."""
    return apply_view(TransposeBackward0, input, input._wrap_dim(dim0), input._wrap_dim(dim1))


swapaxes = swapdims = transpose


@tensor_method("t")
def t(input):
    """Transpose a 2-D tensor (0-D and 1-D tensors are returned as views of themselves)."""
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input._data.ndim}D")
    return apply_view(TBackward0, input)


def _T(self):
    ndim = self._data.ndim
    if ndim != 2 and ndim > 0:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                      "deprecated and it will throw an error in a future release. Consider `x.mT` to "
                      "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to "
                      "reverse the dimensions of a tensor.", UserWarning, stacklevel=2)
    return apply_view(PermuteBackward0, self, tuple(range(ndim - 1, -1, -1)))


def _mT(self):
    ndim = self._data.ndim
    if ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {ndim}-D tensor.")
    return apply_view(TransposeBackward0, self, ndim - 2, ndim - 1)


def _mH(self):
    ndim = self._data.ndim
    if ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {ndim}-D tensor.")
    return apply_view(TransposeBackward0, self, ndim - 2, ndim - 1)


def _H(self):
    ndim = self._data.ndim
    if ndim > 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {ndim}-D tensor.")
    return apply_view(TransposeBackward0, self, 0, 1) if ndim == 2 else apply_view(TBackward0, self)


tensor_method("T")(property(_T, doc="The tensor with its dims reversed."))
tensor_method("mT")(property(_mT, doc="The last two dims swapped (a batch of transposed matrices)."))
tensor_method("mH")(property(_mH, doc="The conjugate transpose of the last two dims (real: ``mT``)."))
tensor_method("H")(property(_H, doc="The conjugate transpose of a matrix (real: ``T``)."))


@tensor_method("adjoint")
def adjoint(input):
    return _mH(input)


@tensor_method("movedim", "moveaxis")
def movedim(input, source, destination):
    """Move dims ``source`` to positions ``destination`` (ints or sequences); the rest keep their order."""
    src = (source,) if isinstance(source, numbers.Integral) else tuple(source)
    dst = (destination,) if isinstance(destination, numbers.Integral) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
                           f"contain the same number of dims as destination ({list(dst)} dims)")
    src = tuple(input._wrap_dim(d) for d in src)
    dst = tuple(input._wrap_dim(d) for d in dst)
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    ndim = input._data.ndim
    order = [None] * ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in src)
    order = tuple(o if o is not None else next(rest) for o in order)
    return apply_view(PermuteBackward0, input, order)


moveaxis = movedim


# ----------------------------------------------------------------------------- picking parts
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


# ----------------------------------------------------------------------------- copies
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
