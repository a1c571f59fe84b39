"""NumPy's indexing rules on shape-only arrays.

Basic indexing (integers, slices, ``None``, ``...``) gives a view with NumPy's shape, strides and
offset. Advanced indexing (integer arrays, and integers mixed with them) gives a new array: the
index arrays broadcast together, and their dims go where the advanced indices stand when those
are adjacent, else first -- laid out as NumPy lays it out (a transposed view of a fresh buffer in
the adjacent, non-leading case). Boolean masks that are meta arrays have no values, so the
length of the selection is unknown: reading through one raises, writing through one is allowed
(writes change no shape).
"""
import operator

import numpy as np

from .meta_array import MetaArray, no_values

__all__ = ["getitem", "check_setitem"]

_ADVANCED = object()    # placeholder kind for an index array


def _classify(key):
    """The index items as ``(kind, value)``: "int", "slice", "none", "ellipsis" or "array" (value:
    a MetaArray or a NumPy integer array; a NumPy boolean mask becomes one array per dim)."""
    if not isinstance(key, tuple):
        key = (key,)
    items = []
    for k in key:
        if k is None:
            items.append(("none", None))
        elif k is Ellipsis:
            items.append(("ellipsis", None))
        elif isinstance(k, slice):
            items.append(("slice", k))
        elif isinstance(k, MetaArray):
            if k.dtype == np.bool_:
                items.append(("mask", k))
            elif k.dtype.kind not in "iu":
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
            else:
                items.append(("array", k))
        elif isinstance(k, (bool, np.bool_)):
            items.append(("bool_scalar", bool(k)))
        elif isinstance(k, (int, np.integer)) or (hasattr(k, "__index__") and not hasattr(k, "shape")):
            items.append(("int", operator.index(k)))
        else:
            arr = np.asarray(k)
            if arr.dtype == np.bool_:
                items.append(("host_mask", arr))
            elif arr.dtype.kind in "iu" or arr.size == 0:
                items.append(("array", arr.astype(np.intp, copy=False)))
            else:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                                 "integer or boolean arrays are valid indices")
    return items


def _dims_used(kind, value):
    if kind in ("int", "slice", "array"):
        return 1
    if kind in ("mask", "host_mask"):
        return value.ndim
    return 0


def _expand(a, items):
    """Replace ``...`` by full slices and check the number of indexed dims."""
    used = sum(_dims_used(k, v) for k, v in items)
    if used > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but {used} were indexed")
    out = []
    seen = False
    for kind, value in items:
        if kind == "ellipsis":
            if seen:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen = True
            out.extend([("slice", slice(None))] * (a.ndim - used))
        else:
            out.append((kind, value))
    if not seen:
        out.extend([("slice", slice(None))] * (a.ndim - used))
    return out


def _check_int(i, n, dim):
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
    return i % n


def _host_mask_arrays(mask, shape, dim):
    if mask.shape != tuple(shape):
        for k, (m, n) in enumerate(zip(mask.shape, shape)):
            if m != n:
                raise IndexError(f"boolean index did not match indexed array along axis {dim + k}; size of axis "
                                 f"is {n} but size of corresponding boolean axis is {m}")
    return [("array", idx) for idx in mask.nonzero()]


def getitem(a, key):
    items = _expand(a, _classify(key))
    if any(k in ("array", "mask", "host_mask", "bool_scalar") for k, _ in items):
        return _advanced(a, items)
    shape, strides, offset = [], [], 0
    dim = 0
    for kind, value in items:
        if kind == "none":
            shape.append(1)
            strides.append(0)
            continue
        n, s = a.shape[dim], a.strides[dim]
        if kind == "int":
            offset += _check_int(value, n, dim) * s
        else:
            start, stop, step = value.indices(n)
            length = len(range(start, stop, step))
            shape.append(length)
            strides.append(s * step)
            if length:
                offset += start * s
        dim += 1
    return a.view_of(tuple(shape), tuple(strides), offset)


def _advanced(a, items):
    # Boolean masks with values become integer arrays; a mask without values has unknown length.
    resolved = []
    dim = 0
    for kind, value in items:
        if kind == "mask":
            raise no_values("Indexing with a boolean mask (the number of selected elements)")
        if kind == "host_mask":
            resolved.extend(_host_mask_arrays(value, a.shape[dim:dim + value.ndim], dim))
            dim += value.ndim
            continue
        resolved.append((kind, value))
        dim += _dims_used(kind, value)
    # Shapes of the basic part, positions of the advanced part.
    basic_before, basic_after, adv_shapes = [], [], []
    adv_positions = []
    dim = 0
    for pos, (kind, value) in enumerate(resolved):
        if kind == "none":
            (basic_after if adv_positions else basic_before).append(1)
            continue
        if kind == "bool_scalar":      # a new dim of length 1 (True) or 0 (False), indexing none
            adv_shapes.append((1 if value else 0,))
            adv_positions.append(pos)
            continue
        n = a.shape[dim]
        if kind == "int":
            _check_int(value, n, dim)
            adv_shapes.append(())
            adv_positions.append(pos)
        elif kind == "array":
            if isinstance(value, np.ndarray) and value.size:
                bad = value[(value < -n) | (value >= n)]
                if bad.size:
                    raise IndexError(f"index {int(bad.flat[0])} is out of bounds for axis {dim} with size {n}")
            adv_shapes.append(value.shape)
            adv_positions.append(pos)
        else:
            start, stop, step = value.indices(n)
            (basic_after if adv_positions else basic_before).append(len(range(start, stop, step)))
        dim += 1
    try:
        bshape = np.broadcast_shapes(*adv_shapes)
    except ValueError:
        shapes = " ".join(str(s) for s in adv_shapes)
        raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together with shapes "
                         f"{shapes}") from None
    bshape = tuple(bshape)
    adjacent = adv_positions == list(range(adv_positions[0], adv_positions[-1] + 1))
    if not adjacent or not basic_before:
        return MetaArray(bshape + tuple(basic_before) + tuple(basic_after), a.dtype)
    # NumPy fills a buffer (advanced dims first) and returns it with those dims moved into place.
    buffer = MetaArray(bshape + tuple(basic_before) + tuple(basic_after), a.dtype)
    nb, na = len(basic_before), len(bshape)
    order = list(range(na, na + nb)) + list(range(na)) + list(range(na + nb, buffer.ndim))
    return buffer.transpose(order)


def check_setitem(a, key, value):
    """``a[key] = value`` writes no data; it only checks what NumPy would check (the index, and that
    ``value`` broadcasts to the selection)."""
    if isinstance(key, MetaArray) and key.dtype == np.bool_:
        return       # a masked write: the selection's length is unknown, and nothing changes shape
    if isinstance(key, tuple) and any(isinstance(k, MetaArray) and k.dtype == np.bool_ for k in key):
        return
    target = getitem(a, key)
    shape = getattr(value, "shape", None)
    if shape is None:
        if isinstance(value, (list, tuple)):
            shape = np.shape(value)
        else:
            return
    try:
        out = np.broadcast_shapes(tuple(shape), target.shape)
    except ValueError:
        out = None
    if out != target.shape:
        raise ValueError(f"could not broadcast input array from shape {tuple(shape)} into shape {target.shape}")
