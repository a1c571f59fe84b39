"""What checkpointing a module would save: activation bytes per module.

Checkpointing module ``M`` (``gputorch.utils.checkpoint.checkpoint``) keeps only ``M``'s inputs
for backward and recomputes the rest. It frees a saved storage only if the graph holds it for
``M``'s ops alone: the storage was made inside ``M`` and every op that saved it ran inside
``M``. A storage made inside ``M`` but also saved by an op after ``M`` (its output, usually) stays;
so does one made before ``M`` (its input). So each activation counts for the innermost module
containing its creation and all its savers, and for every module around that one.

Module paths: ``""`` is the model (root), ``"a.b"`` its submodule; modules outside the model
are roots of their own, ``"<ClassName>"``; ``None`` is "outside every module".
"""
from .categories import ACTIVATIONS

__all__ = ["checkpoint_savings", "common_module", "ancestors"]


def _parts(path):
    return [] if path == "" else path.split(".")


def common_module(paths):
    """The innermost module containing every path (None if there is none)."""
    common = None
    for p in paths:
        if p is None:
            return None
        parts = _parts(p)
        if common is None:
            common = parts
            continue
        n = 0
        while n < len(common) and n < len(parts) and common[n] == parts[n]:
            n += 1
        common = common[:n]
    if common is None:
        return None
    if not common:
        return None if any(p.startswith("<") for p in paths) else ""
    return ".".join(common)


def ancestors(path):
    """``"a.b"`` -> ``["a.b", "a", ""]``; ``"<Loss>.x"`` -> ``["<Loss>.x", "<Loss>"]``."""
    parts = _parts(path)
    out = [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
    if not path.startswith("<"):
        out.append("")
    return out


def checkpoint_savings(items):
    """``{module path: bytes}`` that checkpointing each module would free, from ``(record,
    category)`` pairs of live storages (only activations count)."""
    savings = {}
    for rec, cat in items:
        if cat != ACTIVATIONS:
            continue
        savers = rec.savers or (None,)
        inner = common_module([rec.module, *savers])
        if inner is None:
            continue
        for path in ancestors(inner):
            savings[path] = savings.get(path, 0) + rec.nbytes
    return savings
