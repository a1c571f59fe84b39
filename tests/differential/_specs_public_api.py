"""Argument generators for the rest of PyTorch's public API (issue 18): aminmax, the norm functions
(dist, renorm, frobenius_norm, nuclear_norm), resize/resize_as, the statistics and calculus ops
(cov, corrcoef, vander, trapezoid, cumulative_trapezoid, gradient), index_reduce, the linear
algebra of LU and Householder factors (lu_unpack, lu_solve, geqrf, orgqr, ormqr), the randomized
and direct eigen-solvers (svd_lowrank, pca_lowrank, lobpcg), histogramdd, binomial, cond,
frombuffer, and the process-wide switches, called with the values that leave them as they are
(or with values both libraries refuse) (``sig(b) -> (args, kwargs)``, as in :mod:`_op_specs`)."""
import numpy as np

from ._inputs import ALL_DTYPES, FLOAT_DTYPES
from ._specs_common import _kw, bool_src


def aminmax(b):
    x = b.tensor(min_ndim=0 if b.chance(0.1) else 1)
    n = len(b.shapes[x])
    return [x], _kw(dim=str(b.dim(n)) if b.chance(0.6) else None, keepdim=bool_src(b) if b.chance(0.5) else None)


def dist(b):
    x = b.tensor(pool=FLOAT_DTYPES if b.chance(0.9) else ("int64", "float32"))
    y = b.tensor(b.broadcast_partner(b.shapes[x]), b.dtypes[x] if b.chance(0.8) else None)
    return [x, y], _kw(p=b.choice(["0", "1", "2", "3.5", "float('inf')", None]))


def renorm(b):
    x = b.tensor(min_ndim=2 if b.chance(0.9) else 0, max_ndim=4, pool=FLOAT_DTYPES)
    n = len(b.shapes[x])
    p = b.choice(["1", "2", "3.0", "float('inf')", "0" if b.chance(0.1) else "2"])
    return [x, p, str(b.dim(n)), b.choice(["0.5", "1.0", "5", "-1.0" if b.chance(0.05) else "2.0"])], {}


def frobenius_norm(b):
    x = b.tensor(pool=FLOAT_DTYPES, min_ndim=1)
    n = len(b.shapes[x])
    dims = b.dims(n)[:2] if b.chance(0.95) else tuple(range(n))
    return [x, repr(dims)], _kw(keepdim=bool_src(b) if b.chance(0.5) else None)


def nuclear_norm(b):
    dtype = b.choice(["float32", "float64"])
    x = b.tensor(b.shape(min_ndim=2, max_ndim=3, max_numel=24), dtype)
    if b.chance(0.5):
        return [x] + ([bool_src(b)] if b.chance(0.5) else []), {}
    n = len(b.shapes[x])
    first = b.int_in(0, n - 1)
    second = (first + b.int_in(1, n - 1)) % n
    return [x, repr((first, second))], _kw(keepdim=bool_src(b) if b.chance(0.5) else None)


def resize(b):
    x = b.tensor()
    numel = 1
    for n in b.shapes[x]:
        numel *= n
    sizes = [numel] if b.chance(0.5) else [1, numel]
    if b.chance(0.1):
        sizes = [numel + 1]
    return [x] + [str(s) for s in sizes], {}


def resize_as(b):
    x = b.tensor()
    shape = b.shapes[x]
    other = tuple(reversed(shape)) if b.chance(0.9) else shape + (2,)
    return [x, b.tensor(other)], {}


def cov(b):
    x = b.tensor(b.shape(max_ndim=2, max_numel=12) if b.chance(0.95) else None,
                 pool=FLOAT_DTYPES if b.chance(0.85) else ("int64", "float32"))
    shape = b.shapes[x]
    kwargs = _kw(correction=b.choice(["0", "1", "2", None, None]))
    observations = shape[-1] if shape else 1
    if 1 <= len(shape) <= 2 and b.chance(0.3):
        kwargs["fweights"] = b.tensor((observations,), "int64", grad=False, layout="contiguous",
                                      values=b.rng.integers(0, 4, observations))
    if 1 <= len(shape) <= 2 and b.chance(0.3):
        kwargs["aweights"] = b.tensor((observations,), b.choice(["float32", "float64"]), grad=False,
                                      layout="contiguous", values=b.rng.uniform(0.1, 2, observations).round(2))
    return [x], kwargs


