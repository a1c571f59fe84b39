"""Index patterns over a grid: tril_indices and triu_indices (the coordinates of a matrix's lower or
upper triangle), unravel_index (flat indices to coordinates), cartesian_prod (every tuple of one
element from each input) and combinations (every sorted r-tuple of an input's elements).

cartesian_prod and combinations are composites of view, copy and indexing ops (so differentiable).
"""
import itertools

import numpy as np

from ... import _dtype
from ..._tensor import Tensor
from .grids import meshgrid
from .joining import stack

__all__ = ["tril_indices", "triu_indices", "unravel_index", "cartesian_prod", "combinations"]


def _triangle_indices(name, row, col, offset, dtype, device, upper):
    from ..creation import tensor
    row, col, offset = int(row), int(col), int(offset)
    for arg, value in (("row", row), ("col", col)):
        if value < 0:
            raise RuntimeError(f"{arg} must be non-negative, got{value}")
    dtype = _dtype.int64 if dtype is None else _dtype.to_dtype(dtype)
    if dtype not in (_dtype.int32, _dtype.int64):
        raise NotImplementedError(f'"{name}" not implemented for \'{_dtype.legacy_name(dtype)}\'')
    # The triangle's coordinates in row-major order; host integers, copied to the device once.
    pick = np.triu_indices if upper else np.tril_indices
    rows, cols = pick(row, offset, col)
    return tensor(np.stack([rows, cols]).reshape(2, -1), dtype=dtype, device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The ``(2, N)`` coordinates (row-major order) of the lower triangle of a ``row x col`` matrix:
    the entries on and below diagonal ``offset`` (0 the main diagonal, > 0 above it)."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, False)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The ``(2, N)`` coordinates (row-major order) of the upper triangle of a ``row x col`` matrix:
    the entries on and above diagonal ``offset``."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, True)


def unravel_index(indices, shape):
    """The coordinates, in a tensor of shape ``shape``, of the flat (row-major) ``indices``: a tuple of
    int64 tensors shaped like ``indices``, one per dim. Indices wrap around as in PyTorch (-1 is
    the last element)."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a Tensor, but got {type(indices).__name__}")
    if indices._dtype._category != 1:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices._dtype}")
    shape = (int(shape),) if isinstance(shape, int) else tuple(int(n) for n in shape)
    if [n for n in shape if n < 0]:
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if 0 in shape:
        raise RuntimeError(f"unravel_index: cannot unravel into shape {shape}, which has no elements")
    flat = indices.long()
    coordinates = []
    for n in reversed(shape):
        coordinates.append(flat % n)
        flat = flat // n
    return tuple(reversed(coordinates))


def _check_vector(t):
    if not isinstance(t, Tensor):
        raise TypeError(f"expected Tensor, but got {type(t).__name__}")
    if t._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")


def cartesian_prod(*tensors):
    """For 1-D tensors of sizes ``n1, ..., nk``: the ``(n1 * ... * nk, k)`` tensor of all their
    element tuples, the last input varying fastest (one input: that tensor itself)."""
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        _check_vector(t)
    if len(tensors) == 1:
        return tensors[0]
    if any(t._dtype is not tensors[0]._dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """For a 1-D tensor of ``n`` elements: the ``(C, r)`` tensor of its r-element combinations in
    lexicographic order of positions (with ``with_replacement``, positions may repeat). ``r=0``
    gives an empty 1-D tensor."""
    from ..creation import tensor
    _check_vector(input)
    r = int(r)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    n = input._data.shape[0]
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    picks = np.array(list(pick(range(n), r)), dtype=np.int64).reshape(-1)
    positions = tensor(picks, dtype=_dtype.int64, device=input._device)
    return input.index_select(0, positions).reshape(-1, r)
