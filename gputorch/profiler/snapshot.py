"""Export to PyTorch's memory visualizer (https://pytorch.org/memory_viz).

The file is a pickle of the dictionary ``torch.cuda.memory._snapshot()`` returns::

    {"segments": [segment, ...], "device_traces": [[trace entry, ...] per device]}

- trace entries: ``{"action": "alloc" | "free_requested" | "free_completed" | "snapshot", "addr",
  "size", "stream": 0, "frames": [...], "category", "time_us"}``, one alloc and one free per
  storage (and a free + alloc at the same address when its category changes, so the plot's
  colours follow the categories over time); ``size`` is the storage's logical bytes;
- segments: one per device, ``{"device", "address", "total_size", "stream", "segment_type",
  "segment_pool_id", "allocated_size", "active_size", "requested_size", "blocks"}`` whose blocks
  (``{"address", "size", "requested_size", "state", "frames"}``) are the storages alive at the
  export, placed at their addresses, with inactive blocks between them;
- frames name the module (``filename``), the op (``name``) and the step (``line``).

Addresses are the profiler's own (a first-fit allocator replayed over the trace, blocks rounded
up to 512 bytes like CUDA's caching allocator), not device pointers: they only need to be
consistent within the file. Device index N of the file is ``cuda:N``; the CPU comes after the GPUs.
"""
import pickle

from .tracker import ALLOC, FREE, RECLASS

__all__ = ["build_snapshot", "write_snapshot"]

_BLOCK = 512
_SEGMENT = 2 << 20


