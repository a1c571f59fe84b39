"""einsum: Einstein summation over any number of operands, and tensordot built on it.

The equation is parsed once into integer labels per operand dimension (letters
'A'-'Z' are 0-25, 'a'-'z' 26-51, the dimensions an ellipsis stands for 52 and
up). Size-1 dimensions that broadcast against a larger size are squeezed out
of their operand (by a differentiable reshape) before the op runs, so the
:class:`EinsumBackward0` node itself only sees consistent sizes.

The gradient for operand ``k`` is again an einsum: the output gradient times the
other operands, summed down to the labels of operand ``k``. Labels that appear
only in operand ``k`` get the gradient broadcast along them, and labels repeated
in operand ``k`` (a diagonal, as in ``'ii->i'``) are scattered back onto that
diagonal by one more einsum with a constant identity tensor.
"""
import functools

import numpy as np

from .. import _dtype
from .._dispatch import apply
from .._tensor import Tensor
from ..autograd.node import Node
from ._common import xp_of
from ._linalg_common import SCALAR_NAME, write_out
from ..amp.autocast_mode import autocast_function

__all__ = ["einsum", "tensordot"]

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_LABEL_OF = {c: i for i, c in enumerate(_LETTERS)}
_ELLIPSIS = 52           # first label of the dimensions covered by '...'
_ELLIPSIS_MARK = -1      # placeholder for '...' while parsing


class EinsumBackward0(Node):
    """``out = einsum(in_labels -> out_labels)`` over operands of consistent sizes."""

    def forward(ctx, *operands, in_labels, out_labels):
        equation = _equation(in_labels, out_labels)
        arrays = [t._data for t in operands]
        xp = xp_of(operands[0])
        if len(arrays) == 1:
            x = arrays[0]
            out = xp.einsum(equation, x)
            if xp.may_share_memory(out, x):
                out = out.copy()
        else:
            out = xp.einsum(equation, *arrays, optimize=True)
            ctx.save_for_backward(*operands)
        ctx.in_labels, ctx.out_labels = in_labels, out_labels
        ctx.shapes = [x.shape for x in arrays]
        return out

    def backward(ctx, grad):
        in_labels, out_labels = ctx.in_labels, ctx.out_labels
        operands = ctx.saved_values if len(in_labels) > 1 else ()
        sizes = {}
        for labels, shape in zip(in_labels, ctx.shapes):
            sizes.update(zip(labels, shape))
        need = ctx.needs_input_grad
        return tuple(_operand_grad(grad, operands, in_labels, out_labels, k, sizes) if need[k] else None
                     for k in range(len(in_labels)))


@functools.lru_cache(maxsize=4096)
def _equation(in_labels, out_labels):
    """The letter equation for integer labels, naming labels by letters in order of first use."""
    letters = {}
    terms = [_word(labels, letters) for labels in in_labels]
    return ",".join(terms) + "->" + _word(out_labels, letters)


def _word(labels, letters):
    """The subscript string for ``labels``, naming each label by a letter in order of first use."""
    chars = []
    for label in labels:
        c = letters.get(label)
        if c is None:
            if len(letters) == len(_LETTERS):
                raise RuntimeError("einsum(): too many subscripts (at most 52 distinct subscripts are supported)")
            c = letters[label] = _LETTERS[len(letters)]
        chars.append(c)
    return "".join(chars)


def _operand_grad(grad, operands, in_labels, out_labels, k, sizes):
    """Gradient of an einsum with respect to operand ``k`` (written with einsum, so differentiable)."""
    labels = in_labels[k]
    unique = list(dict.fromkeys(labels))
    others = [operands[j] for j in range(len(in_labels)) if j != k]
    other_labels = [in_labels[j] for j in range(len(in_labels)) if j != k]
    present = set(out_labels).union(*other_labels)
    kept = [label for label in unique if label in present]
    if others or list(out_labels) != kept:
        g = einsum_labels([grad] + others, [out_labels] + other_labels, kept)
    else:
        g = grad
    if len(kept) < len(unique):
        # Labels found only in this operand: the output is constant along them.
        g = g.reshape(tuple(sizes[label] if label in present else 1 for label in unique))
        g = g.expand(tuple(sizes[label] for label in unique))
    if len(unique) < len(labels):
        g = _scatter_diagonals(g, labels, unique, sizes)
    return g


