"""The CUDA kernels' launch wrappers pointed at the CPU execution harness, for the kernel tests.

The wrappers are given a stand-in for CuPy whose ``RawModule`` is the harness's (optionally a
sanitized build), so no simulated device is needed; the tests skip where the harness's toolchain
is missing.
"""
import contextlib
import types

import pytest

from gputorch.cuda.kernels import _module


def harness_or_skip():
    """The harness module (``gputorch.cuda.harness``), or a skip saying why it cannot run here."""
    from gputorch.cuda import harness as h
    problem = h.toolchain_problem()
    if problem:
        pytest.skip(f"the CPU execution harness cannot run here: {problem}")
    return h


def shim(raw_module):
    """The CuPy stand-in the launch wrappers use: ``RawModule`` and device 0 as the current one."""
    return types.SimpleNamespace(RawModule=raw_module,
                                 cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(getDevice=lambda: 0)))


@contextlib.contextmanager
def kernels_on(raw_module=None):
    """Launch the kernels through ``raw_module`` (when given) within the block; restore on exit."""
    previous = _module._state["cupy"]
    if raw_module is not None:
        _module.use_cupy(shim(raw_module))
    try:
        yield
    finally:
        _module.use_cupy(previous)


@pytest.fixture(autouse=True, scope="module")
def harness():
    """Autouse, per module, in a test module that imports it: the kernels launched on the CPU
    execution harness (skipped where it cannot run); the fixture's value is the harness module."""
    h = harness_or_skip()
    with kernels_on(h.RawModule):
        yield h
