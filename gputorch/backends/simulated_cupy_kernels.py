"""The simulated CuPy's ``RawModule`` / ``RawKernel`` (tests only).

Kernels are compiled with g++ and run on the CPU by the execution harness
(``gputorch.cuda.harness``). On top of the harness's checks (argument types against the
kernel's C++ signature, launch configuration, barriers, warp masks, faults), a launch checks
what a GPU would reject or crash on: every array argument must be a simulated device array
on the *current* device (a NumPy host array of more than one element is a TypeError, as in
CuPy; a size-one NumPy array is passed by value, as in CuPy). Python scalars are converted as
CuPy converts them (``int`` -> ``int64``, ``float`` -> ``float64``) before the harness checks
them against the C++ parameter types, so a width mismatch is an error here. Grid, block and
dynamic shared memory limits are the harness's (CUDA's: grid x < 2^31, y/z <= 65535; block
x/y <= 1024, z <= 64, <= 1024 threads; <= 48 KiB dynamic shared memory unless
``max_dynamic_shared_size_bytes`` is raised).

The harness runs in fiber mode unless ``GPUTORCH_HARNESS_MODE=threads``.
"""
import sys

import numpy as np

from . import simulated_cupy_graph as _graph


def _scp():
    return sys.modules["gputorch.backends.simulated_cupy"]


class RawModule:
    """``cupy.RawModule(code=..., options=..., name_expressions=...)`` running on the CPU harness."""

    def __init__(self, code=None, path=None, options=(), backend="nvrtc", translate_cucomplex=False,
                 enable_cooperative_groups=False, name_expressions=None, jitify=False):
        from ..cuda.harness import RawModule as HarnessModule
        self._harness = HarnessModule(code=code, path=path, options=options, backend=backend,
                                      name_expressions=name_expressions)
        self.code = code
        self.options = tuple(options or ())
        self.name_expressions = tuple(name_expressions or ())
        self._harness.compile()  # like CuPy: compile errors surface here

    def get_function(self, name):
        return RawKernel._wrap(self._harness.get_function(name))


class RawKernel:
    """``cupy.RawKernel(code, name, options=...)`` running on the CPU harness."""

    def __init__(self, code, name, options=(), backend="nvrtc", translate_cucomplex=False,
                 enable_cooperative_groups=False, jitify=False):
        from ..cuda.harness import RawKernel as HarnessKernel
        self._kernel = HarnessKernel(code, name, options=options, backend=backend)
        self.code = code
        self.name = name
        self.options = tuple(options or ())

    @classmethod
    def _wrap(cls, kernel):
        self = cls.__new__(cls)
        self._kernel = kernel
        self.name = kernel.name
        self.code = kernel.module.code
        self.options = kernel.module.options
        return self

    @property
    def max_dynamic_shared_size_bytes(self):
        return self._kernel.max_dynamic_shared_size_bytes

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value):
        self._kernel.max_dynamic_shared_size_bytes = int(value)

    @property
    def attributes(self):
        return self._kernel.attributes

    def __call__(self, grid, block, args, *, shared_mem=0, stream=None, enable_cooperative_groups=False):
        if not isinstance(args, tuple):
            raise TypeError(f"kernel '{self.name}': args must be a tuple, got {type(args).__name__}")
        scp = _scp()
        current = scp.cuda.runtime.getDevice()
        checked = []
        for i, a in enumerate(args):
            if isinstance(a, scp.ndarray):
                if a._device_id != current:
                    raise ValueError(
                        f"kernel '{self.name}': argument {i} is an array on device {a._device_id}, but the kernel "
                        f"runs on the current device {current} (Array device must be same as the current device: "
                        f"array device = {a._device_id} while current = {current})")
                a = a._a  # the harness reads the simulated device memory: the NumPy array behind it
            elif isinstance(a, np.ndarray):
                if a.size != 1:
                    raise TypeError(
                        f"kernel '{self.name}': argument {i}: you are trying to pass a numpy.ndarray of shape "
                        f"{a.shape} as a kernel parameter. Only numpy.ndarrays of size one can be passed by value. "
                        f"If you meant to pass a pointer to __global__ memory, you need to pass a cupy.ndarray "
                        f"instead.")
                a = a.reshape(())[()]
            else:
                a = _as_kernel_scalar(self.name, i, a)
            checked.append(a)
        kernel, config = self._kernel, (grid, block, tuple(checked))
        _graph.record(self.name, lambda: kernel(*config, shared_mem=shared_mem))

    def __repr__(self):
        return f"<simulated RawKernel {self.name!r}>"


def _as_kernel_scalar(kernel, i, value):
    """What CuPy puts in a kernel's argument slot for a Python value: ``int`` (and ``bool``, a
    subclass of it) is an ``int64``, ``float`` a ``float64``, ``complex`` a ``complex128``; NumPy
    scalars keep their dtype; ``None`` is a null pointer. The harness then checks the slot's type
    against the kernel's C++ parameter: a width or type mismatch (an ``int64`` for an ``int``, a
    ``float64`` for a ``float``) is a TypeError here, where a GPU would read garbage."""
    if value is None or isinstance(value, np.generic):
        return value
    if isinstance(value, int):
        return np.int64(value)
    if isinstance(value, float):
        return np.float64(value)
    if isinstance(value, complex):
        return np.complex128(value)
    if isinstance(getattr(value, "ptr", None), int):  # a MemoryPointer
        return value
    raise TypeError(f"kernel '{kernel}': argument {i}: Unsupported type {type(value)}")


class CompileException(RuntimeError):
    pass


def install(cuda):
    """``cupy.cuda.compiler.CompileException`` / ``cupy.cuda.driver.CUDADriverError``: the harness's errors."""
    from ..cuda.harness import CompileError, LaunchError

    class compiler:
        CompileException = CompileError

    class driver:
        CUDADriverError = LaunchError

    cuda.compiler = compiler
    cuda.driver = driver
