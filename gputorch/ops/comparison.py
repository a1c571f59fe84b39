"""Comparisons, logical and bitwise ops, floating-point classification, and ``where``.

Comparisons (``eq``, ``lt``, ... and the operators) promote their operands as
PyTorch does and return bool tensors, which are outside the graph. Their in-place
forms (``eq_``, ``logical_and_``, ...) keep ``self``'s dtype and record a node
whose gradient is zero. ``where`` is differentiable in both of its branches.
"""
import warnings

from .. import _dtype
from .._dispatch import apply, apply_inplace
from .._tensor import _LEGACY_NAMES as _LEGACY, Tensor
from ..autograd.grad_mode import no_grad
from ..autograd.node import Node
from ._common import Number, check_operand, operand_arrays, quiet_errors, sum_to_shape, write_out, xp_of
from .registry import tensor_method

__all__ = [
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift",
    "isnan", "isinf", "isposinf", "isneginf", "isfinite", "isreal", "signbit",
    "where", "isclose", "allclose", "equal",
]


def _zero_grads(ctx, grad):
    """Zero gradients, one per tensor input (comparisons are piecewise constant)."""
    from .creation import zeros
    return tuple(zeros(shape, dtype=dt, device=grad._device) for shape, dt in ctx.metas)


def _record_metas(ctx, *args):
    ctx.metas = [(a._data.shape, a._dtype) for a in args if isinstance(a, Tensor)]


# ================================================================ comparisons
def _compare(ufunc, ctx, a, b, out_dtype):
    """``ufunc(a, b)`` on the promoted operands: bool, or ``out_dtype`` for the in-place forms."""
    x, y, _ = operand_arrays(a, b)
    _record_metas(ctx, a, b)
    out = getattr(xp_of(a if isinstance(a, Tensor) else b), ufunc)(x, y)
    return out if out_dtype is None else out.astype(out_dtype.np)


# PyTorch names the node ...Backward0 for a Number operand and ...Backward1 for a Tensor one.
class EqBackward0(Node):
    def forward(ctx, a, b, out_dtype=None):
        return _compare("equal", ctx, a, b, out_dtype)

    backward = _zero_grads


class EqBackward1(Node):
    def forward(ctx, a, b, out_dtype=None):
        return _compare("equal", ctx, a, b, out_dtype)

    backward = _zero_grads


class NeBackward0(Node):
    def forward(ctx, a, b, out_dtype=None):
        return _compare("not_equal", ctx, a, b, out_dtype)

    backward = _zero_grads


class NeBackward1(Node):
    def forward(ctx, a, b, out_dtype=None):
        return _compare("not_equal", ctx, a, b, out_dtype)

    backward = _zero_grads


class LtBackward0(Node):
    def forward(ctx, a, b, out_dtype=None):
        return _compare("less", ctx, a, b, out_dtype)

    backward = _zero_grads


class LtBackward1(Node):
    def forward(ctx, a, b, out_dtype=None):
        return _compare("less", ctx, a, b, out_dtype)

    backward = _zero_grads


class LeBackward0(Node):
    def forward(ctx, a, b, out_dtype=None):
        return _compare("less_equal", ctx, a, b, out_dtype)

    backward = _zero_grads


class LeBackward1(Node):
    def forward(ctx, a, b, out_dtype=None):
        return _compare("less_equal", ctx, a, b, out_dtype)

    backward = _zero_grads


class GtBackward0(Node):
    def forward(ctx, a, b, out_dtype=None):
        return _compare("greater", ctx, a, b, out_dtype)

    backward = _zero_grads


class GtBackward1(Node):
    def forward(ctx, a, b, out_dtype=None):
        return _compare("greater", ctx, a, b, out_dtype)

    backward = _zero_grads


class GeBackward0(Node):
    def forward(ctx, a, b, out_dtype=None):
        return _compare("greater_equal", ctx, a, b, out_dtype)

    backward = _zero_grads


class GeBackward1(Node):
    def forward(ctx, a, b, out_dtype=None):
        return _compare("greater_equal", ctx, a, b, out_dtype)

    backward = _zero_grads


