"""Run under ``mpiexec -n N`` by bench/distributed.py: all-reduce timings (gputorch against raw
mpi4py on the same buffers), DDP steps, and the overlap of the bucket all-reduces with backward.
Rank 0 prints one JSON line."""
import json
import os
import statistics
import sys
import time

sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]

import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402

import gputorch as torch  # noqa: E402
import gputorch.distributed as dist  # noqa: E402
from gputorch import nn  # noqa: E402
from gputorch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

QUICK = "--quick" in sys.argv
comm = MPI.COMM_WORLD
dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()


def timed(fn, repeat):
    """Median seconds of ``fn`` over ``repeat`` calls, every rank starting together."""
    times = []
    for _ in range(repeat):
        comm.Barrier()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    worst = comm.allreduce(statistics.median(times), op=MPI.MAX)
    return worst


def allreduce_table():
    rows = []
    sizes = [4 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20] + ([] if QUICK else [64 << 20])
    for nbytes in sizes:
        n = nbytes // 4
        array = np.ones(n, dtype=np.float32)
        tensor = torch.ones(n)
        repeat = 5 if QUICK else (40 if nbytes <= (1 << 20) else 15)
        raw_t, ours_t = [], []
        for _ in range(3):                       # alternate, so a busy moment hits both
            raw_t.append(timed(lambda: comm.Allreduce(MPI.IN_PLACE, array, op=MPI.SUM), repeat))
            ours_t.append(timed(lambda: dist.all_reduce(tensor), repeat))
        raw, ours = min(raw_t), min(ours_t)
        rows.append({"bytes": nbytes, "mpi4py_s": raw, "gputorch_s": ours,
                     "bus_GBps": 2 * (world - 1) / world * nbytes / ours / 1e9})
    return rows


def mlp(width, depth):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(width, 10))


def ddp_figures(name, make_model, in_features, global_batch, steps):
    """Per-step seconds of DDP training on this world (global batch split over the ranks), and the
    overlap of the bucket all-reduces with the backward pass."""
    torch.manual_seed(0)
    model = DDP(make_model(), bucket_cap_mb=25)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(global_batch // world, in_features)
    y = torch.randint(0, 10, (global_batch // world,))

    def step():
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    def backward_only(sync):
        loss = nn.functional.cross_entropy(model(x), y)
        if sync:
            loss.backward()
        else:
            with model.no_sync():
                loss.backward()

    for _ in range(2):
        step()
    step_s = timed(step, steps)
    fwd_bwd_sync = timed(lambda: backward_only(True), steps)
    with model.no_sync():
        fwd_bwd_local = timed(lambda: backward_only(False), steps)
    buffers = [b.buffer for b in model.reducer.buckets]
    comm_alone = timed(lambda: [dist.all_reduce(b) for b in buffers], steps)
    exposed = max(fwd_bwd_sync - fwd_bwd_local, 0.0)
    hidden = min(max(comm_alone - exposed, 0.0), comm_alone) if world > 1 else 0.0
    return {"model": name, "params": sum(p.numel() for p in model.parameters()),
            "global_batch": global_batch, "bucket_bytes": [b.numel() * 4 for b in buffers], "step_s": step_s, "fwd_bwd_local_s": fwd_bwd_local,
            "fwd_bwd_ddp_s": fwd_bwd_sync, "comm_alone_s": comm_alone,
            "overlap": hidden / comm_alone if world > 1 and comm_alone > 0 else 0.0}


result = {"world": world}
if "--allreduce" in sys.argv and world > 1:
    result["allreduce"] = allreduce_table()
steps = 4 if QUICK else 10
from gputorch.examples.mnist1d import CNN  # noqa: E402
result["ddp"] = [ddp_figures("MNIST-1D CNN (the example's)", CNN, 40, 100, steps * 3),
                 ddp_figures("MLP 4 x 1024 (17 MB of gradients)", lambda: mlp(1024, 4), 1024, 256, steps)]
if rank == 0:
    print("RESULT " + json.dumps(result), flush=True)
dist.destroy_process_group()
