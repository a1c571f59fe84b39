"""Whole-tensor in-place writes: copy_ (broadcast, converted to this dtype and device), fill_
(a number or a 0-d tensor) and zero_; and ``fill``, the out-of-place form of ``fill_``.
"""
from ..._dispatch import apply_inplace
from ..._tensor import Tensor
from ...autograd.node import Node
from .._common import stored_scalar, sum_to_shape, xp_of
from ..registry import tensor_method
from ..._broadcast import broadcast_pair
from ._common import _grad_as, _write


def _check_broadcastable_into(shape, src_shape):
    if len(src_shape) > len(shape):
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{list(broadcast_pair(shape, src_shape))}")
    lead = len(shape) - len(src_shape)
    for i, s in enumerate(src_shape):
        if s != 1 and s != shape[lead + i]:
            raise RuntimeError(f"The size of tensor a ({shape[lead + i]}) must match the size of tensor b ({s}) "
                               f"at non-singleton dimension {lead + i}")


class CopyBackwards(Node):
    def forward(ctx, a, src):
        ctx.src_meta = (src._data.shape, src._dtype)
        x = a._data
        _write(xp_of(a), x, Ellipsis, src._data)
        return x

    def backward(ctx, grad):
        from ..creation import zeros_like
        need = ctx.needs_input_grad
        shape, dt = ctx.src_meta
        return (zeros_like(grad) if need[0] else None,
                _grad_as(sum_to_shape(grad, shape), dt) if need[1] else None)


@tensor_method("copy_")
def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast, converted to this dtype and device) into ``self``."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
    _check_broadcastable_into(self._data.shape, src._data.shape)
    if src._device is not self._device:
        src = src.to(self._device)
    return apply_inplace(CopyBackwards, self, src)


class FillBackward2(Node):
    """``fill_`` with a number."""

    def forward(ctx, a, value):
        x = a._data
        _write(xp_of(a), x, Ellipsis, value)
        return x

    def backward(ctx, grad):
        from ..creation import zeros_like
        return zeros_like(grad)


class FillBackward3(Node):
    """``fill_`` with a 0-d tensor (the gradient of the value is the sum)."""

    def forward(ctx, a, value):
        ctx.value_dtype = value._dtype
        x = a._data
        _write(xp_of(a), x, Ellipsis, value._data)
        return x

    def backward(ctx, grad):
        from ..creation import zeros_like
        need = ctx.needs_input_grad
        return (zeros_like(grad) if need[0] else None,
                _grad_as(grad.sum(), ctx.value_dtype) if need[1] else None)


class ZeroBackward0(Node):
    def forward(ctx, a):
        x = a._data
        _write(xp_of(a), x, Ellipsis, 0)
        return x

    def backward(ctx, grad):
        from ..creation import zeros_like
        return zeros_like(grad)


@tensor_method("fill_")
def fill_(self, value):
    """Set every element to ``value`` (a number or a 0-d tensor)."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        return apply_inplace(FillBackward3, self, value)
    return apply_inplace(FillBackward2, self, stored_scalar(value, self._dtype))


@tensor_method("zero_")
def zero_(self):
    return apply_inplace(ZeroBackward0, self)


def fill(input, value):
    """A tensor like ``input`` with every element ``value`` (a number or a 0-d tensor, whose
    gradient is the sum of the result's); no gradient flows to ``input``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fill(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return fill_(input.clone(), value)
