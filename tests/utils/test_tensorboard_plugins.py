"""SummaryWriter's plugin data read back with TensorBoard's own readers: hyperparameters (HParams
plugin), PR curves (equal to PyTorch's), embeddings (the Projector's files), matplotlib figures, and
scalars served over HTTP by a TensorBoard server started on a loopback port."""
import json
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest

import gputorch

pytest.importorskip("tensorboard")
from google.protobuf import text_format  # noqa: E402
from tensorboard.backend.event_processing import plugin_event_accumulator  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.plugins.hparams import api_pb2  # noqa: E402
from tensorboard.plugins.hparams import metadata as hparams_metadata  # noqa: E402
from tensorboard.plugins.pr_curve import plugin_data_pb2 as pr_data  # noqa: E402
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig  # noqa: E402
from tensorboard.util.tensor_util import make_ndarray  # noqa: E402

from gputorch.utils.tensorboard import SummaryWriter  # noqa: E402


def _reload(path, plugin=False):
    module = plugin_event_accumulator if plugin else None
    acc = (module.EventAccumulator if plugin else EventAccumulator)(path, size_guidance={"tensors": 0, "scalars": 0})
    acc.Reload()
    return acc


def test_hparams_read_back_by_the_hparams_plugin(tmp_path, device):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_hparams({"lr": 0.1, "bs": gputorch.tensor(32, device=device), "opt": "sgd", "amp": True,
                       "unused": None},
                      {"hparam/accuracy": gputorch.tensor(0.75, device=device), "hparam/loss": 0.5},
                      hparam_domain_discrete={"opt": ["sgd", "adam"]}, run_name="trial0", global_step=3)
        with pytest.raises(ValueError, match="should be one of int, float, str, bool"):
            w.add_hparams({"layers": [1, 2]}, {"m": 1.0})
        with pytest.raises(TypeError, match="should have the type"):
            w.add_hparams({"opt": "sgd"}, {"m": 1.0}, hparam_domain_discrete={"opt": [1, 2]})
    acc = _reload(str(tmp_path / "trial0"), plugin=True)
    content = {tag: acc.SummaryMetadata(tag).plugin_data.content for tag in
               (hparams_metadata.EXPERIMENT_TAG, hparams_metadata.SESSION_START_INFO_TAG,
                hparams_metadata.SESSION_END_INFO_TAG)}
    experiment = hparams_metadata.parse_experiment_plugin_data(content[hparams_metadata.EXPERIMENT_TAG])
    infos = {i.name: i for i in experiment.hparam_infos}
    assert sorted(infos) == ["amp", "bs", "lr", "opt"]
    assert infos["lr"].type == api_pb2.DATA_TYPE_FLOAT64 and infos["opt"].type == api_pb2.DATA_TYPE_STRING
    assert infos["amp"].type == api_pb2.DATA_TYPE_BOOL
    assert [v.string_value for v in infos["opt"].domain_discrete.values] == ["sgd", "adam"]
    assert [m.name.tag for m in experiment.metric_infos] == ["hparam/accuracy", "hparam/loss"]
    start = hparams_metadata.parse_session_start_info_plugin_data(content[hparams_metadata.SESSION_START_INFO_TAG])
    values = {k: v.WhichOneof("kind") and getattr(v, v.WhichOneof("kind")) for k, v in start.hparams.items()}
    assert values == {"lr": 0.1, "bs": 32, "opt": "sgd", "amp": True}
    end = hparams_metadata.parse_session_end_info_plugin_data(content[hparams_metadata.SESSION_END_INFO_TAG])
    assert end.status == api_pb2.STATUS_SUCCESS
    scalars = _reload(str(tmp_path / "trial0"))
    assert [(e.step, e.value) for e in scalars.Scalars("hparam/accuracy")] == [(3, 0.75)]
    assert [(e.step, e.value) for e in scalars.Scalars("hparam/loss")] == [(3, 0.5)]


