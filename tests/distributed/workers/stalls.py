"""Failures that must be named, never hang: a rank that leaves early, a rank that skips a collective,
and (at DETAIL debug level) mismatched shapes. ``argv[1]`` picks the scenario, ``argv[2]`` the backend."""
import sys
import time


sys.path.insert(0, __import__("os").path.dirname(__file__))
from _common import passed, setup  # noqa: E402

import gputorch as torch  # noqa: E402
import gputorch.distributed as dist  # noqa: E402

scenario = sys.argv[1]
rank, n, dev = setup(sys.argv[2] if len(sys.argv) > 2 else "mpi", timeout_s=2)
dist.all_reduce(torch.ones(2, device=dev))                      # collective #1: everyone joins

if scenario == "early_exit":
    if rank == n - 1:
        print(f"PASS {rank}", flush=True)
        sys.exit(0)                                              # leaves without joining #2
    start = time.monotonic()
    try:
        dist.all_reduce(torch.ones(2, device=dev))
    except dist.DistBackendError as e:
        elapsed = time.monotonic() - start
        assert 1.5 < elapsed < 10, elapsed
        message = str(e)
        assert "all_reduce (collective #2 of the default process group)" in message, message
        assert f"rank(s) [{n - 1}] did not join it" in message, message
        assert "timeout of 2 s" in message, message
        print(f"PASS {rank}", flush=True)
        sys.stdout.flush()
        import os
        os._exit(0)                                              # the job is broken: leave at once
    raise AssertionError("the collective with a missing rank did not raise")

if scenario == "skipped_collective":
    try:
        if rank == 0:
            dist.barrier()                                       # the others broadcast instead
        else:
            dist.broadcast(torch.zeros(3, device=dev), src=0)
    except dist.DistBackendError as e:
        message = str(e)
        if rank == 0:
            assert "barrier (collective #2 of the default process group)" in message, message
            assert "rank 1 called broadcast as collective #2 instead" in message, message
        else:
            assert "broadcast (collective #2" in message and "rank 0 called barrier" in message, message
        print(f"PASS {rank}", flush=True)
        import os
        os._exit(0)
    raise AssertionError("mismatched collectives did not raise")

if scenario == "detail_mismatch":
    dist.set_debug_level(dist.DebugLevel.DETAIL)
    shape = (3,) if rank == 0 else (4,)
    try:
        dist.all_reduce(torch.ones(shape, device=dev))
    except RuntimeError as e:
        message = str(e)
        assert "Detected mismatch between collectives" in message, message
        assert "rank 0: all_reduce SUM (3,) gputorch.float32" in message, message
        assert "rank 1: all_reduce SUM (4,) gputorch.float32" in message, message
    else:
        raise AssertionError("mismatched shapes were not detected")
    dist.set_debug_level(dist.DebugLevel.OFF)
    dist.barrier()
    passed(rank)
