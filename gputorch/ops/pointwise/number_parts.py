"""Functions of the parts of numbers: ``gcd`` and ``lcm`` (integers), ``copysign`` (sign of one,
magnitude of the other), ``heaviside`` (the step function), ``nextafter`` (the next representable
float), ``ldexp`` (``x * 2**e``) and ``frexp`` (mantissa and exponent).

``copysign``, ``ldexp``, ``frexp`` (its mantissa) and ``nextafter`` (as the identity) have
gradients, as in PyTorch; ``gcd``/``lcm`` are integer-valued and ``heaviside``'s backward raises.
"""
import numpy as np

from ... import _dtype, return_types
from ..._dispatch import apply, apply_inplace
from ..._tensor import Tensor
from ...autograd.node import Node
from .._common import check_operand, grad_for, operand_arrays, quiet_errors, require_tensor, write_out, xp_of
from ..registry import tensor_method
from ._common import _not_implemented, _require_tensor
from .binary import _float_pair

__all__ = ["gcd", "gcd_", "lcm", "lcm_", "copysign", "heaviside", "nextafter", "ldexp", "ldexp_", "frexp"]


def _not_differentiable(name):
    raise RuntimeError(f"the derivative for '{name}' is not implemented.")


def _integer_pair(name, a, b):
    x, y, dt = operand_arrays(a, b)
    if dt._category != 1:
        raise _not_implemented(f"{name}_cpu", a if a._dtype._category != 1 else b)
    return xp_of(a), x, y


def _euclid(xp, x, y):
    """PyTorch's gcd in the operands' integer width: Euclid's algorithm on ``|x|`` and ``|y|`` with C's
    truncating remainder, so the width's minimum (whose ``abs`` wraps to itself) gives what PyTorch
    gives (``gcd(-128, 5) == -1`` in int8)."""
    a, b = xp.broadcast_arrays(xp.abs(x), xp.abs(y))
    a, b = a.copy(), b.copy()
    while bool((a != 0).any()):
        going = a != 0
        remainder = xp.fmod(b, xp.where(going, a, 1))
        b = xp.where(going, a, b)
        a = xp.where(going, remainder, 0)
    return b


class GcdBackward0(Node):
    def forward(ctx, a, b):
        return _euclid(*_integer_pair("gcd", a, b))


class LcmBackward0(Node):
    def forward(ctx, a, b):
        """``|x / gcd * y|``, 0 when gcd is 0, computed as C computes it: in ``int`` for the narrower
        widths, wrapping on overflow, then stored in the operands' width (PyTorch's results)."""
        xp, x, y = _integer_pair("lcm", a, b)
        g = _euclid(xp, x, y)
        wide = np.int32 if x.dtype.itemsize < 4 else x.dtype
        with quiet_errors():
            product = xp.abs(xp.floor_divide(x.astype(wide), xp.where(g == 0, 1, g).astype(wide)) * y.astype(wide))
        return xp.where(g == 0, 0, product).astype(x.dtype)


def _integer_op(name, cls):
    def op(input, other, *, out=None):
        require_tensor(name, input)
        _require_tensor(name, other)
        return write_out(apply(cls, input, other), out)

    def op_(self, other):
        _require_tensor(name + "_", other)
        return apply_inplace(cls, self, other)
    op.__name__, op_.__name__ = name, name + "_"
    op.__doc__ = f"Elementwise {name} of two integer tensors (broadcast; bool and floats refused)."
    return tensor_method(name)(op), tensor_method(name + "_")(op_)


gcd, gcd_ = _integer_op("gcd", GcdBackward0)
lcm, lcm_ = _integer_op("lcm", LcmBackward0)


class CopysignBackward0(Node):
    """``|input|`` with the sign of ``other`` (a tensor or a number); a floating result."""
    saves_result = True

    def forward(ctx, a, b):
        x, y = _float_pair(a, b)
        ctx.save_for_backward(a if isinstance(a, Tensor) else None)
        ctx.other_meta = (b._data.shape, b._dtype) if isinstance(b, Tensor) else None
        with quiet_errors():
            return xp_of(a).copysign(x, y)

    def backward(ctx, grad):
        """``input / result`` (0 where the result is 0) for ``input``, as PyTorch; zero for ``other``."""
        from ..creation import zeros
        from ..comparison import where
        (a,) = ctx.saved_values
        result = ctx.saved_result
        ratio = where(result == 0, 0.0, a / result)
        ga = grad_for(grad * ratio, a)
        gb = None
        if ctx.other_meta is not None:
            shape, dt = ctx.other_meta
            gb = zeros(shape, dtype=dt, device=grad._device) if dt._category == 2 else None
        return ga, gb


@tensor_method("copysign")
def copysign(input, other, *, out=None):
    """``|input|`` with the sign of ``other`` (a tensor or a number), in a floating dtype; its
    gradient is ``sign(input) * sign(other)`` for ``input`` and zero for ``other``."""
    require_tensor("copysign", input)
    check_operand("copysign", other)
    return write_out(apply(CopysignBackward0, input, other), out)


