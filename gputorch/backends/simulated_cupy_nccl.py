"""``cupy.cuda.nccl`` for the simulated CuPy: NCCL's communicator API, built on MPI.

There is no NCCL without GPUs, so the simulated devices' collectives go over MPI (mpi4py), with
NCCL's interface as CuPy exposes it: ``get_unique_id()`` (128 bytes), ``NcclCommunicator(ndev,
commId, rank)``, and ``allReduce``/``reduce``/``broadcast``/``bcast``/``allGather``/
``reduceScatter``/``send``/``recv`` taking device pointers, element counts, NCCL datatype and
reduction codes and a stream pointer. As on a GPU, a call only enqueues the operation on the
stream: it completes asynchronously (a non-blocking MPI request), and an event recorded on that
stream, or the stream itself, is done only once it has (``simulated_cupy_memory.enqueue``).

The communicator is set up as NCCL's would be from a unique id handed to every member: the id
carries the MPI world rank of the process that made it, which collects the members' world ranks
and hands back the member list; the members then form an MPI communicator among themselves.
"""
import ctypes
import hashlib
import os

import numpy as np

from . import simulated_cupy_memory as _memory

available = True

NCCL_INT8 = NCCL_CHAR = 0
NCCL_UINT8 = 1
NCCL_INT32 = NCCL_INT = 2
NCCL_UINT32 = 3
NCCL_INT64 = 4
NCCL_UINT64 = 5
NCCL_FLOAT16 = NCCL_HALF = 6
NCCL_FLOAT32 = NCCL_FLOAT = 7
NCCL_FLOAT64 = NCCL_DOUBLE = 8
NCCL_BFLOAT16 = 9
NCCL_SUM, NCCL_PROD, NCCL_MAX, NCCL_MIN, NCCL_AVG = 0, 1, 2, 3, 4

_DTYPES = {NCCL_INT8: np.int8, NCCL_UINT8: np.uint8, NCCL_INT32: np.int32, NCCL_UINT32: np.uint32,
           NCCL_INT64: np.int64, NCCL_UINT64: np.uint64, NCCL_FLOAT16: np.float16, NCCL_FLOAT32: np.float32,
           NCCL_FLOAT64: np.float64}
_HANDSHAKE_TAG = 0x4E43


class NcclError(RuntimeError):
    """``cupy.cuda.nccl.NcclError``."""


def _mpi():
    from mpi4py import MPI
    return MPI


def get_version():
    return 23203


def get_unique_id():
    """128 bytes: random, then this process's MPI world rank (the member list is collected there)."""
    world_rank = _mpi().COMM_WORLD.Get_rank()
    return os.urandom(120) + int(world_rank).to_bytes(8, "little")


def groupStart():
    pass


def groupEnd():
    pass


def _view(ptr, count, datatype):
    """The host memory of a simulated device buffer as a NumPy array of ``count`` elements."""
    if datatype not in _DTYPES:
        raise NcclError(f"ncclInvalidArgument: datatype {datatype} is not supported by the simulated NCCL")
    dtype = np.dtype(_DTYPES[datatype])
    if count == 0:
        return np.empty(0, dtype=dtype)
    raw = (ctypes.c_byte * (int(count) * dtype.itemsize)).from_address(int(ptr))
    return np.frombuffer(raw, dtype=dtype)


class _InFlight:
    """MPI requests standing for one enqueued NCCL operation; ``finish`` runs once they complete."""

    def __init__(self, requests, finish=None):
        self.requests = requests
        self.finish = finish

    def test(self):
        if self.requests is not None and _mpi().Request.Testall(self.requests):
            self._done()
        return self.requests is None

    def wait(self):
        if self.requests is not None:
            _mpi().Request.Waitall(self.requests)
            self._done()

    def _done(self):
        self.requests = None
        if self.finish is not None:
            self.finish()


