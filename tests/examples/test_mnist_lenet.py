"""MNIST/LeNet example: the IDX reader, the transforms, the dataset with DataLoader workers, and
training on a synthetic IDX data set (real MNIST is not available offline)."""
import gzip
import struct

import numpy as np
import pytest

import gputorch
from gputorch.examples import mnist_lenet as ml
from gputorch.utils.data import DataLoader, Subset


def write_idx(path, array, code=0x08):
    header = bytes([0, 0, code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    payload = header + np.ascontiguousarray(array).astype(array.dtype.newbyteorder(">")).tobytes()
    if str(path).endswith(".gz"):
        with gzip.open(path, "wb") as f:
            f.write(payload)
    else:
        path.write_bytes(payload)


def synthetic_digits(n, seed):
    """28x28 uint8 images whose label (0-9) is the position of a bright 6x6 block, plus noise."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n).astype(np.uint8)
    images = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
    for image, label in zip(images, labels):
        r, c = 2 + 14 * (label // 5), 1 + 5 * (label % 5)
        image[r:r + 6, c:c + 6] = 230
    return images, labels


@pytest.fixture
def mnist_dir(tmp_path):
    for split, n, seed in (("train", 1200, 0), ("test", 300, 1)):
        images, labels = synthetic_digits(n, seed)
        image_name, label_name = ml.FILES[split]
        write_idx(tmp_path / (image_name + ".gz"), images)  # one gzipped, one raw
        write_idx(tmp_path / label_name, labels)
    return tmp_path


@pytest.mark.parametrize("suffix", ["", ".gz"])
@pytest.mark.parametrize("dtype, code", [(np.uint8, 0x08), (np.int16, 0x0B), (np.float32, 0x0D), (np.float64, 0x0E)])
def test_read_idx_round_trips(tmp_path, suffix, dtype, code):
    array = (np.arange(2 * 3 * 5) * 7 % 100).astype(dtype).reshape(2, 3, 5)
    write_idx(tmp_path / f"a{suffix}", array, code)
    back = ml.read_idx(tmp_path / f"a{suffix}")
    assert back.shape == (2, 3, 5) and back.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(back, array)


def test_read_idx_rejects_malformed_files(tmp_path):
    (tmp_path / "bad").write_bytes(b"\x01\x02\x08\x01\x00\x00\x00\x01x")
    with pytest.raises(ValueError, match="bad: not an IDX file"):
        ml.read_idx(tmp_path / "bad")
    write_idx(tmp_path / "short", np.zeros((4, 4), np.uint8))
    (tmp_path / "short").write_bytes((tmp_path / "short").read_bytes()[:-3])
    with pytest.raises(ValueError, match=r"short: IDX header says shape \(4, 4\) \(16 bytes"):
        ml.read_idx(tmp_path / "short")
    (tmp_path / "page.gz").write_bytes(b"<html>Not Found</html>")  # what a failed mirror might serve
    with pytest.raises(ValueError, match="page.gz: not a valid gzip file"):
        ml.read_idx(tmp_path / "page.gz")
    write_idx(tmp_path / "cut.gz", np.zeros((50, 50), np.uint8))
    (tmp_path / "cut.gz").write_bytes((tmp_path / "cut.gz").read_bytes()[:-12])
    with pytest.raises(ValueError, match="cut.gz: not a valid gzip file"):
        ml.read_idx(tmp_path / "cut.gz")


def test_to_tensor_and_normalize_match_numpy():
    image = np.random.default_rng(0).integers(0, 256, (5, 7, 3)).astype(np.uint8)
    t = ml.ToTensor()(image)
    assert tuple(t.shape) == (3, 5, 7) and t.dtype == gputorch.float32
    np.testing.assert_allclose(t.numpy(), image.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    assert tuple(ml.ToTensor()(image[:, :, 0]).shape) == (1, 5, 7)
    n = ml.Normalize([0.5, 0.25, 0.0], [0.5, 0.25, 2.0])(t)
    expected = (image.transpose(2, 0, 1) / 255.0 - np.array([0.5, 0.25, 0])[:, None, None]) / \
        np.array([0.5, 0.25, 2.0])[:, None, None]
    np.testing.assert_allclose(n.numpy(), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="expected an"):
        ml.ToTensor()(np.zeros(4, np.uint8))


def test_dataset_items_and_workers_give_the_same_batches(mnist_dir):
    transform = ml.Compose([ml.ToTensor(), ml.Normalize([ml.MEAN], [ml.STD])])
    data = ml.MNIST(str(mnist_dir), "test", transform)
    assert len(data) == 300
    image, label = data[3]
    assert tuple(image.shape) == (1, 28, 28) and isinstance(label, int)
    raw = ml.MNIST(str(mnist_dir), "test")[3][0]
    np.testing.assert_allclose(image.numpy()[0], (raw / 255.0 - ml.MEAN) / ml.STD, rtol=1e-5, atol=1e-5)
    serial = [(x.numpy(), y.numpy()) for x, y in DataLoader(data, batch_size=32)]
    parallel = [(x.numpy(), y.numpy()) for x, y in DataLoader(data, batch_size=32, num_workers=2)]
    assert len(serial) == len(parallel) == 10
    for (a, b), (c, d) in zip(serial, parallel):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


def test_missing_files_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing train-images-idx3-ubyte"):
        ml.MNIST(str(tmp_path))


def test_lenet_shapes_and_parameter_count():
    model = ml.lenet5()
    assert sum(p.numel() for p in model.parameters()) == 61706  # LeNet-5's classic count
    assert tuple(model(gputorch.zeros(2, 1, 28, 28)).shape) == (2, 10)


def test_training_with_workers_learns(mnist_dir, device):
    transform = ml.Compose([ml.ToTensor(), ml.Normalize([ml.MEAN], [ml.STD])])
    train_set = ml.MNIST(str(mnist_dir), "train", transform)
    test_set = ml.MNIST(str(mnist_dir), "test", transform)
    lines = []  # 600 images twice at lr 3e-3: enough here, and short under the simulated GPU
    _, accuracies = ml.train(Subset(train_set, range(600)), test_set, device, epochs=2, lr=3e-3, workers=2,
                             log=lines.append)
    assert accuracies[-1] >= 0.95, accuracies
    assert lines[0].startswith("epoch 1: loss") and len(lines) == 2


def test_cli_runs_on_idx_files(mnist_dir, capsys):
    assert ml.main(["--data", str(mnist_dir), "--epochs", "1", "--workers", "0", "--device", "cpu",
                    "--limit", "600"]) == 0
    out = capsys.readouterr().out
    assert "MNIST: 600 training and 300 test images" in out and "test accuracy" in out


def test_cli_bad_input(tmp_path, capsys):
    assert ml.main(["--data", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing train-images-idx3-ubyte" in err[0] and "--download" in err[0]
    with pytest.raises(SystemExit) as exc:
        ml.main(["--data", str(tmp_path), "--epochs", "0"])
    assert exc.value.code == 2 and "--epochs must be positive" in capsys.readouterr().err


def test_download_failure_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(ml, "MIRRORS", ["http://127.0.0.1:9/"])  # the discard port: nothing listens
    assert ml.main(["--data", str(tmp_path), "--download"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --download: could not download train-images-idx3-ubyte.gz")


def test_adam_steps_match_pytorch_with_the_same_weights(device):
    torch = pytest.importorskip("torch")
    model = ml.lenet5()
    tn = torch.nn
    ref = tn.Sequential(tn.Conv2d(1, 6, 5, padding=2), tn.ReLU(), tn.MaxPool2d(2), tn.Conv2d(6, 16, 5), tn.ReLU(),
                        tn.MaxPool2d(2), tn.Flatten(), tn.Linear(400, 120), tn.ReLU(), tn.Linear(120, 84), tn.ReLU(),
                        tn.Linear(84, 10))
    ref.load_state_dict({k: torch.tensor(v.numpy()) for k, v in model.state_dict().items()})
    model = model.to(device)
    images, labels = synthetic_digits(32, 2)
    transform = ml.Compose([ml.ToTensor(), ml.Normalize([ml.MEAN], [ml.STD])])
    x = np.stack([transform(image).numpy() for image in images])
    ours_opt = gputorch.optim.Adam(model.parameters(), lr=1e-3)
    ref_opt = torch.optim.Adam(ref.parameters(), lr=1e-3)
    ours_losses, ref_losses = [], []
    for _ in range(4):
        loss = gputorch.nn.functional.cross_entropy(model(gputorch.tensor(x, device=device)),
                                                    gputorch.tensor(labels.astype(np.int64), device=device))
        ours_opt.zero_grad()
        loss.backward()
        ours_opt.step()
        ours_losses.append(loss.item())
        loss = torch.nn.functional.cross_entropy(ref(torch.tensor(x)), torch.tensor(labels.astype(np.int64)))
        ref_opt.zero_grad()
        loss.backward()
        ref_opt.step()
        ref_losses.append(loss.item())
    assert ref_losses[-1] < ref_losses[0] - 0.05  # the steps do move the loss
    np.testing.assert_allclose(ours_losses, ref_losses, rtol=1e-4)


def test_cli_amp_trains_in_mixed_precision(mnist_dir, capsys):
    pytest.importorskip("ml_dtypes")     # the CPU's autocast dtype is bfloat16
    assert ml.main(["--data", str(mnist_dir), "--epochs", "2", "--workers", "0", "--device", "cpu",
                    "--limit", "600", "--amp"]) == 0
    accuracy = float(capsys.readouterr().out.rsplit("test accuracy ", 1)[1].split("%")[0])
    assert accuracy >= 90.0
