"""``gputorch.backends.cudnn``: PyTorch's cuDNN switches, accepted with no effect.

gputorch does not use cuDNN. Convolutions, pooling, normalization and recurrent layers
run as gputorch's own ops: on CPU through NumPy, on CUDA through CuPy (cuBLAS matrix
products and the hand-written kernels in ``kernels/``), which are deterministic and need
no autotuning. So that programs which set these flags run unchanged, every flag can be
set (to a bool, as in PyTorch, else RuntimeError) and read back, and nothing else
changes:

* ``enabled`` (default True), ``benchmark`` (False), ``deterministic`` (False),
  ``allow_tf32`` (True), ``benchmark_limit`` (10);
* ``is_available()`` is False (cuDNN is never used), ``version()`` is None;
* ``flags(...)`` sets them for the duration of a ``with`` block.

Importing this module imports nothing beyond the standard library.
"""
import contextlib
import sys
import types

__all__ = ["is_available", "version", "is_acceptable", "flags", "enabled", "benchmark",
           "deterministic", "allow_tf32", "benchmark_limit"]

_BOOL_FLAGS = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}
_state = dict(_BOOL_FLAGS, benchmark_limit=10, fp32_precision="none")
_SETTER_NAMES = {"enabled": "set_enabled_cudnn", "benchmark": "set_benchmark_cudnn",
                 "deterministic": "set_deterministic_cudnn", "allow_tf32": "set_allow_tf32_cudnn"}


def is_available():
    """False: gputorch never uses cuDNN (its CUDA ops are CuPy and its own kernels)."""
    return False


def version():
    """None: no cuDNN library is loaded."""
    return None


def is_acceptable(tensor):
    """False: no tensor is ever handed to cuDNN here."""
    return False


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True,
          fp32_precision="none", depthwise_kernel="auto"):
    """Set the flags inside a ``with`` block and restore the previous values after it."""
    module = sys.modules[__name__]
    saved = dict(_state)
    try:
        module.enabled = enabled
        module.benchmark = benchmark
        module.benchmark_limit = benchmark_limit
        module.deterministic = deterministic
        module.allow_tf32 = allow_tf32
        module.fp32_precision = fp32_precision
        yield
    finally:
        _state.update(saved)


def _set(name, value):
    if name in _BOOL_FLAGS and type(value) is not bool:
        raise RuntimeError(f"{_SETTER_NAMES[name]} expects a bool, but got {type(value).__name__}")
    if name == "benchmark_limit" and (type(value) is not int or value < 0):
        raise RuntimeError(f"set_benchmark_limit_cudnn expects a non-negative int, but got {value!r}")
    _state[name] = value


class _CudnnFlagsModule(types.ModuleType):
    """This module's class: its flags are checked properties over ``_state``."""

    def __getattr__(self, name):
        if name in _state:
            return _state[name]
        raise AttributeError(f"module '{__name__}' has no attribute '{name}'")

    def __setattr__(self, name, value):
        if name in _state:
            _set(name, value)
        else:
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _CudnnFlagsModule
