"""Autocast regions: PyTorch's op classes on the CPU (checked against torch's own CPU autocast with
dtype=float16) and on CUDA (PyTorch's documented CUDA lists), gradients to float32 parameters,
nesting, threads, the decorator and the cast cache."""
import threading

import numpy as np
import pytest

import gputorch

R = np.random.default_rng(0)
A = R.standard_normal((4, 6)).astype(np.float32)
B = R.standard_normal((6, 5)).astype(np.float32)
W = R.standard_normal((5, 6)).astype(np.float32)
BIAS = R.standard_normal(5).astype(np.float32)
IMG = R.standard_normal((2, 3, 6, 6)).astype(np.float32)
KER = R.standard_normal((4, 3, 3, 3)).astype(np.float32)
BAT = R.standard_normal((2, 4, 6)).astype(np.float32)
BAT2 = R.standard_normal((2, 6, 3)).astype(np.float32)
T4 = R.standard_normal((4, 5)).astype(np.float32)
LABELS = np.array([0, 3, 1, 4])
SPD = (A[:, :4] @ A[:, :4].T + 4 * np.eye(4)).astype(np.float32)
PROB = (1 / (1 + np.exp(-T4))).astype(np.float32)
GRID = np.clip(R.standard_normal((2, 3, 3, 2)), -1, 1).astype(np.float32)

