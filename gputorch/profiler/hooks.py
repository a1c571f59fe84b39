"""How the profiler observes the framework: hooks only, all removed when it stops.

Installed while a :class:`~gputorch.profiler.MemoryProfiler` runs (nothing in the core imports
the profiler; with it off, each hook point costs one check of an empty list):

- ``gputorch._tensor.CREATION_HOOKS``: every new Tensor (its storage is registered if new);
- ``gputorch.autograd.node.SAVE_HOOKS``: every tensor saved for backward (activations);
- ``gputorch.autograd.engine.RUN_HOOKS``: backward passes begin and end (phase "backward");
- ``gputorch.autograd.engine.GRAPH_HOOKS`` and ``NODE_HOOKS``: the graph a backward pass runs (the
  snapshot drawn by ``MemoryReport.graph()``) and each node as it runs (what its backward allocates
  is charged to the module whose forward recorded it; see ``autograd_graph.py``);
- global module forward pre/post hooks (phase "forward", the module stack, module paths);
- global module parameter/buffer/submodule registration hooks (the module map is rebuilt);
- global optimizer step pre/post hooks (phase "optimizer", steps, optimizer state);
- a post-accumulate-grad hook on each known parameter (its ``.grad`` is a gradient at once);
- ``gputorch.nn.parallel._reducer.BUCKET_HOOKS``: DistributedDataParallel's gradient buckets
  (communication memory);
- ``gputorch.distributed.work.COMM_HOOKS``: collectives posted and completed (timeline marks).

Module paths come from the model given to the profiler (``""`` is its root) or, without one,
from the first module called outside any other module; modules called outside the model are
roots of their own, named ``"<ClassName>"``.
"""
import weakref
from bisect import bisect_right

from .. import _tensor
from .._tensor import Tensor
from ..autograd import engine, node
from ..autograd.node import AccumulateGrad
from ..autograd.grad_mode import GRAD_ENABLED as _GRAD_ENABLED
from ..distributed import work as comm_work
from ..nn.modules import module as nn_module
from ..nn.parallel import _reducer as ddp_reducer
from ..nn.parameter import Parameter
from ..optim import optimizer as optim_base
from .autograd_graph import ModuleMarks, capture_graph
from .categories import ACTIVATIONS, BUFFERS, COMMUNICATION, GRADIENTS, OPTIMIZER_STATE, OTHER, PARAMETERS, RANK
from .phases import BACKWARD, FORWARD, OPTIMIZER, OTHER_PHASE
from .tracker import ModuleCall

__all__ = ["Observer"]


def _join(prefix, name):
    if not prefix:
        return name
    return f"{prefix}.{name}" if name else prefix


class _GradHook:
    """The post-accumulate-grad hook put on parameters; copying a parameter shares it."""
    __slots__ = ("observer",)

    def __init__(self, observer):
        self.observer = observer

    def __call__(self, param):
        obs = self.observer
        if obs.installed:
            obs.on_grad(param)

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self


class _ModulePaths:
    """``{module: path}`` by identity, without keeping modules alive (a module's id can be reused
    once it is gone, so each entry also holds a weak reference to check)."""

    def __init__(self):
        self._d = {}

    def get(self, module, default=None):
        entry = self._d.get(id(module))
        if entry is None or entry[0]() is not module:
            return default
        return entry[1]

    def __setitem__(self, module, path):
        self._d[id(module)] = (weakref.ref(module), path)


