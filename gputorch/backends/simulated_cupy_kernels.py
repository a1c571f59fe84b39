"""The simulated CuPy's ``RawModule`` / ``RawKernel`` (tests only).

Kernels are compiled with g++ and run on the CPU by the execution harness
(``gputorch.cuda.harness``). On top of the harness's checks (argument types against the
kernel's C++ signature, launch configuration, barriers, warp masks, faults), a launch checks
what a GPU would reject or crash on: every array argument must be a simulated device array
on the *current* device (a NumPy host array of more than one element is a TypeError, as in
CuPy; a size-one NumPy array is passed by value, as in CuPy).

The harness runs in fiber mode unless ``GPUTORCH_HARNESS_MODE=threads``.
"""
import sys

import numpy as np


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
            elif isinstance(a, np.ndarray):
                if a.size != 1:
                    raise TypeError(
                        f"kernel '{self.name}': argument {i}: you are trying to pass a numpy.ndarray of shape "
                        f"{a.shape} as a kernel parameter. Only numpy.ndarrays of size one can be passed by value. "
                        f"If you meant to pass a pointer to __global__ memory, you need to pass a cupy.ndarray "
                        f"instead.")
                a = a.reshape(())[()]
            checked.append(a)
        self._kernel(grid, block, tuple(checked), shared_mem=shared_mem)

    def __repr__(self):
        return f"<simulated RawKernel {self.name!r}>"


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
