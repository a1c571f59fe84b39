"""The meta device: tensors with shapes and dtypes and no data.

Each op on meta tensors must give the shape, dtype and strides it gives on a real device, and its
backward the same gradient shapes, without allocating; data-dependent operations raise."""
import copy
import os
import tracemalloc

import numpy as np
import pytest

import gputorch
from gputorch.backends.cpu import owns_memory
import gputorch.nn as nn
import gputorch.nn.functional as F
from gputorch import _tensor
from gputorch._tensor import Tensor

META = gputorch.device("meta")


def _flat(x):
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for item in x for t in _flat(item)]
    return []


def _same_layout(real, meta):
    assert meta.device == META
    assert meta.shape == real.shape
    assert meta.dtype == real.dtype
    if real.numel():
        assert meta.stride() == real.stride()
        assert meta.is_contiguous() == real.is_contiguous()


def _check_op(fn, inputs, device):
    """Run ``fn`` on copies of ``inputs`` on ``device`` and on meta, forward and backward (of the
    sum of the floating-point outputs); compare outputs and input gradients."""
    def prepare(dev):
        out = []
        for t in inputs:
            if isinstance(t, Tensor):
                t = t.to(dev)
                if t.is_floating_point():
                    t = t.detach().requires_grad_(True)
            out.append(t)
        return out
    real_in, meta_in = prepare(device), prepare("meta")
    real_out, meta_out = _flat(fn(*real_in)), _flat(fn(*meta_in))
    assert len(real_out) == len(meta_out)
    for r, m in zip(real_out, meta_out):
        _same_layout(r, m)
        assert m.requires_grad == r.requires_grad
    real_diff = [t for t in real_out if t.requires_grad]
    if not real_diff:
        return
    meta_diff = [t for t in meta_out if t.requires_grad]
    sum(t.sum() for t in real_diff).backward()
    sum(t.sum() for t in meta_diff).backward()
    for r, m in zip(real_in, meta_in):
        if isinstance(r, Tensor) and r.requires_grad:
            assert (r.grad is None) == (m.grad is None)
            if r.grad is not None:
                _same_layout(r.grad, m.grad)


def _idx(*shape, high=3):
    return gputorch.tensor(np.random.randint(0, high, shape), dtype=gputorch.int64)


def _rand(*shape):
    return gputorch.tensor(np.random.randn(*shape).astype(np.float32))


