"""``gputorch.utils.viz.make_dot``: the autograd graph as a Digraph, node for node the drawing that
the unmodified torchviz package makes of the same gputorch graph, plus saved tensors and attributes."""
import json
import re
import subprocess
import sys
import textwrap

import pytest

import gputorch

graphviz = pytest.importorskip("graphviz")
from gputorch.utils.viz import make_dot  # noqa: E402


def _parse(source):
    """``({node id: attribute text}, {(from, to, attributes)})`` of a DOT source."""
    nodes, edges = {}, set()
    for m in re.finditer(r'^\t(\d+) \[(.*?)\]$', source, re.M | re.S):
        nodes[m.group(1)] = m.group(2)
    for m in re.finditer(r'^\t(\d+) -> (\d+)(?: \[(.*?)\])?$', source, re.M):
        edges.add((m.group(1), m.group(2), m.group(3) or ""))
    return nodes, edges


COMPARE = textwrap.dedent("""
    import json, re, sys
    import gputorch
    from gputorch.utils.viz import make_dot as ours
    for name, module in list(sys.modules.items()):
        if name == "gputorch" or name.startswith("gputorch."):
            sys.modules["torch" + name[len("gputorch"):]] = module
    import torch
    from torchviz import make_dot as theirs

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv1d(1, 2, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(2 * 6, 3)).to("{device}")
    x = torch.randn(4, 1, 8, device="{device}")
    h = model(x)
    outputs = (h.sum(), (h * 2).mean())
    params = dict(model.named_parameters())
    drawings = {{"before": (ours(outputs, params).source, theirs(outputs, params).source)}}
    outputs[0].backward(retain_graph=True)
    drawings["after"] = (ours(outputs[0], params).source, theirs(outputs[0], params).source)
    print(json.dumps(drawings))
""")


def test_same_drawing_as_torchviz_node_by_node(device):
    pytest.importorskip("torchviz")
    if device == "cuda" and not gputorch.cuda.is_available():
        pytest.skip("needs a (real or simulated) CUDA device")
    out = subprocess.run([sys.executable, "-c", COMPARE.format(device=device)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    for when, (ours, theirs) in json.loads(out.stdout).items():
        (our_nodes, our_edges), (their_nodes, their_edges) = _parse(ours), _parse(theirs)
        assert our_nodes == their_nodes, when
        assert our_edges == their_edges, when
        labels = " ".join(our_nodes.values())
        names = ["ConvolutionBackward0", "ReluBackward0", "ViewBackward0", "LinearBackward0", "SumBackward0",
                 "AccumulateGrad", "0.weight", "3.bias"]
        if when == "before":
            names += ["MulBackward0", "MeanBackward0"]
        for name in names:
            assert name in labels, (when, name)


def test_saved_tensors_and_attributes(device):
    x = gputorch.randn(5, 4, device=device, requires_grad=True)
    w = gputorch.randn(3, 4, device=device, requires_grad=True)
    y = (x @ w.t()).relu().sum()
    plain = make_dot(y, params={"x": x, "w": w})
    assert isinstance(plain, graphviz.Digraph) and "orange" not in plain.source
    nodes, edges = _parse(make_dot(y, params={"x": x, "w": w}, show_saved=True, show_attrs=True).source)
    relu = next(k for k, v in nodes.items() if v.startswith('label="ReluBackward0'))
    assert "result: [saved tensor]" in nodes[relu]
    saved = [b for a, b, attrs in edges if a == relu and attrs == "dir=none"]
    assert len(saved) == 1 and 'label="result\n (5, 3)" fillcolor=orange' in nodes[saved[0]]
    assert any('label="x\n (5, 4)" fillcolor=lightblue' in v for v in nodes.values())
    y.backward()          # saved tensors are freed: nothing saved is drawn, and nothing raises
    after = make_dot(y, show_saved=True, show_attrs=True).source
    assert "orange" not in after and "ReluBackward0" in after


def test_custom_function_view_output_and_errors(device):
    class Square(gputorch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    a = gputorch.randn(6, device=device, requires_grad=True)
    out = Square.apply(a).view(2, 3)
    source = make_dot(out, params={"a": a}, show_saved=True).source
    assert "SquareBackward" in source and "ViewBackward0" in source and "fillcolor=orange" in source
    assert "darkolivegreen3" in source and "style=dotted" in source           # the view's base
    with pytest.raises(TypeError, match="params should map names to tensors"):
        make_dot(out, params={"a": 1.0})


def test_without_graphviz_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(ImportError, match="pip install graphviz"):
        make_dot(gputorch.ones(1, requires_grad=True) * 2)
