"""``gputorch demo``: trains, swaps devices mid-training, writes the memory report; bad options are
one line on stderr with a non-zero exit."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gputorch
from gputorch.__main__ import main

pytest.importorskip("mnist1d")
from gputorch.examples import demo  # noqa: E402

PARAM_BYTES = 5210 * 4  # the CNN's float32 parameters


def quiet(*args, **kwargs):
    pass


def test_demo_trains_and_attributes_memory_exactly(tmp_path):
    result = demo.run(gputorch.device("cpu"), epochs=3, out_dir=str(tmp_path), progress=False, say=quiet)
    assert len(result["losses"]) == 3 and result["losses"][2] < result["losses"][0]
    assert result["accuracy"] > 0.4  # 120 steps; chance is 10%
    report = result["report"]
    assert report.steps == 3 * 40
    now = report.current
    assert now["parameters"] == PARAM_BYTES and now["gradients"] == PARAM_BYTES
    # Adam: exp_avg and exp_avg_sq per parameter, plus a float32 step counter for each of the 8 tensors
    assert now["optimizer_state"] == 2 * PARAM_BYTES + 8 * 4
    assert now["activations"] == 0 and report.leaks == []
    assert report.peak_bytes >= sum(report.peak.values()) > 0
    html, js = (Path(f) for f in result["files"])
    assert html.name == "memory_report.html" and "<html" in html.read_text()[:500].lower()
    saved = json.loads(js.read_text())
    assert saved["peak_bytes"] == report.peak_bytes and saved["steps"] == 120


def test_swap_device_moves_model_and_optimizer_and_training_continues(device, tmp_path):
    if device == "cpu":
        pytest.skip("the swap needs a second device")
    stay = demo.run(gputorch.device("cpu"), epochs=4, out_dir=str(tmp_path / "a"), progress=False, say=quiet)
    lines = []
    moved = demo.run(gputorch.device("cpu"), epochs=4, swap_to=gputorch.device(device),
                     out_dir=str(tmp_path / "b"), progress=False, say=lines.append)
    assert moved["moves"] == [(2, "cpu", "cuda")]
    assert any("model.to('cuda')" in line for line in lines)
    assert any("moved Adam's state too: cuda:0" in line for line in lines)
    # The same training: losses agree with the run that never moved (up to float32 rounding).
    assert moved["losses"] == pytest.approx(stay["losses"], rel=1e-4)
    assert moved["accuracy"] == pytest.approx(stay["accuracy"], abs=0.01)
    assert set(moved["report"].by_device) | set(moved["report"].current_by_device) >= {"cpu", "cuda:0"}


def run_cli(*args, env_drop=()):
    parent = str(Path(gputorch.__file__).resolve().parents[1])
    env = {k: v for k, v in os.environ.items() if k not in env_drop}
    env["PYTHONPATH"] = parent
    return subprocess.run([sys.executable, "-m", "gputorch", *args], capture_output=True, text=True,
                          timeout=300, cwd=parent, env=env)


def test_cli_demo_runs_end_to_end(tmp_path):
    out = tmp_path / "report"
    r = run_cli("demo", "--device", "cpu", "--epochs", "2", "--out", str(out), "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "generated locally by the mnist1d package" in r.stdout
    assert "epoch    2/2" in r.stdout and "test accuracy" in r.stdout
    assert "gputorch memory profile: 80 optimizer step(s)" in r.stdout
    assert (out / "memory_report.html").exists() and (out / "memory_report.json").exists()
    assert str(out / "memory_report.html") in r.stdout


@pytest.mark.parametrize("argv, code, message", [
    (["demo", "--epochs", "1"], 2, "--epochs must be at least 2"),
    (["demo", "--device", "cpu", "--swap-device", "cpu"], 2, "the model already trains on cpu"),
    (["demo", "--device", "cpu", "--swap-device", "gpu"], 2, "invalid device 'gpu'"),
    (["demo", "--device", "mps"], 2, "invalid device 'mps'"),
])
def test_cli_demo_bad_options_are_one_line(argv, code, message, capsys):
    assert main(argv) == code
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], captured.err
    assert lines[0].startswith("gputorch: error: ")


def test_cli_demo_out_must_be_a_folder(tmp_path, capsys):
    f = tmp_path / "file.txt"
    f.write_text("x")
    assert main(["demo", "--device", "cpu", "--out", str(f)]) == 2
    assert "exists and is not a folder" in capsys.readouterr().err


def test_cli_demo_out_that_cannot_be_created(tmp_path, capsys):
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    assert main(["demo", "--device", "cpu", "--out", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot create the folder" in err[0]


def test_cli_demo_epochs_must_be_a_number():
    r = run_cli("demo", "--epochs", "many")
    assert r.returncode == 2 and "Traceback" not in r.stderr and "invalid int value: 'many'" in r.stderr


@pytest.mark.skipif(gputorch.cuda.is_available() and not os.environ.get("GPUTORCH_SIMULATE_CUDA"),
                    reason="needs a machine without a real GPU")
def test_cli_demo_without_a_gpu(capsys):
    r = run_cli("demo", "--device", "cuda", env_drop=("GPUTORCH_SIMULATE_CUDA",))
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    assert "CUDA is not available" in r.stderr and "--device cpu" in r.stderr
    r = run_cli("demo", "--device", "cpu", "--swap-device", env_drop=("GPUTORCH_SIMULATE_CUDA",))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "no second device" in r.stderr and "GPUTORCH_SIMULATE_CUDA=1" in r.stderr


def test_cli_demo_without_mnist1d_says_how_to_install(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "mnist1d", None)  # import mnist1d now raises ImportError
    monkeypatch.setitem(sys.modules, "mnist1d.data", None)
    assert main(["demo", "--device", "cpu", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'gputorch[demo]'" in err[0]


def test_progress_bars_wrap_the_batches_when_asked():
    tqdm = pytest.importorskip("tqdm")
    bar = demo._progress(range(3), "epoch 1/1", True)
    assert isinstance(bar, tqdm.tqdm) and list(bar) == [0, 1, 2]
    assert demo._progress(range(3), "x", False) == range(3)
