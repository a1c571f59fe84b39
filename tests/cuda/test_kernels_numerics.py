"""Every CUDA kernel run on the CPU execution harness (``gputorch.cuda.harness``) through its
launch wrapper, against a NumPy reference: sizes that are not multiples of the block size,
empty tensors, one element, rows shorter and longer than a warp and a block, float16/32/64,
non-contiguous inputs, numerically extreme inputs, and 64-bit index math past 2^31 elements.

The wrappers are given NumPy as their array module and the harness as their ``RawModule``, so
no simulated device is needed. Launches are kept small: the harness is slower than NumPy.
"""
import math

import numpy as np
import pytest

from gputorch.cuda.kernels import (_module, activations, cross_entropy, dropout, embedding, im2col,
                                   normalization, optimizers, pooling, reductions, softmax)
from tests.cuda._harness import harness  # noqa: F401 (an autouse fixture)

FLOATS = [np.float32, np.float16, np.float64]
TOL = {np.dtype(np.float32): dict(rtol=3e-6, atol=1e-6), np.dtype(np.float16): dict(rtol=2e-3, atol=2e-3),
       np.dtype(np.float64): dict(rtol=1e-12, atol=1e-13)}


def close(actual, expected, dtype=None, scale=1.0, **kw):
    dtype = np.dtype(dtype or actual.dtype)
    tol = {k: v * scale for k, v in TOL[dtype].items()}
    tol.update(kw)
    assert actual.shape == np.shape(expected)
    np.testing.assert_allclose(actual.astype(np.float64), np.asarray(expected, np.float64), equal_nan=True, **tol)


def rand(shape, dtype, scale=3.0, seed=0):
    return np.asarray(np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


EXTREMES = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e4, -1e4, 30.0, -30.0, 1e-30, 5.0, -5.0])

# ================================================================ activations
_erf = np.vectorize(math.erf, otypes=[np.float64])


def ref_act(act, x):
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if act == "relu":
            return np.maximum(x, 0)
        if act == "gelu":
            return (_erf(x * math.sqrt(0.5)) + 1) * (x * 0.5)
        if act == "gelu_tanh":
            return (np.tanh((x * x * x * 0.044715 + x) * math.sqrt(2 / math.pi)) + 1) * (x * 0.5)
        if act == "silu":
            return x / (np.exp(-x) + 1)
        if act == "sigmoid":
            return 1 / (np.exp(-x) + 1)
        return np.tanh(x)


def ref_slope(act, x):
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if act == "gelu":
            return (_erf(x * math.sqrt(0.5)) + 1) * 0.5 + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        if act == "gelu_tanh":
            b, k = math.sqrt(2 / math.pi), 0.044715
            t = np.tanh((x + k * x ** 3) * b)
            return (t + 1) * 0.5 + x * 0.5 * (1 - t * t) * (3 * k * x * x + 1) * b
        s = 1 / (np.exp(-x) + 1)
        return s * (x * (1 - s) + 1)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("act", ["relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh"])
@pytest.mark.parametrize("shape", [(0,), (1,), (257,), (3, 70)])
def test_activation_forward(act, dtype, shape):
    x = rand(shape, dtype)
    if len(shape) == 2:
        x = x.T                                   # non-contiguous
    y = activations.forward(np, x, act)
    assert y.dtype == x.dtype and y.shape == x.shape
    close(y, ref_act(act, x), scale=2)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("act", ["relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh"])
def test_activation_forward_extreme_inputs(act, dtype):
    x = EXTREMES.astype(dtype)
    close(activations.forward(np, x, act), ref_act(act, x).astype(dtype), scale=2)


def test_activations_decline_other_dtypes():
    assert activations.forward(np, np.arange(5), "relu") is None
    assert activations.input_backward(np, np.ones(3, np.float32), np.ones(3, np.float64), "silu") is None


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("act", ["gelu", "gelu_tanh", "silu"])
@pytest.mark.parametrize("shape", [(0,), (1,), (300,), (4, 33)])
def test_input_gradients(act, dtype, shape):
    x, g = rand(shape, dtype, seed=1), rand(shape, dtype, 1.0, seed=2)
    out = activations.input_backward(np, g, x, act)
    close(out, g.astype(np.float64) * ref_slope(act, x), scale=3)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("act", ["sigmoid", "tanh"])
def test_output_gradients(act, dtype):
    y = ref_act(act, rand((5, 41), dtype)).astype(dtype)
    g = rand((5, 41), dtype, seed=3)
    yd, gd = y.astype(np.float64), g.astype(np.float64)
    expected = (1 - yd) * gd * yd if act == "sigmoid" else (1 - yd * yd) * gd
    close(activations.output_backward(np, g, y, act), expected, scale=3)


