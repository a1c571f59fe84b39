"""The CUDA backend's kernel forwards keep their ops' contract: for each overridden graph node,
the kernel forward (run here on the CPU execution harness) returns what the generic forward
returns, and leaves the same attributes and saved tensors on ``ctx`` -- what the node's
backward reads. A change to an op that the kernel forward does not follow fails here.
"""
import numpy as np
import pytest

import gputorch
from gputorch.autograd.node import SavedTensor
from gputorch.cuda.kernels._overrides import overrides
from tests.cuda._harness import harness  # noqa: F401 (an autouse fixture)


TABLE = {getattr(k, "__name__", str(k)): (k, v) for k, v in overrides().items()}


def t(data, dtype=None, requires_grad=False):
    return gputorch.tensor(np.asarray(data), dtype=dtype, requires_grad=requires_grad)


def rand(*shape, dtype=gputorch.float32, seed=0, requires_grad=True):
    data = np.random.default_rng(seed).standard_normal(shape)
    return gputorch.tensor(data, dtype=dtype, requires_grad=requires_grad)


class _Edge:
    pass


def _ctx(cls, args, grad):
    ctx = cls()
    ctx.next_functions = tuple(((_Edge(), 0) if grad else (None, 0)) for a in args if isinstance(a, gputorch.Tensor))
    return ctx


def _same(a, b, path):
    if isinstance(a, gputorch.Tensor):
        a, b = a._data, b._data
    if isinstance(a, SavedTensor):
        a, b = a.tensor if hasattr(a, "tensor") else a, b.tensor if hasattr(b, "tensor") else b
        return _same(a, b, path)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, f"{path}: {a.shape} {a.dtype} != {b.shape} {b.dtype}"
        half = a.dtype == np.float16
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=2e-3 if half else 1e-5,
                                   atol=2e-3 if half else 1e-5, equal_nan=True, err_msg=path)
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), f"{path}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, (float, np.floating)) and np.isnan(a):
        assert np.isnan(b), path
    else:
        assert a == b or (np.isscalar(a) and np.isscalar(b) and np.isclose(a, b)), f"{path}: {a!r} != {b!r}"


_IGNORED = {"next_functions", "_saved"}


def check(node, *args, grad=True, differ=(), **params):
    """Run the generic and the kernel forward of ``node`` on ``args`` and compare everything."""
    cls, kernel = TABLE[node]
    ctx_g, ctx_k = _ctx(cls, args, grad), _ctx(cls, args, grad)
    out_g = cls.forward(ctx_g, *args, **params)
    out_k = kernel(ctx_k, *args, **params)
    _same(out_k, out_g, f"{node} output")
    assert set(vars(ctx_k)) == set(vars(ctx_g)), f"{node}: ctx attributes {set(vars(ctx_k))} != {set(vars(ctx_g))}"
    for name in set(vars(ctx_g)) - _IGNORED - set(differ):
        _same(getattr(ctx_k, name), getattr(ctx_g, name), f"{node}.{name}")
    saved_g, saved_k = ctx_g.__dict__.get("_saved", ()), ctx_k.__dict__.get("_saved", ())
    assert len(saved_g) == len(saved_k), f"{node}: {len(saved_k)} saved tensors != {len(saved_g)}"
    for i, (a, b) in enumerate(zip(saved_g, saved_k)):
        va, vb = getattr(a, "tensor", getattr(a, "value", None)), getattr(b, "tensor", getattr(b, "value", None))
        if va is None or vb is None:
            assert va is vb, f"{node} saved[{i}]"
        else:
            _same(vb, va, f"{node} saved[{i}]")
    return out_k


def test_every_override_is_found():
    expected = {"ReluBackward0", "SigmoidBackward0", "TanhBackward0", "GeluBackward0", "SiluBackward0",
                "TanhBackwardBackward0", "SigmoidBackwardBackward0", "ThresholdBackwardBackward0", "SoftmaxBackward0",
                "LogSoftmaxBackward0", "CrossEntropyLossBackward0", "NativeLayerNormBackward0",
                "FusedRmsNormBackward0", "NativeBatchNormBackward0", "ConvolutionBackward0",
                "ConvolutionBackwardBackward0", "MaxPool2DWithIndicesBackward0",
                "MaxPool2DWithIndicesBackwardBackward0", "AvgPool2DBackward0", "AvgPool2DBackwardBackward0",
                "EmbeddingDenseBackward0", "sgd_update", "adam_update", "philox_dropout", "GeluBackwardBackward0",
                "SiluBackwardBackward0", "SoftmaxBackwardDataBackward0", "LogSoftmaxBackwardDataBackward0",
                "sum_of_squares_kernel", "norm_backward_kernel", "cross_entropy_grad_kernel", "LinearBackward0"}
    assert expected <= set(TABLE)


