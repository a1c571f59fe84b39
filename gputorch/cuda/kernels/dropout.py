"""Launch wrapper of ``kernels/dropout.cu``: dropout whose keep mask comes from the CUDA
generator's Philox stream at ``(seed, offset)`` -- the same numbers
``PhiloxEngine.random(n, float64)`` draws there -- so that backward regenerates it."""
import numpy as np

from ._launch import BLOCK, blocks, contiguous, ctype, f64, i64, u64
from ._module import function
from ._source import TYPES, family

FAMILY = family("dropout", "dropout.cu", [f"dropout_philox<{t}>" for t in TYPES])


def blocks_used(n):
    """Philox blocks (128 bits each) that ``n`` float64 uniforms consume."""
    return (2 * int(n) + 3) // 4


def keep_scale(dtype, p):
    """``1 / (1 - p)`` computed in ``dtype``, as ``noise.div_(1 - p)`` does on a 0/1 noise tensor."""
    dt = np.dtype(dtype).type
    with np.errstate(over="ignore", divide="ignore"):
        return f64(dt(1) / dt(1 - p))


def dropout(xp, x, p, seed, offset):
    """``x * mask / (1 - p)`` with the mask of the Philox stream at ``(seed, offset)``; None when
    the kernels do not take x's dtype."""
    t = ctype(x.dtype)
    if t is None:
        return None
    y = xp.empty(x.shape, dtype=x.dtype)
    n = y.size
    if n:
        args = (contiguous(xp, x), y, i64(n), u64(seed), u64(offset), f64(1 - p), keep_scale(x.dtype, p))
        function(FAMILY.name, f"dropout_philox<{t}>")((blocks((n + 1) // 2),), (BLOCK,), args)
    return y