def corrcoef(b):
    return [b.tensor(b.shape(max_ndim=2, max_numel=12), pool=FLOAT_DTYPES if b.chance(0.9) else ("int64",))], {}


def vander(b):
    x = b.tensor((b.int_in(0, 4),) if b.chance(0.95) else None)
    args = [x]
    if b.chance(0.6):
        args.append(str(b.int_in(-1 if b.chance(0.05) else 0, 4)))
    return args, _kw(increasing=bool_src(b) if b.chance(0.5) else None)


def _integration(b, cumulative):
    y = b.tensor(min_ndim=1 if b.chance(0.95) else 0, max_ndim=3, pool=FLOAT_DTYPES if b.chance(0.85) else ALL_DTYPES)
    shape = b.shapes[y]
    kwargs = {}
    dim = b.dim(len(shape)) if b.chance(0.5) else -1
    if b.chance(0.5):
        kwargs["dim"] = str(dim)
    if shape and b.chance(0.4):
        size = shape[dim] if -len(shape) <= dim < len(shape) else 1
        points = b.rng.uniform(0.1, 1, size).cumsum().round(2)
        return [y, b.tensor((size,), b.dtypes[y] if b.dtypes[y] in FLOAT_DTYPES else "float32", values=points)], kwargs
    if b.chance(0.5):
        kwargs["dx"] = b.choice(["0.5", "2", "-1.5"])
    return [y], kwargs


def gradient(b):
    x = b.tensor(b.shape(min_ndim=1, max_ndim=3, max_numel=24), pool=FLOAT_DTYPES if b.chance(0.85) else ALL_DTYPES)
    shape = b.shapes[x]
    kwargs = {}
    if b.chance(0.4):
        kwargs["dim"] = str(b.dim(len(shape))) if b.chance(0.5) else repr(tuple(range(len(shape))))
    dims = [int(kwargs["dim"])] if kwargs.get("dim", "(").lstrip("-").isdigit() else list(range(len(shape)))
    roll = b.rng.random()
    if roll < 0.3:
        kwargs["spacing"] = b.choice(["0.5", "2.0", "3"])
    elif roll < 0.5:
        kwargs["spacing"] = repr([float(b.choice([0.5, 1.0, 2.0])) for _ in dims])
    elif roll < 0.7 and all(-len(shape) <= d < len(shape) for d in dims):
        # coordinates of the input's dtype: with wider ones torch rounds part of its arithmetic to the input's
        coord_dtype = b.dtypes[x] if b.dtypes[x] in FLOAT_DTYPES else "float32"
        coords = [b.tensor((shape[d],), coord_dtype, grad=False, layout="contiguous",
                           values=b.rng.uniform(0.2, 1, shape[d]).cumsum().round(2)) for d in dims]
        kwargs["spacing"] = "(" + ", ".join(coords) + ",)"
    if b.chance(0.4):
        kwargs["edge_order"] = b.choice(["1", "2", "3" if b.chance(0.1) else "2"])
    return [x], kwargs


def index_reduce(b):
    """Mostly valid: slices of the source reduced into rows an index picks (repeats included)."""
    x = b.tensor(min_ndim=1, max_ndim=3, grad=False if b.chance(0.5) else None)
    shape = b.shapes[x]
    d = b.int_in(0, len(shape) - 1)
    size = shape[d]
    count = b.int_in(0, 4)
    values = b.rng.integers(0, max(size, 1), count) if size or b.chance(0.1) else b.rng.integers(0, 1, 0)
    count = len(values)
    index = b.tensor((count,), b.choice(["int64", "int32"]), grad=False, layout="contiguous", values=values)
    src_shape = list(shape)
    src_shape[d] = count
    src = b.tensor(tuple(src_shape), b.dtypes[x] if b.chance(0.9) else None)
    reduce = b.choice(["'prod'", "'mean'", "'amax'", "'amin'", "'sum'" if b.chance(0.1) else "'amax'"])
    return [x, str(d), index, src, reduce], _kw(include_self=bool_src(b) if b.chance(0.5) else None)