# name -> f(lib, tensor) over float32 inputs (each op's torch and gputorch spelling is the same)
OPS = {
    "mm": lambda m, t: m.mm(t(A), t(B)),
    "matmul": lambda m, t: t(BAT) @ t(BAT2),
    "bmm": lambda m, t: m.bmm(t(BAT), t(BAT2)),
    "addmm": lambda m, t: m.addmm(t(T4), t(A), t(B)),
    "baddbmm": lambda m, t: m.baddbmm(t(BAT[:, :, :3]), t(BAT), t(BAT2)),
    "linear": lambda m, t: m.nn.functional.linear(t(A), t(W), t(BIAS)),
    "conv2d": lambda m, t: m.nn.functional.conv2d(t(IMG), t(KER), padding=1),
    "conv_transpose2d": lambda m, t: m.nn.functional.conv_transpose2d(t(IMG), t(KER.transpose(1, 0, 2, 3).copy())),
    "mse_loss": lambda m, t: m.nn.functional.mse_loss(t(T4), t(T4) * 0.5),
    "cross_entropy": lambda m, t: m.nn.functional.cross_entropy(t(T4), m.tensor(LABELS, device=t(T4).device)),
    "nll_loss": lambda m, t: m.nn.functional.nll_loss(t(T4), m.tensor(LABELS, device=t(T4).device)),
    "smooth_l1_loss": lambda m, t: m.nn.functional.smooth_l1_loss(t(T4), t(T4) * 0.5),
    "l1_loss": lambda m, t: m.nn.functional.l1_loss(t(T4), t(T4) * 0.5),
    "huber_loss": lambda m, t: m.nn.functional.huber_loss(t(T4), t(T4) * 0.5),
    "bce_with_logits": lambda m, t: m.nn.functional.binary_cross_entropy_with_logits(t(T4), (t(T4) > 0).float()),
    "kl_div": lambda m, t: m.nn.functional.kl_div(t(T4), t(T4).exp(), reduction="batchmean"),
    "cdist": lambda m, t: m.cdist(t(A), t(A)),
    "prod": lambda m, t: t(T4).prod(),
    "linalg_vecdot": lambda m, t: m.linalg.vecdot(t(A), t(A)),
    "einsum": lambda m, t: m.einsum("ij,jk->ik", t(A), t(B)),
    "tensordot": lambda m, t: m.tensordot(t(A), t(B), 1),
    "multi_dot": lambda m, t: m.linalg.multi_dot([t(A), t(B), t(W)]),
    "conv1d": lambda m, t: m.nn.functional.conv1d(t(BAT), t(KER[:, :, 0].transpose(1, 0, 2)[:, :4].copy())),
    "avg_pool3d": lambda m, t: m.nn.functional.avg_pool3d(t(IMG[None]), 2),
    "max_pool3d": lambda m, t: m.nn.functional.max_pool3d(t(IMG[None]), 2),
    "adaptive_avg_pool3d": lambda m, t: m.nn.functional.adaptive_avg_pool3d(t(IMG[None]), 2),
    "reflection_pad2d": lambda m, t: m.nn.functional.pad(t(IMG), (1, 1, 1, 1), mode="reflect"),
    "replication_pad1d": lambda m, t: m.nn.functional.pad(t(BAT), (1, 2), mode="replicate"),
    "binary_cross_entropy": lambda m, t: m.nn.functional.binary_cross_entropy(t(PROB), t(PROB)),
    "grid_sample": lambda m, t: m.nn.functional.grid_sample(t(IMG), t(GRID), align_corners=False),
    "trace": lambda m, t: m.trace(t(SPD)),
    "cholesky": lambda m, t: m.linalg.cholesky(t(SPD)),
    "inv": lambda m, t: m.linalg.inv(t(SPD)),
    "pinverse": lambda m, t: m.pinverse(t(SPD)),
    "qr": lambda m, t: m.linalg.qr(t(SPD))[1],
    "svdvals": lambda m, t: m.linalg.svdvals(t(SPD)),
    "eigvalsh": lambda m, t: m.linalg.eigvalsh(t(SPD)),
    "solve": lambda m, t: m.linalg.solve(t(SPD), t(SPD)),
    "lstsq": lambda m, t: m.linalg.lstsq(t(SPD), t(SPD)).solution,
    "matrix_exp": lambda m, t: m.linalg.matrix_exp(t(SPD) * 0.1),
    "rfft": lambda m, t: m.fft.rfft(t(T4)).abs(),
    "ifft2": lambda m, t: m.fft.ifft2(t(T4)).real,
    "quantile": lambda m, t: m.quantile(t(T4), 0.3),
    "polar": lambda m, t: m.polar(t(T4).abs(), t(T4)).real,
    "ctc_loss": lambda m, t: m.nn.functional.ctc_loss(t(BAT[:, :2, :4].transpose(1, 0, 2).copy()).log_softmax(2),
                                                       m.tensor([[1, 2], [1, 3]]), m.tensor([2, 2]), m.tensor([2, 2])),
    "cosine_embedding_loss": lambda m, t: m.nn.functional.cosine_embedding_loss(t(A), t(A) * 0.5,
                                                                                m.ones(4, device=t(A).device)),
    "triplet_margin_loss": lambda m, t: m.nn.functional.triplet_margin_loss(t(A), t(A) * 0.5, t(A) * 0.2),
    "index_copy": lambda m, t: t(T4).index_copy(0, m.tensor([0, 2]), t(T4[:2]).half()),
    "cat": lambda m, t: m.cat([t(T4), t(T4).half()]),
    "stack": lambda m, t: m.stack([t(T4), t(T4).half()]),
    # not in PyTorch's CPU lists: they run in their inputs' dtype
    "log_softmax": lambda m, t: m.log_softmax(t(T4), -1),
    "cumsum": lambda m, t: t(T4).cumsum(0),
    "group_norm": lambda m, t: m.nn.functional.group_norm(t(IMG), 3),
    "gelu": lambda m, t: m.nn.functional.gelu(t(T4)),
    "softmax": lambda m, t: m.softmax(t(T4), -1),
    "layer_norm": lambda m, t: m.nn.functional.layer_norm(t(T4), (5,)),
    "relu": lambda m, t: m.relu(t(T4)),
    "exp": lambda m, t: t(T4).exp(),
    "sum": lambda m, t: t(T4).sum(),
    "add": lambda m, t: t(T4) + t(T4),
}


def _dtype_name(x):
    return str(x.dtype).rsplit(".", 1)[-1]


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("input_dtype", ["float32", "float16"])
def test_cpu_op_classes_match_torch(name, input_dtype):
    torch = pytest.importorskip("torch")

    def run(lib):
        def t(a):
            return lib.tensor(a, dtype=getattr(lib, input_dtype))
        with lib.autocast("cpu", dtype=lib.float16):
            return OPS[name](lib, t)
    ours, theirs = run(gputorch), run(torch)
    assert _dtype_name(ours) == _dtype_name(theirs), name
    expected = theirs.detach().float().numpy()
    if np.isfinite(expected).all():   # torch's float16 matrix_exp overflows where ours does not
        np.testing.assert_allclose(ours.detach().float().numpy(), expected, rtol=2e-2, atol=2e-2)


