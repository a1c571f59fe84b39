"""CUDA graphs (``gputorch.cuda.CUDAGraph``, ``graph``, ``make_graphed_callables``) and the
simulated device's stream capture: a replay equals eager, capture-unsafe work fails clearly,
dropout draws fresh masks per replay, and a replay is one graph launch.

They run on a GPU or on the simulated device (``GPUTORCH_SIMULATE_CUDA=2``); without either,
only the check that creating a graph raises as PyTorch does without CUDA runs.
"""
import os

import numpy as np
import pytest

import gputorch
from gputorch import nn

HAS_CUDA = gputorch.cuda.is_available()
SIMULATED = HAS_CUDA and bool(os.environ.get("GPUTORCH_SIMULATE_CUDA"))
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs a GPU or the simulated device "
                                                      "(GPUTORCH_SIMULATE_CUDA=2)")
needs_simulation = pytest.mark.skipif(not SIMULATED, reason="checks the simulated device's capture model "
                                                            "(GPUTORCH_SIMULATE_CUDA=2)")


def close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(), rtol=rtol, atol=atol)


@pytest.mark.skipif(HAS_CUDA, reason="CUDA is available here")
def test_without_cuda_creating_a_graph_raises():
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        gputorch.cuda.CUDAGraph()
    assert gputorch.cuda.is_current_stream_capturing() is False


@needs_cuda
def test_pointwise_chain_replay_equals_eager():
    x = gputorch.randn(6, 7, device="cuda", dtype=gputorch.float64)
    g = gputorch.cuda.CUDAGraph()
    with gputorch.cuda.graph(g):
        y = ((x * 2 + 1).relu().exp() - x.sin()).sum(1)
    for _ in range(2):
        x.copy_(gputorch.randn(6, 7, device="cuda", dtype=gputorch.float64))
        g.replay()
        close(y, ((x * 2 + 1).relu().exp() - x.sin()).sum(1), rtol=0, atol=0)


@needs_simulation
def test_capture_records_and_does_not_run():
    x = gputorch.ones(3, device="cuda")
    g = gputorch.cuda.CUDAGraph()
    with gputorch.cuda.graph(g):
        y = x + 1
        x.mul_(3)
    assert np.isnan(y.cpu().numpy()).all()            # nothing ran: the output holds garbage
    assert (x.cpu().numpy() == 1).all()                # and the in-place op did not happen yet
    g.replay()
    assert (y.cpu().numpy() == 2).all() and (x.cpu().numpy() == 3).all()
    g.replay()
    assert (y.cpu().numpy() == 4).all() and (x.cpu().numpy() == 9).all()


def _mlp_step_setup(seed=0):
    gputorch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3)).to("cuda", gputorch.float64)
    opt = gputorch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return model, opt


def _step(model, opt, x, t):
    opt.zero_grad(set_to_none=True)
    loss = ((model(x) - t) ** 2).mean()
    loss.backward()
    opt.step()
    return loss


@needs_cuda
def test_mlp_training_step_replay_equals_eager():
    data = [(gputorch.randn(8, 5, dtype=gputorch.float64), gputorch.randn(8, 3, dtype=gputorch.float64))
            for _ in range(4)]
    ref, ref_opt = _mlp_step_setup()
    ref_losses = [_step(ref, ref_opt, x.cuda(), t.cuda()).item() for x, t in data]

    model, opt = _mlp_step_setup()
    static_x = gputorch.zeros(8, 5, device="cuda", dtype=gputorch.float64)
    static_t = gputorch.zeros(8, 3, device="cuda", dtype=gputorch.float64)
    static_x.copy_(data[0][0].cuda())
    static_t.copy_(data[0][1].cuda())
    side = gputorch.cuda.Stream()
    with gputorch.cuda.stream(side):            # warm-up step (momentum buffers exist from here on)
        first = _step(model, opt, static_x, static_t).item()
    opt.zero_grad(set_to_none=True)
    g = gputorch.cuda.CUDAGraph()
    with gputorch.cuda.graph(g):
        static_loss = ((model(static_x) - static_t) ** 2).mean()
        static_loss.backward()
        opt.step()
    losses = [first]
    for x, t in data[1:]:
        static_x.copy_(x.cuda())
        static_t.copy_(t.cuda())
        g.replay()
        losses.append(static_loss.item())
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-10)
    for p, q in zip(model.parameters(), ref.parameters()):
        close(p, q)


