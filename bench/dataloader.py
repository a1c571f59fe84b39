"""DataLoader throughput: samples per second through ``utils.data.DataLoader`` with 0, 2 and 4
worker processes, gputorch against ``torch.utils.data`` in the same run.

The dataset is the same class for both frameworks: 4096 uint8 28x28 images whose
``__getitem__`` does what an image pipeline does per sample (pad by 2, random 28x28 crop drawn
from NumPy's global generator, which both loaders seed in each worker, scale to [0, 1],
normalise) and returns ``(fw.from_numpy(image), label)``; batches of 64, shuffled, are collated
by the loader. With persistent workers a sample is one steady-state epoch (worker start-up not
timed); the last row starts its 2 workers every epoch (``persistent_workers=False``, the
default), so start-up is in it. With 2 CPUs, 4 workers oversubscribe the machine.

Run alone: ``python bench/dataloader.py [--quick]``.
"""
import os
import sys
import warnings

if __package__ in (None, ""):
    sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.path.dirname(__file__)]

import timing  # noqa: E402
from timing import add_ratio, clock_name, error_result, frameworks, measure, run_alone, use_clock  # noqa: E402

TITLE = "DataLoader throughput, 4096 28x28 images with a per-sample crop + normalise, batch 64 (samples/s)"
ITEMS = 4096
BATCH = 64
MEAN, STD = 0.1307, 0.3081
# (workers, persistent): the loaders measured, one table row each
CASES = ((0, False), (2, True), (4, True), (2, False))


class CroppedImages:
    """Map-style dataset of ``n`` (default ``ITEMS``) random uint8 28x28 images (seeded by ``seed``).

    Item ``i`` is ``(image, label)``: image ``i`` zero-padded by 2, a random 28x28 crop of it
    (offsets 0-4 from ``numpy.random``, different at each read), scaled to [0, 1] and
    normalised with MNIST's mean and std, as a float32 ``fw`` tensor of shape (1, 28, 28); the
    label is an int in [0, 10). ``fw`` is the framework module (gputorch or torch)."""

    def __init__(self, fw, n=None, seed=0):
        import numpy as np
        n = ITEMS if n is None else n
        rng = np.random.default_rng(seed)
        self.fw = fw
        self.images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        self.labels = rng.integers(0, 10, n).tolist()

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        import numpy as np
        padded = np.pad(self.images[i], 2)
        r, c = np.random.randint(0, 5, 2)
        crop = padded[r:r + 28, c:c + 28].astype(np.float32) / np.float32(255)
        return self.fw.from_numpy(((crop - np.float32(MEAN)) / np.float32(STD))[None]), self.labels[i]


def case_name(workers, persistent):
    """The row label of a ``(workers, persistent)`` case."""
    if workers == 0:
        return "DataLoader, 0 workers"
    return f"DataLoader, {workers} workers" + ("" if persistent else ", started each epoch")


def loader_epoch(fw, workers, persistent=True):
    """A zero-argument function that iterates one epoch of a DataLoader over :class:`CroppedImages`
    (the function holds the only reference to the loader: persistent workers end with it)."""
    loader = fw.utils.data.DataLoader(CroppedImages(fw), batch_size=BATCH, shuffle=True, num_workers=workers,
                                      persistent_workers=persistent and workers > 0)

    def epoch():
        for _ in loader:
            pass
    return epoch


def run(device="cpu", quick=False):
    """One row per case of ``CASES``, both frameworks: ``measure`` results in microseconds per
    epoch (``device`` is not used: loading is CPU work, so rows say "cpu"), on the wall clock
    whatever ``--clock`` says (workers are other processes)."""
    previous = clock_name()
    use_clock("wall")
    try:
        return _run(quick)
    finally:
        use_clock(previous)


def _run(quick):
    timing = {"sample_s": 0.01, "repeat": 2, "warmup_s": 0.0} if quick else {"repeat": 5, "warmup_s": 0.0}
    rows = []
    for workers, persistent in CASES:
        row = {"benchmark": case_name(workers, persistent), "device": "cpu"}
        for name, fw in frameworks():
            with warnings.catch_warnings():  # "more workers than CPUs": intended here
                warnings.simplefilter("ignore", UserWarning)
                epoch = None
                try:
                    epoch = loader_epoch(fw, workers, persistent)
                    row[name] = measure(epoch, **timing)
                except Exception as e:  # report it, keep going
                    row[name] = error_result(e)
                finally:
                    del epoch  # the only reference to the loader: persistent workers end with it
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
