"""The NCCL engine: collectives on CUDA tensors of an ``"nccl"`` process group, through CuPy's
``cupy.cuda.nccl`` (the simulated CuPy provides one built on MPI).

One NCCL communicator per group and device, set up on first use from a unique id that the group's
rank 0 makes and broadcasts over the group's MPI communicator. Every operation is enqueued on the
device's current stream; its :class:`Work` is done when an event recorded after it is, and a
timeout aborts the communicator (its stream would never finish) before raising the named error.
NCCL has no complex or boolean types: complex tensors travel as their real pairs (sums and
averages only), booleans as bytes (SUM and MAX as logical or, PRODUCT and MIN as logical and).
"""
import numpy as np

from .reduce_op import RedOpType
from .work import Work

_NCCL_TYPES = {np.dtype(np.int8): 0, np.dtype(np.uint8): 1, np.dtype(np.int32): 2, np.dtype(np.uint32): 3,
               np.dtype(np.int64): 4, np.dtype(np.uint64): 5, np.dtype(np.float16): 6, np.dtype(np.float32): 7,
               np.dtype(np.float64): 8}
_NCCL_OPS = {RedOpType.SUM: 0, RedOpType.PRODUCT: 1, RedOpType.MAX: 2, RedOpType.MIN: 3, RedOpType.AVG: 4}


def nccl_module():
    """CuPy's ``cupy.cuda.nccl`` when it has a usable NCCL, else None."""
    try:
        from ..backends import get_backend
        cupy = get_backend("cuda")._require()
    except Exception:
        return None
    nccl = getattr(cupy.cuda, "nccl", None)
    if nccl is None or not getattr(nccl, "available", False) or not hasattr(nccl, "NcclCommunicator"):
        return None
    return nccl


def _wire(array, op):
    """``(array viewed in an NCCL type, NCCL op code)`` for a contiguous device array."""
    dtype = array.dtype
    if dtype == np.bool_:
        logical_or = op in (RedOpType.SUM, RedOpType.MAX, RedOpType.BOR)
        return array.view(np.uint8), (_NCCL_OPS[RedOpType.MAX] if logical_or else _NCCL_OPS[RedOpType.MIN])
    if np.issubdtype(dtype, np.complexfloating):
        if op is not None and op not in (RedOpType.SUM, RedOpType.AVG):
            raise ValueError(f"{op.name} is not defined on complex tensors")
        array = array.view(np.float32 if dtype == np.complex64 else np.float64)
    if array.dtype not in _NCCL_TYPES:
        raise TypeError(f"NCCL has no type for {dtype}: use a process group with backend='mpi' for it")
    if op is not None and op not in _NCCL_OPS:
        raise ValueError(f"NCCL has no reduction {op.name}")
    return array, (None if op is None else _NCCL_OPS[op])


class NcclCommunicator:
    """The NCCL side of one process group (see the module doc)."""

    def __init__(self, pg):
        self.pg = pg
        self.comms = {}

    def _comm(self, device, seq, name):
        nccl = nccl_module()
        comm = self.comms.get(device.index)
        if comm is None:
            uid = np.frombuffer(nccl.get_unique_id(), dtype=np.uint8).copy() if self.pg.rank == 0 \
                else np.zeros(128, dtype=np.uint8)
            Work(self.pg, f"{name} (NCCL set-up)", seq, [self.pg.comm.Ibcast(uid, root=0)]).wait()
            comm = nccl.NcclCommunicator(self.pg.size, uid.tobytes(), self.pg.rank)
            self.comms[device.index] = comm
        return comm

    def _run(self, name, seq, tensors, outputs, call):
        """Enqueue ``call(comm, arrays, stream_ptr)`` on the current stream of the tensors' device, with
        contiguous device arrays for ``tensors`` (copies, written back on completion, where needed)."""
        device = tensors[0]._device
        cupy = device.backend._require()
        staged = []
        with device._ctx:
            comm = self._comm(device, seq, name)
            arrays = []
            for t in tensors:
                data = t._data
                if not data.flags.c_contiguous:
                    copy = cupy.ascontiguousarray(data)
                    staged.append((t, copy))
                    data = copy
                arrays.append(data)
            stream = cupy.cuda.get_current_stream()
            call(comm, arrays, stream.ptr)
            event = cupy.cuda.Event()
            event.record(stream)

        def finish():
            with device._ctx:
                for t, copy in staged:
                    if any(t is o for o in outputs):
                        t._data[...] = copy
            for t in outputs:
                t._vc[0] += 1

        def abort():
            comm.abort()
            self.comms.pop(device.index, None)
        return Work(self.pg, name, seq, [], finish, outputs, poll=lambda: event.done, on_timeout=abort)

    def all_reduce(self, seq, tensor, op):
        def call(comm, arrays, stream):
            a, nop = _wire(arrays[0], op)
            comm.allReduce(a.data.ptr, a.data.ptr, a.size, _NCCL_TYPES[a.dtype], nop, stream)
        return self._run("all_reduce", seq, [tensor], [tensor], call)

    def broadcast(self, seq, tensor, root):
        def call(comm, arrays, stream):
            a, _ = _wire(arrays[0], None)
            comm.broadcast(a.data.ptr, a.data.ptr, a.size, _NCCL_TYPES[a.dtype], root, stream)
        return self._run("broadcast", seq, [tensor], [tensor], call)

    def reduce(self, seq, tensor, op, root):
        def call(comm, arrays, stream):
            a, nop = _wire(arrays[0], op)
            comm.reduce(a.data.ptr, a.data.ptr, a.size, _NCCL_TYPES[a.dtype], nop, root, stream)
        return self._run("reduce", seq, [tensor], [tensor] if self.pg.rank == root else [], call)

    def all_gather(self, seq, output, input):
        def call(comm, arrays, stream):
            out, _ = _wire(arrays[0], None)
            inp, _ = _wire(arrays[1], None)
            comm.allGather(inp.data.ptr, out.data.ptr, inp.size, _NCCL_TYPES[inp.dtype], stream)
        return self._run("all_gather_into_tensor", seq, [output, input], [output], call)

    def reduce_scatter(self, seq, output, input, op):
        def call(comm, arrays, stream):
            out, nop = _wire(arrays[0], op)
            inp, _ = _wire(arrays[1], op)
            comm.reduceScatter(inp.data.ptr, out.data.ptr, out.size, _NCCL_TYPES[out.dtype], nop, stream)
        return self._run("reduce_scatter_tensor", seq, [output, input], [output], call)

    def destroy(self):
        for comm in self.comms.values():
            comm.destroy()
        self.comms.clear()
