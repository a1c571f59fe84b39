"""Replaying another backend's specialised forwards on the meta device.

A memory estimate replays a training step on the meta device, and the tensors a step makes depend
on which forwards run. The CUDA backend replaces many op forwards and backend hooks with kernels
of its own (``backend.overrides``): a fused norm backward makes no Tensor-op intermediates, a
fused cross entropy gradient no softmax temporaries, fused dropout keeps no mask. A replay of the
generic ops therefore overstates a CUDA step (by 30-47% for the small convolutional networks of the
tests).

Inside :func:`imitating` the meta device runs ``backend``'s overrides instead of the generic
forwards, on meta arrays: each kernel forward computes the shapes of what it allocates through
``meta_xp`` exactly as it would through CuPy, and makes and saves the same tensors; its kernel
launches do nothing (a meta array's address is 0, and the kernels are neither compiled nor run).
The meta device's own overrides (shape-only forwards of ops that read values) keep precedence.
"""
import contextlib
import sys
import types

__all__ = ["imitating", "inert_kernel_launches"]

# The hand-written kernels' launcher (``gputorch.cuda.kernels._module``): loaded by the CUDA
# backend only, so looked up among the imported modules rather than imported here.
_LAUNCHER = "gputorch.cuda.kernels._module"
INERT_DEVICE = "meta"


class _InertModule:
    """A compiled-module stand-in whose kernels accept any launch and do nothing."""

    def __init__(self, code=None, options=(), name_expressions=(), **kwargs):
        self.names = tuple(name_expressions)

    def get_function(self, name):
        return _inert_launch


def _inert_launch(grid, block, args, shared_mem=0):
    """A kernel launch replayed shape-only: the outputs were allocated by the caller; nothing runs."""


# What the launcher asks of CuPy: ``RawModule`` and the current device, here a device of its own
# so that the launcher's cache of compiled kernels keeps the real devices' kernels apart.
_INERT_CUPY = types.SimpleNamespace(
    RawModule=_InertModule,
    cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(getDevice=lambda: INERT_DEVICE)))


@contextlib.contextmanager
def inert_kernel_launches():
    """Within: the hand-written kernels launch nothing (when the CUDA backend has loaded them)."""
    launcher = sys.modules.get(_LAUNCHER)
    if launcher is None:
        yield
        return
    state = launcher._state
    previous = state["cupy"]
    state["cupy"] = _INERT_CUPY
    try:
        yield
    finally:
        state["cupy"] = previous


@contextlib.contextmanager
def imitating(backend):
    """Within: ops on the meta device run ``backend``'s overrides (see the module docstring).

    ``backend`` is the backend whose step is replayed (``device.backend``); the CPU backend and
    the meta backend itself have nothing to imitate. Not reentrant across threads: the meta
    backend's table of overrides is shared."""
    from .meta import BACKEND as meta_backend     # made on the meta device's first use, not here
    table = meta_backend.overrides
    borrowed = {key: fn for key, fn in backend.overrides.items() if key not in table}
    if backend is meta_backend or not borrowed:
        yield
        return
    table.update(borrowed)
    try:
        with inert_kernel_launches():
            yield
    finally:
        for key in borrowed:
            table.pop(key, None)