@pytest.mark.parametrize("dtype", FLOATS)
def test_threshold_backward_selects_as_pytorch(dtype):
    y = np.array([0.0, 1.0, -1.0, 0.5, 0.1, 0.09, np.nan, 2.0], dtype)
    g = np.array([np.nan, 2.0, np.inf, 3.0, 4.0, 5.0, 6.0, np.nan], dtype)
    out = activations.threshold_backward(np, g, y, 0.1)
    # 0 where y <= 0.1 (0.1 rounded to the dtype, as the generic comparison does), else the gradient:
    # a NaN/inf gradient there gives 0, a NaN y passes its gradient, a NaN gradient elsewhere stays NaN
    expected = np.where(y <= dtype(0.1), dtype(0), g)
    np.testing.assert_array_equal(out, expected)
    assert out[0] == 0 and out[2] == 0 and out[6] == 6 and np.isnan(out[7])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("act", ["identity", "relu", "gelu", "silu"])
def test_bias_activation(act, dtype):
    x, b = rand((7, 45), dtype), rand((45,), dtype, seed=4)
    z = x.astype(np.float64) + b.astype(np.float64)
    y, pre = activations.bias_activation(np, x.copy(), b, act, keep_pre=True)
    close(pre, z.astype(dtype))
    expected = z if act == "identity" else ref_act(act, z.astype(dtype))
    close(y, expected, scale=2)


# ================================================================ softmax
def ref_softmax(x, dim, log):
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        shifted = x - x.max(axis=dim, keepdims=True)
        total = np.exp(shifted).sum(axis=dim, keepdims=True)
        return shifted - np.log(total) if log else np.exp(shifted) / total


ROWS = [(3, 1), (2, 5), (4, 32), (3, 33), (2, 127), (2, 128), (1, 129), (2, 1024), (2, 1025), (1, 5000)]


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", ROWS)
def test_softmax_rows(shape, dtype, log):
    x = rand(shape, dtype)
    y = softmax.forward(np, x, 1, log)
    close(y, ref_softmax(x, 1, log), scale=4)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape,dim", [((5, 4, 3), 0), ((2, 7, 6), 1), ((0, 5), 1), ((3, 0), 1), ((), 0), ((1,), 0),
                                       ((6, 40), 0)])
def test_softmax_any_dim_and_edge_shapes(shape, dim, log):
    x = rand(shape, np.float32)
    y = softmax.forward(np, x, dim, log)
    assert y.shape == x.shape
    if x.size:
        close(y, ref_softmax(x.reshape(shape or (1,)), dim, log).reshape(shape), scale=4)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_non_contiguous_input(log):
    x = rand((40, 6), np.float32).T          # rows of 40 with stride 6
    close(softmax.forward(np, x, 1, log), ref_softmax(x, 1, log), scale=4)


@pytest.mark.parametrize("cols", [7, 100, 2000])
def test_softmax_extreme_rows(cols):
    x = rand((6, cols), np.float32)
    x[0, :] = -np.inf                        # all -inf: NaN, like the generic path
    x[1, 3] = -np.inf                        # one -inf: probability 0
    x[2, :] += 1e4                           # large values: stable
    x[3, 1] = np.inf                         # +inf: NaN row
    x[4, 2] = np.nan                         # NaN: NaN row
    x[5, 0] = 80.0                           # dominates the row
    for log in (False, True):
        y = softmax.forward(np, x, 1, log)
        close(y, ref_softmax(x, 1, log), scale=20)
        assert np.isnan(y[0]).all() and np.isnan(y[3]).all() and np.isnan(y[4]).all()
        assert (y[1, 3] == 0) if not log else y[1, 3] == -np.inf


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", [((3, 5), 1), ((2, 33), 1), ((2, 1100), 1), ((4, 3, 5), 1), ((0, 4), 1)])
def test_softmax_backward(shape, dim, dtype, log):
    y = ref_softmax(rand(shape, dtype), dim, log).astype(dtype)
    g = rand(shape, dtype, 1.0, seed=5)
    yd, gd = y.astype(np.float64), g.astype(np.float64)
    if log:
        expected = gd - np.exp(yd) * gd.sum(dim, keepdims=True)
    else:
        expected = yd * (gd - (gd * yd).sum(dim, keepdims=True))
    close(softmax.backward(np, g, y, dim, log), expected, scale=8)