@pytest.mark.parametrize("dtype", [gputorch.float32, gputorch.float16, gputorch.float64])
def test_activations(dtype):
    a = rand(4, 37, dtype=dtype)
    for node in ("ReluBackward0", "SigmoidBackward0", "TanhBackward0", "SiluBackward0"):
        check(node, a)
    # saves_result: the generic exact GELU keeps its output for a first-order gradient without a
    # second erf; the kernel's fused gradient recomputes erf, so it keeps only the input.
    check("GeluBackward0", a, "none", differ=("saves_result",))
    check("GeluBackward0", a, "tanh")
    y = rand(4, 37, dtype=dtype, seed=1).sigmoid().detach()
    g = rand(4, 37, dtype=dtype, seed=2)
    check("TanhBackwardBackward0", g, y)
    check("SigmoidBackwardBackward0", g, y)
    check("ThresholdBackwardBackward0", g, rand(4, 37, dtype=dtype, seed=3), 0)
    check("ThresholdBackwardBackward0", g, rand(4, 37, dtype=dtype, seed=3), 0.25)


@pytest.mark.parametrize("dtype", [gputorch.float32, gputorch.float16, gputorch.float64])
@pytest.mark.parametrize("x_shape", [(4, 37), (2, 3, 37), (37,), (0, 37)])
def test_linear_adds_the_bias_with_the_kernel(dtype, x_shape):
    x, w, b = rand(*x_shape, dtype=dtype), rand(5, 37, dtype=dtype, seed=1), rand(5, dtype=dtype, seed=2)
    out = check("LinearBackward0", x, w, b)
    expected = x._data.astype(np.float64) @ w._data.T.astype(np.float64) + b._data
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=5e-3 if dtype == gputorch.float16 else 1e-5,
                               atol=5e-2 if dtype == gputorch.float16 else 1e-5)


def test_linear_falls_back_without_a_1d_bias_or_with_mixed_dtypes():
    cls, kernel = TABLE["LinearBackward0"]
    x, w = rand(4, 6), rand(3, 6, seed=1)
    assert kernel.kernel(_ctx(cls, (x, w), True), x, w) is NotImplemented
    assert kernel.kernel(_ctx(cls, (x, w, x), True), x, w, rand(4, 3, seed=2)) is NotImplemented
    assert kernel.kernel(_ctx(cls, (x, w, x), True), x, w, rand(3, dtype=gputorch.float64)) is NotImplemented
    check("LinearBackward0", x, w)  # the fallback keeps the contract


def test_activations_fall_back_for_integer_inputs():
    out = check("ReluBackward0", t([-2, 3, 0]), grad=False)
    np.testing.assert_array_equal(out, [0, 3, 0])
    assert out.dtype == np.int64
    check("SigmoidBackward0", t([-2, 3, 0]), grad=False)


@pytest.mark.parametrize("shape,dim", [((3, 50), 1), ((3, 50), 0), ((2, 3, 4), 1), ((2, 1500), 1), ((), 0),
                                       ((0, 3), 1)])
def test_softmax(shape, dim):
    a = rand(*shape)
    check("SoftmaxBackward0", a, dim)
    check("LogSoftmaxBackward0", a, dim)


CE_CASES = [
    dict(shape=(6, 5), reduction="mean", ignore_index=-100, smoothing=0.0, weight=False),
    dict(shape=(6, 5), reduction="mean", ignore_index=2, smoothing=0.1, weight=True),
    dict(shape=(6, 5), reduction="sum", ignore_index=1, smoothing=0.0, weight=True),
    dict(shape=(6, 5), reduction="none", ignore_index=-100, smoothing=0.2, weight=False),
    dict(shape=(5,), reduction="mean", ignore_index=-100, smoothing=0.1, weight=True),
    dict(shape=(2, 4, 3, 2), reduction="mean", ignore_index=0, smoothing=0.3, weight=True),
    dict(shape=(3, 1200), reduction="none", ignore_index=-100, smoothing=0.0, weight=False),
]


