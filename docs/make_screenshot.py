"""Regenerate docs/images/profiler_report.png, the README's picture of the memory profiler's HTML report.

Trains a small CNN (two conv / batch-norm / ReLU / max-pool blocks and a linear classifier, on
seeded random 28x28 images) with Adam for a few steps under ``MemoryProfiler(model, optimizer)``
(five times, keeping the quickest run), writes the report with ``save_html`` and renders the
page with headless Chromium. Chromium is a docs tool here, not a dependency of gputorch (on
Debian: ``apt-get install chromium``).

    python docs/make_screenshot.py [--steps 4] [--batch 64] [--runs 5] [--height 1250]
                                   [--chromium PATH] [--out FILE] [--html FILE] [--console]

``--html`` keeps the report page; ``--console`` prints the page's console messages (JavaScript
errors show there as "Uncaught ...").
"""
import argparse
import gc
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import gputorch as torch  # noqa: E402
from gputorch import nn  # noqa: E402
from gputorch.profiler import MemoryProfiler  # noqa: E402

WIDTH = 1200
HEIGHT = 1250   # the chart and the first two tables (categories, modules); the page goes on below
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--virtual-time-budget=5000"]


def small_cnn():
    """``(N, 1, 28, 28)`` -> ``(N, 10)`` logits; the batch norms give the report some buffers."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10))


def profile_training(steps, batch, seed=0):
    """The MemoryReport of ``steps`` Adam steps of :func:`small_cnn` on random batches (CPU)."""
    torch.manual_seed(seed)
    model = small_cnn()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = [(torch.randn(batch, 1, 28, 28), torch.randint(0, 10, (batch,))) for _ in range(steps)]
    with MemoryProfiler(model, optimizer) as profiler:
        for x, y in batches:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return profiler.report()


def render(chromium, html_path, png_path, height=HEIGHT, console=False):
    """Screenshot the top ``WIDTH x height`` pixels of ``html_path`` into ``png_path``; returns Chromium's log."""
    with tempfile.TemporaryDirectory() as tmp:
        shot = os.path.join(tmp, "shot.png")
        cmd = [chromium, *FLAGS, f"--user-data-dir={os.path.join(tmp, 'profile')}", f"--window-size={WIDTH},{height}",
               f"--screenshot={shot}", "file://" + os.path.abspath(html_path)]
        if console:
            cmd[1:1] = ["--enable-logging=stderr", "--v=0"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0 or not os.path.exists(shot):
            raise RuntimeError(f"chromium failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        shutil.move(shot, png_path)
    return done.stderr


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4, help="optimizer steps to profile (default 4)")
    parser.add_argument("--batch", type=int, default=64, help="batch size (default 64)")
    parser.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser"),
                        help="the Chromium binary (default: chromium on PATH)")
    parser.add_argument("--out", default=os.path.join(HERE, "images", "profiler_report.png"))
    parser.add_argument("--runs", type=int, default=5, help="profile this many times, keep the quickest (default 5)")
    parser.add_argument("--height", type=int, default=HEIGHT, help=f"pixels of the page shown (default {HEIGHT})")
    parser.add_argument("--html", help="also keep the HTML report at this path")
    parser.add_argument("--console", action="store_true", help="print the page's console messages")
    args = parser.parse_args(argv)
    if not args.chromium:
        parser.error("no Chromium found: install it (apt-get install chromium) or pass --chromium PATH")
    if min(args.steps, args.batch, args.runs, args.height) < 1:
        parser.error("--steps, --batch, --runs and --height must be positive")
    # The x axis is time: keep the quickest of a few runs, so that a stall on a busy machine does
    # not stretch one operation across the chart. (gc between runs: the last run's model and
    # graph, in reference cycles, would otherwise count as "other" in the next one.)
    report = None
    for _ in range(args.runs):
        run = profile_training(args.steps, args.batch)
        if report is None or run.duration < report.duration:
            report = run
        del run
        gc.collect()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        html_path = report.save_html(args.html or os.path.join(tmp, "report.html"))
        log = render(args.chromium, html_path, args.out, args.height, console=args.console)
    if args.console:
        console = [line for line in log.splitlines() if ":CONSOLE" in line]
        print("\n".join(console) if console else "the page logged nothing to the console")
    print(f"peak {report.peak_bytes} bytes in step {report.peak_step} ({report.peak_phase}); "
          f"wrote {args.out} ({os.path.getsize(args.out)} bytes)")


if __name__ == "__main__":
    main()
