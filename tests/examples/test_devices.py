"""The devices example: a model and its optimizer moved mid-training (and back) keep training as if
they had not moved, the optimizer's state following at the next step; checkpoints resume exactly
on the CPU; PyTorch's safetensors weights give PyTorch's outputs."""
import numpy as np
import pytest

import gputorch
from gputorch.examples import devices


def quiet(*args, **kwargs):
    pass


def test_move_mid_training_and_back_matches_staying_put(device):
    run = devices.move_mid_training(gputorch.device(device), steps=8, say=quiet)
    moved, staying = run["moved"], run["staying"]
    assert len(moved) == len(staying) == 24
    np.testing.assert_allclose(moved, staying, rtol=1e-5)
    assert moved[16] < 0.9 * moved[0]  # the same minibatch, two epochs later: it learns

    start, away, back = run["route"]
    if device == "cuda":
        assert str(away[0]) == "cpu" and away[1] is None
    elif gputorch.cuda.is_available():
        assert str(away[0]) == "cuda:0" and away[1] is None
    else:
        assert away == (gputorch.device("cpu"), gputorch.float64)
    assert back[0] == start[0]

    # the state stays where it was when the model moves, and follows it at the next step
    where = {"cpu": "cpu", "cuda": "cuda:0"}
    home = [f"{where[device]} float32"]
    there = [f"{where[away[0].type]} {'float64' if away[1] is not None else 'float32'}"]
    (params_1, held_1, followed_1), (params_2, held_2, followed_2) = run["state"]
    assert params_1 == there and held_1 == home and followed_1 == there
    assert params_2 == home and held_2 == there and followed_2 == home


def test_optimizer_state_follows_a_real_device_move():
    """On a machine with a GPU (or GPUTORCH_SIMULATE_CUDA) the state tensors land on the GPU."""
    if not gputorch.cuda.is_available():
        pytest.skip("needs a (simulated) GPU")
    model = devices.make_model()
    opt = gputorch.optim.Adam(model.parameters(), lr=1e-2)
    devices.train_steps(model, opt, devices.make_data(64), 1)
    model.to("cuda")
    assert all(t.device.type == "cpu" for t in devices.state_tensors(opt))
    devices.train_steps(model, opt, devices.make_data(64), 1)
    state = devices.state_tensors(opt)
    assert len(state) == 12 and all(t.device == gputorch.device("cuda:0") for t in state)


def test_checkpoint_resumes_exactly_on_the_cpu(device, tmp_path):
    resumed, uninterrupted = devices.checkpoint_and_resume(gputorch.device(device), str(tmp_path), steps=5,
                                                           say=quiet)
    assert len(resumed) == 5
    np.testing.assert_allclose(resumed, uninterrupted, rtol=1e-5 if device == "cuda" else 0)


def test_pytorch_safetensors_weights_give_pytorchs_outputs(device, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("safetensors")
    lines = []
    diff = devices.load_pytorch_weights(gputorch.device(device), directory=str(tmp_path), say=lines.append)
    assert diff is not None and diff < 1e-5
    assert "(1732 weights)" in lines[1]


def test_given_weights_file_is_compared_with_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    st = pytest.importorskip("safetensors.torch")
    torch.manual_seed(5)
    reference = devices.make_torch_model(torch)
    path = tmp_path / "given.safetensors"
    st.save_file(reference.state_dict(), str(path))
    diff = devices.load_pytorch_weights(gputorch.device("cpu"), str(path), say=quiet)
    assert diff < 1e-5
    # and the weights really are torch's: the gputorch model's first bias is the file's
    model = devices.make_model()
    model.load_state_dict(gputorch.serialization.load_safetensors(str(path)))
    np.testing.assert_array_equal(model[0].bias.detach().numpy(), reference[0].bias.detach().numpy())


def test_weights_of_another_architecture_are_rejected(tmp_path, capsys):
    pytest.importorskip("safetensors")
    from gputorch.serialization import save_safetensors
    path = tmp_path / "other.safetensors"
    save_safetensors({"0.weight": gputorch.zeros(3, 3)}, path)
    assert devices.main(["--device", "cpu", "--weights", str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: --weights {path}: ")


def test_a_file_that_is_not_safetensors_is_one_line(tmp_path, capsys):
    pytest.importorskip("safetensors")
    path = tmp_path / "junk.safetensors"
    path.write_bytes(b"not a safetensors file at all")
    assert devices.main(["--device", "cpu", "--weights", str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: --weights {path}: ")


def test_cli(capsys, tmp_path):
    assert devices.main(["--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "1. Moving a model" in out and "2. Checkpoint" in out and "3. Weights saved by PyTorch" in out
    assert ("no second device here" in out) == (not gputorch.cuda.is_available())
    assert devices.main(["--weights", str(tmp_path / "missing.safetensors")]) == 1
    assert "no such file" in capsys.readouterr().err
