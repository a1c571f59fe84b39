"""The matrix product of arrays that every product op uses (matmul, mm, bmm, addmm, linear, the
convolutions' im2col products).

float16 operands are multiplied in float32 and the result rounded to float16 once, on every
backend: PyTorch's and cuBLAS's half-precision GEMMs accumulate in float32 too, and NumPy's own
float16 matmul has no BLAS kernel (the char transformer example trained 16 times slower under
float16 autocast with it than with this, on a 2-core CPU).

On the CPU the BLAS thread pool is sized for each product first (``backends.blas_threads``: small
products run on one thread).
"""
import math

import numpy as np

from ..backends.blas_threads import prepare_product

__all__ = ["product"]

_HALF = np.dtype(np.float16)

# While a CUDA graph is captured, ``gputorch.cuda.graphs`` puts here a function that computes the
# product without cuBLAS (which CuPy refuses during capture): ``route(x, y)`` -> array, or None
# to leave the product to the ordinary path.
capture_route = [None]


def product(x, y):
    """``x @ y`` (NumPy's matmul rules); float16 x float16 accumulated in float32."""
    if x.ndim > 2 and 0 < y.ndim <= 2 and x.flags.c_contiguous:
        # One matrix shared by a whole batch: fold the batch into the rows, one GEMM in all (NumPy
        # would run one GEMM per batch entry).
        rows = math.prod(x.shape[:-1])
        return product(x.reshape(rows, x.shape[-1]), y).reshape(x.shape[:-1] + y.shape[1:])
    if x.__class__ is np.ndarray and x.ndim and y.ndim:
        prepare_product(product_size(x.shape, y.shape))
    route = capture_route[0]
    if route is not None:
        out = route(x, y)
        if out is not None:
            return out
    if x.dtype == _HALF and y.dtype == _HALF:
        return (x.astype(np.float32) @ y.astype(np.float32)).astype(_HALF)
    return x @ y


def product_size(x_shape, y_shape):
    """The number of multiply-adds of ``x @ y`` (batch dimensions broadcast), for arrays of at least
    one dimension."""
    k = x_shape[-1]
    m = x_shape[-2] if len(x_shape) > 1 else 1
    n = y_shape[-1] if len(y_shape) > 1 else 1
    batch = 1
    for a, b in zip(reversed(x_shape[:-2]), reversed(y_shape[:-2])):
        batch *= max(a, b)
    longer = x_shape[:-2] if len(x_shape) > len(y_shape) else y_shape[:-2]
    for d in longer[:abs(len(x_shape) - len(y_shape))]:
        batch *= d
    return batch * m * k * n


GRADIENT_DTYPES = frozenset(np.dtype(d) for d in (np.float16, np.float32, np.float64))


def product_grads(g, x, y, x_shape, y_shape):
    """The gradients ``(g @ y^T, x^T @ g)`` of ``z = x @ y`` as arrays, for ``x (..., m, k)`` and
    ``y (..., k, n)`` with equal batch dimensions, or ``y (k, n)`` shared by every batch of ``x``.
    Pass None for ``y`` when the first gradient is not wanted, for ``x`` when the second is not
    (each gradient needs only the other operand); the shapes are the operands'. None for the
    other cases (1-D operands, broadcast batches) and for dtypes other than float16/32/64. Used by
    the product ops' backward when it is not itself recorded."""
    if g.dtype not in GRADIENT_DTYPES or len(x_shape) < 2 or len(y_shape) < 2:
        return None
    if any(a is not None and a.dtype != g.dtype for a in (x, y)):
        return None
    shared = len(y_shape) == 2 and len(x_shape) > 2
    if not shared and x_shape[:-2] != y_shape[:-2]:
        return None
    gx = None if y is None else product(g, y.swapaxes(-1, -2))
    gy = None
    if x is not None:
        if shared:     # y was used by every batch: one product over the folded rows
            rows = x.size // x_shape[-1]
            gy = product(x.reshape(rows, x_shape[-1]).T, g.reshape(rows, g.shape[-1]))
        else:
            gy = product(x.swapaxes(-1, -2), g)
    return gx, gy
