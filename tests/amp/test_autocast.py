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
    # not in PyTorch's CPU lists: they run in their inputs' dtype
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
    np.testing.assert_allclose(ours.detach().float().numpy(), theirs.detach().float().numpy(), rtol=2e-2, atol=2e-2)


# PyTorch's documented CUDA lists: these run in float16, these in float32
CUDA_LOWER = ["mm", "matmul", "bmm", "addmm", "baddbmm", "linear", "conv2d", "conv_transpose2d"]
CUDA_FP32 = ["mse_loss", "cross_entropy", "nll_loss", "smooth_l1_loss", "l1_loss", "bce_with_logits", "kl_div",
             "softmax", "layer_norm", "exp", "sum", "prod", "cdist"]


@pytest.mark.parametrize("name", CUDA_LOWER + CUDA_FP32)
def test_cuda_op_classes(name):
    if not gputorch.cuda.is_available():
        pytest.skip("needs a (real or simulated) CUDA device")

    def t(a):
        return gputorch.tensor(a, device="cuda")
    with gputorch.autocast("cuda"):
        out = OPS[name](gputorch, t)
    assert out.dtype is (gputorch.float16 if name in CUDA_LOWER else gputorch.float32), name


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
    with pytest.warns(UserWarning, match="bfloat16, which gputorch does not have yet"):
        region = gputorch.autocast("cpu")
    with region:
        assert not gputorch.is_autocast_enabled("cpu")
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        gputorch.autocast("cuda", dtype=gputorch.float64)
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        gputorch.autocast(gputorch.device("cpu"))


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
