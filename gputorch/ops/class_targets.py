"""Per-sample terms of the class-index losses (nll_loss, cross_entropy) and their reduction.

Array-level, shared by the generic loss forwards in ``nn.functional.loss`` and by the backends'
fused forwards (the CUDA backend's cross entropy kernel), so that both check targets, ignore
``ignore_index`` and divide by the total weight in the same way.
"""
import numpy as np

__all__ = ["checked_targets", "total", "reduce_terms"]

_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)


def checked_targets(xp, t, n_classes, ignore_index):
    """``(safe, valid)``: targets with the ignored ones set to class 0, and the mask of the
    others (None when no target is ignored). IndexError for a target out of range."""
    out_of_range = (t < 0) | (t >= n_classes)
    if not 0 <= ignore_index < n_classes and not bool(out_of_range.any()):
        return t, None
    ignored = t == ignore_index
    bad = out_of_range & ~ignored
    if bool(bad.any()):
        raise IndexError(f"Target {int(t[bad].ravel()[0])} is out of bounds.")
    if not bool(ignored.any()):
        return t, None
    return xp.where(ignored, 0, t), ~ignored


def total(arr):
    """Sum of all elements (float16 accumulates in float32, as PyTorch does)."""
    return arr.sum(dtype=_F32) if arr.dtype == _F16 else arr.sum()


def reduce_terms(loss, total_weight, reduction):
    """Per-sample ``loss`` reduced: itself ("none"), its sum, or its sum over ``total_weight``
    ("mean", the weights of the non-ignored targets)."""
    if reduction == "none":
        return loss
    summed = total(loss)
    return summed if reduction == "sum" else summed / total_weight