# PyTorch's documented CUDA lists: these run in float16, these in float32
CUDA_LOWER = ["mm", "matmul", "bmm", "addmm", "baddbmm", "linear", "conv2d", "conv1d", "conv_transpose2d", "einsum",
              "multi_dot"]
CUDA_FP32 = ["mse_loss", "cross_entropy", "nll_loss", "smooth_l1_loss", "l1_loss", "bce_with_logits", "kl_div",
             "softmax", "log_softmax", "layer_norm", "group_norm", "exp", "sum", "prod", "cdist", "cumsum",
             "cosine_embedding_loss", "triplet_margin_loss"]
CUDA_EXTRA = {   # more of the documented lists, with the dtype each gives from float32 inputs
    "addmv": (lambda m, t: m.addmv(t(T4[:, 0]), t(A), t(B[:, 0])), "float16"),
    "addr": (lambda m, t: m.addr(t(T4), t(A[:, 0]), t(W[:, 0])), "float16"),
    "mv": (lambda m, t: m.mv(t(A), t(B[:, 0])), "float16"),
    "prelu": (lambda m, t: m.nn.functional.prelu(t(T4), t(BIAS[:1])), "float16"),
    "lstm_cell": (lambda m, t: m.nn.LSTMCell(6, 3).to(t(A).device)(t(A))[0], "float16"),
    "gru_cell": (lambda m, t: m.nn.GRUCell(6, 3).to(t(A).device)(t(A)), "float16"),
    "softplus": (lambda m, t: m.nn.functional.softplus(t(T4).half()), "float32"),
    "cumprod": (lambda m, t: t(T4).half().cumprod(0), "float32"),
    "normalize": (lambda m, t: m.nn.functional.normalize(t(T4).half()), "float32"),
    "dist": (lambda m, t: m.dist(t(T4).half(), t(T4).half() * 2), "float32"),
    "pdist": (lambda m, t: m.nn.functional.pdist(t(T4).half()), "float32"),
    "renorm": (lambda m, t: m.renorm(t(T4).half(), 2, 0, 1.0), "float32"),
    "pow": (lambda m, t: t(T4).half().abs() ** 1.5, "float32"),
    # promote: mixed float16/float32 operands run in float32
    "addcmul": (lambda m, t: m.addcmul(t(T4).half(), t(T4), t(T4).half()), "float32"),
    "addcdiv": (lambda m, t: m.addcdiv(t(T4).half(), t(T4), t(T4).half() + 9), "float32"),
    "atan2": (lambda m, t: m.atan2(t(T4).half(), t(T4)), "float32"),
    "dot": (lambda m, t: m.dot(t(A[0]).half(), t(A[1])), "float32"),
    "cross": (lambda m, t: m.linalg.cross(t(A[:, :3]).half(), t(A[:, 3:])), "float32"),
    "tensordot": (lambda m, t: m.tensordot(t(A).half(), t(B), 1), "float32"),
    "bilinear": (lambda m, t: m.nn.functional.bilinear(t(A).half(), t(A), t(A[:2, None, :].repeat(6, 1))), "float32"),
    "scatter_add": (lambda m, t: t(T4).scatter_add(0, m.zeros(1, 5, dtype=m.long, device=t(T4).device),
                                                    t(T4[:1]).half()), "float32"),
    "index_put": (lambda m, t: t(T4).index_put((m.tensor([0], device=t(T4).device),), t(T4[0]).half()), "float32"),
}


def _needs_cuda():
    if not gputorch.cuda.is_available():
        pytest.skip("needs a (real or simulated) CUDA device")


def _on_cuda(a):
    return gputorch.tensor(a, device="cuda")


@pytest.mark.parametrize("name", CUDA_LOWER + CUDA_FP32)
def test_cuda_op_classes(name):
    _needs_cuda()
    with gputorch.autocast("cuda"):
        out = OPS[name](gputorch, _on_cuda)
    assert out.dtype is (gputorch.float16 if name in CUDA_LOWER else gputorch.float32), name


