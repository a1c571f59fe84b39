"""Regenerate docs/images/profiler_graph.png: the memory report's autograd-graph panel for the char
transformer example (6 blocks), rendered by headless Chromium.

Trains ``gputorch.examples.char_transformer`` for a few steps under the memory profiler and
screenshots the report's graph panel (on a page of its own, the drawing scaled to the width). Needs
Graphviz's ``dot`` (the panel's SVG) and Chromium, both docs tools here (Debian: ``apt-get install
graphviz chromium``).

    python docs/make_graph_screenshot.py [--layers 6] [--steps 2] [--height 2200] [--out FILE] [--html FILE]
"""
import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from make_screenshot import render  # noqa: E402

from gputorch.examples.char_transformer import CharData, default_text, train  # noqa: E402
from gputorch.profiler.graph_view import graph_panel  # noqa: E402

PAGE = ("<!DOCTYPE html><html><head><meta charset='utf-8'><style>body{font-family:system-ui,sans-serif;"
        "margin:20px;color:#222}.graph svg{width:100%;height:auto}</style></head><body>__PANEL__</body></html>")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--height", type=int, default=2200)
    parser.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser"))
    parser.add_argument("--out", default=os.path.join(HERE, "images", "profiler_graph.png"))
    parser.add_argument("--html", help="also keep the panel's page at this path")
    args = parser.parse_args(argv)
    if not args.chromium or not shutil.which("dot"):
        parser.error("needs Chromium and Graphviz's dot: apt-get install chromium graphviz")
    result = train(CharData(default_text()[:20000]), "cpu", steps=args.steps, layers=args.layers, profile=True,
                   log=lambda line: None)
    with tempfile.TemporaryDirectory() as tmp:
        page = args.html or os.path.join(tmp, "panel.html")
        with open(page, "w") as f:
            f.write(PAGE.replace("__PANEL__", graph_panel(result["report"])))
        render(args.chromium, page, args.out, args.height)
    print(f"wrote {args.out} ({os.path.getsize(args.out)} bytes)")


if __name__ == "__main__":
    main()
