"""Ternary pointwise ops: ``addcmul`` (``input + value * tensor1 * tensor2``) and ``addcdiv``
(``input + value * tensor1 / tensor2``).

Both evaluate in PyTorch's order, ``(value * tensor1) op tensor2`` and then the sum, so that
the optimizers built on them round like PyTorch's. The dtype is the promotion of the three
tensors (``value`` does not take part; an integer result truncates a float ``value``).
"""
import numbers

import numpy as np

from .. import _dtype
from .._dispatch import apply, apply_inplace
from .._tensor import Tensor
from ..autograd.node import Node
from ._common import _wrap_int, cast_array, grad_for, quiet_errors, stored_scalar, write_out, xp_of
from .registry import tensor_method

__all__ = ["addcmul", "addcdiv"]

_DIV_MESSAGE = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
    "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented "
    "as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
    "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the "
    "latter implementation: (input + value * tensor1 / tensor2), for all dtypes.")


def _operands(name, input, tensor1, tensor2, value):
    """The three arrays in the result dtype, ``value`` as a number of that dtype's kind."""
    dt = _dtype.result_dtype((input, tensor1, tensor2))
    if dt is _dtype.bool:
        raise NotImplementedError(f"\"{name}_cpu_out\" not implemented for 'Bool'")
    if dt._category == 1:
        value = _wrap_int(int(value), dt)  # PyTorch truncates a float value, wraps an int
    return cast_array(input._data, dt), cast_array(tensor1._data, dt), cast_array(tensor2._data, dt), value


def _combine(xp, x, scaled, other, divide):
    """``x + scaled {*,/} other``; ``scaled`` is a fresh array (reused when shapes allow)."""
    shape = np.broadcast_shapes(x.shape, scaled.shape, other.shape)
    op = xp.true_divide if divide else xp.multiply
    with quiet_errors():
        r = op(scaled, other, out=scaled) if scaled.shape == shape else op(scaled, other)
        if r.shape == shape:
            return xp.add(x, r, out=r)
        return xp.add(x, r)


def _scaled(xp, t1, value):
    """``value * tensor1`` as a fresh array (PyTorch multiplies first, even by 1)."""
    if value == 1:
        return t1.copy()
    with quiet_errors():
        scaled = xp.multiply(t1, value)
    return scaled if isinstance(scaled, xp.ndarray) else xp.asarray(scaled)  # NumPy gives 0-d as scalars


class AddcmulBackward0(Node):
    def forward(ctx, input, tensor1, tensor2, value=1):
        x, t1, t2, value = _operands("addcmul", input, tensor1, tensor2, value)
        xp = xp_of(input)
        ctx.value = value
        ctx.save_for_backward(input, tensor1, tensor2)
        return _combine(xp, x, _scaled(xp, t1, value), t2, False)

    def backward(ctx, grad):
        input, tensor1, tensor2 = ctx.saved_values
        need = ctx.needs_input_grad
        value = ctx.value
        return (grad_for(grad, input) if need[0] else None,
                grad_for(grad * (tensor2 * value), tensor1) if need[1] else None,
                grad_for(grad * (tensor1 * value), tensor2) if need[2] else None)


class AddcdivBackward0(Node):
    def forward(ctx, input, tensor1, tensor2, value=1):
        if tensor1._dtype._category < 2 and tensor2._dtype._category < 2:
            raise RuntimeError(_DIV_MESSAGE)
        x, t1, t2, value = _operands("addcdiv", input, tensor1, tensor2, value)
        xp = xp_of(input)
        ctx.value = value
        ctx.save_for_backward(input, tensor1, tensor2)
        return _combine(xp, x, _scaled(xp, t1, value), t2, True)

    def backward(ctx, grad):
        input, tensor1, tensor2 = ctx.saved_values
        need = ctx.needs_input_grad
        value = ctx.value
        return (grad_for(grad, input) if need[0] else None,
                grad_for(grad * (value / tensor2), tensor1) if need[1] else None,
                grad_for(-grad * (value * tensor1 / (tensor2 * tensor2)), tensor2) if need[2] else None)


def _check(name, input, tensor1, tensor2, value):
    for arg, pos, t in (("input", 1, input), ("tensor1", 2, tensor1), ("tensor2", 3, tensor2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, "
                            f"not {type(t).__name__}")
    if isinstance(value, Tensor):
        if value._data.size != 1:
            raise RuntimeError(f"{name}(): a Tensor value must have one element, got {value._data.size}")
        return value.item()
    if not isinstance(value, (numbers.Number, np.bool_)):
        raise TypeError(f"{name}(): argument 'value' must be Number, not {type(value).__name__}")
    return value.item() if isinstance(value, np.generic) else value


@tensor_method("addcmul")
def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 * tensor2`` with broadcasting and type promotion."""
    value = _check("addcmul", input, tensor1, tensor2, value)
    if _dtype.result_dtype((input, tensor1, tensor2)) is input._dtype and input._dtype._category == 1:
        value = stored_scalar(value, input._dtype)   # NaN or out-of-range value: PyTorch's overflow error
    return write_out(apply(AddcmulBackward0, input, tensor1, tensor2, value=value), out)


@tensor_method("addcdiv")
def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 / tensor2`` (``tensor1`` and ``tensor2`` may not both be integers)."""
    value = _check("addcdiv", input, tensor1, tensor2, value)
    return write_out(apply(AddcdivBackward0, input, tensor1, tensor2, value=value), out)


@tensor_method("addcmul_")
def addcmul_(self, tensor1, tensor2, *, value=1):
    """In-place ``self += value * tensor1 * tensor2``."""
    value = _check("addcmul_", self, tensor1, tensor2, value)
    if self._dtype._category == 1:
        value = stored_scalar(value, self._dtype)
    return apply_inplace(AddcmulBackward0, self, tensor1, tensor2, value=value)


@tensor_method("addcdiv_")
def addcdiv_(self, tensor1, tensor2, *, value=1):
    """In-place ``self += value * tensor1 / tensor2``."""
    value = _check("addcdiv_", self, tensor1, tensor2, value)
    return apply_inplace(AddcdivBackward0, self, tensor1, tensor2, value=value)
