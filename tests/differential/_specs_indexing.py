"""Generators for indexing ops (gather, scatter, index_*, masked_*, take, put)."""
from ._specs_common import _kw, bool_src, ndim


# ------------------------------------------------------------ indexing ops
def _index_dim(b, x):
    n = ndim(b, x)
    d = b.dim(n, allow_bad=False)
    size = b.shapes[x][d] if n else 1
    return d, size


def gather(b):
    x = b.tensor(min_ndim=1)
    d, size = _index_dim(b, x)
    shape = tuple(b.int_in(0, s) if i != d % ndim(b, x) else b.int_in(1, 3) for i, s in enumerate(b.shapes[x]))
    index = b.index_tensor(size if b.chance(0.95) else size + 1, shape, allow_negative=False)
    return [x, str(d), index], {}


def scatter(b, reduce_kw=False, value=False):
    x = b.tensor(min_ndim=1, grad=False)
    d, size = _index_dim(b, x)
    shape = tuple(b.int_in(0, s) for s in b.shapes[x])
    index = b.index_tensor(size if b.chance(0.95) else size + 1, shape, allow_negative=False)
    if value and b.chance(0.5):
        src = b.python_scalar(("int", "float"))
        return [x, str(d), index], {"value": src}
    src = b.tensor(shape, b.dtypes[x] if b.chance(0.85) else None, grad=False)
    kwargs = {"src": src}
    if reduce_kw and b.chance(0.3):
        kwargs["reduce"] = b.choice(["'add'", "'multiply'"])
    return [x, str(d), index], kwargs


def scatter_reduce(b):
    args, kwargs = scatter(b)
    kwargs["reduce"] = b.choice(["'sum'", "'prod'", "'mean'", "'amax'", "'amin'"])
    if b.chance(0.5):
        kwargs["include_self"] = bool_src(b)
    return args, kwargs


def index_select(b):
    x = b.tensor()
    d, size = _index_dim(b, x)
    index = b.index_tensor(size if b.chance(0.95) else size + 1, (b.int_in(0, 4),), allow_negative=False)
    return [x, str(d), index], {}


def index_add(b, copy=False):
    x = b.tensor(min_ndim=1, grad=False)
    d, size = _index_dim(b, x)
    count = b.int_in(0, size) if copy else b.int_in(0, 4)
    values = b.rng.permutation(size)[:count] if copy else b.rng.integers(0, max(size, 1), count)
    index = b.tensor((count,), "int64", grad=False, layout="contiguous", values=values)
    src_shape = list(b.shapes[x])
    src_shape[d] = count
    src = b.tensor(tuple(src_shape), b.dtypes[x] if b.chance(0.85) else None)
    kwargs = _kw(alpha=b.choice(["2", None, None])) if not copy else {}
    return [x, str(d), index, src], kwargs


def index_copy(b):
    return index_add(b, copy=True)


def index_fill(b):
    x = b.tensor(min_ndim=1, grad=False)
    d, size = _index_dim(b, x)
    index = b.index_tensor(size, (b.int_in(0, 3),), allow_negative=False)
    return [x, str(d), index, b.python_scalar(("int", "float", "bool"))], {}


def index_put(b):
    x = b.tensor(min_ndim=1, grad=False)
    n = ndim(b, x)
    k = b.int_in(1, n)
    count = b.int_in(0, 3)
    indices = [b.index_tensor(b.shapes[x][i], (count,)) for i in range(k)]
    values = b.tensor(b.choice([(count,) + b.shapes[x][k:], ()]), b.dtypes[x] if b.chance(0.8) else None,
                      grad=False)
    return [x, "(" + ", ".join(indices) + ",)", values], _kw(accumulate=bool_src(b) if b.chance(0.5) else None)


def masked_fill(b):
    x = b.tensor(grad=False if b.chance(0.5) else None)
    mask = b.tensor(b.broadcast_partner(b.shapes[x]), "bool" if b.chance(0.9) else None, grad=False)
    value = b.python_scalar() if b.chance(0.7) else b.tensor((), grad=False)
    return [x, mask, value], {}


def masked_scatter(b):
    x = b.tensor(grad=False)
    mask = b.tensor(b.broadcast_partner(b.shapes[x]), "bool", grad=False)
    source = b.tensor((b.int_in(0, 40),) if b.chance(0.5) else b.shapes[x],
                      b.dtypes[x] if b.chance(0.85) else None, grad=False)
    return [x, mask, source], {}


def masked_select(b):
    x = b.tensor()
    mask = b.tensor(b.broadcast_partner(b.shapes[x]), "bool" if b.chance(0.9) else None, grad=False)
    return [x, mask], {}


def take(b):
    x = b.tensor()
    numel = 1
    for s in b.shapes[x]:
        numel *= s
    return [x, b.index_tensor(numel if b.chance(0.95) else numel + 1, b.shape(max_ndim=2))], {}


def take_along_dim(b):
    x = b.tensor(min_ndim=1)
    if b.chance(0.2):
        numel = 1
        for s in b.shapes[x]:
            numel *= s
        return [x, b.index_tensor(numel, (b.int_in(0, 4),), allow_negative=False)], {}
    d, size = _index_dim(b, x)
    shape = list(b.shapes[x])
    shape[d] = b.int_in(1, 3)
    return [x, b.index_tensor(size, tuple(shape), allow_negative=False)], {"dim": str(d)}


def put(b):
    x = b.tensor(grad=False)
    numel = 1
    for s in b.shapes[x]:
        numel *= s
    count = b.int_in(0, 4)
    index = b.index_tensor(numel, (count,))
    source = b.tensor((count,), b.dtypes[x] if b.chance(0.85) else None, grad=False)
    return [x, index, source], _kw(accumulate=bool_src(b) if b.chance(0.5) else None)


def nonzero(b):
    return [b.tensor()], _kw(as_tuple=bool_src(b) if b.chance(0.4) else None)
