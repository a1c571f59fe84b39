"""examples/ddp_mnist1d.py: 2 processes (launched by gputorch.distributed.run) train the MNIST-1D CNN to
the accuracy one process reaches on the same batches."""
import json
import os
import re
import subprocess
import sys

import pytest

from tests.distributed._launch import ROOT, mpiexec

STEPS = 300


def _train(tmp_path, processes):
    out = tmp_path / f"result{processes}.json"
    cmd = [sys.executable, "-m", "gputorch.examples.ddp_mnist1d", "--steps", str(STEPS), "--json", str(out)]
    if processes > 1:
        cmd[1:3] = ["-m", "gputorch.distributed.run", "--nproc-per-node", str(processes), "-m",
                    "gputorch.examples.ddp_mnist1d"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(out.read_text()), proc.stdout


def test_two_processes_reach_the_single_process_accuracy(tmp_path):
    pytest.importorskip("mnist1d", reason="the MNIST-1D data come from the 'demo' extra")
    mpiexec()
    single, _ = _train(tmp_path, 1)
    pair, stdout = _train(tmp_path, 2)
    assert single["world"] == 1 and pair["world"] == 2
    accuracies = re.findall(r"test accuracy ([0-9.]+%)", stdout)           # the ranks' lines may interleave
    assert len(accuracies) == 2 and accuracies[0] == accuracies[1], stdout      # replicas stay identical
    assert single["accuracy"] > 0.5                                               # it learns in 300 steps
    assert abs(pair["accuracy"] - single["accuracy"]) < 0.03, (pair, single)