def _comparison(name, aliases, scalar_node, tensor_node, symbol):
    def op(input, other, *, out=None):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        if isinstance(other, Tensor):
            return write_out(apply(tensor_node, input, other), out)
        check_operand(name, other)
        return write_out(apply(scalar_node, input, other), out)

    def operator(self, other):
        if isinstance(other, Tensor):
            return apply(tensor_node, self, other)
        if isinstance(other, Number):
            return apply(scalar_node, self, other)
        return NotImplemented   # == gives False, < raises TypeError, as for Python objects

    def inplace(self, other):
        if isinstance(other, Tensor):
            return apply_inplace(tensor_node, self, other, out_dtype=self._dtype)
        check_operand(name + "_", other)
        return apply_inplace(scalar_node, self, other, out_dtype=self._dtype)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``input {symbol} other`` (bool result); ``other`` a tensor or a number."
    operator.__name__ = operator.__qualname__ = f"__{name}__"
    inplace.__name__ = inplace.__qualname__ = name + "_"
    inplace.__doc__ = f"In-place ``{name}``: ``self`` keeps its dtype (1 where true, 0 elsewhere)."
    tensor_method(name, *aliases)(op)
    tensor_method(f"__{name}__")(operator)
    tensor_method(name + "_", *[a + "_" for a in aliases])(inplace)
    return op


eq = _comparison("eq", (), EqBackward0, EqBackward1, "==")
ne = not_equal = _comparison("ne", ("not_equal",), NeBackward0, NeBackward1, "!=")
lt = less = _comparison("lt", ("less",), LtBackward0, LtBackward1, "<")
le = less_equal = _comparison("le", ("less_equal",), LeBackward0, LeBackward1, "<=")
gt = greater = _comparison("gt", ("greater",), GtBackward0, GtBackward1, ">")
ge = greater_equal = _comparison("ge", ("greater_equal",), GeBackward0, GeBackward1, ">=")


# ================================================================ logical ops
class LogicalAndBackward0(Node):
    def forward(ctx, a, b, out_dtype=None):
        return _compare("logical_and", ctx, a, b, out_dtype)

    backward = _zero_grads


class LogicalOrBackward0(Node):
    def forward(ctx, a, b, out_dtype=None):
        return _compare("logical_or", ctx, a, b, out_dtype)

    backward = _zero_grads


class LogicalXorBackward0(Node):
    def forward(ctx, a, b, out_dtype=None):
        return _compare("logical_xor", ctx, a, b, out_dtype)

    backward = _zero_grads


class LogicalNotBackward0(Node):
    def forward(ctx, a, out_dtype=None):
        _record_metas(ctx, a)
        out = xp_of(a).logical_not(a._data)
        return out if out_dtype is None else out.astype(out_dtype.np)

    backward = _zero_grads


def _require_tensor(name, value, arg, position):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def _logical(name, node):
    def op(input, other, *, out=None):
        _require_tensor(name, input, "input", 1)
        _require_tensor(name, other, "other", 2)
        return write_out(apply(node, input, other), out)

    def inplace(self, other):
        _require_tensor(name + "_", other, "other", 1)
        if self._requires_grad:
            return apply_inplace(node, self, other, out_dtype=self._dtype)
        with no_grad():   # PyTorch: a truth value is not differentiable, whatever ``other`` requires
            return apply_inplace(node, self, other, out_dtype=self._dtype)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}`` of the truth values (nonzero is true); bool result."
    inplace.__name__ = inplace.__qualname__ = name + "_"
    tensor_method(name)(op)
    tensor_method(name + "_")(inplace)
    return op


logical_and = _logical("logical_and", LogicalAndBackward0)
logical_or = _logical("logical_or", LogicalOrBackward0)
logical_xor = _logical("logical_xor", LogicalXorBackward0)


@tensor_method("logical_not")
def logical_not(input, *, out=None):
    """Elementwise ``not`` of the truth values; bool result."""
    return write_out(apply(LogicalNotBackward0, input), out)


@tensor_method("logical_not_")
def logical_not_(self):
    return apply_inplace(LogicalNotBackward0, self, out_dtype=self._dtype)


