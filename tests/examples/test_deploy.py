"""The deployment example: a short training run, then eager, traced and ONNX Runtime agree and
the table has every runner's accuracy and latencies."""
import pytest

pytest.importorskip("mnist1d")
pytest.importorskip("onnxruntime")
from gputorch.examples import deploy  # noqa: E402


def test_deploy_example_runs_and_agrees(capsys, tmp_path):
    assert deploy.main(["--steps", "60", "--batch", "1", "50", "--out", str(tmp_path / "cnn.onnx")]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "cnn.onnx").stat().st_size > 10_000
    rows = {line[:18].strip(): line[18:].split() for line in out.splitlines()
            if line.startswith(("gputorch eager", "gputorch traced", "ONNX Runtime", "PyTorch eager"))}
    assert {"gputorch eager", "gputorch traced", "ONNX Runtime"} <= set(rows)
    accuracies = {name: cells[0] for name, cells in rows.items()}
    assert len(set(accuracies.values())) == 1, accuracies          # the same predictions everywhere
    for name, cells in rows.items():
        assert float(cells[1]) < 1e-4, (name, cells)                # max |difference| from eager
        assert len(cells) == 4 and all(float(c) > 0 for c in cells[2:])
