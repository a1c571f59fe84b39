"""ONNX forms of the shape and view ops: reshapes, permutes, basic indexing (slices, integers,
``None``, ``...``), expand, cat/stack/split/unbind, repeat, flip, roll and tril/triu. Sizes that
a dynamic axis changes are read from the inputs' shapes at run time (``Builder.reshape_target``,
``Builder.runtime_size``)."""
import numpy as np

__all__ = ["SHAPE_EXPORTERS", "SHAPE_EXPORTERS_BY_CLASS", "expanded_key"]


def _reshape(b, node):
    return b.add("Reshape", [b.arg(node, 0), b.reshape_target(node, b.info(node.outputs[0])[0])], node.outputs)


def _permute(b, node):
    return b.add("Transpose", [b.arg(node, 0)], node.outputs, perm=[int(d) % len(node.args[1][1])
                                                                    for d in node.args[1][1]])


def _transpose(b, node):
    rank = len(b.shape_of(b.arg(node, 0)))
    perm = list(range(rank))
    d0, d1 = int(node.args[1][1]) % rank, int(node.args[2][1]) % rank
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return b.add("Transpose", [b.arg(node, 0)], node.outputs, perm=perm)


def _t(b, node):
    rank = len(b.shape_of(b.arg(node, 0)))
    return b.add("Transpose", [b.arg(node, 0)], node.outputs, perm=list(range(rank))[::-1])


def _cat(b, node):
    tensors = [b.arg(node, i) for i in range(len(node.args))]
    dim = node.params["dim"]
    rank = len(b.shape_of(tensors[0]))
    return b.add("Concat", tensors, node.outputs, axis=int(dim) % rank)


def _stack(b, node):
    tensors = [b.arg(node, i) for i in range(len(node.args))]
    rank = len(b.shape_of(tensors[0])) + 1
    axis = int(node.params["dim"]) % rank
    axes = b.const(np.array([axis], np.int64))
    expanded = [b.add("Unsqueeze", [t, axes], [b.fresh()])[0] for t in tensors]
    return b.add("Concat", expanded, node.outputs, axis=axis)


def expanded_key(key, rank):
    """A NumPy basic index as one entry per input dim (``...`` spread out), ``None`` kept."""
    key = key if isinstance(key, tuple) else (key,)
    explicit = sum(1 for k in key if k is not None and k is not Ellipsis)
    out = []
    for k in key:
        if k is Ellipsis:
            out += [slice(None)] * (rank - explicit)
        else:
            out.append(k)
    return out + [slice(None)] * (rank - sum(1 for k in out if k is not None))


def _subview(b, node):
    """Views given by a NumPy basic index (``Key``): slices, integers, ``None`` and ``...``. A slice
    bound that changed with the dynamic axes is read from the inputs' shapes at run time."""
    where = node.args[1][1]
    key = getattr(where, "key", None)
    if key is None:
        b.fail(node, f"the view {type(where).__name__}")
    x = b.arg(node, 0)
    rank = len(b.shape_of(x))
    expanded = expanded_key(key, rank)
    twin = b.later(node)
    later = expanded_key(twin.args[1][1].key, rank) if twin is not None else expanded
    big = np.iinfo(np.int64).max

    def bound(value, other):
        if value == other:
            return b.const(np.array([big if value is None else value], np.int64))
        size = b.runtime_size((value, other), [x])
        if size is None:
            b.fail(node, f"a slice bound {value} that follows the dynamic axes in no way the inputs' shapes give")
        return size
    starts, ends, axes, steps, drop, insert = [], [], [], [], [], []
    dim = out_dim = 0
    for k, k2 in zip(expanded, later):
        if k is None:
            insert.append(out_dim)
            out_dim += 1
            continue
        if isinstance(k, slice):
            if k != slice(None):
                starts.append(bound(k.start or 0, k2.start or 0))
                ends.append(bound(k.stop, k2.stop))
                axes.append(dim)
                steps.append(1 if k.step is None else k.step)
            dim += 1
            out_dim += 1
        else:
            starts.append(b.const(np.array([int(k)], np.int64)))
            ends.append(b.const(np.array([int(k) + 1 if int(k) != -1 else big], np.int64)))
            axes.append(dim)
            steps.append(1)
            drop.append(dim)
            dim += 1
    out = x
    if axes:
        start = b.add("Concat", starts, [b.fresh()], axis=0)[0]
        end = b.add("Concat", ends, [b.fresh()], axis=0)[0]
        out = b.add("Slice", [out, start, end, b.const(np.array(axes, np.int64)), b.const(np.array(steps, np.int64))],
                    [b.fresh()])[0]
    if drop:
        out = b.add("Squeeze", [out, b.const(np.array(drop, np.int64))], [b.fresh()])[0]
    if insert:
        out = b.add("Unsqueeze", [out, b.const(np.array(insert, np.int64))], [b.fresh()])[0]
    return b.add("Identity", [out], node.outputs)


