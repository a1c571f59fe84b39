"""The profiler's outputs: JSON, HTML, memory_viz snapshot, the command line, the OOM report."""
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap

import pytest

import gputorch
import gputorch.nn as nn
import gputorch.nn.functional as F
from gputorch.profiler import CATEGORIES, MemoryProfiler
from tests.profiler._workloads import batch, mlp

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _profiled_run(device, steps=3):
    model = mlp(device)
    opt = gputorch.optim.Adam(model.parameters())
    with MemoryProfiler(model=model, optimizer=opt, scan_existing=False) as prof:
        for step in range(steps):
            x, y = batch(device, seed=step)
            F.cross_entropy(model(x), y).backward()
            opt.step()
            opt.zero_grad()
    return prof


def test_json_round_trip(device, tmp_path):
    report = _profiled_run(device).report()
    path = report.save_json(str(tmp_path / "memory.json"))
    data = json.load(open(path))
    assert data["peak_bytes"] == report.peak_bytes
    assert data["peak"] == report.peak and data["current"] == report.current
    assert data["peak_phase"] == report.peak_phase and data["steps"] == 3
    assert data["categories"] == list(CATEGORIES)
    assert len(data["timeline"]) == len(report.timeline)
    assert data["by_module"] == report.by_module


def test_html_is_self_contained_and_draws(device, tmp_path):
    report = _profiled_run(device).report()
    path = report.save_html(str(tmp_path / "memory.html"))
    page = open(path).read()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<svg" in page and "<script>" in page
    assert "src=" not in page and "href=" not in page and "cdn" not in page.lower()   # no network
    for c in CATEGORIES:
        assert c in page
    data = json.loads(page[page.index("const D = ") + 10:page.index(";\n(function")])
    assert len(data["samples"]) == len(report.timeline)
    assert max(sum(s[3:]) for s in data["samples"]) == report.peak_bytes
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the page's script is not run")
    out = subprocess.run([node, os.path.join(os.path.dirname(__file__), "dom_stub.js"), path],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    drawn = json.loads(out.stdout)
    assert drawn["polygons"] == len(CATEGORIES)       # one stacked area per category
    assert drawn["legend"] == len(CATEGORIES)
    assert "total:" in drawn["tip"]                   # hovering shows the values


def test_snapshot_loads_in_torch_memory_viz(device, tmp_path):
    pytest.importorskip("torch")
    from torch.cuda import _memory_viz as viz
    prof = _profiled_run(device)
    path = prof.export_memory_snapshot(str(tmp_path / "snapshot.pickle"))
    with open(path, "rb") as f:
        snap = pickle.load(f)
    assert set(snap) >= {"segments", "device_traces"}
    summary = viz.segsum(snap)               # checks that every segment's blocks add up
    assert "total_allocated" in summary
    assert "entries" in viz.trace(snap)
    assert "<html>" in viz.trace_plot(snap) and "<html>" in viz.segment_plot(snap)
    # the live blocks at the end are the tracked storages alive at the end
    report = prof.report()
    dev = 0                                  # cuda:0 on a CUDA run, else the CPU
    name = "cuda:0" if device == "cuda" else "cpu"
    live = sum(b["requested_size"] for s in snap["segments"] if s["device"] == dev
               for b in s["blocks"] if b["state"] == "active_allocated")
    assert live == sum(report.current_by_device[name].values())
    if device == "cuda":                     # Adam's step counters: on the CPU, after the GPUs
        cpu = sum(b["requested_size"] for s in snap["segments"] if s["device"] == 1
                  for b in s["blocks"] if b["state"] == "active_allocated")
        assert cpu == sum(report.current_by_device["cpu"].values()) == 4 * 6
    # every storage allocated in the trace is freed at most once, with the same size and address
    open_blocks = {}
    for e in snap["device_traces"][dev]:
        if e["action"] == "alloc":
            assert e["addr"] not in open_blocks
            open_blocks[e["addr"]] = e["size"]
            assert e["category"] in CATEGORIES
        elif e["action"] == "free_completed":
            assert open_blocks.pop(e["addr"], e["size"]) == e["size"]
    assert "unknown" in {e.get("category") for e in snap["device_traces"][dev]}


# The opcodes the unpickler of PyTorch's web visualizer (MemoryViz.js) understands, protocols 2 to 4.
_VIEWER_OPCODES = {"PROTO", "FRAME", "MEMOIZE", "BINPUT", "LONG_BINPUT", "BINGET", "LONG_BINGET", "MARK", "STOP",
                   "EMPTY_DICT", "EMPTY_LIST", "EMPTY_TUPLE", "DICT", "LIST", "TUPLE", "TUPLE1", "TUPLE2",
                   "TUPLE3", "SETITEM", "SETITEMS", "APPEND", "APPENDS", "NONE", "NEWTRUE", "NEWFALSE",
                   "BININT", "BININT1", "BININT2", "LONG1", "BINFLOAT", "SHORT_BINUNICODE", "BINUNICODE"}


def test_snapshot_uses_only_what_the_web_viewer_reads(tmp_path):
    import pickletools
    path = _profiled_run("cpu", steps=2).export_memory_snapshot(str(tmp_path / "snapshot.pickle"))
    data = open(path, "rb").read()
    ops = {op.name for op, arg, pos in pickletools.genops(data)}
    assert ops <= _VIEWER_OPCODES, ops - _VIEWER_OPCODES
    assert data[0] == 0x80 and 2 <= data[1] <= 4


def test_command_line_runs_a_script(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import sys
        import gputorch as torch
        import gputorch.nn as nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
        opt = torch.optim.Adam(model.parameters())
        loss_fn = nn.CrossEntropyLoss()
        total = 0
        for step in range(int(sys.argv[1])):
            x, y = torch.randn(4, 8), torch.randint(0, 3, (4,))
            loss = loss_fn(model(x), y)
            opt.zero_grad(); loss.backward(); opt.step()
            total += loss
        print("trained", sys.argv[1:])
    """))
    html, js = tmp_path / "report.html", tmp_path / "report.json"
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-m", "gputorch.profiler", "--html", str(html), "--json", str(js),
                          str(script), "3", "--flag"], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "trained ['3', '--flag']" in out.stdout
    assert "Peak:" in out.stdout and "optimizer_state" in out.stdout
    assert "graph_kept_alive" in out.stdout                    # the script's `total += loss`
    data = json.load(open(js))
    assert data["steps"] == 3
    params = 8 * 16 + 16 + 16 * 3 + 3
    assert data["current"]["parameters"] == params * 4
    assert data["current"]["optimizer_state"] == params * 8 + 4 * 4
    assert {"0", "2", "<CrossEntropyLoss>"} <= set(data["by_module"]) | {"<CrossEntropyLoss>"}
    assert html.exists() and "<svg" in html.read_text()


def test_command_line_missing_script(tmp_path):
    env = dict(os.environ, PYTHONPATH=REPO)
    out = subprocess.run([sys.executable, "-m", "gputorch.profiler", str(tmp_path / "nope.py")],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2 and "no such script" in out.stderr


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 32)

    def forward(self, x):
        return self.fc2(self.fc1(x).tanh())


class _Exploding(nn.Module):
    def forward(self, x):
        raise MemoryError("Unable to allocate 1.00 TiB for an array")


def test_out_of_memory_is_reraised_with_the_breakdown(device):
    model = nn.Sequential(_Block(), _Block(), _Exploding()).to(device)
    x = gputorch.randn(16, 32, device=device)
    with pytest.raises(MemoryError) as info:
        with MemoryProfiler(model=model, scan_existing=False):
            model(x)
    err = info.value
    assert str(err) == "Unable to allocate 1.00 TiB for an array"          # the original error
    note = "\n".join(err.__notes__)
    assert err.memory_report == note
    assert "out of memory in step 0, phase forward" in note
    for c in ("parameters", "activations"):
        assert c in note
    assert "Largest live tensors" in note and "0.fc1.weight" in note
    assert "Checkpointing would free" in note
    advice = note[note.index("Checkpointing would free"):]
    # tanh's output inside each block (16 x 64 float32) is saved by the block's own ops only
    assert "0 " in advice and "1 " in advice and "4.00 KiB" in advice


def test_simulated_device_out_of_memory(device, monkeypatch):
    if device != "cuda" or not os.environ.get("GPUTORCH_SIMULATE_CUDA"):
        pytest.skip("needs the simulated CUDA device (a bounded memory size)")
    monkeypatch.setenv("GPUTORCH_SIMULATE_CUDA_MEMORY", "64M")
    model = mlp(device)
    with pytest.raises(MemoryError) as info:
        with MemoryProfiler(model=model):
            h = model(batch(device)[0])
            gputorch.empty(1 << 26, device=device)                           # 256 MiB > 64 MiB
    assert "OutOfMemory" in type(info.value).__name__
    assert "out of memory" in info.value.memory_report
    assert "cuda:0: allocator used" in info.value.memory_report
    del h
