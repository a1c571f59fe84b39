"""Argument generators for sparse COO tensors (``sig(b) -> (args, kwargs)``, as in :mod:`_op_specs`).

Sparse results are compared through ``to_dense()`` (see ``_runner.to_plain``)."""
from ._specs_common import _kw


def _indices(b, sizes, nnz):
    """Source of a (len(sizes), nnz) int64 index leaf within ``sizes`` (repeats allowed)."""
    import numpy as np
    values = np.stack([b.rng.integers(0, max(s, 1), nnz) for s in sizes]) if nnz else np.zeros((len(sizes), 0))
    return b.tensor((len(sizes), nnz), "int64", grad=False, layout="contiguous", values=values)


def _sparse_source(b, sizes, dense_shape=(), dtype=None):
    nnz = b.int_in(0, 6) if all(sizes) else 0
    indices = _indices(b, sizes, nnz)
    values = b.tensor((nnz,) + tuple(dense_shape), dtype or b.choice(["float32", "float64"]))
    return indices, values


def sparse_coo_tensor(b):
    sizes = tuple(b.int_in(1, 4) for _ in range(b.int_in(1, 3)))
    dense = (b.int_in(1, 3),) if b.chance(0.3) else ()
    indices, values = _sparse_source(b, sizes, dense)
    size = repr(sizes + dense) if b.chance(0.8) else None
    return [indices, values] + ([size] if size else []), {}


def spmm(b):
    n, k, m = b.int_in(1, 4), b.int_in(1, 4), b.int_in(1, 3)
    dtype = b.choice(["float32", "float64"])
    indices, values = _sparse_source(b, (n, k), dtype=dtype)
    dense = b.tensor((k, m), dtype if b.chance(0.95) else "float16")
    return [f"T.sparse_coo_tensor({indices}, {values}, ({n}, {k}))", dense], {}


def to_sparse(b):
    x = b.tensor(pool=("float32", "float64", "int64", "bool"), min_ndim=1, max_ndim=3)
    ndim = len(b.shapes[x])
    return [x], _kw(sparse_dim=str(b.int_in(1, ndim)) if b.chance(0.3) else None)


EXPLICIT = {"sparse_coo_tensor": sparse_coo_tensor, "spmm": spmm, "to_sparse": to_sparse, "to_sparse_coo": to_sparse}
