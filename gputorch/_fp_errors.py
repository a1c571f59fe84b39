"""NumPy's floating-point warnings, silenced while gputorch computes: PyTorch gives inf and NaN
without a word, so every op's forward runs inside :func:`quiet_errors` (the dispatcher enters it
once per op; code that computes on arrays outside an op enters it itself).
"""
import numpy as np

__all__ = ["quiet_errors", "STATE", "IGNORE_ALL"]

try:   # NumPy >= 2 keeps its error state in a context variable: setting it directly costs a
    # tenth of building an ``np.errstate`` on every op
    from numpy._core._ufunc_config import _extobj_contextvar as _ERROR_STATE, _make_extobj
    _IGNORE_ALL = _make_extobj(all="ignore")
except ImportError:   # NumPy 1.x
    _ERROR_STATE = None


class _QuietErrors:
    """``with``: NumPy's floating-point errors ignored inside, the caller's state restored after."""

    __slots__ = ("token",)

    def __enter__(self):
        self.token = _ERROR_STATE.set(_IGNORE_ALL)

    def __exit__(self, *exc):
        _ERROR_STATE.reset(self.token)


class _AlreadyQuiet:
    """``with`` that does nothing: the errors are already ignored (an op inside an op)."""

    __slots__ = ()

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        pass


_ALREADY_QUIET = _AlreadyQuiet()


def quiet_errors():
    """Silence NumPy's floating-point warnings (PyTorch gives inf/nan silently)."""
    if _ERROR_STATE is None:
        return np.errstate(all="ignore")
    if _ERROR_STATE.get() is _IGNORE_ALL:
        return _ALREADY_QUIET
    return _QuietErrors()


if _ERROR_STATE is not None:
    STATE, IGNORE_ALL = _ERROR_STATE, _IGNORE_ALL    # for the dispatcher's inline form of quiet_errors
else:   # NumPy 1.x: a context variable nothing reads; every op silences itself with np.errstate
    import contextvars
    STATE, IGNORE_ALL = contextvars.ContextVar("gputorch_unused_fp_state", default=None), object()
