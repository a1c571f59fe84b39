"""Launch wrapper of ``kernels/embedding.cu``: the embedding weight gradient by atomic
scatter-add (float16 accumulated in float32, then rounded once)."""
from ._launch import BLOCK, blocks, contiguous, ctype, i64
from ._module import function
from ._source import ACC_CTYPES, ACC_DTYPES, TYPES, family

FAMILY = family("embedding", "embedding.cu", [f"embedding_backward<{t}, {ACC_CTYPES[t]}>" for t in TYPES])


def embedding_backward(xp, grad, indices, num_weights, padding_idx, counts=None):
    """``(num_weights, dim)`` table: rows of ``grad`` (``indices.shape + (dim,)``) added at their
    indices, none for ``padding_idx``; each divided by ``counts`` (per index position) when given.
    None when the kernels do not take grad's dtype."""
    t = ctype(grad.dtype)
    if t is None:
        return None
    dim = grad.shape[-1]
    acc = ACC_DTYPES[grad.dtype]
    out = xp.zeros((num_weights, dim), dtype=acc)
    positions = indices.size
    if positions and dim:
        idx = contiguous(xp, indices.reshape(-1).astype(xp.int64, copy=False))
        cnt = None if counts is None else contiguous(xp, counts.reshape(-1).astype(xp.int64, copy=False))
        args = (contiguous(xp, grad), idx, cnt, out, i64(positions), i64(dim), i64(padding_idx))
        function(FAMILY.name, f"embedding_backward<{t}, {ACC_CTYPES[t]}>")((blocks(positions * dim),), (BLOCK,),
                                                                            args)
    return out if out.dtype == grad.dtype else out.astype(grad.dtype)
