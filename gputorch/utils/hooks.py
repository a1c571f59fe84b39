"""``RemovableHandle``: what every hook registration returns."""
import itertools
import weakref

_next_id = itertools.count()


class RemovableHandle:
    """Removes the hook it was returned for from its registry (a dict keyed by handle id).

    Also a context manager: the hook is removed on exit.
    """

    __slots__ = ("id", "_registry_ref")

    def __init__(self, registry):
        self.id = next(_next_id)
        self._registry_ref = weakref.ref(registry) if _weakrefable(registry) else (lambda: registry)

    def remove(self):
        registry = self._registry_ref()
        if registry is not None:
            registry.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _weakrefable(obj):
    try:
        weakref.ref(obj)
        return True
    except TypeError:
        return False


def add_hook(registry, hook):
    """Insert ``hook`` into ``registry`` (a dict) and return its handle."""
    handle = RemovableHandle(registry)
    registry[handle.id] = hook
    return handle