# ================================================================ bitwise ops (bool and integer dtypes)
def _bitwise_op(ufunc, a, b):
    x, y, dt = operand_arrays(a, b)
    if dt._category == 2:
        raise NotImplementedError(f'"{ufunc}" not implemented for \'{_LEGACY[dt]}\'')
    return getattr(xp_of(a if isinstance(a, Tensor) else b), ufunc)(x, y)


class BitwiseAndBackward0(Node):
    def forward(ctx, a, b):
        return _bitwise_op("bitwise_and", a, b)


class BitwiseOrBackward0(Node):
    def forward(ctx, a, b):
        return _bitwise_op("bitwise_or", a, b)


class BitwiseXorBackward0(Node):
    def forward(ctx, a, b):
        return _bitwise_op("bitwise_xor", a, b)


class BitwiseNotBackward0(Node):
    def forward(ctx, a):
        if a._dtype._category == 2:
            raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{_LEGACY[a._dtype]}\'')
        return xp_of(a).invert(a._data)


def _shift(a, b, left):
    """``a << b`` or ``a >> b`` on integer dtypes. As in PyTorch, a shift by a negative amount or by
    the dtype's width or more gives 0 (right shifts of negative signed values: -1)."""
    x, y, dt = operand_arrays(a, b)
    if dt._category != 1:
        raise NotImplementedError(f'"{"lshift" if left else "rshift"}_cpu" not implemented for \'{_LEGACY[dt]}\'')
    xp = xp_of(a if isinstance(a, Tensor) else b)
    x, y = xp.asarray(x, dtype=dt.np), xp.asarray(y, dtype=dt.np)
    bits = dt.itemsize * 8
    outside = (y < 0) | (y >= bits)
    sign_fill = not left and dt.is_signed
    y = xp.where(outside, xp.asarray(bits - 1 if sign_fill else 0, dtype=dt.np), y)
    out = xp.left_shift(x, y) if left else xp.right_shift(x, y)
    if not sign_fill:
        out = xp.where(outside, xp.zeros((), dt.np), out)
    return out


class BitwiseLeftShiftBackward0(Node):
    def forward(ctx, a, b):
        return _shift(a, b, True)


class BitwiseRightShiftBackward0(Node):
    def forward(ctx, a, b):
        return _shift(a, b, False)


def _bitwise(name, symbol, node, short=None):
    def op(input, other, *, out=None):
        if not isinstance(input, Tensor):
            if not isinstance(other, Tensor):
                raise TypeError(f"{name}(): at least one argument must be a Tensor")
            check_operand(name, input, "input")
        else:
            check_operand(name, other)
        return write_out(apply(node, input, other), out)

    def operator(self, other):
        if not isinstance(other, (Tensor, *Number)):
            return NotImplemented
        return apply(node, self, other)

    def reflected_operator(self, other):
        if not isinstance(other, (Tensor, *Number)):
            return NotImplemented
        return apply(node, other, self)

    def inplace(self, other):
        check_operand(name + "_", other)
        result = _dtype.result_dtype((self, other))
        if not _dtype.can_cast(result, self._dtype):   # PyTorch checks the output before the kernel
            raise RuntimeError(f"result type {_LEGACY[result]} can't be cast to the desired output type "
                               f"{_LEGACY[self._dtype]}")
        return apply_inplace(node, self, other)

    op.__name__ = op.__qualname__ = name
    kinds = "integer" if symbol in ("<<", ">>") else "bool and integer"
    op.__doc__ = f"Elementwise ``input {symbol} other`` for {kinds} dtypes."
    inplace.__name__ = inplace.__qualname__ = name + "_"
    short = short or name.split("_")[1]
    tensor_method(name)(op)
    tensor_method(f"__{short}__")(operator)
    tensor_method(f"__r{short}__")(reflected_operator)
    tensor_method(name + "_", f"__i{short}__")(inplace)
    return op


bitwise_and = _bitwise("bitwise_and", "&", BitwiseAndBackward0)
bitwise_or = _bitwise("bitwise_or", "|", BitwiseOrBackward0)
bitwise_xor = _bitwise("bitwise_xor", "^", BitwiseXorBackward0)
bitwise_left_shift = _bitwise("bitwise_left_shift", "<<", BitwiseLeftShiftBackward0, "lshift")
bitwise_right_shift = _bitwise("bitwise_right_shift", ">>", BitwiseRightShiftBackward0, "rshift")