def _scatter_diagonals(g, labels, unique, sizes):
    """``g`` (one dim per distinct label) written onto the diagonals of the repeated labels, zeros elsewhere."""
    fresh = max(max(labels), _ELLIPSIS) + 1
    groups = {}
    target = []
    for label in labels:
        group = groups.get(label)
        if group is None:
            groups[label] = [label]
            target.append(label)
        else:
            group.append(fresh)
            target.append(fresh)
            fresh += 1
    deltas, delta_labels = [], []
    for label, group in groups.items():
        if len(group) > 1:
            deltas.append(_identity(len(group), sizes[label], g))
            delta_labels.append(group)
    return einsum_labels([g] + deltas, [unique] + delta_labels, target)


def _identity(rank, n, like):
    """A constant tensor of shape ``(n,) * rank``: one where all indices are equal, zero elsewhere."""
    from .creation import as_tensor
    host = np.zeros((n,) * rank, dtype=like._dtype.np)
    idx = np.arange(n)
    host[(idx,) * rank] = 1
    return as_tensor(host, device=like._device)


def einsum_labels(operands, in_labels, out_labels):
    """einsum on integer labels (no parsing; sizes already consistent)."""
    return apply(EinsumBackward0, *operands, in_labels=tuple(tuple(x) for x in in_labels),
                 out_labels=tuple(out_labels))


# ---------------------------------------------------------------- parsing
def _parse_equation(equation, operands):
    """``(labels per operand, output labels or None for implicit)``; '...' stays as a marker."""
    eq = equation.replace(" ", "")
    arrow = eq.find("->")
    lhs, rhs = (eq, None) if arrow < 0 else (eq[:arrow], eq[arrow + 2:])
    for i, c in enumerate(equation):
        if c in _LABEL_OF or c in ". ,":
            continue
        if c == "-" and equation[i + 1:i + 2] == ">" or c == ">" and equation[i - 1:i] == "-" and i > 0:
            continue
        raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, "
                           f"subscripts must be in [a-zA-Z]")
    if rhs is not None and ("-" in rhs or ">" in rhs):
        bad = equation.rfind("-") if "-" in rhs else equation.rfind(">")
        raise RuntimeError(f"einsum(): invalid subscript given at index {bad} in the equation string, "
                           f"subscripts must be in [a-zA-Z]")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    in_labels = [_parse_term(term, f"for operand {k}") for k, term in enumerate(terms)]
    out_labels = None if rhs is None else _parse_term(rhs, "for output")
    return in_labels, out_labels


def _parse_term(term, where):
    labels = []
    i = 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if _ELLIPSIS_MARK in labels:
                raise RuntimeError(f"einsum(): found '.' {where} for which an ellipsis was already found")
            if term[i:i + 3] != "...":
                raise RuntimeError(f"einsum(): found '.' {where} that is not part of any ellipsis")
            labels.append(_ELLIPSIS_MARK)
            i += 3
        else:
            labels.append(_LABEL_OF[c])
            i += 1
    return labels


def _parse_sublists(args):
    """The sublist form ``einsum(op0, sub0, op1, sub1, ..., [out])``."""
    operands, in_labels = [], []
    i = 0
    while i + 1 < len(args):
        operands.append(args[i])
        in_labels.append(_sublist_labels(args[i + 1]))
        i += 2
    out_labels = _sublist_labels(args[i]) if i < len(args) else None
    return operands, in_labels, out_labels


def _sublist_labels(sublist):
    labels = []
    for s in sublist:
        if s is Ellipsis:
            labels.append(_ELLIPSIS_MARK)
        elif isinstance(s, (int, np.integer)) and not isinstance(s, bool):
            if not 0 <= s < _ELLIPSIS:
                raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
            labels.append(int(s))
        else:
            raise TypeError(f"einsum(): subscript lists may only hold integers and Ellipsis, got "
                            f"{type(s).__name__}")
    return labels


def _label_name(label):
    return _LETTERS[label] if label < _ELLIPSIS else "..."


