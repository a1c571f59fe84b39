"""Shape-only arrays: the array type of the ``meta`` device.

A :class:`MetaArray` has a shape, a dtype, strides and an owner, and no data. It takes part in
NumPy's protocols (``__array_ufunc__`` and ``__array_function__``), so the op code written
against ``xp`` runs unchanged: every ufunc, operator, method and NumPy function computes only
the shape, dtype and memory layout of its result, following NumPy's own rules (broadcasting,
type promotion, which results are views and in what order copies are laid out). Nothing is
allocated, so a meta array of 10**12 elements is as cheap as one of 10.

Results that NumPy makes as views share their owner (``base``, as in NumPy: the array that
owns the memory, never a view), so memory accounting can count each storage once.

Anything that needs values (``item()``, ``tolist()``, ``bool()``, ``nonzero`` ...) raises,
since there are none.
"""
import builtins
import math
import operator
import sys

import numpy as np

from .meta_layout import (c_strides, is_c_contiguous, is_f_contiguous, k_strides, nocopy_reshape_strides,
                          strides_in_order)

__all__ = ["MetaArray", "NO_DATA", "ASSUMED_TRUTH", "no_values"]

NO_DATA = "Cannot copy out of meta tensor; no data!"


class _NullPointer:
    """The ``data`` of every meta array: ``ptr`` is 0, and there is nothing to read."""
    __slots__ = ()
    ptr = 0

    def __repr__(self):
        return "<meta pointer: no data>"


NULL_POINTER = _NullPointer()

# Inside the forward of an op registered with an assumed answer (see ``meta_overrides.py``), a
# value test such as ``if bool(idx.min() < 0):`` gets this answer instead of raising.
ASSUMED_TRUTH = []

# Modules whose frames are plumbing between a truth test and the code that asked for it.
_PLUMBING_MODULES = ("gputorch._tensor", "gputorch.backends.meta")
# Framework functions whose result *is* the answer the user asked for: no clean-data guess there.
_VALUE_QUERIES = frozenset({"allclose", "equal"})


def _asked_by_framework():
    """Whether the truth test now running was asked by gputorch's own code (an op's forward or
    backward, a layer's mask check) rather than by the user's."""
    f = sys._getframe(2)
    while f is not None and f.f_globals.get("__name__", "").startswith(_PLUMBING_MODULES):
        f = f.f_back
    return (f is not None and f.f_globals.get("__name__", "").startswith("gputorch.")
            and f.f_code.co_name not in _VALUE_QUERIES)


def _truth(a):
    """The answer to a truth test of the one-element meta array ``a``.

    Meta arrays have no values. Ops test values only to validate their inputs or to take a fix-up
    path for rare data (``if bad.any(): raise ...``, ``if isfinite(g).all(): fast path``), so inside
    the framework the results of ``any()`` and ``all()`` answer as for clean data: nothing special
    anywhere (``any`` -> False, ``all`` -> True), and the op computes the shapes of the clean case.
    User code gets the error, as in PyTorch.
    """
    if a.hint is not None and _asked_by_framework():
        return a.hint
    if ASSUMED_TRUTH:
        return ASSUMED_TRUTH[-1]
    raise RuntimeError("Tensor.item() cannot be called on meta tensors")


def no_values(what):
    """The error for an operation whose result depends on values a meta array does not have."""
    return NotImplementedError(f"{what} depends on the values of the data, and meta tensors have none "
                               "(only shapes and dtypes)")


