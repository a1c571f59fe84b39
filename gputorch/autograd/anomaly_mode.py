"""Anomaly detection: ``detect_anomaly`` and ``set_detect_anomaly``.

When on, every graph node records the stack of the forward call that created
it, and the engine raises as soon as a backward function returns NaN, naming
that node and printing the forward stack.
"""
ENABLED = [False]
CHECK_NAN = [True]

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled"]


def is_anomaly_enabled():
    return ENABLED[0]


def is_anomaly_check_nan_enabled():
    return CHECK_NAN[0]


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        import warnings
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)
        self._prev = (ENABLED[0], CHECK_NAN[0])
        ENABLED[0], CHECK_NAN[0] = True, self.check_nan

    def __exit__(self, *exc):
        ENABLED[0], CHECK_NAN[0] = self._prev
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Set anomaly detection on or off (takes effect immediately; also a context manager)."""

    def __init__(self, mode, check_nan=True):
        self._prev = (ENABLED[0], CHECK_NAN[0])
        ENABLED[0], CHECK_NAN[0] = bool(mode), check_nan

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        ENABLED[0], CHECK_NAN[0] = self._prev
        return False
