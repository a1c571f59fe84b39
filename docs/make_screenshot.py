"""Regenerate docs/images/profiler_report.png, the README's picture of the memory report.

Trains the character-level transformer example for a few steps under the memory profiler,
writes the HTML report, and renders it with headless Chromium (a docs tool: Chromium is not a
dependency of gputorch; on Debian ``apt-get install chromium``).

    python docs/make_screenshot.py [--chromium PATH] [--steps 4]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from gputorch.examples import char_transformer  # noqa: E402

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--virtual-time-budget=3000"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser"))
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--out", default=os.path.join(HERE, "images", "profiler_report.png"))
    args = parser.parse_args(argv)
    if not args.chromium:
        parser.error("no Chromium found: install it (apt-get install chromium) or pass --chromium PATH")
    data = char_transformer.CharData(char_transformer.default_text())
    run = char_transformer.train(data, "cpu", steps=args.steps, profile=True, log=lambda line: None)
    with tempfile.TemporaryDirectory() as tmp:
        html = run["report"].save_html(os.path.join(tmp, "report.html"))
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        subprocess.run([args.chromium, *FLAGS, f"--user-data-dir={os.path.join(tmp, 'profile')}",
                        "--window-size=1160,900", f"--screenshot={os.path.abspath(args.out)}", f"file://{html}"],
                       check=True, capture_output=True)
    print(f"wrote {args.out} ({os.path.getsize(args.out)} bytes)")


if __name__ == "__main__":
    main()
