"""bench/gpu_check.py: without a GPU it exits 2 with a one-line reason; its helpers (generated MNIST
files, the examples' command lines, the Markdown report) work here."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from bench import gpu_check  # noqa: E402


def _run(env_changes):
    env = dict(os.environ)
    env.pop("GPUTORCH_SIMULATE_CUDA", None)
    env.update(env_changes)
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-m", "bench.gpu_check", "--out", os.devnull + "-unused"], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(gpu_check.gpu_problem() is None, reason="this machine has a GPU: the check would run")
def test_without_a_gpu_exits_2_saying_why():
    r = _run({})
    assert r.returncode == gpu_check.EXIT_NO_GPU == 2
    assert r.stdout == ""
    message = r.stderr.strip()
    assert "\n" not in message and "Traceback" not in message
    assert message.startswith("gpu_check needs a machine with an NVIDIA GPU and CuPy: ")
    assert ("CuPy is not installed" in message) or ("no CUDA device is visible" in message), message
    assert not os.path.exists(os.devnull + "-unused")


def test_the_simulated_device_is_refused():
    r = _run({"GPUTORCH_SIMULATE_CUDA": "1"})
    assert r.returncode == 2
    assert "GPUTORCH_SIMULATE_CUDA is set" in r.stderr and "Traceback" not in r.stderr


def test_unknown_step_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        gpu_check.main(["--skip", "tests,nonsense"])
    assert e.value.code == 2
    assert "unknown step(s) nonsense" in capsys.readouterr().err


def test_generated_mnist_files_read_back(tmp_path):
    from gputorch.examples import mnist_lenet
    folder = gpu_check.write_mnist_files(str(tmp_path), n_train=40, n_test=10)
    assert mnist_lenet.missing_files(folder) == []
    images = mnist_lenet.read_idx(os.path.join(folder, "train-images-idx3-ubyte"))
    labels = mnist_lenet.read_idx(os.path.join(folder, "train-labels-idx1-ubyte"))
    assert images.shape == (40, 28, 28) and images.dtype == np.uint8
    assert labels.shape == (40,) and set(np.unique(labels)) <= set(range(10))
    k, img = int(labels[0]), images[0]
    r, c = 2 + 5 * (k // 4), 2 + 6 * (k % 4)
    assert (img[r:r + 6, c:c + 6] == 250).all() and img.max() == 250
    assert mnist_lenet.read_idx(os.path.join(folder, "t10k-images-idx3-ubyte")).shape == (10, 28, 28)


@pytest.mark.parametrize("name, args, limit", [e for e in gpu_check.EXAMPLES if e[1][0] == "-m"],
                         ids=[e[0] for e in gpu_check.EXAMPLES if e[1][0] == "-m"])
def test_example_command_lines_use_existing_options(name, args, limit):
    module = args[1]
    helper = [sys.executable, "-m", module] + (["demo", "--help"] if module == "gputorch" else ["--help"])
    r = subprocess.run(helper, cwd=REPO, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert r.returncode == 0, r.stderr
    options = [a for a in args[2:] if a.startswith("--")]
    assert options
    for option in options:
        assert option in r.stdout, (name, option)
    assert limit <= 180


def test_quickstart_command_trains():
    """The quickstart step's code runs (on the CPU here, a few epochs) and prints an accuracy."""
    code = gpu_check.EXAMPLES[0][1][1].replace("device='cuda', epochs=60", "device='cpu', epochs=3")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert r.returncode == 0, r.stderr
    assert 0.0 <= float(r.stdout.strip().splitlines()[-1].split()[-1]) <= 1.0


def test_markdown_report():
    steps = [{"name": "tests_cuda", "command": "python -m pytest", "ok": True, "status": 0, "seconds": 12.3,
              "log": "/x/tests_cuda.log", "tail": "....\n100 passed, 2 skipped in 12.0s"},
             {"name": "example_demo", "command": "python -m gputorch demo", "ok": False, "status": 1,
              "seconds": 4.0, "log": "/x/example_demo.log", "tail": "Traceback\nValueError: boom"}]
    report = {"date": "2026-01-01T00:00:00+00:00", "seconds": 16.3, "ok": False, "steps": steps,
              "environment": {"gpu": "NVIDIA H100", "memory_bytes": 80 * 2**30, "compute_capability": "9.0",
                              "driver_version": 13000, "runtime_version": 12090, "cupy": "14.2.0",
                              "numpy": "2.4", "torch": None}}
    md = gpu_check.render_markdown(report)
    assert "NVIDIA H100 (80 GiB, compute capability 9.0)" in md and "**FAILED**" in md
    assert "| tests_cuda | ok | 12 | 100 passed, 2 skipped in 12.0s |" in md
    assert "| example_demo | FAILED (1) | 4 |" in md
    assert "## example_demo" in md and "ValueError: boom" in md and "## tests_cuda" not in md


def test_steps_share_the_time_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_check, "_deadline", [gpu_check.time.perf_counter() + 60])
    done = gpu_check.run_command("quick", ["-c", "print('hello')"], 30, str(tmp_path))
    assert done["ok"] and done["status"] == 0 and done["tail"] == "hello"
    assert (tmp_path / "quick.log").read_text() == "hello\n"
    slow = gpu_check.run_command("slow", ["-c", "import time; print('start', flush=True); time.sleep(30)"],
                                 6, str(tmp_path))
    assert not slow["ok"] and slow["status"] == "timeout" and 5 < slow["seconds"] < 20
    assert "start" in slow["tail"] and "TIMED OUT after 6" in slow["tail"]
    monkeypatch.setattr(gpu_check, "_deadline", [gpu_check.time.perf_counter() + 2])
    skipped = gpu_check.run_command("late", ["-c", "print(1)"], 30, str(tmp_path))
    assert skipped["status"] == "not run" and not skipped["ok"] and not (tmp_path / "late.log").exists()
