"""Argument generators for the set, counting, bucketing, quantile and cumulative-extrema ops
(``sig(b) -> (args, kwargs)``, as in :mod:`_op_specs`): repeated small values for the set ops,
sorted boundaries for searchsorted/bucketize, bin edges and ranges for the histograms."""
import numpy as np

from ._inputs import FLOAT_DTYPES, INT_DTYPES
from ._specs_common import _kw, bool_src, maybe_dim_kw, ndim
from . import _specs_math as math_specs


def unique(b):
    x = b.tensor()
    kw = _kw(sorted=bool_src(b) if b.chance(0.3) else None,
             return_inverse=bool_src(b) if b.chance(0.6) else None,
             return_counts=bool_src(b) if b.chance(0.6) else None,
             dim=str(b.dim(ndim(b, x))) if b.chance(0.4) else None)
    if b.chance(0.5):   # repeated values: small integers
        x = b.tensor(b.shapes[x], b.choice(["int64", "int8", "uint8", "float32", "bool"]),
                     values=np.asarray(b.rng.integers(0, 3, b.shapes[x])))
    return [x], kw


def unique_consecutive(b):
    args, kw = unique(b)
    kw.pop("sorted", None)
    return args, kw


def isin(b):
    x = b.tensor(pool=INT_DTYPES + FLOAT_DTYPES + ("bool",) if b.chance(0.1) else INT_DTYPES + FLOAT_DTYPES)
    if b.chance(0.2):
        t = b.python_scalar(("int", "float"))
    else:
        t = b.tensor(b.shape(max_ndim=3), pool=INT_DTYPES + FLOAT_DTYPES)
    kw = _kw(invert=bool_src(b) if b.chance(0.4) else None, assume_unique=bool_src(b) if b.chance(0.2) else None)
    if b.chance(0.15):
        return [b.python_scalar(("int", "float")), x], kw
    return [x, t], kw


def bincount(b):
    shape = (b.int_in(0, 8),) if b.chance(0.9) else b.shape()
    dtype = b.choice(["int64", "int32", "uint8", "int8", "int16"] + (["float32", "bool"] if b.chance(0.1) else []))
    vals = b.rng.integers(-1 if b.chance(0.05) else 0, 7, shape)
    x = b.tensor(shape, dtype, values=vals if dtype != "bool" else vals > 2)
    kw = {}
    if b.chance(0.5):
        kw["weights"] = b.tensor(shape if b.chance(0.95) else (shape[0] + 1,) if shape else (1,),
                                 pool=FLOAT_DTYPES + INT_DTYPES)
    if b.chance(0.4):
        kw["minlength"] = str(b.choice([0, 3, 9, -1] if b.chance(0.1) else [0, 3, 9]))
    return [x], kw


def _sorted_boundaries(b, shape, dtype):
    vals = np.sort(np.round(b.rng.standard_normal(shape) * 2, 1), axis=-1)
    if dtype in INT_DTYPES:
        vals = np.round(vals).astype(np.int64)
    if b.specials and vals.size and b.chance(0.1):
        vals.reshape(-1)[-1] = np.nan if dtype in FLOAT_DTYPES else vals.reshape(-1)[-1]
    return b.tensor(shape, dtype, values=vals, layout="contiguous")


def searchsorted(b):
    dtype = b.choice(list(FLOAT_DTYPES + INT_DTYPES))
    if b.chance(0.5):
        seq = _sorted_boundaries(b, (b.int_in(1, 6),), dtype)
        vals = b.python_scalar(("int", "float")) if b.chance(0.15) else b.tensor(b.shape(max_ndim=3),
                                                                                 pool=FLOAT_DTYPES + INT_DTYPES)
    else:
        lead = b.shape(max_ndim=2)
        seq = _sorted_boundaries(b, lead + (b.int_in(1, 5),), dtype)
        vals = b.tensor(lead + (b.int_in(0, 4),), pool=FLOAT_DTYPES + INT_DTYPES)
    kw = _kw(right=bool_src(b) if b.chance(0.3) else None, out_int32=bool_src(b) if b.chance(0.2) else None,
             side=b.choice(["'left'", "'right'"]) if b.chance(0.2) else None)
    return [seq, vals], kw


