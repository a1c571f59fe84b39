"""ONNX forms of indexing with integer tensors: ``index_select`` (``Gather``), ``gather``
(``GatherElements``) and ``x[idx]`` with one index tensor among full slices (``Gather`` along
that dim). The index may be a model input or computed from one (the trace keeps it as a value:
``jit._graph``'s ``("array", ...)``/``("index", ...)`` references) or a constant. Also writes
through a basic index (``x[:, 0] = v``, ``x[..., -1] += 1``), as a ``Where`` over a mask."""
import numpy as np

from ._ops_shape import expanded_key

__all__ = ["INDEXING_EXPORTERS"]


def _index_select(b, node):
    x = b.arg(node, 0)
    axis = int(node.args[1][1]) % max(len(b.shape_of(x)), 1)
    return b.add("Gather", [x, b.index_array(node, node.args[2])], node.outputs, axis=axis)


def _gather(b, node):
    x = b.arg(node, 0)
    axis = int(node.args[1][1]) % max(len(b.shape_of(x)), 1)
    return b.add("GatherElements", [x, b.index_array(node, node.args[2])], node.outputs, axis=axis)


def _is_array(k):
    return hasattr(k, "__array_interface__") or hasattr(k, "__cuda_array_interface__")


def _advanced_index(b, node):
    """``x[..., idx, ...]``: one integer index (a traced tensor or a constant) and full slices
    around it, as ``Gather`` along its dim. Boolean masks (a size known only at run time), several
    index tensors and integers mixed with them are refused."""
    kind, v = node.args[1]
    index, subs = v if kind == "index" else (v, ())
    traced = {(field, position): name for field, position, name in subs}
    if index.pre is not None:
        b.fail(node, "an advanced index that mixes integers with index tensors")
    post = list(index.post)
    arrays = [p for p, k in enumerate(post) if ("post", p) in traced or _is_array(k)]
    rest = [k for p, k in enumerate(post) if p not in arrays]
    if len(arrays) != 1 or any(k is not Ellipsis and k != slice(None) for k in rest):
        b.fail(node, "an advanced index other than one index tensor among full slices")
    where = arrays[0]
    if ("post", where) in traced:
        idx_name = traced[("post", where)]
        dt = b.info(idx_name)[1]
        if dt.name == "bool":
            b.fail(node, "a boolean mask index (its result's size is known only at run time)")
        indices = b.index_array(node, ("array", (idx_name, False)))
    else:
        if post[where].dtype == bool:
            b.fail(node, "a boolean mask index (its result's size is known only at run time)")
        indices = b.index_array(node, ("const", post[where]))
    x = b.arg(node, 0)
    rank = len(b.shape_of(x))
    after = [k for k in post[where + 1:] if k is not Ellipsis]
    axis = rank - 1 - len(after) if Ellipsis in post[:where] else where
    return b.add("Gather", [x, indices], node.outputs, axis=axis)


def _index_put(b, node):
    """``x[key] = values`` (or ``+=`` with ``accumulate``) for a basic ``key`` of integers and step-1
    slices: the values, expanded to the indexed part's shape, are padded with zeros to ``x``'s shape
    and chosen where a constant mask is set (or added). Dims that follow a dynamic axis must be
    indexed whole."""
    index, accumulate = node.params["index"], node.params.get("accumulate", False)
    if getattr(index, "advanced", True) or index.pre is not None:
        b.fail(node, "an assignment through an advanced index")
    x = b.arg(node, 0)
    shape, dt = b.shape_of(x), b.info(node.outputs[0])[1]
    key = expanded_key(index.post, len(shape))
    if any(k is None for k in key):
        b.fail(node, "an assignment through an index with None")
    varying = b.varying.get(node.args[0][1], set())
    spans, dropped = {}, []
    for d, k in enumerate(key):
        if isinstance(k, slice):
            if k == slice(None):
                continue
            start, stop, step = k.indices(shape[d])
            if step != 1:
                b.fail(node, "an assignment through a slice with a step")
            spans[d] = (start, max(stop, start))
        else:
            spans[d] = (int(k) % shape[d], int(k) % shape[d] + 1)
            dropped.append(d)
    if set(spans) & varying:
        b.fail(node, "an assignment to part of a dim that follows a dynamic axis")
    axes = sorted(spans)
    region = x
    if axes:
        bounds = ([spans[d][0] for d in axes], [spans[d][1] for d in axes], axes)
        consts = [b.const(np.array(v, np.int64)) for v in bounds]
        region = b.add("Slice", [x] + consts, [b.fresh()])[0]
    target = region if not dropped else \
        b.add("Squeeze", [region, b.const(np.array(dropped, np.int64))], [b.fresh()])[0]
    values = b.add("Expand", [b.operand(node, 1, dt), b.add("Shape", [target], [b.fresh()])[0]], [b.fresh()])[0]
    if dropped:
        values = b.add("Unsqueeze", [values, b.const(np.array(dropped, np.int64))], [b.fresh()])[0]
    pads = [spans.get(d, (0, shape[d]))[0] for d in range(len(shape))] + \
        [shape[d] - spans.get(d, (0, shape[d]))[1] for d in range(len(shape))]
    padded = b.add("Pad", [values, b.const(np.array(pads, np.int64))], [b.fresh()], mode="constant")[0]
    if accumulate:
        return b.add("Add", [x, padded], node.outputs)
    mask = np.ones([shape[d] if d in spans else 1 for d in range(len(shape))], bool)
    for d, (start, stop) in spans.items():
        outside = [slice(None)] * len(shape)
        outside[d] = np.r_[0:start, stop:shape[d]].astype(np.int64)
        mask[tuple(outside)] = False
    return b.add("Where", [b.const(mask), padded, x], node.outputs)


INDEXING_EXPORTERS = {"IndexSelect": _index_select, "Gather": _gather, "Index": _advanced_index,
                      "IndexPut": _index_put}
