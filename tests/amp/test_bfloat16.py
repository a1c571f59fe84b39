"""bfloat16 on the CPU (through ml_dtypes): values, dtypes and promotion as torch's CPU bfloat16,
products computed in float32 and rounded once, views that share memory, gradients, and the
CPU-only error on CUDA."""
import numpy as np
import pytest

import gputorch

pytest.importorskip("ml_dtypes")
R = np.random.default_rng(0)
A = R.standard_normal((6, 9)).astype(np.float32)
B = R.standard_normal((9, 4)).astype(np.float32)
IMG = R.standard_normal((2, 3, 7, 7)).astype(np.float32)
KER = R.standard_normal((5, 3, 3, 3)).astype(np.float32)
LABELS = [0, 3, 1, 2, 3, 0]
ULP = 2.0 ** -7   # bfloat16's relative spacing: one rounding

CASES = {
    "tensor": lambda m, b: b(A),
    "add": lambda m, b: b(A) + b(A) * 3.3,
    "exp": lambda m, b: b(A).exp(),
    "tanh": lambda m, b: b(A).tanh(),
    "div": lambda m, b: b(A) / (b(A).abs() + 1),
    "mm": lambda m, b: b(A) @ b(B),
    "bmm": lambda m, b: m.bmm(b(A)[None].expand(2, 6, 9), b(B)[None].expand(2, 9, 4)),
    "linear": lambda m, b: m.nn.functional.linear(b(A), b(B.T), b(B[0])),
    "conv2d": lambda m, b: m.nn.functional.conv2d(b(IMG), b(KER), padding=1),
    "sum": lambda m, b: b(A).sum(),
    "mean_dim": lambda m, b: b(A).mean(1),
    "softmax": lambda m, b: b(A).softmax(-1),
    "log_softmax": lambda m, b: b(A).log_softmax(-1),
    "layer_norm": lambda m, b: m.nn.functional.layer_norm(b(A), (9,)),
    "cross_entropy": lambda m, b: m.nn.functional.cross_entropy(b(A), m.tensor(LABELS)),
    "gelu": lambda m, b: m.nn.functional.gelu(b(A)),
    "cumsum": lambda m, b: b(A).cumsum(1),
    "max": lambda m, b: b(A).max(0).values,
    "argmax": lambda m, b: b(A).argmax(1),
    "cat": lambda m, b: m.cat([b(A), b(A) * 2]),
    "where": lambda m, b: m.where(b(A) > 0, b(A), 0.5),
    "index": lambda m, b: b(A)[[0, 2], 1:5],
    "arange": lambda m, b: m.arange(0, 3, 0.37, dtype=m.bfloat16),
    "full": lambda m, b: m.full((3,), 3.3, dtype=m.bfloat16),
    "linspace": lambda m, b: m.linspace(0, 1, 7, dtype=m.bfloat16),
    # promotion: bfloat16 with float16 or float32 gives float32; with integers and scalars, bfloat16
    "with_float32": lambda m, b: b(A) + m.tensor(A),
    "with_float16": lambda m, b: b(A) * m.tensor(A).half(),
    "with_int64": lambda m, b: b(A) + m.ones(6, 9, dtype=m.int64),
    "with_0d_float32": lambda m, b: b(A) + m.tensor(2.5),
    "to_float": lambda m, b: b(A).float() * 1.001,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_dtypes_match_torch(name):
    torch = pytest.importorskip("torch")
    outs = []
    for m in (gputorch, torch):
        outs.append(CASES[name](m, lambda a, m=m: m.tensor(a, dtype=m.bfloat16)))
    ours, theirs = outs
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_allclose(ours.double().numpy(), theirs.double().numpy(), rtol=2 * ULP, atol=1e-2)


def test_products_round_once_from_float32():
    """A bfloat16 product is the float32 product rounded once (not accumulated in bfloat16)."""
    a, b = gputorch.tensor(A).bfloat16(), gputorch.tensor(B).bfloat16()
    expected = (a.float().numpy() @ b.float().numpy()).astype(a.numpy().dtype)
    assert np.array_equal((a @ b).numpy(), expected)
    assert (a @ b).dtype is gputorch.bfloat16


def test_printing_finfo_and_legacy_type():
    torch = pytest.importorskip("torch")
    x = gputorch.tensor([[0.1, -2.5, 1e3]], dtype=gputorch.bfloat16)
    assert repr(x) == repr(torch.tensor([[0.1, -2.5, 1e3]], dtype=torch.bfloat16)).replace("torch.", "gputorch.")
    assert x.type() == "torch.BFloat16Tensor" and isinstance(x, gputorch.BFloat16Tensor)
    assert x.element_size() == 2 and x.is_floating_point()
    ours, theirs = gputorch.finfo(gputorch.bfloat16), torch.finfo(torch.bfloat16)
    assert (ours.eps, ours.max, ours.tiny, ours.resolution, ours.bits) == \
        (theirs.eps, theirs.max, theirs.tiny, theirs.resolution, theirs.bits)
    assert gputorch.promote_types(gputorch.bfloat16, gputorch.float16) is gputorch.float32


def test_views_share_memory_and_in_place_ops_write_through():
    x = gputorch.zeros(2, 3, dtype=gputorch.bfloat16)
    x.view(6)[1] = 7.0
    x.t().mul_(2).add_(1)
    x[1].sub_(gputorch.ones(3))      # a float32 operand written into bfloat16
    assert x.dtype is gputorch.bfloat16
    assert x.tolist() == [[1.0, 15.0, 1.0], [0.0, 0.0, 0.0]]


def test_gradients_are_bfloat16_and_match_torch():
    torch = pytest.importorskip("torch")
    grads = []
    for m in (gputorch, torch):
        w = m.tensor(B, dtype=m.bfloat16, requires_grad=True)
        x = m.tensor(A, dtype=m.bfloat16, requires_grad=True)
        loss = m.nn.functional.cross_entropy((x @ w).relu(), m.tensor(LABELS))
        loss.backward()
        assert w.grad.dtype is m.bfloat16 and x.grad.dtype is m.bfloat16
        grads.append((w.grad.double().numpy(), x.grad.double().numpy()))
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=4 * ULP, atol=1e-3)


