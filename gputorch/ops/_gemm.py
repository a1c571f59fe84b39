"""The matrix product of arrays that every product op uses (matmul, mm, bmm, addmm, linear, the
convolutions' im2col products).

float16 operands are multiplied in float32 and the result rounded to float16 once, on every
backend: PyTorch's and cuBLAS's half-precision GEMMs accumulate in float32 too, and NumPy's own
float16 matmul has no BLAS kernel (the char transformer example trained 16 times slower under
float16 autocast with it than with this, on a 2-core CPU).
"""
import numpy as np

__all__ = ["product"]

_HALF = np.dtype(np.float16)

# While a CUDA graph is captured, ``gputorch.cuda.graphs`` puts here a function that computes the
# product without cuBLAS (which CuPy refuses during capture): ``route(x, y)`` -> array, or None
# to leave the product to the ordinary path.
capture_route = [None]


def product(x, y):
    """``x @ y`` (NumPy's matmul rules); float16 x float16 accumulated in float32."""
    route = capture_route[0]
    if route is not None:
        out = route(x, y)
        if out is not None:
            return out
    if x.dtype == _HALF and y.dtype == _HALF:
        return (x.astype(np.float32) @ y.astype(np.float32)).astype(_HALF)
    return x @ y
