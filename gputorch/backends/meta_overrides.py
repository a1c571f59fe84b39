"""Shape-only forwards for the meta device, for ops whose generic forward tests values.

Some forwards validate their inputs or take a rare fix-up path by testing values, e.g.
``if bool((idx < 0).any()): raise IndexError`` or ``if bool(isnan(out).any()): ...``. A meta
array has no values, so such a test raises. For the ops listed here the meta backend runs the
op's own forward with every value test answered as for clean data (the answer given below:
no index out of range, no ignored target, no NaN), so the op computes the same shapes and saves
for backward exactly what it saves on a real device -- the memory the graph holds is the same.

Register an op with :func:`assume`; ``install`` fills the backend's ``overrides`` table (the
classes are imported on first use of the meta device, keeping the backends free of nn imports
at import time).
"""
from .meta_array import ASSUMED_TRUTH

__all__ = ["install", "answering"]


def answering(answer, node_cls):
    """``node_cls.forward`` with every ``bool()`` of a meta array inside it answering ``answer``."""
    def shape_only_forward(ctx, *args, **params):
        ASSUMED_TRUTH.append(answer)
        try:
            return node_cls.forward(ctx, *args, **params)
        finally:
            ASSUMED_TRUTH.pop()
    shape_only_forward.__name__ = f"{node_cls.__name__}_meta_forward"
    return shape_only_forward


def _clean_data_ops():
    """``(node class, answer)``: ops whose value tests all get the same answer on clean data."""
    from ..nn.functional import loss, pooling, sparse
    return [
        (sparse.EmbeddingBackward0, False),          # index out of range?
        (loss.NllLossBackward0, False),              # target out of range / ignored?
        (loss.CrossEntropyLossBackward0, False),
        (pooling.MaxPool2DWithIndicesBackward0, False),   # window of padding only / NaN window?
        (pooling.MaxPool2DWithIndicesBackwardBackward0, True),   # all gradients finite?
    ]


def install(overrides):
    """Register every meta override in the backend's ``overrides`` table."""
    for node_cls, answer in _clean_data_ops():
        overrides[node_cls] = answering(answer, node_cls)