def test_module_bfloat16_and_random_draws():
    gputorch.manual_seed(0)
    model = gputorch.nn.Linear(9, 4).bfloat16()
    assert model.weight.dtype is gputorch.bfloat16
    assert model(gputorch.tensor(A, dtype=gputorch.bfloat16)).dtype is gputorch.bfloat16
    u = gputorch.rand(10000, dtype=gputorch.bfloat16)
    assert u.dtype is gputorch.bfloat16 and float(u.min()) >= 0 and float(u.max()) < 1
    assert gputorch.randn(3, dtype=gputorch.bfloat16).dtype is gputorch.bfloat16


def test_cuda_refuses_bfloat16():
    if not gputorch.cuda.is_available():
        pytest.skip("needs a (real or simulated) CUDA device")
    for make in (lambda: gputorch.ones(2, dtype=gputorch.bfloat16).cuda(),
                 lambda: gputorch.ones(2, device="cuda").bfloat16(),
                 lambda: gputorch.zeros(2, dtype=gputorch.bfloat16, device="cuda"),
                 lambda: gputorch.randn(2, dtype=gputorch.bfloat16, device="cuda"),
                 lambda: gputorch.tensor([1.0], dtype=gputorch.bfloat16, device="cuda")):
        with pytest.raises(RuntimeError, match="bfloat16 tensors are CPU-only"):
            make()


def test_default_dtype_and_meta_tensors():
    torch = pytest.importorskip("torch")
    for m in (gputorch, torch):
        m.set_default_dtype(m.bfloat16)
        try:
            x = m.tensor([1.5, 2.3]) + 0.1
            assert x.dtype is m.bfloat16 and m.ones(2).dtype is m.bfloat16
        finally:
            m.set_default_dtype(m.float32)
    assert x.tolist() == [1.6015625, 2.390625]
    meta = gputorch.zeros(2, 3, dtype=gputorch.bfloat16, device="meta")
    assert (meta @ meta.T).dtype is gputorch.bfloat16 and meta.sum().dtype is gputorch.bfloat16


def test_normalizations_take_float32_parameters_like_torch():
    """layer/group/batch/RMS norm of a bfloat16 input with float32 affine parameters give bfloat16
    (PyTorch's CPU "mixed type" kernels; CPU autocast runs them so); values and grads as torch's."""
    torch = pytest.importorskip("torch")
    results = []
    for m in (gputorch, torch):
        F = m.nn.functional
        x = m.tensor(A[:4, :8], dtype=m.bfloat16, requires_grad=True)
        w = m.tensor(1 + A[4, :8], requires_grad=True)
        b = m.tensor(A[5, :8], requires_grad=True)
        outs = [F.layer_norm(x, (8,), w, b), F.group_norm(x.view(4, 8, 1), 2, w, b),
                F.batch_norm(x, m.zeros(8), m.ones(8), w, b, training=True), F.rms_norm(x, (8,), w)]
        assert all(o.dtype is m.bfloat16 for o in outs)
        sum((o.float() * m.tensor(B[:8, 0])).sum() for o in outs).backward()
        assert x.grad.dtype is m.bfloat16 and w.grad.dtype is m.float32
        results.append([o.double().detach().numpy() for o in outs] + [x.grad.double().numpy(), w.grad.numpy()])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=4 * ULP, atol=2e-2)


def test_batch_norm_updates_bfloat16_running_statistics_like_torch():
    torch = pytest.importorskip("torch")
    stats = []
    for m in (gputorch, torch):
        bn = m.nn.BatchNorm1d(9).bfloat16()
        x = m.tensor(A, dtype=m.bfloat16)
        bn(x)
        bn(x.expand(2, 6, 9).reshape(12, 9))
        stats.append((bn.running_mean.tolist(), bn.running_var.tolist(), str(bn.running_mean.dtype)))
    assert stats[0][2].endswith("bfloat16")
    for ours, theirs in zip(stats[0][:2], stats[1][:2]):   # equal up to one bfloat16 rounding
        np.testing.assert_allclose(ours, theirs, rtol=ULP, atol=1e-3)