OPS = {
    "add broadcast": (lambda x, y: x + y, [(3, 4), (4,)]),
    "scalar promotion": (lambda x: x * 2.5 + 1, [(3, 4)]),
    "int true divide": (lambda i: i / 2, ["i5"]),
    "pow exp log": (lambda x: (x ** 2 + 1).log().exp(), [(3, 4)]),
    "activations": (lambda x: F.gelu(F.relu(x)).sigmoid().tanh() + F.silu(x) + F.softplus(x), [(3, 4)]),
    "comparison": (lambda x, y: x > y, [(3, 4), (4,)]),
    "where": (lambda x, y: gputorch.where(x > 0, x, y), [(3, 4), (4,)]),
    "clamp abs neg": (lambda x: -x.clamp(-0.5, 0.5).abs(), [(3, 4)]),
    "maximum minimum": (lambda x, y: gputorch.maximum(x, y) * gputorch.minimum(x, y), [(3, 4), (4,)]),
    "sum keepdim": (lambda x: x.sum(1, keepdim=True), [(2, 3, 4)]),
    "mean dims": (lambda x: x.mean((0, 2)), [(2, 3, 4)]),
    "max with indices": (lambda x: x.max(1), [(2, 3, 4)]),
    "argmax": (lambda x: x.argmax(-1), [(2, 3, 4)]),
    "prod": (lambda x: x.prod(0), [(2, 3, 4)]),
    "std var": (lambda x: (x.std(1), x.var(0)), [(2, 3, 4)]),
    "norm": (lambda x: x.norm(dim=1), [(2, 3, 4)]),
    "logsumexp": (lambda x: x.logsumexp(1), [(2, 3, 4)]),
    "softmax": (lambda x: F.softmax(x, -1) + F.log_softmax(x, -1), [(2, 3, 4)]),
    "cumsum": (lambda x: x.cumsum(1), [(2, 3, 4)]),
    "reshape view": (lambda x: x.reshape(4, 6).view(-1), [(2, 3, 4)]),
    "transpose permute": (lambda x: x.transpose(0, 2).permute(1, 0, 2), [(2, 3, 4)]),
    "contiguous of permuted": (lambda x: x.permute(2, 0, 1).contiguous(), [(2, 3, 4)]),
    "reshape of transposed copies": (lambda x: x.t().reshape(-1), [(3, 4)]),
    "unsqueeze squeeze flatten": (lambda x: x.unsqueeze(1).squeeze(1).flatten(), [(3, 4)]),
    "expand repeat": (lambda x: x.expand(3, 4) + x.repeat(3, 1), [(4,)]),
    "cat stack": (lambda x, y: (gputorch.cat([x, y], 0), gputorch.stack([x, y], 1)), [(3, 4), (3, 4)]),
    "split chunk narrow": (lambda x: x.split([1, 3], 1) + x.chunk(2, 0) + (x.narrow(1, 1, 2),), [(4, 4)]),
    "basic slicing": (lambda x: (x[1:, ::2], x[..., -1], x[None, 0]), [(2, 3, 4)]),
    "advanced indexing": (lambda x, i: (x[i], x[:, i]), [(3, 4), "i5"]),
    "index_select gather": (lambda x, i: (x.index_select(0, i), x.gather(1, i.reshape(5, 1)[:3])), [(3, 4), "i5"]),
    "masked_fill": (lambda x: x.masked_fill(x > 0, 0.0), [(3, 4)]),
    "flip roll tril": (lambda x: (x.flip(0), x.roll(1, 0), x.tril(), x.triu(1)), [(3, 4)]),
    "diagonal movedim": (lambda x: (x.diagonal(), x.movedim(0, -1)), [(3, 4)]),
    "matmul": (lambda x, y: (x @ y, x @ y[:, 0]), [(3, 4), (4, 5)]),
    "bmm of transposed": (lambda x: x @ x.transpose(1, 2), [(2, 3, 4)]),
    "outer": (lambda x, y: gputorch.outer(x, y), [(4,), (3,)]),
    "linear": (lambda x, w: F.linear(x, w), [(2, 3, 4), (5, 4)]),
    "conv2d": (lambda x, w: (F.conv2d(x, w, padding=1), F.conv2d(x, w, stride=2)), [(2, 3, 8, 8), (4, 3, 3, 3)]),
    "pooling": (lambda x: (F.max_pool2d(x, 2), F.avg_pool2d(x, 2), F.adaptive_avg_pool2d(x, 1)), [(2, 3, 8, 8)]),
    "batch_norm": (lambda x: F.batch_norm(x, gputorch.zeros(3, device=x.device), gputorch.ones(3, device=x.device),
                                          training=True), [(2, 3, 8, 8)]),
    "layer_norm": (lambda x: F.layer_norm(x, (4,)), [(2, 3, 4)]),
    "embedding": (lambda w, i: F.embedding(i, w), [(3, 4), "i5"]),
    "dropout": (lambda x: F.dropout(x, 0.5), [(2, 3, 4)]),
    "cross_entropy": (lambda x, i: F.cross_entropy(x, i), [(5, 3), "i5"]),
    "nll mse bce": (lambda x, i: (F.nll_loss(F.log_softmax(x, 1), i), F.mse_loss(x, x.detach()),
                                  F.binary_cross_entropy_with_logits(x, x.detach().sigmoid())), [(5, 3), "i5"]),
    "sort topk argsort": (lambda x: (x.sort(1), x.topk(2, 1), x.argsort(0)), [(3, 4)]),
    "attention": (lambda x: F.scaled_dot_product_attention(x, x, x), [(2, 3, 4)]),
    "addcmul lerp": (lambda x, y: gputorch.addcmul(x, x, y, value=0.5) + gputorch.lerp(x, y, 0.3), [(3, 4), (3, 4)]),
    "pad interpolate": (lambda x: (F.pad(x, (1, 2)), F.interpolate(x, scale_factor=2)), [(2, 3, 4, 4)]),
    "einsum": (lambda x, y: gputorch.einsum("bij,jk->bik", x, y).contiguous(), [(2, 3, 4), (4, 5)]),
    "dtype moves": (lambda x: (x.double() * 2, x.half(), x.long()), [(3, 4)]),
    "in-place on a view": (lambda x: (x * 1)[0].add_(1), [(3, 4)]),
    "clone of transposed": (lambda x: x.t().clone(), [(3, 4)]),
}


