"""Generators for pointwise, binary, ternary and reduction ops."""
from ._inputs import ALL_DTYPES, FLOAT_DTYPES
from ._specs_common import INTEGRAL, _kw, bool_src, maybe_dim_kw, ndim, other_operand


# --------------------------------------------------------------- families
def unary(b):
    return [b.tensor()], {}


def unary_float(b):
    return [b.tensor(pool=FLOAT_DTYPES if b.chance(0.85) else ALL_DTYPES)], {}


def binary(b):
    x = b.tensor()
    y = other_operand(b, x)
    if b.chance(0.1):
        return [y, x], {}
    return [x, y], {}


def binary_alpha(b):
    args, _ = binary(b)
    return args, _kw(alpha=b.python_scalar(("int", "float")) if b.chance(0.25) else None)


def binary_integral(b):
    x = b.tensor(pool=INTEGRAL if b.chance(0.8) else ALL_DTYPES)
    if b.chance(0.7):  # mostly an integral partner: the op's real domain
        return [x, b.tensor(b.broadcast_partner(b.shapes[x]), b.dtype(INTEGRAL))], {}
    return [x, other_operand(b, x)], {}


def lcm(b):
    """``binary_integral`` without special values: torch's C++ lcm divides an int32/int64 minimum by
    a gcd of -1, which traps (SIGFPE) and kills the run (gputorch's lcm of the narrower widths'
    minimum is compared in tests/ops/test_number_parts.py)."""
    specials, b.specials = b.specials, False
    try:
        return binary_integral(b)
    finally:
        b.specials = specials


def div(b):
    args, _ = binary(b)
    return args, _kw(rounding_mode=b.choice(["'trunc'", "'floor'", "None", None, None]))


def reduction(multi=True, keepdim=True, dtype_kw=False, dim_required=False):
    def sig(b):
        x = b.tensor()
        kwargs = _kw(dim=maybe_dim_kw(b, x, multi, dim_required))
        if keepdim and "dim" in kwargs and b.chance(0.5):
            kwargs["keepdim"] = bool_src(b)
        if dtype_kw and b.chance(0.2):
            kwargs["dtype"] = "T." + b.choice(ALL_DTYPES)
        return [x], kwargs
    return sig


def std_var(b):
    x = b.tensor(pool=FLOAT_DTYPES if b.chance(0.8) else ALL_DTYPES)
    kwargs = _kw(dim=maybe_dim_kw(b, x, multi=True))
    if b.chance(0.4):
        kwargs["correction"] = b.choice(["0", "1", "2"])
    elif b.chance(0.2):
        kwargs["unbiased"] = bool_src(b)
    if "dim" in kwargs and b.chance(0.5):
        kwargs["keepdim"] = bool_src(b)
    return [x], kwargs


def norm(b):
    x = b.tensor(pool=FLOAT_DTYPES if b.chance(0.85) else ALL_DTYPES)
    kwargs = _kw(p=b.choice(["1", "2", "3", "inf", "-inf", "0", "'fro'", None]))
    dim = maybe_dim_kw(b, x, multi=True)
    if dim is not None:
        kwargs["dim"] = dim
        if b.chance(0.5):
            kwargs["keepdim"] = bool_src(b)
    return [x], kwargs


def max_min(b):
    """``max``/``min``: full reduction, along a dim (namedtuple), or elementwise binary."""
    x = b.tensor()
    roll = b.rng.random()
    if roll < 0.3:
        return [x], {}
    if roll < 0.75:
        return [x, str(b.dim(ndim(b, x)))] + ([bool_src(b)] if b.chance(0.4) else []), {}
    return [x, b.tensor(b.broadcast_partner(b.shapes[x]), b.dtypes[x] if b.chance(0.6) else None)], {}


def dim_reduction(keepdim=True, dim_required=False):
    """``argmax``/``median``/``mode``-like: at most one dim."""
    def sig(b):
        x = b.tensor()
        kwargs = _kw(dim=maybe_dim_kw(b, x, required=dim_required))
        if keepdim and "dim" in kwargs and b.chance(0.5):
            kwargs["keepdim"] = bool_src(b)
        return [x], kwargs
    return sig


def along_dim(extra=None, pool=ALL_DTYPES):
    """Ops with a required ``dim`` (cumsum, softmax, ...)."""
    def sig(b):
        x = b.tensor(pool=pool)
        kwargs = {"dim": str(b.dim(ndim(b, x)))}
        if extra:
            kwargs.update(extra(b))
        return [x], kwargs
    return sig


