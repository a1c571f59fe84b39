"""``set_float32_matmul_precision`` / ``get_float32_matmul_precision``.

In PyTorch these let float32 matrix products use TF32 ("high") or bfloat16 ("medium")
internally. gputorch records the setting so that programs can set and read it, but
does not change numerics: float32 products are always computed in full float32
(NumPy's BLAS on CPU; cuBLAS through CuPy, in its default full-precision math mode).
The setting is shared with ``gputorch.backends.cuda.matmul.allow_tf32`` as in PyTorch
(True is "high", False is "highest").
"""
import warnings

from .backends import cuda as _cuda_flags

__all__ = ["get_float32_matmul_precision", "set_float32_matmul_precision"]

_CHOICES = ("highest", "high", "medium")


def get_float32_matmul_precision():
    """The recorded float32 matmul precision: "highest" (default), "high" or "medium"."""
    return _cuda_flags.matmul.float32_matmul_precision


def set_float32_matmul_precision(precision):
    """Record ``precision`` ("highest", "high" or "medium"; recorded only, numerics unchanged).

    Any other string leaves the setting as it was, with a UserWarning, as in PyTorch;
    a non-string raises RuntimeError.
    """
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in _CHOICES:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _cuda_flags.matmul.float32_matmul_precision = precision
