"""``gputorch.distributed``: process groups and collectives on existing communication engines.

Processes are started by MPI (``python -m gputorch.distributed.run --nproc-per-node N script.py``,
or ``mpiexec -n N python script.py``) and talk through mpi4py/MPICH; CUDA tensors on an ``"nccl"``
group go through NCCL (CuPy's ``cupy.cuda.nccl``). The API is PyTorch's: ``init_process_group``,
in-place collectives with ``async_op``, object collectives, ``new_group``. Beyond PyTorch, a
collective that does not complete within the group's timeout raises :class:`DistBackendError`
naming the collective, its number and the ranks that did not join it. Needs the ``distributed``
extra (mpi4py and MPICH).
"""
import os

from . import _mpi
from .collectives import (P2POp, all_gather, all_gather_into_tensor, all_reduce, all_to_all, all_to_all_single,
                          barrier, batch_isend_irecv, broadcast, gather, irecv, isend, monitored_barrier, recv,
                          reduce, reduce_scatter, reduce_scatter_tensor, scatter, send)
from .debug import DebugLevel, get_debug_level, set_debug_level, set_debug_level_from_env
from .errors import DistBackendError, DistError, DistNetworkError, DistStoreError
from .object_collectives import all_gather_object, broadcast_object_list, gather_object, scatter_object_list
from .process_group import (Backend, GroupMember, ProcessGroup, default_pg_timeout, destroy_process_group,
                            get_backend, get_global_rank, get_group_rank, get_process_group_ranks, get_rank,
                            get_world_size, group, init_process_group, is_initialized, new_group)
from .reduce_op import ReduceOp
from .work import Future, Work

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "new_group",
           "get_rank", "get_world_size", "get_backend", "get_global_rank", "get_group_rank",
           "get_process_group_ranks", "get_node_local_rank", "is_mpi_available", "is_nccl_available",
           "is_gloo_available", "is_torchelastic_launched", "get_default_backend_for_device", "is_backend_available", "barrier", "monitored_barrier", "all_reduce",
           "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter",
           "reduce_scatter_tensor", "gather", "scatter", "all_to_all", "all_to_all_single", "send", "recv",
           "isend", "irecv", "P2POp", "batch_isend_irecv", "broadcast_object_list", "all_gather_object",
           "gather_object", "scatter_object_list", "ReduceOp", "Backend", "GroupMember", "group",
           "ProcessGroup", "Work", "Future", "DistError", "DistBackendError", "DistNetworkError",
           "DistStoreError", "DebugLevel", "get_debug_level", "set_debug_level", "set_debug_level_from_env",
           "default_pg_timeout"]


def is_available():
    """True when the MPI engine (mpi4py) is installed."""
    return _mpi.available()


def is_mpi_available():
    return _mpi.available()


def is_gloo_available():
    """True when ``backend="gloo"`` works: here it runs over MPI."""
    return _mpi.available()


def is_nccl_available():
    """True when CuPy provides NCCL (``cupy.cuda.nccl``) for CUDA tensors."""
    from ._nccl import nccl_module
    return nccl_module() is not None


def get_default_backend_for_device(device):
    """The backend PyTorch programs pick for a device: "nccl" for CUDA, "gloo" (here: MPI) for the CPU."""
    kind = device if isinstance(device, str) else getattr(device, "type", None)
    kind = str(kind).split(":")[0]
    if kind == "cuda":
        return "nccl"
    if kind == "cpu":
        return "gloo"
    raise ValueError(f"Default backend not registered for device : {device}")


def is_backend_available(backend):
    """Whether ``backend`` ("mpi", "gloo", "nccl") can be used here."""
    name = str(backend).lower()
    if name == "nccl":
        return is_nccl_available()
    return name in ("mpi", "gloo") and _mpi.available()


def is_torchelastic_launched():
    """True in processes started by ``python -m gputorch.distributed.run``."""
    return os.environ.get("GPUTORCH_DISTRIBUTED_LAUNCHED") == "1"


def get_node_local_rank(fallback_rank=None):
    """This process's rank on its machine (``LOCAL_RANK``), else ``fallback_rank``."""
    value = os.environ.get("LOCAL_RANK")
    if value is not None:
        return int(value)
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not set: start the processes with python -m gputorch.distributed.run")