@pytest.mark.parametrize("name", sorted(CUDA_EXTRA))
def test_cuda_op_classes_more(name):
    _needs_cuda()
    fn, expected = CUDA_EXTRA[name]
    with gputorch.autocast("cuda"):
        out = fn(gputorch, _on_cuda)
    assert out.dtype is getattr(gputorch, expected), name


def test_cuda_binary_cross_entropy_is_unsafe_to_autocast():
    _needs_cuda()
    p = gputorch.tensor(PROB, device="cuda")
    with gputorch.autocast("cuda"):
        with pytest.raises(RuntimeError, match="unsafe to autocast.*binary_cross_entropy_with_logits"):
            gputorch.nn.functional.binary_cross_entropy(p, p)
        with gputorch.autocast("cuda", enabled=False):
            assert gputorch.nn.functional.binary_cross_entropy(p, p).dtype is gputorch.float32


def test_composite_bodies_run_without_autocast():
    """A float32-class composite stays float32 although its body calls matrix products (PyTorch runs
    an autocast op's implementation with autocast off)."""
    with gputorch.autocast("cpu", dtype=gputorch.float16):
        assert gputorch.linalg.lstsq(gputorch.tensor(SPD), gputorch.tensor(SPD)).solution.dtype is gputorch.float32
        assert gputorch.linalg.matrix_exp(gputorch.tensor(SPD)).dtype is gputorch.float32
        assert gputorch.is_autocast_enabled("cpu")


def test_gradients_reach_float32_parameters_like_torch(device):
    torch = pytest.importorskip("torch")
    grads = []
    for lib, dev in ((gputorch, device), (torch, "cpu")):
        w = lib.tensor(W, device=dev, requires_grad=True)
        x = lib.tensor(A, device=dev)
        with lib.autocast(dev if lib is gputorch else "cpu", dtype=lib.float16):
            y = lib.nn.functional.linear(x, w)
            assert y.dtype is lib.float16
            loss = lib.nn.functional.mse_loss(y, lib.zeros_like(y))
            assert loss.dtype is lib.float32
        loss.backward()
        assert w.grad.dtype is lib.float32
        grads.append(w.grad.cpu().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-2, atol=1e-3)


def test_float64_is_not_cast_down(device):
    with gputorch.autocast(device, dtype=gputorch.float16):
        out = gputorch.mm(gputorch.ones(2, 2, dtype=gputorch.float64, device=device),
                          gputorch.ones(2, 2, dtype=gputorch.float64, device=device))
    assert out.dtype is gputorch.float64


def test_nesting_threads_decorator_and_cache(device):
    w = gputorch.ones(3, 3, device=device, requires_grad=True)
    x = gputorch.ones(2, 3, device=device)
    seen = {}
    with gputorch.autocast(device, dtype=gputorch.float16):
        assert gputorch.is_autocast_enabled(device)
        with gputorch.autocast(device, enabled=False):
            assert not gputorch.is_autocast_enabled(device)
            assert (x @ w).dtype is gputorch.float32
        assert (x @ w).dtype is gputorch.float16
        first = gputorch.amp.autocast_mode._cast(w, gputorch.float16)
        assert gputorch.amp.autocast_mode._cast(w, gputorch.float16) is first   # one cast per region

        def other_thread():
            seen["other"] = gputorch.is_autocast_enabled(device)
        th = threading.Thread(target=other_thread)
        th.start()
        th.join()
    assert seen["other"] is False and not gputorch.is_autocast_enabled(device)
    assert gputorch.amp.autocast_mode.STATE.cache == {}

    @gputorch.autocast(device, dtype=gputorch.float16)
    def forward(a, b):
        return a @ b
    assert forward(x, w).dtype is gputorch.float16
    assert (x @ w).dtype is gputorch.float32


