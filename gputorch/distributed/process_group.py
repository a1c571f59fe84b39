"""Process groups: which processes communicate, over which engine, with what timeout.

The default group (``init_process_group``) spans every process MPI started (``mpiexec`` or
``python -m gputorch.distributed.run``); ``new_group(ranks)`` makes a sub-group, called by every
process as in PyTorch. Each group has its own MPI communicator, its own collective numbering and
its own stall inspector (``_arrivals.py``).

Backends: ``"mpi"`` (also accepted: ``"gloo"``, whose programs run unchanged over MPI here) moves
CPU tensors with MPI and CUDA tensors through host memory; ``"nccl"`` moves CUDA tensors with NCCL
(CuPy's ``cupy.cuda.nccl``) and CPU tensors with MPI.
"""
import datetime
import os

from ._arrivals import ArrivalNotices
from ._mpi import mpi

__all__ = ["ProcessGroup", "Backend", "GroupMember", "init_process_group", "destroy_process_group",
           "is_initialized", "new_group", "get_rank", "get_world_size", "get_backend", "get_global_rank",
           "get_group_rank", "get_process_group_ranks", "default_pg_timeout", "group"]

default_pg_timeout = datetime.timedelta(minutes=30)


class Backend(str):
    """A backend name: ``Backend("mpi")``; constants ``Backend.MPI``, ``Backend.NCCL``, ``Backend.GLOO``."""
    MPI = "mpi"
    NCCL = "nccl"
    GLOO = "gloo"
    UNDEFINED = "undefined"

    def __new__(cls, name):
        value = str(name).lower()
        if value not in (cls.MPI, cls.NCCL, cls.GLOO):
            raise ValueError(f"Invalid backend: '{name}' (gputorch.distributed has 'mpi', 'nccl' and 'gloo', "
                             "which runs over MPI)")
        return str.__new__(cls, value)


class _NonGroupMember:
    def __repr__(self):
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    """``GroupMember.WORLD`` (the default group, once made) and ``NON_GROUP_MEMBER`` (what ``new_group``
    returns to processes outside the group)."""
    WORLD = None
    NON_GROUP_MEMBER = _NonGroupMember()


class group:
    """``dist.group.WORLD``: the default process group."""
    WORLD = None


_GROUP_NAMESPACE = group


class ProcessGroup:
    """Ranks ``0 .. size - 1`` of an MPI communicator, with a backend name and a timeout.

    Attributes:
        comm: the group's MPI communicator (its ranks are group ranks).
        ranks (list[int]): the global rank of each group rank.
        rank, size (int): this process's group rank and the group's size.
        arrivals: the stall inspector of this group's collectives.
    """

    _count = 0

    def __init__(self, comm, ranks, backend, timeout):
        self.comm = comm
        self.ranks = list(ranks)
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.backend = backend
        self.timeout = timeout
        self.timeout_seconds = timeout.total_seconds()
        self.seq = 0
        self.p2p_tag = {}
        self.arrivals = ArrivalNotices(comm)
        self._pending = []
        self._nccl = None
        self._nccl_available = None
        ProcessGroup._count += 1
        self.id = ProcessGroup._count

    def next_seq(self, name):
        """Number the next collective (``name``: announced to the peers if its wait is long)."""
        self.seq += 1
        return self.seq

    def global_rank(self, group_rank):
        return self.ranks[group_rank]

    def group_rank(self, global_rank, what="rank"):
        try:
            return self.ranks.index(global_rank)
        except ValueError:
            raise ValueError(f"{what} rank {global_rank} is not part of {self.describe()} "
                             f"(its ranks are {self.ranks})") from None

    def describe(self):
        return "the default process group" if self is GroupMember.WORLD else f"process group {self.id}"

    def progress(self):
        """Advance every pending operation of this group (MPI moves data only inside MPI calls)."""
        for work in list(self._pending):
            work.is_completed()

    def has_nccl(self):
        """Whether CuPy provides NCCL; without it an "nccl" group moves CUDA tensors through host
        memory over MPI, and says so once."""
        if self._nccl_available is None:
            from ._nccl import nccl_module
            self._nccl_available = nccl_module() is not None
            if not self._nccl_available:
                import warnings
                warnings.warn("gputorch.distributed: CuPy has no NCCL here (install nvidia-nccl-cu12 or -cu13), so "
                              "the 'nccl' process group moves CUDA tensors through host memory over MPI", RuntimeWarning,
                              stacklevel=4)
        return self._nccl_available

    def nccl(self):
        """This group's NCCL communicator for the current CUDA device (made on first use)."""
        if self._nccl is None:
            from ._nccl import NcclCommunicator
            self._nccl = NcclCommunicator(self)
        return self._nccl

    def free(self):
        for work in list(self._pending):
            self._pending.remove(work)
        self.arrivals.free()
        if self._nccl is not None:
            self._nccl.destroy()
        if self.comm != mpi().COMM_WORLD:
            self.comm.Free()

    def __repr__(self):
        return f"<gputorch.distributed.ProcessGroup {self.id} ranks={self.ranks} backend={self.backend}>"


