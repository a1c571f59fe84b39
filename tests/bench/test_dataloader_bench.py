"""bench/dataloader.py runs and reports a throughput per worker count (no timing is asserted)."""
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
pytestmark = pytest.mark.skipif(not BENCH.is_dir(), reason="bench/ is not beside the tests")


@pytest.fixture
def dataloader_bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import dataloader
    yield dataloader
    sys.modules.pop("dataloader", None)


def test_dataset_items_are_cropped_normalised_images(dataloader_bench):
    import numpy as np
    import gputorch
    data = dataloader_bench.CroppedImages(gputorch, n=8)
    image, label = data[3]
    assert tuple(image.shape) == (1, 28, 28) and image.dtype == gputorch.float32 and 0 <= label < 10
    again, _ = data[3]
    np.testing.assert_array_equal(image.numpy(), again.numpy())  # the crop is seeded by the index
    lo, hi = (0 - 0.1307) / 0.3081, (1 - 0.1307) / 0.3081
    assert lo - 1e-6 <= float(image.min()) and float(image.max()) <= hi + 1e-6


def test_quick_run_reports_every_worker_count(dataloader_bench, monkeypatch):
    monkeypatch.setattr(dataloader_bench, "WORKERS", (0, 2))
    rows = dataloader_bench.run(quick=True)
    assert [r["benchmark"] for r in rows] == ["DataLoader, 0 workers", "DataLoader, 2 workers"]
    for row in rows:
        assert row["gputorch"]["median_us"] > 0, row
    table = dataloader_bench.format_table(rows)
    assert table.count("\n") == 3 and "samples/s" in table