# Ops whose results are row-major on a real GPU (CuPy's layout) and keep the input's layout on
# NumPy, which the meta device imitates (seen on an H200; the simulated CuPy lays out as NumPy).
CUPY_ROW_MAJOR = {"cumsum", "sort topk argsort", "advanced indexing"}


@pytest.mark.parametrize("name", list(OPS))
def test_op_shapes_dtypes_strides_and_grads_match(name, device):
    fn, specs = OPS[name]
    if device == "cuda" and name in CUPY_ROW_MAJOR and not os.environ.get("GPUTORCH_SIMULATE_CUDA"):
        device = "cpu"   # the layouts the meta device promises are the CPU's
    inputs = [_idx(int(s[1:])) if isinstance(s, str) else _rand(*s) for s in specs]
    _check_op(fn, inputs, device)


def test_creation_on_meta():
    checks = [
        (gputorch.zeros(3, 4, device="meta"), (3, 4), gputorch.float32),
        (gputorch.ones(2, dtype=gputorch.int64, device=META), (2,), gputorch.int64),
        (gputorch.full((2, 2), 7, device="meta"), (2, 2), gputorch.int64),
        (gputorch.empty(0, 5, device="meta"), (0, 5), gputorch.float32),
        (gputorch.arange(10, device="meta"), (10,), gputorch.int64),
        (gputorch.arange(0, 1, 0.25, device="meta"), (4,), gputorch.float32),
        (gputorch.linspace(0, 1, 7, device="meta"), (7,), gputorch.float32),
        (gputorch.eye(3, 5, device="meta"), (3, 5), gputorch.float32),
        (gputorch.rand(2, 3, device="meta"), (2, 3), gputorch.float32),
        (gputorch.randn(2, 3, dtype=gputorch.float64, device="meta"), (2, 3), gputorch.float64),
        (gputorch.randint(0, 5, (4,), device="meta"), (4,), gputorch.int64),
        (gputorch.randperm(6, device="meta"), (6,), gputorch.int64),
        (gputorch.zeros_like(gputorch.zeros(2, 3), device="meta"), (2, 3), gputorch.float32),
        (gputorch.tensor([[1, 2], [3, 4]], device="meta"), (2, 2), gputorch.int64),
    ]
    for t, shape, dtype in checks:
        assert t.device == META and t.is_meta
        assert tuple(t.shape) == shape and t.dtype == dtype
    with META:
        t = gputorch.randn(3)
    assert t.device == META


def test_moving_to_meta_and_back(device):
    t = gputorch.arange(12.0, device=device).reshape(3, 4)
    m = t.to("meta")
    _same_layout(t, m)
    assert m.t().to("meta") is not None
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        m.to(device)
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        m.cpu()
    back = gputorch.empty_like(m, device=device)
    assert back.device == gputorch.device(device) if device == "cpu" else back.device.type == "cuda"
    assert back.shape == m.shape and back.dtype == m.dtype


