"""The README's training-loop sample runs as printed, on gputorch and (with the imports swapped)
on PyTorch, and learns its task; the README names commands and files that exist."""
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
pytestmark = pytest.mark.skipif(not README.exists(), reason="README.md is not beside the tests")


def code_block_after(heading):
    text = README.read_text()
    start = text.index("```python\n", text.index(heading)) + len("```python\n")
    return text[start:text.index("```", start)]


def run_sample(code, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the sample writes model.pt
    exec(compile(code, "README training loop", "exec"), {"__name__": "readme_sample"})
    out = capsys.readouterr().out
    return float(re.search(r"training accuracy ([\d.]+)%", out).group(1))


def test_training_loop_sample_runs_and_learns(tmp_path, monkeypatch, capsys):
    code = code_block_after("## A training loop")
    assert run_sample(code, tmp_path, monkeypatch, capsys) >= 97.0
    import gputorch
    state = gputorch.load(str(tmp_path / "model.pt"))
    assert sorted(state) == ["0.bias", "0.weight", "3.bias", "3.weight"]
    assert tuple(state["0.weight"].shape) == (64, 20)


def test_training_loop_sample_runs_unchanged_on_pytorch(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    code = code_block_after("## A training loop")
    swapped = code.replace("import gputorch as torch\n", "import torch\n").replace(
        "from gputorch import nn\n", "from torch import nn\n")
    assert "import gputorch" not in swapped and "from gputorch" not in swapped
    assert run_sample(swapped, tmp_path, monkeypatch, capsys) >= 97.0


def test_readme_points_at_things_that_exist():
    text = README.read_text()
    root = README.parent
    for path in re.findall(r"`((?:gputorch|kernels|bench|tests|docs)/[\w./-]+)`", text):
        if path.startswith("bench/results/"):  # written by bench/run_all.py, not in the repository
            continue
        assert (root / path).exists(), path
    for module in re.findall(r"python -m gputorch\.examples\.([a-z0-9_]+)", text) + \
            re.findall(r"^\| `(\w+)` \|", text, flags=re.M):
        assert (root / "gputorch" / "examples" / f"{module}.py").exists(), module
