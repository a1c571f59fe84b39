"""ONNX forms of reductions over dims (sum, mean, max/min with their indices, amax/amin, prod,
all/any, var/std, logsumexp, argmax/argmin) and of the scans and selections along one dim
(cumsum, topk, sort). Opset 17: ``ReduceSum`` takes its axes as an input, the other ``Reduce*``
ops as an attribute."""
import numpy as np

from .. import _dtype

__all__ = ["REDUCTION_EXPORTERS", "REDUCTION_EXPORTERS_BY_CLASS"]


def _axes(b, x, dims):
    """The non-negative axes that ``dims`` (an int, a sequence, or None/() for all) names in ``x``."""
    rank = len(b.shape_of(x))
    if dims is None or dims == () or dims == [] or rank == 0:
        return list(range(rank))
    return sorted(int(d) % max(rank, 1) for d in (dims if isinstance(dims, (tuple, list)) else (dims,)))


def _reduce_to(b, op_type, x, axes, keepdim, out):
    if not axes:                        # a 0-d input: nothing to reduce
        return b.add("Identity", [x], [out])[0]
    if op_type == "ReduceSum":
        return b.add(op_type, [x, b.const(np.array(axes, np.int64))], [out], keepdims=int(bool(keepdim)))[0]
    return b.add(op_type, [x], [out], axes=axes, keepdims=int(bool(keepdim)))[0]


def _reduce(op_type):
    """``op(x, dims, keepdim, ...)`` (sum, mean, amax, amin, logsumexp; a missing ``dims`` is all)."""
    def export(b, node):
        x = b.operand(node, 0, b.info(node.outputs[0])[1])
        dims = node.args[1][1] if len(node.args) > 1 else None
        keepdim = node.args[2][1] if len(node.args) > 2 else False
        return [_reduce_to(b, op_type, x, _axes(b, x, dims), keepdim, node.outputs[0])]
    return export


def _reduce_all(op_type):
    """``sum(x)`` / ``mean(x)`` over every element (their other arguments are dtypes)."""
    def export(b, node):
        x = b.operand(node, 0, b.info(node.outputs[0])[1])
        return [_reduce_to(b, op_type, x, _axes(b, x, None), False, node.outputs[0])]
    return export


def _extreme(op_type, arg_type):
    """``max(x)`` / ``min(x)`` (all elements), or ``max(x, dim, keepdim)`` with its indices."""
    def export(b, node):
        x = b.arg(node, 0)
        if len(node.args) == 1:
            return [_reduce_to(b, op_type, x, _axes(b, x, None), False, node.outputs[0])]
        axis, keepdim = _axes(b, x, node.args[1][1])[0], int(bool(node.args[2][1]))
        _reduce_to(b, op_type, x, [axis], keepdim, node.outputs[0])
        if len(node.outputs) > 1:
            b.add(arg_type, [x], [node.outputs[1]], axis=axis, keepdims=keepdim)
        return node.outputs
    return export


def _arg_extreme(b, node):
    """``argmax``/``argmin`` along a dim, or of the flattened input where ``dim`` is None."""
    x, dim, keepdim, is_max = b.arg(node, 0), node.args[1][1], bool(node.args[2][1]), node.args[3][1]
    op_type = "ArgMax" if is_max else "ArgMin"
    if dim is None:
        flat = b.add("Reshape", [x, b.const(np.array([-1], np.int64))], [b.fresh()])[0]
        found = b.add(op_type, [flat], [b.fresh()], axis=0, keepdims=0)[0]
        shape = [1] * len(b.shape_of(x)) if keepdim else []
        return b.add("Reshape", [found, b.const(np.array(shape, np.int64))], node.outputs)
    return b.add(op_type, [x], node.outputs, axis=_axes(b, x, dim)[0], keepdims=int(keepdim))


def _all_any(b, node):
    """``all``/``any`` (argument 3 says which): the min/max of the input as 0/1 ``int32``, back to bool."""
    x, dims, keepdim, is_any = b.arg(node, 0), node.args[1][1], node.args[2][1], node.args[3][1]
    flags = b.add("Cast", [b.cast(x, _dtype.bool)], [b.fresh()], to=b.onnx_dtype(np.int32))[0]
    b.graph.info[flags] = (b.shape_of(x), _dtype.int32)
    found = _reduce_to(b, "ReduceMax" if is_any else "ReduceMin", flags, _axes(b, x, dims), keepdim, b.fresh())
    return b.add("Cast", [found], node.outputs, to=b.onnx_dtype(_dtype.bool))


