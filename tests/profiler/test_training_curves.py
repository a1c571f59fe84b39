"""Training curves beside the memory timeline: ``MemoryProfiler.add_scalar`` points in the report,
its JSON and the HTML page, whose script draws them on the chart's time axis (run under node)."""
import json
import shutil
import subprocess

import pytest

import gputorch
import gputorch.nn.functional as F
from gputorch.profiler import MemoryProfiler
from tests.profiler._workloads import batch, mlp
from tests.profiler.test_html_chart import HARNESS

CURVES = HARNESS.replace("const areas = ids.chart.children",
                         "console.log(JSON.stringify(ids.curves.children.filter(c => c.name === 'polyline')"
                         ".map(p => p.attrs.points)));\nconst areas = ids.chart.children")


def _profile(device, steps=3):
    model = mlp(device)
    opt = gputorch.optim.SGD(model.parameters(), lr=0.1)
    with MemoryProfiler(model, opt, scan_existing=False) as prof:
        for step in range(steps):
            x, y = batch(device, seed=step)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            prof.add_scalar("loss", loss)                         # a tensor: its value is taken
            if step % 2 == 0:
                prof.add_scalar("test accuracy", 0.5 + step / 10, global_step=step)
    return prof


def test_scalars_are_in_the_report_and_its_json(device, tmp_path):
    prof = _profile(device)
    report = prof.report()
    loss = report.scalars["loss"]
    assert [p[1] for p in loss] == [1, 2, 3] and all(0 <= p[0] <= report.duration for p in loss)
    assert [p[0] for p in loss] == sorted(p[0] for p in loss)
    assert [(p[1], p[2]) for p in report.scalars["test accuracy"]] == [(0, 0.5), (2, 0.7)]
    saved = json.load(open(report.save_json(str(tmp_path / "r.json"))))
    assert saved["scalars"] == report.scalars and saved["module_types"]["0"] == "Linear"
    with pytest.raises(RuntimeError, match="while the MemoryProfiler runs"):
        prof.add_scalar("late", 1.0)


def test_page_draws_the_curves_on_the_time_axis(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the page's script is not run")
    report = _profile("cpu").report()
    page = report.save_html(str(tmp_path / "memory.html"))
    assert "<h2>Training curves</h2>" in open(page).read()
    out = subprocess.run([node, "-e", CURVES, page], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = json.loads(out.stdout.splitlines()[0])
    assert len(lines) == 2
    loss, accuracy = [[tuple(map(float, p.split(","))) for p in line.split()] for line in lines]
    assert len(loss) == 3 and len(accuracy) == 2
    # on the chart's axis (x from 80 to 1080 over the samples' time span; a point after the last
    # sample at the right edge)
    t0, t1 = report.timeline[0]["t"], report.timeline[-1]["t"]
    for (x, _), (t, _, _) in zip(loss, report.scalars["loss"]):
        assert x == pytest.approx(min(80 + (t - t0) / (t1 - t0) * 1000, 1080))
    assert accuracy[0][1] > accuracy[1][1]                        # a higher accuracy is drawn higher up
