"""Running a worker program on several MPI processes for the distributed tests.

Workers live in ``tests/distributed/workers/`` and assert their own results (against NumPy or a
single-process run of the same computation); a worker prints ``PASS <rank>`` at the end. The tests
skip when mpi4py or MPICH's ``mpiexec`` is missing (the ``distributed`` extra).
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

WORKERS = Path(__file__).parent / "workers"
ROOT = Path(__file__).resolve().parents[2]


def mpiexec():
    pytest.importorskip("mpi4py", reason="gputorch.distributed needs mpi4py (the 'distributed' extra)")
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.skip("MPICH's mpiexec is not installed (the 'distributed' extra)")
    return found


def run_workers(worker, *args, n=2, timeout=180, env=None, expect_rc=0):
    """Run ``workers/<worker>`` on ``n`` processes; returns the completed process (output checked by
    the caller). Each process sees the repository root on ``sys.path`` (the source tree is tested)."""
    cmd = [mpiexec(), "-n", str(n), sys.executable, str(WORKERS / worker), *map(str, args)]
    full_env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
                    OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    full_env.update(env or {})
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env, cwd=ROOT)
    if expect_rc == 0 and proc.returncode != 0:
        raise AssertionError(f"{worker} failed (rc={proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def assert_all_passed(proc, n=2):
    """Every rank printed ``PASS <rank>`` (the processes' lines may interleave)."""
    passed = sorted(int(r) for r in re.findall(r"PASS (\d+)", proc.stdout))
    assert passed == list(range(n)), proc.stdout + proc.stderr


def backends():
    """The backends to run workers with: "mpi", and "nccl" where (simulated) GPUs give it CUDA tensors."""
    import gputorch
    nccl = pytest.param("nccl", marks=pytest.mark.skipif(
        not gputorch.cuda.is_available() or gputorch.cuda.device_count() < 2,
        reason="the NCCL path needs two (simulated) GPUs"))
    return ["mpi", nccl]