@pytest.mark.parametrize("case", CE_CASES)
@pytest.mark.parametrize("grad", [True, False])
def test_cross_entropy(case, grad):
    shape = case["shape"]
    classes = shape[0] if len(shape) == 1 else shape[1]
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    target = t(np.random.default_rng(4).integers(0, classes, tshape))
    weight = rand(classes, seed=5, requires_grad=False).abs() if case["weight"] else None
    check("CrossEntropyLossBackward0", rand(*shape), target, weight, case["reduction"], case["ignore_index"],
          case["smoothing"], grad=grad)


def test_cross_entropy_all_ignored_and_bad_targets():
    x = rand(3, 4)
    check("CrossEntropyLossBackward0", x, t([1, 1, 1]), None, "mean", 1, 0.0)
    with pytest.raises(IndexError, match="out of bounds"):
        TABLE["CrossEntropyLossBackward0"][1](_ctx(TABLE["CrossEntropyLossBackward0"][0], (x,), True), x,
                                             t([0, 7, 1]), None, "mean", -100, 0.0)


@pytest.mark.parametrize("dtype", [gputorch.float32, gputorch.float16])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_and_rms_norm(dtype, affine):
    x = rand(3, 4, 10, dtype=dtype)
    w = rand(4, 10, dtype=dtype, seed=6) if affine else None
    b = rand(4, 10, dtype=dtype, seed=7) if affine else None
    check("NativeLayerNormBackward0", x, w, b, 2, 1e-5)
    check("NativeLayerNormBackward0", x, None if w is None else w[0], None if b is None else b[0], 1, 1e-5)
    check("FusedRmsNormBackward0", x, w, 2, 1e-6)


def test_layer_norm_with_float32_parameters_for_float16_input():
    x = rand(5, 8, dtype=gputorch.float16)
    check("NativeLayerNormBackward0", x, rand(8, seed=1), rand(8, seed=2), 1, 1e-5)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5, 5)])
def test_batch_norm(training, shape):
    x = rand(*shape)
    w, b = rand(3, seed=8), rand(3, seed=9)
    stats = [(rand(3, seed=10, requires_grad=False), rand(3, seed=11, requires_grad=False).abs()) for _ in range(2)]
    cls, kernel = TABLE["NativeBatchNormBackward0"]
    ctx_g, ctx_k = _ctx(cls, (x, w, b), True), _ctx(cls, (x, w, b), True)
    out_g = cls.forward(ctx_g, x, w, b, *stats[0], training, 0.1, 1e-5)
    out_k = kernel(ctx_k, x, w, b, *stats[1], training, 0.1, 1e-5)
    _same(out_k, out_g, "batch norm output")
    for (m_g, v_g), (m_k, v_k) in [(stats[0], stats[1])]:
        _same(m_k, m_g, "running_mean")
        _same(v_k, v_g, "running_var")
    assert set(vars(ctx_k)) == set(vars(ctx_g))
    for i, (a, c) in enumerate(zip(ctx_g._saved, ctx_k._saved)):
        if getattr(a, "tensor", None) is not None:
            _same(c.tensor, a.tensor, f"saved[{i}]")
    for name in ("training", "eps", "axes", "shape", "has_w", "has_b", "need_w", "need_b", "dtypes"):
        _same(getattr(ctx_k, name), getattr(ctx_g, name), name)


CONV = [
    # input shape, weight shape, stride, padding, dilation, transposed, output_padding, groups
    ((2, 4, 7, 6), (6, 2, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), False, (0, 0), 2),
    ((1, 3, 9), (5, 3, 1, 4), (1, 2), ((0, 0), (1, 2)), (1, 1), False, (0, 0), 1),
    ((2, 4, 5, 5), (4, 3, 3, 2), (2, 1), ((1, 1), (0, 0)), (1, 2), True, (1, 0), 1),
]


@pytest.mark.parametrize("case", CONV)
@pytest.mark.parametrize("bias", [True, False])
def test_convolution(case, bias):
    xs, ws, stride, padding, dilation, transposed, output_padding, groups = case
    x = rand(*xs)
    w = rand(*(ws if len(xs) == 4 else ws[:2] + ws[3:]), seed=1)
    b = rand(ws[1] * groups if transposed else ws[0], seed=2) if bias else None
    params = (stride, padding, dilation, transposed, output_padding, groups)
    y = check("ConvolutionBackward0", x, w, b, *params)
    g = rand(*y.shape, seed=3)
    check("ConvolutionBackwardBackward0", g, x, w, *params, (True, True, bias))
    check("ConvolutionBackwardBackward0", g, x, w, *params, (False, True, False))


