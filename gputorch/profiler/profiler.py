"""``MemoryProfiler``: exact attribution of tracked bytes to categories, modules, phases and steps.

::

    prof = MemoryProfiler(model=model, optimizer=opt)   # both optional
    with prof:
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            loss.backward(); opt.step(); opt.zero_grad()
    report = prof.report()
    print(report); report.save_html("memory.html")

``prof.add_scalar("loss", loss.item())`` records a training curve beside the memory: the HTML
report draws each tag on the memory timeline's time axis.

Every storage behind a tensor is tracked from its creation to its deallocation (see
``tracker.py``), classified by its role (``categories.py``), and attributed to the module that was
running when it was made; phases come from module forwards, the autograd engine and optimizer
steps (``phases.py``), steps from ``optimizer.step()`` calls. The profiler observes through hooks
only (``hooks.py``); with no profiler running, the framework pays one empty-list check per tensor.

Out-of-memory errors raised inside the ``with`` block propagate with the breakdown at the failure
attached (``oom.py``), and the leak check runs at every step boundary (``leaks.py``).
"""
import collections

from .hooks import Observer
from .leaks import LeakChecker
from .oom import annotate_out_of_memory, is_out_of_memory
from .report import MemoryReport
from .timeline import Timeline
from .tracker import StorageTracker
from . import views

__all__ = ["MemoryProfiler"]

_RUNNING = []   # at most one profiler observes at a time


