"""How often each index occurs among a set of indices (embedding's ``scale_grad_by_freq``).

Shared by the generic embedding backward in ``nn.functional.sparse`` and the backends' kernels.
"""
__all__ = ["index_counts"]


def index_counts(xp, idx, num_weights):
    """For each position of the 1-D index array ``idx``: how often its index occurs in ``idx``
    (indices in ``[0, num_weights)``)."""
    return xp.bincount(idx, minlength=num_weights)[idx]
