"""Private helpers shared by the elementwise op modules: the floating array of an input
(float16 computed in float32), error builders, the broadcast-checked binary ufunc call, and
``define_unary_ops``, which turns a table of one-input graph nodes into the public functions,
their in-place variants and Tensor methods.
"""
from ... import _dtype
from ..._dispatch import apply, apply_inplace
from ..._tensor import _LEGACY_NAMES as _LEGACY
from .._common import require_tensor, write_out
from ..registry import tensor_method


_HALF = _dtype.float16.np


def _floating(a):
    """The array of ``a`` in a floating dtype (integer and bool inputs: the default float dtype)."""
    x = a._data
    return x if a._dtype._category >= 2 else x.astype(_dtype.get_default_dtype().np)


def _compute_dtype_array(a):
    """Like ``_floating``, with float16 taken up to float32 (for multi-step formulas, so that the
    result is rounded to half once); returns the array and the result dtype to cast back to."""
    x = _floating(a)
    if x.dtype == _HALF:
        return x.astype("float32"), _HALF
    return x, None


def _not_implemented(op, t):
    return NotImplementedError(f'"{op}" not implemented for \'{_LEGACY[t._dtype]}\'')


def _require_tensor(name, value, arg="other", position=2):
    """:func:`~gputorch.ops._common.require_tensor` for a second (``other``) argument."""
    require_tensor(name, value, arg, position)


def _unary(cls):
    """The function, out= included, for a one-input op."""
    def op(input, *, out=None):
        return write_out(apply(cls, input), out)
    return op


def _inplace(cls):
    def op(self):
        return apply_inplace(cls, self)
    return op


def define_unary_ops(table, namespace):
    """For each ``(node, names, in-place names)`` row of ``table``: the function (``out=`` included)
    and the in-place method, registered as Tensor methods and bound under each of their names in
    ``namespace`` (the defining module's ``globals()``)."""
    for cls, names, inplace_names in table:
        fn = _unary(cls)
        fn.__name__ = fn.__qualname__ = names[0]
        fn.__module__ = namespace["__name__"]
        fn.__doc__ = f"Elementwise ``{names[0]}`` (graph node ``{cls.__name__}``)."
        tensor_method(*names)(fn)
        fn_ = _inplace(cls)
        fn_.__name__ = fn_.__qualname__ = inplace_names[0]
        fn_.__module__ = namespace["__name__"]
        fn_.__doc__ = f"In-place ``{names[0]}``."
        tensor_method(*inplace_names)(fn_)
        for name in names:
            namespace[name] = fn
        for name in inplace_names:
            namespace[name] = fn_
