"""The CUDA backend's array module: CuPy, with NumPy's results where CuPy's differ.

Ops are written once against ``xp``, the NumPy API, which CuPy mirrors. In a few places CuPy
computes something else (``simulated_cupy_semantics.py`` lists them, and the simulated CuPy
reproduces them). :func:`numpy_semantics` returns a module that is CuPy's namespace with those
functions replaced, so an op gives the same answer on every backend and no op tests its device:

* ``floor_divide`` and ``remainder``/``mod`` of floating-point numbers: NumPy's ``divmod``
  (from ``fmod``; PyTorch's rule too), exact at infinities and signed zeros;
* ``fmod`` of integers: exact (CuPy's goes through double precision), with C's sign (that of x);
* ``clip``: ``minimum(maximum(a, a_min), a_max)``, so a NaN bound gives NaN as in NumPy;
* ``ufunc.accumulate`` for every binary ufunc (CuPy has it for ``add`` and ``multiply`` only):
  a log-step scan, ``ceil(log2(n))`` elementwise passes;
* ``ufunc.at`` for every binary ufunc and dtype: CuPy's atomic scatter for ``add``/``subtract``
  where CUDA has the atomic, else a sort of the flat target indices and a log-step reduction of
  each run of equal indices, written once per distinct index.
"""
import types

NATIVE_ACCUMULATE = frozenset({"add", "multiply"})
NATIVE_SCATTER = {"add": frozenset({"int32", "int64", "float16", "float32", "float64", "uint32", "uint64"}),
                  "subtract": frozenset({"int32", "int64", "float16", "float32", "float64", "uint32", "uint64"})}


class _Ufunc:
    """A CuPy ufunc whose ``accumulate`` and ``at`` work for every op and dtype, as NumPy's do."""

    __slots__ = ("_ufunc", "_cp", "__name__")

    def __init__(self, ufunc, cp):
        self._ufunc = ufunc
        self._cp = cp
        self.__name__ = ufunc.__name__

    def __call__(self, *args, **kwargs):
        return self._ufunc(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._ufunc, name)

    def __repr__(self):
        return f"<ufunc '{self.__name__}' with NumPy's accumulate and at>"

    def accumulate(self, array, axis=0, dtype=None, out=None):
        if self.__name__ in NATIVE_ACCUMULATE:
            return self._ufunc.accumulate(array, axis=axis, dtype=dtype, out=out)
        result = scan(self._ufunc, array.astype(dtype or array.dtype, copy=True), axis)
        if out is not None:
            out[...] = result
            return out
        return result

    def at(self, a, indices, b):
        native = NATIVE_SCATTER.get(self.__name__)
        if native is not None and a.dtype.name in native:
            return self._ufunc.at(a, indices, b)
        scatter_reduce(self._cp, self._ufunc, a, indices, b)


def _along(axis, ndim, part):
    key = [slice(None)] * ndim
    key[axis] = part
    return tuple(key)


def scan(ufunc, x, axis):
    """Inclusive scan of ``x`` (overwritten and returned) with the associative ``ufunc`` along
    ``axis``: after the pass with shift ``s``, element ``i`` holds ``ufunc`` over ``i-2s+1 .. i``."""
    axis = axis % x.ndim if x.ndim else 0
    n = x.shape[axis] if x.ndim else 1
    shift = 1
    while shift < n:
        head = _along(axis, x.ndim, slice(shift, None))
        x[head] = ufunc(x[head], x[_along(axis, x.ndim, slice(None, n - shift))])
        shift *= 2
    return x


