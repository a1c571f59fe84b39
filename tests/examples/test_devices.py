"""The devices example: a model and its optimizer moved mid-training keep training as if they
had not moved; checkpoints resume exactly on the CPU; PyTorch's safetensors weights load."""
import numpy as np
import pytest

import gputorch
from gputorch.examples import devices


def quiet(*args, **kwargs):
    pass


def test_move_mid_training_matches_staying_put(device):
    lines = []
    moved, staying, target = devices.move_mid_training(gputorch.device(device), steps=8, say=lines.append)
    assert len(moved) == len(staying) == 16
    np.testing.assert_allclose(moved, staying, rtol=1e-5)
    assert moved[-1] < moved[0]
    if device == "cuda":
        assert target == ("cpu", None)
    elif gputorch.cuda.is_available():
        assert target == ("cuda", None)
    else:
        assert target == ("cpu", gputorch.float64)
    # the optimizer state is where it was right after the move, and follows at the next step
    assert "Adam state still:" in lines[1] and "the same 6 Parameter objects" in lines[1]
    expected = f"{'cuda:0' if target[0] == 'cuda' else 'cpu'} {target[1] or gputorch.float32}"
    assert lines[2].startswith(f"after the next step, Adam state: {expected};"), lines[2]


def test_checkpoint_resumes_exactly_on_the_cpu(device, tmp_path):
    resumed, uninterrupted = devices.checkpoint_and_resume(gputorch.device(device), str(tmp_path), steps=5,
                                                           say=quiet)
    np.testing.assert_allclose(resumed, uninterrupted, rtol=1e-5 if device == "cuda" else 0)


def test_pytorch_safetensors_weights_give_pytorchs_outputs(device, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("safetensors")
    diff = devices.load_pytorch_weights(gputorch.device(device), directory=str(tmp_path), say=quiet)
    assert diff is not None and diff < 1e-5


def test_weights_of_another_architecture_are_rejected(tmp_path, capsys):
    pytest.importorskip("safetensors")
    from gputorch.serialization import save_safetensors
    path = tmp_path / "other.safetensors"
    save_safetensors({"0.weight": gputorch.zeros(3, 3)}, path)
    assert devices.main(["--device", "cpu", "--weights", str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: --weights {path}: ")


def test_cli(capsys, tmp_path):
    assert devices.main(["--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "1. Moving a model" in out and "2. Checkpoint" in out and "3. Weights saved by PyTorch" in out
    assert devices.main(["--weights", str(tmp_path / "missing.safetensors")]) == 1
    assert "no such file" in capsys.readouterr().err