# ================================================================ cross entropy
def ref_logp(x):
    return ref_softmax(x, 0 if x.ndim == 1 else 1, True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (2, 40), (3, 2000), (7,), (2, 5, 3, 2)])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_forward(shape, dtype, weighted):
    x = rand(shape, dtype)
    cax = 0 if len(shape) == 1 else 1
    classes = shape[cax]
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = np.random.default_rng(1).integers(0, classes, tshape)
    w = rand((classes,), dtype, 1.0, seed=7) if weighted else None
    logp, picked, smooth = cross_entropy.forward(np, x, t, w, True)
    ref = ref_logp(x)
    close(logp, ref, scale=4)
    lp = logp.astype(np.float64)
    expected_picked = np.take_along_axis(lp, np.expand_dims(t, cax), cax).squeeze(cax)
    close(picked, expected_picked, scale=4)
    wshape = [1] * len(shape)
    wshape[cax] = classes
    wl = lp * (1.0 if w is None else w.astype(np.float64).reshape(wshape))
    close(smooth, wl.sum(axis=cax), scale=40)
    _, picked2, _ = cross_entropy.forward(np, x, t, w, False)    # without keeping logp
    np.testing.assert_array_equal(picked2, picked)


def test_cross_entropy_extreme_logits():
    x = np.array([[1e4, 0.0, -1e4], [-np.inf, 0.0, 1.0], [0.0, 0.0, 0.0]], np.float32)
    t = np.array([0, 1, 2])
    logp, picked, _ = cross_entropy.forward(np, x, t, None, True)
    close(logp, ref_logp(x), scale=4)
    assert picked[0] == 0.0 and np.isfinite(picked).all()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 5), (5,)])
def test_cross_entropy_backward(shape, dtype):
    logp = ref_logp(rand(shape, dtype)).astype(dtype)
    cax = 0 if len(shape) == 1 else 1
    classes = shape[cax]
    rows_shape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    rng = np.random.default_rng(3)
    t = rng.integers(0, classes, rows_shape)
    a, b, s = (rng.standard_normal(rows_shape) for _ in range(3))
    w = rand((classes,), dtype, 1.0, seed=8)
    out = cross_entropy.backward(np, logp, t, w, a, b, s)
    ex = lambda v: np.expand_dims(v, cax)   # noqa: E731
    wshape = [1] * len(shape)
    wshape[cax] = classes
    onehot = (np.arange(classes).reshape(wshape) == ex(t)).astype(np.float64)
    expected = np.exp(logp.astype(np.float64)) * ex(a) - onehot * ex(b) - ex(s) * w.astype(np.float64).reshape(wshape)
    close(out, expected, scale=8)


# ================================================================ layer norm / rms norm / batch norm
def ref_norm(x, ndims, w, b, eps, rms):
    axes = tuple(range(x.ndim - ndims, x.ndim))
    xd = x.astype(np.float64)
    mean = 0.0 if rms else xd.mean(axes, keepdims=True)
    var = (xd * xd).mean(axes, keepdims=True) if rms else ((xd - mean) ** 2).mean(axes, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    y = (xd - mean) * rstd
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y, mean, rstd


NORM_SHAPES = [((3, 5), 1), ((4, 32), 1), ((2, 33), 1), ((2, 3, 40), 1), ((2, 1030), 1), ((3, 4, 6), 2), ((1, 1), 1)]


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,ndims", NORM_SHAPES)
def test_norm_forward(shape, ndims, dtype, rms):
    x = rand(shape, dtype, seed=9) + 2                     # an offset: the centering matters
    nshape = shape[len(shape) - ndims:]
    w, b = rand(nshape, dtype, 1.0, seed=10), (None if rms else rand(nshape, dtype, 1.0, seed=11))
    y, mean, rstd = normalization.rows_forward(np, x, ndims, w, b, 1e-5, rms)
    ry, rmean, rrstd = ref_norm(x, ndims, w.astype(np.float64), None if b is None else b.astype(np.float64), 1e-5,
                                rms)
    acc = np.float64 if dtype == np.float64 else np.float32
    assert rstd.dtype == acc and rstd.shape == shape[:len(shape) - ndims] + (1,) * ndims
    close(rstd, rrstd, acc, scale=8)
    if not rms:
        close(mean, rmean, acc, scale=8)
    else:
        assert mean is None
    close(y, ry, scale=8)


def test_norm_forward_edge_cases():
    y, mean, rstd = normalization.rows_forward(np, np.zeros((0, 4), np.float32), 1, None, None, 1e-5, False)
    assert y.shape == (0, 4) and mean.shape == (0, 1)
    x = np.full((2, 300), 1e4, np.float32)                 # constant rows: variance 0
    y, mean, rstd = normalization.rows_forward(np, x, 1, None, None, 1e-5, False)
    assert (y == 0).all() and np.allclose(rstd, 1 / np.sqrt(1e-5))
    x = rand((2, 64), np.float32).T                         # non-contiguous
    y, _, _ = normalization.rows_forward(np, x, 1, None, None, 1e-5, False)
    close(y, ref_norm(x, 1, None, None, 1e-5, False)[0], scale=8)


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,ndims", [((3, 5), 1), ((2, 40), 1), ((3, 1100), 1), ((2, 3, 4), 2), ((2050, 3), 1)])
def test_norm_backward(shape, ndims, dtype, rms):
    x = rand(shape, dtype, seed=12) + 1
    g = rand(shape, dtype, 1.0, seed=13)
    nshape = shape[len(shape) - ndims:]
    w = rand(nshape, dtype, 1.0, seed=14)
    _, mean, rstd = normalization.rows_forward(np, x, ndims, w, None, 1e-5, rms)
    gx, gw, gb = normalization.rows_backward(np, g, x, mean, rstd, w, ndims, rms, True, True, not rms)
    axes = tuple(range(len(shape) - ndims, len(shape)))
    lead = tuple(range(len(shape) - ndims))
    xd, gd = x.astype(np.float64), g.astype(np.float64)
    m = 0.0 if rms else mean.astype(np.float64)
    xhat = (xd - m) * rstd
    gxhat = gd * w.astype(np.float64)
    if rms:
        ex = (gxhat - xhat * (gxhat * xhat).mean(axes, keepdims=True)) * rstd
    else:
        ex = (gxhat - gxhat.mean(axes, keepdims=True) - xhat * (gxhat * xhat).mean(axes, keepdims=True)) * rstd
    close(gx, ex, scale=20)
    close(gw, (gd * xhat).sum(lead), np.float64 if dtype == np.float64 else np.float32, scale=50,
          atol=1e-2 if dtype == np.float16 else 1e-4)
    if not rms:
        close(gb, gd.sum(lead), np.float64 if dtype == np.float64 else np.float32, scale=50)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (3, 2, 4, 4), (1, 4, 2100), (0, 3, 2)])