@needs_cuda
def test_make_graphed_callables_module_grads_equal_eager():
    gputorch.manual_seed(1)
    ref = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2)).to("cuda", gputorch.float64)
    module = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2)).to("cuda", gputorch.float64)
    module.load_state_dict(ref.state_dict())
    sample = gputorch.randn(5, 4, device="cuda", dtype=gputorch.float64, requires_grad=True)
    graphed = gputorch.cuda.make_graphed_callables(module, (sample,))
    assert graphed is module
    for seed in range(2):
        module.zero_grad(set_to_none=True)
        ref.zero_grad(set_to_none=True)
        x = gputorch.randn(5, 4, dtype=gputorch.float64, generator=gputorch.Generator().manual_seed(seed))
        x1 = x.cuda().requires_grad_()
        x2 = x.cuda().requires_grad_()
        out = graphed(x1)
        (out ** 2).sum().backward()
        expected = ref(x2)
        (expected ** 2).sum().backward()
        close(out, expected)
        close(x1.grad, x2.grad)
        for p, q in zip(module.parameters(), ref.parameters()):
            close(p.grad, q.grad)


@needs_cuda
def test_make_graphed_callables_function():
    w = gputorch.randn(3, 3, device="cuda", dtype=gputorch.float64, requires_grad=True)

    def f(x):
        return (x @ w).sigmoid()
    sample = gputorch.randn(2, 3, device="cuda", dtype=gputorch.float64, requires_grad=True)
    gf = gputorch.cuda.make_graphed_callables(f, (sample,), num_warmup_iters=1)
    x = gputorch.randn(2, 3, device="cuda", dtype=gputorch.float64, requires_grad=True)
    y = gf(x)
    y.sum().backward()
    x2 = x.detach().clone().requires_grad_()
    f(x2).sum().backward()
    close(y, f(x2))
    close(x.grad, x2.grad)
    with pytest.raises(RuntimeError, match="must match its sample inputs"):
        gf(gputorch.randn(4, 3, device="cuda", dtype=gputorch.float64))


@needs_cuda
def test_make_graphed_callables_refuses_cpu_inputs():
    with pytest.raises(RuntimeError, match="CUDA tensors only"):
        gputorch.cuda.make_graphed_callables(lambda x: x * 2, (gputorch.randn(2),))


@needs_cuda
@pytest.mark.parametrize("sync", ["item", "cpu", "print", "bool", "mask"])
def test_host_sync_during_capture_is_refused(sync, capsys):
    x = gputorch.randn(4, device="cuda")
    g = gputorch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="capturing"):
        with gputorch.cuda.graph(g):
            y = x * 2
            if sync == "item":
                y.sum().item()
            elif sync == "cpu":
                y.cpu()
            elif sync == "print":
                print(y)
            elif sync == "bool":
                bool(y.sum() > 0)
            else:
                y[y > 0]
    assert not gputorch.cuda.is_current_stream_capturing()


@needs_cuda
def test_copying_host_data_to_the_device_during_capture_is_refused():
    host = gputorch.randn(5)
    g = gputorch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="copying host data"):
        with gputorch.cuda.graph(g):
            host.cuda()


@needs_cuda
def test_adam_step_in_capture_is_refused():
    p = nn.Parameter(gputorch.randn(4, device="cuda"))
    opt = gputorch.optim.Adam([p])
    p.grad = gputorch.ones_like(p)
    opt.step()
    g = gputorch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="bias correction"):
        with gputorch.cuda.graph(g):
            opt.step()


@needs_simulation
def test_synchronize_during_capture_invalidates_it():
    g = gputorch.cuda.CUDAGraph()
    with pytest.raises(Exception, match="cudaErrorStreamCaptureUnsupported"):
        with gputorch.cuda.graph(g):
            gputorch.cuda.synchronize()
    with pytest.raises(RuntimeError, match="needs a captured graph"):
        g.replay()


@needs_cuda
def test_replay_before_capture_and_after_reset():
    g = gputorch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="needs a captured graph"):
        g.replay()
    x = gputorch.ones(2, device="cuda")
    with gputorch.cuda.graph(g):
        x.add_(1)
    g.replay()
    g.reset()
    with pytest.raises(RuntimeError, match="needs a captured graph"):
        g.replay()


@needs_cuda
def test_capture_on_the_default_stream_is_refused():
    g = gputorch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="non-default stream"):
        g.capture_begin()


@needs_cuda
def test_is_capturing_queries():
    s = gputorch.cuda.Stream()
    g = gputorch.cuda.CUDAGraph()
    assert not gputorch.cuda.is_current_stream_capturing()
    with gputorch.cuda.graph(g, stream=s):
        assert gputorch.cuda.is_current_stream_capturing()
        assert s.is_capturing()
    assert not s.is_capturing()


@needs_simulation
def test_cublas_during_capture_raises_like_cupy():
    cp = gputorch.backends.get_backend("cuda")._cupy
    a = cp.ones((3, 4))
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        with pytest.raises(NotImplementedError, match="cuBLAS"):
            cp.matmul(a, a.T)
        with pytest.raises(NotImplementedError, match="cuRAND"):
            cp.random.random(3)
        graph = s.end_capture()
    graph.launch()
    with pytest.raises(RuntimeError, match="legacy"):
        cp.cuda.Stream.null.begin_capture()