def _well_conditioned(b, shape, dtype):
    """Matrices with a dominant diagonal (batched), so that their LU factors are well conditioned."""
    values = b.rng.standard_normal(shape).round(2)
    k = min(shape[-2:])
    values[..., range(k), range(k)] += 4.0
    return b.tensor(shape, dtype, values=values)


def lu_unpack(b):
    m, n = b.int_in(1, 4), b.int_in(1, 4)
    a = _well_conditioned(b, b.shape(max_ndim=1, max_numel=3) + (m, n), b.choice(["float32", "float64"]))
    factors = f"T.linalg.lu_factor({a})"
    args = [f"{factors}[0]", f"{factors}[1]"]
    if b.chance(0.4):
        args += [bool_src(b), bool_src(b)]
    return args, {}


def lu_solve(b):
    n, dtype = b.int_in(1, 4), b.choice(["float32", "float64"])
    batch = b.shape(max_ndim=1, max_numel=3)
    a = _well_conditioned(b, batch + (n, n), dtype)
    rhs = b.tensor(batch + (n, b.int_in(1, 3)) if b.chance(0.95) else (n,), dtype)
    factors = f"T.linalg.lu_factor({a})"
    return [rhs, f"{factors}[0]", f"{factors}[1]"], {}


def orgqr(b):
    m = b.int_in(1, 4)
    n = b.int_in(1, m)
    dtype = b.choice(["float32", "float64"])
    batch = b.shape(max_ndim=1, max_numel=2)
    k = b.int_in(0, n)
    # finite, moderate values: torch's backward overflows to NaN or loses terms near the float limits
    return [b.tensor(batch + (m, n), dtype, values=b.rng.standard_normal(batch + (m, n)).round(2)),
            b.tensor(batch + (k,), dtype, values=b.rng.uniform(-2, 2, batch + (k,)).round(2))], {}


def geqrf(b):
    m, n = b.int_in(0 if b.chance(0.05) else 1, 4), b.int_in(1, 4)
    dtype = b.choice(["float32", "float64"]) if b.chance(0.95) else b.choice(["int64", "float16"])
    batch = b.shape(max_ndim=1, max_numel=2)
    values = b.rng.standard_normal(batch + (m, n)).round(2)
    if m > 1 and b.chance(0.2):
        values[..., 1:, 0] = 0      # a column with nothing to annihilate: the identity reflector
    return [b.tensor(batch + (m, n), dtype, values=values)], {}


def ormqr(b):
    m = b.int_in(1, 4)
    n = b.int_in(1, m)
    k = n if b.chance(0.9) else b.int_in(0, n)
    dtype = b.choice(["float32", "float64"])
    # (not an empty batch: torch's backward then leaves some gradients undefined, gputorch's are empty)
    batch = (b.int_in(1, 2),) if b.chance(0.5) else ()
    a = b.tensor(batch + (m, n), dtype, values=b.rng.standard_normal(batch + (m, n)).round(2))
    tau = b.tensor(batch + (k,), dtype, values=b.rng.uniform(0, 2, batch + (k,)).round(2))
    left = b.chance(0.5)
    other_shape = batch + ((m, b.int_in(1, 3)) if left else (b.int_in(1, 3), m))
    other = b.tensor(other_shape, dtype, values=b.rng.standard_normal(other_shape).round(2))
    return [a, tau, other, str(left), bool_src(b)], {}


def lowrank(pca):
    def sig(b):
        m, n = b.int_in(1, 5), b.int_in(1, 5)
        shape = b.shape(max_ndim=1, max_numel=2) + (m, n)
        # finite values: torch's SVD refuses non-finite ones, gputorch's linalg.svd returns NaN
        a = b.tensor(shape, b.choice(["float32", "float64"]), values=b.rng.standard_normal(shape).round(2))
        kwargs = _kw(q=str(b.int_in(0, min(m, n)) if pca else b.int_in(1, 6)) if b.chance(0.6) else None,
                     niter=str(b.int_in(0, 3)) if b.chance(0.5) else None)
        if pca and b.chance(0.3):
            kwargs["center"] = bool_src(b)
        return [a], kwargs
    return sig