@pytest.mark.parametrize("return_indices", [True, False])
@pytest.mark.parametrize("grad", [True, False])
def test_max_pool(return_indices, grad):
    x = rand(2, 3, 7, 6)
    args = (x, (3, 2), (2, 2), (1, 0), (1, 1), (4, 3), return_indices)
    out = check("MaxPool2DWithIndicesBackward0", *args, grad=grad, differ=("taps",))
    if isinstance(out, tuple):
        g = rand(*out[0].shape, seed=4)
        idx = gputorch.tensor(out[1])
        check("MaxPool2DWithIndicesBackwardBackward0", g, x, idx, (3, 2), (2, 2), (1, 0), (1, 1))


@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool(count_include_pad):
    x = rand(2, 3, 7, 6)
    out = check("AvgPool2DBackward0", x, (3, 3), (2, 2), (1, 1), True, count_include_pad, None, (4, 4))
    g = rand(*out.shape, seed=5)
    check("AvgPool2DBackwardBackward0", g, x, (3, 3), (2, 2), (1, 1), True, count_include_pad, None)


@pytest.mark.parametrize("padding_idx,scale", [(-1, False), (1, True)])
@pytest.mark.parametrize("dtype", [gputorch.float32, gputorch.float16])
def test_embedding_backward(padding_idx, scale, dtype):
    idx = t(np.random.default_rng(6).integers(0, 5, (3, 4)))
    g = rand(3, 4, 6, dtype=dtype)
    check("EmbeddingDenseBackward0", g, idx, 5, padding_idx, scale)


# ================================================================ dropout
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("shape", [(1,), (7,), (3, 50)])
def test_dropout_kernel_matches_the_generic_mask(dtype, shape):
    from gputorch.nn.functional._fused_dropout import philox_dropout
    x = (np.random.default_rng(0).standard_normal(shape) + 3).astype(dtype)
    kernel = TABLE["philox_dropout"][1]
    for seed, offset, p in [(0, 0, 0.5), (2 ** 63 + 5, 12345, 0.1), (7, 2 ** 40, 0.9)]:
        np.testing.assert_array_equal(kernel(np, x, p, seed, offset), philox_dropout(np, x, p, seed, offset))


def test_fused_dropout_draws_what_bernoulli_draws():
    """Same generator state, same mask, same state afterwards as the composite path."""
    from gputorch.backends.philox import PhiloxEngine
    from gputorch.nn.functional._fused_dropout import blocks_used, philox_dropout
    x = np.ones(101)
    engine = PhiloxEngine(99)
    engine.offset = 10
    mask = engine.random(x.shape, np.float64) < 0.7
    assert engine.offset == 10 + blocks_used(x.size)
    np.testing.assert_array_equal(philox_dropout(np, x, 0.3, 99, 10) != 0, mask)


# ================================================================ gradient ops of gelu, silu, softmax
@pytest.mark.parametrize("dtype", [gputorch.float32, gputorch.float16, gputorch.float64])
def test_activation_gradient_ops(dtype):
    x, g = rand(5, 40, dtype=dtype), rand(5, 40, dtype=dtype, seed=1)
    check("GeluBackwardBackward0", g, x, "none")
    check("GeluBackwardBackward0", g, x, "tanh")
    check("SiluBackwardBackward0", g, x)


@pytest.mark.parametrize("shape,dim", [((4, 30), 1), ((4, 30), 0), ((2, 3, 1200), 2), ((), 0)])
def test_softmax_gradient_ops(shape, dim):
    y = rand(*shape).softmax(dim).detach()
    g = rand(*shape, seed=2)
    check("SoftmaxBackwardDataBackward0", g, y, dim)
    check("LogSoftmaxBackwardDataBackward0", g, y.log(), dim)


# ================================================================ backward hooks (normalization, cross entropy)
def _backward_both_ways(monkeypatch, node, hook_module, hook_name, args, grad, **params):
    """``node``'s backward with and without the kernel hook installed on the CPU backend."""
    import importlib
    from gputorch.backends import get_backend
    cls = TABLE[node][0]
    ctx = _ctx(cls, args, True)
    cls.forward(ctx, *args, **params)
    with gputorch.no_grad():
        generic = ctx.backward(grad)
        hook = getattr(importlib.import_module(hook_module), hook_name)
        monkeypatch.setitem(get_backend("cpu").overrides, hook, TABLE[hook_name][1])
        fused = ctx.backward(grad)
    return generic, fused


