"""MNIST-1D's CNN trained data-parallel: each process takes its share of every batch of 100 and
DistributedDataParallel averages the gradients, so N processes train the same model as one process
would on the whole batch (up to float rounding), N times faster where compute dominates.

    python -m gputorch.distributed.run --nproc-per-node 2 -m gputorch.examples.ddp_mnist1d --steps 2000
    python -m gputorch.examples.ddp_mnist1d --steps 2000          # one process, for comparison

Every process prints its test accuracy (they agree: the replicas stay identical) and rank 0 the time
per step; ``--json PATH`` writes rank 0's figures.
"""
import argparse
import json
import os
import sys
import time

import gputorch as torch
import gputorch.distributed as dist
from gputorch import nn
from gputorch.examples.mnist1d import BATCH_SIZE, CNN, LEARNING_RATE, DatasetUnavailable, accuracy, load_mnist1d
from gputorch.nn.parallel import DistributedDataParallel


def train(steps, device, world, rank, seed=0, log=print):
    """Train the CNN for ``steps`` Adam steps of global batch 100; returns (test accuracy, s/step)."""
    x, y, x_test, y_test = (torch.tensor(a, device=device) for a in load_mnist1d())
    torch.manual_seed(seed)
    model = CNN().to(device)
    if world > 1:
        model = DistributedDataParallel(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    share = BATCH_SIZE // world
    start = time.perf_counter()
    for step in range(steps):
        first = (step * BATCH_SIZE) % x.shape[0] + rank * share    # this rank's part of the authors' batch
        rows = slice(first, first + share)
        loss = nn.functional.cross_entropy(model(x[rows]), y[rows])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if rank == 0 and (step + 1) % max(steps // 5, 1) == 0:
            log(f"  step {step + 1:5d}  loss {loss.item():.4f}  ({time.perf_counter() - start:.1f} s)")
    per_step = (time.perf_counter() - start) / steps
    net = model.module if world > 1 else model
    return accuracy(net, x_test, y_test), per_step


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m gputorch.examples.ddp_mnist1d", description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--device", default="cpu", help="cpu, or cuda (each process takes cuda:LOCAL_RANK)")
    parser.add_argument("--json", default=None, help="write rank 0's accuracy and time per step here")
    args = parser.parse_args(argv)
    distributed = "RANK" in os.environ or "PMI_RANK" in os.environ
    if distributed:
        dist.init_process_group("nccl" if args.device == "cuda" else "mpi")
        world, rank = dist.get_world_size(), dist.get_rank()
    else:
        world, rank = 1, 0
    if BATCH_SIZE % world:
        parser.error(f"the batch of {BATCH_SIZE} does not split over {world} processes")
    device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if args.device == "cuda" else "cpu")
    try:
        acc, per_step = train(args.steps, device, world, rank)
    except DatasetUnavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"rank {rank} of {world}: test accuracy {acc:.1%}")
    if rank == 0:
        print(f"{world} process(es), {args.steps} steps: {per_step * 1e3:.2f} ms per step")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"world": world, "accuracy": acc, "ms_per_step": per_step * 1e3, "steps": args.steps}, f)
    if distributed:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
