"""Distance modules: ``CosineSimilarity`` and ``PairwiseDistance`` (options kept, ``F.*`` called)."""
from .. import functional as F
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """Cosine similarity of ``x1`` and ``x2`` along ``dim`` (norms clamped at ``eps``).

    Shape: ``x1`` ``(*1, D, *2)``, ``x2`` broadcastable to it; output ``(*1, *2)``."""

    __constants__ = ["dim", "eps"]

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``p``-norm of ``x1 - x2 + eps`` over the last dimension.

    Shape: ``(N, D)`` or ``(D,)`` inputs; output ``(N,)`` or ``()`` (``(N, 1)`` with ``keepdim``)."""

    __constants__ = ["norm", "eps", "keepdim"]

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
