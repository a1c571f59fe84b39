"""The out-of-memory report.

An out-of-memory error raised inside a running profiler (NumPy's ``MemoryError``, CuPy's
``OutOfMemoryError``, the simulated device's) propagates unchanged, with a note added (PEP 678:
printed under the traceback) and a ``memory_report`` attribute holding the same text:

- the tracked bytes per category at the failure (and the allocator's view on a GPU);
- the largest live tensors, with their module and op;
- what checkpointing which modules would free (their activations, see ``checkpointing.py``).
"""
from ._format import format_bytes, table
from .categories import CATEGORIES
from .checkpointing import checkpoint_savings

__all__ = ["is_out_of_memory", "annotate_out_of_memory", "out_of_memory_text"]

_LARGEST = 10
_ADVICE = 5


def is_out_of_memory(exc):
    """Whether ``exc`` is an out-of-memory error of some array library."""
    if isinstance(exc, MemoryError):
        return True
    return any("OutOfMemory" in cls.__name__ for cls in type(exc).__mro__)


def annotate_out_of_memory(exc, profiler):
    text = out_of_memory_text(profiler)
    try:
        exc.add_note(text)
    except Exception:
        pass
    try:
        exc.memory_report = text
    except Exception:
        pass


def out_of_memory_text(profiler):
    tracker = profiler.tracker
    live = tracker.live_records()
    total = sum(tracker.current.values())
    lines = [f"gputorch memory profiler: out of memory in step {tracker.step}, phase {tracker.phase}; "
             f"{format_bytes(total)} tracked in {len(live)} storages at the failure:"]
    rows = [(c, format_bytes(tracker.current[c])) for c in CATEGORIES if tracker.current[c]]
    lines.append(table(["category", "bytes"], rows))
    from . import views
    for name, view in views.collect(sorted({r.device for r in live}), profiler._peaks).items():
        alloc = view.get("allocator")
        if alloc:
            lines.append(f"{name}: allocator used {format_bytes(alloc['used'])}, total (reserved) "
                         f"{format_bytes(alloc['total'])}")
    largest = sorted(live, key=lambda r: -r.nbytes)[:_LARGEST]
    if largest:
        lines.append("Largest live tensors:")
        lines.append(table(["bytes", "category", "shape", "dtype", "op", "module"],
                           [(format_bytes(r.nbytes), r.cat, "x".join(map(str, r.shape)) or "scalar", r.dtype,
                             r.op_name(), r.param_name or _module(r.module)) for r in largest], "<<<<<<"))
    savings = checkpoint_savings([(r, r.cat) for r in live])
    best = sorted(((b, p) for p, b in savings.items() if p != ""), reverse=True)[:_ADVICE]
    if best:
        lines.append("Checkpointing would free (activations saved only inside the module; "
                     "gputorch.utils.checkpoint.checkpoint(module, x, use_reentrant=False)):")
        lines.append(table(["module", "frees"], [(p, format_bytes(b)) for b, p in best]))
    return "\n".join(lines)


def _module(path):
    return "<no module>" if path is None else (path or "<model>")