class NcclCommunicator:
    """An NCCL communicator of ``ndev`` ranks for the current (simulated) device."""

    def __init__(self, ndev, commId, rank, config=None):
        MPI = _mpi()
        if not isinstance(commId, bytes) or len(commId) != 128:
            raise NcclError("ncclInvalidArgument: commId must be the 128 bytes of get_unique_id()")
        if not 0 <= rank < ndev:
            raise NcclError(f"ncclInvalidArgument: rank {rank} out of range for {ndev} devices")
        from . import simulated_cupy
        self._device = simulated_cupy.cuda.runtime.getDevice()
        self._rank, self._size = rank, ndev
        world = MPI.COMM_WORLD
        creator = int.from_bytes(commId[120:], "little")
        tag = _HANDSHAKE_TAG + int.from_bytes(hashlib.blake2b(commId, digest_size=2).digest(), "little")
        mine = np.array([rank, world.Get_rank()], dtype=np.int64)
        members = np.empty(ndev, dtype=np.int64)
        if world.Get_rank() == creator:
            members[rank] = world.Get_rank()
            for _ in range(ndev - 1):
                world.Recv(mine, source=MPI.ANY_SOURCE, tag=tag)
                members[mine[0]] = mine[1]
            for r in range(ndev):
                if members[r] != creator:
                    world.Send(members, dest=int(members[r]), tag=tag)
        else:
            world.Send(mine, dest=creator, tag=tag)
            world.Recv(members, source=creator, tag=tag)
        self._comm = world.Create_group(world.Get_group().Incl([int(m) for m in members]), tag=tag)

    # ----------------------------------------------------------------- queries
    def device_id(self):
        return self._device

    def rank_id(self):
        return self._rank

    def size(self):
        return self._size

    def check_async_error(self):
        pass

    def destroy(self):
        if self._comm is not None:
            self._comm.Free()
            self._comm = None

    def abort(self):
        self._comm = None

    # ----------------------------------------------------------------- operations
    def _enqueue(self, stream, requests, finish=None):
        _memory.enqueue(stream, _InFlight(requests, finish))

    def _mpi_op(self, op):
        MPI = _mpi()
        table = {NCCL_SUM: MPI.SUM, NCCL_PROD: MPI.PROD, NCCL_MAX: MPI.MAX, NCCL_MIN: MPI.MIN, NCCL_AVG: MPI.SUM}
        if op not in table:
            raise NcclError(f"ncclInvalidArgument: reduction {op}")
        return table[op]

    def _averaged(self, op, out):
        if op != NCCL_AVG:
            return None
        if not np.issubdtype(out.dtype, np.floating):
            raise NcclError("ncclInvalidArgument: NCCL_AVG needs a floating-point type")
        return lambda: np.divide(out, self._size, out=out)

    def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):
        send, recv = _view(sendbuf, count, datatype), _view(recvbuf, count, datatype)
        MPI = _mpi()
        source = MPI.IN_PLACE if sendbuf == recvbuf else send
        self._enqueue(stream, [self._comm.Iallreduce(source, recv, op=self._mpi_op(op))], self._averaged(op, recv))

    def reduce(self, sendbuf, recvbuf, count, datatype, op, root, stream):
        send = _view(sendbuf, count, datatype)
        MPI = _mpi()
        if self._rank == root:
            recv = _view(recvbuf, count, datatype)
            source = MPI.IN_PLACE if sendbuf == recvbuf else send
            req = self._comm.Ireduce(source, recv, op=self._mpi_op(op), root=root)
            self._enqueue(stream, [req], self._averaged(op, recv))
        else:
            self._enqueue(stream, [self._comm.Ireduce(send, None, op=self._mpi_op(op), root=root)])

    def broadcast(self, sendbuff, recvbuff, count, datatype, root, stream):
        recv = _view(recvbuff, count, datatype)
        if self._rank == root and sendbuff != recvbuff:
            recv[...] = _view(sendbuff, count, datatype)
        self._enqueue(stream, [self._comm.Ibcast(recv, root=root)])

    def bcast(self, buff, count, datatype, root, stream):
        self.broadcast(buff, buff, count, datatype, root, stream)

    def allGather(self, sendbuf, recvbuf, count, datatype, stream):
        send = _view(sendbuf, count, datatype).copy()
        recv = _view(recvbuf, count * self._size, datatype)
        self._enqueue(stream, [self._comm.Iallgather(send, recv)])

    def reduceScatter(self, sendbuf, recvbuf, recvcount, datatype, op, stream):
        send = _view(sendbuf, recvcount * self._size, datatype).copy()
        recv = _view(recvbuf, recvcount, datatype)
        self._enqueue(stream, [self._comm.Ireduce_scatter_block(send, recv, op=self._mpi_op(op))],
                      self._averaged(op, recv))

    def send(self, sendbuf, count, datatype, peer, stream):
        self._enqueue(stream, [self._comm.Isend(_view(sendbuf, count, datatype), dest=peer, tag=0)])

    def recv(self, recvbuf, count, datatype, peer, stream):
        self._enqueue(stream, [self._comm.Irecv(_view(recvbuf, count, datatype), source=peer, tag=0)])
