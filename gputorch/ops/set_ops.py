"""Set-like ops: unique, unique_consecutive, isin.

Values are grouped by sorting (``unique``) or by comparing neighbours (``unique_consecutive``);
NaN never equals NaN, so every NaN is its own group, as in PyTorch. With ``dim`` the groups are
whole slices along ``dim``, ordered lexicographically. The values output of ``unique`` records a
graph node, but like PyTorch's it has no derivative.
"""
import numpy as np

from .. import _dtype
from .._dispatch import apply
from .._tensor import Tensor
from ..autograd.node import Node
from ._common import check_operand, operand_arrays, xp_of
from .registry import tensor_method

__all__ = ["unique", "unique_consecutive", "isin"]


# ---------------------------------------------------------------------------- grouping on arrays
def _group_starts(xp, rows):
    """Boolean mask over the leading axis of ``rows`` (n, ...): True where a new run begins."""
    n = rows.shape[0]
    starts = xp.ones((n,), dtype=bool)
    if n > 1:
        differs = rows[1:] != rows[:-1]
        if differs.ndim > 1:
            differs = differs.reshape(n - 1, -1).any(axis=1)
        starts[1:] = differs
    return starts


def _runs(xp, rows, starts):
    """``(values, group_of_each_row, counts)`` for the runs of ``rows`` that begin at ``starts``."""
    n = rows.shape[0]
    group = xp.cumsum(starts.astype(xp.int64)) - 1
    first = xp.nonzero(starts)[0]
    ends = xp.concatenate([first[1:], xp.asarray([n], dtype=first.dtype)]) if n else first
    return rows[first], group, (ends - first).astype(xp.int64)


def _lexsort_rows(xp, rows):
    """Stable order of the rows of the 2-d array ``rows``, comparing column 0 first."""
    order = xp.arange(rows.shape[0])
    for col in range(rows.shape[1] - 1, -1, -1):
        order = order[xp.argsort(rows[order, col], kind="stable")]
    return order


def _check_dim(a, dim):
    """``dim`` wrapped to a non-negative axis; PyTorch's IndexError for a 0-d input."""
    if a._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return a._wrap_dim(dim)


def _as_rows(x, dim):
    """``x`` with ``dim`` moved first and the rest flattened: (n, m)."""
    if x.size == 0:
        if x.shape[dim]:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
        if x.shape.count(0) > 1:
            raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
    moved = x if dim == 0 else x.swapaxes(0, dim)
    n = moved.shape[0]
    m = 1
    for size in moved.shape[1:]:
        m *= size
    return moved, moved.reshape(n, m)


def _restore(moved_values, dim):
    return moved_values if dim == 0 else moved_values.swapaxes(0, dim)


class _NoDerivative(Node):
    """A node whose values output is recorded but cannot be differentiated (PyTorch's behaviour)."""
    torch_name = ""

    def backward(ctx, *grads):
        raise NotImplementedError(f"the derivative for '{ctx.torch_name}' is not implemented.")


class Unique2Backward0(_NoDerivative):
    """Sorted unique values of the flattened input, inverse indices (input's shape) and counts."""
    torch_name = "_unique2"

    def forward(ctx, a):
        xp = xp_of(a)
        x = a._data
        flat = x.reshape(-1)
        order = xp.argsort(flat, kind="stable")
        ordered = flat[order]
        values, group, counts = _runs(xp, ordered, _group_starts(xp, ordered))
        inverse = xp.empty(flat.shape, dtype=xp.int64)
        inverse[order] = group
        return values, inverse.reshape(x.shape), counts


class UniqueDimBackward0(_NoDerivative):
    """Unique slices along ``dim`` in lexicographic order, the inverse (one per slice) and counts."""
    torch_name = "unique_dim"

    def forward(ctx, a, dim):
        xp = xp_of(a)
        moved, rows = _as_rows(a._data, dim)
        order = _lexsort_rows(xp, rows)
        starts = _group_starts(xp, rows[order])
        _, group, counts = _runs(xp, rows[order], starts)
        first = order[xp.nonzero(starts)[0]]
        inverse = xp.empty((rows.shape[0],), dtype=xp.int64)
        inverse[order] = group
        return _restore(moved[first], dim), inverse, counts


class UniqueConsecutiveBackward0(_NoDerivative):
    """The first of each run of equal elements (or slices along ``dim``), inverse and counts."""
    torch_name = "unique_consecutive"

    def forward(ctx, a, dim):
        xp = xp_of(a)
        x = a._data
        if dim is None:
            flat = x.reshape(-1)
            values, group, counts = _runs(xp, flat, _group_starts(xp, flat))
            return values, group.reshape(x.shape), counts
        moved, rows = _as_rows(x, dim)
        starts = _group_starts(xp, rows)
        _, group, counts = _runs(xp, rows, starts)
        return _restore(moved[xp.nonzero(starts)[0]], dim), group, counts


def _select(values, inverse, counts, return_inverse, return_counts):
    if return_inverse and return_counts:
        return values, inverse, counts
    if return_inverse:
        return values, inverse
    if return_counts:
        return values, counts
    return values