def test_batch_norm_statistics_and_affine(shape, dtype):
    x = rand(shape, dtype, seed=15) + 3
    mean, m2 = normalization.batch_stats(np, x)
    axes = (0,) + tuple(range(2, len(shape)))
    xd = x.astype(np.float64)
    acc = np.float64 if dtype == np.float64 else np.float32
    if x.size:
        close(mean, xd.mean(axes), acc, scale=8)
        close(m2, ((xd - xd.mean(axes, keepdims=True)) ** 2).sum(axes), acc, scale=50)
    else:
        assert np.isnan(mean).all()
    c = shape[1]
    rstd = (1 / np.sqrt(m2 / max(x.size // c, 1) + 1e-5)).astype(acc)
    w, b = rand((c,), dtype, 1.0, seed=16), rand((c,), dtype, 1.0, seed=17)
    y = normalization.channel_affine(np, x, mean, rstd, w, b)
    cs = (1, c) + (1,) * (len(shape) - 2)
    ex = (xd - mean.reshape(cs)) * rstd.reshape(cs) * w.astype(np.float64).reshape(cs) + b.astype(
        np.float64).reshape(cs)
    close(y, ex, scale=8)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 7), (2, 2, 3, 3)])
def test_batch_norm_backward(shape, dtype):
    x = rand(shape, dtype, seed=18) + 1
    g = rand(shape, dtype, 1.0, seed=19)
    c = shape[1]
    w = rand((c,), dtype, 1.0, seed=20)
    mean, m2 = normalization.batch_stats(np, x)
    n = x.size // c
    rstd = 1 / np.sqrt(m2 / n + 1e-5)
    gx, gw, gb = normalization.batch_backward(np, g, x, mean, rstd, w, True, True, True)
    axes = (0,) + tuple(range(2, len(shape)))
    cs = (1, c) + (1,) * (len(shape) - 2)
    xd, gd = x.astype(np.float64), g.astype(np.float64)
    xhat = (xd - mean.reshape(cs)) * rstd.reshape(cs)
    gxhat = gd * w.astype(np.float64).reshape(cs)
    ex = (gxhat - gxhat.mean(axes, keepdims=True) - xhat * (gxhat * xhat).mean(axes, keepdims=True)) * rstd.reshape(cs)
    close(gx, ex, scale=20)
    acc = np.float64 if dtype == np.float64 else np.float32
    close(gw, (gd * xhat).sum(axes), acc, scale=50)
    close(gb, gd.sum(axes), acc, scale=50)


# ================================================================ optimizers
def _state(dtype, sizes, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in sizes]