def _expand(b, node):
    """``Expand`` to the traced output shape. A size that follows a dynamic axis is 1 (kept from the
    input) where the input has that size already, and is read at run time from the inputs' shapes
    where the input broadcasts (a learned start state expanded to the batch size)."""
    x = b.arg(node, 0)
    out_shape = b.info(node.outputs[0])[0]
    varying = b.varying.get(node.outputs[0], set())
    in_shape = (1,) * (len(out_shape) - len(b.shape_of(x))) + tuple(b.shape_of(x))
    grown = [d for d in sorted(varying) if in_shape[d] != out_shape[d]]
    if not grown:
        target = b.reshape_target(node, out_shape, ones_for_dynamic=True)
        return b.add("Expand", [x, target], node.outputs)
    later = b.second.info[node.outputs[0]][0]
    parts = []
    for d, size in enumerate(out_shape):
        if d in grown:
            part = b.runtime_size((size, later[d]))
            if part is None:
                b.fail(node, f"an expand to {tuple(out_shape)} whose dim {d} follows the dynamic axes in no way "
                             f"the inputs' shapes give")
        else:
            part = b.const(np.array([1 if d in varying else size], np.int64))
        parts.append(part)
    return b.add("Expand", [x, b.add("Concat", parts, [b.fresh()], axis=0)[0]], node.outputs)


def _unbind(b, node):
    x = b.arg(node, 0)
    rank = len(b.shape_of(x))
    dim = int(node.args[2][1]) % rank
    count = len(node.outputs)
    parts = b.add("Split", [x, b.const(np.ones(count, np.int64))], [b.fresh() for _ in range(count)], axis=dim)
    axes = b.const(np.array([dim], np.int64))
    for part, out in zip(parts, node.outputs):
        b.add("Squeeze", [part, axes], [out])
    return node.outputs


def _split(b, node):
    x = b.arg(node, 0)
    rank = len(b.shape_of(x))
    dim = int(node.args[2][1]) % rank
    sizes = [b.shape_of(o)[dim] for o in node.outputs]
    return b.add("Split", [x, b.const(np.array(sizes, np.int64))], node.outputs, axis=dim)


def _triangle(b, node):
    """``tril``/``triu`` (argument 2 says which) as ``Trilu`` with the diagonal offset ``k``."""
    k = b.const(np.array(int(node.args[1][1]), np.int64))
    return b.add("Trilu", [b.arg(node, 0), k], node.outputs, upper=int(bool(node.args[2][1])))


def _repeat(b, node):
    """``Tile``, after leading 1-dims where ``repeats`` is longer than the input's rank."""
    x, repeats = b.arg(node, 0), [int(r) for r in node.args[1][1]]
    extra = len(repeats) - len(b.shape_of(x))
    if extra:
        x = b.add("Unsqueeze", [x, b.const(np.arange(extra, dtype=np.int64))], [b.fresh()])[0]
    return b.add("Tile", [x, b.const(np.array(repeats, np.int64))], node.outputs)


def _flip(b, node):
    """A ``Slice`` that walks each flipped dim backwards."""
    x = b.arg(node, 0)
    rank = len(b.shape_of(x))
    axes = sorted({int(d) % rank for d in node.args[1][1]})
    low = np.iinfo(np.int64).min
    consts = [b.const(np.array(v, np.int64)) for v in ([-1] * len(axes), [low] * len(axes), axes, [-1] * len(axes))]
    return b.add("Slice", [x] + consts, node.outputs)


def _roll(b, node):
    """``Concat`` of the last ``shift`` entries and the others, dim by dim (a flattened roll where
    ``dims`` is None). Slicing from the end keeps it right along a dynamic axis while
    ``|shift|`` is less than the size."""
    x, shifts, dims = b.arg(node, 0), list(node.args[1][1]), node.args[2][1]
    shape = b.shape_of(x)
    flat = dims is None
    if flat:
        x = b.add("Reshape", [x, b.const(np.array([-1], np.int64))], [b.fresh()])[0]
        dims, sizes = [0], [int(np.prod(shape))]
    else:
        dims = [int(d) % len(shape) for d in dims]
        sizes = [shape[d] for d in dims]
    big = np.iinfo(np.int64).max
    for shift, dim, size in zip(shifts, dims, sizes):
        shift = int(shift)
        if abs(shift) >= size:
            shift %= size
        cut = -shift          # x[-s:] then x[:-s] (a negative shift: x[|s|:] then x[:|s|])
        if shift == 0:
            continue
        consts = [b.const(np.array([v], np.int64)) for v in (cut, big, 0, cut, dim)]
        tail = b.add("Slice", [x, consts[0], consts[1], consts[4]], [b.fresh()])[0]
        head = b.add("Slice", [x, consts[2], consts[3], consts[4]], [b.fresh()])[0]
        x = b.add("Concat", [tail, head], [b.fresh()], axis=dim)[0]
    if flat:
        return b.add("Reshape", [x, b.add("Shape", [b.arg(node, 0)], [b.fresh()])[0]], node.outputs)
    return b.add("Identity", [x], node.outputs)


SHAPE_EXPORTERS = {
    "View": _reshape, "UnsafeView": _reshape, "Squeeze": _reshape, "Flatten": _reshape,
    "Permute": _permute, "Transpose": _transpose, "T": _t, "Cat": _cat, "Stack": _stack,
    "Unsqueeze": _subview, "Slice": _subview, "Select": _subview, "Alias": _subview, "Expand": _expand,
    "Unbind": _unbind, "Split": _split, "SplitWithSizes": _split, "Tril": _triangle, "Triu": _triangle,
    "Repeat": _repeat, "Flip": _flip, "Roll": _roll,
}
SHAPE_EXPORTERS_BY_CLASS = {"SqueezeBackward0": _reshape, "SqueezeBackward1": _reshape, "SqueezeBackward2": _reshape}
