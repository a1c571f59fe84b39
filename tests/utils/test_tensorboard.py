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


def _png_pixels(data):
    """Decode the PNGs this writer makes (8-bit RGB/RGBA, no filters): an HWC array."""
    import struct
    import zlib
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        chunks[kind] = chunks.get(kind, b"") + data[pos + 8:pos + 8 + length]
        pos += 12 + length
    w, h, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    c = {2: 3, 6: 4}[color]
    raw = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), dtype=np.uint8).reshape(h, 1 + w * c)
    assert (raw[:, 0] == 0).all()
    return raw[:, 1:].reshape(h, w, c)


def test_images_like_torch(tmp_path, device):
    rng = np.random.default_rng(1)
    cases = {"grey": (rng.random((1, 4, 5)), "CHW"), "rgb": (rng.random((3, 4, 5)), "CHW"),
             "hwc": ((rng.random((4, 5, 3)) * 255).astype(np.uint8), "HWC"), "hw": (rng.random((4, 5)), "HW"),
             "rgba": (rng.random((4, 4, 5)), "CHW"), "batch": (rng.random((3, 3, 4, 5)), "NCHW")}
    with SummaryWriter(str(tmp_path / "ours")) as w:
        for tag, (img, fmt) in cases.items():
            w.add_image(tag, gputorch.tensor(img, device=device), 0, dataformats=fmt)
    ours = _read(str(tmp_path / "ours"))
    got = {tag: _png_pixels(ours.Images(tag)[0].encoded_image_string) for tag in cases}
    assert got["grey"].shape == (4, 5, 3) and (got["grey"][..., 0] == got["grey"][..., 2]).all()
    np.testing.assert_array_equal(got["hwc"], cases["hwc"][0])
    assert got["batch"].shape == (4, 15, 3) and got["rgba"].shape == (4, 5, 4)
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    with TorchWriter(str(tmp_path / "theirs")) as w:
        for tag, (img, fmt) in cases.items():
            w.add_image(tag, torch.tensor(img), 0, dataformats=fmt)
    theirs = _read(str(tmp_path / "theirs"))
    pil = pytest.importorskip("PIL.Image")
    import io
    for tag in cases:
        mine, ref = ours.Images(tag)[0], theirs.Images(tag)[0]
        assert (mine.width, mine.height) == (ref.width, ref.height)
        np.testing.assert_array_equal(got[tag], np.asarray(pil.open(io.BytesIO(ref.encoded_image_string))))


def test_add_graph_reads_back_as_a_graphdef(tmp_path, device):
    """add_graph: TensorBoard's GraphDef of the traced model, ops under their module paths, every
    edge to a node of the graph, traced shapes on every node."""
    gputorch.manual_seed(0)
    model = gputorch.nn.Sequential(gputorch.nn.Conv1d(1, 4, 3), gputorch.nn.ReLU(), gputorch.nn.Flatten(),
                                   gputorch.nn.Linear(4 * 8, 2)).to(device)
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_graph(model, gputorch.randn(5, 1, 10, device=device))
        with pytest.raises(ValueError, match="needs input_to_model"):
            writer.add_graph(model)
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    nodes = {n.name: n for n in acc.Graph().node}
    ops = [(n.name, n.op) for n in acc.Graph().node if "/" in n.name and n.op not in ("IO Node", "prim::GetAttr")]
    assert ops == [("0/Convolution_0", "Convolution"), ("1/Relu_1", "Relu"), ("2/View_2", "View"),
                   ("3/Linear_3", "Linear")]
    assert list(nodes["0/Convolution_0"].input) == ["input/input0", "0/weight", "0/bias"]
    assert all(i in nodes for n in nodes.values() for i in n.input)
    shape = [d.size for d in nodes["3/Linear_3"].attr["_output_shapes"].list.shape[0].dim]
    assert shape == [5, 2] and list(nodes["output/output0"].input) == ["3/Linear_3"]
