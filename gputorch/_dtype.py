"""Data types and PyTorch's type-promotion rules.

A :class:`dtype` wraps a NumPy dtype (CuPy uses the same objects) and carries the
category flags that promotion needs. ``bfloat16`` wraps the NumPy dtype of the ``ml_dtypes``
package, an optional dependency: without it, ``gputorch.bfloat16`` exists but no tensor can have
it (see :mod:`gputorch.backends.bfloat16` for how ops compute on it). ``result_type`` follows PyTorch: tensors
with dimensions outrank zero-dim tensors, which outrank Python scalars, and a
lower-priority operand only changes the result when it is of a higher category
(bool < integer < floating point < complex).
"""
import numpy as np

__all__ = [
    "dtype", "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "bool", "half", "float", "double", "short", "int", "long",
    "complex64", "complex128", "cfloat", "cdouble",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type",
    "can_cast",
]

_builtin_bool, _builtin_int, _builtin_float, _builtin_complex = bool, int, float, complex


class dtype:
    """A tensor element type, e.g. ``gputorch.float32``."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_signed", "is_complex", "_rank", "_category",
                 "_slow")

    def __init__(self, name, np_dtype, rank, category, itemsize=None):
        self.name = name
        _NP_SLOT.__set__(self, None if np_dtype is None else np.dtype(np_dtype))
        self.itemsize = np.dtype(np_dtype).itemsize if itemsize is None else itemsize
        self.is_floating_point = category == 2
        self.is_signed = category >= 2 or (self.np is not None and self.np.kind == "i")
        self.is_complex = category == 3
        self._slow = self.is_complex or name == "bfloat16"   # the dispatcher's slow path takes these
        self._rank = rank          # position in the promotion lattice within a category
        self._category = category  # 0 bool, 1 integer, 2 floating point, 3 complex

    def to_complex(self):
        """The complex dtype whose parts have this floating-point dtype (float32 -> complex64)."""
        if self.is_complex:
            return self
        if self is float64:
            return complex128
        if self._category == 2:
            return complex64
        raise RuntimeError(f"to_complex is not supported for {self}")

    def to_real(self):
        """The dtype of a complex dtype's parts (complex64 -> float32); other dtypes map to themselves."""
        return {complex64: float32, complex128: float64}.get(self, self)

    def __repr__(self):
        return "gputorch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


def _bfloat16_np():
    """NumPy's bfloat16 dtype from ``ml_dtypes``, or None where that package is not installed."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return ml_dtypes.bfloat16


def require_numpy_dtype(d):
    """``d.np``, or the error for bfloat16 without ``ml_dtypes``."""
    if d.np is None:
        raise RuntimeError(f"{d} tensors need the ml_dtypes package (pip install ml_dtypes, or gputorch[bfloat16])")
    return d.np


_NP_SLOT = dtype.np   # the slot itself (a subclass may put a property over ``np``)


class _OptionalDtype(dtype):
    """A dtype whose NumPy type comes from an optional package, imported on first use of ``np``
    (importing gputorch imports NumPy only); ``np`` is None where the package is missing."""

    __slots__ = ("_load", "_loaded")

    def __init__(self, name, load, rank, category, itemsize):
        self._load, self._loaded = load, False
        super().__init__(name, None, rank, category, itemsize)

    @property
    def np(self):
        if not self._loaded:
            self._loaded = True
            found = self._load()
            if found is not None:
                _NP_SLOT.__set__(self, np.dtype(found))
                _BY_NP[np.dtype(found)] = self
        return _NP_SLOT.__get__(self)


def _by_name(name):
    return _BY_NAME[name]


bool = dtype("bool", np.bool_, 0, 0)
uint8 = dtype("uint8", np.uint8, 1, 1)
int8 = dtype("int8", np.int8, 1, 1)
int16 = dtype("int16", np.int16, 2, 1)
int32 = dtype("int32", np.int32, 3, 1)
int64 = dtype("int64", np.int64, 4, 1)
float16 = dtype("float16", np.float16, 1, 2)
bfloat16 = _OptionalDtype("bfloat16", _bfloat16_np, 1, 2, 2)   # rank 1 like float16; together: float32
float32 = dtype("float32", np.float32, 2, 2)
float64 = dtype("float64", np.float64, 3, 2)
complex64 = dtype("complex64", np.complex64, 2, 3)     # rank = the rank of its parts' float dtype
complex128 = dtype("complex128", np.complex128, 3, 3)
cfloat, cdouble = complex64, complex128

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64

ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NP = {d.np: d for d in ALL_DTYPES if d is not bfloat16}

_default_dtype = [float32]


def get_default_dtype():
    """The floating-point dtype used for Python floats and new float tensors."""
    return _default_dtype[0]


def set_default_dtype(d):
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_dtype[0] = d


def from_numpy_dtype(np_dtype):
    """The gputorch dtype for a NumPy dtype; TypeError for unsupported ones."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        if getattr(np_dtype, "__name__", str(np_dtype)) == "bfloat16" and bfloat16.np is not None:
            return bfloat16   # an ml_dtypes array before gputorch used bfloat16
        raise TypeError(
            f"can't convert NumPy dtype {np_dtype}: the supported types are "
            "complex128, complex64, float64, float32, float16, bfloat16 (with ml_dtypes), int64, int32, int16, int8, "
            "uint8 and bool") from None


