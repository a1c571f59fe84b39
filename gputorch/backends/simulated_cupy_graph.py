"""Stream capture and CUDA graphs on the simulated device (tests only).

Models CuPy's API over CUDA stream capture:

* ``Stream.begin_capture(mode=None)`` / ``Stream.end_capture() -> cuda.Graph`` /
  ``Stream.is_capturing()``; ``Graph.launch(stream=None)``, ``Graph.upload(stream=None)`` and
  ``Graph.debug_dot_str()``. Capturing on the legacy default stream is a RuntimeError, as CuPy's
  ``begin_capture`` raises.
* While the *current* stream is capturing, device work is recorded, **not run** (as on a GPU):
  each kernel (element-wise op, reduction, RawKernel launch, copy, memset) becomes a graph node
  that closes over the same simulated device buffers. An op's fresh outputs are allocated at
  capture time and filled with garbage (NaN for floats, all-ones bits for integers, True for
  booleans) so that a program reading them before a replay sees junk, as it would on a GPU; what
  the op would have written into existing buffers (``out=``, indexing assignment, kernels) is
  undone. ``Graph.launch`` re-runs the nodes in order on the buffers' current contents, so a
  replay equals an eager run of the same work.
* A host-to-device copy of more than one element during capture is a RuntimeError (see
  :func:`host_to_device`: on a GPU the replay would read a recycled staging buffer); a 0-d value
  is a ``fill`` kernel with the value baked in, as in CuPy.
* What CUDA and CuPy refuse during capture, this refuses the same way: a stream or device
  synchronisation (``CUDARuntimeError`` ``cudaErrorStreamCaptureUnsupported``, and the capture is
  invalidated, so ``end_capture`` raises ``cudaErrorStreamCaptureInvalidated``); querying the
  capturing stream (``done``) invalidates it too; a device-to-host copy (``get``, ``item``,
  ``bool(a)``, printing) or an op whose output size depends on the data (``nonzero``, boolean
  mask indexing) is a RuntimeError saying the stream is capturing; cuBLAS, cuSOLVER and cuRAND
  calls are ``NotImplementedError`` naming the library (CuPy issue 6290); work on the legacy
  default stream while a blocking stream captures is ``cudaErrorStreamCaptureImplicit``.
* ``cuda.using_allocator(allocator)``: arrays created within take their memory from
  ``allocator(size)`` (a ``MemoryPool().malloc``); the returned pointer owns the buffer (keeps it
  alive), which is how a graph keeps the memory its nodes use.

:data:`counters` counts the work the simulated device runs eagerly (``kernels``, ``memcpy``) and
the graph launches (``graph_launches``; the nodes a launch replays are not counted as kernels),
for ``bench/cuda_graphs.py``.
"""
import sys
import warnings

import numpy as np

__all__ = ["counters", "reset_counters", "run", "host_sync", "library_call", "Graph"]

counters = {"kernels": 0, "memcpy": 0, "graph_launches": 0}


def reset_counters():
    for k in counters:
        counters[k] = 0


def _scp():
    return sys.modules["gputorch.backends.simulated_cupy"]


class _Capture:
    """One capture sequence in progress on ``stream``."""

    def __init__(self, stream, mode):
        self.stream = stream
        self.mode = mode
        self.nodes = []
        self.invalid = None     # why CUDA invalidated the sequence, if it did


_state = {"capture": None, "allocator": None}

# CuPy functions that call a CUDA library CuPy refuses to use while capturing.
_BLAS = {"matmul", "dot", "vdot", "inner", "tensordot", "einsum"}
_SOLVER = {"cholesky", "qr", "svd", "eigh", "eigvalsh", "eig", "eigvals", "inv", "pinv", "solve", "lstsq", "det",
           "slogdet", "matrix_rank", "matrix_power", "tensorinv", "tensorsolve", "cond"}
# ... and functions whose output size depends on the data (CuPy synchronises to learn it).
_SIZE_FROM_DATA = {"nonzero", "flatnonzero", "argwhere", "unique", "unique_all", "unique_counts",
                   "unique_inverse", "unique_values", "extract", "compress", "intersect1d", "union1d",
                   "setdiff1d", "setxor1d", "trim_zeros"}
# ... and those that only allocate (no kernel).
_NO_KERNEL = {"empty", "empty_like"}


def _runtime_error(text):
    return _scp().CUDARuntimeError(text)


def capture():
    """The capture in progress, if any (on whichever stream)."""
    return _state["capture"]


