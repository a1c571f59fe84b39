"""Shape rules for NumPy's products: dot, vdot, inner, outer, tensordot and einsum (whose result
layout, and whether it is a view of a temporary, follow NumPy's own contraction path).
"""
import math

import numpy as np

from . import meta_ufuncs as _ufuncs
from .meta_array import MetaArray, _axis
from .meta_functions import dtype_of, meta, rule, stand_in
from .meta_layout import strides_in_order


# ---------------------------------------------------------------- products
@rule(np.dot)
def _dot(a, b, out=None):
    a, b = meta(a), meta(b)
    dt = dtype_of(np.dot, stand_in(a, min(a.ndim, 1)), stand_in(b, min(b.ndim, 1)))
    if a.ndim == 0 or b.ndim == 0:
        shape = _ufuncs.broadcast_shape([a.shape, b.shape])
    else:
        k_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
        if a.shape[-1] != k_b:
            raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                             f"{k_b} (dim {max(b.ndim - 2, 0)})")
        shape = a.shape[:-1] + b.shape[:-2] + b.shape[-1:] if b.ndim > 1 else a.shape[:-1]
    return out if out is not None else MetaArray(shape, dt)


@rule(np.vdot)
def _vdot(a, b):
    a, b = meta(a), meta(b)
    if a.size != b.size:
        raise ValueError("cannot reshape array")
    return MetaArray((), dtype_of(np.vdot, stand_in(a, 1), stand_in(b, 1)))


@rule(np.inner)
def _inner(a, b):
    a, b = meta(a), meta(b)
    if a.ndim and b.ndim and a.shape[-1] != b.shape[-1]:
        raise ValueError("shapes not aligned")
    dt = dtype_of(np.inner, stand_in(a, min(a.ndim, 1)), stand_in(b, min(b.ndim, 1)))
    if not a.ndim or not b.ndim:
        return MetaArray(a.shape + b.shape, dt)
    return MetaArray(a.shape[:-1] + b.shape[:-1], dt)


@rule(np.outer)
def _outer(a, b, out=None):
    a, b = meta(a), meta(b)
    dt = dtype_of(np.outer, stand_in(a, 1), stand_in(b, 1))
    return out if out is not None else MetaArray((a.size, b.size), dt)


@rule(np.tensordot)
def _tensordot(a, b, axes=2):
    a, b = meta(a), meta(b)
    if isinstance(axes, (int, np.integer)):
        axes_a = list(range(a.ndim - axes, a.ndim))
        axes_b = list(range(axes))
    else:
        axes_a, axes_b = axes
        axes_a = list(axes_a) if isinstance(axes_a, (list, tuple)) else [axes_a]
        axes_b = list(axes_b) if isinstance(axes_b, (list, tuple)) else [axes_b]
    axes_a = [_axis(x, a.ndim) for x in axes_a]
    axes_b = [_axis(x, b.ndim) for x in axes_b]
    if len(axes_a) != len(axes_b) or any(a.shape[i] != b.shape[j] for i, j in zip(axes_a, axes_b)):
        raise ValueError("shape-mismatch for sum")
    shape = tuple(n for i, n in enumerate(a.shape) if i not in axes_a) + \
        tuple(n for j, n in enumerate(b.shape) if j not in axes_b)
    dt = dtype_of(np.dot, stand_in(a, 1), stand_in(b, 1))
    return MetaArray((math.prod(shape),), dt).reshape(shape)      # NumPy reshapes its 2-D product