SIZES = [(3, 5), (70000,), (1,), (0,), (2, 3, 4)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("hyper", [dict(momentum=0.0, dampening=0.0, nesterov=False, weight_decay=0.0, maximize=False),
                                   dict(momentum=0.9, dampening=0.0, nesterov=True, weight_decay=0.01, maximize=False),
                                   dict(momentum=0.8, dampening=0.3, nesterov=False, weight_decay=0.1, maximize=True)])
def test_multi_tensor_sgd_is_bit_identical_to_the_generic_update(dtype, hyper):
    from gputorch.optim.sgd import sgd_update
    params_k, params_g = _state(dtype, SIZES, 0), _state(dtype, SIZES, 0)
    bufs_k = [None] * len(SIZES) if hyper["momentum"] else []
    bufs_g = list(bufs_k)
    for step in range(3):
        grads = _state(dtype, SIZES, 10 + step)
        optimizers.multi_tensor_sgd(params_k, grads, bufs_k, lr=0.05, xp=np, generic=sgd_update, **hyper)
        sgd_update(params_g, grads, bufs_g, lr=0.05, xp=np, **hyper)
    for a, b in zip(params_k + bufs_k, params_g + bufs_g):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("hyper", [dict(amsgrad=False, weight_decay=0.0, maximize=False, decoupled_weight_decay=False),
                                   dict(amsgrad=True, weight_decay=0.1, maximize=True, decoupled_weight_decay=False),
                                   dict(amsgrad=True, weight_decay=0.01, maximize=False, decoupled_weight_decay=True)])
@pytest.mark.parametrize("betas", [(0.9, 0.999), (0.3, 0.5)])
def test_multi_tensor_adam_is_bit_identical_to_the_generic_update(dtype, hyper, betas):
    from gputorch.optim.adam import adam_update
    zeros = lambda: [np.zeros(s, dtype) for s in SIZES]   # noqa: E731
    k = [_state(dtype, SIZES, 0), zeros(), zeros(), zeros() if hyper["amsgrad"] else []]
    g = [_state(dtype, SIZES, 0), zeros(), zeros(), zeros() if hyper["amsgrad"] else []]
    for step in range(1, 4):
        grads = _state(dtype, SIZES, 20 + step)
        steps = [float(step)] * len(SIZES)
        common = dict(beta1=betas[0], beta2=betas[1], lr=0.01, eps=1e-8, xp=np, **hyper)
        with np.errstate(all="ignore"):
            optimizers.multi_tensor_adam(k[0], grads, k[1], k[2], k[3], steps, generic=adam_update, **common)
            adam_update(g[0], grads, g[1], g[2], g[3], steps, **common)
    for a_list, b_list in zip(k, g):
        for a, b in zip(a_list, b_list):
            np.testing.assert_array_equal(a, b)


def test_optimizers_route_other_arrays_to_the_generic_update():
    params = [np.ones(4, np.float32), np.ones(6, np.float32)[::2]]          # the second is non-contiguous
    grads = [np.full(4, 0.5, np.float32), np.full(3, 0.5, np.float32)]
    bufs = [None, None]
    from gputorch.optim.sgd import sgd_update
    optimizers.multi_tensor_sgd(params, grads, bufs, lr=0.1, weight_decay=0.0, momentum=0.9, dampening=0.0,
                                nesterov=False, maximize=False, xp=np, generic=sgd_update)
    for p, b in zip(params, bufs):
        np.testing.assert_allclose(p, 0.95)
        np.testing.assert_allclose(b, 0.5)


# ================================================================ im2col / col2im / convolution
def _windows():
    from gputorch.nn.functional import _windows as w
    return w


CONV_CASES = [
    # x shape, kernel, stride, padding ((top, bottom), (left, right)), dilation
    ((2, 3, 7, 6), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1)),
    ((1, 2, 9, 8), (3, 2), (2, 3), ((0, 1), (2, 0)), (2, 1)),
    ((2, 1, 5, 5), (1, 1), (1, 1), ((0, 0), (0, 0)), (1, 1)),
    ((1, 2, 4, 4), (5, 5), (1, 1), ((2, 2), (2, 2)), (1, 1)),
]