def _active():
    """The capture that the work about to be queued joins: the one on the current stream. Work on
    the legacy default stream while a *blocking* stream captures is an implicit dependency CUDA
    refuses (and it invalidates the capture)."""
    cap = _state["capture"]
    if cap is None:
        return None
    stream = _scp()._memory.get_current_stream()
    if stream.ptr == cap.stream.ptr:
        return cap
    if stream.ptr == 0 and not cap.stream.non_blocking:
        cap.invalid = cap.invalid or "cudaErrorStreamCaptureImplicit"
        raise _runtime_error("cudaErrorStreamCaptureImplicit: operation would make the legacy stream depend on "
                             "a capturing blocking stream")
    return None


def library_call(name):
    """NotImplementedError, as CuPy raises, for a cuBLAS/cuSOLVER/cuRAND call while capturing."""
    if _state["capture"] is None:
        return
    base = name.rsplit(".", 1)[-1]
    if ".random." in name:
        lib = "cuRAND"
    elif ".linalg." in name and base in _SOLVER:
        lib = "cuSOLVER"
    elif base in _BLAS:
        lib = "cuBLAS"
    else:
        if base in _SIZE_FROM_DATA and _active() is not None:
            host_sync(name)
        return
    if _active() is not None:
        raise NotImplementedError(f"{name}: {lib} is not supported during CUDA stream capture in CuPy (CuPy "
                                  f"issue 6290); the current stream is capturing")


def host_sync(what):
    """A device-to-host transfer (or anything waiting for the device's results) during capture:
    CuPy refuses it with a RuntimeError (the capture itself stays valid)."""
    if _state["capture"] is not None and _active() is not None:
        raise RuntimeError(f"{what}: the current stream is capturing a CUDA graph, so the device cannot be "
                           f"synchronized and no data can be copied to the host (nothing has run yet)")


def host_to_device(what, host):
    """A copy of host data to the device while the current stream captures. A 0-d value is CuPy's
    ``fill`` (a kernel with the value as its argument: capturable, the value baked into the graph).
    Anything larger is refused: CuPy copies it through a pinned staging buffer that it recycles
    once the copy looks done, so a replay would copy whatever that buffer holds by then (or, from
    pageable memory, CUDA refuses the copy outright). Device tables must be made before capture."""
    if _state["capture"] is not None and np.ndim(host) != 0 and _active() is not None:
        raise RuntimeError(f"{what}: copying host data (shape {np.shape(host)}) to the device while the current "
                           f"stream is capturing a CUDA graph is not supported: a replay would read a recycled "
                           f"staging buffer; copy it to the device before the capture")


def synchronize_stream(stream):
    """``Stream.synchronize`` / ``Device.synchronize``: not permitted while ``stream`` (None: any
    stream) is capturing; it invalidates the capture."""
    cap = _state["capture"]
    if cap is not None and (stream is None or stream.ptr == cap.stream.ptr or stream.ptr == 0):
        cap.invalid = cap.invalid or "cudaErrorStreamCaptureUnsupported"
        raise _runtime_error("cudaErrorStreamCaptureUnsupported: operation not permitted when stream is capturing")


def query_stream(stream):
    """``Stream.done`` of a capturing stream: CUDA answers with an error that invalidates the capture."""
    cap = _state["capture"]
    if cap is not None and stream.ptr == cap.stream.ptr:
        cap.invalid = cap.invalid or "cudaErrorStreamCaptureUnsupported"


