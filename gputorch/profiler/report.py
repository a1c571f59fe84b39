"""``MemoryReport``: what a :class:`~gputorch.profiler.MemoryProfiler` found.

Attributes (plain Python data, also in :meth:`MemoryReport.to_dict`):

``peak_bytes``         highest total of tracked bytes
``peak``               ``{category: bytes}`` at that peak
``peak_phase``         "forward" | "backward" | "optimizer" | "other"
``peak_step``, ``peak_time``  when the peak happened (completed steps, seconds since start)
``current``            ``{category: bytes}`` now (at ``stop()`` once the profiler has stopped)
``by_module``          ``{module path: {category: bytes}}`` at the peak, each storage counted once,
                       for the module it belongs to: parameters, buffers, gradients and optimizer
                       state to their parameter's module, anything else to the module that was
                       running when it was made (made by a backward pass: the module whose forward
                       recorded the graph node; ``""`` is the model; ``"<no module>"``: made
                       outside every module, like the input batch or the loss)
``by_device``          ``{device: {category: bytes}}`` at the peak
``current_by_module``, ``current_by_device``  the same now
``category_peaks``     ``{category: bytes}``: each category's own maximum over time
``largest``            the largest storages alive at the peak (dicts with module, op, shape, ...)
``checkpoint_savings`` ``{module path: bytes}``: how much lower the activation peak would be with each
                       module checkpointed (its activations held for its own ops alone, at the
                       moment the activations were highest; see ``checkpointing.py``)
``checkpoint_savings_at_peak``  the same at the moment of the (total) peak
``module_types``       ``{module path: class name}`` (``"0": "Conv2d"``)
``autograd_graph``     the autograd graph when it held the most activations (at the start of a backward
                       pass), as plain data (see ``autograd_graph.py``); None if no backward ran.
                       :meth:`MemoryReport.graph` draws it
``timeline``           samples ``{"t", "step", "phase", <category>: bytes}``
``leaks``              findings of the leak check (dicts with kind, step, bytes, module, op, message)
``views``              per GPU: the allocator's and the device's views (see ``views.py``)
``activations_by_dtype`` ``{dtype name: bytes}`` of the activations at their highest: what mixed
                       precision changed shows up here (float16/bfloat16 activations under autocast,
                       including the half-precision copies of weights that its matrix products save);
                       ``estimate_memory(..., autocast=dtype)`` predicts the saving against float32
``communication``      marks of the collectives run while profiling (DistributedDataParallel's bucket
                       all-reduces, ...): dicts with name, seq, bytes, start, end (seconds), step, phase
``scalars``            ``{tag: [[t, step, value], ...]}``: training curves recorded with
                       ``MemoryProfiler.add_scalar`` (t in seconds on the timeline's axis)
``steps``, ``duration``
"""
import json

from ._format import communication_rows, format_bytes, table
from .categories import CATEGORIES
from .checkpointing import checkpoint_savings
from .views import GAP_NOTES

__all__ = ["MemoryReport", "NO_MODULE"]

NO_MODULE = "<no module>"
_LARGEST = 10
_TOP_MODULES = 12


