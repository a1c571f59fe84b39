"""Generators for shape ops (reshape, permute, cat, split, ...)."""
from ._specs_common import _kw, ndim


# ------------------------------------------------------------ shape ops
def _shape_src(shape):
    return "(" + "".join(f"{s}, " for s in shape) + ")"


def reshape(b):
    x = b.tensor()
    shape = list(b.shapes[x])
    numel = 1
    for s in shape:
        numel *= s
    target = [numel] if numel else [0]
    if numel > 1 and b.chance(0.7):
        for f in (2, 3):
            if numel % f == 0 and b.chance(0.5):
                target = [f, numel // f]
    if b.chance(0.3):
        target[b.int_in(0, len(target) - 1)] = -1
    if b.chance(0.1):
        target = [numel + 1]
    if b.chance(0.3):
        return [x] + [str(t) for t in target], {}
    return [x, _shape_src(target)], {}


def flatten(b):
    x = b.tensor()
    n = ndim(b, x)
    kwargs = {}
    if b.chance(0.6):
        kwargs["start_dim"] = str(b.dim(n))
    if b.chance(0.5):
        kwargs["end_dim"] = str(b.dim(n))
    return [x], kwargs


def unflatten(b):
    x = b.tensor(min_ndim=1)
    d = b.dim(ndim(b, x), allow_bad=False)
    size = b.shapes[x][d]
    sizes = (size,) if size < 2 else b.choice([(1, size), (size, 1), (-1, 1), (size,)])
    if size == 4 and b.chance(0.5):
        sizes = (2, 2)
    return [x, str(d), _shape_src(sizes)], {}


def squeeze(b):
    x = b.tensor()
    if b.chance(0.3):
        return [x], {}
    if b.chance(0.3):
        return [x, repr(b.dims(ndim(b, x)))], {}
    return [x, str(b.dim(ndim(b, x)))], {}


def unsqueeze(b):
    x = b.tensor(max_ndim=4)
    return [x, str(b.dim(ndim(b, x) + 1))], {}


def transpose(b):
    x = b.tensor()
    n = ndim(b, x)
    return [x, str(b.dim(n)), str(b.dim(n))], {}


def permute(b):
    x = b.tensor()
    perm = b.rng.permutation(ndim(b, x)).tolist()
    if perm and b.chance(0.3):
        perm[0] -= ndim(b, x)
    if b.chance(0.05):
        perm = perm + [0]
    if b.chance(0.5):
        return [x] + [str(p) for p in perm], {}
    return [x, _shape_src(perm)], {}


def movedim(b):
    x = b.tensor()
    n = ndim(b, x)
    if b.chance(0.3) and n >= 2:
        src = b.dims(n)
        dst = tuple(b.rng.permutation(n)[:len(src)].tolist())
        return [x, repr(src), repr(dst)], {}
    return [x, str(b.dim(n)), str(b.dim(n))], {}


def expand(b):
    shape = list(b.shape(max_ndim=4))
    x = b.tensor(tuple(1 if (s and b.chance(0.5)) else s for s in shape))
    target = [s if b.chance(0.8) else -1 for s in shape]
    if b.chance(0.3):
        target = [b.int_in(1, 3)] + target
    if b.chance(0.05):
        target = [t + 1 for t in target]
    if b.chance(0.4):
        return [x] + [str(t) for t in target], {}
    return [x, _shape_src(target)], {}


def broadcast_to(b):
    args, _ = expand(b)
    if len(args) == 2:
        return args, {}
    return [args[0], _shape_src(args[1:])], {}


def like_other(b):
    """``expand_as``/``view_as``/``reshape_as``/``type_as``: a second tensor."""
    x = b.tensor()
    shape = b.broadcast_partner(b.shapes[x]) if b.chance(0.5) else b.shapes[x]
    if b.chance(0.5):
        shape = (b.int_in(1, 2),) + tuple(shape)
    return [x, b.tensor(shape, grad=False)], {}


def repeat(b):
    x = b.tensor(max_ndim=3)
    reps = [b.int_in(0 if b.chance(0.1) else 1, 3) for _ in range(ndim(b, x) + b.int_in(0, 1))]
    if b.chance(0.1) and reps:
        reps = reps[1:]
    if b.chance(0.5):
        return [x] + [str(r) for r in reps] if reps else [x, "()"], {}
    return [x, _shape_src(reps)], {}


def tile(b):
    x = b.tensor(max_ndim=3)
    reps = [b.int_in(1, 3) for _ in range(b.int_in(0, ndim(b, x) + 1))]
    return [x, _shape_src(reps)], {}


def flip(b):
    x = b.tensor()
    dims = b.dims(ndim(b, x))
    if b.chance(0.5):
        return [x, repr(dims)], {}
    return [x] + [str(d) for d in dims], {}


def roll(b):
    x = b.tensor()
    n = ndim(b, x)
    if b.chance(0.3):
        return [x, str(b.int_in(-5, 5))], {}
    dims = b.dims(n)
    shifts = tuple(b.int_in(-5, 5) for _ in dims)
    if len(dims) == 1 and b.chance(0.5):
        return [x, str(shifts[0]), str(dims[0])], {}
    return [x, repr(shifts), repr(dims)], {}


def chunk(b):
    x = b.tensor(min_ndim=1)
    return [x, str(b.int_in(0 if b.chance(0.05) else 1, 5))], _kw(
        dim=str(b.dim(ndim(b, x))) if b.chance(0.7) else None)


def split(b):
    x = b.tensor(min_ndim=1)
    d = b.dim(ndim(b, x), allow_bad=False)
    size = b.shapes[x][d]
    if b.chance(0.5):
        sections = str(b.int_in(0 if b.chance(0.05) else 1, 4))
    else:
        parts = []
        left = size
        while left > 0:
            parts.append(b.int_in(0, left))
            left -= parts[-1]
            if b.chance(0.2):
                break
        if b.chance(0.1):
            parts.append(1)
        sections = repr(parts)
    return [x, sections], {"dim": str(d)}


def tensor_split(b):
    x = b.tensor(min_ndim=1)
    d = b.dim(ndim(b, x), allow_bad=False)
    size = b.shapes[x][d]
    if b.chance(0.5):
        spec = str(b.int_in(1, 4))
    else:
        spec = repr(sorted(b.int_in(0, size + 1) for _ in range(b.int_in(0, 3))))
    return [x, spec], {"dim": str(d)}


def unbind(b):
    x = b.tensor(min_ndim=0)
    return [x], _kw(dim=str(b.dim(ndim(b, x))) if b.chance(0.6) else None)


def narrow(b):
    x = b.tensor(min_ndim=1)
    d = b.dim(ndim(b, x), allow_bad=False)
    size = b.shapes[x][d]
    start = b.int_in(-size, size) if size else 0
    length = b.int_in(0, size - (start % size if size else 0)) if size else 0
    if b.chance(0.1):
        length += 1
    return [x, str(d), str(start), str(length)], {}


def select(b):
    x = b.tensor(min_ndim=1)
    d = b.dim(ndim(b, x), allow_bad=False)
    size = b.shapes[x][d]
    index = b.int_in(-size, size - 1) if size and b.chance(0.9) else size
    return [x, str(d), str(index)], {}


def diagonal(b):
    x = b.tensor(min_ndim=2 if b.chance(0.9) else 1)
    n = ndim(b, x)
    kwargs = _kw(offset=str(b.int_in(-2, 2)) if b.chance(0.5) else None)
    if b.chance(0.5):
        d1, d2 = b.rng.permutation(n)[:2].tolist() if n >= 2 else (0, 0)
        kwargs.update(dim1=str(d1), dim2=str(d2))
    return [x], kwargs


def tril_triu(b):
    x = b.tensor(min_ndim=2 if b.chance(0.9) else 0)
    return [x], _kw(diagonal=str(b.int_in(-3, 3)) if b.chance(0.5) else None)


def diag(b):
    x = b.tensor(min_ndim=1, max_ndim=2) if b.chance(0.9) else b.tensor()
    return [x], _kw(diagonal=str(b.int_in(-2, 2)) if b.chance(0.5) else None)


def diag_embed(b):
    x = b.tensor(min_ndim=1, max_ndim=3)
    kwargs = _kw(offset=str(b.int_in(-2, 2)) if b.chance(0.5) else None)
    if b.chance(0.3):
        kwargs.update(dim1="0", dim2="-1")
    return [x], kwargs


def tensor_list(b, same_shape=False, min_ndim=0):
    """``[a0, a1, ...]`` of 1-4 tensors, compatible shapes except on one dim."""
    shape = list(b.shape(min_ndim=min_ndim, max_ndim=4))
    dtype = b.dtype()
    items = []
    d = b.int_in(0, len(shape) - 1) if shape else 0
    for _ in range(b.int_in(1, 4)):
        s = list(shape)
        if s and not same_shape and b.chance(0.5):
            s[d] = b.int_in(0, 3)
        if b.chance(0.05):
            s = list(b.shape(max_ndim=4))
        items.append(b.tensor(tuple(s), dtype if b.chance(0.8) else None))
    return items, d


def cat(b):
    items, d = tensor_list(b, min_ndim=1 if b.chance(0.9) else 0)
    if b.chance(0.3) and len(b.shapes[items[0]]):
        d = d - len(b.shapes[items[0]])
    kwargs = _kw(dim=str(d) if b.chance(0.8) else None)
    return ["[" + ", ".join(items) + "]"], kwargs


def stack(b):
    items, _ = tensor_list(b, same_shape=True)
    n = len(b.shapes[items[0]])
    return ["[" + ", ".join(items) + "]"], _kw(dim=str(b.dim(n + 1)) if b.chance(0.7) else None)


def stack_like(b):
    """``hstack``/``vstack``/``dstack``/``column_stack``/``row_stack``."""
    items, _ = tensor_list(b, same_shape=b.chance(0.6))
    return ["(" + ", ".join(items) + ",)"], {}


def broadcast_tensors(b):
    x = b.tensor(max_ndim=4)
    rest = [b.tensor(b.broadcast_partner(b.shapes[x])) for _ in range(b.int_in(0, 2))]
    return [x] + rest, {}


def broadcast_shapes(b):
    shape = b.shape(max_ndim=4)
    return [_shape_src(shape)] + [_shape_src(b.broadcast_partner(shape)) for _ in range(b.int_in(0, 2))], {}


def cross(b):
    shape = list(b.shape(min_ndim=1, max_ndim=3))
    d = b.int_in(0, len(shape) - 1)
    if b.chance(0.9):
        shape[d] = 3
    x = b.tensor(tuple(shape))
    y = b.tensor(b.broadcast_partner(tuple(shape)) if b.chance(0.2) else tuple(shape),
                 b.dtypes[x] if b.chance(0.8) else None)
    return [x, y], _kw(dim=str(d) if b.chance(0.7) else None)
