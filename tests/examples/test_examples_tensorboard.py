"""The examples' training curves: ``--tensorboard DIR`` logs them for TensorBoard (read back with its
own reader), and the demo's memory report draws them beside the memory timeline."""
import pytest

import gputorch

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

from gputorch.examples import char_transformer as ct  # noqa: E402
from gputorch.examples.curves import Curves  # noqa: E402


def _scalars(path, tag):
    acc = EventAccumulator(str(path), size_guidance={"scalars": 0})
    acc.Reload()
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def test_char_transformer_logs_each_modes_losses(tmp_path, capsys):
    text = tmp_path / "t.txt"
    text.write_text("the quick brown fox jumps over the lazy dog. " * 30)
    assert ct.main(["--text", str(text), "--steps", "4", "--seq-len", "16", "--d-model", "16", "--batch-size", "4",
                    "--device", "cpu", "--tensorboard", str(tmp_path / "tb")]) == 0
    off, on = _scalars(tmp_path / "tb" / "checkpoint_off", "loss"), _scalars(tmp_path / "tb" / "checkpoint_on", "loss")
    assert [s for s, _ in off] == [s for s, _ in on] == [1, 2, 3, 4]
    assert [v for _, v in off] == pytest.approx([v for _, v in on], rel=1e-5)   # checkpointing changes no loss


def test_demo_curves_in_the_report_and_tensorboard(tmp_path):
    pytest.importorskip("mnist1d")
    from gputorch.examples import demo
    result = demo.run(gputorch.device("cpu"), epochs=2, out_dir=str(tmp_path / "out"), progress=False,
                      say=lambda *a: None, log_every=1, tensorboard=str(tmp_path / "tb"))
    report = result["report"]
    losses = report.scalars["loss"]
    assert [(step, value) for _, step, value in losses] == [(40, pytest.approx(result["losses"][0])),
                                                           (80, pytest.approx(result["losses"][1]))]
    assert [step for _, step, _ in report.scalars["test accuracy"]] == [40, 80]
    assert report.scalars["test accuracy"][-1][2] == pytest.approx(result["accuracy"])
    assert "<h2>Training curves</h2>" in open(result["files"][0]).read()
    assert [s for s, _ in _scalars(tmp_path / "tb", "loss")] == [40, 80]
    assert _scalars(tmp_path / "tb", "test accuracy")[-1][1] == pytest.approx(result["accuracy"])


def test_curves_without_tensorboard_say_what_is_missing(monkeypatch, tmp_path):
    import sys
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    for name in [m for m in sys.modules if m.startswith("gputorch.utils.tensorboard")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ImportError, match=r"--tensorboard needs the tensorboard package.*gputorch\[tensorboard\]"):
        Curves(str(tmp_path))
    Curves(None).add("loss", 1.0, 1)            # no folder: nothing to write, nothing needed


def test_mnist_lenet_logs_loss_per_step_and_accuracy_per_epoch(tmp_path, capsys):
    from gputorch.examples import mnist_lenet as ml
    from tests.examples.test_mnist_lenet import synthetic_digits, write_idx
    for split, n, seed in (("train", 200, 0), ("test", 100, 1)):
        images, labels = synthetic_digits(n, seed)
        write_idx(tmp_path / ml.FILES[split][0], images)
        write_idx(tmp_path / ml.FILES[split][1], labels)
    assert ml.main(["--data", str(tmp_path), "--epochs", "2", "--workers", "0", "--device", "cpu",
                    "--batch-size", "50", "--tensorboard", str(tmp_path / "tb")]) == 0
    assert [s for s, _ in _scalars(tmp_path / "tb", "loss")] == list(range(1, 9))
    assert [s for s, _ in _scalars(tmp_path / "tb", "test accuracy")] == [4, 8]


def test_mnist1d_logs_one_run_per_model(tmp_path, capsys):
    pytest.importorskip("mnist1d")
    from gputorch.examples import mnist1d
    assert mnist1d.main(["--models", "mlp", "--steps", "12", "--device", "cpu", "--tensorboard",
                         str(tmp_path / "tb")]) == 0
    assert [s for s, _ in _scalars(tmp_path / "tb" / "mlp", "loss")] == [2, 4, 6, 8, 10, 12]
    assert len(_scalars(tmp_path / "tb" / "mlp", "test accuracy")) == 6
