"""The ``*_copy`` functions (``t_copy``, ``transpose_copy``, ``split_copy``, ...): each is its view op
with every output copied into new contiguous memory, as PyTorch's functionalization names them.
Differentiable like the view op they copy.
"""
from ... import _dtype
from .._common import write_out
from .broadcasting import expand
from .reshaping import reshape, squeeze, unsqueeze, view
from .slicing import _split_size, diagonal, select, split, split_with_sizes, unbind
from .strided import as_strided
from .transposing import permute, t, transpose

__all__ = ["alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy", "permute_copy",
           "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy",
           "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy"]


def _copied(view_op, name):
    def copy(input, *args, out=None, **kwargs):
        return write_out(view_op(input, *args, **kwargs).clone(memory_format="contiguous_format"), out)
    copy.__name__ = copy.__qualname__ = name
    copy.__doc__ = f"``{view_op.__name__}`` with the result copied into new contiguous memory."
    return copy


def _copied_each(view_op, name):
    def copy(input, *args, **kwargs):
        return tuple(v.clone(memory_format="contiguous_format") for v in view_op(input, *args, **kwargs))
    copy.__name__ = copy.__qualname__ = name
    copy.__doc__ = f"``{view_op.__name__}`` with every piece copied into new contiguous memory."
    return copy


def _alias(input):
    return input


def _slice(input, dim=0, start=None, end=None, step=1):
    d = input._wrap_dim(dim)
    return input[(slice(None),) * d + (slice(start, end, step),)]


def _unfold(input, dimension, size, step):
    return input.unfold(dimension, size, step)


def _sizes(name, arg, value):
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{name}(): argument '{arg}' (position 2) must be tuple of ints, not {type(value).__name__}")
    return tuple(value)


def _expand(input, size, *, implicit=False):
    return expand(input, _sizes("expand_copy", "size", size))


def _permute(input, dims):
    return permute(input, _sizes("permute_copy", "dims", dims))


def _view(input, size):
    """``view`` whose result is copied anyway: any strides do (``reshape``); ``size`` may be a dtype."""
    if isinstance(size, _dtype.dtype):
        return view(input, size)
    return reshape(input, _sizes("view_copy", "size", size))


def _split(tensor, split_size, dim=0):
    return split(tensor, _split_size("split_copy", split_size), dim)


alias_copy = _copied(_alias, "alias_copy")
as_strided_copy = _copied(as_strided, "as_strided_copy")
diagonal_copy = _copied(diagonal, "diagonal_copy")
expand_copy = _copied(_expand, "expand_copy")
permute_copy = _copied(_permute, "permute_copy")
select_copy = _copied(select, "select_copy")
slice_copy = _copied(_slice, "slice_copy")
squeeze_copy = _copied(squeeze, "squeeze_copy")
t_copy = _copied(t, "t_copy")
transpose_copy = _copied(transpose, "transpose_copy")
unfold_copy = _copied(_unfold, "unfold_copy")
unsqueeze_copy = _copied(unsqueeze, "unsqueeze_copy")
view_copy = _copied(_view, "view_copy")
split_copy = _copied_each(_split, "split_copy")
split_with_sizes_copy = _copied_each(split_with_sizes, "split_with_sizes_copy")
unbind_copy = _copied_each(unbind, "unbind_copy")


def detach_copy(input, *, out=None):
    """A copy of ``input``'s data in new memory, outside the graph (``detach`` copied). PyTorch's
    marks its result as requiring grad, then fails in backward ("derivative for aten::detach_copy is
    not implemented"); this one does not require grad."""
    return write_out(input.detach().clone(memory_format="contiguous_format"), out)
