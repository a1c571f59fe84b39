"""The storage registry: every storage that tensors use, its size, category, origin and lifetime.

A *storage* is the array that owns the memory behind a tensor's ``_data`` (views are followed
through ``.base`` to their owner, so a storage shared by views is counted once). Its bytes are
the owner array's logical bytes (numel x itemsize). A storage is *alive* until its owner array
is deallocated (seen through a weak reference, so tracking keeps nothing alive).

The tracker is told about tensors and roles by the profiler's hooks (``hooks.py``); it keeps

- ``live``: the storages alive now, with their current category and origin (module path at
  creation, creating op, step, phase);
- ``current``: bytes per category now;
- ``events``: what happened since the last :meth:`take_events` (allocations, frees, category
  changes, phase and step changes, with times). The timeline (``timeline.py``) replays them
  later, off the hot path, which also lets a few classifications be settled after the fact (a
  tensor that dies inside the module call that made it was a temporary; a tensor an optimizer
  made and did not keep in its state was not optimizer state).

Other array kinds (a shape-only ``meta`` device, say) plug in through ``owner_of`` and
``nbytes_of``: the functions that find a storage's owner array and its size.
"""
import sys
import weakref
from time import perf_counter

from .._tensor import Tensor
from ..autograd.grad_mode import GRAD_ENABLED as _GRAD_ENABLED
from .categories import ACTIVATIONS, CATEGORIES, OPTIMIZER_STATE, OTHER, RANK, TEMPORARIES
from .phases import BACKWARD, OPTIMIZER, OTHER_PHASE

__all__ = ["StorageTracker", "StorageRecord", "ModuleCall", "owner_of", "nbytes_of",
           "ALLOC", "FREE", "RECLASS", "PHASE", "STEP"]

# Event kinds: (ALLOC, t, rec) (FREE, t, rec) (RECLASS, t, rec, category) (PHASE, t, phase) (STEP, t, step)
ALLOC, FREE, RECLASS, PHASE, STEP = range(5)

# Functions between a public op and Tensor._make: skipped when naming the function that made a tensor.
_PLUMBING = frozenset({"_make", "_init_from", "apply", "_wrap", "<listcomp>", "<genexpr>", "apply_view",
                       "apply_inplace", "_copy_detached", "_detached_alias", "_alias_with_history",
                       "__new__", "_make_subclass", "_snapshot_saved_self", "inplace_on_view"})


def owner_of(array):
    """The array that owns ``array``'s memory: ``.base`` followed to its end (through NumPy's
    ``as_strided`` wrappers, which are not arrays but keep the array in their own ``.base``)."""
    base = array.base
    while base is not None:
        if getattr(base, "dtype", None) is None:
            inner = getattr(base, "base", None)
            if inner is None or getattr(inner, "dtype", None) is None:
                return array          # memory owned by a non-array object (bytes, mmap)
            base = inner
        array = base
        base = array.base
    return array


def nbytes_of(owner):
    """Logical bytes of an owner array: numel x itemsize (``nbytes`` of NumPy and CuPy arrays)."""
    return owner.nbytes


class ModuleCall:
    """One running module forward: its path and whether it is still running."""
    __slots__ = ("path", "active")

    def __init__(self, path):
        self.path = path
        self.active = True


