"""Every CUDA kernel run once, on a small launch, under AddressSanitizer (out-of-bounds accesses)
and ThreadSanitizer (races such as a missing ``__syncthreads``), through the CPU execution
harness's sanitized builds (each launch in a subprocess). The kernels taking pointer tables
(multi-tensor optimizers, GradScaler's unscale, sum of squares) are left out: addresses inside arrays do not survive
the trip to another process.

Each family is built with only the instantiations its scenario launches (found by running the
scenario once unsanitized), to keep the sanitized builds small. Every launch is a subprocess, so
this module takes tens of seconds; it runs in the plain test pass and is skipped in the pass
with simulated CUDA devices (``GPUTORCH_SIMULATE_CUDA``), where it would repeat itself exactly.
"""
import functools
import os

import numpy as np
import pytest

from gputorch.cuda.kernels import (_module, activations, cross_entropy, dropout, embedding, gemm, im2col,
                                   normalization, pooling, reductions, softmax)
from gputorch.cuda.kernels._source import FAMILIES, Family, load_all_families
from tests.cuda._harness import harness_or_skip, kernels_on, shim

load_all_families()

pytestmark = pytest.mark.skipif(bool(os.environ.get("GPUTORCH_SIMULATE_CUDA")),
                                reason="device-independent; run in the plain test pass")


def _rand(*shape, seed=0, dtype=np.float32):
    return np.asarray(np.random.default_rng(seed).standard_normal(shape)).astype(dtype)


def _activations():
    x, g = _rand(70), _rand(70, seed=1)
    for act in ("relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh"):
        activations.forward(np, x, act)
    for act in ("gelu", "gelu_tanh", "silu"):
        activations.input_backward(np, g, x, act)
    for act in ("sigmoid", "tanh"):
        activations.output_backward(np, g, x, act)
    activations.threshold_backward(np, g, x, 0.0)
    for act in ("identity", "relu", "gelu", "silu"):
        activations.bias_activation(np, _rand(3, 10), _rand(10), act, keep_pre=True)


def _softmax():
    for shape, dim in (((3, 20), 1), ((2, 100), 1), ((2, 1100), 1), ((3, 4, 5), 1)):
        for log in (False, True):
            y = softmax.forward(np, _rand(*shape), dim, log)
            softmax.backward(np, _rand(*shape, seed=1), y, dim, log)


def _cross_entropy():
    for shape in ((3, 20), (2, 100), (2, 1100), (2, 5, 3)):
        x = _rand(*shape)
        t = np.random.default_rng(0).integers(0, shape[1], (shape[0],) + shape[2:])
        logp, _, _ = cross_entropy.forward(np, x, t, _rand(shape[1], seed=2), True)
        rows = t.shape
        cross_entropy.backward(np, logp, t, _rand(shape[1], seed=2), _rand(*rows), _rand(*rows), _rand(*rows))


def _normalization():
    for shape in ((3, 20), (2, 100), (2, 1100)):
        x, g = _rand(*shape), _rand(*shape, seed=1)
        w = _rand(shape[1], seed=2)
        for rms in (False, True):
            _, mean, rstd = normalization.rows_forward(np, x, 1, w, None if rms else w, 1e-5, rms)
            normalization.rows_backward(np, g, x, mean, rstd, w, 1, rms, True, True, not rms)
    x, g = _rand(4, 3, 5), _rand(4, 3, 5, seed=1)
    mean, m2 = normalization.batch_stats(np, x)
    rstd = (1 / np.sqrt(m2 / 20 + 1e-5)).astype(np.float32)
    normalization.channel_affine(np, x, mean, rstd, _rand(3), _rand(3, seed=3))
    normalization.batch_backward(np, g, x, mean, rstd, _rand(3), True, True, True)


def _im2col():
    x = _rand(2, 3, 6, 5)
    cols = im2col.im2col(np, x, (3, 2), (2, 1), ((1, 1), (0, 1)), (1, 2), (3, 3))
    im2col.im2col(np, x, (3, 2), (2, 1), ((1, 1), (0, 1)), (1, 2), (3, 3), channels_first=True)
    im2col.col2im(np, np.ascontiguousarray(cols), x.shape, (2, 1), ((1, 1), (0, 1)), (1, 2))


def _pooling():
    x = _rand(2, 3, 7, 6)
    out, idx = pooling.max_pool2d(np, x, (3, 2), (2, 2), (1, 0), (1, 1), (4, 3))
    pooling.max_pool2d_backward(np, _rand(*out.shape), idx, x.shape, (3, 2), (2, 2), (1, 0), (1, 1))
    out = pooling.avg_pool2d(np, x, (3, 3), (2, 2), (1, 1), (4, 3), False, None)
    pooling.avg_pool2d_backward(np, _rand(*out.shape), x.shape, (3, 3), (2, 2), (1, 1), False, None)


def _embedding():
    idx = np.array([[0, 3, 3], [1, 0, 2]])
    embedding.embedding_backward(np, _rand(2, 3, 5), idx, 4, 2, np.array([2, 2, 2, 1, 2, 1]))


def _dropout():
    dropout.dropout(np, _rand(301), 0.3, 12345, 7)


def _gemm():
    for dtype in (np.float32, np.float16, np.float64):
        gemm.matmul(np, _rand(17, 19, dtype=dtype), _rand(19, 5, seed=1, dtype=dtype))
    gemm.matmul(np, _rand(3, 20, 9), _rand(3, 9, 18, seed=2))     # batched (sanitized launches take C order)


def _reductions():
    reductions.column_sums(np, _rand(70, 40))


SCENARIOS = {"activations": _activations, "softmax": _softmax, "cross_entropy": _cross_entropy,
             "normalization": _normalization, "im2col": _im2col, "pooling": _pooling, "embedding": _embedding,
             "dropout": _dropout, "gemm": _gemm, "reductions": _reductions}


@pytest.fixture(scope="module")
def harness():
    h = harness_or_skip()
    with kernels_on():      # each test points the wrappers at its own build; restored at the end
        yield h


def test_every_family_has_a_scenario():
    assert set(SCENARIOS) == set(FAMILIES) - {"optimizers", "amp"}     # pointer tables: see the module doc


def _launched(h, family):
    """The instantiations of ``family`` that its scenario launches (an unsanitized run)."""
    _module.use_cupy(shim(h.RawModule))
    SCENARIOS[family]()
    return sorted(name for fam, name, _ in _module._functions if fam == family)


@pytest.mark.parametrize("sanitizer", ["address", "thread"])
@pytest.mark.parametrize("family", sorted(SCENARIOS))
def test_kernels_run_clean_under_sanitizer(harness, monkeypatch, family, sanitizer):
    from gputorch.cuda.harness.sanitizer import sanitizer_problem
    problem = sanitizer_problem(sanitizer)
    if problem:
        pytest.skip(problem)
    names = _launched(harness, family)
    assert names
    fam = FAMILIES[family]
    monkeypatch.setitem(FAMILIES, family, Family(fam.name, fam.filename, names, fam.options, fam.directory))
    _module.use_cupy(shim(functools.partial(harness.RawModule, sanitizer=sanitizer)))
    SCENARIOS[family]()          # a SanitizerError (with the report) fails the test
    assert sorted(name for f, name, _ in _module._functions if f == family) == names
