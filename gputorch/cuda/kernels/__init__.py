"""The CUDA backend's hand-written kernels: CUDA C sources in ``kernels/`` (one file per op
family), compiled with CuPy's ``RawModule`` once per process and device (CuPy caches the
binaries on disk), launched by the wrapper modules here.

- :func:`install` (called by the CUDA backend when it first finds CuPy) puts the kernel
  forwards into ``backend.overrides``: activations and their gradients, softmax/log_softmax,
  fused cross entropy, layer/RMS/batch norm, convolution through im2col/col2im, max/avg pooling,
  embedding backward, and the multi-tensor SGD and Adam updates. ``GPUTORCH_CUDA_KERNELS=0``
  leaves them out (every op then runs its generic CuPy path).
- :func:`precompile` compiles every kernel now and reports how long it took.
- :mod:`.nvrtc` checks that every kernel compiles for sm_70/80/90 without a GPU.

With the simulated CUDA device (``GPUTORCH_SIMULATE_CUDA=N``, tests only), ``RawModule`` is the
CPU execution harness's, so the same kernels run on the CPU.
"""
import os

from ._module import KernelCompileError, KernelLaunchError, function, precompile, use_cupy
from ._source import FAMILIES, KERNEL_DIR, load_all_families

__all__ = ["install", "precompile", "KernelCompileError", "KernelLaunchError", "FAMILIES", "KERNEL_DIR", "function",
           "enabled"]


def enabled():
    """Whether the kernels are switched on (``GPUTORCH_CUDA_KERNELS`` unset or not ``0``)."""
    return os.environ.get("GPUTORCH_CUDA_KERNELS", "1").strip().lower() not in ("0", "false", "no", "off")


def install(backend):
    """Fill ``backend.overrides`` with the kernel forwards (once CuPy is known); returns the number
    installed (0 when switched off or when the CuPy in use cannot compile raw kernels)."""
    cp = backend.xp
    if not enabled() or cp is None or not hasattr(cp, "RawModule"):
        return 0
    use_cupy(cp)
    load_all_families()
    from ._overrides import overrides
    table = overrides()
    backend.overrides.update(table)
    return len(table)