class StorageRecord:
    """What the tracker knows about one storage.

    Set for every storage: ``rid`` (a serial number), ``key`` (id of the owner array), ``nbytes``,
    ``device`` (a string), ``shape`` (the owner's), ``dtype`` (its name), ``cat`` (category now),
    ``cat0`` (category at creation, as the timeline replays it), ``step``, ``phase`` and ``t``
    (when it was made), ``alive``. The rest keep the class defaults below unless they apply.
    """

    nreclass = 0          # category changes since creation
    module = None         # module path: where it was made (made by a backward: the module whose
                          # forward recorded the node), or its parameter's module
    call = None           # the ModuleCall running when it was made (until it is freed)
    op = None             # grad_fn name of the op that made it (found lazily)
    fn = None             # the function that made it
    tensor_ref = None     # weak reference to the first tensor on it
    owner_ref = None      # weak reference to the owner array, while tracked
    nsaved = 0            # SavedTensors holding it
    savers = None         # module paths of the ops that saved it (a tuple)
    saved_step = None     # the step it was last saved in
    param_name = None     # "fc1.weight", "fc1.weight.grad", "fc1.weight:exp_avg" for roles
    _dt = None

    @property
    def dtype(self):
        return str(self._dt).rsplit(".", 1)[-1]

    def op_name(self):
        """The op that made this storage: its tensor's grad_fn name when it had one, else the
        function that created it (``zeros_like``, ``linear`` under no_grad, ...)."""
        if self.op is None:
            ref = self.tensor_ref
            t = ref() if ref is not None else None
            fn = t._grad_fn if t is not None else None
            if fn is not None:
                self.op = type(fn).__name__
        return self.op if self.op is not None else (self.fn or "-")

    def describe(self):
        """A short human-readable description: shape, dtype, bytes, category, origin."""
        shape = "x".join(str(s) for s in self.shape) or "scalar"
        where = self.param_name or (self.module if self.module is not None else "<no module>")
        return f"{shape} {self.dtype} ({self.nbytes} B, {self.cat}) from {self.op_name()} in '{where}'"

    def label(self):
        """What to call it in a trace: its role's name ("fc1.weight:exp_avg") or the op that made it."""
        return self.param_name or self.op_name()

    def as_dict(self, category=None):
        return {"id": self.rid, "bytes": self.nbytes, "category": category or self.cat, "device": self.device,
                "shape": list(self.shape), "dtype": self.dtype, "module": self.module,
                "name": self.param_name, "op": self.op_name(), "step": self.step, "phase": self.phase}

    def __repr__(self):
        return f"<storage {self.rid}: {self.describe()}>"


class _OwnerRef(weakref.ref):
    __slots__ = ("rec",)


class _SavedRef(weakref.ref):
    __slots__ = ("recs",)


