"""Where CuPy computes differently from NumPy: the simulated CuPy reproduces it.

The simulated CuPy serves CuPy's names with NumPy's functions. Where the real CuPy's results or
errors differ from NumPy's, a simulation that kept NumPy's would pass tests that fail on a GPU (a
run of the suite on an H200 found each of these). So the simulation does what CuPy does, and the
CUDA backend's NumPy-semantics layer (``cupy_semantics.py``) has to make up the difference on both:

* ``broadcast_to`` gives a *writable* view (NumPy's is read-only), so only the strides say that
  an expanded tensor's elements share memory; ``broadcast_arrays`` passes Python numbers through
  unchanged (NumPy makes 0-d arrays of them);
* ``floor_divide`` of floating-point numbers is ``floor(x / y)`` and ``remainder`` (``mod``) is
  ``x - y * floor(x / y)``, not NumPy's ``fmod``-based ``divmod`` (they differ at infinities,
  and where the quotient rounds to an integer);
* ``fmod`` of integers is computed in double precision (inexact beyond 2**53);
* ``clip`` compares with each bound, so a NaN bound is ignored instead of giving NaN;
* ``ufunc.accumulate`` exists for ``add`` and ``multiply`` only: others raise
  NotImplementedError ("`cupy_maximum.accumulate` is not supported yet");
* ``ufunc.at`` is CuPy's scatter: ``add.at``/``subtract.at`` take only the dtypes CUDA has atomic
  additions for (a TypeError otherwise). CuPy's other scatters are stricter here than in CuPy
  itself, which accepts some of them: on an H200 its ``maximum.at`` rounded float64 values to
  float32, and ``multiply.at`` broadcast its operands wrongly, so the simulation refuses them and
  gputorch never relies on them;
* ``where`` needs an array condition (a Python bool is an AttributeError);
* ``linalg.cholesky`` of a matrix that is not positive-definite raises nothing (its factor is
  NaN here);
* an advanced index whose index arrays do not broadcast together is a ValueError ("operands could
  not be broadcast together"), where NumPy raises IndexError ("shape mismatch").

What the simulation does not reproduce (see the closing notes of the device runs): float32
denormals flushed to zero in CuPy's kernels, float-to-integer conversions of out-of-range values
saturating, and the last bits of results that the GPU computes with fused multiply-adds.
"""
import numpy as np

ACCUMULATE_SUPPORTED = frozenset({"add", "multiply"})
SCATTER_DTYPES = {"add": ("int32", "int64", "float16", "float32", "float64", "uint32", "uint64"),
                  "subtract": ("int32", "int64", "float16", "float32", "float64", "uint32", "uint64")}


def _float_result(x, y):
    return np.result_type(x, y).kind in "fc"


def floor_divide(x, y, out=None, **kwargs):
    """CuPy's floor division: ``floor(x / y)`` for floating-point results, NumPy's for integers."""
    if not _float_result(x, y):
        return np.floor_divide(x, y, out=out, **kwargs)
    with np.errstate(all="ignore"):
        return np.floor(np.true_divide(x, y, **kwargs), out=out)


def remainder(x, y, out=None, **kwargs):
    """CuPy's remainder: ``x - y * floor(x / y)`` for floating-point results, NumPy's for integers."""
    if not _float_result(x, y):
        return np.remainder(x, y, out=out, **kwargs)
    with np.errstate(all="ignore"):
        q = np.floor(np.true_divide(x, y, **kwargs))
        return np.subtract(x, np.multiply(y, q, **kwargs), out=out, **kwargs)


def fmod(x, y, out=None, **kwargs):
    """CuPy's fmod of integers goes through double precision: above 2**53 it is inexact (an H200 gave
    gcd(2**63 - 1, 4) == 4 through it). Floats are C's fmod, as NumPy's."""
    if np.result_type(x, y).kind not in "iu":
        return np.fmod(x, y, out=out, **kwargs)
    dtype = np.result_type(x, y)
    with np.errstate(all="ignore"):
        result = np.fmod(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)).astype(dtype)
    if out is not None:
        out[...] = result
        return out
    return result


