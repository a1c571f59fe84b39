"""The quickstart example trains to high accuracy, moves between devices and is deterministic."""
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gputorch
from gputorch.examples import quickstart


def test_quickstart_trains_and_moves(device):
    result = quickstart.main(device=device, verbose=False)
    assert result["accuracy"] >= 0.95, result["accuracy"]
    losses = result["losses"]
    assert len(losses) == 300 and all(math.isfinite(v) for v in losses)
    assert losses[-1] < losses[0] / 5, (losses[0], losses[-1])
    assert len(result["moves"]) == 2  # there and back again
    assert result["device"].split(":")[0] == device  # ends where it started


def test_quickstart_is_deterministic():
    first = quickstart.main(device="cpu", epochs=12, verbose=False)
    second = quickstart.main(device="cpu", epochs=12, verbose=False)
    assert first["losses"] == second["losses"]


def test_quickstart_moves_dtype_on_cpu(capsys):
    if gputorch.cuda.is_available():
        pytest.skip("with a GPU the quickstart moves to CUDA instead")
    result = quickstart.main(device="cpu", epochs=8, log_every=1)
    out = capsys.readouterr().out
    assert result["moves"] == ["to(gputorch.float64) on the CPU (no GPU here)", "back to(gputorch.float32)"]
    assert "epoch    4: moved parameters and data to(gputorch.float64)" in out
    assert "-> cpu, gputorch.float64; training continues" in out
    assert "epoch    6: moved parameters and data back to(gputorch.float32)" in out
    assert out.count("loss ") == 8 and "final accuracy:" in out


def test_make_moons_shapes_and_labels():
    x, y = quickstart.make_moons(n_per_class=10, seed=1)
    assert x.shape == (20, 2) and x.dtype.name == "float32"
    assert y.tolist() == [0] * 10 + [1] * 10
    assert abs(float(x.mean())) < 1e-6 and abs(float(x.std()) - 1) < 1e-5


def test_python_dash_m_gputorch_runs_the_quickstart():
    parent = str(Path(gputorch.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=parent)
    r = subprocess.run([sys.executable, "-m", "gputorch", "--device", "cpu"], capture_output=True,
                       text=True, timeout=300, cwd=parent, env=env)
    assert r.returncode == 0, r.stderr
    assert "two moons" in r.stdout and "moved parameters" in r.stdout
    acc = float(r.stdout.split("final accuracy:")[1].split("%")[0])
    assert acc >= 95.0, r.stdout


def test_quickstart_runs_unchanged_on_pytorch():
    """The docstring's promise: swap the import and it runs on PyTorch."""
    torch = pytest.importorskip("torch")
    source = Path(quickstart.__file__).read_text()
    assert "import gputorch as torch\n" in source
    namespace = {"__name__": "quickstart_on_torch"}
    exec(compile(source.replace("import gputorch as torch\n", "import torch\n"), "quickstart_torch", "exec"),
         namespace)
    assert namespace["torch"] is torch
    result = namespace["main"](device="cpu", verbose=False)
    assert result["accuracy"] >= 0.95


def test_readme_quickstart_sample_runs(capsys):
    """The code sample in README.md runs as printed and trains."""
    readme = Path(__file__).resolve().parents[1] / "README.md"
    if not readme.exists():
        pytest.skip("README.md is not beside the tests (tests run outside the repository)")
    text = readme.read_text()
    start = text.index("```python\n", text.index("## Quickstart")) + len("```python\n")
    code = text[start:text.index("```", start)]
    exec(compile(code, "README.md quickstart", "exec"), {"__name__": "readme_quickstart"})
    loss = float(capsys.readouterr().out.split("loss")[1])
    assert loss < 0.05
