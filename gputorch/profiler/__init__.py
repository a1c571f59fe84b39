"""``gputorch.profiler``: the memory profiler.

``MemoryProfiler`` attributes every tracked byte to a category (parameters, buffers, gradients,
optimizer state, activations, temporaries, other), a module, a phase and a step, with a
timeline, the peak, a leak check and an out-of-memory report; ``python -m gputorch.profiler
script.py`` runs a script under it. See ``profiler.py`` for the overview.
"""
from .categories import CATEGORIES
from .estimate import MemoryEstimate, estimate_memory
from .phases import PHASES
from .profiler import MemoryProfiler
from .report import MemoryReport

__all__ = ["MemoryProfiler", "MemoryReport", "CATEGORIES", "PHASES", "estimate_memory", "MemoryEstimate"]
