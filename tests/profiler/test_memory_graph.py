"""Memory on the autograd graph: which module recorded each node (and so pays for what its
backward allocates), module types in the tables, and ``MemoryReport.graph()`` with its HTML panel."""
import re
import sys

import pytest

import gputorch
import gputorch.nn as nn
import gputorch.nn.functional as F
from gputorch.autograd import engine
from gputorch.profiler import MemoryProfiler
from gputorch.profiler.html import render
from gputorch.profiler.report import NO_MODULE

from tests.profiler._workloads import batch, graph_saved_bytes, mlp, storage_key


def _train_step(model, x, y, opt):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()


def _walk(root):
    seen, stack = [], [root]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.append(fn)
        stack += [nxt for nxt, _ in fn.next_functions]
    return seen


def test_each_node_knows_the_module_that_recorded_it(device):
    model = mlp(device)
    x, y = batch(device)
    with MemoryProfiler(model) as prof:
        loss = F.cross_entropy(model(x), y)
        marks = prof.observer.marks
        found = {(type(fn).__name__, marks.module_of(fn)) for fn in _walk(loss.grad_fn)}
    assert found == {("CrossEntropyLossBackward0", None), ("AccumulateGrad", None),
                     ("LinearBackward0", "0"), ("LinearBackward0", "2"), ("LinearBackward0", "4"),
                     ("ReluBackward0", "1"), ("ReluBackward0", "3")}
    assert not engine.GRAPH_HOOKS and not engine.NODE_HOOKS        # removed when the profiler stops


def test_backward_memory_is_charged_to_the_modules(device):
    """What a node's backward allocates belongs to the module whose forward recorded the node:
    nothing made by backward lands on <no module> but what the loss's own backward makes (its
    softmax and the gradient of the logits)."""
    model = mlp(device)
    x, y = batch(device)
    opt = gputorch.optim.SGD(model.parameters(), lr=0.1)
    made = []
    with MemoryProfiler(model, opt) as prof:
        tracker = prof.tracker
        register = tracker._register

        def spy(*args, **kwargs):
            rec = register(*args, **kwargs)
            if rec is not None and rec.phase == "backward":
                made.append(rec)
            return rec
        tracker._register = spy
        _train_step(model, x, y, opt)
    by_module = {}
    for rec in made:
        by_module[rec.module] = by_module.get(rec.module, 0) + rec.nbytes
    assert {"0", "2", "4"} <= set(by_module)
    loss_grad = by_module.get(None, 0)
    n, classes = y.shape[0], 10
    assert loss_grad <= 2 * n * classes * 4


def test_module_types_beside_paths():
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))
    opt = gputorch.optim.SGD(model.parameters(), lr=0.1)
    with MemoryProfiler(model, opt) as prof:
        _train_step(model, gputorch.randn(4, 1, 6, 6), gputorch.tensor([0, 1, 2, 0]), opt)
    report = prof.report()
    assert report.module_types["0"] == "Conv2d" and report.module_types[""] == "Sequential"
    assert report.module_label("0") == "0 (Conv2d)" and report.module_label(None) == NO_MODULE
    assert "0 (Conv2d)" in str(report) and "3 (Linear)" in str(report)
    assert "<td>3 (Linear)</td>" in render(report)


def test_graph_shows_saved_bytes_by_module(device):
    graphviz = pytest.importorskip("graphviz")
    model = mlp(device)
    x, y = batch(device)
    params = {storage_key(p) for p in model.parameters()}
    with MemoryProfiler(model) as prof:
        loss = F.cross_entropy(model(x), y)
        held = graph_saved_bytes(loss.grad_fn, exclude=params)
        loss.backward()
    report = prof.report()
    snapshot = report.autograd_graph
    assert snapshot["held"] == held and snapshot["step"] == 0
    names = sorted(n["name"] for n in snapshot["nodes"])
    assert names.count("LinearBackward0") == 3 and names.count("AccumulateGrad") == 6
    assert sorted(n["param"] for n in snapshot["nodes"] if n["param"]) == sorted(n for n, _ in model.named_parameters())
    dot = report.graph(top=2)
    assert isinstance(dot, graphviz.Digraph)
    source = dot.source
    assert 'label="0 (Linear)"' in source and 'label="1 (ReLU)"' in source and "0.weight" in source
    assert source.count('fillcolor="#e15759"') == 2           # the two largest holders
    largest = max(n["held"] for n in snapshot["nodes"])
    assert f"{largest / 1024:.2f} KiB" in source
    declared = set(re.findall(r'^\s*("?[\w.]+"?) \[', source, re.M))
    for a, b in re.findall(r'^\s*("?[^"\s]+"?) -> ("?[^"\s]+"?)', source, re.M):
        assert a in declared and b in declared