def _variance(root):
    """``var``/``std``: ``sum((x - mean)^2) / (n - correction)``, ``n`` counted at run time (a dim
    reduced over may be a dynamic axis)."""
    def export(b, node):
        x, dims, correction, keepdim = b.arg(node, 0), node.args[1][1], node.args[2][1], node.args[3][1]
        axes = _axes(b, x, dims)
        dt = b.info(node.outputs[0])[1]
        mean = _reduce_to(b, "ReduceMean", x, axes, True, b.fresh())
        centred = b.add("Sub", [x, mean], [b.fresh()])[0]
        squares = _reduce_to(b, "ReduceSum", b.add("Mul", [centred, centred], [b.fresh()])[0], axes, keepdim,
                             b.fresh())
        sizes = [b.add("Size", [v], [b.fresh()])[0] for v in (x, mean)]
        count = b.add("Cast", [b.add("Div", sizes, [b.fresh()])[0]], [b.fresh()], to=b.onnx_dtype(dt))[0]
        if correction:
            count = b.add("Sub", [count, b.const(np.array(correction, dt.np))], [b.fresh()])[0]
        if not root:
            return b.add("Div", [squares, count], node.outputs)
        return b.add("Sqrt", [b.add("Div", [squares, count], [b.fresh()])[0]], node.outputs)
    return export


def _vector_norm(b, node):
    """``linalg.vector_norm(x, ord, dims, keepdim)``: ``ReduceL2``/``ReduceL1`` for 2 and 1, the max or
    min of ``|x|`` for +-inf, the count of non-zeros for 0, ``sum(|x|^p)^(1/p)`` otherwise."""
    x, order, dims, keepdim = b.arg(node, 0), float(node.args[1][1]), node.args[2][1], node.args[3][1]
    axes, dt = _axes(b, x, dims), b.info(node.outputs[0])[1]
    out = node.outputs[0]
    if order in (1.0, 2.0):
        return [_reduce_to(b, "ReduceL2" if order == 2 else "ReduceL1", x, axes, keepdim, out)]
    size = b.add("Abs", [x], [b.fresh()])[0]
    if order in (float("inf"), float("-inf")):
        return [_reduce_to(b, "ReduceMax" if order > 0 else "ReduceMin", size, axes, keepdim, out)]
    if order == 0:
        nonzero = b.add("Cast", [b.cast(x, _dtype.bool)], [b.fresh()], to=b.onnx_dtype(dt))[0]
        return [_reduce_to(b, "ReduceSum", nonzero, axes, keepdim, out)]
    powered = b.add("Pow", [size, b.const(np.array(order, dt.np))], [b.fresh()])[0]
    total = _reduce_to(b, "ReduceSum", powered, axes, keepdim, b.fresh())
    return b.add("Pow", [total, b.const(np.array(1 / order, dt.np))], [out])


def _cumsum(b, node):
    x = b.operand(node, 0, b.info(node.outputs[0])[1])
    axis = _axes(b, x, node.args[1][1])[0]
    return b.add("CumSum", [x, b.const(np.array(axis, np.int64))], node.outputs)


def _top(b, x, k, axis, largest, outputs):
    return b.add("TopK", [x, k], outputs, axis=axis, largest=int(bool(largest)), sorted=1)


def _topk(b, node):
    x, k, dim, largest = b.arg(node, 0), node.args[1][1], node.args[2][1], node.args[3][1]
    if len(node.args) > 4 and not node.args[4][1]:
        b.fail(node, "topk with sorted=False")
    return _top(b, x, b.const(np.array([int(k)], np.int64)), _axes(b, x, dim)[0], largest, node.outputs)


def _sort(b, node):
    """``TopK`` over the whole dim (its size read at run time where a dynamic axis flows)."""
    x, dim, descending = b.arg(node, 0), node.args[1][1], node.args[2][1]
    axis = _axes(b, x, dim)[0]
    shape = b.add("Shape", [x], [b.fresh()])[0]
    k = b.add("Gather", [shape, b.const(np.array([axis], np.int64))], [b.fresh()], axis=0)[0]
    return _top(b, x, k, axis, descending, node.outputs)


REDUCTION_EXPORTERS = {
    "Mean": _reduce_all("ReduceMean"), "Sum": _reduce_all("ReduceSum"), "Amax": _reduce("ReduceMax"),
    "Amin": _reduce("ReduceMin"), "Prod": _reduce("ReduceProd"), "Logsumexp": _reduce("ReduceLogSumExp"),
    "Max": _extreme("ReduceMax", "ArgMax"), "Min": _extreme("ReduceMin", "ArgMin"), "ArgExtreme": _arg_extreme,
    "All": _all_any, "Var": _variance(False), "Std": _variance(True),
    "LinalgVectorNorm": _vector_norm, "Cumsum": _cumsum, "Topk": _topk, "Sort": _sort,
}
REDUCTION_EXPORTERS_BY_CLASS = {"MeanBackward1": _reduce("ReduceMean"), "SumBackward1": _reduce("ReduceSum")}