def _einsum_terms(subscripts, operands):
    """``(input label lists, output labels)``, with each '...' expanded to per-operand labels."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, rhs = subscripts.split("->")
    else:
        lhs, rhs = subscripts, None
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError("more operands provided to einstein sum function than specified in the subscripts "
                         "string" if len(operands) > len(terms) else
                         "fewer operands provided to einstein sum function than specified in the subscripts "
                         "string")
    ell_dims = 0
    labels = []
    for term, op in zip(terms, operands):
        if "..." in term:
            n = op.ndim - (len(term) - 3)
            ell_dims = max(ell_dims, n)
            head, tail = term.split("...")
            labels.append(list(head) + [f".{i}" for i in range(ell_dims - n, ell_dims)] + list(tail))
        else:
            if len(term) != op.ndim:
                raise ValueError(f"operand has more dimensions than subscripts given in einstein sum, but no "
                                 f"'...' ellipsis provided to broadcast the extra dimensions.")
            labels.append(list(term))
    ell = [f".{i}" for i in range(ell_dims)]
    if rhs is None:
        counts = {}
        for ls in labels:
            for c in ls:
                counts[c] = counts.get(c, 0) + 1
        out = ell + sorted(c for c, k in counts.items() if k == 1 and not c.startswith("."))
    elif "..." in rhs:
        head, tail = rhs.split("...")
        out = list(head) + ell + list(tail)
    else:
        out = list(rhs)
    return labels, out


@rule(np.einsum)
def _einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    if not isinstance(operands[0], str):
        raise NotImplementedError("numpy.einsum in the interleaved (operand, sublist) form on meta arrays")
    subscripts, ops = operands[0], [meta(o) for o in operands[1:]]
    labels, out_labels = _einsum_terms(subscripts, ops)
    sizes = {}
    for ls, op in zip(labels, ops):
        for c, n in zip(ls, op.shape):
            old = sizes.get(c)
            if old is None or old == 1:
                sizes[c] = n
            elif n != 1 and n != old:
                raise ValueError(f"operands could not be broadcast together with remapped shapes "
                                 f"[original->remapped]: size {n} and {old} for subscript {c!r}")
    shape = tuple(sizes[c] for c in out_labels)
    dt = dtype_of(np.einsum, subscripts, *[stand_in(o) for o in ops], dtype=dtype, casting=casting)
    if out is not None:
        return out
    if len(ops) == 1 and set(labels[0]) <= set(out_labels) and dtype is None:
        # A pure relabelling (transpose or diagonal): NumPy returns a view.
        op = ops[0]
        strides = []
        for c in out_labels:
            strides.append(sum(s for lc, s in zip(labels[0], op.strides) if lc == c))
        return op.view_of(shape, tuple(strides))
    return _einsum_result(subscripts, ops, shape, dt, order, casting, optimize)


def _laid_out_like(op, shape):
    """A small NumPy array of ``shape`` whose axes are in ``op``'s memory order (zero strides where
    ``op`` is broadcast)."""
    order = sorted(range(op.ndim), key=lambda i: -abs(op.strides[i]))
    buf = np.ones([shape[i] for i in order], op.dtype).transpose(np.argsort(order))
    strides = [0 if op.strides[i] == 0 and op.shape[i] > 1 else buf.strides[i] for i in range(op.ndim)]
    return np.lib.stride_tricks.as_strided(buf, shape, strides)


def _einsum_result(subscripts, ops, shape, dt, order, casting, optimize):
    """The result as NumPy lays it out: the same einsum (same contraction path, as NumPy picks it
    for the real sizes) run on stand-ins of size 2 per dim that are laid out like the operands;
    the result's axis order, and whether it is a view of a temporary, carry over to the real shape."""
    if 0 in shape or len(shape) < 2 or any(0 in op.shape for op in ops):
        return MetaArray(shape, dt)
    if optimize is not False and len(ops) > 2:
        zeros = [np.lib.stride_tricks.as_strided(np.zeros(1, op.dtype), op.shape, (0,) * op.ndim) for op in ops]
        optimize = np.einsum_path(subscripts, *zeros, optimize=optimize)[0]
    stands = [_laid_out_like(op, tuple(1 if n == 1 else 2 for n in op.shape)) for op in ops]
    with np.errstate(all="ignore"):
        small = np.einsum(subscripts, *stands, order=order, casting=casting, optimize=optimize)
    axes = sorted(range(small.ndim), key=lambda i: (-abs(small.strides[i]) if small.shape[i] > 1 else 0))
    if small.base is not None:      # a permuted view of the temporary holding the product
        return MetaArray(tuple(shape[i] for i in axes), dt).transpose(np.argsort(axes).tolist())
    return MetaArray(shape, dt, strides_in_order(shape, dt.itemsize, axes))