def clip(a, a_min, a_max, out=None):
    """CuPy's clip: ``a_min if a < a_min else (a_max if a > a_max else a)``, comparisons that a NaN
    bound never satisfies."""
    x = np.asarray(a)
    result = x
    if a_min is not None:
        result = np.where(x < a_min, a_min, result)
    if a_max is not None:
        result = np.where(x > a_max, a_max, result)
    dtype = np.result_type(*[v for v in (x, a_min, a_max) if v is not None])
    result = np.asarray(result, dtype=dtype)
    if out is not None:
        out[...] = result
        return out
    return result


def broadcast_to(array, shape):
    """A writable view, as CuPy's (NumPy's is read-only)."""
    view = np.broadcast_to(array, shape)
    if array.flags.writeable:
        view.flags.writeable = True
    return view


def broadcast_arrays(*args):
    """CuPy's: arrays broadcast to one shape (writable views); other arguments (Python numbers)
    come back unchanged, not as arrays."""
    shape = np.broadcast_shapes(*[np.shape(a) for a in args])
    return [broadcast_to(a, shape) if isinstance(a, np.ndarray) else a for a in args]


def linalg_cholesky(a):
    """CuPy's: no LinAlgError for a matrix that is not positive-definite (unless
    ``cupyx.errstate(linalg='raise')``); here its factor is NaN, where the GPU leaves the failing
    column's diagonal non-positive or NaN."""
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        pass
    flat = a.reshape((-1,) + a.shape[-2:])
    out = np.full(flat.shape, np.nan, dtype=np.linalg.cholesky(np.eye(1, dtype=a.dtype)).dtype)
    for i, m in enumerate(flat):
        try:
            out[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            pass
    return out.reshape(a.shape)


def where(condition, x=None, y=None):
    """CuPy's: the condition must be an array (CuPy calls its ``astype``); a Python bool is an
    AttributeError there, where NumPy takes it."""
    if not isinstance(condition, (np.ndarray, np.generic)):
        raise AttributeError(f"{type(condition).__name__!r} object has no attribute 'astype'")
    if x is None and y is None:
        return np.where(condition)
    return np.where(condition, x, y)


OVERRIDES = {"floor_divide": floor_divide, "remainder": remainder, "mod": remainder, "clip": clip, "fmod": fmod,
             "broadcast_to": broadcast_to, "broadcast_arrays": broadcast_arrays,
             "linalg.cholesky": linalg_cholesky, "where": where}


def check_ufunc_method(qualname, ufunc_name, method, args):
    """Raise what CuPy raises for ``ufunc.accumulate`` and ``ufunc.at`` calls it does not support."""
    if method == "accumulate" and ufunc_name not in ACCUMULATE_SUPPORTED:
        raise NotImplementedError(f"`cupy_{ufunc_name}.accumulate` is not supported yet")
    if method == "at":
        allowed = SCATTER_DTYPES.get(ufunc_name)
        if allowed is None:
            raise NotImplementedError(f"{qualname}: the simulated CuPy has no scatter for {ufunc_name} (CuPy's "
                                      f"gives wrong results for some dtypes; use add.at or another route)")
        target = args[0] if args else None
        dtype = getattr(target, "dtype", None)
        if dtype is not None and dtype.name not in allowed:
            raise TypeError(f"cupy.{ufunc_name}.at only supports {', '.join(allowed)} as data type")


def index_error_as_cupy(exc):
    """CuPy's ValueError for index arrays that do not broadcast together (NumPy's IndexError), or
    None when ``exc`` is another error."""
    text = str(exc)
    if isinstance(exc, IndexError) and "shape mismatch" in text and "broadcast" in text:
        shapes = text.split("shapes", 1)[-1].strip()
        return ValueError(f"operands could not be broadcast together with shapes{shapes}")
    return None
