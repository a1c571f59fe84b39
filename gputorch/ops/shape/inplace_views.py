"""In-place forms of the view ops, which change ``self``'s shape and strides rather than its
elements: t_, transpose_ (swapaxes_, swapdims_), squeeze_, unsqueeze_, as_strided_, and resize_
(resize_as_), which may also give ``self`` new memory.

``self`` becomes the view of itself that the out-of-place op returns, history included (so a
gradient flows through it as through the view), and its version counter is bumped.
"""
from ... import _dispatch
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...backends.cpu import keep_zero_dim
from .._common import require_tensor
from ..registry import tensor_method
from ._common import _int_args
from .reshaping import squeeze, unsqueeze
from .strided import _storage, as_strided
from .transposing import t, transpose

__all__ = ["as_strided_", "resize_as_"]   # the others are Tensor methods only, as in PyTorch


def _become(self, make_view, *args):
    """Turn ``self`` into ``make_view(self, *args)``, in place."""
    if grad_mode.GRAD_ENABLED.value and self._requires_grad:
        _dispatch._check_inplace_allowed(self)
    view = make_view(self, *args)
    self._data = view._data
    if view._grad_fn is not None:
        self._grad_fn, self._output_nr = view._grad_fn, view._output_nr
    self._vc[0] += 1
    return self


@tensor_method("t_")
def t_(self):
    """``self`` transposed in place (a 2-D tensor; 0-D and 1-D stay as they are)."""
    return _become(self, t)


@tensor_method("transpose_", "swapaxes_", "swapdims_")
def transpose_(self, dim0, dim1):
    """``self`` with dims ``dim0`` and ``dim1`` swapped, in place."""
    return _become(self, transpose, dim0, dim1)


@tensor_method("squeeze_")
def squeeze_(self, dim=None):
    """``self`` without its size-1 dims (or those among ``dim``), in place."""
    return _become(self, squeeze, dim)


@tensor_method("unsqueeze_")
def unsqueeze_(self, dim):
    """``self`` with a size-1 dim inserted at ``dim``, in place."""
    return _become(self, unsqueeze, dim)


@tensor_method("as_strided_")
def as_strided_(self, size, stride, storage_offset=None):
    """``self`` as the view ``as_strided(size, stride, storage_offset)`` of its storage, in place."""
    return _become(self, as_strided, size, stride, storage_offset)


@tensor_method("resize_")
def resize_(self, *sizes, memory_format=None):
    """Give ``self`` the shape ``sizes`` with contiguous strides over its storage, from where ``self``
    starts (so its elements are read in memory order); a storage too small grows, the new
    elements uninitialised. A tensor that requires grad cannot be resized."""
    shape = _int_args(sizes)
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    for n in shape:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(shape)}")
    if shape == self._data.shape:   # PyTorch keeps the strides then
        return self
    numel = 1
    for n in shape:
        numel *= n
    flat, offset = _storage(self)
    if offset + numel <= flat.size:
        data = flat[offset:offset + numel].reshape(shape)   # the same memory: views of self stay views
    else:   # a larger storage, the old elements first
        from ..creation import empty
        grown = empty(offset + numel, dtype=self._dtype, device=self._device)._data
        grown[:flat.size] = flat
        data = grown[offset:].reshape(shape)
        self._base = None   # new memory: no longer a view
    self._data = keep_zero_dim(data)
    self._vc[0] += 1
    return self


@tensor_method("resize_as_")
def resize_as_(self, the_template, memory_format=None):
    """``resize_`` to ``the_template``'s shape."""
    require_tensor("resize_as_", self)
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
                        f"{type(the_template).__name__}")
    return resize_(self, the_template._data.shape)