_GROUPS = []


def is_initialized():
    """Whether ``init_process_group`` has been called (and not destroyed)."""
    return GroupMember.WORLD is not None


def _world():
    if GroupMember.WORLD is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return GroupMember.WORLD


def resolve(group_or_none):
    """The ProcessGroup meant by a ``group=`` argument; None for a process outside that group."""
    if group_or_none is None:
        return _world()
    if group_or_none is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group_or_none, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup or None, got {type(group_or_none).__name__}")
    _world()
    return group_or_none


def _env_int(name):
    value = os.environ.get(name)
    return None if value in (None, "") else int(value)


def _as_timedelta(timeout):
    if timeout is None:
        return default_pg_timeout
    if isinstance(timeout, datetime.timedelta):
        return timeout
    raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout).__name__}")


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Make the default process group over every process MPI started.

    Processes come from ``mpiexec -n N`` or ``python -m gputorch.distributed.run``; MPI is the
    rendezvous, so ``init_method`` (``env://``, ``tcp://``, ``file://``) and ``store`` are accepted
    and not needed. ``world_size`` and ``rank`` (arguments or the ``WORLD_SIZE``/``RANK`` variables),
    when given, must agree with MPI's.

    Args:
        backend (str): ``"mpi"``, ``"nccl"`` or ``"gloo"`` (runs over MPI); default ``"nccl"`` when
            ``device_id`` is a CUDA device, else ``"mpi"``.
        timeout (datetime.timedelta): how long a collective may wait for the other ranks before it
            raises :class:`DistBackendError` naming the ranks that did not join (default 30 minutes).
    """
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    MPI = mpi()
    comm = MPI.COMM_WORLD
    size, me = comm.Get_size(), comm.Get_rank()
    for what, given, env in (("world_size", world_size, "WORLD_SIZE"), ("rank", rank, "RANK")):
        expected = size if what == "world_size" else me
        value = given if given is not None and given >= 0 else _env_int(env)
        if value is not None and value != expected:
            raise ValueError(
                f"init_process_group: {what}={value} but MPI started this process as rank {me} of {size}. "
                "gputorch's rendezvous is MPI: start the processes with `python -m gputorch.distributed.run "
                "--nproc-per-node N script.py` or `mpiexec -n N python script.py`")
    if backend is None:
        backend = "nccl" if device_id is not None and getattr(device_id, "type", None) == "cuda" else "mpi"
    backend = Backend(backend)
    world = ProcessGroup(comm, range(size), backend, _as_timedelta(timeout))
    GroupMember.WORLD = world
    _GROUP_NAMESPACE.WORLD = world
    _GROUPS.append(world)
    from .debug import set_debug_level_from_env
    set_debug_level_from_env()


def destroy_process_group(group=None):
    """Free ``group`` (default: every group, after which ``init_process_group`` may run again)."""
    if group is None:
        for g in reversed(_GROUPS):
            g.free()
        _GROUPS.clear()
        GroupMember.WORLD = None
        _GROUP_NAMESPACE.WORLD = None
        return
    pg = resolve(group)
    if pg is not None:
        pg.free()
        _GROUPS.remove(pg)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A process group of the global ``ranks`` (all of them when None). Every process must call it, in
    the same order; processes outside ``ranks`` get ``GroupMember.NON_GROUP_MEMBER``."""
    world = _world()
    ranks = list(range(world.size)) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks {ranks} contain duplicates")
    for r in ranks:
        if not 0 <= r < world.size:
            raise ValueError(f"new_group: rank {r} is out of range for a world of size {world.size}")
    if world.rank not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    comm = world.comm.Create_group(world.comm.Get_group().Incl(ranks))
    pg = ProcessGroup(comm, ranks, Backend(backend or world.backend),
                      world.timeout if timeout is None else _as_timedelta(timeout))
    _GROUPS.append(pg)
    return pg


def get_rank(group=None):
    """This process's rank in ``group`` (-1 outside it)."""
    pg = resolve(group)
    return -1 if pg is None else pg.rank


def get_world_size(group=None):
    """The number of processes in ``group`` (-1 outside it)."""
    pg = resolve(group)
    return -1 if pg is None else pg.size


def get_backend(group=None):
    """The backend name of ``group``."""
    pg = resolve(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg.backend


def get_global_rank(group, group_rank):
    """The global rank of ``group_rank`` in ``group``."""
    return resolve(group).global_rank(group_rank)


def get_group_rank(group, global_rank):
    """The rank in ``group`` of the process with ``global_rank``."""
    return resolve(group).group_rank(global_rank)


def get_process_group_ranks(group):
    """The global ranks of ``group``."""
    return list(resolve(group).ranks)