@tensor_method("copysign_")
def copysign_(self, other):
    """In-place ``copysign`` (a floating ``self``)."""
    check_operand("copysign_", other)
    return apply_inplace(CopysignBackward0, self, other)


class HeavisideBackward0(Node):
    def forward(ctx, a, values):
        if a._dtype is not values._dtype:
            raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
        xp, x = xp_of(a), a._data
        if a._dtype is _dtype.bool:
            step = x
        else:
            step = (x > 0).astype(x.dtype)   # NaN gives 0, as in PyTorch
        return xp.where(x == 0, values._data, step)

    def backward(ctx, grad):
        _not_differentiable("heaviside")


@tensor_method("heaviside")
def heaviside(input, values, *, out=None):
    """The step function: 0 where ``input < 0``, ``values`` where ``input == 0``, 1 where ``input > 0``
    (and 0 for NaN, as PyTorch); ``values`` of the same dtype, broadcast."""
    require_tensor("heaviside", input)
    _require_tensor("heaviside", values, "values")
    return write_out(apply(HeavisideBackward0, input, values), out)


@tensor_method("heaviside_")
def heaviside_(self, values):
    _require_tensor("heaviside_", values, "values")
    return apply_inplace(HeavisideBackward0, self, values)


class NextafterBackward0(Node):
    def forward(ctx, a, b):
        x, y, dt = operand_arrays(a, b)
        if dt._category != 2:
            raise _not_implemented("nextafter_cpu", a if a._dtype._category != 2 else b)
        ctx.save_for_backward(a, b)
        return xp_of(a).nextafter(x, y)

    def backward(ctx, grad):
        """PyTorch's convention: the step is treated as the identity in ``input`` (but where ``input``
        equals ``other``, and the result is ``other``, its gradient is 0), constant in ``other``."""
        from ..comparison import where
        from ..creation import zeros
        a, b = ctx.saved_values
        need = ctx.needs_input_grad
        return (grad_for(where(a == b, 0.0, grad), a) if need[0] else None,
                zeros(b._data.shape, dtype=b._dtype, device=grad._device) if need[1] else None)


@tensor_method("nextafter")
def nextafter(input, other, *, out=None):
    """The next floating-point value after ``input`` towards ``other`` (floating tensors only)."""
    require_tensor("nextafter", input)
    _require_tensor("nextafter", other)
    return write_out(apply(NextafterBackward0, input, other), out)


@tensor_method("nextafter_")
def nextafter_(self, other):
    _require_tensor("nextafter_", other)
    return apply_inplace(NextafterBackward0, self, other)


@tensor_method("ldexp")
def ldexp(input, other, *, out=None):
    """``input * 2**other`` in a floating dtype (a composite, so differentiable)."""
    require_tensor("ldexp", input)
    _require_tensor("ldexp", other)
    from ..arithmetic import mul, pow
    if other._dtype._category == 2:     # 2**other in other's own precision, as PyTorch computes it
        scale = pow(2.0, other)
    else:
        dt = _dtype.result_dtype((input, other))
        scale = pow(2.0, other.to(dt if dt._category == 2 else _dtype.get_default_dtype()))
    return write_out(mul(input, scale), out)


@tensor_method("ldexp_")
def ldexp_(self, other):
    """In-place ``self * 2**other`` (a floating ``self``)."""
    require_tensor("ldexp_", self)
    _require_tensor("ldexp_", other)
    from ..arithmetic import pow
    dt = other._dtype if other._dtype._category == 2 else self._dtype
    return self.mul_(pow(2.0, other if other._dtype._category == 2 else other.to(
        dt if dt._category == 2 else _dtype.get_default_dtype())))


class FrexpBackward0(Node):
    def forward(ctx, a):
        if a._dtype._category != 2:
            raise RuntimeError("torch.frexp() only supports floating-point dtypes")
        mantissa, exponent = xp_of(a).frexp(a._data)
        ctx.exponent = exponent
        return mantissa, exponent.astype("int32")

    def backward(ctx, grad_mantissa, grad_exponent):
        """The mantissa is ``input / 2**exponent`` with the exponent held fixed."""
        if grad_mantissa is None:
            return None
        scale = Tensor._make(xp_of(grad_mantissa).ldexp(xp_of(grad_mantissa).ones_like(grad_mantissa._data),
                                                        -ctx.exponent), grad_mantissa._device)
        return grad_mantissa * scale


@tensor_method("frexp")
def frexp(input):
    """``(mantissa, exponent)`` with ``input = mantissa * 2**exponent``, ``|mantissa|`` in [0.5, 1)
    (0 for 0) and an int32 exponent."""
    return return_types.frexp(*apply(FrexpBackward0, input))
