"""The HTML report's chart drawing: a spike shorter than a pixel stays visible (run under node)."""
import json
import re
import shutil
import subprocess

import pytest

import gputorch.nn.functional as F
from gputorch.profiler import CATEGORIES, MemoryProfiler
from tests.profiler._workloads import batch, mlp

# A minimal DOM: runs the page's script, then prints the stacked areas' points.
HARNESS = r"""
const fs = require('fs');
function node(name) {
  return {name, attrs: {}, children: [], style: {}, listeners: {},
          get firstChild() { return this.children[0] || null; },
          setAttribute(k, v) { this.attrs[k] = String(v); },
          appendChild(c) { this.children.push(c); return c; },
          removeChild(c) { this.children.splice(this.children.indexOf(c), 1); return c; },
          addEventListener(type, fn) { this.listeners[type] = fn; },
          getBoundingClientRect() { return {left: 0, top: 0}; }};
}
const ids = {};
global.document = {getElementById: id => ids[id] || (ids[id] = node(id)), createElementNS: (ns, n) => node(n),
                   createElement: node, querySelectorAll: () => []};
const page = fs.readFileSync(process.argv[1], 'utf8');
eval(page.slice(page.indexOf('<script>') + 8, page.indexOf('</script>')));
const areas = ids.chart.children.filter(c => c.name === 'polygon').map(p => p.attrs.points);
console.log(JSON.stringify(areas));
"""

MIB = 1 << 20
ACT = CATEGORIES.index("activations")
T, BOTTOM = 10, 420 - 60       # the chart's top and bottom pixel rows (T, H - B in the page)


def _sample(t, activations):
    values = [0] * len(CATEGORIES)
    values[ACT] = activations
    return [t, 0, "forward"] + values


def _areas(tmp_path, samples):
    """The points of each category's stacked area when the page draws ``samples``."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the page's script is not run")
    model = mlp("cpu")
    with MemoryProfiler(model=model, scan_existing=False) as prof:
        x, y = batch("cpu")
        F.cross_entropy(model(x), y).backward()
    page = open(prof.report().save_html(str(tmp_path / "memory.html"))).read()
    data = json.loads(page[page.index("const D = ") + 10:page.index(";\n(function")])
    data["samples"] = samples
    data["peak"] = {"bytes": max(s[3 + ACT] for s in samples), "t": 0.0}
    page = re.sub(r"const D = .*?;\n\(function", lambda m: "const D = " + json.dumps(data) + ";\n(function",
                  page, count=1, flags=re.S)
    path = tmp_path / "synthetic.html"
    path.write_text(page)
    out = subprocess.run([node, "-e", HARNESS, str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    areas = json.loads(out.stdout)
    assert len(areas) == len(CATEGORIES)
    return [[tuple(map(float, p.split(","))) for p in a.split()] for a in areas]


def _top(points):
    """The upper edge of a stacked area: ``(x_start, x_end, y)`` segments, left to right."""
    upper = points[:len(points) // 2]
    return [(upper[i][0], upper[i + 1][0], upper[i][1]) for i in range(0, len(upper), 2)]


def test_sub_pixel_spike_fills_a_column_and_the_level_after_it_holds(tmp_path):
    # 1 MiB for a second, an 8 MiB spike lasting one microsecond, then 2 MiB for a second:
    # the spike is 1/2000 of a pixel wide at its true duration.
    samples = [_sample(0.0, MIB), _sample(1.0, 8 * MIB), _sample(1.000001, 2 * MIB), _sample(2.0, MIB)]
    top = _top(_areas(tmp_path, samples)[ACT])
    at_peak = [s for s in top if abs(s[2] - T) < 1e-6]
    assert len(at_peak) == 1
    assert at_peak[0][1] - at_peak[0][0] == pytest.approx(1.0)      # one whole pixel column
    two_mib = T + (1 - 2 / 8) * (BOTTOM - T)
    after = [s for s in top if s[0] >= at_peak[0][1]]
    assert after and after[0][1] - after[0][0] > 400                # the 2 MiB level, not the spike, holds
    assert after[0][2] == pytest.approx(two_mib)
    assert top[0][2] == pytest.approx(T + (1 - 1 / 8) * (BOTTOM - T))


def test_dense_samples_keep_each_columns_largest(tmp_path):
    # 10,000 samples over the ~1000 columns: every tenth is a 4 MiB spike among 1 MiB ones.
    samples = [_sample(i * 1e-3, (4 if i % 10 == 5 else 1) * MIB) for i in range(10_000)]
    top = _top(_areas(tmp_path, samples)[ACT])
    assert len(top) <= 2 * (1100 - 80 - 20) + 1                      # at most two per column
    assert min(y for _, _, y in top) == pytest.approx(T)             # the spikes reach the top
    peaks = sum(1 for x0, x1, y in top if abs(y - T) < 1e-6 and x1 - x0 >= 1 - 1e-9)
    assert peaks >= 900                                              # nearly every column shows one
    total_width = sum(x1 - x0 for x0, x1, _ in top)
    assert total_width == pytest.approx(1000, abs=1.5)               # the area spans the chart


def test_page_from_a_profiled_run_reaches_the_peak(device, tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the page's script is not run")
    model = mlp(device)
    with MemoryProfiler(model=model, scan_existing=False) as prof:
        for step in range(2):
            x, y = batch(device, seed=step)
            F.cross_entropy(model(x), y).backward()
    report = prof.report()
    assert report.peak_bytes > 0
    path = report.save_html(str(tmp_path / "memory.html"))
    out = subprocess.run([node, "-e", HARNESS, path], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    areas = [[tuple(map(float, p.split(","))) for p in a.split()] for a in json.loads(out.stdout)]
    top_of_stack = min(y for area in areas for _, y in area)
    assert top_of_stack == pytest.approx(T)                          # the peak is drawn at the axis top