def _same_grads(a, b, what):
    a, b = (a if isinstance(a, tuple) else (a,)), (b if isinstance(b, tuple) else (b,))
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b)):
        assert (x is None) == (y is None), f"{what}[{i}]"
        if x is not None:
            assert x.dtype == y.dtype and x.shape == y.shape, f"{what}[{i}]"
            np.testing.assert_allclose(y._data.astype(np.float64), x._data.astype(np.float64),
                                       rtol=3e-3 if x.dtype == gputorch.float16 else 1e-4,
                                       atol=3e-3 if x.dtype == gputorch.float16 else 1e-5, err_msg=f"{what}[{i}]")


_NORM = "gputorch.nn.functional.normalization"


@pytest.mark.parametrize("dtype", [gputorch.float32, gputorch.float16])
@pytest.mark.parametrize("affine", [True, False])
def test_norm_backward_hooks(monkeypatch, dtype, affine):
    x = rand(3, 4, 10, dtype=dtype)
    w = rand(4, 10, dtype=dtype, seed=1) if affine else None
    b = rand(4, 10, dtype=dtype, seed=2) if affine else None
    g = rand(3, 4, 10, dtype=dtype, seed=3)
    _same_grads(*_backward_both_ways(monkeypatch, "NativeLayerNormBackward0", _NORM, "norm_backward_kernel",
                                     (x, w, b), g, ndims=2, eps=1e-5), "layer norm")
    _same_grads(*_backward_both_ways(monkeypatch, "FusedRmsNormBackward0", _NORM, "norm_backward_kernel",
                                     (x, w), g, ndims=2, eps=1e-6), "rms norm")
    x4, g4 = rand(2, 4, 3, 3, dtype=dtype, seed=4), rand(2, 4, 3, 3, dtype=dtype, seed=5)
    wb = (rand(4, dtype=dtype, seed=6), rand(4, dtype=dtype, seed=7)) if affine else (None, None)
    stats = (rand(4, requires_grad=False, dtype=dtype), rand(4, requires_grad=False, dtype=dtype).abs())
    _same_grads(*_backward_both_ways(monkeypatch, "NativeBatchNormBackward0", _NORM, "norm_backward_kernel",
                                     (x4, *wb, *stats, True, 0.1, 1e-5), g4), "batch norm")


@pytest.mark.parametrize("case", CE_CASES + [dict(shape=(4, 3), reduction="mean", ignore_index=1, smoothing=0.0,
                                                  weight=False)])
def test_cross_entropy_backward_hook(monkeypatch, case):
    shape = case["shape"]
    classes = shape[0] if len(shape) == 1 else shape[1]
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    target = t(np.random.default_rng(4).integers(0, classes, tshape))
    weight = rand(classes, seed=5, requires_grad=False).abs() if case["weight"] else None
    x = rand(*shape)
    grad = rand(*tshape, seed=6) if case["reduction"] == "none" else t(1.7, gputorch.float32)
    generic, fused = _backward_both_ways(monkeypatch, "CrossEntropyLossBackward0", "gputorch.nn.functional.loss",
                                         "cross_entropy_grad_kernel",
                                         (x, target, weight, case["reduction"], case["ignore_index"],
                                          case["smoothing"]), grad)
    _same_grads(generic, fused, "cross entropy")


def test_clip_grad_norm_with_the_sum_of_squares_kernel(monkeypatch):
    from gputorch.backends import get_backend
    from gputorch.nn.utils import clip_grad
    grads = [rand(3, 5, requires_grad=False), rand(70000, seed=1, requires_grad=False),
             rand(4, 2, seed=2, requires_grad=False).T, rand(0, requires_grad=False)]
    generic = clip_grad.get_total_norm(grads)
    kernel = TABLE["sum_of_squares_kernel"][1]
    monkeypatch.setitem(get_backend("cpu").overrides, clip_grad.sum_of_squares_kernel, kernel)
    fused = clip_grad.get_total_norm(grads)
    assert fused.dtype == generic.dtype == gputorch.float32 and fused.shape == ()
    np.testing.assert_allclose(fused.item(), generic.item(), rtol=1e-5)
    assert clip_grad.get_total_norm(grads, norm_type=1.0).item() == pytest.approx(
        sum(float(g.abs().sum()) for g in grads), rel=1e-5)                        # other norms: generic
    half = [g.half() for g in grads[:2]]
    assert clip_grad.get_total_norm(half).dtype == gputorch.float16
    doubles = [g.double() for g in grads]
    np.testing.assert_allclose(clip_grad.get_total_norm(doubles).item(), float(np.sqrt(
        sum((g._data ** 2).sum() for g in doubles))), rtol=1e-14)
    assert TABLE["sum_of_squares_kernel"][1](np, [grads[0]._data, doubles[1]._data]) is None   # mixed: generic
