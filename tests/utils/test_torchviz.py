"""The unmodified torchviz package draws gputorch graphs (gputorch standing in for torch): node
names as PyTorch's, parameters by name, and no saved tensors on built-in nodes (only custom
Functions expose ``saved_tensors``, as in PyTorch), before and after backward."""
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