@tensor_method("bitwise_not")
def bitwise_not(input, *, out=None):
    """Elementwise ``~input``: logical not for bool, two's complement for integers."""
    return write_out(apply(BitwiseNotBackward0, input), out)


@tensor_method("__invert__")
def _invert(self):
    """``~tensor``: as ``bitwise_not``, but floating point is a TypeError (Python's operator)."""
    if self._dtype._category == 2:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return apply(BitwiseNotBackward0, self)


@tensor_method("bitwise_not_")
def bitwise_not_(self):
    return apply_inplace(BitwiseNotBackward0, self)


# ================================================================ floating-point classification
def _classify(ufunc, a, integer_value):
    """A bool test of each element; integers and bool are finite, never NaN, never infinite."""
    xp = xp_of(a)
    if a._dtype._category != 2:
        return xp.full(a._data.shape, integer_value, dtype=bool)
    return getattr(xp, ufunc)(a._data)


class IsnanBackward0(Node):
    def forward(ctx, a):
        return _classify("isnan", a, False)


class IsinfBackward0(Node):
    def forward(ctx, a):
        return _classify("isinf", a, False)


class IsfiniteBackward0(Node):
    def forward(ctx, a):
        return _classify("isfinite", a, True)


class IsposinfBackward0(Node):
    def forward(ctx, a):
        return _classify("isposinf", a, False)


class IsneginfBackward0(Node):
    def forward(ctx, a):
        return _classify("isneginf", a, False)


class IsrealBackward0(Node):
    def forward(ctx, a):
        return xp_of(a).ones(a._data.shape, dtype=bool)


class SignbitBackward0(Node):
    def forward(ctx, a):
        x = a._data
        xp = xp_of(a)
        if a._dtype._category == 2:
            return xp.signbit(x)
        if a._dtype is _dtype.bool or a._dtype is _dtype.uint8:
            return xp.zeros(x.shape, dtype=bool)
        return x < 0


def _classifier(name, node, doc):
    def op(input):
        return apply(node, input)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return tensor_method(name)(op)


isnan = _classifier("isnan", IsnanBackward0, "Whether each element is NaN.")
isinf = _classifier("isinf", IsinfBackward0, "Whether each element is +inf or -inf.")
isfinite = _classifier("isfinite", IsfiniteBackward0, "Whether each element is neither infinite nor NaN.")


@tensor_method("isposinf")
def isposinf(input, *, out=None):
    """Whether each element is +inf."""
    return write_out(apply(IsposinfBackward0, input), out)


@tensor_method("isneginf")
def isneginf(input, *, out=None):
    """Whether each element is -inf."""
    return write_out(apply(IsneginfBackward0, input), out)


@tensor_method("signbit")
def signbit(input, *, out=None):
    """Whether each element has its sign bit set (true for -0.0 and negative NaN)."""
    return write_out(apply(SignbitBackward0, input), out)


@tensor_method("isreal")
def isreal(input):
    """Whether each element is real: always true (gputorch has no complex dtypes)."""
    return apply(IsrealBackward0, input)


# ================================================================ where
class WhereBackward0(Node):
    """``where(condition, input, other)``; ``input``/``other`` may be Python numbers."""

    def forward(ctx, condition, a, b):
        xp = xp_of(condition)
        if isinstance(a, Tensor) or isinstance(b, Tensor):
            x, y, dt = operand_arrays(a, b)
        else:
            x, y, dt = a, b, _dtype.result_dtype((a, b))
        ctx.save_for_backward(condition)
        ctx.metas = [(t._data.shape, t._dtype) if isinstance(t, Tensor) else None for t in (a, b)]
        c = condition._data
        if condition._dtype is not _dtype.bool:
            c = c.astype(bool)
        out = xp.where(c, x, y)
        return out if out.dtype == dt.np else out.astype(dt.np)

    def backward(ctx, grad):
        (condition,) = ctx.saved_values
        if condition._dtype is not _dtype.bool:
            condition = condition != 0        # (a deprecated uint8 condition)
        need = ctx.needs_input_grad
        grads = [None]
        k = 1
        for meta, taken in zip(ctx.metas, (True, False)):
            if meta is None:
                continue
            if need[k]:
                g = where(condition, grad, 0) if taken else where(condition, 0, grad)
                g = sum_to_shape(g, meta[0])
                grads.append(g if g._dtype is meta[1] else g.to(meta[1]))
            else:
                grads.append(None)
            k += 1
        return tuple(grads)