def cond(b):
    x = b.tensor(b.shape(max_ndim=2), b.choice(["float32", "float64"]))
    pred = b.choice(["True", "False", "1", f"({x}.sum() > 0)", f"{x}.isnan().all()"])
    return [pred, "lambda a: a * 2 + 1", "lambda a: a.exp()", f"({x},)"], {}


def embedding_renorm_(b):
    rows, width = b.int_in(1, 5), b.int_in(1, 3)
    weight = b.tensor((rows, width) if b.chance(0.95) else (rows,), b.choice(["float32", "float64"]), grad=False)
    index = b.index_tensor(rows, (b.int_in(0, 4),), allow_negative=False, dtype=b.choice(["int64", "int32"]))
    return [weight, index, b.choice(["0.5", "1.0", "3.0"]), b.choice(["1.0", "2.0", "3.0", "float('inf')"])], {}


def frombuffer(b):
    length = b.int_in(0, 12)
    dtype = b.choice(["T.uint8", "T.int8", "T.int16", "T.int32", "T.float32", "T.float64"])
    kwargs = {"dtype": dtype}
    if b.chance(0.4):
        kwargs["offset"] = str(b.int_in(0, 4))
    if b.chance(0.4):
        kwargs["count"] = str(b.int_in(-1, 3))
    return [f"bytearray(range({length}))"], kwargs


def histogramdd(b):
    dims = b.int_in(1, 3)
    dtype = b.choice(["float32", "float64"]) if b.chance(0.95) else "int64"
    x = b.tensor(b.shape(min_ndim=1, max_ndim=2, max_numel=12) + (dims,), dtype)
    kwargs = {}
    roll = b.rng.random()
    if roll < 0.4:
        bins = str(b.int_in(1, 4))
    elif roll < 0.7:
        bins = repr([b.int_in(1, 4) for _ in range(dims)])
    else:
        counts = [b.int_in(2, 4) for _ in range(dims)]
        edges = [b.tensor((k,), dtype, grad=False, values=sorted(b.rng.uniform(-2, 2, k).round(2))) for k in counts]
        bins = "[" + ", ".join(edges) + "]"
    if roll < 0.7 and b.chance(0.4):
        kwargs["range"] = repr([v for _ in range(dims) for v in sorted(b.rng.uniform(-2, 2, 2).round(1).tolist())])
    if b.chance(0.3):
        kwargs["weight"] = b.tensor(b.shapes[x][:-1], dtype, grad=False)
    if b.chance(0.3):
        kwargs["density"] = "True"
    return [x, bins], kwargs


def nonzero_static(b):
    x = b.tensor(b.shape(max_ndim=3, max_numel=12))
    return [x], _kw(size=str(b.int_in(-1 if b.chance(0.05) else 0, 6)), fill_value=b.choice(["-1", "7", None]))


def binomial(b):
    dtype = b.choice(["float32", "float64"]) if b.chance(0.9) else b.choice(["float16", "int64"])
    shape = b.shape(max_ndim=2)
    count = b.tensor(shape, dtype, values=b.rng.integers(0, 40, shape))
    prob_dtype = dtype if b.chance(0.9) else "float64"
    partner = b.broadcast_partner(shape) if b.chance(0.3) else shape
    prob = b.tensor(partner, prob_dtype, values=b.rng.uniform(0, 1, partner).round(2))
    return [count, prob], {}


