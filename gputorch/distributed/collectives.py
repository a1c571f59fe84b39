"""Collectives and point-to-point operations on tensors, in place, as in ``torch.distributed``.

Each function resolves its group (returning None in a process outside it), checks its arguments,
numbers the collective (``ProcessGroup.next_seq``), runs the DETAIL consistency
check when switched on, and posts the operation to MPI (or NCCL for CUDA tensors on an ``"nccl"``
group) as a :class:`Work`. With ``async_op=True`` the Work is returned; otherwise it is waited on,
which raises :class:`DistBackendError` naming the ranks that did not join within the timeout.
"""
import numpy as np

from . import _mpi
from ._buffers import HostBuffer, check_tensor, write_tensor
from .debug import check_consistent, describe_tensors
from .process_group import resolve
from .reduce_op import RedOpType, as_red_op
from .work import Work

__all__ = ["all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter",
           "reduce_scatter_tensor", "gather", "scatter", "all_to_all_single", "all_to_all", "barrier",
           "send", "recv", "isend", "irecv", "P2POp", "batch_isend_irecv", "monitored_barrier"]


def _done(work, async_op):
    if async_op:
        return work
    work.wait()
    return None


def _begin(pg, name, fingerprint):
    seq = pg.next_seq(name)
    check_consistent(pg, seq, name, f"{name} {fingerprint}")
    return seq


_BITWISE = (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR)


def _use_nccl(pg, tensors, op=None):
    """Whether NCCL moves these tensors: CUDA tensors of an "nccl" group, except for the bitwise
    reductions NCCL lacks (those, like the collectives NCCL has no call for, go through host memory),
    and where CuPy has no NCCL (then MPI through host memory, said once)."""
    return pg.backend == "nccl" and tensors[0]._device.type == "cuda" and op not in _BITWISE and pg.has_nccl()


def _check_same_device(tensors, name):
    first = tensors[0]._device
    for t in tensors[1:]:
        if t._device is not first:
            raise RuntimeError(f"{name}: every tensor must be on one device, got {first} and {t._device}")


def _reduction(tensor, op, name):
    """The wire dtype and the MPI op of a reduction of ``tensor``."""
    op = as_red_op(op)
    dtype = tensor._data.dtype
    if op is RedOpType.AVG and not (np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.complexfloating)):
        raise ValueError(f"{name}: ReduceOp.AVG needs a floating-point or complex tensor, got {tensor.dtype}")
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and not (
            np.issubdtype(dtype, np.integer) or dtype == np.bool_):
        raise ValueError(f"{name}: {op.name} needs an integer or boolean tensor, got {tensor.dtype}")
    if dtype == np.bool_:
        return op, np.dtype(np.uint8), _mpi.bool_op(op)
    return op, None, _mpi.mpi_op(op)


def _average(array, op, size):
    if op is RedOpType.AVG:
        np.divide(array, size, out=array)