def test_data_dependent_operations_raise():
    t = gputorch.zeros(2, 3, device="meta")
    with pytest.raises(RuntimeError, match="Tensor.item\\(\\) cannot be called on meta tensors"):
        t[0, 0].item()
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        bool(t[0, 0] > 0)
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        bool((t > 0).any())                  # user code gets no clean-data answers
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        float(t.sum())
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        gputorch.allclose(t, t)              # the answer itself depends on values: no guess
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        gputorch.equal(t, t)
    with pytest.raises(RuntimeError):
        t.item()
    with pytest.raises(NotImplementedError, match="no data"):
        t.tolist()
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        t.numpy()
    with pytest.raises(RuntimeError, match="values"):     # NotImplementedError is a RuntimeError
        t.nonzero()
    with pytest.raises(RuntimeError, match="values"):
        t.masked_select(t > 0)
    with pytest.raises(RuntimeError, match="values"):
        t[t > 0]


def test_repr_shows_no_values():
    t = gputorch.zeros(2, 3, device="meta")
    assert repr(t) == "tensor(..., device='meta', size=(2, 3))"
    assert repr(t.long()) == "tensor(..., device='meta', size=(2, 3), dtype=gputorch.int64)"
    assert repr(t.requires_grad_() * 2) == "tensor(..., device='meta', size=(2, 3), grad_fn=<MulBackward0>)"
    assert repr(gputorch.zeros((), device="meta")) == "tensor(..., device='meta', size=())"


def test_views_share_storage_and_report_offsets(device):
    real = gputorch.zeros(4, 6, device=device)
    meta = gputorch.zeros(4, 6, device="meta")
    for fn in (lambda t: t[1:, 2:], lambda t: t.t()[3], lambda t: t.view(2, 12)[1]):
        r, m = fn(real), fn(meta)
        _same_layout(r, m)
        assert m.storage_offset() == r.storage_offset()
        assert m._data.owner is meta._data


def test_huge_tensors_allocate_nothing():
    tracemalloc.start()
    try:
        x = gputorch.zeros(10 ** 6, 10 ** 6, device="meta", requires_grad=True)
        y = (x @ x.t()).relu().sum(1)
        y.sum().backward()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert x.grad.shape == (10 ** 6, 10 ** 6)
    assert x.nbytes == 4 * 10 ** 12
    assert peak < 10 * 2 ** 20


def test_random_ops_on_meta_leave_the_cpu_generator_alone():
    state = gputorch.get_rng_state()
    a = gputorch.randn(5, device="meta")
    b = F.dropout(gputorch.ones(5, device="meta"), 0.5)
    assert a.device == META and b.device == META
    assert np.array_equal(gputorch.get_rng_state().numpy(), state.numpy())


def test_clean_data_inside_ops():
    """Ops that validate values (indices, targets) or take fix-up paths for rare values run their
    clean-data path on meta."""
    w = gputorch.randn(10, 4, device="meta", requires_grad=True)
    idx = gputorch.randint(0, 10, (3, 5), device="meta")
    out = F.embedding(idx, w)
    loss = F.cross_entropy(out.reshape(15, 4), gputorch.zeros(15, dtype=gputorch.int64, device="meta"))
    loss.backward()
    assert out.shape == (3, 5, 4) and w.grad.shape == (10, 4)
    x = gputorch.randn(2, 3, 4, device="meta", requires_grad=True)
    (x.prod(1).sum() + x.std(0).sum() + x.norm()).backward()
    assert x.grad.shape == (2, 3, 4)
    emb = nn.Embedding(10, 4, max_norm=1.0).to("meta")       # renormalises the rows it uses, in place
    out = emb(idx)
    out.sum().backward()
    assert out.shape == (3, 5, 4) and emb.weight.grad.shape == (10, 4)
    w = gputorch.empty(5, 5, device="meta")
    assert nn.init.trunc_normal_(w) is w                      # resamples until nothing is outside
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True).to("meta")
    causal = gputorch.triu(gputorch.full((6, 6), float("-inf")), 1).to("meta")
    out = layer(gputorch.randn(2, 6, 8, device="meta"), src_mask=causal)   # mask checks: clean answers
    assert out.shape == (2, 6, 8)
    img = gputorch.randn(2, 3, 8, 8, device="meta", requires_grad=True)
    F.max_pool2d(img, 3, stride=2, padding=1).sum().backward()     # windows over padding, NaN checks
    assert img.grad.shape == img.shape