def lobpcg(b):
    """Symmetric positive-definite matrices (compared as a random op: torch's initial vectors are random
    and its iteration stops at a tolerance)."""
    m = b.int_in(3, 8)
    dtype = b.choice(["float32", "float64"])

    def spd():
        a = b.rng.standard_normal((m, m)).round(2)
        return b.tensor((m, m), dtype, values=(a @ a.T + m * np.eye(m)).round(3))
    kwargs = _kw(k=str(b.int_in(1, max(1, m // 3) + (1 if b.chance(0.1) else 0))) if b.chance(0.8) else None,
                 largest=bool_src(b) if b.chance(0.5) else None)
    if b.chance(0.3):
        kwargs["B"] = spd()
    return [spd()], kwargs


def _no_arguments(b):
    return [], {}


SWITCHES = {
    "are_deterministic_algorithms_enabled": _no_arguments,
    "is_deterministic_algorithms_warn_only_enabled": _no_arguments,
    "get_deterministic_debug_mode": _no_arguments, "is_anomaly_enabled": _no_arguments,
    "is_anomaly_check_nan_enabled": _no_arguments, "is_warn_always_enabled": _no_arguments,
    "use_deterministic_algorithms": lambda b: ([b.choice(["False", "0"])], {}),
    "set_deterministic_debug_mode": lambda b: ([b.choice(["0", "'default'", "'never'", "3", "1.5"])], {}),
    "set_anomaly_enabled": lambda b: (["False"], {}),
    "set_warn_always": lambda b: ([b.choice(["False", "None"])], {}),
    "set_flush_denormal": lambda b: (["False"], {}),
}

def embedding_bag(b):
    """``T.embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
    include_last_offset, padding_idx)`` on well-formed bags (offsets rise from 0; with
    ``include_last_offset`` the last one is the index count); all four outputs are compared. Not
    drawn: ``include_last_offset`` with sum, where the length of torch's all-zero ``bag_size`` and
    ``max_indices`` depends on its kernel's path (see ``gputorch.embedding_bag``), and empty
    ``per_sample_weights`` that require a gradient (F.embedding_bag gives them None, torch zeros)."""
    rows, width, length = b.int_in(1, 6), b.int_in(1, 3), b.int_in(0, 8)
    dtype = b.choice(["float32", "float64"])
    weight = b.tensor((rows, width), dtype, values=b.rng.standard_normal((rows, width)))
    indices = b.index_tensor(rows, (length,), allow_negative=False)
    cuts = sorted(int(c) for c in b.rng.integers(0, length + 1, size=b.int_in(0, 3)))
    mode = b.int_in(0, 2) if b.chance(0.97) else 3
    last = mode != 0 and b.chance(0.3)
    offsets = [0] + cuts + ([length] if last else [])
    offsets = b.tensor((len(offsets),), "int64", grad=False, layout="contiguous", values=np.array(offsets))
    weights = None
    if mode == 0 and length and b.chance(0.3):
        weights = b.tensor((length,), dtype, values=b.rng.random(length))
    pad = str(b.int_in(-rows, rows - 1)) if b.chance(0.4) else "None"
    return [weight, indices, offsets, "False", str(mode), "False", weights or "None", str(last), pad], {}


def slice_inverse(b):
    """``x[start:end:step].slice_inverse(x, dim, ...)``: the slice's base, with ``x``'s layout."""
    x = b.tensor(min_ndim=1, max_ndim=3, grad=False)
    n = len(b.shapes[x])
    dim = b.int_in(0, n - 1)
    size = b.shapes[x][dim]
    start, end, step = b.int_in(0, size), b.int_in(0, size), b.int_in(1, 2)
    key = ", ".join([":"] * dim + [f"{start}:{end}:{step}"])
    return [f"{x}[{key}]", x, str(dim), str(start), str(end), str(step)], {}


def mtia(b):
    """No MTIA device on either side: the same exception for each kind of ``device``."""
    return [b.tensor(max_ndim=2)], _kw(device=b.choice([None, "'cpu'", "'mtia'", "'mtia:0'", "0"]))


SPECS = {
    "aminmax": aminmax, "dist": dist, "renorm": renorm, "renorm_": renorm, "frobenius_norm": frobenius_norm,
    "nuclear_norm": nuclear_norm, "resize": resize, "resize_as": resize_as, "cov": cov, "corrcoef": corrcoef,
    "vander": vander, "trapezoid": lambda b: _integration(b, False), "trapz": lambda b: _integration(b, False),
    "cumulative_trapezoid": lambda b: _integration(b, True), "gradient": gradient, "index_reduce": index_reduce,
    "index_reduce_": index_reduce, "lu_unpack": lu_unpack, "lu_solve": lu_solve,
    "orgqr": orgqr, "cond": cond, "embedding_renorm_": embedding_renorm_, "frombuffer": frombuffer,
    "histogramdd": histogramdd, "nonzero_static": nonzero_static, "geqrf": geqrf, "ormqr": ormqr,
    "svd_lowrank": lowrank(False), "pca_lowrank": lowrank(True), "binomial": binomial, "lobpcg": lobpcg,
    "embedding_bag": embedding_bag, "slice_inverse": slice_inverse, "mtia": mtia,
    **SWITCHES,
}