def _rounded(n):
    return max(_BLOCK, (n + _BLOCK - 1) // _BLOCK * _BLOCK)


class _AddressSpace:
    """First-fit placement of blocks in one device's address range (free ranges coalesce)."""

    def __init__(self, base):
        self.base = base
        self.end = base          # high-water mark
        self.free = []           # sorted [(start, size)]

    def alloc(self, size):
        for i, (start, length) in enumerate(self.free):
            if length >= size:
                if length == size:
                    del self.free[i]
                else:
                    self.free[i] = (start + size, length - size)
                return start
        addr = self.end
        self.end += size
        return addr

    def release(self, addr, size):
        free = self.free
        lo, hi = 0, len(free)
        while lo < hi:
            mid = (lo + hi) // 2
            if free[mid][0] < addr:
                lo = mid + 1
            else:
                hi = mid
        free.insert(lo, (addr, size))
        if lo + 1 < len(free) and free[lo][0] + free[lo][1] == free[lo + 1][0]:
            free[lo] = (addr, free[lo][1] + free[lo + 1][1])
            del free[lo + 1]
        if lo > 0 and free[lo - 1][0] + free[lo - 1][1] == free[lo][0]:
            free[lo - 1] = (free[lo - 1][0], free[lo - 1][1] + free[lo][1])
            del free[lo]


def _device_indices(names):
    cuda = sorted({int(n.split(":")[1]) for n in names if n.startswith("cuda:")})
    other = sorted(n for n in names if not n.startswith("cuda:"))
    first_other = (cuda[-1] + 1) if cuda else 0
    index = {f"cuda:{i}": i for i in cuda}
    for k, n in enumerate(other):
        index[n] = first_other + k
    return index


def _frames(info, category):
    nbytes, device, module, label, step, phase = info
    module = "<no module>" if module is None else (module or "<model>")
    return [{"filename": module, "line": step, "name": f"{label} [{category}]"},
            {"filename": f"step {step}", "line": step, "name": phase}]


def build_snapshot(trace, live):
    """The snapshot dictionary from the profiler's trace (plain tuples, oldest first, see
    ``Timeline.feed``) and the storage records alive now."""
    info = {}                                   # rid -> (nbytes, device, module, label, step, phase)
    first_cat = {}                              # rid -> category when the window starts
    for rec in live:
        info[rec.rid] = (rec.nbytes, rec.device, rec.module, rec.label(), rec.step, rec.phase)
    allocated = set()
    for ev in trace:
        if ev[0] == ALLOC:
            info[ev[2]] = (ev[3], ev[4], ev[6], ev[7], ev[8], ev[9])
            allocated.add(ev[2])
            first_cat.setdefault(ev[2], ev[5])
    last_cat = {rec.rid: rec.cat for rec in live}
    index = _device_indices({v[1] for v in info.values()})
    n_devices = (max(index.values()) + 1) if index else 1
    spaces = {d: _AddressSpace((d + 1) << 36) for d in range(n_devices)}
    traces = [[] for _ in range(n_devices)]
    where = {}       # rid -> (device index, address, block size, category)

    # Storages alive before the window (freed in it, or alive now) hold their blocks from the start.
    before = {ev[2] for ev in trace if ev[0] != ALLOC and ev[2] not in allocated} | (set(last_cat) - allocated)
    for rid in sorted(before):
        if rid not in info:
            continue
        nbytes, device = info[rid][0], info[rid][1]
        d = index[device]
        size = _rounded(nbytes)
        where[rid] = (d, spaces[d].alloc(size), size, last_cat.get(rid, "other"))

    def entry(action, rid, d, addr, category, t):
        return {"action": action, "addr": addr, "size": info[rid][0], "stream": 0,
                "frames": _frames(info[rid], category), "category": category, "time_us": int(t * 1e6),
                "device": d}

    for ev in trace:
        kind, t, rid = ev[0], ev[1], ev[2]
        if kind == ALLOC:
            d = index[info[rid][1]]
            size = _rounded(info[rid][0])
            addr = spaces[d].alloc(size)
            where[rid] = (d, addr, size, ev[5])
            traces[d].append(entry("alloc", rid, d, addr, ev[5], t))
        elif kind == FREE:
            placed = where.pop(rid, None)
            if placed is None:
                continue
            d, addr, size, category = placed
            traces[d].append(entry("free_requested", rid, d, addr, category, t))
            traces[d].append(entry("free_completed", rid, d, addr, category, t))
            spaces[d].release(addr, size)
        elif kind == RECLASS:
            placed = where.get(rid)
            if placed is None or placed[3] == ev[3]:
                continue
            d, addr, size, category = placed
            traces[d].append(entry("free_requested", rid, d, addr, category, t))
            traces[d].append(entry("free_completed", rid, d, addr, category, t))
            traces[d].append(entry("alloc", rid, d, addr, ev[3], t))
            where[rid] = (d, addr, size, ev[3])
    t_end = trace[-1][1] if trace else 0.0
    for d, events in enumerate(traces):
        # PyTorch's viewer expects an "unknown" category among those it sees.
        events.append({"action": "snapshot", "addr": 0, "size": 0, "stream": 0, "frames": [],
                       "category": "unknown", "time_us": int(t_end * 1e6), "device": d})

    segments = []
    for d, space in spaces.items():
        blocks_here = sorted((addr, size, rid, cat) for rid, (dd, addr, size, cat) in where.items() if dd == d)
        total = max(_SEGMENT, (space.end - space.base + _SEGMENT - 1) // _SEGMENT * _SEGMENT)
        blocks, cursor, allocated_bytes, requested = [], space.base, 0, 0
        for addr, size, rid, cat in blocks_here:
            if addr > cursor:
                blocks.append({"address": cursor, "size": addr - cursor, "requested_size": 0,
                               "state": "inactive", "frames": []})
            blocks.append({"address": addr, "size": size, "requested_size": info[rid][0],
                           "state": "active_allocated", "frames": _frames(info[rid], cat)})
            allocated_bytes += size
            requested += info[rid][0]
            cursor = addr + size
        end = space.base + total
        if cursor < end:
            blocks.append({"address": cursor, "size": end - cursor, "requested_size": 0, "state": "inactive",
                           "frames": []})
        segments.append({"device": d, "address": space.base, "total_size": total, "stream": 0,
                         "segment_type": "large", "segment_pool_id": (0, 0), "allocated_size": allocated_bytes,
                         "active_size": allocated_bytes, "requested_size": requested, "blocks": blocks})
    return {"segments": segments, "device_traces": traces,
            "allocator_settings": {"note": "gputorch memory profiler: tracked storages, synthetic addresses"}}


def write_snapshot(snapshot, path):
    # Protocol 4: the visualizer's own unpickler reads protocols 2 to 4 (and only plain data).
    with open(path, "wb") as f:
        pickle.dump(snapshot, f, protocol=4)
