"""Shape-only forwards for the meta device, for ops whose generic forward needs values.

Most value tests inside ops are ``if bad.any(): raise ...`` or ``if isfinite(g).all(): ...``, which
the meta arrays answer themselves as for clean data (see ``meta_array._truth``). The ops listed
here test values some other way:

- with an assumed answer (:func:`answering`): the op's own forward runs with every truth test of a
  meta array answering as given, so it computes the same shapes and saves for backward exactly
  what it saves on a real device;
- with a shape-only forward of their own, where the generic forward computes a data-dependent
  intermediate (``unique``).

``install`` fills the backend's ``overrides`` table when the meta device is first used. The op
classes are named by module and class name and looked up among the modules already imported
(:mod:`.specialised_ops`: the backends import nothing from nn); a class that has been renamed or
removed is skipped rather than breaking the meta device.
"""
from .meta_array import ASSUMED_TRUTH
from .specialised_ops import loaded_op

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


def _embedding_renorm(ctx, weight, indices, max_norm, norm_type):
    """``EmbeddingRenorm``: the renormalised weight is a copy of the weight (which rows change
    depends on the values)."""
    return weight._data.copy()


_SPARSE = "gputorch.nn.functional.sparse"


def _overrides():
    assumed = [
        ("EmbeddingBackward0", False),      # ``bool(idx.min() < 0)``: no index out of range
    ]
    own = [
        ("EmbeddingRenorm", _embedding_renorm),
    ]
    out = {}
    for name, answer in assumed:
        cls = loaded_op(_SPARSE, name)
        if cls is not None:
            out[cls] = answering(answer, cls)
    for name, forward in own:
        cls = loaded_op(_SPARSE, name)
        if cls is not None:
            out[cls] = forward
    return out


def install(overrides):
    """Register every meta override in the backend's ``overrides`` table."""
    overrides.update(_overrides())