def test_pr_curve_equals_pytorchs(tmp_path, device):
    rng = np.random.default_rng(2)
    labels, predictions = rng.integers(0, 2, 200), rng.random(200)
    weights = rng.random(200)
    with SummaryWriter(str(tmp_path / "ours")) as w:
        w.add_pr_curve("pr", gputorch.tensor(labels, device=device), gputorch.tensor(predictions, device=device), 1)
        w.add_pr_curve("weighted", labels, predictions, 2, num_thresholds=11, weights=weights)
        w.add_pr_curve_raw("raw", *np.arange(6 * 5).reshape(6, 5), global_step=4, num_thresholds=5)
        with pytest.raises(ValueError, match="6 rows of num_thresholds=5"):
            w.add_pr_curve_raw("bad", *np.ones((6, 4)), num_thresholds=5)
    ours = _reload(str(tmp_path / "ours"))
    got = {tag: make_ndarray(ours.Tensors(tag)[0].tensor_proto) for tag in ("pr", "weighted", "raw")}
    assert got["pr"].shape == (6, 127) and got["weighted"].shape == (6, 11) and got["pr"].dtype == np.float32
    meta = pr_data.PrCurvePluginData.FromString(ours.SummaryMetadata("weighted").plugin_data.content)
    assert ours.SummaryMetadata("weighted").plugin_data.plugin_name == "pr_curves" and meta.num_thresholds == 11
    np.testing.assert_array_equal(got["raw"], np.arange(30).reshape(6, 5))
    # at threshold 0 everything is predicted positive: tp = positives, fp = negatives, recall = 1
    tp, fp, tn, fn, precision, recall = got["pr"]
    assert tp[0] == labels.sum() and fp[0] == (1 - labels).sum() and recall[0] == 1 and tn[0] == fn[0] == 0
    assert (np.diff(tp) <= 0).all() and (tp + fn == tp[0]).all()
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    with TorchWriter(str(tmp_path / "theirs")) as w:
        w.add_pr_curve("pr", torch.tensor(labels), torch.tensor(predictions), 1)
        w.add_pr_curve("weighted", labels, predictions, 2, num_thresholds=11, weights=weights)
    theirs = _reload(str(tmp_path / "theirs"))
    for tag in ("pr", "weighted"):
        np.testing.assert_allclose(got[tag], make_ndarray(theirs.Tensors(tag)[0].tensor_proto), rtol=1e-6)


def test_embedding_files_for_the_projector(tmp_path, device):
    rng = np.random.default_rng(3)
    points = rng.standard_normal((5, 3)).astype(np.float32)
    images = rng.random((5, 3, 4, 2))
    with SummaryWriter(str(tmp_path)) as w:
        w.add_embedding(gputorch.tensor(points, device=device), metadata=list("abcde"),
                        label_img=gputorch.tensor(images, device=device), global_step=3, tag="emb")
        w.add_embedding(points[:4], metadata=[["x", 1], ["y", 2], ["z", 3], ["w", 4]], metadata_header=["n", "v"])
        with pytest.raises(ValueError, match="metadata has 2 rows for 5 points"):
            w.add_embedding(points, metadata=["a", "b"], tag="bad")
    config = text_format.Parse((tmp_path / "projector_config.pbtxt").read_text(), ProjectorConfig())
    first, second = config.embeddings[0], config.embeddings[1]
    assert (first.tensor_name, first.tensor_path, first.metadata_path) == \
        ("emb:00003", "00003/emb/tensors.tsv", "00003/emb/metadata.tsv")
    assert first.sprite.image_path == "00003/emb/sprite.png" and list(first.sprite.single_image_dim) == [2, 4]
    assert (second.tensor_name, second.tensor_path) == ("default:00000", "00000/default/tensors.tsv")
    np.testing.assert_array_equal(np.loadtxt(tmp_path / first.tensor_path, delimiter="\t", dtype=np.float32), points)
    assert (tmp_path / first.metadata_path).read_text().split("\n")[:5] == list("abcde")
    assert (tmp_path / second.metadata_path).read_text() == "n\tv\nx\t1\ny\t2\nz\t3\nw\t4\n"
    pil = pytest.importorskip("PIL.Image")
    sprite = np.asarray(pil.open(tmp_path / first.sprite.image_path))
    assert sprite.shape == (3 * 4, 3 * 2, 3)            # a 3 x 3 grid of 4 x 2 thumbnails
    np.testing.assert_array_equal(sprite[4:8, 0:2], (images[3].transpose(1, 2, 0) * 255).astype(np.uint8))


