"""Linear interpolation: lerp and lerp_, with a Python-number weight (``LerpBackward0``) or a
broadcast tensor weight (``LerpBackward1``), in PyTorch's form that is exact at both ends.
"""
from ..._broadcast import broadcast_error
from ..._dispatch import _inplace_output_error, apply, apply_inplace
from ..._tensor import Tensor
from ...autograd.node import Node
from .._common import Number, grad_for, write_out, xp_of
from .._linalg_common import C_NAME
from ..registry import tensor_method
from ._common import _not_implemented, _require_tensor

__all__ = ["lerp"]


# ================================================================ interpolation
class LerpBackward0(Node):
    """lerp with a Python-number weight."""

    def forward(ctx, start, end, weight):
        ctx.weight = weight
        ctx.metas = (start._data.shape, start._dtype), (end._data.shape, end._dtype)
        s, e = start._data, end._data
        d = e - s
        # PyTorch's form: exact at both ends, and symmetric
        if abs(weight) < 0.5:
            d *= weight
            d += s
            return d
        d *= weight - 1
        d += e
        return d

    def backward(ctx, grad):
        w = ctx.weight
        need = ctx.needs_input_grad
        ms, me = ctx.metas
        return (_reduce_to(grad * (1 - w), ms) if need[0] else None,
                _reduce_to(grad * w, me) if need[1] else None)


class LerpBackward1(Node):
    """lerp with a Tensor weight."""

    def forward(ctx, start, end, weight):
        xp = xp_of(start)
        s, e, w = start._data, end._data, weight._data
        if w.dtype != s.dtype:
            w = w.astype(s.dtype)     # a 0-dim weight of another float dtype
        ctx.save_for_backward(start, end, weight)
        d = e - s
        low = xp.abs(w) < 0.5
        return xp.where(low, s + w * d, e - d * (1 - w))

    def backward(ctx, grad):
        start, end, weight = ctx.saved_values
        need = ctx.needs_input_grad
        return (grad_for(grad * (1 - weight), start) if need[0] else None,
                grad_for(grad * weight, end) if need[1] else None,
                grad_for(grad * (end - start), weight) if need[2] else None)


def _reduce_to(grad, meta):
    from .._common import sum_to_shape
    shape, dt = meta
    grad = sum_to_shape(grad, shape)
    return grad if grad._dtype is dt else grad.to(dt)


def _lerp_node(input, end, weight):
    """The node for ``lerp(input, end, weight)``, after PyTorch's checks in PyTorch's order: the
    dtypes of ``end`` and a tensor ``weight``, then whether lerp exists for the dtype."""
    _require_tensor("lerp", end, "end", 2)
    if end._dtype is not input._dtype:
        raise RuntimeError(f"expected dtype {C_NAME[input._dtype.name]} for `end` but got dtype "
                           f"{C_NAME[end._dtype.name]}")
    if isinstance(weight, Tensor) and weight._dtype is not input._dtype and weight._data.ndim:
        raise RuntimeError(f"expected dtype {C_NAME[input._dtype.name]} for `weight` but got dtype "
                           f"{C_NAME[weight._dtype.name]}")
    if input._dtype._category != 2:
        shapes = [t._data.shape for t in (input, end, weight) if isinstance(t, Tensor)]
        error = broadcast_error(shapes)      # PyTorch checks the shapes before the kernel's dtype
        if error is not None:
            raise error
        raise _not_implemented("lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar", input)
    if isinstance(weight, Tensor):
        return LerpBackward1
    if not isinstance(weight, Number):
        raise TypeError(f"lerp(): argument 'weight' (position 3) must be Tensor or Number, "
                        f"not {type(weight).__name__}")
    return LerpBackward0


@tensor_method("lerp")
def lerp(input, end, weight, *, out=None):
    """``input + weight * (end - input)``; ``weight`` a number or a (broadcast) tensor."""
    cls = _lerp_node(input, end, weight)
    return write_out(apply(cls, input, end, weight), out)


@tensor_method("lerp_")
def lerp_(self, end, weight):
    error = _inplace_output_error(self, (end, weight))   # PyTorch checks the output first
    if error is not None:
        raise error
    cls = _lerp_node(self, end, weight)
    return apply_inplace(cls, self, end, weight)