def sort(b):
    x = b.tensor()
    kwargs = _kw(dim=maybe_dim_kw(b, x), descending=bool_src(b) if b.chance(0.5) else None,
                 stable=bool_src(b) if b.chance(0.3) else None)
    return [x], kwargs


def argsort(b):
    return sort(b)


def kthvalue(b):
    x = b.tensor(min_ndim=1)
    d = b.dim(ndim(b, x))
    size = b.shapes[x][d] if -ndim(b, x) <= d < ndim(b, x) else 1
    k = b.int_in(1, max(size, 1)) if b.chance(0.9) else size + 1
    return [x, str(k)], _kw(dim=str(d), keepdim=bool_src(b) if b.chance(0.4) else None)


def topk(b):
    x = b.tensor(min_ndim=1)
    d = b.dim(ndim(b, x), allow_bad=False)
    size = b.shapes[x][d]
    k = b.int_in(0, size) if b.chance(0.9) else size + 1
    return [x, str(k)], _kw(dim=str(d), largest=bool_src(b) if b.chance(0.5) else None,
                           sorted=bool_src(b) if b.chance(0.3) else None)


def clamp(b):
    x = b.tensor()
    def bound():
        if b.chance(0.3):
            return "None"
        if b.chance(0.6):
            return b.python_scalar(("int", "float"))
        return b.tensor(b.broadcast_partner(b.shapes[x]), b.dtypes[x] if b.chance(0.7) else None)
    low, high = bound(), bound()
    return [x], _kw(min=low, max=high)


def clamp_one(b):
    x = b.tensor()
    bound = b.python_scalar(("int", "float")) if b.chance(0.6) else b.tensor(
        b.broadcast_partner(b.shapes[x]), b.dtypes[x])
    return [x, bound], {}


def lerp(b):
    x = b.tensor(pool=FLOAT_DTYPES if b.chance(0.85) else ALL_DTYPES)
    end = b.tensor(b.broadcast_partner(b.shapes[x]), b.dtypes[x] if b.chance(0.8) else None)
    weight = b.python_scalar(("float",)) if b.chance(0.5) else b.tensor(
        b.broadcast_partner(b.shapes[x]), b.dtypes[x])
    return [x, end, weight], {}


def addcmul(b):
    x = b.tensor()
    t1 = b.tensor(b.broadcast_partner(b.shapes[x]), b.dtypes[x] if b.chance(0.7) else None)
    t2 = b.tensor(b.broadcast_partner(b.shapes[x]), b.dtypes[x] if b.chance(0.7) else None)
    return [x, t1, t2], _kw(value=b.python_scalar(("int", "float")) if b.chance(0.4) else None)


def where(b):
    if b.chance(0.15):
        return [b.tensor(pool=ALL_DTYPES)], {}
    cond = b.tensor(dtype="bool" if b.chance(0.85) else None)
    x = other_operand(b, cond, scalar_p=0.2)
    y = other_operand(b, cond, scalar_p=0.2)
    return [cond, x, y], {}


def isclose(b):
    x = b.tensor()
    y = b.tensor(b.broadcast_partner(b.shapes[x]), b.dtypes[x] if b.chance(0.8) else None)
    return [x, y], _kw(rtol=b.choice(["1e-5", "0.1", None]), atol=b.choice(["1e-8", "0.5", None]),
                       equal_nan=bool_src(b) if b.chance(0.4) else None)


def equal(b):
    x = b.tensor()
    if b.chance(0.4):
        return [x, x], {}
    return [x, b.tensor(b.broadcast_partner(b.shapes[x]) if b.chance(0.3) else b.shapes[x],
                        b.dtypes[x] if b.chance(0.8) else None)], {}


def nan_to_num(b):
    x = b.tensor()
    return [x], _kw(nan=b.choice(["0.0", "1.5", None]), posinf=b.choice(["100.0", None]),
                    neginf=b.choice(["-100.0", None]))


def round_(b):
    x = b.tensor()
    return [x], _kw(decimals=b.choice(["0", "1", "2", "-1"]) if b.chance(0.4) else None)


def pdist(b):
    """``pdist(x, p)`` on a 2-d tensor with at least one row (torch's own backward crashes with
    none: a segmentation fault inside torch 2.13, so those inputs are not drawn)."""
    x = b.tensor((b.int_in(1, 5), b.int_in(0, 4)), pool=FLOAT_DTYPES if b.chance(0.9) else ALL_DTYPES)
    kwargs = {} if b.chance(0.3) else {"p": b.choice(["0.0", "1.0", "2.0", "3.0", "0.5", "inf"])}
    return [x], kwargs
