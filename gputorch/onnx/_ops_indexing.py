"""ONNX forms of indexing with integer tensors: ``index_select`` (``Gather``), ``gather``
(``GatherElements``) and ``x[idx]`` with one index tensor among full slices (``Gather`` along
that dim). The index may be a model input or computed from one (the trace keeps it as a value:
``jit._graph``'s ``("array", ...)``/``("index", ...)`` references) or a constant."""
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


INDEXING_EXPORTERS = {"IndexSelect": _index_select, "Gather": _gather, "Index": _advanced_index}
