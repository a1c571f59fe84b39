"""``torch.cond``: run one of two functions on the operands, chosen by a predicate.

PyTorch's ``cond`` exists for ``torch.compile`` and ``torch.export``, which trace both branches;
run eagerly it calls the chosen branch, which is what gputorch does (there is no graph capture).
"""
from ._tensor import Tensor

__all__ = ["cond"]


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` (a bool, a number or a one-element tensor) holds, else
    ``false_fn(*operands)``."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        pred = bool(pred.item())
    elif not isinstance(pred, (bool, int, float)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple that only consists "
                           f"of tensor leaves, but got {operands}.")
    return (true_fn if pred else false_fn)(*operands)