def test_unsupported_dtypes_disable_with_a_warning():
    with pytest.warns(UserWarning, match="computes in bfloat16 on the CPU only"):
        region = gputorch.autocast("cuda", dtype=gputorch.bfloat16)
    with region:
        assert not gputorch.is_autocast_enabled("cuda")
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        gputorch.autocast("cuda", dtype=gputorch.float64)
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        gputorch.autocast(gputorch.device("cpu"))


def test_cpu_default_is_bfloat16_like_torch():
    """A CPU region without a dtype runs in bfloat16, as torch's; the classes and the values follow
    torch's CPU autocast (bfloat16 products are computed in float32 and rounded, as torch's are)."""
    torch = pytest.importorskip("torch")
    assert gputorch.get_autocast_dtype("cpu") is gputorch.bfloat16
    outs = []
    for lib in (gputorch, torch):
        w = lib.tensor(W, requires_grad=True)
        with lib.autocast("cpu"):
            assert lib.is_autocast_enabled("cpu") and lib.get_autocast_dtype("cpu") is lib.bfloat16
            y = lib.nn.functional.linear(lib.tensor(A), w)
            loss = lib.nn.functional.cross_entropy(y, lib.tensor(LABELS))
            assert y.dtype is lib.bfloat16 and loss.dtype is lib.float32
            assert lib.softmax(y, -1).dtype is lib.bfloat16     # not in torch's CPU float32 list
        loss.backward()
        assert w.grad.dtype is lib.float32
        outs.append((y.detach().float().numpy(), w.grad.numpy()))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=2e-2, atol=2e-3)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_recomputes_under_the_forward_autocast_state(device, use_reentrant):
    """The recomputed forward casts as the original did (PyTorch's rule), so the saved float16
    activations it rebuilds fit the graph; gradients equal those of the plain run."""
    from gputorch.utils.checkpoint import checkpoint
    w = gputorch.tensor(W, device=device, requires_grad=True)
    x = gputorch.tensor(A, device=device)
    seen = []

    def block(inp):
        out = gputorch.nn.functional.linear(inp, w)
        seen.append(out.dtype)
        return out.relu()

    grads = []
    for wrap in (lambda f, a: f(a), lambda f, a: checkpoint(f, a, use_reentrant=use_reentrant)):
        w.grad = None
        with gputorch.autocast(device, dtype=gputorch.float16):
            y = wrap(block, x.requires_grad_(use_reentrant))
        y.float().sum().backward()
        grads.append(w.grad.cpu().numpy())
    assert seen == [gputorch.float16] * 3     # plain, checkpointed forward, recomputation
    np.testing.assert_array_equal(grads[0], grads[1])


def test_custom_fwd_and_custom_bwd_follow_torch():
    """A custom Function: ``custom_fwd(cast_inputs=float32)`` runs its forward in float32 with
    autocast off; ``custom_fwd``/``custom_bwd`` without casts run the backward under the forward's
    autocast state. Checked against torch's CPU autocast with dtype=float16."""
    torch = pytest.importorskip("torch")
    seen = {}
    for lib in (gputorch, torch):
        class Product(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a @ b, lib.is_autocast_enabled("cpu")

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, grad, _):
                a, b = ctx.saved_tensors
                return grad @ b.t(), (a.t() @ grad, lib.is_autocast_enabled("cpu"))[0]

        class Keep(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu")
            def forward(ctx, a):
                return a @ a.t()

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, grad):
                seen.setdefault(lib.__name__, []).append(lib.is_autocast_enabled("cpu"))
                return grad.float() @ lib.ones(2, 2)

        a = lib.ones(2, 2, dtype=lib.float16, requires_grad=True)
        b = lib.ones(2, 2, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.float16):
            out, inside = Product.apply(a, b)
            kept = Keep.apply(lib.ones(2, 2, requires_grad=True))
        assert out.dtype is lib.float32 and not inside and kept.dtype is lib.float16
        out.sum().backward()
        kept.float().sum().backward()
        assert a.grad.dtype is lib.float16 and b.grad.dtype is lib.float32
    assert seen["gputorch"] == seen["torch"] == [True]
    assert gputorch.amp.is_autocast_available("cpu") and not gputorch.amp.is_autocast_available("meta")
    with pytest.raises(TypeError, match="device_type"):
        gputorch.amp.custom_fwd(lambda ctx, x: x)