def test_figures_as_images(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def figure():
        fig = plt.figure(figsize=(2, 1.5), dpi=50)
        plt.plot([0, 1, 2], [1, 0, 1])
        return fig
    one, many = figure(), [figure(), figure()]
    with SummaryWriter(str(tmp_path)) as w:
        w.add_figure("curve", one, 1)
        w.add_figure("curves", many, 2, close=False)
    assert not plt.fignum_exists(one.number) and all(plt.fignum_exists(f.number) for f in many)
    plt.close("all")
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    image, grid = acc.Images("curve")[0], acc.Images("curves")[0]
    assert (image.step, image.width, image.height) == (1, 100, 75)
    assert (grid.step, grid.width, grid.height) == (2, 200, 75)


def test_add_figure_without_matplotlib_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(ImportError, match=r"add_figure needs matplotlib: pip install 'gputorch\[tensorboard\]'"):
            w.add_figure("f", object())


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.loads(reply.read())


def test_tensorboard_server_serves_the_scalars(tmp_path):
    """Start TensorBoard on a free loopback port and fetch the logged scalars over HTTP, then what its
    Projector, PR Curves and HParams plugins make of the other summaries."""
    with SummaryWriter(str(tmp_path / "run1")) as w:
        for step in range(4):
            w.add_scalar("train/loss", 1.0 / (step + 1), step)
        w.add_embedding(np.eye(3), metadata=["a", "b", "c"])
        w.add_pr_curve("pr", np.array([0, 1, 1]), np.array([0.2, 0.9, 0.6]), 0)
        w.add_hparams({"lr": 0.1}, {"hparam/loss": 0.25}, run_name="trial")
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", str(tmp_path), "--port",
                               str(port), "--host", "127.0.0.1", "--load_fast", "false"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/data/plugin/scalars/scalars?run=run1&tag=train%2Floss"
    try:
        deadline, points = time.time() + 90, None
        while time.time() < deadline and points is None:
            if server.poll() is not None:
                pytest.fail("tensorboard exited: " + server.stderr.read().decode()[-2000:])
            try:
                with urllib.request.urlopen(url, timeout=5) as reply:
                    points = json.loads(reply.read()) or None
            except OSError:
                time.sleep(0.5)
        assert points is not None, "tensorboard served no scalars within 90 s"
        assert [(step, value) for _, step, value in points] == [(s, pytest.approx(1.0 / (s + 1))) for s in range(4)]
        base = f"http://127.0.0.1:{port}/data/plugin"
        info = _get(f"{base}/projector/info?run=run1")["embeddings"][0]
        assert info["tensorShape"] == [3, 3] and info["metadataPath"] == "00000/default/metadata.tsv"
        assert "pr" in _get(f"{base}/pr_curves/tags")["run1"]
        experiment = {}
        while time.time() < deadline and not experiment.get("metricInfos"):   # the trial's run may load later
            experiment = _get(f"{base}/hparams/experiment", {"experimentName": ""})
            time.sleep(0.2)
        assert [h["name"] for h in experiment["hparamInfos"]] == ["lr"]
        assert [m["name"]["tag"] for m in experiment["metricInfos"]] == ["hparam/loss"]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_purge_step_drops_the_crashed_runs_later_steps(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        for step in range(8):
            w.add_scalar("loss", float(step), step)
    time.sleep(1.1)        # a later event file (their names hold the second they were made)
    with SummaryWriter(str(tmp_path), purge_step=5) as w:
        for step in range(5, 7):
            w.add_scalar("loss", 100.0 + step, step)
    got = [(e.step, e.value) for e in _reload(str(tmp_path)).Scalars("loss")]
    assert got == [(0, 0.0), (1, 1.0), (2, 2.0), (3, 3.0), (4, 4.0), (5, 105.0), (6, 106.0)]
