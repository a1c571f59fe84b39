"""Helpers shared by the reduction families (reduction, extrema, sorting, cumulative).

Dimension arguments are normalised here, reduced gradients are broadcast back to
the input's shape, and constant (non-differentiable) masks built from forward data
are wrapped as tensors so that backward formulas stay ordinary Tensor math.
"""
import functools

from .._tensor import Tensor
from ..autograd import grad_mode

_GRAD_ENABLED = grad_mode.GRAD_ENABLED

# PyTorch's names for dtypes in error messages ("Got: Long").
DTYPE_WORD = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double", "int8": "Char",
              "int16": "Short", "int32": "Int", "int64": "Long", "uint8": "Byte", "bool": "Bool",
              "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def dtype_word(dt):
    return DTYPE_WORD[dt.name]


def normalize_dims(t, dim):
    """``dim`` (None, int or sequence) as a sorted tuple of non-negative axes, or None for all.

    An empty sequence means all dims (as in PyTorch). A 0-d tensor accepts dims 0 and -1 and
    always reduces "all" (None), since its array has no axis to name.
    """
    if dim is None:
        return None
    if isinstance(dim, int) and not isinstance(dim, bool):
        d = t._wrap_dim(dim)
        return (d,) if t._data.ndim else None
    if not isinstance(dim, (tuple, list)):
        t._wrap_dim(dim)  # raises the TypeError for a non-int
    seen = []
    for d in dim:
        w = t._wrap_dim(d)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    if not seen or not t._data.ndim:
        return None
    return tuple(sorted(seen))


def wrap_dim(t, dim):
    """One dimension as a non-negative int (0 for a 0-d tensor)."""
    return t._wrap_dim(dim)


def reduced_shape(shape, dims, keepdim):
    """The shape of a reduction of ``shape`` over ``dims`` (None = all)."""
    if dims is None:
        return (1,) * len(shape) if keepdim else ()
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def count_reduced(shape, dims):
    """How many elements of ``shape`` each output of a reduction over ``dims`` combines."""
    n = 1
    for i, s in enumerate(shape):
        if dims is None or i in dims:
            n *= s
    return n


def expand_reduced(grad, shape, dims, keepdim):
    """Broadcast a reduced gradient back to ``shape`` (reinserting reduced dims if dropped)."""
    return keep_reduced(grad, shape, dims, keepdim).expand(shape)


def keep_reduced(t, shape, dims, keepdim):
    """A reduced tensor with its reduced dims present as size 1 (a view; no expansion)."""
    if dims is not None and not keepdim:
        new_shape = list(t._data.shape)
        for d in dims:
            new_shape.insert(d, 1)
        return t.reshape(new_shape)
    if dims is None and t._data.ndim != len(shape):
        return t.reshape((1,) * len(shape))
    return t


def const(array, like):
    """Wrap a backend array computed from forward data as a tensor outside the graph."""
    if not hasattr(array, "shape") or array.__class__ is not like._data.__class__:
        array = like._device._backend.xp.asarray(array)
    return Tensor._make(array, like._device)


def create_graph():
    """Whether backward is being recorded (``create_graph=True``): then formulas must be
    differentiable to all orders, not only correct in value."""
    return _GRAD_ENABLED.value


def check_nonempty_dims(name, t, dims):
    """PyTorch's IndexError for reducing, without an identity, over an empty dim."""
    shape = t._data.shape
    for d in range(len(shape)) if dims is None else dims:
        if shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def write_results(result, out):
    """``out=`` support: copy a result (a tensor or a tuple of them) into ``out`` and return it."""
    from ._common import write_out
    if not isinstance(result, tuple):
        return write_out(result, out)
    if not isinstance(out, (tuple, list)) or len(out) != len(result):
        raise TypeError(f"out= must be a tuple of {len(result)} tensors")
    written = [write_out(r, o) for r, o in zip(result, out)]
    return type(result)(*written) if hasattr(result, "_fields") else tuple(written)


_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}


def accept_numpy_names(fn):
    """``fn`` also taking NumPy's ``axis=`` and ``keepdims=`` for ``dim=`` and ``keepdim=``, as
    PyTorch's reductions do."""
    @functools.wraps(fn)
    def reduction(*args, **kwargs):
        if kwargs and ("axis" in kwargs or "keepdims" in kwargs):
            for numpy_name, name in _NUMPY_NAMES.items():
                if numpy_name in kwargs:
                    if name in kwargs:
                        raise TypeError(f"{fn.__name__}() got multiple values for argument '{name}'")
                    kwargs[name] = kwargs.pop(numpy_name)
        return fn(*args, **kwargs)
    return reduction
