"""Launch wrapper of ``kernels/amp.cu``: GradScaler's inf/NaN check and unscale of many gradients
in one launch per dtype (PyTorch's ``_amp_foreach_non_finite_check_and_unscale_``)."""
import numpy as np

from ._launch import BLOCK, address, chunk_tables, ctype, i64
from ._module import function
from ._source import TYPES, family

CHUNK = 65536

FAMILY = family("amp", "amp.cu", [f"multi_tensor_unscale<{t}>" for t in TYPES])


def non_finite_check_and_unscale(xp, arrays, found_inf, inv_scale, *, generic):
    """``generic``'s contract (see :func:`gputorch.amp.grad_scaler.non_finite_check_and_unscale`):
    the contiguous arrays of a dtype the kernel takes go through one launch per dtype; the others
    through ``generic``. While a CUDA graph is captured everything goes through ``generic`` (the
    kernel's pointer tables would be host-to-device copies inside the graph)."""
    from ..graphs import capturing
    if capturing():
        generic(xp, [a for a in arrays if a.size], found_inf, inv_scale)
        return
    groups, rest = {}, []
    for a in arrays:
        if ctype(a.dtype) is not None and a.flags.c_contiguous:
            groups.setdefault(a.dtype, []).append(a)
        elif a.size:
            rest.append(a)
    for dtype, group in groups.items():
        sizes = [a.size for a in group]
        chunk_tensor, chunk_start = chunk_tables(xp, sizes, CHUNK)
        nblocks = int(chunk_tensor.shape[0])
        if not nblocks:
            continue
        ptrs = xp.asarray(np.array([address(a) for a in group], dtype=np.uint64))
        args = (ptrs, xp.asarray(np.asarray(sizes, dtype=np.int64)), chunk_tensor, chunk_start, i64(CHUNK),
                found_inf, inv_scale)
        function(FAMILY.name, f"multi_tensor_unscale<{ctype(dtype)}>")((nblocks,), (BLOCK,), args)
    if rest:
        generic(xp, rest, found_inf, inv_scale)