class MemoryProfiler:
    """Tracks the memory of the tensors made while it runs (a context manager).

    Args:
        model (nn.Module, optional): names modules (``""`` is the model) and marks parameters and
            buffers from the start. Without it, the first module called outside any other is the model.
        optimizer (Optimizer, optional): its state is optimizer state and its ``step()`` calls count
            the steps. Without it, optimizers are found at their first ``step()`` and the first one's
            steps are counted.
        device (str or device, optional): track only storages on this device ("cuda:0") or device
            type ("cuda"). Default: every device (on a CUDA run, the optimizers' step counters, which
            live on the CPU as in PyTorch, then count as CPU optimizer state: 4 bytes per parameter).
        max_samples (int): timeline samples kept at full detail (then one per phase change).
        max_trace_entries (int): allocation events kept for :meth:`export_memory_snapshot`.
        check_leaks (bool): run the leak check at each step boundary (default True).
        scan_existing (bool): also register the tensors alive when profiling starts (default True).
    """

    def __init__(self, model=None, optimizer=None, *, device=None, max_samples=100_000,
                 max_trace_entries=100_000, check_leaks=True, scan_existing=True):
        if device is None:
            devices = None
        elif isinstance(device, (list, tuple, set)):
            devices = [str(d) for d in device]
        else:
            devices = [str(device)]
        self.model = model
        self.optimizer = optimizer
        self.devices = devices
        self.max_samples = max_samples
        self.check_leaks = check_leaks
        self.scan_existing = scan_existing
        self.trace = collections.deque(maxlen=max_trace_entries)
        self.tracker = None
        self.timeline = None
        self.leaks = None
        self.observer = None
        self.running = False
        self._final = None
        self.scalars = {}
        self._peaks = None
        self._duration = None

    # ------------------------------------------------------------------ lifecycle
    def start(self):
        """Start observing (``with prof:`` calls this)."""
        if self.running:
            raise RuntimeError("this MemoryProfiler is already running")
        if _RUNNING:
            raise RuntimeError("another MemoryProfiler is running; stop it first (profilers do not nest)")
        self.tracker = tracker = StorageTracker(self.devices)
        self.timeline = Timeline(self.max_samples)
        self.leaks = LeakChecker(tracker)
        self.observer = Observer(tracker, self.model, self.optimizer, on_step_end=self._step_end,
                                 before_backward=self._before_backward)
        self.trace.clear()
        self._final = None
        self.scalars = {}
        tracker.activate()
        _RUNNING.append(self)
        self.running = True
        try:
            self.observer.install()
            if self.scan_existing:
                _register_existing(tracker)
            self._peaks = views.watch_peaks()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        """Stop observing; the report stays available."""
        if not self.running:
            return
        try:
            if self.observer.installed:
                self.observer.sync()
            self._flush()
            self._final = self._snapshot_state()
        finally:
            self.observer.uninstall()
            self.tracker.deactivate()
            views.unwatch_peaks(self._peaks)
            if self in _RUNNING:
                _RUNNING.remove(self)
            self.running = False

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        if exc is not None and self.running and is_out_of_memory(exc):
            try:
                annotate_out_of_memory(exc, self)
            finally:
                self.stop()
            return False
        self.stop()
        return False

    # ------------------------------------------------------------------ step boundary
    def _step_end(self):
        tracker = self.tracker
        if self.check_leaks:
            self.leaks.end_of_step(tracker.step, self.observer.known_params())
        tracker.set_step(tracker.step + 1)
        self._flush()

    def _before_backward(self):
        if self.check_leaks and self.tracker.step > 0:
            self.leaks.before_backward(self.tracker.step, self.observer.known_params(),
                                       self.observer.param_names())

    def _flush(self):
        events = self.tracker.take_events()
        if events:
            self.timeline.feed(events, self.trace)

    def _snapshot_state(self):
        """What the report says about "now"."""
        tracker = self.tracker
        live = tracker.live_records()
        return {"current": dict(tracker.current), "live": [(r, r.cat) for r in live], "step": tracker.step,
                "time": tracker.now(), "views": views.collect(self._device_names(live), self._peaks),
                "module_types": dict(self.observer.module_types), "graph": self.observer.graph}

    def _device_names(self, live):
        names = {r.device for r in live} | {r.device for r, _ in self.timeline.peak_live}
        if self.devices:
            names |= {d for d in self.devices if ":" in d}
        return sorted(names)

    def add_scalar(self, tag, scalar_value, global_step=None):
        """Record one point of the curve ``tag`` (a loss, an accuracy) now, at ``global_step``
        (default: the optimizer steps completed so far), for the report's training curves."""
        if not self.running:
            raise RuntimeError("add_scalar records points while the MemoryProfiler runs")
        value = scalar_value.item() if hasattr(scalar_value, "item") else scalar_value
        step = self.tracker.step if global_step is None else int(global_step)
        self.scalars.setdefault(str(tag), []).append([self.tracker.now(), step, float(value)])

    # ------------------------------------------------------------------ results
    @property
    def step(self):
        """Completed optimizer steps so far."""
        return self.tracker.step if self.tracker is not None else 0

    def current(self):
        """Bytes per category right now."""
        return dict(self.tracker.current) if self.tracker is not None else {}

    def report(self):
        """The :class:`MemoryReport` (so far, if still running)."""
        if self.tracker is None:
            raise RuntimeError("the MemoryProfiler has not run yet")
        if self.running:
            self.observer.sync()
            self._flush()
            state = self._snapshot_state()
        else:
            state = self._final
        leaks = list(self.leaks.findings) if self.leaks is not None else []
        state = dict(state, scalars={tag: [list(p) for p in points] for tag, points in self.scalars.items()})
        return MemoryReport(self.timeline, state, leaks, self.tracker)

    def export_memory_snapshot(self, path):
        """Write the allocation history in the pickle format of PyTorch's memory visualizer
        (https://pytorch.org/memory_viz; ``torch.cuda._memory_viz``)."""
        from .snapshot import build_snapshot, write_snapshot
        if self.tracker is None:
            raise RuntimeError("the MemoryProfiler has not run yet")
        if self.running:
            self._flush()
            live = self.tracker.live_records()
        else:
            live = [r for r, _ in self._final["live"]]
        write_snapshot(build_snapshot(list(self.trace), live), path)
        return path


def _register_existing(tracker):
    """Register the storages of every tensor alive now (found through the garbage collector).

    Unreachable tensors (kept by reference cycles, such as an exception's traceback) are collected
    first: they are not alive, and their release at some later collection would otherwise show
    up inside the profile."""
    import gc
    from .._tensor import Tensor
    gc.collect()
    storage = tracker.storage
    for obj in gc.get_objects():
        if issubclass(type(obj), Tensor):    # type(), not isinstance: no __class__ properties run
            try:
                storage(obj)
            except Exception:   # a half-built tensor (no _data yet)
                pass