# ---------------------------------------------------------------- modules
class _CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2))
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        return self.fc(self.layer1(x).flatten(1))


class _Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, batch_first=True), 2)
        self.norm = nn.LayerNorm(16)
        self.head = nn.Linear(16, 50)

    def forward(self, tokens):
        return self.head(self.norm(self.encoder(self.embed(tokens))))


def _models():
    return {
        "mlp": (lambda: nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 5)),
                lambda: (_rand(8, 12), _idx(8, high=5))),
        "cnn": (_CNN, lambda: (_rand(4, 3, 8, 8), _idx(4, high=10))),
        "transformer": (_Transformer, lambda: (_idx(2, 7, high=50), _idx(2, 7, high=50))),
    }


def _train_step(model, x, y):
    opt = gputorch.optim.Adam(model.parameters(), lr=1e-3)
    out = model(x)
    loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad()
    return out, loss


@pytest.mark.parametrize("name", ["mlp", "cnn", "transformer"])
def test_training_step_on_meta_makes_the_same_tensors(name, device):
    """Forward, backward and an Adam step: every tensor made on meta has the shape, dtype, strides
    and view-ness of the one made at the same point on a real device."""
    if device != "cpu":
        pytest.skip("the CUDA backend runs its own fused kernels; meta follows the generic ops, as the CPU does")
    build, data = _models()[name]
    gputorch.manual_seed(0)
    model = build().to(device)
    replica = copy.deepcopy(model).to("meta")
    x, y = data()
    runs = []
    for m, dev in ((model, device), (replica, "meta")):
        xs, ys = x.to(dev), y.to(dev)
        made = []
        def hook(t, made=made):
            made.append((tuple(t.shape), t.dtype, t.stride(), owns_memory(t._data)))
        _tensor.CREATION_HOOKS.append(hook)
        try:
            out, loss = _train_step(m, xs, ys)
        finally:
            _tensor.CREATION_HOOKS.remove(hook)
        runs.append(made)
        assert out.device.type == gputorch.device(dev).type and loss.shape == ()
    real, meta = runs
    assert len(real) == len(meta) > 20
    mismatch = [(i, r, m) for i, (r, m) in enumerate(zip(real, meta)) if r != m]
    assert not mismatch
    for p in replica.parameters():
        assert p.device == META and p.grad is None


def test_module_to_meta_keeps_parameters_and_to_empty(device):
    model = _CNN().to(device)
    params = list(model.parameters())
    model.to("meta")
    assert [p for p in model.parameters()] == params            # same Parameter objects
    assert all(p.device == META and isinstance(p, nn.Parameter) for p in params)
    assert model.layer1[1].running_mean.device == META
    assert all(t.device == META for t in model.state_dict().values())
    model.to_empty(device=device)
    for p in model.parameters():
        assert p.device.type == gputorch.device(device).type
    out = model(_rand(2, 3, 8, 8).to(device))
    assert out.shape == (2, 10)


def test_model_built_on_meta_costs_nothing():
    tracemalloc.start()
    try:
        with META:
            model = nn.Sequential(nn.Linear(100_000, 100_000), nn.ReLU(), nn.Linear(100_000, 10))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert model[0].weight.device == META and model[0].weight.shape == (100_000, 100_000)
    assert sum(p.numel() for p in model.parameters()) == 100_000 * 100_001 + 10 * 100_001
    assert peak < 10 * 2 ** 20