def bucketize(b):
    dtype = b.choice(list(FLOAT_DTYPES + INT_DTYPES))
    bounds = _sorted_boundaries(b, (b.int_in(0, 6),), dtype)
    x = b.python_scalar(("int", "float")) if b.chance(0.1) else b.tensor(pool=FLOAT_DTYPES + INT_DTYPES)
    kw = _kw(right=bool_src(b) if b.chance(0.4) else None, out_int32=bool_src(b) if b.chance(0.2) else None)
    return [x, bounds], kw


def histc(b):
    x = b.tensor(pool=FLOAT_DTYPES if b.chance(0.95) else INT_DTYPES)
    kw = _kw(bins=str(b.choice([1, 3, 7, 100])) if b.chance(0.7) else None)
    if b.chance(0.5):
        lo = b.choice([-2.0, -1.0, 0.0, 0.5])
        kw["min"], kw["max"] = str(lo), str(lo + b.choice([0.0, 1.5, 4.0, -1.0] if b.chance(0.1) else [1.5, 4.0]))
    return [x], kw


def histogram(b):
    x = b.tensor(pool=("float32", "float64"))
    kw = {}
    if b.chance(0.3):
        edges = _sorted_boundaries(b, (b.int_in(1, 6),), b.dtypes[x])
        args = [x, edges]
    else:
        args = [x] + ([str(b.choice([1, 3, 7, 100]))] if b.chance(0.8) else [])
        if b.chance(0.4):
            lo = b.choice([-2.0, -1.0, 0.0])
            kw["range"] = f"({lo}, {lo + b.choice([0.0, 1.5, 4.0])})"
    if b.chance(0.3):
        kw["weight"] = b.tensor(b.shapes[x], b.dtypes[x])
    if b.chance(0.3):
        kw["density"] = bool_src(b)
    return args, kw


def quantile(b):
    x = b.tensor(pool=FLOAT_DTYPES if b.chance(0.9) else INT_DTYPES)
    if b.chance(0.4):
        q = b.choice(["0.0", "0.25", "0.5", "1.0", "0.73"] + (["1.5", "-0.1"] if b.chance(0.1) else []))
    else:
        dt = b.dtypes[x] if b.chance(0.9) else b.choice(list(FLOAT_DTYPES))
        shape = b.choice([(), (1,), (3,)] + ([(2, 2)] if b.chance(0.1) else []))
        q = b.tensor(shape, dt, grad=False, values=np.round(b.rng.uniform(0, 1, shape), 2))
    kw = _kw(dim=maybe_dim_kw(b, x), interpolation=b.choice(["'linear'", "'lower'", "'higher'", "'midpoint'",
                                                            "'nearest'"]) if b.chance(0.7) else None)
    if b.chance(0.4):
        kw["keepdim"] = bool_src(b)
    return [x, q], kw


def diff(b):
    x = b.tensor()
    kw = _kw(n=str(b.choice([0, 1, 2, 3])) if b.chance(0.5) else None,
             dim=str(b.dim(ndim(b, x))) if b.chance(0.5) else None)
    for key in ("prepend", "append"):
        if b.chance(0.25) and b.shapes[x]:
            shape = list(b.shapes[x])
            d = int(kw.get("dim", -1)) % len(shape) if -len(shape) <= int(kw.get("dim", -1)) < len(shape) else -1
            shape[d] = b.int_in(0, 2)
            kw[key] = b.tensor(tuple(shape), b.dtypes[x] if b.chance(0.7) else None)
    return [x], kw


SPECS = {"unique": unique, "unique_consecutive": unique_consecutive, "isin": isin, "bincount": bincount,
         "searchsorted": searchsorted, "bucketize": bucketize, "histc": histc, "histogram": histogram,
         "quantile": quantile, "nanquantile": quantile, "diff": diff,
         "cummax": math_specs.along_dim(), "cummin": math_specs.along_dim()}
