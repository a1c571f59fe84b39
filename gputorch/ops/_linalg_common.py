"""Argument checks and error wording shared by the linear-algebra op modules."""
from .._tensor import _LEGACY_NAMES as SCALAR_NAME, Tensor

__all__ = ["SCALAR_NAME", "C_NAME", "mT", "mH", "require_tensor", "no_bool", "write_out"]

# PyTorch names dtypes two ways in its messages: ScalarType names (SCALAR_NAME: "Float") and C++ names.
C_NAME = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
          "int64": "long int", "int32": "int",
          "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
          "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def mT(t):
    """The matrix transpose of the last two dimensions (a view)."""
    return t.transpose(-2, -1)


def mH(t):
    """The conjugate transpose of the last two dimensions (``mT`` for real tensors)."""
    return t.transpose(-2, -1).conj() if t._dtype.is_complex else t.transpose(-2, -1)


def require_tensor(fn, value, arg, pos):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {type(value).__name__}")


def no_bool(t, kernel):
    """PyTorch has no bool kernels for products: say so as it does."""
    if t._dtype.name == "bool":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def write_out(result, out):
    """Support ``out=``: copy ``result`` into ``out`` (resized when empty)."""
    if out is None:
        return result
    from .arithmetic import _maybe_out
    return _maybe_out(result, out)