@pytest.mark.parametrize("channels_first", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", CONV_CASES)
def test_im2col_matches_the_generic_windows(case, dtype, channels_first):
    shape, kernel, stride, padding, dilation = case
    w = _windows()
    out_hw = tuple(w.out_size(shape[2 + d], kernel[d], stride[d], padding[d][0], padding[d][1], dilation[d])
                   for d in range(2))
    x = rand(shape, dtype)
    for arr in (x, np.asfortranarray(x), rand(shape[:3] + (shape[3] * 2,), dtype)[..., ::2]):   # any strides
        got = im2col.im2col(np, arr, kernel, stride, padding, dilation, out_hw, channels_first)
        expected = w.im2col(np, arr, kernel, stride, padding, dilation, out_hw, channels_first)
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", CONV_CASES)
def test_col2im_matches_the_generic_windows(case, dtype):
    shape, kernel, stride, padding, dilation = case
    w = _windows()
    out_hw = tuple(w.out_size(shape[2 + d], kernel[d], stride[d], padding[d][0], padding[d][1], dilation[d])
                   for d in range(2))
    cols = rand((shape[0], shape[1]) + tuple(kernel) + out_hw, dtype)
    got = im2col.col2im(np, cols, shape, stride, padding, dilation)
    expected = w.col2im(np, cols, shape, stride, padding, dilation)
    if dtype == np.float16:
        close(got, expected, scale=2)
    else:
        np.testing.assert_array_equal(got, expected)   # same additions in the same order


@pytest.mark.parametrize("groups", [1, 2])
def test_convolution_products(groups):
    w = _windows()
    x = rand((2, 4, 6, 5), np.float64)
    weight = rand((6, 4 // groups, 3, 2), np.float64, seed=1)
    stride, padding, dilation = (2, 1), ((1, 0), (1, 1)), (1, 2)
    out_hw = tuple(w.out_size(x.shape[2 + d], weight.shape[2 + d], stride[d], padding[d][0], padding[d][1],
                              dilation[d]) for d in range(2))
    y = im2col.conv_forward(np, x, weight, stride, padding, dilation, groups, out_hw)
    close(y, w.conv_forward(np, x, weight, stride, padding, dilation, groups, out_hw))
    g = rand(y.shape, np.float64, seed=2)
    close(im2col.conv_input_grad(np, g, weight, x.shape, stride, padding, dilation, groups),
          w.conv_input_grad(np, g, weight, x.shape, stride, padding, dilation, groups))
    close(im2col.conv_weight_grad(np, x, g, weight.shape, stride, padding, dilation, groups),
          w.conv_weight_grad(np, x, g, weight.shape, stride, padding, dilation, groups))


def test_im2col_empty_and_other_dtypes():
    assert im2col.im2col(np, np.zeros((2, 3, 4, 4), np.int64), (2, 2), (1, 1), ((0, 0), (0, 0)), (1, 1),
                         (3, 3)) is None
    out = im2col.im2col(np, np.zeros((0, 3, 4, 4), np.float32), (2, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (3, 3))
    assert out.shape == (0, 3, 2, 2, 3, 3)


# ================================================================ pooling
def _pw():
    from gputorch.nn.functional import _pool_windows as pw
    return pw


POOL_CASES = [
    # x shape, kernel, stride, padding, dilation
    ((2, 3, 7, 6), (2, 2), (2, 2), (0, 0), (1, 1)),
    ((1, 2, 9, 8), (3, 3), (2, 1), (1, 1), (1, 1)),
    ((3, 5, 5), (3, 2), (1, 2), (1, 0), (2, 1)),
    ((1, 1, 4, 4), (4, 4), (1, 1), (2, 2), (1, 1)),
]


def _out_hw(shape, kernel, stride, padding, dilation, ceil_mode=False):
    from gputorch.nn.functional._windows import out_size
    return tuple(out_size(shape[-2 + d], kernel[d], stride[d], padding[d], padding[d], dilation[d], ceil_mode)
                 for d in range(2))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", POOL_CASES)
def test_max_pool_matches_the_generic_path(case, dtype):
    shape, kernel, stride, padding, dilation = case
    pw = _pw()
    x = rand(shape, dtype)
    x.reshape(-1)[::7] = np.round(x.reshape(-1)[::7])        # some ties
    x.reshape(-1)[3] = np.nan
    x.reshape(-1)[11] = -np.inf
    out_hw = _out_hw(shape, kernel, stride, padding, dilation)
    out, idx = pooling.max_pool2d(np, x, kernel, stride, padding, dilation, out_hw)
    ref_out, taps = pw.max_pool(np, x, kernel, stride, padding, dilation, out_hw)
    ref_idx = pw.max_pool_indices(np, taps, shape[-2:], kernel, stride, padding, dilation)
    np.testing.assert_array_equal(out, ref_out)
    np.testing.assert_array_equal(idx, ref_idx)
    g = rand(out.shape, dtype, seed=3)
    gx = pooling.max_pool2d_backward(np, g, idx, shape, kernel, stride, padding, dilation)
    ref_gx = pw.max_pool_grad(np, g, taps, shape, kernel, stride, padding, dilation)
    if dtype == np.float16:
        close(gx, ref_gx, scale=2)
    else:
        np.testing.assert_array_equal(gx, ref_gx)


def test_max_pool_all_minus_inf_window_reports_its_first_real_position():
    x = np.full((1, 1, 3, 3), -np.inf, np.float32)
    out, idx = pooling.max_pool2d(np, x, (2, 2), (2, 2), (1, 1), (1, 1), (2, 2))
    assert (out == -np.inf).all()
    np.testing.assert_array_equal(idx[0, 0], [[0, 1], [3, 4]])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("divisor_override", [None, 3])
@pytest.mark.parametrize("case", [((2, 3, 7, 6), (3, 3), (2, 2), (1, 1), True),
                                  ((1, 2, 5, 8), (2, 3), (1, 2), (0, 1), False)])
def test_avg_pool_matches_the_generic_path(case, dtype, count_include_pad, divisor_override):
    shape, kernel, stride, padding, ceil_mode = case
    pw = _pw()
    x = rand(shape, dtype)
    out_hw = _out_hw(shape, kernel, stride, padding, (1, 1), ceil_mode)
    out = pooling.avg_pool2d(np, x, kernel, stride, padding, out_hw, count_include_pad, divisor_override)
    close(out, pw.avg_pool(np, x, kernel, stride, padding, out_hw, count_include_pad, divisor_override), scale=2)
    g = rand(out.shape, dtype, seed=4)
    gx = pooling.avg_pool2d_backward(np, g, shape, kernel, stride, padding, count_include_pad, divisor_override)
    close(gx, pw.avg_pool_grad(np, g, shape, kernel, stride, padding, count_include_pad, divisor_override), scale=2)


# ================================================================ embedding
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("padding_idx,scale", [(-1, False), (2, False), (-1, True), (0, True)])
def test_embedding_backward(dtype, padding_idx, scale):
    rng = np.random.default_rng(5)
    idx = rng.integers(0, 6, (4, 9))
    grad = rand((4, 9, 5), dtype)
    counts = np.bincount(idx.reshape(-1), minlength=6)[idx.reshape(-1)] if scale else None
    out = embedding.embedding_backward(np, grad, idx, 6, padding_idx, counts)
    rows = grad.reshape(-1, 5).astype(np.float64)
    if scale:
        rows = rows / counts[:, None]
    ex = np.zeros((6, 5))
    np.add.at(ex, idx.reshape(-1), rows)
    if padding_idx >= 0:
        ex[padding_idx] = 0
    assert out.dtype == dtype and out.shape == (6, 5)
    close(out, ex, scale=4)


def test_embedding_backward_empty_and_int32_indices():
    out = embedding.embedding_backward(np, np.zeros((0, 3), np.float32), np.zeros(0, np.int64), 4, -1)
    assert out.shape == (4, 3) and (out == 0).all()
    out = embedding.embedding_backward(np, np.ones((2, 3), np.float32), np.array([1, 1], np.int32), 4, -1)
    np.testing.assert_array_equal(out[1], [2, 2, 2])


# ================================================================ dropout
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 2, 7, 1000])
def test_dropout_mask_is_the_cuda_generators_stream(dtype, n):
    from gputorch.backends.philox import PhiloxEngine
    seed, offset, p = 123456789012345, 77, 0.3
    x = rand((n,), dtype) + 5
    y = dropout.dropout(np, x, p, seed, offset)
    engine = PhiloxEngine(seed)
    engine.offset = offset
    keep = engine.random((n,), np.float64) < 1 - p
    assert engine.offset == offset + dropout.blocks_used(n)
    scale = dtype(1) / dtype(1 - p)
    np.testing.assert_array_equal(y, x * np.where(keep, scale, dtype(0)).astype(dtype))
    np.testing.assert_array_equal(dropout.dropout(np, x, p, seed, offset), y)   # regenerated, not stored


def test_dropout_shapes_and_extremes():
    x = np.array([[np.inf, np.nan, 1.0], [2.0, -np.inf, 0.0]], np.float32).T     # non-contiguous
    y = dropout.dropout(np, x, 0.5, 1, 0)
    assert y.shape == x.shape
    kept = ~((y == 0) | np.isnan(y))
    np.testing.assert_array_equal(y[kept], x[kept] * 2)
    assert dropout.dropout(np, np.zeros((0, 3), np.float32), 0.5, 1, 0).shape == (0, 3)
    big_seed = dropout.dropout(np, np.ones(64, np.float32), 0.5, 2 ** 64 - 1, 2 ** 64 - 40)
    assert set(np.unique(big_seed)) <= {0.0, 2.0}


# ================================================================ reductions
def test_sum_of_squares_of_many_tensors():
    arrays = [rand(s, d, seed=i) for i, (s, d) in enumerate([((3, 5), np.float32), ((70000,), np.float32),
                                                             ((0,), np.float32), ((4,), np.float16),
                                                             ((9, 2), np.float64), ((1,), np.float32)])]
    arrays[1] = arrays[1][::1]
    arrays.append(rand((6, 4), np.float32).T)                                   # non-contiguous
    sums = reductions.sum_of_squares(np, arrays)
    for a, s in zip(arrays, sums):
        assert s.dtype == (np.float64 if a.dtype == np.float64 else np.float32)
        close(np.asarray(s), (a.astype(np.float64) ** 2).sum(), s.dtype, scale=10)
    assert reductions.sum_of_squares(np, [np.ones(3, np.int64)]) is None


@pytest.mark.parametrize("shape", [(1, 1), (3, 40), (2500, 3), (0, 4), (5, 0)])
def test_column_sums(shape):
    x = rand(shape, np.float32)
    close(reductions.column_sums(np, x), x.astype(np.float64).sum(0), np.float32, scale=20)


# ================================================================ errors
def test_launch_errors_name_the_kernel():
    kernel = _module.function("activations", "activation_forward<float, 1>")
    x = np.ones(4, np.float32)
    with pytest.raises(_module.KernelLaunchError, match=r"activation_forward<float, 1>.*activations\.cu"):
        kernel((1,), (2048,), (x, x, np.int64(4)))                 # too many threads per block
    with pytest.raises(TypeError, match="activation_forward"):
        kernel((1,), (32,), (x, x, 4.0))                           # a float for a long long


def test_harness_compile_errors_name_the_file_and_line(harness, tmp_path):
    from gputorch.cuda.kernels._source import FAMILIES, Family
    (tmp_path / "bad.cu").write_text('#include "common.cuh"\n__global__ void bad(float* x) { x[0] = nope; }\n')
    FAMILIES["bad_test"] = Family("bad_test", "bad.cu", ["bad"], directory=tmp_path)
    try:
        with pytest.raises(_module.KernelCompileError) as info:
            _module.function("bad_test", "bad")
    finally:
        del FAMILIES["bad_test"]
        _module._modules.pop(("bad_test", 0), None)
    assert "bad.cu" in str(info.value) and info.value.line == 2


# ================================================================ 64-bit index math
BIG = 2 ** 31 + 300


def _virtual(n, dtype=np.float32):
    from gputorch.cuda.harness.virtual_memory import virtual_array
    try:
        return virtual_array(n, dtype)
    except (OSError, ValueError) as e:
        pytest.skip(f"cannot reserve virtual memory: {e}")


def test_elementwise_index_math_past_2_31():
    x, y = _virtual(BIG), _virtual(BIG)
    x[-300:] = np.arange(300) - 150.0
    kernel = _module.function("activations", "activation_forward<float, 1>")
    grid = (BIG + 255) // 256
    kernel._fn((grid,), (256,), (x, y, np.int64(BIG)), blocks=[grid - 2, grid - 1])   # the last blocks only
    np.testing.assert_array_equal(y[-300:], np.maximum(np.arange(300) - 150.0, 0))


def test_row_kernel_index_math_past_2_31():
    cols = 1024
    rows = BIG // cols + 2
    x, y = _virtual(rows * cols), _virtual(rows * cols)
    x[-cols:] = np.linspace(-3, 3, cols)
    kernel = _module.function("softmax", "softmax_forward_warp<float, false, 32>")
    grid = (rows + 3) // 4
    kernel._fn((grid,), (128,), (x, y, np.int64(rows), np.int64(cols)), blocks=[grid - 1])
    close(y[-cols:], ref_softmax(x[-cols:].reshape(1, -1), 1, False)[0], np.float32, scale=4)


def test_dropout_index_math_past_2_31():
    from gputorch.backends.philox import PhiloxEngine
    x, y = _virtual(BIG), _virtual(BIG)
    x[-300:] = 1.0
    kernel = _module.function("dropout", "dropout_philox<float>")
    pairs = (BIG + 1) // 2
    grid = (pairs + 255) // 256
    kernel._fn((grid,), (256,), (x, y, np.int64(BIG), np.uint64(5), np.uint64(0), np.float64(0.5), np.float64(2.0)),
               blocks=[grid - 1])
    engine = PhiloxEngine(5)
    engine.offset = (BIG - 300) // 2
    keep = engine.random((300,), np.float64) < 0.5
    np.testing.assert_array_equal(y[-300:], np.where(keep, 2.0, 0.0))