def all_reduce(tensor, op=RedOpType.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over the group's ranks with ``op``; every rank gets the result in ``tensor``."""
    pg = resolve(group)
    if pg is None:
        return None
    check_tensor(tensor)
    op, wire, mpi_op = _reduction(tensor, op, "all_reduce")
    seq = _begin(pg, "all_reduce", f"{op.name} {describe_tensors([tensor])}")
    if _use_nccl(pg, [tensor], op):
        return _done(pg.nccl().all_reduce(seq, tensor, op), async_op)
    buf = HostBuffer(tensor, wire)
    req = pg.comm.Iallreduce(_mpi.mpi().IN_PLACE, buf.array, op=mpi_op)

    def finish():
        _average(buf.array, op, pg.size)
        buf.written()
    return _done(Work(pg, "all_reduce", seq, [req], finish, [tensor]), async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy ``tensor`` of global rank ``src`` into ``tensor`` on every rank."""
    pg = resolve(group)
    if pg is None:
        return None
    check_tensor(tensor)
    root = root_rank(pg, src, group_src, "src")
    seq = _begin(pg, "broadcast", f"root={root} {describe_tensors([tensor])}")
    if _use_nccl(pg, [tensor]):
        return _done(pg.nccl().broadcast(seq, tensor, root), async_op)
    buf = HostBuffer(tensor, read=pg.rank == root)
    req = pg.comm.Ibcast(buf.array, root=root)
    return _done(Work(pg, "broadcast", seq, [req], buf.written if pg.rank != root else None, [tensor]), async_op)


def reduce(tensor, dst=None, op=RedOpType.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` over the group into ``tensor`` of global rank ``dst`` (others keep theirs)."""
    pg = resolve(group)
    if pg is None:
        return None
    check_tensor(tensor)
    root = root_rank(pg, dst, group_dst, "dst")
    op, wire, mpi_op = _reduction(tensor, op, "reduce")
    seq = _begin(pg, "reduce", f"root={root} {op.name} {describe_tensors([tensor])}")
    if _use_nccl(pg, [tensor], op):
        return _done(pg.nccl().reduce(seq, tensor, op, root), async_op)
    MPI = _mpi.mpi()
    if pg.rank == root:
        buf = HostBuffer(tensor, wire)
        req = pg.comm.Ireduce(MPI.IN_PLACE, buf.array, op=mpi_op, root=root)

        def finish():
            _average(buf.array, op, pg.size)
            buf.written()
    else:
        buf = HostBuffer(tensor, wire)
        req = pg.comm.Ireduce(buf.array, None, op=mpi_op, root=root)
        finish = None
    return _done(Work(pg, "reduce", seq, [req], finish, [tensor]), async_op)


def root_rank(pg, global_rank, group_rank, what):
    """The group rank of a collective's root, given as a global rank (default 0) or a group rank."""
    if group_rank is not None:
        if global_rank is not None:
            raise ValueError(f"Can not specify both {what} and group_{what}")
        if not 0 <= group_rank < pg.size:
            raise ValueError(f"group_{what} {group_rank} is out of range for a group of size {pg.size}")
        return group_rank
    return pg.group_rank(0 if global_rank is None else int(global_rank), what)


def _check_list(tensors, size, name, what):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}: {what} must be a list of tensors, got {type(tensors).__name__}")
    if len(tensors) != size:
        raise ValueError(f"{name}: {what} has {len(tensors)} tensors; the group has {size} ranks")
    for t in tensors:
        check_tensor(t, what)


def _check_like(tensors, like, name, what):
    for t in tensors:
        if t.shape != like.shape or t.dtype != like.dtype:
            raise ValueError(f"{name}: every tensor of {what} must have the input's shape {tuple(like.shape)} "
                             f"and dtype {like.dtype}, got {tuple(t.shape)} {t.dtype}")


def _check_root_list(pg, root, tensors, like, name, what, role):
    """``tensors`` (one per rank, each shaped like ``like``) given on the root rank, and only there."""
    if pg.rank == root:
        _check_list(tensors, pg.size, name, what)
        _check_like(tensors, like, name, what)
    elif tensors:
        raise ValueError(f"{name}: {what} must be given only on the {role} rank")


def _write_rows(tensors, rows):
    """Copy each received row into its tensor (on the tensor's device) and bump its version."""
    for t, row in zip(tensors, rows):
        write_tensor(t, row)
        t._vc[0] += 1


def _stacked(tensors):
    """One contiguous host array of ``tensors`` side by side (rows of the first axis)."""
    return np.stack([HostBuffer(t).array for t in tensors]) if tensors else np.empty((0,))


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's ``tensor`` into ``tensor_list[rank]``, on every rank."""
    pg = resolve(group)
    if pg is None:
        return None
    check_tensor(tensor)
    _check_list(tensor_list, pg.size, "all_gather", "tensor_list")
    _check_like(tensor_list, tensor, "all_gather", "tensor_list")
    seq = _begin(pg, "all_gather", describe_tensors([tensor]))
    send = HostBuffer(tensor).array
    recv = np.empty((pg.size,) + send.shape, dtype=send.dtype)
    req = pg.comm.Iallgather(send, recv)
    return _done(Work(pg, "all_gather", seq, [req], lambda: _write_rows(tensor_list, recv), tensor_list), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's ``input_tensor`` concatenated (or stacked) in rank order into ``output_tensor``,
    whose size is the group's size times the input's."""
    pg = resolve(group)
    if pg is None:
        return None
    check_tensor(output_tensor, "output_tensor")
    check_tensor(input_tensor, "input_tensor")
    _check_multiple(output_tensor, input_tensor, pg.size, "all_gather_into_tensor")
    seq = _begin(pg, "all_gather_into_tensor", describe_tensors([input_tensor]))
    if _use_nccl(pg, [input_tensor]):
        return _done(pg.nccl().all_gather(seq, output_tensor, input_tensor), async_op)
    send = HostBuffer(input_tensor).array
    out = HostBuffer(output_tensor, read=False)
    req = pg.comm.Iallgather(send, out.array)
    return _done(Work(pg, "all_gather_into_tensor", seq, [req], out.written, [output_tensor]), async_op)


def _check_multiple(big, small, size, name):
    if big.dtype != small.dtype:
        raise ValueError(f"{name}: input and output dtypes differ ({small.dtype} and {big.dtype})")
    if big.numel() != size * small.numel():
        raise ValueError(f"{name}: the output has {big.numel()} elements; it must have the group's size "
                         f"({size}) times the input's {small.numel()}")


def reduce_scatter_tensor(output, input, op=RedOpType.SUM, group=None, async_op=False):
    """Reduce ``input`` (the group's size times ``output``'s size) over the group and give rank ``r``
    block ``r`` of the result in ``output``."""
    pg = resolve(group)
    if pg is None:
        return None
    check_tensor(output, "output")
    check_tensor(input, "input")
    _check_multiple(input, output, pg.size, "reduce_scatter_tensor")
    op, wire, mpi_op = _reduction(input, op, "reduce_scatter_tensor")
    seq = _begin(pg, "reduce_scatter_tensor", f"{op.name} {describe_tensors([input])}")
    if _use_nccl(pg, [input], op):
        return _done(pg.nccl().reduce_scatter(seq, output, input, op), async_op)
    send = HostBuffer(input, wire).array
    out = HostBuffer(output, wire, read=False)
    req = pg.comm.Ireduce_scatter_block(send, out.array, op=mpi_op)

    def finish():
        _average(out.array, op, pg.size)
        out.written()
    return _done(Work(pg, "reduce_scatter_tensor", seq, [req], finish, [output]), async_op)


def reduce_scatter(output, input_list, op=RedOpType.SUM, group=None, async_op=False):
    """``reduce_scatter_tensor`` with the input given as one tensor per rank."""
    pg = resolve(group)
    if pg is None:
        return None
    _check_list(input_list, pg.size, "reduce_scatter", "input_list")
    _check_like(input_list, output, "reduce_scatter", "input_list")
    from ..ops.shape.joining import stack
    return reduce_scatter_tensor(output, stack(list(input_list)), op, group, async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Every rank's ``tensor`` into ``gather_list`` (one tensor per rank) of global rank ``dst``."""
    pg = resolve(group)
    if pg is None:
        return None
    check_tensor(tensor)
    root = root_rank(pg, dst, group_dst, "dst")
    _check_root_list(pg, root, gather_list, tensor, "gather", "gather_list", "destination")
    seq = _begin(pg, "gather", f"root={root} {describe_tensors([tensor])}")
    send = HostBuffer(tensor).array
    recv = np.empty((pg.size,) + send.shape, dtype=send.dtype) if pg.rank == root else None
    req = pg.comm.Igather(send, recv, root=root)
    if pg.rank != root:
        return _done(Work(pg, "gather", seq, [req]), async_op)
    return _done(Work(pg, "gather", seq, [req], lambda: _write_rows(gather_list, recv), gather_list), async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """``scatter_list[r]`` of global rank ``src`` into ``tensor`` of rank ``r``."""
    pg = resolve(group)
    if pg is None:
        return None
    check_tensor(tensor)
    root = root_rank(pg, src, group_src, "src")
    _check_root_list(pg, root, scatter_list, tensor, "scatter", "scatter_list", "source")
    seq = _begin(pg, "scatter", f"root={root} {describe_tensors([tensor])}")
    send = _stacked(scatter_list) if pg.rank == root else None
    out = HostBuffer(tensor, read=False)
    req = pg.comm.Iscatter(send, out.array, root=root)
    return _done(Work(pg, "scatter", seq, [req], out.written, [tensor]), async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """Split ``input`` along dim 0 (equally, or by ``input_split_sizes``) and send block ``r`` to rank
    ``r``; the blocks received, in rank order, fill ``output``."""
    pg = resolve(group)
    if pg is None:
        return None
    check_tensor(output, "output")
    check_tensor(input, "input")
    if output.dtype != input.dtype:
        raise ValueError(f"all_to_all_single: input and output dtypes differ ({input.dtype} and {output.dtype})")
    send_counts = _split_counts(input, input_split_sizes, pg.size, "input")
    recv_counts = _split_counts(output, output_split_sizes, pg.size, "output")
    seq = _begin(pg, "all_to_all_single", str(input.dtype))
    send = HostBuffer(input).array
    out = HostBuffer(output, read=False)
    req = pg.comm.Ialltoallv([send, (send_counts, _offsets(send_counts))],
                             [out.array, (recv_counts, _offsets(recv_counts))])
    return _done(Work(pg, "all_to_all_single", seq, [req], out.written, [output]), async_op)


def _split_counts(t, splits, size, what):
    """Element counts of the blocks of ``t`` along dim 0."""
    rows = t.shape[0] if t.dim() else 1
    row = t.numel() // rows if rows else 0
    if splits is None:
        if rows % size:
            raise ValueError(f"all_to_all_single: {what} has {rows} rows, not divisible by the group's size {size}")
        return [rows // size * row] * size
    splits = [int(s) for s in splits]
    if len(splits) != size or sum(splits) != rows:
        raise ValueError(f"all_to_all_single: {what}_split_sizes {splits} must have {size} entries summing to "
                         f"{what}'s {rows} rows")
    return [s * row for s in splits]


def _offsets(counts):
    return [int(x) for x in np.concatenate([[0], np.cumsum(counts)[:-1]])]


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Send ``input_tensor_list[r]`` to rank ``r``; receive rank ``r``'s into ``output_tensor_list[r]``."""
    pg = resolve(group)
    if pg is None:
        return None
    _check_list(output_tensor_list, pg.size, "all_to_all", "output_tensor_list")
    _check_list(input_tensor_list, pg.size, "all_to_all", "input_tensor_list")
    seq = _begin(pg, "all_to_all", str(input_tensor_list[0].dtype))
    send = np.concatenate([HostBuffer(t).array.ravel() for t in input_tensor_list])
    recv_counts = [t.numel() for t in output_tensor_list]
    send_counts = [t.numel() for t in input_tensor_list]
    recv = np.empty(sum(recv_counts), dtype=send.dtype)
    req = pg.comm.Ialltoallv([send, (send_counts, _offsets(send_counts))],
                             [recv, (recv_counts, _offsets(recv_counts))])

    def finish():
        _write_rows(output_tensor_list, [recv[start:start + n].reshape(tuple(t.shape)) for t, start, n
                                         in zip(output_tensor_list, _offsets(recv_counts), recv_counts)])
    return _done(Work(pg, "all_to_all", seq, [req], finish, output_tensor_list), async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of the group has reached this call."""
    pg = resolve(group)
    if pg is None:
        return None
    seq = _begin(pg, "barrier", "")
    return _done(Work(pg, "barrier", seq, [pg.comm.Ibarrier()]), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that raises, naming the ranks that did not arrive, after ``timeout`` (default: the group's)."""
    pg = resolve(group)
    if pg is None:
        return None
    seq = _begin(pg, "monitored_barrier", "")  # noqa: F841 - numbered like every collective
    Work(pg, "monitored_barrier", seq, [pg.comm.Ibarrier()]).wait(timeout)


_P2P_TAG_BASE = 1 << 16


def _p2p(pg, peer_global, tag, what):
    peer = pg.group_rank(int(peer_global), what)
    if peer == pg.rank:
        raise ValueError(f"Invalid {what} rank: {peer_global} is this process's own rank")
    return peer, _P2P_TAG_BASE + int(tag)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to global rank ``dst`` without waiting; returns a Work."""
    pg = resolve(group)
    if pg is None:
        return None
    check_tensor(tensor)
    peer, mpi_tag = _p2p(pg, pg.global_rank(group_dst) if group_dst is not None else dst, tag, "dst")
    buf = HostBuffer(tensor)
    return Work(pg, "send", None, [pg.comm.Isend(buf.array, dest=peer, tag=mpi_tag)], outputs=[tensor], peer=peer)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from global rank ``src`` (any rank when None) without waiting; returns a Work."""
    pg = resolve(group)
    if pg is None:
        return None
    check_tensor(tensor)
    MPI = _mpi.mpi()
    if src is None and group_src is None:
        peer, mpi_tag = MPI.ANY_SOURCE, _P2P_TAG_BASE + int(tag)
    else:
        peer, mpi_tag = _p2p(pg, pg.global_rank(group_src) if group_src is not None else src, tag, "src")
    buf = HostBuffer(tensor, read=False)
    work = Work(pg, "recv", None, [pg.comm.Irecv(buf.array, source=peer, tag=mpi_tag)], buf.written, [tensor],
                peer=None if peer == MPI.ANY_SOURCE else peer)
    if peer == MPI.ANY_SOURCE:
        work._status = MPI.Status()
    return work


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to global rank ``dst`` and wait until it is on its way."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from global rank ``src`` (any when None); returns the sender's global rank."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    pg = work.group
    work.wait()
    if work._peer is None:          # from any source: MPI tells who sent it
        return pg.global_rank(work._status.Get_source())
    return pg.global_rank(work._peer)


class P2POp:
    """One point-to-point operation for :func:`batch_isend_irecv`: ``P2POp(dist.isend, tensor, peer)``."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = op, tensor, peer, group, tag, group_peer


def batch_isend_irecv(p2p_op_list):
    """Post every operation of ``p2p_op_list``; returns their Works."""
    if not p2p_op_list:
        raise ValueError("batch_isend_irecv: the list of operations is empty")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return works
