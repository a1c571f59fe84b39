"""bench/dataloader.py: its dataset does the transform it claims, and a quick run reports every
case for both frameworks (no timing is asserted)."""
import sys
from pathlib import Path

import numpy as np
import pytest

import gputorch

BENCH = Path(__file__).resolve().parents[2] / "bench"
pytestmark = pytest.mark.skipif(not BENCH.is_dir(), reason="bench/ is not beside the tests")


@pytest.fixture
def dataloader_bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import dataloader
    yield dataloader
    sys.modules.pop("dataloader", None)


def crop_offset(bench, data, i, image):
    """The (row, col) offset of ``image`` in data item ``i``'s padded image, or None."""
    padded = np.pad(data.images[i], 2).astype(np.float32) / np.float32(255)
    for r in range(5):
        for c in range(5):
            expected = (padded[r:r + 28, c:c + 28] - np.float32(bench.MEAN)) / np.float32(bench.STD)
            if np.allclose(image[0], expected, atol=1e-6):
                return r, c
    return None


def test_items_are_random_crops_normalised(dataloader_bench):
    data = dataloader_bench.CroppedImages(gputorch, n=8)
    np.random.seed(0)
    offsets = set()
    for _ in range(20):
        image, label = data[3]
        assert tuple(image.shape) == (1, 28, 28) and image.dtype == gputorch.float32
        assert isinstance(label, int) and 0 <= label < 10
        offset = crop_offset(dataloader_bench, data, 3, image.numpy())
        assert offset is not None, "not a normalised 28x28 crop of the padded image"
        offsets.add(offset)
    assert len(offsets) > 5  # a new crop at each read


def test_same_dataset_logic_for_both_frameworks(dataloader_bench):
    torch = pytest.importorskip("torch")
    ours, theirs = dataloader_bench.CroppedImages(gputorch, n=4), dataloader_bench.CroppedImages(torch, n=4)
    np.random.seed(1)
    a, label_a = ours[2]
    np.random.seed(1)
    b, label_b = theirs[2]
    assert isinstance(b, torch.Tensor) and label_a == label_b
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_quick_run_reports_every_case(dataloader_bench, monkeypatch):
    monkeypatch.setattr(dataloader_bench, "CASES", ((0, False), (2, False)))
    monkeypatch.setattr(dataloader_bench, "ITEMS", 512)
    rows = dataloader_bench.run(quick=True)
    assert [r["benchmark"] for r in rows] == ["DataLoader, 0 workers", "DataLoader, 2 workers, started each epoch"]
    for row in rows:
        assert row["gputorch"]["median_us"] > 0, row
        if "torch" in row:
            assert row["torch"]["median_us"] > 0 and row["ratio"] > 0, row
    table = dataloader_bench.format_table(rows)
    assert table.count("\n") == 3 and "samples/s" in table and "error" not in table