def where(condition, input=None, other=None, *, out=None):
    """``input`` where ``condition`` holds, else ``other`` (broadcast; either may be a number).
    With only ``condition``: the indices of its nonzero elements, as a tuple of tensors per dim."""
    if not isinstance(condition, Tensor):
        raise TypeError(f"where(): argument 'condition' (position 1) must be Tensor, not "
                        f"{type(condition).__name__}")
    if input is None and other is None:
        return _nonzero_tuple(condition)
    if input is None or other is None:
        raise TypeError("where() takes 1 or 3 arguments: where(condition) or where(condition, input, other)")
    if condition._dtype is not _dtype.bool:
        if condition._dtype is not _dtype.uint8:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with "
                               f"dtype {condition._dtype.name.capitalize()}")
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated; use a "
                      "boolean condition instead.", UserWarning, stacklevel=2)
    for value, arg in ((input, "input"), (other, "other")):
        if not isinstance(value, (Tensor, *Number)):
            raise TypeError(f"where(): argument '{arg}' must be Tensor or Number, not {type(value).__name__}")
    return write_out(apply(WhereBackward0, condition, input, other), out)


@tensor_method("where")
def _where_method(self, condition, other):
    """``Tensor.where(condition, other)`` is ``where(condition, self, other)``."""
    return where(condition, self, other)


def _nonzero_tuple(condition):
    from . import indexing
    nonzero = getattr(indexing, "nonzero", None)
    if nonzero is not None:
        return nonzero(condition, as_tuple=True)
    xp = xp_of(condition)
    c = condition._data
    if c.ndim == 0:
        c = c.reshape(1)
    return tuple(Tensor._make(i.astype("int64"), condition._device) for i in xp.nonzero(c))


# ================================================================ closeness
def _closeness_check(name, input, other, rtol, atol):
    _require_tensor(name, input, "input", 1)
    _require_tensor(name, other, "other", 2)
    if input._dtype is not other._dtype:
        raise RuntimeError(f"{_LEGACY[input._dtype]} did not match {_LEGACY[other._dtype]}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")




class IscloseBackward0(Node):
    def forward(ctx, a, b, rtol, atol, equal_nan):
        xp = xp_of(a)
        x, y = a._data, b._data
        close = x == y
        if a._dtype._category != 2:
            x = x.astype("float64")
            y = y.astype("float64")
        with quiet_errors():
            diff = xp.abs(x - y)
            allowed = xp.abs(y * rtol)
            allowed += atol
            close |= xp.isfinite(diff) & (diff <= allowed)
            if equal_nan and a._dtype._category == 2:
                close |= xp.isnan(x) & xp.isnan(y)
        return close


@tensor_method("isclose")
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether ``|input - other| <= atol + rtol * |other|`` elementwise (equal infinities are close;
    NaNs are close to each other only with ``equal_nan``). Both must have the same dtype."""
    _closeness_check("isclose", input, other, rtol, atol)
    return apply(IscloseBackward0, input, other, rtol, atol, equal_nan)


@tensor_method("allclose")
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``input`` is close to ``other`` (see :func:`isclose`); a Python bool."""
    _closeness_check("allclose", input, other, rtol, atol)
    return bool(apply(IscloseBackward0, input, other, rtol, atol, equal_nan)._data.all())


@tensor_method("equal")
def equal(input, other):
    """True when both have the same shape and equal elements (after promotion); NaN is not equal."""
    _require_tensor("equal", input, "input", 1)
    _require_tensor("equal", other, "other", 2)
    if input._data.shape != other._data.shape:
        return False
    if input._device is not other._device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                           f"devices, {input._device} and {other._device}!")
    x, y, _ = operand_arrays(input, other)
    return bool((x == y).all())

