"""Launch wrappers of ``kernels/cross_entropy.cu``: the fused cross-entropy forward (per-row
log-softmax statistics, target log-probability and label-smoothing sum in one read of the
logits) and its elementwise gradient.

The logits are seen as ``(outer, C, inner)`` with the class axis in the middle: ``(N, C)`` is
``(N, C, 1)``, ``(C,)`` is ``(1, C, 1)``, ``(N, C, d1, ...)`` is ``(N, C, d1 * ...)``.
"""
import math

from ._launch import BLOCK, MAX_BLOCKS, WARP, blocks, contiguous, ctype, i64
from ._module import function
from ._source import ACC_CTYPES, TYPES, family
from .softmax import WARPS_PER_BLOCK, row_config
from .softmax import ELEMS

FAMILY = family("cross_entropy", "cross_entropy.cu", (
    [f"cross_entropy_forward_warp<{t}, {e}>" for t in TYPES for e in ELEMS]
    + [f"cross_entropy_forward_block<{t}>" for t in TYPES]
    + [f"cross_entropy_forward_strided<{t}>" for t in TYPES]
    + [f"cross_entropy_backward<{t}, {ACC_CTYPES[t]}>" for t in TYPES]))


def class_layout(shape):
    """``(outer, classes, inner)`` of logits of ``shape`` (class axis 0 for 1-D, else 1)."""
    if len(shape) == 1:
        return 1, shape[0], 1
    return shape[0], shape[1], math.prod(shape[2:])


def forward(xp, x, safe_targets, weight, want_logp):
    """``(logp or None, picked, smooth)``: log-probabilities (x's shape and dtype, when
    ``want_logp``), and per target position (the target's shape) ``logp[target]`` and
    ``sum_c weight[c] * logp[c]`` (weight 1 when None), in x's dtype. None when the kernels do not
    take ``x``. ``safe_targets``: int64 class indices in range (ignored ones replaced)."""
    t = ctype(x.dtype)
    if t is None or x.size == 0 or (weight is not None and weight.dtype != x.dtype):
        return None
    x = contiguous(xp, x)
    outer, classes, inner = class_layout(x.shape)
    logp = xp.empty(x.shape, dtype=x.dtype) if want_logp else None
    picked = xp.empty(safe_targets.shape, dtype=x.dtype)
    smooth = xp.empty(safe_targets.shape, dtype=x.dtype)
    targets = contiguous(xp, safe_targets.astype(xp.int64, copy=False))
    w = None if weight is None else contiguous(xp, weight)
    if inner == 1:
        kind, param = row_config(classes)
        if kind == "warp":
            name, grid, block = f"cross_entropy_forward_warp<{t}, {param}>", blocks(outer, WARPS_PER_BLOCK), \
                WARP * WARPS_PER_BLOCK
        else:
            name, grid, block = f"cross_entropy_forward_block<{t}>", min(outer, MAX_BLOCKS), param
        args = (x, targets, w, logp, picked, smooth, i64(outer), i64(classes))
    else:
        name, grid, block = f"cross_entropy_forward_strided<{t}>", blocks(outer * inner), BLOCK
        args = (x, targets, w, logp, picked, smooth, i64(outer), i64(classes), i64(inner))
    function(FAMILY.name, name)((grid,), (block,), args)
    return logp, picked, smooth


def backward(xp, logp, safe_targets, weight, a, b, s):
    """``exp(logp) * a - onehot(target) * b - s * weight`` with the per-row coefficients ``a``,
    ``b``, ``s`` (``s`` may be None: no smoothing term) in the accumulation dtype, broadcast
    along the class axis; None when the kernels do not take ``logp``."""
    t = ctype(logp.dtype)
    if t is None:
        return None
    out = xp.empty(logp.shape, dtype=logp.dtype)
    if out.size == 0:
        return out
    outer, classes, inner = class_layout(logp.shape)
    acc = xp.float64 if t == "double" else xp.float32
    coef = [None if c is None else contiguous(xp, xp.asarray(c, dtype=acc).reshape(-1)) for c in (a, b, s)]
    w = None if weight is None or s is None else contiguous(xp, weight)
    args = (contiguous(xp, logp), contiguous(xp, safe_targets.astype(xp.int64, copy=False)), w, *coef, out,
            i64(outer), i64(classes), i64(inner))
    function(FAMILY.name, f"cross_entropy_backward<{t}, {ACC_CTYPES[t]}>")((blocks(out.size),), (BLOCK,), args)
    return out
