"""The parts of gputorch.distributed that need no second process: names, errors before
initialisation, reduction names, futures, the launcher's command line."""
import argparse

import pytest

import gputorch
import gputorch.distributed as dist
from gputorch.distributed import run as launcher
from gputorch.distributed.work import Future


def test_uninitialised_calls_raise_as_pytorch():
    assert dist.is_initialized() is False
    for call in (dist.get_rank, dist.get_world_size, lambda: dist.all_reduce(gputorch.ones(2)), dist.barrier):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            call()


def test_names_match_torch():
    tdist = pytest.importorskip("torch.distributed")
    for name in ("all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter",
                 "reduce_scatter_tensor", "gather", "scatter", "all_to_all_single", "all_to_all", "send", "recv",
                 "isend", "irecv", "barrier", "monitored_barrier", "broadcast_object_list", "all_gather_object",
                 "gather_object", "scatter_object_list", "init_process_group", "destroy_process_group",
                 "new_group", "get_rank", "get_world_size", "get_backend", "is_initialized", "P2POp",
                 "batch_isend_irecv", "get_process_group_ranks"):
        assert hasattr(tdist, name) and hasattr(dist, name), name
    for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
        assert int(getattr(dist.ReduceOp, op)) == int(getattr(tdist.ReduceOp, op)), op
    assert issubclass(dist.DistBackendError, dist.DistError) and issubclass(dist.DistError, RuntimeError)


def test_backend_names():
    assert dist.Backend("MPI") == "mpi" and dist.Backend("gloo") == "gloo"
    with pytest.raises(ValueError, match="Invalid backend: 'tcp'"):
        dist.Backend("tcp")


def test_future_then_chains_on_wait():
    seen = []
    fut = Future(None, lambda f: 3)
    chained = fut.then(lambda f: seen.append(f.value()) or f.value() * 2)
    assert seen == []                       # nothing runs before wait
    assert chained.wait() == 6 and seen == [3] and fut.value() == 3
    with pytest.raises(RuntimeError, match="before the future completed"):
        Future(None, lambda f: 1).value()


def test_launcher_command_line(tmp_path):
    parser = launcher._parser()
    args = parser.parse_args(["--nproc-per-node", "3", "--master-port", "1234", "train.py", "--lr", "0.1"])
    cmd = launcher.mpiexec_command(args)
    assert cmd[1:5] == ["-n", "3", "-ppn", "3"]
    assert cmd[cmd.index("MASTER_PORT") + 1] == "1234"
    assert cmd[-3:] == ["train.py", "--lr", "0.1"]
    hosts = tmp_path / "hosts"
    hosts.write_text("a\nb\n")
    args = parser.parse_args(["--nnodes", "2", "--nproc_per_node", "4", "--hostfile", str(hosts), "t.py"])
    cmd = launcher.mpiexec_command(args)
    assert cmd[1:5] == ["-n", "8", "-ppn", "4"] and cmd[cmd.index("-f") + 1] == str(hosts)
    with pytest.raises(SystemExit, match="needs --hostfile"):
        launcher.mpiexec_command(parser.parse_args(["--nnodes", "2", "t.py"]))
    assert isinstance(args, argparse.Namespace)
