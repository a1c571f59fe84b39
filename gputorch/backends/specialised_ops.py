"""How a backend finds the generic ops it specialises, without importing the layers above it.

A backend may replace the forward of an op defined higher up (a graph-node class in
``nn.functional``, an optimizer's array-level update in ``optim``; see ``base.Backend.overrides``).
Importing those modules from a backend would make the lower layer look up, pull nn and optim
into every import of the backend, and tie the two together in an import cycle. Instead the
backend names the op by its module and name, and :func:`loaded_op` looks the name up among the
modules already imported.

Backends are created on a device's first use (``device._backend``), after ``import gputorch`` has
imported every layer, so every op of this checkout is found then. A name that is not found (an op
renamed or removed, or a layer not imported) gives None: that override is skipped and the op runs
its generic forward, as on any other backend.
"""
import sys

__all__ = ["loaded_op"]


def loaded_op(module, name):
    """``module.name`` (``module`` an absolute dotted name) if that module has been imported,
    else None. Never imports anything."""
    return getattr(sys.modules.get(module), name, None)
