"""The leak check: at each step boundary, what should be gone and is not.

Three findings, each reported once with the tensor's origin (module path and op):

``graph_kept_alive``
    A live tensor whose autograd graph reaches nodes made in an earlier step: the graph of
    earlier steps stays alive through it. Typical cause: ``total_loss += loss`` instead of
    ``total_loss += loss.item()``. Found by walking the graph back from the live tensors that
    have a ``grad_fn`` (nodes carry their creation sequence number; the sequence number at each
    step boundary tells which step made a node).
``activations_held``
    Storages saved for backward in an earlier step and still held by a graph at the end of this
    step: a graph that was never backpropagated (and never freed), e.g. outputs collected in a
    list during a training loop, or an evaluation forward without ``no_grad``.
``gradients_not_cleared``
    Parameters whose ``.grad`` is the same tensor with the same version at the first backward
    of a step as at the end of the previous optimizer step: neither set to None nor zeroed, so
    gradients accumulate across steps. Gradient accumulation on purpose looks the same, so this
    is a notice, never an error.

Findings are reported (``report.leaks``), never raised.
"""
from ..autograd.node import AccumulateGrad, next_sequence_nr
from .categories import ACTIVATIONS

__all__ = ["LeakChecker"]

_EXAMPLES = 3


class LeakChecker:
    """Runs the checks for one profiler (see the module docstring)."""

    def __init__(self, tracker):
        self.tracker = tracker
        self.findings = []
        self._step_starts = [next_sequence_nr()]   # first node sequence number of each step
        self._flagged = set()                       # (kind, storage id) already reported
        self._grad_versions = None                  # {id(param): (grad tensor id, version)}
        self._grads_reported = False

    # ------------------------------------------------------------------ step boundary
    def end_of_step(self, step, params):
        """Step ``step`` (0-based) has just finished; ``params`` are the known parameters."""
        threshold = self._step_starts[-1]      # nodes older than this belong to earlier steps
        start = self._step_starts[0]
        tracker = self.tracker
        visited, held, flagged = set(), [], self._flagged
        # Storages still saved for backward: activations, unless backward has freed them.
        saved = list({rec: None for rec in tracker.saved_records if rec.alive and rec.nsaved > 0})
        tracker.saved_records = saved
        for rec in saved:
            if rec.cat == ACTIVATIONS and rec.saved_step < step and ("activations_held", rec.rid) not in flagged:
                held.append(rec)
        # Tensors made with grad mode on that are still alive: do their graphs reach older steps?
        alive = []
        for rec in tracker.grad_created:
            t = rec.tensor_ref() if rec.alive else None
            if t is None:
                continue
            alive.append(rec)
            if t._grad_fn is None:
                continue
            old = _find_old_node(t._grad_fn, start, threshold, visited)
            if old is not None and ("graph_kept_alive", rec.rid) not in flagged:
                flagged.add(("graph_kept_alive", rec.rid))
                self._report_graph(step, rec, t, old)
        tracker.grad_created = alive
        if held:
            self._report_activations(step, held)
        self._step_starts.append(next_sequence_nr())
        self._grad_versions = {id(p): (id(p._grad), p._grad._vc[0]) for p in params if p._grad is not None}

    def _step_of(self, seq):
        starts = self._step_starts
        lo, hi = 0, len(starts)
        while lo < hi:
            mid = (lo + hi) // 2
            if starts[mid] <= seq:
                lo = mid + 1
            else:
                hi = mid
        return lo - 1

    def _report_graph(self, step, rec, t, old):
        first = max(self._step_of(old._sequence_nr), 0)
        shape = list(t.shape)
        self.findings.append({
            "kind": "graph_kept_alive", "step": step, "bytes": rec.nbytes, "module": rec.module,
            "op": type(t._grad_fn).__name__, "shape": shape, "dtype": rec.dtype, "count": 1,
            "message": (f"a tensor of shape {shape} ({rec.dtype}) made by {rec.op_name()} in "
                        f"{_where(rec)} keeps the autograd graph of step {first} alive at the end of "
                        f"step {step} (through {type(old).__name__}); accumulate with .item() or "
                        ".detach() (e.g. total_loss += loss.item())")})

    def _report_activations(self, step, held):
        for rec in held:
            self._flagged.add(("activations_held", rec.rid))
        held.sort(key=lambda r: -r.nbytes)
        total = sum(r.nbytes for r in held)
        first = held[0]
        examples = "; ".join(r.describe() for r in held[:_EXAMPLES])
        self.findings.append({
            "kind": "activations_held", "step": step, "bytes": total, "module": first.module,
            "op": first.op_name(), "shape": list(first.shape), "dtype": first.dtype, "count": len(held),
            "message": (f"{len(held)} storage(s) ({total} B) saved for backward in an earlier step are still "
                        f"held by an autograd graph at the end of step {step} (a graph never "
                        f"backpropagated nor freed: keep .detach()ed values, or run evaluation under "
                        f"no_grad); largest: {examples}")})

    # ------------------------------------------------------------------ backward
    def before_backward(self, step, params, param_names):
        """The first backward of step ``step`` is starting."""
        versions = self._grad_versions
        if not versions or self._grads_reported:
            return
        stale = [p for p in params if p._grad is not None
                 and versions.get(id(p)) == (id(p._grad), p._grad._vc[0])]
        if not stale:
            return
        self._grads_reported = True
        total = sum(int(p._grad._data.size) * p._grad._dtype.itemsize for p in stale)
        names = [param_names.get(id(p), "?") for p in stale]
        self.findings.append({
            "kind": "gradients_not_cleared", "step": step, "bytes": total, "module": None, "op": None,
            "shape": None, "dtype": None, "count": len(stale),
            "message": (f"the gradients of {len(stale)} parameter(s) ({total} B; {', '.join(names[:_EXAMPLES])}"
                        f"{', ...' if len(names) > _EXAMPLES else ''}) were not cleared since the optimizer "
                        f"step that ended step {step - 1}: this backward adds to them. Call "
                        "optimizer.zero_grad() every step unless you accumulate gradients on purpose")})


def _where(rec):
    return f"module '{rec.module}'" if rec.module is not None else "no module (top-level code)"


def _find_old_node(root, start, threshold, visited):
    """A node reachable from ``root`` made while profiling (from sequence number ``start`` on) but
    before sequence number ``threshold``; None if none. (Sequence numbers fall along the edges.)"""
    stack = [root]
    while stack:
        node = stack.pop()
        if node in visited:
            continue
        visited.add(node)
        if type(node) is AccumulateGrad:
            continue
        seq = node._sequence_nr
        if seq:                   # 0: a node without a number (not made by an op)
            if seq < start:       # made before profiling: not a step's graph (and neither is its history)
                continue
            if seq < threshold:
                return node
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in visited:
                stack.append(nxt)
    return None
