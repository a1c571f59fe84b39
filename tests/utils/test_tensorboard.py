"""SummaryWriter: the events it writes read back with TensorBoard's own reader as PyTorch's
SummaryWriter's do (scalars, scalar groups, histograms, text)."""
import os

import numpy as np
import pytest

import gputorch

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

from gputorch.utils.tensorboard import SummaryWriter  # noqa: E402

VALUES = np.random.default_rng(0).standard_normal(1000) * 3


def _write(writer_cls, log_dir, to_tensor):
    with writer_cls(log_dir) as w:
        for step in range(5):
            w.add_scalar("loss", to_tensor(np.float32(1.0 / (step + 1))), step)
            w.add_scalars("acc", {"train": 0.5 + step / 10, "test": 0.4 + step / 20}, step)
        w.add_histogram("weights", to_tensor(VALUES), 3)
        w.add_histogram("coarse", to_tensor(VALUES), 4, bins=10)
        w.add_text("notes", "**hello** tensorboard", 2)


def _read(path):
    acc = EventAccumulator(path, size_guidance={"scalars": 0, "histograms": 0, "tensors": 0})
    acc.Reload()
    return acc


def test_events_read_back_like_torch(tmp_path, device):
    ours_dir, theirs_dir = str(tmp_path / "ours"), str(tmp_path / "theirs")
    _write(SummaryWriter, ours_dir, lambda a: gputorch.tensor(a, device=device))
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    _write(TorchWriter, theirs_dir, torch.tensor)
    ours, theirs = _read(ours_dir), _read(theirs_dir)
    assert ours.Tags()["scalars"] == theirs.Tags()["scalars"] == ["loss"]
    assert [(e.step, e.value) for e in ours.Scalars("loss")] == [(e.step, e.value) for e in theirs.Scalars("loss")]
    assert {d for d in os.listdir(ours_dir) if os.path.isdir(os.path.join(ours_dir, d))} == \
        {d for d in os.listdir(theirs_dir) if os.path.isdir(os.path.join(theirs_dir, d))} == {"acc_train", "acc_test"}
    for run in ("acc_train", "acc_test"):
        a, b = _read(os.path.join(ours_dir, run)), _read(os.path.join(theirs_dir, run))
        assert [(e.step, e.value) for e in a.Scalars("acc")] == [(e.step, e.value) for e in b.Scalars("acc")]
    for tag in ("weights", "coarse"):
        h, t = ours.Histograms(tag)[0], theirs.Histograms(tag)[0]
        assert h.step == t.step
        hv, tv = h.histogram_value, t.histogram_value
        assert (hv.num, hv.min, hv.max) == (tv.num, tv.min, tv.max)
        np.testing.assert_allclose([hv.sum, hv.sum_squares], [tv.sum, tv.sum_squares], rtol=1e-6)
        assert sum(hv.bucket) == hv.num
        assert list(hv.bucket_limit) == sorted(hv.bucket_limit) and hv.bucket_limit[-1] >= hv.max
    text = ours.Tensors("notes/text_summary")[0]
    assert text.step == 2 and text.tensor_proto.string_val == [b"**hello** tensorboard"]
    assert ours.SummaryMetadata("notes/text_summary").plugin_data.plugin_name == "text"


def test_default_log_dir_and_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_exp")
    assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_exp")
    with pytest.raises(ValueError, match="scalar should be 0D"):
        w.add_scalar("x", np.ones(3))
    with pytest.raises(ValueError, match="The histogram is empty"):
        w.add_histogram("h", np.array([np.nan]))
    w.close()
    assert any(f.startswith("events.out.tfevents") for f in os.listdir(w.get_logdir()))
