"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

As in PyTorch the modes are thread-local: ``with no_grad():`` in one thread leaves graph
recording on in the others (serving threads, DataLoader threads). Each flag is the ``value``
attribute of a ``threading.local`` object, which the dispatcher reads with one attribute
lookup. Each mode works as a context manager and as a decorator.
"""
import functools
import inspect
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled"]

class ThreadLocalFlag(threading.local):
    """A flag whose ``value`` is per thread; every new thread starts from ``default``."""

    def __init__(self, default):
        self.value = default


GRAD_ENABLED = ThreadLocalFlag(True)
INFERENCE_MODE = ThreadLocalFlag(False)


def is_grad_enabled():
    return GRAD_ENABLED.value


def is_inference_mode_enabled():
    return INFERENCE_MODE.value


class _GradModeContext:
    """Base: subclasses set ``_enter_value``; usable as ``with`` and as a decorator."""

    _enter_value = None

    def __enter__(self):
        self._prev = GRAD_ENABLED.value
        GRAD_ENABLED.value = self._enter_value
        return None

    def __exit__(self, *exc):
        GRAD_ENABLED.value = self._prev
        return False

    def clone(self):
        return self.__class__()

    def __call__(self, fn):
        if inspect.isclass(fn):
            raise TypeError(f"{type(self).__name__} can decorate functions, not classes")
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                # The mode holds while the generator runs, not while it is suspended.
                gen = fn(*args, **kwargs)
                try:
                    with self.clone():
                        value = gen.send(None)
                    while True:
                        try:
                            sent = yield value
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as exc:
                            with self.clone():
                                value = gen.throw(exc)
                        else:
                            with self.clone():
                                value = gen.send(sent)
                except StopIteration as stop:
                    return stop.value
            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradModeContext):
    """Disable graph recording: results of ops never require grad."""
    _enter_value = False

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)  # used as @no_grad without parentheses


class enable_grad(_GradModeContext):
    """Re-enable graph recording inside a ``no_grad`` region."""
    _enter_value = True

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class set_grad_enabled(_GradModeContext):
    """Set grad mode on or off; takes effect on construction, like PyTorch."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled expects a bool, got {type(mode).__name__}")
        self._prev = GRAD_ENABLED.value
        self._enter_value = mode
        GRAD_ENABLED.value = mode

    def __enter__(self):
        return None

    def __call__(self, fn):
        GRAD_ENABLED.value = self._prev  # as a decorator it must not change the mode now
        return super().__call__(fn)

    def clone(self):
        return set_grad_enabled(self._enter_value)


class inference_mode(_GradModeContext):
    """Like ``no_grad`` (gputorch has no separate inference tensors; see the README)."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as @inference_mode without parentheses

    def __init__(self, mode=True):
        self.mode = mode
        self._enter_value = not mode

    def __enter__(self):
        self._prev_inf = INFERENCE_MODE.value
        INFERENCE_MODE.value = self.mode
        return super().__enter__()

    def __exit__(self, *exc):
        INFERENCE_MODE.value = self._prev_inf
        return super().__exit__(*exc)

    def clone(self):
        return inference_mode(self.mode)
