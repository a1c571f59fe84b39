"""Argument generators for ops added to the op table with the API-surface work: matrix functions
(cholesky family, matrix powers and exponentials, log-determinants), gamma-family functions with an
order argument, grids, repeats and truth values (``sig(b) -> (args, kwargs)``, as in
:mod:`_op_specs`)."""
import numpy as np

from ._inputs import ALL_DTYPES, FLOAT_DTYPES
from ._specs_common import _kw
from ._specs_linalg import _mat_dtype, square_matrix


def _spd(b, n, batch, dtype):
    """Symmetric positive-definite matrices ``A A^T + n I`` (..., n, n) as a leaf."""
    a = b.rng.standard_normal(batch + (n, n)).round(2)
    spd = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    # an integer dtype (drawn to test the refusal) gets values every integer dtype can hold
    values = spd.round(3) if dtype in FLOAT_DTYPES else np.abs(spd).round()
    return b.tensor(batch + (n, n), dtype, values=values, layout="contiguous")


def cholesky(b):
    n, batch = b.int_in(0, 4), b.shape(max_ndim=2, max_numel=4)
    return [_spd(b, n, batch, _mat_dtype(b))], _kw(upper="True" if b.chance(0.3) else None)


def _lower_factor(b, n, batch, dtype):
    tri = np.tril(b.rng.standard_normal(batch + (n, n)).round(2), -1) + np.eye(n) * b.rng.uniform(0.5, 2, n).round(2)
    return b.tensor(batch + (n, n), dtype, values=tri, layout="contiguous")


def cholesky_solve(b):
    n, batch, dtype = b.int_in(1, 4), b.shape(max_ndim=1, max_numel=3), b.dtype(FLOAT_DTYPES)
    rhs = b.tensor(batch + (n, b.int_in(1, 3)), dtype)
    return [rhs, _lower_factor(b, n, batch, dtype)], {}


def cholesky_inverse(b):
    n = b.int_in(1, 4)
    return [_lower_factor(b, n, (), b.dtype(FLOAT_DTYPES))], {}


def matrix_power(b):
    args, _ = square_matrix(b)
    return args + [str(b.int_in(-2, 5))], {}


def polygamma(b):
    x = b.tensor(pool=FLOAT_DTYPES if b.chance(0.9) else ALL_DTYPES)
    return [str(b.int_in(0, 3)), x], {}


def polygamma_(b):
    return [b.tensor(dtype=b.dtype(FLOAT_DTYPES), grad=False), str(b.int_in(0, 3))], {}


def mvlgamma(b):
    p = b.int_in(1, 3)
    shape = b.shape(max_ndim=3)
    values = b.rng.uniform((p - 1) / 2 + 0.1, 6, shape).round(2)
    return [b.tensor(shape, b.dtype(FLOAT_DTYPES), values=values), str(p)], {}


def mvlgamma_(b):
    args, kwargs = mvlgamma(b)
    return args, kwargs


def meshgrid(b):
    tensors = [b.tensor((b.int_in(0, 3),) if b.chance(0.9) else (), "float32" if b.chance(0.5) else "int64")
               for _ in range(b.int_in(1, 3))]
    kwargs = _kw(indexing=b.choice(["'ij'", "'xy'"]) if b.chance(0.9) else None)
    return tensors, kwargs


def repeat_interleave(b):
    x = b.tensor(b.shape(max_ndim=3))
    shape = b.shapes[x]
    if shape and b.chance(0.5):
        dim = b.int_in(-len(shape), len(shape) - 1)
        counts = b.rng.integers(0, 3, shape[dim])
        return [x, b.tensor((shape[dim],), "int64", values=counts, grad=False)], {"dim": str(dim)}
    return [x, str(b.int_in(0, 3))], _kw(dim=str(b.dim(len(shape))) if shape and b.chance(0.5) else None)


def is_nonzero(b):
    """Mostly one-element tensors (the others raise)."""
    return [b.tensor((1,) * b.int_in(0, 2) if b.chance(0.8) else None)], {}


SPECS = {
    "cholesky": cholesky, "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse,
    "matrix_exp": square_matrix, "logdet": square_matrix, "slogdet": square_matrix,
    "matrix_power": matrix_power, "polygamma": polygamma, "polygamma_": polygamma_,
    "mvlgamma": mvlgamma, "mvlgamma_": mvlgamma_, "meshgrid": meshgrid,
    "repeat_interleave": repeat_interleave, "is_nonzero": is_nonzero,
}

NOT_COVERED = {
    "compile": "returns the model or function (no op); tests/test_compile.py",
    "get_float32_matmul_precision": "global setting", "set_float32_matmul_precision": "global setting",
    "get_num_threads": "global setting", "set_num_threads": "global setting",
    "get_num_interop_threads": "global setting", "set_num_interop_threads": "global setting",
    "init_num_threads": "global setting", "set_default_tensor_type": "global setting",
}