class MemoryReport:
    """The profiler's findings (see the module docstring)."""

    def __init__(self, timeline, state, leaks, tracker):
        self.peak_bytes = max(timeline.peak_total, 0)
        self.peak = dict(timeline.peak_totals)
        self.peak_phase = timeline.peak_phase
        self.peak_step = timeline.peak_step
        self.peak_time = timeline.peak_t
        self.current = dict(state["current"])
        self.steps = state["step"]
        self.duration = state["time"]
        self.category_peaks = dict(timeline.category_peaks)
        self.timeline = timeline.sample_dicts()
        self.communication = [dict(m) for m in tracker.communication]
        self.activations_by_dtype = _activations_by_dtype(timeline.activation_peak_live)
        self.leaks = list(leaks)
        self.views = state["views"]
        peak_live = timeline.peak_live
        self.by_module = _group(peak_live, lambda r: NO_MODULE if r.module is None else r.module)
        self.by_device = _group(peak_live, lambda r: r.device)
        self.largest = [r.as_dict(cat) for r, cat in sorted(peak_live, key=lambda rc: -rc[0].nbytes)[:_LARGEST]]
        self.checkpoint_savings = dict(sorted(checkpoint_savings(timeline.activation_peak_live).items()))
        self.checkpoint_savings_at_peak = dict(sorted(checkpoint_savings(peak_live).items()))
        now = state["live"]
        self.current_by_device = _group(now, lambda r: r.device)
        self.current_by_module = _group(now, lambda r: NO_MODULE if r.module is None else r.module)
        self.scalars = dict(state.get("scalars") or {})
        self.module_types = dict(state.get("module_types") or {})
        self.autograd_graph = state.get("graph")
        self._tracker_devices = sorted({r.device for r, _ in now} | {r.device for r, _ in peak_live})

    # ------------------------------------------------------------------ derived views
    @property
    def current_bytes(self):
        return sum(self.current.values())

    def module_totals(self, inclusive=False):
        """``{module path: bytes}`` at the peak; ``inclusive=True`` adds each module's submodules."""
        from .checkpointing import ancestors
        out = {}
        for path, cats in self.by_module.items():
            total = sum(cats.values())
            targets = [path] if not inclusive or path == NO_MODULE else ancestors(path)
            for p in targets:
                out[p] = out.get(p, 0) + total
        return out

    def module_label(self, path):
        """A module path as the tables show it, with its class: ``"0 (Conv2d)"``, ``"<model> (Net)"``."""
        kind = self.module_types.get(path)
        return _name(path) if kind is None else f"{_name(path)} ({kind})"

    def graph(self, max_nodes=80, top=8):
        """The autograd graph at its fullest as a ``graphviz.Digraph``: each node with the bytes its
        saved tensors hold, nodes grouped by module, the ``top`` largest holders highlighted; graphs
        of more than ``max_nodes`` nodes fold each repeated module (``blocks.0`` ... ``blocks.5``) into
        one box (see ``graph_view.py``). Needs the ``graphviz`` package."""
        from .graph_view import draw_graph
        if self.autograd_graph is None:
            raise RuntimeError("no backward pass ran while profiling: there is no autograd graph to draw")
        return draw_graph(self.autograd_graph, self.module_types, max_nodes=max_nodes, top=top)

    def to_dict(self):
        return {
            "peak_bytes": self.peak_bytes, "peak": self.peak, "peak_phase": self.peak_phase,
            "peak_step": self.peak_step, "peak_time": self.peak_time, "current": self.current,
            "by_module": self.by_module, "by_device": self.by_device, "current_by_device": self.current_by_device,
            "current_by_module": self.current_by_module,
            "category_peaks": self.category_peaks, "largest": self.largest,
            "checkpoint_savings": self.checkpoint_savings,
            "checkpoint_savings_at_peak": self.checkpoint_savings_at_peak, "leaks": self.leaks, "views": self.views,
            "steps": self.steps, "duration": self.duration, "categories": list(CATEGORIES),
            "timeline": self.timeline, "communication": self.communication,
            "activations_by_dtype": self.activations_by_dtype, "scalars": self.scalars,
            "module_types": self.module_types,
        }

    def save_json(self, path):
        """Write :meth:`to_dict` as JSON."""
        with open(path, "w") as f:
            json.dump(self.to_dict(), f, separators=(",", ":"))
        return path

    def save_html(self, path):
        """Write a self-contained HTML page: an interactive stacked timeline and the tables."""
        from .html import render
        with open(path, "w") as f:
            f.write(render(self))
        return path

    # ------------------------------------------------------------------ text
    def __str__(self):
        out = [f"gputorch memory profile: {self.steps} optimizer step(s) in {self.duration:.3f} s; "
               f"devices: {', '.join(self._tracker_devices) or 'none'}",
               f"Peak: {format_bytes(self.peak_bytes)} tracked, in step {self.peak_step}, phase "
               f"{self.peak_phase} (t = {self.peak_time:.3f} s)", ""]
        rows = [(c, format_bytes(self.peak[c]), format_bytes(self.current[c]), format_bytes(self.category_peaks[c]))
                for c in CATEGORIES]
        rows.append(("total", format_bytes(self.peak_bytes), format_bytes(self.current_bytes), ""))
        out.append(table(["category", "at peak", "now", "own max"], rows))
        out += ["", "Modules at the peak (bytes attributed to each module itself):"]
        used = [c for c in CATEGORIES if any(m[c] for m in self.by_module.values())]
        top = sorted(self.by_module.items(), key=lambda kv: -sum(kv[1].values()))[:_TOP_MODULES]
        out.append(table(["module"] + used + ["total"],
                         [[self.module_label(p)] + [format_bytes(cats[c]) for c in used] + [format_bytes(sum(cats.values()))]
                          for p, cats in top]))
        if len(self.by_module) > _TOP_MODULES:
            out.append(f"... and {len(self.by_module) - _TOP_MODULES} more modules")
        if self.largest:
            out += ["", "Largest tensors at the peak:"]
            out.append(table(["bytes", "category", "shape", "dtype", "op", "module / name"],
                             [(format_bytes(d["bytes"]), d["category"], "x".join(map(str, d["shape"])) or "scalar",
                               d["dtype"], d["op"], d["name"] or _name(d["module"])) for d in self.largest],
                             "<<<<<<"))
        if any(name != "float32" for name in self.activations_by_dtype):
            parts = ", ".join(f"{name} {format_bytes(n)}" for name, n in self.activations_by_dtype.items())
            out += ["", f"Activations at their highest, by dtype: {parts}"]
        if self.communication:
            out += ["", "Communication (collectives while profiling):"]
            out.append(table(["operation", "count", "bytes", "seconds in flight"], communication_rows(self.communication),
                             "<>>>"))
        advice = sorted(((b, p) for p, b in self.checkpoint_savings.items() if p != ""), reverse=True)[:5]
        if advice:
            out += ["", f"Checkpointing would lower the activation peak "
                        f"({format_bytes(self.category_peaks['activations'])}) by:"]
            at_peak = self.checkpoint_savings_at_peak
            out.append(table(["module", "activations", "at the total peak"],
                             [(p, format_bytes(b), format_bytes(at_peak.get(p, 0))) for b, p in advice]))
        out += ["", "Leak check: " + ("nothing found" if not self.leaks else f"{len(self.leaks)} finding(s)")]
        for leak in self.leaks:
            out.append(f"  - [{leak['kind']}, step {leak['step']}] {leak['message']}")
        out += self._views_text()
        return "\n".join(out)

    def _views_text(self):
        if not self.views:
            return []
        out = ["", "GPU memory, three views (tracked tensors | allocator | device):"]
        rows = []
        for name, view in self.views.items():
            tracked_now = sum(self.current_by_device.get(name, {}).values())
            tracked_peak = sum(self.by_device.get(name, {}).values())
            alloc = view.get("allocator") or {}
            dev = view.get("device") or {}
            rows.append((name, "now", format_bytes(tracked_now), format_bytes(alloc.get("used")),
                         format_bytes(alloc.get("total")), format_bytes(dev.get("process")),
                         f"{format_bytes(dev.get('used'))} / {format_bytes(dev.get('total'))}" if dev else "n/a"))
            rows.append(("", "peak", format_bytes(tracked_peak), format_bytes(alloc.get("peak_used")),
                         format_bytes(alloc.get("peak_total")), "", ""))
        out.append(table(["device", "", "tracked", "allocator used", "allocator total", "process (NVML)",
                          "GPU used / total (NVML)"], rows, "<<>>>>>"))
        out.append("Gaps: " + "; ".join(GAP_NOTES) + ".")
        return out

    def __repr__(self):
        return (f"<MemoryReport peak={self.peak_bytes} B ({self.peak_phase}, step {self.peak_step}), "
                f"steps={self.steps}, leaks={len(self.leaks)}>")


def _activations_by_dtype(live):
    """``{dtype name: bytes}`` over the activation records of ``live``, largest first."""
    from .categories import ACTIVATIONS
    by_dtype = {}
    for rec, cat in live:
        if cat == ACTIVATIONS:
            by_dtype[rec.dtype] = by_dtype.get(rec.dtype, 0) + rec.nbytes
    return dict(sorted(by_dtype.items(), key=lambda kv: -kv[1]))


def _name(path):
    if path is None:
        return NO_MODULE
    if path == "":
        return "<model>"
    return path


def _group(items, key):
    out = {}
    for rec, cat in items:
        k = key(rec)
        d = out.get(k)
        if d is None:
            d = out[k] = dict.fromkeys(CATEGORIES, 0)
        d[cat] += rec.nbytes
    return out
