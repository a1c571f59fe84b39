"""Shared set-up of the worker programs: the process group and each rank's device."""
import datetime
import sys

import gputorch
import gputorch.distributed as dist


def setup(backend="mpi", timeout_s=60):
    """Initialise the default group; return (rank, world size, this rank's device): ``cuda:<rank>`` when
    (simulated) GPUs are present, else the CPU."""
    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout_s))
    rank, size = dist.get_rank(), dist.get_world_size()
    if gputorch.cuda.is_available() and gputorch.cuda.device_count() >= size:
        device = gputorch.device("cuda", rank)
    else:
        device = gputorch.device("cpu")
    return rank, size, device


def passed(rank):
    print(f"PASS {rank}", flush=True)
    sys.stdout.flush()
