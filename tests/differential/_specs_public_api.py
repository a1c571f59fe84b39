"""Argument generators for the rest of PyTorch's public API (issue 18): aminmax, the norm functions
(dist, renorm, frobenius_norm, nuclear_norm), resize/resize_as, the statistics and calculus ops
(cov, corrcoef, vander, trapezoid, cumulative_trapezoid, gradient), index_reduce, and the
process-wide switches, called with the values that leave them as they are (or with values both
libraries refuse) (``sig(b) -> (args, kwargs)``, as in :mod:`_op_specs`)."""
from ._inputs import FLOAT_DTYPES
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


def _no_arguments(b):
    return [], {}


SWITCHES = {
    "are_deterministic_algorithms_enabled": _no_arguments, "is_deterministic_algorithms_warn_only_enabled": _no_arguments,
    "get_deterministic_debug_mode": _no_arguments, "is_anomaly_enabled": _no_arguments,
    "is_anomaly_check_nan_enabled": _no_arguments, "is_warn_always_enabled": _no_arguments,
    "use_deterministic_algorithms": lambda b: ([b.choice(["False", "0"])], {}),
    "set_deterministic_debug_mode": lambda b: ([b.choice(["0", "'default'", "'never'", "3", "1.5"])], {}),
    "set_anomaly_enabled": lambda b: (["False"], {}),
    "set_warn_always": lambda b: ([b.choice(["False", "None"])], {}),
    "set_flush_denormal": lambda b: (["False"], {}),
}

SPECS = {
    "aminmax": aminmax, "dist": dist, "renorm": renorm, "renorm_": renorm, "frobenius_norm": frobenius_norm,
    "nuclear_norm": nuclear_norm, "resize": resize, "resize_as": resize_as, **SWITCHES,
}
