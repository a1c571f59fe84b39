"""``python -m gputorch.distributed.run`` starts a script on several processes with torchrun's
environment, and DistributedDataParallel training under it matches single-process training."""
import subprocess
import sys

from tests.distributed._launch import ROOT, WORKERS, assert_all_passed, mpiexec


def test_launcher_sets_torchrun_environment(tmp_path):
    mpiexec()
    script = tmp_path / "show_env.py"
    script.write_text(
        "import os, sys\n"
        "import gputorch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "keys = ['RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'LOCAL_WORLD_SIZE', 'MASTER_ADDR', 'MASTER_PORT']\n"
        "values = [dist.get_rank(), *[os.environ[k] for k in keys], *sys.argv[1:], dist.is_torchelastic_launched()]\n"
        f"open(os.path.join({str(tmp_path)!r}, f'env{{dist.get_rank()}}.txt'), 'w').write(' '.join(map(str, values)))\n")
    proc = subprocess.run([sys.executable, "-m", "gputorch.distributed.run", "--nproc-per-node", "2",
                           "--master-port", "29911", str(script), "--flag", "x"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    lines = [(tmp_path / f"env{r}.txt").read_text() for r in range(2)]
    assert lines == ["0 0 2 0 2 127.0.0.1 29911 --flag x True",
                     "1 1 2 1 2 127.0.0.1 29911 --flag x True"], proc.stdout


def test_launcher_runs_a_worker_module():
    mpiexec()
    proc = subprocess.run([sys.executable, "-m", "gputorch.distributed.run", "--nproc_per_node", "2",
                           str(WORKERS / "collectives.py")], capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_all_passed(proc)
