"""The autograd graph as the profiler sees it: which module recorded each node, and what it holds.

Two things are kept while profiling:

- *module marks*: each module forward's start and end takes a graph sequence number (nodes are
  numbered as they are recorded), so the module that was running when a node was recorded is found
  later by bisection, without a hook on every op. The backward engine reports each node before it
  runs (``engine.NODE_HOOKS``), and what that node's backward allocates is charged to that module.
- a *graph snapshot*: when a backward pass starts (``engine.GRAPH_HOOKS``), every saved tensor of
  its graph is still alive. The graph is walked from its roots and described as plain data (nodes,
  edges, saved storages, bytes held) when more activation bytes are alive than at any earlier
  backward start (so a steady training loop walks its graph once, not every step): the graph "at
  its fullest", which is where training's activation peak is. ``graph_view.py`` draws it.
"""
from bisect import bisect_right

from .._tensor import Tensor
from ..autograd.node import AccumulateGrad, next_sequence_nr
from .categories import ACTIVATIONS

__all__ = ["ModuleMarks", "capture_graph"]


class ModuleMarks:
    """Sequence numbers at which the innermost running module changed, and the module after each."""

    def __init__(self):
        self.seqs = []        # increasing sequence numbers
        self.paths = []       # the innermost module path from that number on (None: no module)

    def mark(self, path):
        """The innermost running module is ``path`` from now on."""
        self.seqs.append(next_sequence_nr())
        self.paths.append(path)

    def module_of(self, node):
        """The module whose forward recorded ``node`` (None for leaves' accumulators and nodes
        recorded outside every module or before profiling)."""
        if type(node) is AccumulateGrad:
            return None
        i = bisect_right(self.seqs, node._sequence_nr)
        return self.paths[i - 1] if i else None

    def forget_before(self, seq):
        """Drop the marks that only nodes older than ``seq`` can need (graphs of past steps)."""
        i = bisect_right(self.seqs, seq) - 1
        if i > 0:
            del self.seqs[:i]
            del self.paths[:i]


def _saved_tensors(node):
    """The tensors ``node`` holds for backward (its saved inputs and, for some ops, its output)."""
    entries = list(node._saved or ())
    result = node._result_saved
    if result is not None:
        entries.append(result)
    out = []
    for s in entries:
        t = getattr(s, "tensor", None)
        if t is None:
            packed = getattr(s, "packed", None)
            if isinstance(packed, Tensor):
                t = packed
            elif isinstance(packed, (tuple, list)):
                out += [p for p in packed if isinstance(p, Tensor)]
                continue
        if t is not None:
            out.append(t)
    return out


def capture_graph(roots, tracker, marks, param_names):
    """The graph reachable from the backward ``roots`` as plain data:

    ``{"nodes": [{"id", "name", "module", "param", "held", "saved": [{"rid", "shape", "dtype",
    "bytes", "category"}]}], "edges": [(from id, to id)], "held": bytes, "step": step}``, edges
    running from a node's input (a ``next_functions`` entry) to the node, as graph drawings show
    them. ``held`` counts the saved storages that are activations (held only for backward); a
    storage saved by several nodes counts once in the total. ``param_names``: ``{id(param): name}``.
    """
    ids, nodes, edges = {}, [], []
    stack = [r for r in roots if r is not None]
    for r in stack:
        ids[r] = len(ids)
    unique = {}
    while stack:
        fn = stack.pop()
        entry = {"id": ids[fn], "name": type(fn).__name__, "module": marks.module_of(fn), "param": None,
                 "held": 0, "saved": []}
        if type(fn) is AccumulateGrad:
            entry["param"] = param_names.get(id(fn.variable))
        else:
            seen = set()
            for t in _saved_tensors(fn):
                rec = tracker.storage(t)
                if rec is None or rec.rid in seen:
                    continue
                seen.add(rec.rid)
                entry["saved"].append({"rid": rec.rid, "shape": list(t.shape), "dtype": rec.dtype,
                                       "bytes": rec.nbytes, "category": rec.cat})
                if rec.cat == ACTIVATIONS:
                    entry["held"] += rec.nbytes
                    unique[rec.rid] = rec.nbytes
        nodes.append(entry)
        for nxt, _ in fn.next_functions:
            if nxt is None:
                continue
            if nxt not in ids:
                ids[nxt] = len(ids)
                stack.append(nxt)
            edges.append((ids[nxt], ids[fn]))
    nodes.sort(key=lambda n: n["id"])
    return {"nodes": nodes, "edges": edges, "held": sum(unique.values()), "step": tracker.step}
