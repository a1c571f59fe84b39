"""Character-level transformer example: causal, learns, and gradient checkpointing gives the same
losses with a much lower activation peak (measured by the memory profiler)."""
import numpy as np
import pytest

import gputorch
from gputorch.examples import char_transformer as ct

TEXT = "the quick brown fox jumps over the lazy dog. " * 40
SMALL = dict(steps=30, batch_size=4, seq_len=16, d_model=16, heads=4, layers=2, lr=1e-2, log=lambda line: None)


def test_char_data_batches_are_shifted_windows():
    data = ct.CharData("abcabcabd")
    assert data.vocab == ["a", "b", "c", "d"]
    x, y = data.batch(np.random.default_rng(0), 5, 3)
    assert x.shape == y.shape == (5, 3) and x.dtype == np.int64
    np.testing.assert_array_equal(x[:, 1:], y[:, :-1])
    for row_x, row_y in zip(x, y):
        assert (data.decode(row_x) + data.decode(row_y)[-1]) in "abcabcabd"


def test_model_is_causal(device):
    gputorch.manual_seed(0)
    model = ct.CharTransformer(10, seq_len=12, d_model=16, heads=4, layers=2).to(device)
    a = gputorch.tensor([[1, 2, 3, 4, 5, 6, 7, 8]], device=device)
    b = a.clone()
    b[0, 5:] = 9  # change only the last three characters
    la, lb = model(a), model(b)
    assert tuple(la.shape) == (1, 8, 10)
    np.testing.assert_allclose(la[0, :5].detach().cpu().numpy(), lb[0, :5].detach().cpu().numpy(), atol=1e-5)
    assert not np.allclose(la[0, 5:].detach().cpu().numpy(), lb[0, 5:].detach().cpu().numpy(), atol=1e-3)


def test_training_learns(device):
    out = ct.train(ct.CharData(TEXT), device, **dict(SMALL, steps=60))
    losses = out["losses"]
    assert len(losses) == 60 and out["report"] is None
    assert np.mean(losses[-10:]) < 0.6 * np.mean(losses[:5]), (losses[:5], losses[-10:])


def test_checkpointing_same_losses_lower_activation_peak(device):
    data = ct.CharData(TEXT)
    # long enough sequences and three blocks: activations dominate, as in real models
    settings = dict(SMALL, steps=10, seq_len=32, batch_size=8, layers=3)
    off = ct.train(data, device, checkpoint=False, profile=True, **settings)
    on = ct.train(data, device, checkpoint=True, profile=True, **settings)
    np.testing.assert_allclose(on["losses"], off["losses"], rtol=1e-5)
    act_off = off["report"].category_peaks["activations"]
    act_on = on["report"].category_peaks["activations"]
    assert act_on < 0.2 * act_off, (act_on, act_off)  # one block's inner activations instead of three
    assert on["report"].peak_bytes < 0.8 * off["report"].peak_bytes
    # parameters, gradients and optimizer state do not change with checkpointing
    for category in ("parameters", "gradients", "optimizer_state"):
        assert on["report"].current[category] == off["report"].current[category] > 0
    lines = ct.compare(off, on)
    assert "peak activations" in lines[2] and lines[-1].startswith("final loss")


def test_checkpointing_replays_dropout_masks(device):
    data = ct.CharData(TEXT)
    settings = dict(SMALL, steps=5, dropout=0.3)
    off = ct.train(data, device, checkpoint=False, **settings)
    on = ct.train(data, device, checkpoint=True, **settings)
    plain = ct.train(data, device, checkpoint=False, **dict(settings, dropout=0.0))
    # dropout really acts (the losses differ from the dropout-free run) ...
    assert max(abs(a - b) for a, b in zip(off["losses"], plain["losses"])) > 1e-3
    # ... and the recomputation draws the same masks as the first forward pass
    np.testing.assert_allclose(on["losses"], off["losses"], rtol=1e-5)


def test_generate_continues_the_prompt():
    out = ct.train(ct.CharData(TEXT), "cpu", **SMALL)
    text = ct.generate(out["model"], ct.CharData(TEXT), "the ", length=20)
    assert text.startswith("the ") and len(text) == 24 and set(text) <= set(TEXT)


def test_default_text_is_real_prose():
    text = ct.default_text()
    assert len(text) > 50_000 and "gradient" in text and "tensor" in text.lower()


def test_cli_runs_and_compares(tmp_path, capsys):
    f = tmp_path / "t.txt"
    f.write_text(TEXT)
    assert ct.main(["--text", str(f), "--steps", "8", "--seq-len", "16", "--d-model", "16", "--batch-size", "4",
                    "--device", "cpu", "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "checkpointing off:" in out and "checkpointing on:" in out and "peak activations" in out
    assert (tmp_path / "r" / "checkpoint_on.html").exists() and (tmp_path / "r" / "checkpoint_off.json").exists()


@pytest.mark.parametrize("args, code, message", [
    (["--text", "/no/such/file.txt"], 1, "--text /no/such/file.txt: No such file"),
    (["--steps", "0"], 2, "--steps must be positive"),
    (["--d-model", "6"], 2, "multiple of the 4 attention heads"),
    (["--dropout", "1"], 2, "--dropout must be in [0, 1)"),
    (["--device", "gpu"], 2, "invalid device 'gpu'"),
])
def test_cli_bad_input(args, code, message, capsys):
    try:
        status = ct.main(args)
    except SystemExit as e:  # argparse usage errors
        status = e.code
    assert status == code
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and "Traceback" not in "\n".join(err)


def test_cli_text_too_short(tmp_path, capsys):
    f = tmp_path / "short.txt"
    f.write_text("abc")
    assert ct.main(["--text", str(f), "--device", "cpu"]) == 2
    assert "need more than --seq-len + 1" in capsys.readouterr().err
