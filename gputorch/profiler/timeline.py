"""Replaying the tracker's events: the timeline of bytes per category, and the peak.

The tracker records what happened (allocations, frees, category changes, phases, steps); the
:class:`Timeline` replays those events in batches (at every optimizer step and when a report is
made) into samples ``{"t", "step", "phase", <category>: bytes}``, one per change, and finds the
peak: the highest total of tracked bytes, with the storages alive at that moment and their
categories (for the breakdown by module, the largest tensors and the checkpointing advice).

After ``max_samples`` samples the timeline keeps one sample per phase or step change and one
per new peak, so a long run stays small.
"""
from .categories import ACTIVATIONS, CATEGORIES
from .phases import OTHER_PHASE
from .tracker import ALLOC, FREE, PHASE, RECLASS, STEP

__all__ = ["Timeline"]

_INDEX = {c: i for i, c in enumerate(CATEGORIES)}
_ACT = _INDEX[ACTIVATIONS]


class Timeline:
    """Samples over time and the peak, built from tracker events."""

    def __init__(self, max_samples=100_000):
        self.max_samples = max_samples
        self.samples = []            # (t, step, phase, bytes per category in CATEGORIES order...)
        self.totals = [0] * len(CATEGORIES)
        self.total = 0
        self.state = {}              # StorageRecord -> category, as replayed so far
        self.phase = OTHER_PHASE
        self.step = 0
        self.peak_total = -1
        self.peak_totals = dict.fromkeys(CATEGORIES, 0)
        self.peak_phase = OTHER_PHASE
        self.peak_step = 0
        self.peak_t = 0.0
        self.peak_live = []          # [(StorageRecord, category)] alive at the peak
        self.category_peaks = dict.fromkeys(CATEGORIES, 0)
        self.activation_peak_live = []   # alive when the activations were at their highest

    def feed(self, events, trace=None):
        """Replay a batch of events (in order). With ``trace`` (a list or deque), also append each
        allocation, free and category change to it as a plain tuple that keeps no record alive:
        ``(ALLOC, t, rid, nbytes, device, category, module, label, step, phase)``, ``(FREE, t, rid)``,
        ``(RECLASS, t, rid, category)`` (for the memory_viz snapshot)."""
        tot, state, samples = self.totals, self.state, self.samples
        keep = trace.append if trace is not None else None
        peaks = [self.category_peaks[c] for c in CATEGORIES]
        index = _INDEX
        undo = [None] * len(events)
        peak_at = act_at = -1
        total, peak_total, phase, step = self.total, self.peak_total, self.phase, self.step
        coarse = len(samples) >= self.max_samples
        limit = self.max_samples
        i = -1
        for ev in events:
            i += 1
            kind = ev[0]
            if kind == ALLOC:
                rec = ev[2]
                cat = rec.cat0
                state[rec] = cat
                n = rec.nbytes
                if keep is not None:
                    keep((ALLOC, ev[1], rec.rid, n, rec.device, cat, rec.module,
                          rec.param_name or rec.op or rec.fn or "-", rec.step, rec.phase))
                c = index[cat]
                v = tot[c] = tot[c] + n
                total += n
                if v > peaks[c]:
                    peaks[c] = v
                    if c == _ACT:
                        act_at = i
            elif kind == FREE:
                rec = ev[2]
                old = state.pop(rec, None)
                if old is None:
                    continue
                undo[i] = old
                n = rec.nbytes
                tot[index[old]] -= n
                total -= n
                if keep is not None:
                    keep((FREE, ev[1], rec.rid))
            elif kind == RECLASS:
                rec = ev[2]
                old = state.get(rec)
                new = ev[3]
                if old is None or old == new:
                    continue
                undo[i] = old
                state[rec] = new
                n = rec.nbytes
                if keep is not None:
                    keep((RECLASS, ev[1], rec.rid, new))
                tot[index[old]] -= n
                c = index[new]
                v = tot[c] = tot[c] + n
                if v > peaks[c]:
                    peaks[c] = v
                    if c == _ACT:
                        act_at = i
            elif kind == PHASE:
                phase = ev[2]
            else:
                step = ev[2]
            if total > peak_total:
                peak_total = total
                self.peak_totals = dict(zip(CATEGORIES, tot))
                self.peak_phase = phase
                self.peak_step = step
                self.peak_t = ev[1]
                peak_at = i
                samples.append((ev[1], step, phase, *tot))
            elif not coarse or kind == PHASE or kind == STEP:
                samples.append((ev[1], step, phase, *tot))
            if not coarse and len(samples) >= limit:
                coarse = True
        self.total, self.peak_total, self.phase, self.step = total, peak_total, phase, step
        self.category_peaks = dict(zip(CATEGORIES, peaks))
        if peak_at >= 0:
            self.peak_live = self._state_after(events, undo, peak_at)
        if act_at >= 0:
            self.activation_peak_live = self._state_after(events, undo, act_at)

    def sample_dicts(self):
        """The samples as ``{"t", "step", "phase", <category>: bytes}`` dicts."""
        keys = ("t", "step", "phase") + CATEGORIES
        return [dict(zip(keys, row)) for row in self.samples]

    def _state_after(self, events, undo, index):
        """The storages alive right after ``events[index]``: the current state with the later
        events of the batch undone."""
        live = dict(self.state)
        for j in range(len(events) - 1, index, -1):
            ev = events[j]
            kind = ev[0]
            if kind == ALLOC:
                live.pop(ev[2], None)
            elif kind == FREE or kind == RECLASS:
                if undo[j] is not None:
                    live[ev[2]] = undo[j]
        return list(live.items())
