"""Process-wide switches of torch's top level for debugging and reproducibility: deterministic
algorithms, anomaly detection (autograd's own switch, ``autograd.anomaly_mode``), warn-always and
flush-denormal.

gputorch's kernels are deterministic already (no atomics-based reductions), so the deterministic
switch changes no result here; it is kept and reported as PyTorch does, so that programs that set
it and read it back run. Flushing denormals to zero is a CPU mode that NumPy does not expose:
``set_flush_denormal(True)`` reports that it is not supported (False), as PyTorch does on CPUs
without it.
"""
from .autograd import anomaly_mode

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_anomaly_enabled", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_warn_always", "is_warn_always_enabled", "set_flush_denormal"]

_DETERMINISTIC = {"enabled": False, "warn_only": False}
_WARN_ALWAYS = [False]
_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Ask for deterministic algorithms (``warn_only``: warn instead of raising where an op has none;
    every gputorch op is deterministic)."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    _DETERMINISTIC["enabled"], _DETERMINISTIC["warn_only"] = mode, bool(warn_only) and mode


def are_deterministic_algorithms_enabled():
    return _DETERMINISTIC["enabled"]


def is_deterministic_algorithms_warn_only_enabled():
    return _DETERMINISTIC["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """The deterministic switch as one value: ``"default"``/0 (off), ``"warn"``/1 (warn only),
    ``"error"``/2 (on)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """0 (off), 1 (warn only) or 2 (on)."""
    if not _DETERMINISTIC["enabled"]:
        return 0
    return 1 if _DETERMINISTIC["warn_only"] else 2


def set_anomaly_enabled(enabled, check_nan=True):
    """Turn autograd's anomaly detection on or off (``autograd.set_detect_anomaly`` without the
    context manager)."""
    anomaly_mode.ENABLED[0], anomaly_mode.CHECK_NAN[0] = bool(enabled), bool(check_nan)


def is_anomaly_enabled():
    return anomaly_mode.is_anomaly_enabled()


def is_anomaly_check_nan_enabled():
    return anomaly_mode.is_anomaly_check_nan_enabled()


def set_warn_always(b):
    """Whether warnings PyTorch gives once per process should be given every time."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _WARN_ALWAYS[0] = b


def is_warn_always_enabled():
    return _WARN_ALWAYS[0]


def set_flush_denormal(mode):
    """Flushing denormals is not supported (NumPy keeps them): False for ``mode=True``; True for
    ``mode=False``, which is the state already."""
    return not mode