class Observer:
    """Keeps the tracker informed: phases, module stack, roles of storages, steps."""

    def __init__(self, tracker, model=None, optimizer=None, on_step_end=None, before_backward=None):
        self.tracker = tracker
        self.roots = []                                 # [(module, path prefix)]
        self.paths = _ModulePaths()                     # module -> path
        self.module_types = {}                          # path -> class name of its module
        self.marks = ModuleMarks()                      # which module recorded each graph node
        self.graph = None                               # the fullest graph seen (autograd_graph.py)
        self._graph_activations = 0                     # activation bytes alive when it was captured
        self._step_seq = None                           # graph sequence number at the last step end
        self.params = []                                # [(param, module path, full name)]
        self.param_info = {}                            # id(param) -> (module path, full name)
        self.buffers = []                               # [(module, attribute, module path, full name)]
        self.optimizers = []
        self.counted = optimizer                        # the optimizer whose steps are counted
        self.roles = {}                                 # StorageRecord -> role from the last sync
        self.installed = False
        self.in_step = False
        self.backward_seen = False                      # a backward ran in the current step
        self.on_step_end = on_step_end
        self.before_backward = before_backward
        self._depth = 0
        self._dirty = True
        self._layout = None
        self._state_records = set()
        self._handles = []
        self._grad_handles = {}                         # id(param) -> (param, handle)
        self._comm_open = {}                            # id(work) -> its communication mark
        self._grad_hook = _GradHook(self)
        if model is not None:
            self.roots.append((model, ""))
        if optimizer is not None:
            self.optimizers.append(optimizer)

    # ------------------------------------------------------------------ install
    def install(self):
        tr = self.tracker
        _tensor.CREATION_HOOKS.append(tr.on_tensor)
        node.SAVE_HOOKS.append(tr.on_saved)
        engine.RUN_HOOKS.append(self.on_backward)
        engine.GRAPH_HOOKS.append(self.on_graph)
        engine.NODE_HOOKS.append(self.on_node)
        ddp_reducer.BUCKET_HOOKS.append(self.on_bucket)
        comm_work.COMM_HOOKS.append(self.on_comm)
        for buffer in list(ddp_reducer.BUCKET_BUFFERS.values()):
            self.on_bucket(buffer)
        self._handles = [
            nn_module.register_module_forward_pre_hook(self.pre_forward),
            nn_module.register_module_forward_hook(self.post_forward, always_call=True),
            nn_module.register_module_parameter_registration_hook(self._structure_changed),
            nn_module.register_module_buffer_registration_hook(self._structure_changed),
            nn_module.register_module_module_registration_hook(self._structure_changed),
            optim_base.register_optimizer_step_pre_hook(self.pre_step),
            optim_base.register_optimizer_step_post_hook(self.post_step),
        ]
        tr.on_subclass = self.on_subclass
        self.installed = True
        self.sync()

    def uninstall(self):
        self.installed = False
        _remove(_tensor.CREATION_HOOKS, self.tracker.on_tensor)
        _remove(node.SAVE_HOOKS, self.tracker.on_saved)
        _remove(engine.RUN_HOOKS, self.on_backward)
        _remove(engine.GRAPH_HOOKS, self.on_graph)
        _remove(engine.NODE_HOOKS, self.on_node)
        _remove(ddp_reducer.BUCKET_HOOKS, self.on_bucket)
        _remove(comm_work.COMM_HOOKS, self.on_comm)
        for h in self._handles:
            h.remove()
        self._handles = []
        for param, handle in self._grad_handles.values():
            handle.remove()
        self._grad_handles = {}

    def on_comm(self, work, event):
        """A collective or send/recv was posted ("start") or completed ("end"): a timeline mark."""
        tr = self.tracker
        now = tr.now()
        if event == "start":
            mark = {"name": work.name, "seq": work.seq, "bytes": work.nbytes, "start": now, "end": None,
                    "step": tr.step, "phase": tr.phase}
            tr.communication.append(mark)
            self._comm_open[id(work)] = mark
        else:
            mark = self._comm_open.pop(id(work), None)
            if mark is not None:
                mark["end"] = now

    def on_bucket(self, buffer):
        """A DistributedDataParallel gradient bucket: communication memory."""
        rec = self.tracker.storage(buffer)
        if rec is not None:
            self.tracker.assign(rec, COMMUNICATION)

    # ------------------------------------------------------------------ module map and roles
    def _structure_changed(self, *args):
        self._dirty = True

    def _rebuild(self):
        self._dirty = False
        paths = self.paths
        params, info, buffers = [], {}, []
        for root, prefix in self.roots:
            for name, m in root.named_modules():
                mpath = paths.get(m)
                if mpath is None:
                    mpath = paths[m] = _join(prefix, name)
                self.module_types[mpath] = type(m).__name__
                for attr, p in m._parameters.items():
                    if p is not None and id(p) not in info:
                        full = _join(mpath, attr)
                        info[id(p)] = (mpath, full)
                        params.append((p, mpath, full))
                for attr, b in m._buffers.items():
                    if b is not None:
                        buffers.append((m, attr, mpath, _join(mpath, attr)))
        for opt in self.optimizers:
            for gi, group in enumerate(opt.param_groups):
                for pi, p in enumerate(group["params"]):
                    if id(p) not in info:
                        full = f"<{type(opt).__name__} group {gi} param {pi}>"
                        info[id(p)] = (None, full)
                        params.append((p, None, full))
        self.params, self.param_info, self.buffers = params, info, buffers
        for p, _, _ in params:
            if id(p) not in self._grad_handles and p._requires_grad and p._grad_fn is None:
                self._grad_handles[id(p)] = (p, p.register_post_accumulate_grad_hook(self._grad_hook))

    def _assign(self, rec, role, module, name, roles):
        if rec.cat is not role and RANK[role] < RANK[rec.cat]:
            self.tracker.assign(rec, role)
        if rec.cat is role:
            rec.module = module
            rec.param_name = name
        prev = roles.get(rec)
        if prev is None or RANK[role] < RANK[prev]:
            roles[rec] = role

    def sync(self):
        """Find the current storages of parameters, buffers, gradients and optimizer state;
        storages that lost their role become "other". Returns the optimizer-state records."""
        if self._dirty:
            self._rebuild()
        storage = self.tracker.storage
        roles = {}
        for p, mpath, name in self.params:
            rec = storage(p)
            if rec is not None:
                self._assign(rec, PARAMETERS, mpath, name, roles)
            g = p._grad
            if g is not None:
                rec = storage(g)
                if rec is not None:
                    self._assign(rec, GRADIENTS, mpath, name + ".grad", roles)
        for m, attr, mpath, name in self.buffers:
            b = m._buffers.get(attr)
            if b is not None:
                rec = storage(b)
                if rec is not None:
                    self._assign(rec, BUFFERS, mpath, name, roles)
        state_records = set()
        info = self.param_info
        for opt in self.optimizers:
            for p, st in opt.state.items():
                if not isinstance(st, dict):
                    continue
                mpath, name = info.get(id(p), (None, "?"))
                for key, value in st.items():
                    if isinstance(value, Tensor):
                        rec = storage(value)
                        if rec is not None:
                            self._assign(rec, OPTIMIZER_STATE, mpath, f"{name}:{key}", roles)
                            state_records.add(rec)
        tr = self.tracker
        for rec, role in self.roles.items():
            if rec not in roles and rec.alive and rec.cat == role:
                tr.reclass(rec, OTHER)
        self.roles = roles
        self._layout = self._current_layout()
        self._state_records = state_records
        return state_records

    def _current_layout(self):
        """Which arrays the parameters and buffers are on now (a cheap way to see a swap)."""
        layout = [id(p._data) for p, _, _ in self.params]
        layout += [id(m._buffers.get(a)) for m, a, _, _ in self.buffers]
        return layout

    def sync_if_changed(self):
        """:meth:`sync` unless nothing it looks at can have changed since the last one (no new module
        or optimizer, no parameter or buffer on a new array, no tensor made by the optimizer step
        still alive); returns the optimizer-state records."""
        if self._dirty or self._current_layout() != self._layout or \
                any(rec.alive for rec in self.tracker.optimizer_created):
            return self.sync()
        return self._state_records

    def param_names(self):
        return {id(p): name for p, _, name in self.params}

    def known_params(self):
        return [p for p, _, _ in self.params]

    def path_of(self, module):
        path = self.paths.get(module)
        if path is None:
            path = self._discover(module)
        return path

    def _discover(self, module):
        calls = self.tracker.calls
        self._rebuild()
        path = self.paths.get(module)
        if path is not None:
            return path
        if calls:           # a submodule made on the fly: named after its class, under its caller
            path = self.paths[module] = _join(calls[-1].path, f"<{type(module).__name__}>")
            self.module_types[path] = type(module).__name__
            return path
        taken = {prefix for _, prefix in self.roots}
        if "" not in taken:
            prefix = ""
        else:
            base = f"<{type(module).__name__}>"
            prefix, n = base, 2
            while prefix in taken:
                prefix, n = f"{base}#{n}", n + 1
        self.roots.append((module, prefix))
        self._rebuild()
        self.sync()
        return self.paths.get(module, prefix)

    # ------------------------------------------------------------------ hooks
    def on_subclass(self, tensor, rec):
        if isinstance(tensor, Parameter):
            self.tracker.assign(rec, PARAMETERS)
            self._dirty = True

    def on_grad(self, param):
        g = param._grad
        if g is None:
            return
        rec = self.tracker.storage(g)
        if rec is None or rec.cat is GRADIENTS:      # accumulated into an existing .grad
            return
        mpath, name = self.param_info.get(id(param), (None, "?"))
        self._assign(rec, GRADIENTS, mpath, name + ".grad", self.roles)

    def pre_forward(self, module, args):
        tr = self.tracker
        entry = self.paths._d.get(id(module))     # (inlined _ModulePaths.get: runs for every module call)
        if entry is not None and entry[0]() is module:
            path = entry[1]
        else:
            path = self._discover(module)
        calls = tr.calls
        if not calls and tr.phase is not FORWARD and tr.phase is not BACKWARD:
            if self._dirty:          # (other changes are found after the optimizer step)
                self.sync()
            tr.set_phase(FORWARD)
        calls.append(ModuleCall(path))
        if _GRAD_ENABLED.value:          # (no nodes are recorded without grad mode: no mark needed)
            self.marks.mark(path)

    def post_forward(self, module, args, output):
        calls = self.tracker.calls
        if calls:
            calls.pop().active = False
            if _GRAD_ENABLED.value:
                self.marks.mark(calls[-1].path if calls else None)

    def on_graph(self, roots):
        """A backward pass starts: describe its graph, and keep it if it holds the most so far (outer
        passes only: a backward run inside one, as reentrant checkpointing does, is part of it)."""
        if self._depth != 1:
            return
        held = self.tracker.current[ACTIVATIONS]     # what all graphs hold now: only a new high is walked
        if self.graph is not None and held <= self._graph_activations:
            return
        self.graph = capture_graph(roots, self.tracker, self.marks, self.param_names())
        self._graph_activations = held

    def on_node(self, node):
        """A node's backward is about to run: what it allocates belongs to its forward's module
        (``ModuleMarks.module_of``, inlined: this runs for every node)."""
        if type(node) is AccumulateGrad:
            self.tracker.backward_module = None
            return
        marks = self.marks
        i = bisect_right(marks.seqs, node._sequence_nr)
        self.tracker.backward_module = marks.paths[i - 1] if i else None

    def on_backward(self, begin):
        tr = self.tracker
        if begin:
            self._depth += 1
            if self._depth == 1:
                if not self.backward_seen:
                    self.backward_seen = True
                    if self.before_backward is not None:
                        self.before_backward()
                tr.set_phase(BACKWARD)
        else:
            self._depth -= 1
            if self._depth == 0:      # gradients were classified as they were accumulated
                tr.backward_module = None
                tr.end_backward()
                tr.set_phase(self._resting_phase())

    def _resting_phase(self):
        tr = self.tracker
        return FORWARD if tr.calls else OPTIMIZER if self.in_step else OTHER_PHASE

    def pre_step(self, opt, args, kwargs):
        if opt not in self.optimizers:
            self.optimizers.append(opt)
            self._dirty = True
        if self.counted is None:
            self.counted = opt
        self.in_step = True
        self.tracker.set_phase(OPTIMIZER)

    def post_step(self, opt, args, kwargs):
        tr = self.tracker
        state_records = self.sync_if_changed()
        tr.end_optimizer_step(state_records)
        self.in_step = False
        tr.set_phase(self._resting_phase())
        if opt is self.counted:
            if self._step_seq is not None:      # graphs older than the last step are gone
                self.marks.forget_before(self._step_seq)
            self._step_seq = node.next_sequence_nr()
            if self.on_step_end is not None:
                self.on_step_end()
            self.backward_seen = False


def _remove(lst, item):
    for i, x in enumerate(lst):
        if x == item:
            del lst[i]
            return