class _Flags:
    """``array.flags``: contiguity computed from the layout; meta arrays are always writeable."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")
    writeable = True
    aligned = True

    def __init__(self, a):
        self.c_contiguous = is_c_contiguous(a.shape, a.strides, a.dtype.itemsize)
        self.f_contiguous = is_f_contiguous(a.shape, a.strides, a.dtype.itemsize)
        self.owndata = a.base is None

    @property
    def contiguous(self):
        return self.c_contiguous

    def __getitem__(self, key):
        return getattr(self, _FLAG_NAMES[key.upper()])


_FLAG_NAMES = {"C": "c_contiguous", "C_CONTIGUOUS": "c_contiguous", "CONTIGUOUS": "c_contiguous",
               "F": "f_contiguous", "F_CONTIGUOUS": "f_contiguous", "FORTRAN": "f_contiguous",
               "W": "writeable", "WRITEABLE": "writeable", "O": "owndata", "OWNDATA": "owndata",
               "A": "aligned", "ALIGNED": "aligned"}


class MetaArray:
    """An array with a shape, a dtype and a layout, but no data.

    Attributes:
        shape, dtype, strides (bytes), ndim, size, itemsize, nbytes: as on ``numpy.ndarray``.
        base: the meta array owning the (virtual) memory this one views, or None if it owns it.
        offset: this view's byte offset into its owner.
        hint: for results of ``any``/``all``, the answer a truth test gets inside the framework
            (see :func:`_truth`); None otherwise.
    """

    __slots__ = ("shape", "dtype", "strides", "base", "offset", "hint", "__weakref__")
    __array_priority__ = 50

    def __init__(self, shape, dtype, strides=None, base=None, offset=0):
        self.shape = shape if type(shape) is tuple else tuple(operator.index(n) for n in shape)
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.strides = c_strides(self.shape, self.dtype.itemsize) if strides is None else tuple(strides)
        if base is not None and base.base is not None:
            base = base.base
        self.base = base
        self.offset = offset
        self.hint = None      # the clean-data answer to a truth test (results of any/all)

    # ---------------------------------------------------------------- attributes
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return math.prod(self.shape) * self.dtype.itemsize

    @property
    def flags(self):
        return _Flags(self)

    @property
    def T(self):
        return self.transpose()

    @property
    def mT(self):
        return self.swapaxes(-1, -2)

    @property
    def real(self):
        return self

    @property
    def owner(self):
        """The array owning this one's memory (itself when it is not a view)."""
        return self if self.base is None else self.base

    @property
    def data(self):
        """A device pointer with the address 0 (PyTorch's meta tensors report ``data_ptr() == 0``),
        so that code which only passes addresses along -- a kernel launch replayed shape-only, see
        ``meta_imitation.py`` -- runs; there is no memory behind it."""
        return NULL_POINTER

    def view_of(self, shape, strides, offset=0):
        """A view of this array's memory with another shape and strides."""
        out = MetaArray(shape, self.dtype, strides, self.owner, self.offset + offset)
        out.hint = self.hint
        return out

    def _fresh(self, shape, dtype=None, strides=None):
        out = MetaArray(shape, self.dtype if dtype is None else dtype, strides)
        out.hint = self.hint
        return out

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    # ---------------------------------------------------------------- no values
    def item(self, *args):
        if self.size != 1 or args:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return _truth(self)

    def tolist(self):
        raise NotImplementedError(NO_DATA)

    def tobytes(self, order="C"):
        raise NotImplementedError(NO_DATA)

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(NO_DATA)

    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is ambiguous.")
        return _truth(self)

    def _scalar(self, *args):
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")

    __int__ = __float__ = __complex__ = __index__ = _scalar

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __contains__(self, value):
        raise no_values("'in'")

    def nonzero(self):
        raise no_values("nonzero()")

    # ---------------------------------------------------------------- layout
    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        shape = _resolve_shape(self.shape, shape, self.size)
        if order not in ("C", "A"):
            raise NotImplementedError(f"reshape(order={order!r}) of a meta array")
        strides = None if copy else nocopy_reshape_strides(self.shape, self.strides, shape, self.itemsize)
        if strides is None:
            if copy is False:
                raise ValueError("Unable to avoid creating a copy while reshaping.")
            # Like NumPy: a row-major copy in the old shape, viewed in the new one.
            return self.copy().view_of(shape, c_strides(shape, self.itemsize))
        return self.view_of(shape, strides)

    def ravel(self, order="C"):
        strides = nocopy_reshape_strides(self.shape, self.strides, (self.size,), self.itemsize)
        return self._fresh((self.size,)) if strides is None else self.view_of((self.size,), strides)

    def flatten(self, order="C"):
        return self._fresh((self.size,))

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
            axes = axes[0]
        nd = self.ndim
        if not axes:
            axes = tuple(range(nd - 1, -1, -1))
        else:
            axes = tuple(_axis(a, nd) for a in axes)
            if len(axes) != nd or len(set(axes)) != nd:
                raise ValueError("axes don't match array")
        return self.view_of(tuple(self.shape[a] for a in axes), tuple(self.strides[a] for a in axes))

    def swapaxes(self, axis1, axis2):
        axes = list(range(self.ndim))
        a, b = _axis(axis1, self.ndim), _axis(axis2, self.ndim)
        axes[a], axes[b] = axes[b], axes[a]
        return self.transpose(axes)

    def squeeze(self, axis=None):
        if axis is None:
            keep = [i for i, n in enumerate(self.shape) if n != 1]
        else:
            drop = {_axis(a, self.ndim) for a in (axis if isinstance(axis, tuple) else (axis,))}
            for a in drop:
                if self.shape[a] != 1:
                    raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
            keep = [i for i in range(self.ndim) if i not in drop]
        return self.view_of(tuple(self.shape[i] for i in keep), tuple(self.strides[i] for i in keep))

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = np.dtype(dtype)
        if not np.can_cast(self.dtype, dtype, casting):
            raise TypeError(f"Cannot cast array data from {self.dtype!r} to {dtype!r} according to the rule "
                            f"{casting!r}")
        if not copy and dtype == self.dtype and (order in ("K", "A") or self.flags[order]):
            return self
        return self._fresh(self.shape, dtype, self._order_strides(order, dtype.itemsize))

    def _order_strides(self, order, itemsize):
        """Strides of a copy in memory order ``order`` ("C", "F", "A" or "K"); None for row-major."""
        if order == "A":
            order = "F" if self.flags.f_contiguous and not self.flags.c_contiguous else "C"
        if order == "K":
            return k_strides(self.shape, itemsize, [self.strides])
        if order == "F":
            return strides_in_order(self.shape, itemsize, range(self.ndim - 1, -1, -1))
        return None

    def copy(self, order="C"):
        return self._fresh(self.shape, None, self._order_strides(order, self.itemsize))

    def view(self, dtype=None, type=None):   # noqa: A002 - NumPy's keyword
        if dtype is None or (isinstance(dtype, builtins.type) and issubclass(dtype, MetaArray)):
            return self.view_of(self.shape, self.strides)
        dtype = np.dtype(dtype)
        if dtype.itemsize == self.itemsize:
            return MetaArray(self.shape, dtype, self.strides, self.owner, self.offset)
        if not self.shape or not self.flags.c_contiguous:
            raise ValueError("To change to a dtype of a different size, the last axis must be contiguous")
        last = self.shape[-1] * self.itemsize
        if last % dtype.itemsize:
            raise ValueError("When changing to a smaller dtype, its size must be a divisor of the size of "
                             "original dtype")
        shape = self.shape[:-1] + (last // dtype.itemsize,)
        return MetaArray(shape, dtype, c_strides(shape, dtype.itemsize), self.owner, self.offset)

    def fill(self, value):
        return None

    def get(self, *args, **kwargs):
        raise NotImplementedError(NO_DATA)

    # ---------------------------------------------------------------- indexing
    def __getitem__(self, key):
        return _indexing.getitem(self, key)

    def __setitem__(self, key, value):
        _indexing.check_setitem(self, key, value)

    # ---------------------------------------------------------------- NumPy protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _ufuncs.apply_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _functions.apply_function(func, types, args, kwargs)

    # ---------------------------------------------------------------- methods that are NumPy functions
    def sum(self, *a, **k):
        return np.sum(self, *a, **k)

    def prod(self, *a, **k):
        return np.prod(self, *a, **k)

    def mean(self, *a, **k):
        return np.mean(self, *a, **k)

    def std(self, *a, **k):
        return np.std(self, *a, **k)

    def var(self, *a, **k):
        return np.var(self, *a, **k)

    def max(self, *a, **k):
        return np.max(self, *a, **k)

    def min(self, *a, **k):
        return np.min(self, *a, **k)

    def any(self, *a, **k):
        return np.any(self, *a, **k)

    def all(self, *a, **k):
        return np.all(self, *a, **k)

    def argmax(self, *a, **k):
        return np.argmax(self, *a, **k)

    def argmin(self, *a, **k):
        return np.argmin(self, *a, **k)

    def cumsum(self, *a, **k):
        return np.cumsum(self, *a, **k)

    def cumprod(self, *a, **k):
        return np.cumprod(self, *a, **k)

    def clip(self, *a, **k):
        return np.clip(self, *a, **k)

    def round(self, *a, **k):
        return np.round(self, *a, **k)

    def argsort(self, *a, **k):
        return np.argsort(self, *a, **k)

    def argpartition(self, *a, **k):
        return np.argpartition(self, *a, **k)

    def sort(self, *a, **k):
        np.sort(self, *a, **k)      # validates the arguments; sorting in place changes no shape

    def partition(self, *a, **k):
        np.partition(self, *a, **k)

    def repeat(self, *a, **k):
        return np.repeat(self, *a, **k)

    def take(self, *a, **k):
        return np.take(self, *a, **k)

    def put(self, *a, **k):
        return None

    def diagonal(self, *a, **k):
        return np.diagonal(self, *a, **k)

    def trace(self, *a, **k):
        return np.trace(self, *a, **k)

    def dot(self, b, out=None):
        return np.dot(self, b, out=out)

    def searchsorted(self, *a, **k):
        return np.searchsorted(self, *a, **k)

    def conj(self):
        return self.copy(order="K")

    conjugate = conj

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        return (_rebuild, (self.shape, self.dtype.str))


def _rebuild(shape, dtype):
    return MetaArray(shape, dtype)


def _axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def _resolve_shape(old_shape, shape, size):
    """``reshape``'s target: a tuple with at most one -1, whose product must equal ``size``."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(operator.index(n) for n in shape)
    unknown = [i for i, n in enumerate(shape) if n == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if any(n < -1 for n in shape):
        raise ValueError("negative dimensions not allowed")
    known = math.prod(n for n in shape if n != -1)
    if unknown:
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {_shape_text(shape)}")
        shape = shape[:unknown[0]] + (size // known,) + shape[unknown[0] + 1:]
    elif known != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {_shape_text(shape)}")
    return shape


def _shape_text(shape):
    return "(" + ", ".join("newaxis" if n == -1 else str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


# ---------------------------------------------------------------- operators (all through the ufuncs)
def _binary(ufunc):
    def op(self, other):
        if getattr(type(other), "__array_ufunc__", True) is None:
            return NotImplemented
        return ufunc(self, other)

    def rop(self, other):
        if getattr(type(other), "__array_ufunc__", True) is None:
            return NotImplemented
        return ufunc(other, self)

    def iop(self, other):
        return ufunc(self, other, out=(self,))
    return op, rop, iop


for _name, _uf in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("truediv", np.true_divide),
                   ("floordiv", np.floor_divide), ("mod", np.remainder), ("pow", np.power),
                   ("matmul", np.matmul), ("and", np.bitwise_and), ("or", np.bitwise_or),
                   ("xor", np.bitwise_xor), ("lshift", np.left_shift), ("rshift", np.right_shift)):
    _op, _rop, _iop = _binary(_uf)
    setattr(MetaArray, f"__{_name}__", _op)
    setattr(MetaArray, f"__r{_name}__", _rop)
    setattr(MetaArray, f"__i{_name}__", _iop)

for _name, _uf in (("lt", np.less), ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
                   ("eq", np.equal), ("ne", np.not_equal)):
    setattr(MetaArray, f"__{_name}__", _binary(_uf)[0])

MetaArray.__hash__ = object.__hash__
MetaArray.__neg__ = lambda self: np.negative(self)
MetaArray.__pos__ = lambda self: np.positive(self)
MetaArray.__abs__ = lambda self: np.absolute(self)
MetaArray.__invert__ = lambda self: np.invert(self)
MetaArray.__divmod__ = lambda self, other: np.divmod(self, other)
MetaArray.__rdivmod__ = lambda self, other: np.divmod(other, self)

# The rules live in their own modules, which build on MetaArray (hence imported last, as modules).
from . import meta_functions as _functions, meta_indexing as _indexing, meta_ufuncs as _ufuncs  # noqa: E402
