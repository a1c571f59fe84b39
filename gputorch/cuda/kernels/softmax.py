"""Launch wrappers of ``kernels/softmax.cu``: softmax / log_softmax along a dim, and gradients.

The tensor is seen as ``(outer, size, inner)`` around the dim. ``inner == 1`` (the last dim, the
usual case) runs one warp per row for rows up to 1024 (the row held in registers: 32, 128 or
1024 values per warp), one block per row beyond; ``inner > 1`` runs one thread per
``(outer, inner)`` position.
"""
import math

from ._launch import BLOCK, MAX_BLOCKS, WARP, blocks, contiguous, ctype, i64
from ._module import function
from ._source import TYPES, family

ELEMS = (1, 4, 32)         # values per lane of the warp-per-row kernels
WARPS_PER_BLOCK = 4
_BOOL = {False: "false", True: "true"}

FAMILY = family("softmax", "softmax.cu", [
    f"softmax_{step}_{kind}<{t}, {log}{extra}>"
    for step in ("forward", "backward") for t in TYPES for log in ("false", "true")
    for kind, extras in (("warp", [f", {e}" for e in ELEMS]), ("block", [""]), ("strided", [""]))
    for extra in extras])


def layout(shape, dim):
    """``(outer, size, inner)`` of ``shape`` around ``dim``."""
    return math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:])


def row_config(cols):
    """``("warp", elems)`` or ``("block", threads)`` for rows of ``cols`` values."""
    for e in ELEMS:
        if cols <= WARP * e:
            return "warp", e
    threads = 256 if cols <= 4096 else 512 if cols <= 16384 else 1024
    return "block", threads


def _run(xp, step, arrays, dim, log, dtype):
    shape = arrays[0].shape
    if not shape:
        shape, dim = (1,), 0
    out = xp.empty(arrays[0].shape, dtype=dtype)
    if out.size == 0:
        return out
    arrays = tuple(contiguous(xp, a) for a in arrays)
    outer, size, inner = layout(shape, dim)
    t = ctype(dtype)
    if inner == 1:
        kind, param = row_config(size)
        if kind == "warp":
            name = f"softmax_{step}_warp<{t}, {_BOOL[log]}, {param}>"
            grid, block = blocks(outer, WARPS_PER_BLOCK), WARP * WARPS_PER_BLOCK
        else:
            name = f"softmax_{step}_block<{t}, {_BOOL[log]}>"
            grid, block = min(outer, MAX_BLOCKS), param
        args = arrays + (out, i64(outer), i64(size))
    else:
        name = f"softmax_{step}_strided<{t}, {_BOOL[log]}>"
        grid, block = blocks(outer * inner), BLOCK
        args = arrays + (out, i64(outer), i64(size), i64(inner))
    function(FAMILY.name, name)((grid,), (block,), args)
    return out


def forward(xp, x, dim, log):
    """``softmax(x, dim)`` (``log_softmax`` with ``log``), or None for a dtype the kernels lack."""
    if ctype(x.dtype) is None:
        return None
    return _run(xp, "forward", (x,), dim, log, x.dtype)


def backward(xp, grad, y, dim, log):
    """The input gradient given the output gradient ``grad`` and the output ``y``, or None."""
    if ctype(y.dtype) is None or grad.dtype != y.dtype or grad.shape != y.shape:
        return None
    return _run(xp, "backward", (grad, y), dim, log, y.dtype)
