"""Launch wrapper of ``kernels/dropout.cu``: dropout whose keep mask comes from the CUDA
generator's Philox stream at ``(seed, offset)`` -- the same numbers
``PhiloxEngine.random(n, float64)`` draws there -- so that backward regenerates it.

While a CUDA graph is captured (``gputorch.cuda.graphs``), the kernel reads seed and offset from
the device memory that each replay fills with the generator's state, so replays draw fresh masks."""
import numpy as np

from ._launch import BLOCK, blocks, contiguous, ctype, f64, i64, u64
from ._module import function
from ._source import TYPES, family

FAMILY = family("dropout", "dropout.cu", [f"{k}<{t}>" for k in ("dropout_philox", "dropout_philox_state")
                                          for t in TYPES])


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
        from ..graphs import capture_rng_offset
        captured = capture_rng_offset(seed, offset)
        if captured is None:
            args = (contiguous(xp, x), y, i64(n), u64(seed), u64(offset), f64(1 - p), keep_scale(x.dtype, p))
            name = f"dropout_philox<{t}>"
        else:   # captured into a CUDA graph: (seed, offset) are read from device memory at replay
            state, relative = captured
            args = (contiguous(xp, x), y, i64(n), state, u64(relative), f64(1 - p), keep_scale(x.dtype, p))
            name = f"dropout_philox_state<{t}>"
        function(FAMILY.name, name)((blocks((n + 1) // 2),), (BLOCK,), args)
    return y