def _expand_ellipses(operands, in_labels, out_labels):
    """Replace '...' by labels for the dimensions it covers (right-aligned across operands)."""
    ell_ndim = 0
    counts = []
    for k, (t, labels) in enumerate(zip(operands, in_labels)):
        ndim = t._data.ndim
        named = len(labels) - (_ELLIPSIS_MARK in labels)
        if _ELLIPSIS_MARK in labels:
            if named > ndim:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) is more than "
                                   f"the number of dimensions ({ndim}) for operand {k}")
            counts.append(ndim - named)
            ell_ndim = max(ell_ndim, ndim - named)
        else:
            if named != ndim:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) does not "
                                   f"match the number of dimensions ({ndim}) for operand {k} and no ellipsis "
                                   f"was given")
            counts.append(0)
    expanded = []
    for labels, count in zip(in_labels, counts):
        expanded.append(_splice(labels, range(_ELLIPSIS + ell_ndim - count, _ELLIPSIS + ell_ndim)))
    ell_labels = range(_ELLIPSIS, _ELLIPSIS + ell_ndim)
    if out_labels is None:
        counted = {}
        for labels in expanded:
            for label in labels:
                counted[label] = counted.get(label, 0) + 1
        out_labels = list(ell_labels) + sorted(
            label for label, n in counted.items() if n == 1 and label < _ELLIPSIS)
    else:
        seen = set()
        every = set().union(*expanded)
        for label in out_labels:
            if label == _ELLIPSIS_MARK:
                continue
            if label in seen:
                raise RuntimeError(f"einsum(): output subscript {_label_name(label)} appears more than once in "
                                   f"the output")
            if label not in every:
                raise RuntimeError(f"einsum(): output subscript {_label_name(label)} does not appear in the "
                                   f"equation for any input operand")
            seen.add(label)
        out_labels = _splice(out_labels, ell_labels)
    return expanded, out_labels


def _splice(labels, ell_labels):
    if _ELLIPSIS_MARK not in labels:
        return list(labels)
    i = labels.index(_ELLIPSIS_MARK)
    return list(labels[:i]) + list(ell_labels) + list(labels[i + 1:])


def _broadcast_sizes(operands, in_labels):
    """The size of every label; checks repeats within an operand and broadcasting across operands."""
    sizes = {}
    for k, (t, labels) in enumerate(zip(operands, in_labels)):
        shape = t._data.shape
        own = {}
        for label, s in zip(labels, shape):
            prev = own.get(label)
            if prev is not None and prev != s:
                raise RuntimeError(f"einsum(): subscript {_label_name(label)} is repeated for operand {k} but the "
                                   f"sizes don't match, {prev} != {s}")
            own[label] = s
        for label, s in own.items():
            prev = sizes.get(label)
            if prev is None or prev == 1:
                sizes[label] = s
            elif s != prev and s != 1:
                raise RuntimeError(f"einsum(): subscript {_label_name(label)} has size {s} for operand {k} which "
                                   f"does not broadcast with previously seen size {prev}")
    return sizes


_PLANS = {}   # (equation, operand shapes) -> plan; parsing costs more than a small einsum


def einsum(*args):
    """Sums the product of the operands' elements over the subscripts not in the output.

    ``einsum("ij,jk->ik", a, b)``; the operands may also be passed as one list, or in the
    sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])``. '...' covers broadcast dimensions,
    a subscript repeated within an operand takes its diagonal, and without '->' the output
    holds the subscripts that appear once, in alphabetical order.
    """
    if not args or (isinstance(args[0], str) and len(args) == 1):
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    if isinstance(args[0], str):
        operands = args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
        if not operands:
            raise ValueError("einsum(): must specify the equation string and at least one operand, or at least "
                             "one operand and its subscripts list")
        _check_operands(operands)
        key = (args[0],) + tuple([t._data.shape for t in operands])
        plan = _PLANS.get(key)
        if plan is None:
            in_labels, out_labels = _parse_equation(args[0], operands)
            plan = _plan(operands, in_labels, out_labels)
            if len(_PLANS) >= 1024:
                _PLANS.clear()
            _PLANS[key] = plan
    else:
        operands, in_labels, out_labels = _parse_sublists(args)
        _check_operands(operands)
        plan = _plan(operands, in_labels, out_labels)
    in_labels, out_labels, shapes, sums = plan
    first = operands[0]._dtype
    for t in operands[1:]:
        if t._dtype is not first:
            raise RuntimeError(f"expected scalar type {SCALAR_NAME[first]} but found {SCALAR_NAME[t._dtype]}")
    operands = [t if shape is None else t.reshape(shape) for t, shape in zip(operands, shapes)]
    if sums and len(operands) == 1 and first._category < 2 and first is not _dtype.int64:
        operands[0] = operands[0].to(_dtype.int64)   # a sum of small integers gives int64, as in PyTorch
    return apply(EinsumBackward0, *operands, in_labels=in_labels, out_labels=out_labels)