def scatter_reduce(cp, ufunc, a, indices, b):
    """``ufunc.at(a, indices, b)``: each element of ``a`` that ``indices`` selects ``k`` times
    becomes ``ufunc(a, ufunc(b_1, ..., b_k))``, the ``b`` combined pairwise in a tree."""
    flat_index = cp.arange(a.size, dtype=cp.int64).reshape(a.shape)[indices]
    values = cp.broadcast_to(cp.asarray(b), flat_index.shape).reshape(-1)
    keys = flat_index.reshape(-1)
    n = keys.size
    if n == 0:
        return
    position = cp.arange(n, dtype=cp.int64)
    order = cp.argsort(keys * n + position)          # unique sort keys: equal indices keep their order
    keys, values = keys[order], values[order].astype(a.dtype)
    starts = cp.ones(n, dtype=bool)
    starts[1:] = keys[1:] != keys[:-1]
    rank = position - scan(cp.maximum, cp.where(starts, position, 0), 0)
    longest = int(rank.max()) + 1
    shift = 1
    while shift < longest:
        pair = (rank[:-shift] % (2 * shift) == 0) & (keys[:-shift] == keys[shift:])
        merged = ufunc(values[:-shift], values[shift:])
        values[:-shift] = cp.where(pair, merged, values[:-shift])
        shift *= 2
    heads = keys[starts]
    target = a if a.flags.c_contiguous else cp.ascontiguousarray(a)
    flat = target.reshape(-1)
    flat[heads] = ufunc(flat[heads], values[starts])
    if target is not a:
        a[...] = target


def _float_divmod(cp, x, y):
    """NumPy's floating-point ``divmod(x, y)`` (``fmod`` based): the floor quotient and the
    remainder with the sign of ``y``."""
    mod = cp.fmod(x, y)
    div = cp.true_divide(cp.subtract(x, mod), y)
    y_negative, y_zero = cp.less(y, 0), cp.equal(y, 0)   # arrays also for a Python number ``y``
    fix = (mod != 0) & (y_negative != (mod < 0))
    mod = cp.where(fix, mod + y, mod)
    div = cp.where(fix, div - 1, div)
    mod = cp.where(mod == 0, cp.copysign(cp.zeros_like(mod), y), mod)
    floor = cp.floor(div)
    floor = cp.where(div - floor > 0.5, floor + 1, floor)
    quotient = cp.true_divide(x, y)
    floor = cp.where(div == 0, cp.copysign(cp.zeros_like(floor), quotient), floor)
    floor = cp.where(y_zero, quotient, floor)
    return floor, mod


def _is_float_result(cp, x, y):
    return cp.result_type(x, y).kind in "fc"


def _finish(result, out):
    if out is None:
        return result
    out[...] = result
    return out


def numpy_semantics(cp):
    """A module with CuPy's names, where the functions listed above give NumPy's results."""
    module = types.ModuleType(cp.__name__, __doc__)

    def floor_divide(x, y, out=None, **kwargs):
        if kwargs or not _is_float_result(cp, x, y):
            return cp.floor_divide(x, y, out=out, **kwargs)
        return _finish(_float_divmod(cp, x, y)[0], out)

    def remainder(x, y, out=None, **kwargs):
        if kwargs or not _is_float_result(cp, x, y):
            return cp.remainder(x, y, out=out, **kwargs)
        return _finish(_float_divmod(cp, x, y)[1], out)

    def fmod(x, y, out=None, **kwargs):
        if kwargs or _is_float_result(cp, x, y):
            return cp.fmod(x, y, out=out, **kwargs)
        r = cp.remainder(x, y)                      # exact for integers, with the sign of y
        fix = (r != 0) & (cp.less(r, 0) != cp.less(x, 0))
        return _finish(cp.where(fix, r - y, r), out)   # C's: the sign of x

    def clip(a, a_min, a_max, out=None):
        result = a
        if a_min is not None:
            result = cp.maximum(result, a_min)
        if a_max is not None:
            result = cp.minimum(result, a_max)
        return _finish(result, out)

    overrides = {"floor_divide": floor_divide, "remainder": remainder, "mod": remainder, "clip": clip,
                 "fmod": fmod}
    for name in ("maximum", "minimum", "fmax", "fmin", "multiply", "add", "subtract", "logaddexp",
                 "bitwise_or", "bitwise_and", "bitwise_xor", "logical_or", "logical_and"):
        overrides[name] = _Ufunc(getattr(cp, name), cp)

    class _Namespace(types.ModuleType):
        def __getattr__(self, name):   # the rest of CuPy, looked up once
            value = getattr(cp, name)
            setattr(self, name, value)
            return value

    module.__class__ = _Namespace
    module.__dict__.update(overrides)
    module.__dict__["cupy"] = cp
    return module