@tensor_method("unique")
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of ``input`` (flattened, 1-d result), or with ``dim`` its distinct
    slices along ``dim``. Always sorted ascending (as PyTorch on CPU, also for ``sorted=False``).

    ``return_inverse``: for each element (shape of ``input``; with ``dim``, one per slice) the
    index of its value in the result. ``return_counts``: how often each result value occurs.
    Returns the tensor alone, or a tuple ``(output[, inverse][, counts])``.
    """
    if dim is None:
        values, inverse, counts = apply(Unique2Backward0, input)
    else:
        values, inverse, counts = apply(UniqueDimBackward0, input, _check_dim(input, dim))
    return _select(values, inverse, counts, return_inverse, return_counts)


@tensor_method("unique_consecutive")
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``input`` with each run of consecutive equal elements (or slices along ``dim``) reduced
    to one; ``inverse`` and ``counts`` as in :func:`unique`."""
    d = None if dim is None else _check_dim(input, dim)
    values, inverse, counts = apply(UniqueConsecutiveBackward0, input, d)
    return _select(values, inverse, counts, return_inverse, return_counts)


# ---------------------------------------------------------------------------- isin
def _compares_pairwise(n_elements, n_test):
    """Whether PyTorch tests membership by comparing every pair (few test elements) rather
    than by sorting."""
    return n_test < int(np.float32(10.0) * (float(n_elements) ** 0.145))


class IsinBackward(Node):
    """Membership test in the promoted dtype of both operands (not differentiable).

    Three ways, as PyTorch: every pair compared (few test elements); with ``assume_unique``,
    both sets sorted together, an element being found when its sorted neighbour equals it
    (so duplicates give PyTorch's answers); otherwise a binary search in the sorted test set.
    """

    def forward(ctx, e, t, invert, assume_unique):
        xp = xp_of(e if isinstance(e, Tensor) else t)
        ex, tx, _ = operand_arrays(e, t)
        ex = xp.asarray(ex) if not hasattr(ex, "shape") else ex
        if not isinstance(t, Tensor):
            return (ex != tx) if invert else (ex == tx)
        flat, tflat = ex.reshape(-1), tx.reshape(-1)
        if _compares_pairwise(flat.size, tflat.size):
            found = (flat[:, None] == tflat[None, :]).any(axis=1)
        elif assume_unique:
            joined = xp.concatenate([flat, tflat])
            order = xp.argsort(joined, kind="stable")
            ordered = joined[order]
            marks = xp.zeros(joined.shape, dtype=bool)
            marks[:-1] = ordered[1:] == ordered[:-1]
            hit = xp.empty(joined.shape, dtype=bool)
            hit[order] = marks
            found = hit[:flat.size]
        elif tflat.size == 0:
            found = xp.zeros(flat.shape, dtype=bool)
        else:
            ordered = xp.sort(tflat)
            pos = xp.minimum(xp.searchsorted(ordered, flat), ordered.size - 1)
            found = ordered[pos] == flat
        found = found.reshape(ex.shape)
        return ~found if invert else found


def _is_dense(t):
    """Whether ``t``'s elements fill its memory without gaps or overlaps (any dim order)."""
    pairs = sorted((st, sz) for st, sz in zip(t.stride(), t._data.shape) if sz != 1)
    expected = 1
    for st, sz in pairs:
        if st != expected:
            return False
        expected *= sz
    return True


def _isin_error(elements, test_elements):
    kinds = ["Tensor" if isinstance(v, Tensor) else type(v).__name__ for v in (elements, test_elements)]
    return TypeError(f"isin() received an invalid combination of arguments - got ({', '.join(kinds)}), "
                     "but expected (Tensor elements, Tensor test_elements), (Number element, Tensor "
                     "test_elements) or (Tensor elements, Number test_element)")


def isin(elements, test_elements, *, assume_unique=False, invert=False, out=None):
    """Bool tensor of ``elements``' shape: whether each element occurs in ``test_elements``
    (either side may be a Python number, not both). Both are compared in their promoted dtype."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise _isin_error(elements, test_elements)
    for v, arg in ((elements, "elements"), (test_elements, "test_elements")):
        check_operand("isin", v, arg)
        if (v._dtype.name if isinstance(v, Tensor) else type(v).__name__) == "bool":
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    if isinstance(test_elements, Tensor):
        n_elements = elements._data.size if isinstance(elements, Tensor) else 1
        if _compares_pairwise(n_elements, test_elements._data.size):
            # PyTorch flattens the test elements as a view here, after a cast that keeps a
            # dense layout's strides: a permuted layout that cannot be flattened fails.
            same_dtype = _dtype.result_dtype((elements, test_elements)) is test_elements._dtype
            if same_dtype or _is_dense(test_elements):
                test_elements.view(-1)
    result = apply(IsinBackward, elements, test_elements, bool(invert), bool(assume_unique))
    if out is not None:
        from ._reducing import write_results
        return write_results(result, out)
    return result
