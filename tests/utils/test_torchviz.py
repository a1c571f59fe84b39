"""The unmodified torchviz package draws gputorch graphs (gputorch standing in for torch): node
names as PyTorch's, parameters by name, no ``saved_tensors`` on built-in nodes (only custom
Functions expose it, as in PyTorch), before and after backward; and with ``show_saved`` the same
saved tensors as on PyTorch's graph, read from PyTorch's ``_saved_<name>`` attributes."""
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torchviz")
pytest.importorskip("graphviz")

SCRIPT = textwrap.dedent("""
    import sys
    import gputorch
    for name, module in list(sys.modules.items()):
        if name == "gputorch" or name.startswith("gputorch."):
            sys.modules["torch" + name[len("gputorch"):]] = module
    import torch
    from torchviz import make_dot

    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2)).to("{device}")
    y = model(torch.randn(5, 4, device="{device}")).sum()
    before = make_dot(y, params=dict(model.named_parameters())).source
    y.backward()
    after = make_dot(y, params=dict(model.named_parameters())).source
    print(before)
    print("=====")
    print(after)
""")


def test_torchviz_draws_a_gputorch_graph(device):
    import gputorch
    if device == "cuda" and not gputorch.cuda.is_available():
        pytest.skip("needs a (real or simulated) CUDA device")
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(device=device)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    before, after = out.stdout.split("=====")
    for name in ("LinearBackward0", "ReluBackward0", "SumBackward0", "AccumulateGrad", "0.weight", "2.bias"):
        assert name in before, name
    assert before.count("AccumulateGrad") == 4           # one per parameter
    assert "fillcolor=orange" not in before               # no saved tensors drawn for built-in nodes
    assert after.count("AccumulateGrad") == 4


SAVED_SCRIPT = textwrap.dedent("""
    import re, sys
    if sys.argv[1] == "gputorch":
        import gputorch
        for name, module in list(sys.modules.items()):
            if name == "gputorch" or name.startswith("gputorch."):
                sys.modules["torch" + name[len("gputorch"):]] = module
    import torch
    from torchviz import make_dot

    x = torch.randn(2, 3, requires_grad=True)
    w = torch.randn(3, 4, requires_grad=True)
    y = (x.mm(w).exp() * x.sum()).log().sum()
    source = make_dot(y, show_saved=True).source
    print(sorted(re.findall(r'label="(\\w+)\\n ([^"]*)" fillcolor=orange', source)))
""")


def test_torchviz_show_saved_names_match_pytorch():
    """PyTorch's ``_saved_<name>`` attributes (``_saved_self``, ``_saved_mat2``, ``_saved_result``, ...)
    on built-in nodes: torchviz's ``show_saved`` draws the same saved tensors, by the same names."""
    pytest.importorskip("torch")
    runs = [subprocess.run([sys.executable, "-c", SAVED_SCRIPT, which], capture_output=True, text=True, timeout=120)
            for which in ("torch", "gputorch")]
    for run in runs:
        assert run.returncode == 0, run.stderr
    theirs, ours = (run.stdout.strip() for run in runs)
    assert ours == theirs and "result" in ours and "mat2" in ours, (ours, theirs)