# ---------------------------------------------------------------- running or recording device work
def _root(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _flat(result, found):
    if isinstance(result, (tuple, list)):
        for r in result:
            _flat(r, found)
    else:
        found.append(result)
    return found


def _as_arrays(result):
    """NumPy scalars as 0-d arrays (they become device arrays, which a replay must write into)."""
    if isinstance(result, np.generic):
        return np.asarray(result)
    if isinstance(result, tuple):
        return tuple(_as_arrays(r) for r in result)
    if isinstance(result, list):
        return [_as_arrays(r) for r in result]
    return result


def _poison(a):
    """Garbage in a buffer that capture allocated but did not fill."""
    with np.errstate(all="ignore"):
        if a.dtype.kind in "fc":
            a[...] = np.nan
        elif a.dtype.kind == "b":
            a[...] = True
        elif a.dtype.kind in "iu":
            a[...] = np.array(-1).astype(a.dtype)


def run(name, compute, arrays, writes=False, kind="kernels"):
    """Run (or, while the current stream captures, record) one piece of device work.

    ``compute()`` does the work on the NumPy arrays behind the simulated device arrays ``arrays``
    and returns NumPy results. ``writes``: it writes into existing buffers (``out=``, assignment,
    a kernel), so it is device work even when it returns nothing new. A result that is only a
    view of an input is no work at all."""
    cap = _active() if _state["capture"] is not None else None
    roots = {id(_root(a._a)): _root(a._a) for a in arrays}
    if cap is None:
        result = _as_arrays(compute())
        if writes or any(isinstance(r, np.ndarray) and id(_root(r)) not in roots for r in _flat(result, [])):
            counters[kind] += 1
        return result
    if cap.invalid:
        raise _runtime_error(f"cudaErrorStreamCaptureInvalidated: operation failed due to a previous error "
                             f"during capture ({cap.invalid})")
    saved = [(r, r.copy()) for r in roots.values()]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = _as_arrays(compute())
    for r, s in saved:   # capture does not run the work: undo what it wrote
        np.copyto(r, s)
    flat = _flat(result, [])
    fresh = [i for i, r in enumerate(flat) if isinstance(r, np.ndarray) and id(_root(r)) not in roots]
    if name.rsplit(".", 1)[-1] in _NO_KERNEL or not (fresh or writes):
        return result
    targets = [flat[i] for i in fresh]
    for t in targets:
        _poison(t)

    def replay():
        with np.errstate(all="ignore"):
            out = _flat(_as_arrays(compute()), [])
        for i, t in zip(fresh, targets):
            np.copyto(t, out[i], casting="unsafe")

    cap.nodes.append((name, kind, replay))
    return result


def record(name, launch, kind="kernels"):
    """A RawKernel launch: run it now, or record it without running it while capturing."""
    cap = _active() if _state["capture"] is not None else None
    if cap is None:
        counters[kind] += 1
        launch()
        return
    if cap.invalid:
        raise _runtime_error("cudaErrorStreamCaptureInvalidated: operation failed due to a previous error during "
                             f"capture ({cap.invalid})")
    cap.nodes.append((name, kind, launch))


# ---------------------------------------------------------------- the stream methods and the graph
def begin_capture(stream, mode=None):
    if stream.ptr in (0, 1):
        raise RuntimeError("cannot capture on the default (legacy) stream")
    if _state["capture"] is not None:
        raise _runtime_error("cudaErrorIllegalState: the simulated device captures one stream at a time")
    _state["capture"] = _Capture(stream, mode)


def end_capture(stream):
    cap = _state["capture"]
    if cap is None or cap.stream.ptr != stream.ptr:
        raise _runtime_error("cudaErrorIllegalState: operation not permitted when stream is not capturing")
    _state["capture"] = None
    if cap.invalid:
        raise _runtime_error("cudaErrorStreamCaptureInvalidated: operation failed due to a previous error during "
                             f"capture ({cap.invalid})")
    return Graph(cap.nodes)


def is_capturing(stream):
    cap = _state["capture"]
    if cap is None:
        return False
    if stream.ptr == 0 and not cap.stream.non_blocking:
        raise _runtime_error("cudaErrorStreamCaptureImplicit: operation would make the legacy stream depend on a "
                             "capturing blocking stream")
    return stream.ptr == cap.stream.ptr


class Graph:
    """``cupy.cuda.Graph``: an executable graph of the captured work."""

    def __init__(self, nodes):
        self._nodes = list(nodes)

    def launch(self, stream=None):
        """Run the captured work, in capture order, on the buffers it was captured on."""
        if _state["capture"] is not None and _active() is not None:
            raise NotImplementedError("the simulated device cannot capture a graph launch into another graph")
        counters["graph_launches"] += 1
        for _name, _kind, replay in self._nodes:
            replay()

    def upload(self, stream=None):
        pass

    def debug_dot_str(self, flags=0):
        lines = ["digraph simulated_cuda_graph {"]
        for i, (name, kind, _) in enumerate(self._nodes):
            lines.append(f'  n{i} [label="{kind}: {name}"];')
            if i:
                lines.append(f"  n{i - 1} -> n{i};")
        lines.append("}")
        return "\n".join(lines)

    @property
    def num_nodes(self):
        """The number of captured nodes (not a CuPy attribute; for tests and the bench)."""
        return len(self._nodes)


# ---------------------------------------------------------------- allocators
class _Using:
    def __init__(self, allocator):
        self.allocator = allocator

    def __enter__(self):
        self.previous = _state["allocator"]
        _state["allocator"] = self.allocator
        return self

    def __exit__(self, *exc):
        _state["allocator"] = self.previous
        return False


def using_allocator(allocator=None):
    """``cupy.cuda.using_allocator``: arrays created in the block take memory from ``allocator``."""
    return _Using(allocator)


def allocated(root):
    """Called for every new simulated buffer: an allocator in use owns it from now on."""
    allocator = _state["allocator"]
    if allocator is not None:
        pointer = allocator(max(int(root.nbytes), 1))
        owned = getattr(pointer, "_owned", None)
        if owned is not None:
            owned.append(root)


class PooledPointer:
    """What a private ``MemoryPool().malloc(size)`` returns: it owns the buffers given to it."""

    def __init__(self, size, device_id):
        self.size = size
        self.device_id = device_id
        self._owned = []

    @property
    def ptr(self):
        return int(self._owned[0].ctypes.data) if self._owned else 0

    def __int__(self):
        return self.ptr
