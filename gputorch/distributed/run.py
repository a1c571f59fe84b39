"""``python -m gputorch.distributed.run``: start a training script on several processes (torchrun's flags).

    python -m gputorch.distributed.run --nproc-per-node 2 train.py --epochs 3
    python -m gputorch.distributed.run --nnodes 2 --nproc-per-node 8 --hostfile hosts train.py

It runs MPICH's ``mpiexec`` (Hydra), which starts every process, on this machine or on the machines
of a host file, and each process gets torchrun's environment: ``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK`` (the node), ``MASTER_ADDR``, ``MASTER_PORT``.
With several machines, one launch on the first machine starts them all (``--hostfile`` lists the
machines, one per line, as Hydra reads it); ``--node-rank`` other than 0 only prints that.
"""
import argparse
import os
import shutil
import subprocess
import sys

__all__ = ["main", "mpiexec_command"]


def _parser():
    p = argparse.ArgumentParser(prog="python -m gputorch.distributed.run",
                                description="Start a script on several processes over MPI (torchrun's flags).")
    p.add_argument("--nproc-per-node", "--nproc_per_node", dest="nproc_per_node", default="1",
                   help="processes per machine (an integer, or 'cpu' for one per core)")
    p.add_argument("--nnodes", type=int, default=1, help="number of machines")
    p.add_argument("--node-rank", "--node_rank", dest="node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", dest="master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", dest="master_port", type=int, default=29500)
    p.add_argument("--hostfile", default=None, help="machines for --nnodes > 1 (Hydra's host file format)")
    p.add_argument("--standalone", action="store_true", help="one machine (accepted as in torchrun)")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module (python -m)")
    p.add_argument("--no-python", "--no_python", dest="no_python", action="store_true",
                   help="run the script as an executable, not through python")
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    return p


def _mpiexec():
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.path.exists(here) else shutil.which("mpiexec")
    if found is None:
        raise SystemExit("gputorch.distributed.run needs MPICH's mpiexec: install the 'distributed' extra "
                         "(pip install 'gputorch[distributed]')")
    return found


def mpiexec_command(args):
    """The ``mpiexec`` command line for parsed launcher ``args``."""
    nproc = os.cpu_count() if args.nproc_per_node == "cpu" else int(args.nproc_per_node)
    if nproc < 1 or args.nnodes < 1:
        raise SystemExit("--nproc-per-node and --nnodes must be at least 1")
    cmd = [_mpiexec(), "-n", str(nproc * args.nnodes), "-ppn", str(nproc)]
    if args.nnodes > 1:
        if args.hostfile is None:
            raise SystemExit("--nnodes > 1 needs --hostfile listing the machines (one launch starts them all)")
        cmd += ["-f", args.hostfile]
    env = {"MASTER_ADDR": args.master_addr, "MASTER_PORT": str(args.master_port),
           "LOCAL_WORLD_SIZE": str(nproc), "GPUTORCH_DISTRIBUTED_LAUNCHED": "1"}
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        # As torchrun: several processes per machine each with a full BLAS thread pool oversubscribe
        # the cores (measured: a 2-process MNIST-1D step 67 ms instead of 7 ms on 2 cores).
        print("gputorch.distributed.run: setting OMP_NUM_THREADS=1 for each process (set it yourself to "
              "choose another number of BLAS threads)", file=sys.stderr)
        env["OMP_NUM_THREADS"] = "1"
    for k, v in env.items():
        cmd += ["-genv", k, v]
    cmd += [sys.executable, "-m", "gputorch.distributed._bootstrap"]
    if args.module:
        cmd.append("-m")
    if args.no_python:
        cmd.append("--no-python")
    return cmd + [args.script] + list(args.script_args)


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.node_rank != 0:
        print(f"gputorch.distributed.run: node rank {args.node_rank}: the launch on node 0 starts the processes "
              "of every machine of its --hostfile; nothing to do here")
        return 0
    return subprocess.call(mpiexec_command(args))


if __name__ == "__main__":
    sys.exit(main())