def to_dtype(d):
    """Accept a gputorch dtype, a NumPy dtype or a Python type and return a gputorch dtype."""
    if isinstance(d, dtype):
        return d
    if d is _builtin_float:
        return float64
    if d is _builtin_int:
        return int64
    if d is _builtin_bool:
        return bool
    if d is _builtin_complex:
        return complex128
    if isinstance(d, str):
        raise TypeError(f"argument 'dtype' must be gputorch.dtype, not str ({d!r}: use gputorch.{d})")
    return from_numpy_dtype(d)


def _promote_pair(a, b):
    if a is b:
        return a
    if a._category != b._category:
        hi, lo = (a, b) if a._category > b._category else (b, a)
        if hi._category == 3 and lo._category == 2 and lo._rank > hi._rank:
            return complex128   # float64 with complex64: the parts need float64
        return hi  # otherwise the higher category wins
    if {a, b} == {float16, bfloat16}:
        return float32   # neither holds the other: PyTorch's promotion gives float32
    if a._category == 1 and {a, b} == {uint8, int8}:
        return int16
    if a._category == 1 and uint8 in (a, b):
        other = b if a is uint8 else a
        return other if other._rank > 1 else int16
    return a if a._rank >= b._rank else b


_PROMOTE = {(a, b): _promote_pair(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}


def promote_types(type1, type2):
    """The smallest dtype that both arguments can be converted to (PyTorch's lattice)."""
    return _PROMOTE[to_dtype(type1), to_dtype(type2)]


def scalar_dtype(value):
    """The dtype a Python scalar takes when it is wrapped: bool, int64 or the default float."""
    if isinstance(value, _builtin_bool):
        return bool
    if isinstance(value, _builtin_int):
        return int64
    if isinstance(value, (_builtin_float, np.floating)):
        return _default_dtype[0]
    if isinstance(value, np.integer):
        return int64
    if isinstance(value, np.bool_):
        return bool
    if isinstance(value, (_builtin_complex, np.complexfloating)):
        return _default_dtype[0].to_complex()
    raise TypeError(f"expected a Tensor or a Python number, got {type(value).__name__}")


def _combine(higher, lower):
    """Combine the result of a higher-priority class with a lower one (None = absent)."""
    if higher is None:
        return lower
    if lower is None or higher._category >= lower._category:
        return higher
    if lower._category == 3 and higher._category == 2:
        return higher.to_complex()   # a float tensor with a complex scalar keeps its precision
    return _PROMOTE[higher, lower]


def result_dtype(operands):
    """PyTorch's result type for a mix of Tensors and Python scalars (internal, fast)."""
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "_dtype", None)
        if d is None:
            d = scalar_dtype(x)
            wrapped = d if wrapped is None else _PROMOTE[wrapped, d]
        elif x._data.ndim:
            dim = d if dim is None else _PROMOTE[dim, d]
        else:
            zero = d if zero is None else _PROMOTE[zero, d]
    return _combine(dim, _combine(zero, wrapped))


def result_type(tensor1, tensor2):
    """``gputorch.result_type``: the dtype an arithmetic op on these operands produces."""
    return result_dtype((tensor1, tensor2))


def can_cast(from_, to):
    """Whether a result of dtype ``from_`` may be written into a tensor of dtype ``to``
    (PyTorch forbids lowering the category: float into int, int or float into bool)."""
    return to_dtype(from_)._category <= to_dtype(to)._category


def legacy_name(d):
    """PyTorch's scalar-type name of ``d`` ("Float", "Long", "Bool"...), used in its messages."""
    return _LEGACY_NAMES[d]


def not_implemented_for(kernel, d):
    """PyTorch's error for an op that has no kernel for dtype ``d``:
    ``NotImplementedError: "fmod_cpu" not implemented for 'Bool'``."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{_LEGACY_NAMES[d]}\'')


_LEGACY_NAMES = {
    float16: "Half", bfloat16: "BFloat16", float32: "Float", float64: "Double", int8: "Char", int16: "Short",
    int32: "Int", int64: "Long", uint8: "Byte", bool: "Bool", complex64: "ComplexFloat",
    complex128: "ComplexDouble",
}