def _deep_model(blocks=6, width=8):
    gputorch.manual_seed(0)
    layers = [nn.Linear(4, width)]
    layers += [nn.Sequential(nn.Linear(width, width), nn.Tanh(), nn.Linear(width, width)) for _ in range(blocks)]
    return nn.Sequential(*layers, nn.Linear(width, 2))


def test_repeated_modules_fold_into_one_box():
    pytest.importorskip("graphviz")
    model = _deep_model()
    with MemoryProfiler(model) as prof:
        model(gputorch.randn(5, 4)).sum().backward()
    report = prof.report()
    full = report.graph(max_nodes=1000).source
    assert "x5" not in full and full.count("TanhBackward0") == 6
    folded = report.graph(max_nodes=30).source
    block = [n for n in report.autograd_graph["nodes"] if (n["module"] or "").startswith("2") or
             (n["param"] or "").startswith("2.")]
    assert "2 ... 6 (Sequential x5)" in folded and f"{len(block)} nodes" in folded
    assert folded.count("TanhBackward0") == 1                   # block 1 drawn, blocks 2 to 6 folded
    tiny = report.graph(max_nodes=4, top=1).source              # folded by depth as well
    assert tiny.count("->") < full.count("->")


def test_html_panel_svg_or_dot_source(tmp_path, monkeypatch):
    pytest.importorskip("graphviz")
    import shutil
    model = mlp("cpu")
    x, y = batch("cpu")
    with MemoryProfiler(model) as prof:
        F.cross_entropy(model(x), y).backward()
    report = prof.report()
    if shutil.which("dot"):
        page = report.save_html(str(tmp_path / "a.html"))
        text = open(page).read()
        assert "What holds the activations" in text and text.count("<svg") >= 2 and "LinearBackward0" in text
    monkeypatch.setattr(shutil, "which", lambda name: None)
    text = open(report.save_html(str(tmp_path / "b.html"))).read()
    assert "dot program is not installed (apt install graphviz" in text and '<pre class="dot">' in text
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(ImportError, match="pip install graphviz"):
        report.graph()
    text = open(report.save_html(str(tmp_path / "c.html"))).read()
    assert "needs the graphviz package" in text


def test_no_backward_no_graph():
    model = mlp("cpu")
    with MemoryProfiler(model) as prof:
        with gputorch.no_grad():
            model(batch("cpu")[0])
    report = prof.report()
    assert report.autograd_graph is None
    with pytest.raises(RuntimeError, match="no backward pass ran"):
        report.graph()
    assert "What holds the activations" not in render(report)


def test_marks_stay_bounded(device):
    """Module marks are only taken with grad mode on and forgotten a step after their graphs."""
    model = mlp(device)
    x, y = batch(device)
    opt = gputorch.optim.SGD(model.parameters(), lr=0.1)
    with MemoryProfiler(model, opt) as prof:
        with gputorch.no_grad():
            for _ in range(20):
                model(x)
        assert prof.observer.marks.seqs == []
        for _ in range(10):
            _train_step(model, x, y, opt)
        kept = len(prof.observer.marks.seqs)
    assert kept <= 2 * 2 * 6            # two steps' worth of forwards: 6 modules, 2 marks per call


def test_a_graph_outside_every_module_stays_drawable():
    """Plain tensor code (no modules) records long graphs: they fold into one <no module> box
    beside the top holders."""
    pytest.importorskip("graphviz")
    w = gputorch.randn(8, 8, requires_grad=True)
    with MemoryProfiler() as prof:
        h = gputorch.randn(4, 8)
        for _ in range(100):
            h = (h @ w).tanh()
        h.sum().backward()
    report = prof.report()
    assert len(report.autograd_graph["nodes"]) > 200
    source = report.graph(max_nodes=20, top=3).source
    drawn = re.findall(r'^\s*("?[\w<>. ]+"?) \[', source, re.M)
    assert len(drawn) <= 6 and "<no module>" in source and source.count('fillcolor="#e15759"') == 3
