"""``F.gumbel_softmax``: a differentiable sample of a categorical distribution given by logits
(the Gumbel-softmax, or Concrete, relaxation), optionally one-hot in the forward pass with the
soft sample's gradient (the straight-through estimator).

The Gumbel noise ``-log(E)``, ``E ~ Exponential(1)``, comes from the default generator of the
logits' device, so ``manual_seed`` makes samples reproducible.
"""
import warnings

from ..._tensor import Tensor
from ...ops.creation import empty_like, zeros_like

__all__ = ["gumbel_softmax"]


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """``softmax((logits + g) / tau, dim)`` with ``g`` standard Gumbel noise; with ``hard``, the
    one-hot vector of its largest entry in the forward pass, carrying the soft sample's gradient.
    ``eps`` is deprecated and unused (as in PyTorch)."""
    if not isinstance(logits, Tensor):
        raise TypeError(f"gumbel_softmax(): argument 'logits' must be Tensor, not {type(logits).__name__}")
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -empty_like(logits).exponential_().log()
    soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return soft
    index = soft.max(dim, keepdim=True)[1]
    one_hot = zeros_like(logits).scatter_(dim, index, 1.0)
    return one_hot - soft.detach() + soft
