"""Index expressions for ``__getitem__`` and ``__setitem__`` cases.

An index is a tuple of components (int, negative int, slice with step, None,
Ellipsis, bool, list, range, int tensor, bool tensor), drawn so that most
indices are valid for the tensor's shape and a few are not. Each component
is written twice: in subscript syntax (``1:3:2``) for ``x[...]`` and as an
expression (``slice(1, 3, 2)``) for ``x.__setitem__(...)``.
"""
import warnings

import numpy as np

from ._inputs import ALL_DTYPES

_KINDS = ["int", "int", "slice", "slice", "slice", "none", "ellipsis", "bool", "list", "range",
          "int_tensor", "bool_tensor"]


def _slice(b, size):
    def bound():
        if b.chance(0.35):
            return None
        return b.int_in(-size - 1, size + 1)
    step = b.choice([None, None, 1, 2, 3]) if b.chance(0.97) else b.choice([-1, 0])
    start, stop = bound(), bound()
    subscript = f"{'' if start is None else start}:{'' if stop is None else stop}" + (
        "" if step is None else f":{step}")
    return subscript, f"slice({start}, {stop}, {step})"


def index_components(b, shape):
    """``(subscript_sources, expression_sources)`` of a random index for ``shape``."""
    subs, exprs = [], []
    pos = 0
    count = b.int_in(1, min(len(shape) + 1, 4))
    seen_ellipsis = False
    for i in range(count):
        kind = b.choice(_KINDS)
        if pos >= len(shape) and kind not in ("none", "ellipsis", "bool") and b.chance(0.85):
            kind = b.choice(["none", "bool", "ellipsis"])
        if kind == "ellipsis" and seen_ellipsis:
            kind = "none"
        size = shape[pos] if pos < len(shape) else 1
        if kind == "int":
            value = b.int_in(-size, size - 1) if (size and b.chance(0.92)) else size
            subs.append(str(value)), exprs.append(str(value))
            pos += 1
        elif kind == "slice":
            sub, expr = _slice(b, size)
            subs.append(sub), exprs.append(expr)
            pos += 1
        elif kind == "none":
            subs.append("None"), exprs.append("None")
        elif kind == "ellipsis":
            subs.append("..."), exprs.append("...")
            seen_ellipsis = True
            pos = max(pos, len(shape) - (count - i - 1))
        elif kind == "bool":
            value = b.choice(["True", "False"])
            subs.append(value), exprs.append(value)
        elif kind == "list":
            values = [b.int_in(-size, size - 1) if size else 0 for _ in range(b.int_in(0 if size else 1, 3))]
            subs.append(repr(values)), exprs.append(repr(values))
            pos += 1
        elif kind == "range":
            src = f"range(0, {size}, {b.int_in(1, 2)})"
            subs.append(src), exprs.append(src)
            pos += 1
        elif kind == "int_tensor":
            index_shape = b.choice([(b.int_in(0, 3),), (b.int_in(1, 2), b.int_in(1, 2)), ()])
            src = b.index_tensor(size, index_shape, dtype=b.choice(["int64", "int64", "int32", "uint8"]),
                                 allow_negative=True)
            subs.append(src), exprs.append(src)
            pos += 1
        else:  # bool tensor mask over the next one or two dims
            span = min(b.int_in(1, 2), max(len(shape) - pos, 0))
            mask_shape = tuple(shape[pos:pos + span])
            if b.chance(0.05):
                mask_shape = mask_shape + (1,)
            src = b.tensor(mask_shape, "bool", grad=False, layout="contiguous")
            subs.append(src), exprs.append(src)
            pos += span
    if count == 1 and b.chance(0.6):
        return subs[0], exprs[0]
    return ", ".join(subs), "(" + ", ".join(exprs) + ",)"


def getitem(b):
    """``a0[INDEX]`` (the whole body, not args: subscript syntax)."""
    x = b.tensor()
    sub, _ = index_components(b, b.shapes[x])
    return f"{x}[{sub}]"


def setitem(b, reference_shape):
    """``(a0.__setitem__(INDEX, VALUE), a0)[1]``: assignment, then the updated tensor.

    ``reference_shape(x_shape, x_dtype, index_expr)`` is the shape torch gives
    ``x[index]`` (or None if torch refuses), used to draw a broadcastable value.
    """
    x = b.tensor(grad=False if b.chance(0.85) else None)
    _, expr = index_components(b, b.shapes[x])
    target = reference_shape(b, x, expr)
    if target is None or b.chance(0.3):
        value = b.python_scalar() if b.chance(0.8) else b.tensor((), grad=False)
    else:
        shape = tuple(target)
        if shape and b.chance(0.4):
            shape = shape[b.int_in(0, len(shape)):]
        shape = tuple(1 if (s and b.chance(0.2)) else s for s in shape)
        dtype = b.dtypes[x] if b.chance(0.75) else b.dtype(ALL_DTYPES)
        value = b.tensor(shape, dtype, grad=False)
    return f"({x}.__setitem__({expr}, {value}), {x})[1]"


def torch_index_shape(torch):
    """A ``reference_shape`` function evaluating the index with torch on zeros."""
    import math

    def shape_of(b, x, expr):
        namespace = {"T": torch, "dev": "cpu", "np": np, "nan": math.nan, "inf": math.inf}
        for i, leaf in enumerate(b.leaves):
            try:
                namespace[f"a{i}"] = eval(leaf, namespace)  # noqa: S307 - our own source
            except Exception:  # noqa: BLE001
                return None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return tuple(eval(f"{x}[{expr}]", namespace).shape)  # noqa: S307
        except Exception:  # noqa: BLE001
            return None
    return shape_of
