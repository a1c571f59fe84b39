"""CPU execution harness for CUDA kernels: run unchanged ``kernels/*.cu`` on the CPU, in tests.

Test support, not a backend: it compiles CUDA C sources with g++ (C++20) against a header of
CUDA built-ins (``cuda_runtime_shim.h``) and runs launches on the CPU with
``cupy.RawKernel``'s launch API, so kernels can be checked against NumPy on machines without
a GPU. The simulated CuPy (``GPUTORCH_SIMULATE_CUDA=N``) launches its ``RawModule`` kernels
through it. Needs g++ (``GPUTORCH_HARNESS_CXX``) and the CUDA toolkit's headers
(``cuda_fp16.h``; found under ``CUDA_PATH``/``CUDA_HOME``, ``/usr/local/cuda`` or
``GPUTORCH_HARNESS_CUDA_INCLUDE``); ``toolchain_problem()`` says what is missing.

Usage
-----
::

    import numpy as np
    from gputorch.cuda.harness import RawModule

    mod = RawModule(code=source, options=("-std=c++17",),
                    name_expressions=["softmax_rows<float, 256>"], filename="kernels/softmax.cu")
    k = mod.get_function("softmax_rows<float, 256>")      # or an extern "C" kernel's name
    k((rows,), (256,), (x, y, np.int64(cols)), shared_mem=256 * 4)   # NumPy arrays as device memory

* ``grid``/``block``: an int or a tuple of up to 3 ints; arguments: arrays (their data
  pointer), ``None``, NumPy scalars of exactly the C++ parameter type (``np.int32`` for
  ``int``, ``np.float32`` for ``float``, ``np.int64`` for ``long long``...), checked against
  the compiled signature: a mismatch is a TypeError naming kernel, parameter and both types.
  Python ints are accepted for integer parameters (range-checked), Python floats only for
  ``double`` (CuPy passes them as int64/float64).
* Launch errors (``LaunchError``, naming kernel, block and thread): invalid configurations
  (empty grid, too many threads, more than ``kernel.max_dynamic_shared_size_bytes`` of
  dynamic shared memory, beyond ``__launch_bounds__``), illegal memory accesses (SIGSEGV in
  kernel code), dynamic shared memory overruns (the launch's ``shared_mem`` bytes are placed
  flush against an inaccessible page), a ``__syncthreads`` not reached by every thread of
  the block (or at different lines), warp operations whose mask names lanes that do not
  exist (a full-mask shuffle in a partial warp), lanes that have exited, or not the calling
  lane, deadlocks (every thread waits and none can proceed), failed device ``assert``,
  ``__trap()``. Compile errors (``CompileError``) name the kernel file and line (the
  ``filename`` keyword, or a ``#line 1 "file"`` directive at the top of the source).
* Shared memory (``__shared__`` and ``extern __shared__``) is filled with 0xff bytes at the
  start of every block: reading a value that no thread wrote gives NaN (float, double,
  half) or -1, so the result is detectably wrong.
* ``mode="fibers"`` (default): blocks run one after another, the threads of a block as
  cooperative fibers on the calling thread (hand-written x86-64 context switch; ucontext
  elsewhere) switching only at synchronisation points: fast and deterministic.
  ``mode="threads"``: one OS thread per CUDA thread (150-200x slower); what the sanitizers
  need. ``GPUTORCH_HARNESS_MODE`` sets the default.
* ``sanitizer="address"|"thread"|"undefined"``: the module is built with that sanitizer in
  thread mode and every launch runs in a subprocess that preloads the sanitizer runtime;
  arrays are copied there and back, and a report raises ``SanitizerError`` (see
  ``sanitizer.py``; ``sanitizer_problem(name)`` says whether it can run here).
  ThreadSanitizer sees exactly CUDA's happens-before edges (barriers, warp operations), so a
  missing ``__syncthreads`` between a shared-memory write and another thread's read is a
  reported race.
* ``blocks=[...]`` runs only some blocks of the grid, and ``virtual_array`` gives arrays of
  more than 2^31 elements whose memory is committed only where touched: together they check
  64-bit index math (see ``virtual_memory.py``).
* Compiled modules are cached in ``~/.cache/gputorch/harness`` (``GPUTORCH_HARNESS_CACHE``),
  keyed by source, options and harness version; safe across concurrent processes.

Measured on the development machine (x86-64, g++ 12, ``-O2``), fiber mode: a 64x256
elementwise launch ~1 ms, a 64x256 shared-memory block reduction ~7 ms, a 64-row softmax
with 256 threads and 8 barriers per row ~13 ms, a warp-shuffle reduction ~5 ms; the
ucontext fallback is ~20x slower than the hand-written switch; thread mode ~150-200x slower
than fibers. Compiling a kernel file takes 1.5-4.5 s (once; then cached).

What the harness does not model: blocks running concurrently (a race between blocks is not
seen; blocks run in index order), memory consistency beyond sequential consistency (a
missing ``__threadfence`` goes unnoticed), spin-waits on plain memory in fiber mode (a fiber
runs until it synchronises: a ``while (flag == 0);`` on another thread's store never ends;
a failed ``atomicCAS`` and ``__nanosleep`` do yield), cooperative groups, textures,
``__constant__`` memory set from the host, and the GPU's floating-point differences (FMA
contraction is off; ``__expf`` and friends are the accurate functions).
"""
from .compiler import CompileError, HarnessError, toolchain_problem
from .launcher import LaunchError, RawKernel, RawModule
from .sanitizer import SanitizerError, sanitizer_problem
from .virtual_memory import virtual_array

__all__ = ["RawModule", "RawKernel", "HarnessError", "CompileError", "LaunchError", "SanitizerError",
           "toolchain_problem", "sanitizer_problem", "virtual_array"]
