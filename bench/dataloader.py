"""DataLoader throughput: samples per second through ``utils.data.DataLoader`` with 0, 2 and 4
worker processes, gputorch against ``torch.utils.data`` in the same run.

The dataset is the same class for both frameworks: 4096 uint8 28x28 images whose
``__getitem__`` does what an image pipeline does per sample (pad by 2, random 28x28 crop,
scale to [0, 1], normalise) and returns ``(fw.from_numpy(image), label)``; batches of 64 are
collated by the loader. Workers are persistent, so a sample is one steady-state epoch (worker
start-up is not timed); with 2 CPUs, 4 workers oversubscribe the machine.

Run alone: ``python bench/dataloader.py [--quick]``.
"""
import os
import sys
import warnings

if __package__ in (None, ""):
    sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.path.dirname(__file__)]

import timing  # noqa: E402
from timing import add_ratio, error_result, frameworks, measure, run_alone  # noqa: E402

TITLE = "DataLoader throughput, 4096 28x28 images with a per-sample crop + normalise, batch 64 (samples/s)"
ITEMS = 4096
BATCH = 64
WORKERS = (0, 2, 4)


class CroppedImages:
    """Map-style dataset of ``n`` random uint8 28x28 images; items are ``(float32 (1, 28, 28), int)``."""

    def __init__(self, fw, n=ITEMS, seed=0):
        import numpy as np
        rng = np.random.default_rng(seed)
        self.fw = fw
        self.images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        self.labels = rng.integers(0, 10, n)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        import numpy as np
        rng = np.random.default_rng(i)
        padded = np.pad(self.images[i], 2)
        r, c = rng.integers(0, 5, 2)
        crop = padded[r:r + 28, c:c + 28].astype(np.float32) / 255.0
        return self.fw.from_numpy(((crop - 0.1307) / 0.3081)[None]), int(self.labels[i])


def loader_epoch(fw, workers):
    """A zero-argument function that iterates one epoch of a persistent DataLoader."""
    loader = fw.utils.data.DataLoader(CroppedImages(fw), batch_size=BATCH, shuffle=True, num_workers=workers,
                                      persistent_workers=workers > 0)

    def epoch():
        for _ in loader:
            pass
    epoch.loader = loader
    return epoch


def run(device="cpu", quick=False):
    """One row per worker count: seconds per epoch for each framework (device is not used: loading is CPU work)."""
    timing = {"sample_s": 0.01, "repeat": 2, "warmup_s": 0.0} if quick else {"repeat": 5, "warmup_s": 0.0}
    rows = []
    for workers in WORKERS:
        row = {"benchmark": f"DataLoader, {workers} workers", "device": "cpu"}
        for name, fw in frameworks():
            with warnings.catch_warnings():  # "more workers than CPUs": intended here
                warnings.simplefilter("ignore", UserWarning)
                epoch = loader_epoch(fw, workers)
                try:
                    row[name] = measure(epoch, **timing)
                except Exception as e:  # report it, keep going
                    row[name] = error_result(e)
                finally:
                    del epoch.loader  # persistent workers end with their loader
        rows.append(add_ratio(row))
    return rows


def format_table(rows):
    """Markdown: samples per second (from the median epoch time) and the epoch-time ratio."""
    return timing.format_table(rows, unit="samples/s", value=lambda r: f"{ITEMS / (r['median_us'] / 1e6):,.0f}",
                               ratio="gputorch/torch (time)")


def main(argv=None):
    run_alone(TITLE, run, format_table, argv)


if __name__ == "__main__":
    main()
