"""``gputorch.jit``: a traced module equals the eager model (values and gradients, every device),
prints its graph, moves between devices, saves and loads without pickle, and warns where the
trace fixes a value-dependent branch."""
import io
import warnings
import zipfile

import numpy as np
import pytest

import gputorch as T
from tests._helpers import to_numpy


def _cnn():
    T.manual_seed(0)
    return T.nn.Sequential(T.nn.Conv1d(1, 8, 5, padding=2), T.nn.GELU(), T.nn.MaxPool1d(2), T.nn.BatchNorm1d(8),
                           T.nn.Flatten(), T.nn.Linear(8 * 20, 10), T.nn.LogSoftmax(-1)).eval()


def test_traced_module_equals_eager(device):
    model = _cnn().to(device)
    x = T.randn(3, 1, 40, device=device)
    traced = T.jit.trace(model, x)
    np.testing.assert_array_equal(to_numpy(traced(x)), to_numpy(model(x)))
    other = T.randn(3, 1, 40, device=device)
    np.testing.assert_allclose(to_numpy(traced(other)), to_numpy(model(other)), rtol=1e-6, atol=1e-6)
    traced(other).sum().backward()                 # parameters are shared: gradients reach them
    grads = [p.grad.clone() for p in model.parameters()]
    for p in model.parameters():
        p.grad = None
    model(other).sum().backward()
    for a, e in zip(grads, model.parameters()):
        np.testing.assert_allclose(to_numpy(a), to_numpy(e.grad), rtol=1e-5, atol=1e-6)


def test_graph_printing_and_scopes():
    traced = T.jit.trace(_cnn(), T.randn(2, 1, 40))
    text = repr(traced.graph)
    assert text.startswith("graph(%input0):") and "Convolution(%input0, %0.weight, %0.bias" in text
    assert "# 5" in text and text.rstrip().endswith("return %9")
    assert [n.kind for n in traced.graph.nodes][:2] == ["Convolution", "Gelu"]


def test_save_load_and_move(device):
    model = _cnn()
    x = T.randn(2, 1, 40)
    traced = T.jit.trace(model, x)
    expected = to_numpy(model(x))      # before the move: the traced module shares the model's parameters
    buf = io.BytesIO()
    T.jit.save(traced, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        assert "graph.json" in z.namelist() and not any(n.endswith(".pkl") for n in z.namelist())
    buf.seek(0)
    loaded = T.jit.load(buf, map_location=device)
    np.testing.assert_allclose(to_numpy(loaded(x.to(device))), expected, rtol=1e-6, atol=1e-6)
    moved = traced.to(device)
    np.testing.assert_allclose(to_numpy(moved(x.to(device))), expected, rtol=1e-6, atol=1e-6)
    with pytest.raises(RuntimeError, match="recorded with shape \\[2, 1, 40\\]"):
        moved(T.randn(3, 1, 40, device=device))


def test_load_refuses_foreign_classes():
    traced = T.jit.trace(lambda a: a * 2, T.ones(2))
    buf = io.BytesIO()
    T.jit.save(traced, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        doc = z.read("graph.json").decode().replace("gputorch.ops.arithmetic:MulBackward0", "os:system")
        tensors = {n: z.read(n) for n in z.namelist() if n != "graph.json"}
    evil = io.BytesIO()
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("graph.json", doc)
        for n, data in tensors.items():
            z.writestr(n, data)
    evil.seek(0)
    with pytest.raises(RuntimeError, match="outside gputorch"):
        T.jit.load(evil)


def test_functions_inplace_ops_and_tracer_warning():
    def fn(a, b):
        c = a * 2
        c.add_(b)                  # in place: later reads see the new value
        if c.sum() > 0:            # a value-dependent branch: fixed to the branch taken
            return c.relu(), c - 1
        return c, c

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = T.jit.trace(fn, (T.ones(3), T.ones(3)))
    assert any(w.category is T.jit.TracerWarning for w in caught)
    a, b = T.tensor([1.0, -5.0, 2.0]), T.tensor([0.5, 0.5, 0.5])
    out = traced(a, b)
    np.testing.assert_array_equal(to_numpy(out[0]), [2.5, 0.0, 4.5])
    np.testing.assert_array_equal(to_numpy(out[1]), [1.5, -10.5, 3.5])
    with pytest.raises(TypeError, match="input 0 must be a Tensor"):
        T.jit.trace(fn, (1.0, T.ones(3)))


def test_index_tensors_are_traced_values():
    """An index tensor computed from the input (``w[i]``, ``index_select``, ``gather``) is part of the
    graph: the replay and a saved-and-loaded module use the new index, not the traced one."""
    class Lookup(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = T.nn.Parameter(T.randn(5, 3))

        def forward(self, i):
            return self.w[i], self.w.index_select(0, i), self.w.gather(0, i[:, None].expand(-1, 3)), self.w[:, [0, 2]]
    model = Lookup()
    traced = T.jit.trace(model, (T.tensor([0, 1]),))
    assert "Index[%input0]" in str(traced.graph)
    buf = io.BytesIO()
    T.jit.save(traced, buf)
    buf.seek(0)
    loaded = T.jit.load(buf)
    i = T.tensor([3, 4])
    for module in (traced, loaded):
        for got, expected in zip(module(i), model(i)):
            assert T.equal(got, expected)
    grad, = T.autograd.grad(traced(i)[0].sum(), model.w)
    assert grad[3:].sum().item() == 6 and grad[:3].sum().item() == 0


def test_assignment_through_a_traced_index_tensor():
    """``x[idx] = v`` with ``idx`` from the input: the index is a traced value in the replay and
    after save/load, not the traced one."""
    def scatter(x, idx, v):
        y = x.clone()
        y[idx] = v
        return y
    x, v = T.zeros(5, 2), T.ones(2, 2)
    traced = T.jit.trace(scatter, (x, T.tensor([0, 1]), v))
    assert "index=Index[%input1]" in str(traced.graph)
    buf = io.BytesIO()
    T.jit.save(traced, buf)
    buf.seek(0)
    for module in (traced, T.jit.load(buf)):
        assert T.equal(module(x, T.tensor([3, 4]), v), scatter(x, T.tensor([3, 4]), v))
