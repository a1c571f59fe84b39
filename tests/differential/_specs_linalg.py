"""Generators for linear-algebra ops (matmul family, det, einsum, ...)."""
from ._inputs import FLOAT_DTYPES
from ._specs_common import _kw


# ------------------------------------------------------------ linear algebra
def _mat_dtype(b):
    return b.dtype(FLOAT_DTYPES) if b.chance(0.8) else b.dtype()


def matmul(b):
    dtype = _mat_dtype(b)
    n, k, m = b.int_in(0, 4), b.int_in(1, 4), b.int_in(1, 4)
    left_kind, right_kind = b.int_in(1, 4), b.int_in(1, 4)
    batch = b.shape(max_ndim=2, max_numel=6)
    def operand(kind, rows, cols, vector_len):
        if kind == 1:
            return (vector_len,)
        return tuple(batch[len(batch) - min(kind - 2, len(batch)):]) + (rows, cols)
    left = operand(left_kind, n, k, k)
    right = operand(right_kind, k, m, k)
    if b.chance(0.05):
        right = (k + 1, m)
    x = b.tensor(left, dtype)
    return [x, b.tensor(right, dtype if b.chance(0.9) else None)], {}


def mm(b):
    dtype = _mat_dtype(b)
    n, k, m = b.int_in(0, 4), b.int_in(0, 4), b.int_in(1, 4)
    return [b.tensor((n, k), dtype), b.tensor((k if b.chance(0.95) else k + 1, m), dtype)], {}


def bmm(b):
    dtype = _mat_dtype(b)
    bs, n, k, m = b.int_in(0, 3), b.int_in(1, 3), b.int_in(1, 3), b.int_in(1, 3)
    return [b.tensor((bs, n, k), dtype), b.tensor((bs, k, m), dtype)], {}


def mv(b):
    dtype = _mat_dtype(b)
    n, k = b.int_in(0, 4), b.int_in(1, 4)
    return [b.tensor((n, k), dtype), b.tensor((k,), dtype)], {}


def vector_pair(b):
    """``dot``/``vdot``/``outer``/``ger``: two 1-d tensors."""
    dtype = _mat_dtype(b)
    n = b.int_in(0, 5)
    return [b.tensor((n,), dtype), b.tensor((n if b.chance(0.95) else n + 1,), dtype)], {}


def outer(b):
    dtype = _mat_dtype(b)
    return [b.tensor((b.int_in(0, 4),), dtype), b.tensor((b.int_in(1, 4),), dtype)], {}


def inner(b):
    dtype = _mat_dtype(b)
    k = b.int_in(1, 3)
    x = b.tensor(b.shape(max_ndim=2, max_numel=6) + (k,), dtype)
    return [x, b.tensor(b.shape(max_ndim=2, max_numel=6) + (k,), dtype)], {}


def kron(b):
    return [b.tensor(b.shape(max_ndim=3, max_numel=8), _mat_dtype(b)),
            b.tensor(b.shape(max_ndim=3, max_numel=8))], {}


def addmm(b):
    dtype = _mat_dtype(b)
    n, k, m = b.int_in(1, 3), b.int_in(1, 3), b.int_in(1, 3)
    x = b.tensor(_input_shape(b, (n, m)), dtype)
    return [x, b.tensor((n, k), dtype), b.tensor((k, m), dtype)], _beta_alpha(b)


def addmv(b):
    dtype = _mat_dtype(b)
    n, k = b.int_in(1, 3), b.int_in(1, 3)
    return [b.tensor(_input_shape(b, (n,)), dtype), b.tensor((n, k), dtype), b.tensor((k,), dtype)], _beta_alpha(b)


def addr(b):
    dtype = _mat_dtype(b)
    n, m = b.int_in(1, 3), b.int_in(1, 3)
    return [b.tensor(_input_shape(b, (n, m)), dtype), b.tensor((n,), dtype), b.tensor((m,), dtype)], _beta_alpha(b)


def addbmm(b):
    dtype = _mat_dtype(b)
    bs, n, k, m = b.int_in(1, 3), b.int_in(1, 3), b.int_in(1, 3), b.int_in(1, 3)
    return [b.tensor(_input_shape(b, (n, m)), dtype), b.tensor((bs, n, k), dtype),
            b.tensor((bs, k, m), dtype)], _beta_alpha(b)


def baddbmm(b):
    dtype = _mat_dtype(b)
    bs, n, k, m = b.int_in(1, 3), b.int_in(1, 3), b.int_in(1, 3), b.int_in(1, 3)
    return [b.tensor(_input_shape(b, (bs, n, m)), dtype), b.tensor((bs, n, k), dtype),
            b.tensor((bs, k, m), dtype)], _beta_alpha(b)


def _input_shape(b, shape):
    """The ``input`` of addmm-like ops: the full result shape (in-place works) or a broadcastable one."""
    return tuple(shape) if b.chance(0.6) else b.broadcast_partner(tuple(shape))


def _beta_alpha(b):
    return _kw(beta=b.choice(["0", "0.5", "1", None, None]), alpha=b.choice(["2", "-1.5", None, None]))


def square_matrix(b):
    """``det``/``inverse``: batches of square matrices (diagonally dominant mostly)."""
    n = b.int_in(0, 4)
    batch = b.shape(max_ndim=2, max_numel=4)
    return [b.tensor(batch + (n, n if b.chance(0.95) else n + 1), _mat_dtype(b))], {}


def trace(b):
    return [b.tensor(b.shape(min_ndim=2, max_ndim=2) if b.chance(0.9) else None, _mat_dtype(b))], {}


def einsum(b):
    dtype = _mat_dtype(b)
    i, j, k = b.int_in(1, 3), b.int_in(1, 3), b.int_in(1, 3)
    equation, shapes = b.choice([
        ("'ij,jk->ik'", [(i, j), (j, k)]), ("'ij->ji'", [(i, j)]), ("'ii->i'", [(i, i)]),
        ("'ij->'", [(i, j)]), ("'i,i->'", [(i,), (i,)]), ("'bij,bjk->bik'", [(k, i, j), (k, j, i)]),
        ("'...ij->...ji'", [(k, i, j)]), ("'i,j->ij'", [(i,), (j,)]), ("'ij,ij->i'", [(i, j), (i, j)]),
    ])
    return [equation] + [b.tensor(s, dtype) for s in shapes], {}


def tensordot(b):
    dtype = _mat_dtype(b)
    i, j, k = b.int_in(1, 3), b.int_in(1, 3), b.int_in(1, 3)
    x = b.tensor((i, j, k), dtype)
    choice = b.int_in(0, 2)
    if choice == 0:
        return [x, b.tensor((j, k, 2), dtype)], {"dims": "2"}
    if choice == 1:
        return [x, b.tensor((k, i), dtype)], {"dims": "([2, 0], [0, 1])"}
    return [x, b.tensor((2, 3), dtype)], {"dims": "0"}