def _check_operands(operands):
    for k, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): operand {k} must be a Tensor, not {type(t).__name__}")


def _plan(operands, in_labels, out_labels):
    """``(labels per operand, output labels, new shape per operand or None, whether labels are summed)``:
    ellipses expanded, sizes checked, size-1 dimensions that broadcast squeezed out."""
    in_labels, out_labels = _expand_ellipses(operands, in_labels, out_labels)
    sizes = _broadcast_sizes(operands, in_labels)
    shapes = []
    for k, (t, labels) in enumerate(zip(operands, in_labels)):
        shape = t._data.shape
        keep = [d for d, label in enumerate(labels) if shape[d] == sizes[label]]
        if len(keep) < len(labels):
            shapes.append(tuple(shape[d] for d in keep))
            in_labels[k] = [labels[d] for d in keep]
        else:
            shapes.append(None)
    sums = not set().union(*in_labels) <= set(out_labels)
    return tuple(tuple(x) for x in in_labels), tuple(out_labels), shapes, sums


@autocast_function("tensordot")
def tensordot(a, b, dims=2, out=None):
    """Contracts ``dims`` of ``a`` with ``dims`` of ``b``: an int (the last ``dims`` of ``a`` with the
    first of ``b``) or a pair of dimension lists."""
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, Tensor):
            raise TypeError(f"tensordot(): argument '{name}' must be Tensor, not {type(t).__name__}")
    dims_a, dims_b = _tensordot_dims(a, b, dims)
    shown = -a._data.ndim if isinstance(dims, (int, np.integer)) else 0   # PyTorch names int dims from the end
    if a._dtype is not b._dtype:
        raise RuntimeError("both inputs should have same dtype")
    labels_a = list(range(a._data.ndim))
    labels_b = [None] * b._data.ndim
    for da, db in zip(dims_a, dims_b):
        sa, sb = a._data.shape[da], b._data.shape[db]
        if sa != sb:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} in dim {da + shown} and "
                               f"second has size {sb} in dim {db}")
        labels_b[db] = da
    fresh = a._data.ndim
    for i, label in enumerate(labels_b):
        if label is None:
            labels_b[i] = fresh
            fresh += 1
    out_labels = [labels_a[i] for i in range(a._data.ndim) if i not in dims_a] + \
        [labels_b[i] for i in range(b._data.ndim) if i not in dims_b]
    return write_out(einsum_labels([a, b], [labels_a, labels_b], out_labels), out)


def _tensordot_dims(a, b, dims):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a._data.ndim, b._data.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        na = a._data.ndim
        return list(range(na - dims, na)), list(range(dims))
    if not (isinstance(dims, (list, tuple)) and len(dims) == 2):
        raise RuntimeError(f"tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           f"containing two lists, but got dims={dims}")
    first, second = dims
    if isinstance(first, (int, np.integer)):
        first = [first]
    if isinstance(second, (int, np.integer)):
        second = [second]
    if len(first) != len(second):
        raise RuntimeError("both dimension lists should have same length")
    dims_a = [a._wrap_dim(int(d)) for d in first]
    dims_b = [b._wrap_dim(int(d)) for d in second]
    for name, ds in (("first", dims_a), ("second", dims_b)):
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"tensordot: the {name} dimension list {ds} contains a dimension more than once")
    return dims_a, dims_b
