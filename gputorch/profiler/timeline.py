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


class Timeline:
    """Samples over time and the peak, built from tracker events."""

    def __init__(self, max_samples=100_000):
        self.max_samples = max_samples
        self.samples = []
        self.totals = dict.fromkeys(CATEGORIES, 0)
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

    def feed(self, events):
        """Replay a batch of events (in order)."""
        totals, state, samples = self.totals, self.state, self.samples
        cat_peaks = self.category_peaks
        undo = [None] * len(events)
        peak_at = act_at = -1
        coarse = len(samples) >= self.max_samples
        for i, ev in enumerate(events):
            kind = ev[0]
            if kind == ALLOC:
                rec = ev[2]
                cat = rec.cat0
                state[rec] = cat
                n = rec.nbytes
                totals[cat] += n
                self.total += n
                if totals[cat] > cat_peaks[cat]:
                    cat_peaks[cat] = totals[cat]
                    if cat == ACTIVATIONS:
                        act_at = i
            elif kind == FREE:
                rec = ev[2]
                old = state.pop(rec, None)
                if old is None:
                    continue
                undo[i] = old
                n = rec.nbytes
                totals[old] -= n
                self.total -= n
            elif kind == RECLASS:
                rec = ev[2]
                old = state.get(rec)
                new = ev[3]
                if old is None or old == new:
                    continue
                undo[i] = old
                state[rec] = new
                n = rec.nbytes
                totals[old] -= n
                totals[new] += n
                if totals[new] > cat_peaks[new]:
                    cat_peaks[new] = totals[new]
                    if new == ACTIVATIONS:
                        act_at = i
            elif kind == PHASE:
                self.phase = ev[2]
            else:
                self.step = ev[2]
            is_peak = self.total > self.peak_total
            if is_peak:
                self.peak_total = self.total
                self.peak_totals = dict(totals)
                self.peak_phase = self.phase
                self.peak_step = self.step
                self.peak_t = ev[1]
                peak_at = i
            if not coarse or is_peak or kind == PHASE or kind == STEP:
                sample = {"t": ev[1], "step": self.step, "phase": self.phase}
                sample.update(totals)
                samples.append(sample)
                if not coarse and len(samples) >= self.max_samples:
                    coarse = True
        if peak_at >= 0:
            self.peak_live = self._state_after(events, undo, peak_at)
        if act_at >= 0:
            self.activation_peak_live = self._state_after(events, undo, act_at)

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