@needs_simulation
def test_matmul_in_capture_uses_the_gemm_kernel():
    """Eager products use cuBLAS (refused during capture); a captured product uses kernels/gemm.cu,
    equal to eager up to rounding, for plain, transposed and batched operands."""
    a = gputorch.randn(3, 5, 7, device="cuda", dtype=gputorch.float64)
    b = gputorch.randn(7, 4, device="cuda", dtype=gputorch.float64)
    c = gputorch.randn(6, 7, device="cuda", dtype=gputorch.float64)
    g = gputorch.cuda.CUDAGraph()
    with gputorch.cuda.graph(g):
        y1 = a @ b
        y2 = gputorch.bmm(a, a.transpose(1, 2))
        y3 = gputorch.addmm(c[:, :4], c, b)
    g.replay()
    close(y1, a @ b)
    close(y2, gputorch.bmm(a, a.transpose(1, 2)))
    close(y3, gputorch.addmm(c[:, :4], c, b))


@needs_cuda
def test_dropout_masks_differ_across_replays_and_follow_eager():
    x = gputorch.ones(64, device="cuda")
    g = gputorch.cuda.CUDAGraph()
    with gputorch.cuda.graph(g):
        y = nn.functional.dropout(x, 0.5)
    gputorch.cuda.manual_seed(123)
    masks = []
    for _ in range(3):
        g.replay()
        masks.append(y.cpu().numpy().copy())
    assert not np.array_equal(masks[0], masks[1]) and not np.array_equal(masks[1], masks[2])
    gputorch.cuda.manual_seed(123)
    eager = [nn.functional.dropout(x, 0.5).cpu().numpy() for _ in range(3)]
    for m, e in zip(masks, eager):
        np.testing.assert_array_equal(m, e)


@needs_cuda
def test_tensors_made_during_capture_survive():
    x = gputorch.randn(16, device="cuda")
    g = gputorch.cuda.CUDAGraph()
    with gputorch.cuda.graph(g):
        out = (x * 3).tanh() + 1        # the intermediate (x * 3) is dropped by Python
    import gc
    gc.collect()
    filler = [gputorch.full((16,), 7.0, device="cuda") for _ in range(4)]   # eager memory after capture
    g.replay()
    close(out, (x * 3).tanh() + 1, rtol=1e-6, atol=1e-6)
    assert all((f.cpu().numpy() == 7).all() for f in filler)
    assert len(g.pool()._blocks) >= 2


@needs_simulation
def test_replay_is_one_graph_launch():
    from gputorch.backends import simulated_cupy_graph as sim
    model, opt = _mlp_step_setup()
    x = gputorch.randn(8, 5, device="cuda", dtype=gputorch.float64)
    t = gputorch.randn(8, 3, device="cuda", dtype=gputorch.float64)
    side = gputorch.cuda.Stream()
    with gputorch.cuda.stream(side):
        _step(model, opt, x, t)
    sim.reset_counters()
    _step(model, opt, x, t)
    eager = dict(sim.counters)
    opt.zero_grad(set_to_none=True)
    g = gputorch.cuda.CUDAGraph()
    with gputorch.cuda.graph(g):
        ((model(x) - t) ** 2).mean().backward()
        opt.step()
    sim.reset_counters()
    g.replay()
    assert sim.counters == {"kernels": 0, "memcpy": 0, "graph_launches": 1}
    assert eager["kernels"] > 10 and eager["graph_launches"] == 0


@needs_cuda
def test_make_graphed_callables_with_dropout_follows_eager():
    """The forward graph draws the masks (a fresh one per call), the backward graph regenerates
    the same ones: outputs and gradients equal eager runs from the same generator state."""
    gputorch.manual_seed(3)
    ref = nn.Sequential(nn.Linear(6, 32), nn.Dropout(0.4), nn.Linear(32, 2)).to("cuda", gputorch.float64)
    module = nn.Sequential(nn.Linear(6, 32), nn.Dropout(0.4), nn.Linear(32, 2)).to("cuda", gputorch.float64)
    module.load_state_dict(ref.state_dict())
    sample = gputorch.randn(4, 6, device="cuda", dtype=gputorch.float64)
    graphed = gputorch.cuda.make_graphed_callables(module, (sample,), num_warmup_iters=2)
    x = gputorch.randn(4, 6, device="cuda", dtype=gputorch.float64)
    gputorch.cuda.manual_seed(11)
    outs = []
    for _ in range(2):
        module.zero_grad(set_to_none=True)
        out = graphed(x)
        out.square().sum().backward()
        outs.append((out.detach().clone(), module[0].weight.grad.clone()))
    assert not np.array_equal(outs[0][0].cpu().numpy(), outs[1][0].cpu().numpy())
    gputorch.cuda.manual_seed(11)
    for out, grad in outs:
        ref.zero_grad(set_to_none=True)
        expected = ref(x)
        expected.square().sum().backward()
        close(out, expected)
        close(grad, ref[0].weight.grad)
