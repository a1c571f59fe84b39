"""Argument generators for the everyday-surface ops: bit shifts, index grids, directional and
sized splits, strided views, ``unfold``, ``fill_diagonal_``, ``resize_`` (shrinking only: grown
memory is uninitialised), the scatter variants and ``sum_to_size`` (``sig(b) -> (args, kwargs)``)."""
from ._inputs import INT_DTYPES
from ._specs_common import INTEGRAL, _kw, ndim


def shift(b):
    """Integer operands (mostly the same dtype), shift amounts in and out of [0, bits)."""
    x = b.tensor(pool=INTEGRAL if b.chance(0.9) else ("float32", "int64"))
    if b.chance(0.3):
        return [x, str(b.choice([0, 1, 3, 7, 8, 15, 31, 63, 64, 70, -1]))], {}
    amounts = b.rng.choice([0, 1, 2, 3, 7, 8, 9, 31, 63, 65, -1, -3], size=b.broadcast_partner(b.shapes[x]))
    return [x, b.tensor(amounts.shape, b.dtype(INT_DTYPES), grad=False, layout="contiguous",
                        values=amounts)], {}


def triangle_indices(b):
    row, col = b.int_in(-1 if b.chance(0.05) else 0, 5), b.int_in(0, 5)
    args = [str(row), str(col)]
    if b.chance(0.7):
        args.append(str(b.int_in(-6, 6)))
    return args, _kw(dtype=b.choice(["T.int32", "T.int64", None, None, "T.float32" if b.chance(0.1) else None]))


def unravel_index(b):
    shape = tuple(b.int_in(1, 4) for _ in range(b.int_in(0, 3)))
    numel = 1
    for n in shape:
        numel *= n
    idx = b.index_tensor(numel + 2, b.shape(max_ndim=2), dtype=b.choice(["int64", "int32"]))
    return [idx, repr(shape)], {}


def vectors(b):
    """1-D tensors of one dtype (cartesian_prod)."""
    dtype = b.dtype()
    xs = [b.tensor((b.int_in(0, 3),), dtype) for _ in range(b.int_in(1, 3))]
    return xs, {}


def combinations(b):
    x = b.tensor((b.int_in(0, 5),) if b.chance(0.95) else None)
    args = [x]
    if b.chance(0.8):
        args.append(str(b.int_in(-1 if b.chance(0.05) else 0, 4)))
    return args, _kw(with_replacement=b.choice(["True", "False", None]))


def directional_split(min_ndim, dim):
    def sig(b):
        x = b.tensor(min_ndim=min_ndim if b.chance(0.95) else 0)
        shape = b.shapes[x]
        d = (1 if len(shape) > 1 else 0) if dim is None else dim
        size = shape[d] if len(shape) > d else 0
        if b.chance(0.5):
            return [x, str(b.choice([1, 2, 3, max(size, 1)]))], {}
        return [x, repr(sorted(b.int_in(0, size + 1) for _ in range(b.int_in(0, 3))))], {}
    return sig


def split_with_sizes(b):
    x = b.tensor(min_ndim=1)
    d = b.dim(ndim(b, x), allow_bad=False)
    size = b.shapes[x][d]
    parts, left = [], size
    while left > 0:
        parts.append(b.int_in(0, left))
        left -= parts[-1]
    if b.chance(0.1):
        parts.append(1)
    return [x, repr(parts)], _kw(dim=str(d))


def as_strided(b):
    x = b.tensor(min_ndim=1)
    numel = 1
    for n in b.shapes[x]:
        numel *= n
    size = tuple(b.int_in(0, 3) for _ in range(b.int_in(0, 3)))
    stride = tuple(b.int_in(0, 3) for _ in size)
    args = [x, repr(size), repr(stride)]
    if b.chance(0.5):
        args.append(str(b.int_in(0, max(numel - 1, 0))))
    return args, {}


def unfold(b):
    x = b.tensor()
    n = ndim(b, x)
    d = b.dim(n)
    size = b.shapes[x][d] if n and -n <= d < n else 1
    return [x, str(d), str(b.int_in(0, size + (1 if b.chance(0.05) else 0))),
            str(b.int_in(0 if b.chance(0.05) else 1, 3))], {}


def fill_diagonal(b):
    if b.chance(0.8):
        x = b.tensor((b.int_in(1, 5), b.int_in(1, 5)))
    else:
        n = b.int_in(1, 3)
        x = b.tensor((n,) * b.int_in(1, 4))
    return [x, b.python_scalar()], _kw(wrap=b.choice(["True", "False", None]))


def resize(b):
    """resize_ to a size no larger than the input (growth leaves memory uninitialised)."""
    x = b.tensor(grad=False)
    numel = 1
    for n in b.shapes[x]:
        numel *= n
    target = b.choice([(numel,), (1, numel), ()]) if numel == 1 else (b.int_in(0, numel),)
    return [x, repr(target)], {}


def select_scatter(b):
    x = b.tensor(min_ndim=1)
    d = b.dim(ndim(b, x), allow_bad=False)
    shape = list(b.shapes[x])
    size = shape[d]
    index = b.int_in(-size, size - 1) if size else 0
    src_shape = shape[:d] + shape[d + 1:] if d >= 0 else shape[:d] + shape[len(shape) + d + 1:]
    if b.chance(0.05):
        src_shape = src_shape + [2]
    return [x, b.tensor(src_shape, b.dtypes[x] if b.chance(0.8) else None), str(d), str(index)], {}


def diagonal_scatter(b):
    x = b.tensor(min_ndim=2, max_ndim=3)
    shape = b.shapes[x]
    offset = b.int_in(-2, 2)
    rows, cols = shape[0], shape[1]
    length = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    src_shape = tuple(shape[2:]) + (length,)
    return [x, b.tensor(src_shape, b.dtypes[x]), str(offset)], {}


def sum_to_size(b):
    x = b.tensor()
    shape = list(b.shapes[x])
    target = shape[b.int_in(0, len(shape)):] if shape else []
    target = [1 if b.chance(0.4) else s for s in target]
    if b.chance(0.1):
        target = target + [7]
    return [x] + [str(t) for t in target] if target else [x, "()"], {}


EXPLICIT_ADDITIONS = {
    "bitwise_left_shift": shift, "bitwise_right_shift": shift,
    "tril_indices": triangle_indices, "triu_indices": triangle_indices, "unravel_index": unravel_index,
    "cartesian_prod": vectors, "combinations": combinations,
    "hsplit": directional_split(1, None), "vsplit": directional_split(2, 0), "dsplit": directional_split(3, 2),
    "split_with_sizes": split_with_sizes, "unsafe_split_with_sizes": split_with_sizes,
    "as_strided": as_strided, "as_strided_": as_strided, "unfold": unfold, "fill_diagonal_": fill_diagonal,
    "resize_": resize, "sum_to_size": sum_to_size, "select_scatter": select_scatter,
    "diagonal_scatter": diagonal_scatter,
}
DUNDER_ADDITIONS = {"lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift"}