class StorageTracker:
    """The registry of storages (see the module docstring).

    Args:
        devices: None to track every device with memory (all but "meta"), or a collection of
            device strings ("cuda:0") and device types ("cuda", "meta") to track only those.
        owner_of, nbytes_of: how to find a storage's owner array and its bytes.
    """

    def __init__(self, devices=None, owner_of=owner_of, nbytes_of=nbytes_of):
        self.owner_of = owner_of
        self.nbytes_of = nbytes_of
        self._devices = None if devices is None else {str(d) for d in devices}
        self._device_ok = {}        # id(device) -> (tracked?, name, device)
        self.live = {}              # id(owner array) -> StorageRecord
        self.current = dict.fromkeys(CATEGORIES, 0)
        self.events = []
        self.communication = []      # marks of collectives: dicts with name, seq, bytes, start, end, step, phase
        self.phase = OTHER_PHASE
        self._new_category = OTHER  # the category of a storage made now (by phase)
        self.step = 0
        self.calls = []             # running module forwards, innermost last
        self.backward_module = None  # the module whose forward recorded the node backward is running
        self.backward_created = []  # storages made by backward passes, to settle at the end
        self.optimizer_created = []  # storages made by an optimizer step, to settle after it
        self.grad_created = []      # storages made with grad mode on (may carry a graph): leak check
        self.saved_records = []     # storages saved for backward (a record may repeat): leak check
        self._saved_refs = set()
        self._next_rid = 0
        self.t0 = perf_counter()
        self.fed_until = 0.0        # events up to this time have been taken by the timeline
        self.active = False
        self._freed_cb = self._freed
        self._unsaved_cb = self._unsaved

    # ------------------------------------------------------------------ registry
    def _device_info(self, device):
        info = self._device_ok.get(id(device))    # devices are interned: identity is cheap to hash
        if info is None:
            name = str(device)
            if self._devices is None:   # every device that has memory: meta tensors use none
                ok = device.type != "meta"
            else:
                ok = name in self._devices or device.type in self._devices
            info = self._device_ok[id(device)] = (ok, name, device)
        return info

    def storage(self, tensor):
        """The record of ``tensor``'s storage (registered now if new), or None if its device is
        not tracked."""
        data = tensor._data
        owner = data if data.base is None else self.owner_of(data)
        rec = self.live.get(id(owner))
        if rec is None:
            rec = self._register(owner, tensor)
        return rec

    def on_tensor(self, tensor):
        """The tensor-creation hook: register the storage of a new tensor if it is new."""
        data = tensor._data
        owner = data if data.base is None else self.owner_of(data)
        rec = self.live.get(id(owner))
        if rec is None:
            rec = self._register(owner, tensor)
            if rec is None:
                return
            if self.phase is not BACKWARD:     # (backward: the engine's own plumbing)
                rec.fn = _creator_name()
        if tensor.__class__ is not Tensor:
            self.on_subclass(tensor, rec)

    def on_subclass(self, tensor, rec):
        """A tensor of a subclass was made (``nn.Parameter``): set by the profiler."""

    def _register(self, owner, tensor, category=None):
        ok, device, _ = self._device_info(tensor._device)
        if not ok:
            return None
        rec = StorageRecord()
        self._next_rid += 1
        rec.rid = self._next_rid
        rec.key = key = id(owner)
        rec.nbytes = n = self.nbytes_of(owner)
        rec.device = device
        rec.shape = owner.shape
        rec._dt = tensor._dtype
        phase = self.phase
        if category is None:
            category = self._new_category
        rec.cat = rec.cat0 = category
        calls = self.calls
        if calls:
            call = rec.call = calls[-1]
            rec.module = call.path
        elif phase is BACKWARD:
            rec.module = self.backward_module
        rec.step = self.step
        rec.phase = phase
        rec.t = t = perf_counter() - self.t0
        if _GRAD_ENABLED.value:            # only then can it get a grad_fn (op name, leak check)
            rec.tensor_ref = weakref.ref(tensor)
            self.grad_created.append(rec)
        ref = _OwnerRef(owner, self._freed_cb)
        ref.rec = rec
        rec.owner_ref = ref
        rec.alive = True
        self.live[key] = rec
        self.current[category] += n
        self.events.append((ALLOC, t, rec))
        if phase is BACKWARD:
            self.backward_created.append(rec)
        elif phase is OPTIMIZER:
            self.optimizer_created.append(rec)
        return rec

    def _freed(self, ref):
        rec = ref.rec
        if not self.active or not rec.alive:
            return
        self.live.pop(rec.key, None)
        rec.alive = False
        cat = rec.cat
        self.current[cat] -= rec.nbytes
        call = rec.call
        if cat == OTHER and rec.nreclass == 0 and call is not None and call.active:
            rec.cat = rec.cat0 = TEMPORARIES   # died inside the module call that made it
        rec.owner_ref = None
        rec.call = None
        self.events.append((FREE, perf_counter() - self.t0, rec))

    # ------------------------------------------------------------------ classification
    def classify(self, rec, category):
        """Give ``rec`` the role ``category`` if that role takes precedence over its current one."""
        old = rec.cat
        if old is category or RANK[old] <= RANK[category]:
            return False
        self._move(rec, old, category)
        return True

    def assign(self, rec, category):
        """Like :meth:`classify`; a storage made since the timeline last replayed the events and
        not reclassified since takes the role from its creation on (``nn.Parameter(randn(...))``
        is a parameter from the start, not "other" for an instant)."""
        old = rec.cat
        if old is category or RANK[old] <= RANK[category]:
            return False
        if rec.nreclass == 0 and rec.t >= self.fed_until:
            self.settle(rec, category)
        else:
            self._move(rec, old, category)
        return True

    def reclass(self, rec, category):
        """Set ``rec``'s category (also to a weaker one: a role it has lost)."""
        if rec.cat != category:
            self._move(rec, rec.cat, category)

    def _move(self, rec, old, new):
        n = rec.nbytes
        current = self.current
        current[old] -= n
        current[new] += n
        rec.cat = new
        rec.nreclass += 1
        self.events.append((RECLASS, perf_counter() - self.t0, rec, new))

    def settle(self, rec, category):
        """Correct ``rec``'s category from its creation on (no event: the timeline has not replayed
        it yet). Only for a record whose category has not changed since it was made."""
        if rec.nreclass or rec.cat == category:
            return
        if rec.alive:
            self.current[rec.cat] -= rec.nbytes
            self.current[category] += rec.nbytes
        rec.cat = rec.cat0 = category

    # ------------------------------------------------------------------ saved tensors
    def on_saved(self, saved):
        """The SavedTensor hook: the storages it holds are activations while it lives."""
        t = saved.tensor
        if t is not None:
            tensors = (t,)
        else:
            packed = saved.packed
            if isinstance(packed, Tensor):
                tensors = (packed,)
            elif isinstance(packed, (tuple, list)):
                tensors = [p for p in packed if isinstance(p, Tensor)]
                if not tensors:
                    return
            else:
                return        # a handle (checkpointing) or None: nothing held
        calls = self.calls
        saver = calls[-1].path if calls else None
        recs = []
        for t in tensors:
            rec = self.storage(t)
            if rec is None:
                continue
            rec.nsaved += 1
            rec.saved_step = self.step
            savers = rec.savers
            if savers is None:
                rec.savers = (saver,)
            elif saver not in savers:
                rec.savers = savers + (saver,)
            if rec.op is None and t._grad_fn is not None:
                rec.op = type(t._grad_fn).__name__
            if rec.nsaved == 1:
                self.saved_records.append(rec)
            old = rec.cat
            if RANK[old] > RANK[ACTIVATIONS]:
                if rec.rid == self._next_rid and rec.nreclass == 0 and rec.t >= self.fed_until:
                    self.settle(rec, ACTIVATIONS)    # saved by the op that just made it
                else:
                    self._move(rec, old, ACTIVATIONS)
            recs.append(rec)
        if recs:
            ref = _SavedRef(saved, self._unsaved_cb)
            ref.recs = recs
            self._saved_refs.add(ref)

    def _unsaved(self, ref):
        self._saved_refs.discard(ref)
        if not self.active:
            return
        for rec in ref.recs:
            rec.nsaved -= 1
            if rec.nsaved == 0 and rec.alive and rec.cat == ACTIVATIONS:
                self._move(rec, ACTIVATIONS, OTHER)   # backward freed it, someone else keeps it

    # ------------------------------------------------------------------ phases and steps
    def set_phase(self, phase):
        if phase != self.phase:
            self.phase = phase
            self._new_category = TEMPORARIES if phase is BACKWARD else \
                OPTIMIZER_STATE if phase is OPTIMIZER else OTHER
            self.events.append((PHASE, perf_counter() - self.t0, phase))

    def set_step(self, step):
        self.step = step
        self.events.append((STEP, perf_counter() - self.t0, step))

    def end_backward(self):
        """Backward is over: what it made and is still alive is not a temporary."""
        for rec in self.backward_created:
            if rec.alive and rec.cat == TEMPORARIES:
                self._move(rec, TEMPORARIES, OTHER)
        self.backward_created = []

    def end_optimizer_step(self, state_records):
        """An optimizer step is over: settle what it made (kept in its state: optimizer state;
        kept elsewhere: other; dead already: a temporary)."""
        for rec in self.optimizer_created:
            if rec.cat0 != OPTIMIZER_STATE:
                continue
            if not rec.alive:
                self.settle(rec, TEMPORARIES)
            elif rec not in state_records:
                self.settle(rec, OTHER)
        self.optimizer_created = []

    def take_events(self):
        """The events since the last call (for the timeline)."""
        events, self.events = self.events, []
        self.fed_until = perf_counter() - self.t0
        return events

    # ------------------------------------------------------------------ queries
    def now(self):
        return perf_counter() - self.t0

    def live_records(self):
        return list(self.live.values())

    def activate(self):
        self.active = True

    def deactivate(self):
        """Stop listening: weak-reference callbacks become no-ops and the references are dropped."""
        self.active = False
        for rec in self.live.values():
            rec.owner_ref = None
        self._saved_refs.clear()


def _creator_name():
    """The name of the function that made the tensor being registered: the first public function
    (or operator) above the tensor plumbing and private helpers."""
    f = sys._getframe(2)      # 0: here, 1: on_tensor, 2: Tensor._make or _init_from
    first = None
    for _ in range(8):
        if f is None:
            break
        name = f.f_code.co_name
        if name not in _PLUMBING:
            if name != "forward" and (not name.startswith("_") or name.startswith("__")):
                return name
            if first is None:
                first = name
        f = f.f_back
    return first

