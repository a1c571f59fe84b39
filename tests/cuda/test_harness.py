"""The CPU execution harness (gputorch.cuda.harness): sample kernels against NumPy, misuse
that must be an error, launch-API checks, >2^31-element indexing, and sanitizer runs.

The sample kernels live in one source (compiled once, then loaded from the disk cache)."""
import numpy as np
import pytest

from gputorch.cuda.harness import (CompileError, LaunchError, RawKernel, RawModule, SanitizerError,
                                   sanitizer_problem, toolchain_problem, virtual_array)
from gputorch.cuda.harness import compiler as harness_compiler

pytestmark = pytest.mark.skipif(toolchain_problem() is not None, reason=f"harness: {toolchain_problem()}")

SAMPLES = r"""
#include <cuda_fp16.h>

extern "C" __global__ void axpy(float a, const float* __restrict__ x, float* __restrict__ y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

// 2-D grid and block, a 2-D static shared tile.
extern "C" __global__ void transpose(const float* x, float* y, int rows, int cols) {
    __shared__ float tile[16][17];
    int c = blockIdx.x * 16 + threadIdx.x, r = blockIdx.y * 16 + threadIdx.y;
    if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = x[(long long)r * cols + c];
    __syncthreads();
    c = blockIdx.y * 16 + threadIdx.x;
    r = blockIdx.x * 16 + threadIdx.y;
    if (r < cols && c < rows) y[(long long)r * rows + c] = tile[threadIdx.x][threadIdx.y];
}

extern "C" __global__ void block_sum(const float* x, float* out, int n) {
    __shared__ float buf[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    buf[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = buf[0];
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Per warp: the sum (xor butterfly), an inclusive scan (shfl_up), a width-8 broadcast,
// and votes.
extern "C" __global__ void warp_ops(const float* x, float* sums, float* scan, float* bcast, unsigned* votes) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, warp = i / 32;
    float v = x[i];
    float s = warp_sum(v);
    if (lane == 0) sums[warp] = s;
    float acc = v;
    for (int o = 1; o < 32; o <<= 1) {
        float up = __shfl_up_sync(0xffffffffu, acc, o);
        if (lane >= o) acc += up;
    }
    scan[i] = acc;
    bcast[i] = __shfl_sync(0xffffffffu, v, 3, 8);  // lane 3 of each group of 8
    unsigned b = __ballot_sync(0xffffffffu, v > 0.5f);
    int any = __any_sync(0xffffffffu, v > 0.99f), all = __all_sync(0xffffffffu, v >= 0.0f);
    if (lane == 0) { votes[3 * warp] = b; votes[3 * warp + 1] = any; votes[3 * warp + 2] = all; }
}

// A reduction that is correct in a partial warp: masks name only the lanes that exist.
extern "C" __global__ void partial_warp_sum(const float* x, float* out) {
    unsigned mask = __ballot_sync(__activemask(), 1);
    int lanes = __popc(mask);
    float v = x[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) {
        float other = __shfl_down_sync(mask, v, o);
        if ((threadIdx.x & 31) + o < lanes) v += other;
    }
    if ((threadIdx.x & 31) == 0) out[threadIdx.x / 32] = v;
}

// Row softmax with dynamic shared memory (blockDim.x floats).
extern "C" __global__ void softmax_rows(const float* x, float* y, int cols) {
    extern __shared__ float red[];
    const float* row = x + (long long)blockIdx.x * cols;
    float* out = y + (long long)blockIdx.x * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += __expf(row[c] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    float inv = __fdividef(1.0f, red[0]);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = __expf(row[c] - m) * inv;
}

extern "C" __global__ void histogram(const int* x, unsigned* counts, int* extremes, double* total, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(&counts[x[i]], 1u);
    atomicMax(&extremes[0], x[i]);
    atomicMin(&extremes[1], x[i]);
    atomicAdd(total, (double)x[i]);
}

// A float maximum built on atomicCAS.
extern "C" __global__ void cas_max(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int* addr = (int*)out;
    int old = *addr, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= x[i]) break;
        old = atomicCAS(addr, assumed, __float_as_int(x[i]));
    } while (old != assumed);
}

extern "C" __global__ void half_gelu(const __half* x, __half* y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __half2float(x[i]);
        y[i] = __float2half(0.5f * v * (1.0f + erff(v * 0.70710678f)));
    }
}

extern "C" __global__ void half2_add(const __half2* a, const __half2* b, __half2* c, int n2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) c[i] = __hadd2(a[i], b[i]);
}

template <typename T, int UNROLL>
__global__ void scale(const T* x, T* y, T a, long long n) {
    long long base = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
    for (int u = 0; u < UNROLL; ++u)
        if (base + u < n) y[base + u] = a * x[base + u];
}

extern "C" __global__ void warp_misc(const int* x, int* out) {
    int v = x[threadIdx.x], lane = threadIdx.x & 31;
    int sum = __reduce_add_sync(0xffffffffu, v);
    int mx = __reduce_max_sync(0xffffffffu, v);
    unsigned same = __match_any_sync(0xffffffffu, v);
    int count = __syncthreads_count(v > 0);
    int any = __syncthreads_or(v == 7);
    out[5 * threadIdx.x] = sum;
    out[5 * threadIdx.x + 1] = mx;
    out[5 * threadIdx.x + 2] = (int)same;
    out[5 * threadIdx.x + 3] = count;
    out[5 * threadIdx.x + 4] = any + 2 * lane;
}

extern "C" __global__ void intrinsics(const float* x, float* out, unsigned* bits) {
    int i = threadIdx.x;
    float v = x[i];
    out[4 * i] = rsqrtf(v);
    out[4 * i + 1] = tanhf(v) + __logf(v) + fmaf(v, 2.0f, 1.0f);
    out[4 * i + 2] = min(v, 0.5f) + max(i, 3) + __saturatef(v - 0.25f);
    out[4 * i + 3] = __int_as_float(__float_as_int(v));
    bits[3 * i] = __umulhi(0x80000000u + i, 6u);
    bits[3 * i + 1] = __popc(i) + 100 * __clz(i + 1);
    bits[3 * i + 2] = __brev(i) ^ (unsigned)__mul24(i, -3);
}
"""


@pytest.fixture(scope="module")
def mod():
    return RawModule(code=SAMPLES, filename="harness_samples.cu", name_expressions=["scale<float, 4>",
                                                                                     "scale<double, 1>"])


@pytest.fixture(scope="module")
def threads_mod():
    return RawModule(code=SAMPLES, filename="harness_samples.cu", mode="threads")


rng = np.random.default_rng(0)


@pytest.mark.parametrize("n", [1, 255, 256, 1000, 64 * 256])
def test_elementwise(mod, n):
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    expected = np.float32(2.5) * x + y
    mod.get_function("axpy")(((n + 255) // 256,), (256,), (np.float32(2.5), x, y, np.int64(n)))
    np.testing.assert_allclose(y, expected, rtol=1e-6)


@pytest.mark.parametrize("shape", [(1, 1), (16, 16), (37, 50)])
def test_two_dimensional_grid_and_shared_tile(mod, shape):
    rows, cols = shape
    x = rng.standard_normal(shape).astype(np.float32)
    y = np.zeros((cols, rows), np.float32)
    mod.get_function("transpose")(((cols + 15) // 16, (rows + 15) // 16), (16, 16), (x, y, rows, cols))
    np.testing.assert_array_equal(y, x.T)


def test_block_reduction_with_shared_memory(mod):
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(4, np.float32)
    mod.get_function("block_sum")(4, 256, (x, out, np.int32(n)))
    expected = np.pad(x, (0, 24)).reshape(4, 256).sum(1)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_warp_shuffles_and_votes(mod):
    x = rng.random(128).astype(np.float32)
    x[5] = 0.995
    sums = np.zeros(4, np.float32)
    scan, bcast = np.zeros(128, np.float32), np.zeros(128, np.float32)
    votes = np.zeros(12, np.uint32)
    mod.get_function("warp_ops")(2, 64, (x, sums, scan, bcast, votes))
    w = x.reshape(4, 32)
    np.testing.assert_allclose(sums, w.sum(1), rtol=1e-5)
    np.testing.assert_allclose(scan, np.cumsum(w, axis=1).ravel(), rtol=1e-5)
    np.testing.assert_array_equal(bcast, np.repeat(x.reshape(16, 8)[:, 3], 8))
    ballots = [int(sum(1 << k for k in range(32) if row[k] > 0.5)) for row in w]
    np.testing.assert_array_equal(votes[0::3], ballots)
    np.testing.assert_array_equal(votes[1::3], (w > 0.99).any(1))
    np.testing.assert_array_equal(votes[2::3], [1, 1, 1, 1])


def test_partial_warp_with_correct_masks(mod):
    x = rng.random(40).astype(np.float32)
    out = np.zeros(2, np.float32)
    mod.get_function("partial_warp_sum")(1, 40, (x, out))
    np.testing.assert_allclose(out, [x[:32].sum(), x[32:].sum()], rtol=1e-5)


@pytest.mark.parametrize("cols", [1, 7, 128, 300])
def test_softmax_with_dynamic_shared_memory(mod, cols):
    x = rng.standard_normal((5, cols)).astype(np.float32) * 4
    y = np.zeros_like(x)
    mod.get_function("softmax_rows")(5, 128, (x, y, np.int32(cols)), shared_mem=128 * 4)
    ref = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, ref / ref.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_atomics_histogram(mod):
    n = 3000
    x = rng.integers(-5, 20, n).astype(np.int32)
    counts = np.zeros(25, np.uint32)
    extremes = np.array([-(2**31), 2**31 - 1], np.int32)
    total = np.zeros(1, np.float64)
    shifted = x + 5
    mod.get_function("histogram")((n + 255) // 256, 256, (shifted, counts, extremes, total, n))
    np.testing.assert_array_equal(counts, np.bincount(shifted, minlength=25))
    assert extremes.tolist() == [shifted.max(), shifted.min()]
    assert total[0] == shifted.sum()


def test_atomic_cas_loop(mod):
    x = rng.standard_normal(777).astype(np.float32)
    out = np.array([-np.inf], np.float32)
    mod.get_function("cas_max")(4, 256, (x, out, np.int32(777)))
    assert out[0] == x.max()


def test_half_precision(mod):
    n = 500
    x = (rng.standard_normal(n) * 3).astype(np.float16)
    y = np.zeros_like(x)
    mod.get_function("half_gelu")(2, 256, (x, y, np.int64(n)))
    from math import erf
    ref = np.array([0.5 * v * (1 + erf(v / np.sqrt(2))) for v in x.astype(np.float64)]).astype(np.float16)
    np.testing.assert_allclose(y.astype(np.float32), ref.astype(np.float32), rtol=2e-3, atol=1e-3)
    a, b = rng.standard_normal(64).astype(np.float16), rng.standard_normal(64).astype(np.float16)
    c = np.zeros(64, np.float16)
    mod.get_function("half2_add")(1, 32, (a, b, c, np.int32(32)))
    np.testing.assert_array_equal(c, a + b)


def test_template_kernels_through_name_expressions(mod):
    k = mod.get_function("scale<float, 4>")
    assert k.param_types == ["const float*", "float*", "float", "long long"]
    x = rng.standard_normal(1001).astype(np.float32)
    y = np.zeros_like(x)
    k(1, 256, (x, y, np.float32(3), np.int64(1001)))
    np.testing.assert_allclose(y, 3 * x, rtol=1e-6)
    xd = rng.standard_normal(10)
    yd = np.zeros(10)
    mod.get_function("scale<double, 1>")(1, 32, (xd, yd, 0.5, 10))
    np.testing.assert_array_equal(yd, 0.5 * xd)
    with pytest.raises(LaunchError, match=r"named symbol not found.*name_expressions"):
        mod.get_function("scale<float, 2>")


def test_warp_reductions_matches_and_counting_barriers(mod):
    x = rng.integers(-3, 4, 64).astype(np.int32)
    out = np.zeros(5 * 64, np.int32)
    mod.get_function("warp_misc")(1, 64, (x, out))
    o = out.reshape(64, 5)
    w = x.reshape(2, 32)
    np.testing.assert_array_equal(o[:, 0], np.repeat(w.sum(1), 32))
    np.testing.assert_array_equal(o[:, 1], np.repeat(w.max(1), 32))
    match = [sum(1 << k for k in range(32) if w[t // 32, k] == x[t]) for t in range(64)]
    np.testing.assert_array_equal(o[:, 2].view(np.uint32), match)
    assert (o[:, 3] == (x > 0).sum()).all()
    np.testing.assert_array_equal(o[:, 4], int((x == 7).any()) + 2 * (np.arange(64) % 32))


def test_intrinsics(mod):
    x = np.linspace(0.1, 2.0, 8).astype(np.float32)
    out = np.zeros(32, np.float32)
    bits = np.zeros(24, np.uint32)
    mod.get_function("intrinsics")(1, 8, (x, out, bits))
    o = out.reshape(8, 4)
    np.testing.assert_allclose(o[:, 0], 1 / np.sqrt(x), rtol=1e-6)
    np.testing.assert_allclose(o[:, 1], np.tanh(x) + np.log(x) + (2 * x + 1), rtol=1e-5)
    i = np.arange(8)
    np.testing.assert_allclose(o[:, 2], np.minimum(x, 0.5) + np.maximum(i, 3) + np.clip(x - 0.25, 0, 1), rtol=1e-6)
    np.testing.assert_array_equal(o[:, 3], x)
    b = bits.reshape(8, 3).astype(np.int64)
    np.testing.assert_array_equal(b[:, 0], ((0x80000000 + i) * 6) >> 32)
    clz = np.array([32 - int(v).bit_length() for v in i + 1])
    np.testing.assert_array_equal(b[:, 1], [bin(v).count("1") + 100 * c for v, c in zip(i, clz)])
    brev = np.array([int(f"{v:032b}"[::-1], 2) for v in i])
    np.testing.assert_array_equal(b[:, 2], (brev ^ ((i * -3) & 0xFFFFFFFF)) & 0xFFFFFFFF)


def test_fibers_are_deterministic(mod):
    x = rng.standard_normal(4096).astype(np.float32)
    results = []
    for _ in range(2):
        out = np.zeros(1, np.float64)
        counts, ext = np.zeros(25, np.uint32), np.zeros(2, np.int32)
        xi = (np.abs(x) * 3).astype(np.int32) % 25
        mod.get_function("histogram")(16, 256, (xi, counts, ext, out, np.int64(4096)))
        results.append(out.tobytes() + counts.tobytes())
    assert results[0] == results[1]


@pytest.mark.parametrize("kernel", ["block_sum", "softmax_rows", "warp_ops"])
def test_thread_mode_gives_the_same_results(mod, threads_mod, kernel):
    x = rng.standard_normal(256).astype(np.float32)
    outs = []
    for m in (mod, threads_mod):
        if kernel == "block_sum":
            out = np.zeros(2, np.float32)
            m.get_function(kernel)(2, 128, (x, out, np.int32(256)))
        elif kernel == "softmax_rows":
            out = np.zeros(256, np.float32)
            m.get_function(kernel)(2, 64, (x, out, np.int32(128)), shared_mem=64 * 4)
        else:
            out = np.zeros(256 + 256 + 8 + 24, np.float32)
            m.get_function(kernel)(4, 64, (x, out[:8], out[8:264], out[264:520], out[520:].view(np.uint32)))
        outs.append(out)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6)


# ------------------------------------------------------------------ misuse is an error

MISUSE = r"""
extern "C" __global__ void divergent_barrier(float* x) {
    if (threadIdx.x < 16) __syncthreads();
    x[threadIdx.x] = 1.0f;
}
extern "C" __global__ void early_return_barrier(float* x, int n) {
    if ((int)threadIdx.x >= n) return;
    x[threadIdx.x] = 1.0f;
    __syncthreads();
}
extern "C" __global__ void barrier_in_branches(float* x) {
    if (threadIdx.x % 2) { x[threadIdx.x] = 1.0f; __syncthreads(); }
    else { x[threadIdx.x] = 2.0f; __syncthreads(); }
}
extern "C" __global__ void full_mask_partial_warp(float* x) {
    x[threadIdx.x] = __shfl_down_sync(0xffffffffu, x[threadIdx.x], 1);
}
extern "C" __global__ void mask_names_exited(float* x) {
    if (threadIdx.x >= 16) return;
    x[threadIdx.x] = __shfl_xor_sync(0xffffffffu, x[threadIdx.x], 1);
}
extern "C" __global__ void mask_without_self(float* x) {
    x[threadIdx.x] = __shfl_sync(0x1u, x[threadIdx.x], 0);
}
extern "C" __global__ void deadlock(float* x) {
    if (threadIdx.x == 5) __syncthreads();
    else x[threadIdx.x] = __shfl_sync(0xffffffffu, 1.0f, 0);
}
extern "C" __global__ void unwritten_shared(float* out) {
    __shared__ float buf[64];
    if (threadIdx.x < 32) buf[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = buf[threadIdx.x];
}
extern "C" __global__ void unwritten_dynamic(double* out) {
    extern __shared__ double dyn[];
    out[threadIdx.x] = dyn[threadIdx.x];
}
extern "C" __global__ void dynamic_overrun(float* out) {
    extern __shared__ float s[];
    s[threadIdx.x] = 1.0f;
    out[threadIdx.x] = s[threadIdx.x];
}
extern "C" __global__ void null_write(float* p) { p[threadIdx.x + 1000] = 1.0f; }
extern "C" __global__ void failing_assert(const int* x) { assert(x[threadIdx.x] >= 0); }
extern "C" __global__ void __launch_bounds__(128) bounded(float* x) { x[threadIdx.x] = 1.0f; }
extern "C" __global__ void typed(const float* x, float a, int n, unsigned long long m, __half h) {}
extern "C" __global__ void spin_wait(volatile int* flag) {
    if (threadIdx.x == 0) { while (flag[0] == 0) {} }
    else flag[0] = 1;
}
extern "C" __global__ void syncwarp_exchange(float* x) {
    __shared__ float s[32];
    s[threadIdx.x] = x[threadIdx.x];
    __syncwarp();
    x[threadIdx.x] = s[31 - threadIdx.x];
}
"""


@pytest.fixture(scope="module")
def misuse():
    return RawModule(code='#include <cuda_fp16.h>\n#line 1 "misuse.cu"\n' + MISUSE)


@pytest.fixture(scope="module")
def misuse_threads():
    return RawModule(code='#include <cuda_fp16.h>\n#line 1 "misuse.cu"\n' + MISUSE, mode="threads")


def _line(name):
    return MISUSE[:MISUSE.index(name)].count("\n") + 1


@pytest.mark.parametrize("threads", [32, 40])
def test_divergent_syncthreads(misuse, threads):
    with pytest.raises(LaunchError, match=r"kernel 'divergent_barrier'.*divergent barrier") as e:
        misuse.get_function("divergent_barrier")(1, threads, (np.zeros(threads, np.float32),))
    assert f"misuse.cu:{_line('divergent_barrier') + 1}" in str(e.value)


def test_barrier_after_early_return(misuse):
    with pytest.raises(LaunchError, match=r"exited while .* wait at __syncthreads at misuse.cu"):
        misuse.get_function("early_return_barrier")(1, 64, (np.zeros(64, np.float32), np.int32(50)))
    x = np.zeros(64, np.float32)
    misuse.get_function("early_return_barrier")(1, 64, (x, np.int32(64)))  # every thread reaches it: fine
    assert x.sum() == 64


def test_barriers_at_different_lines(misuse):
    with pytest.raises(LaunchError, match=r"divergent barrier: .* reached __syncthreads at misuse.cu:\d+ while other "
                                          r"threads wait at __syncthreads at misuse.cu:\d+"):
        misuse.get_function("barrier_in_branches")(1, 32, (np.zeros(32, np.float32),))


def test_full_mask_shuffle_in_partial_warp(misuse):
    with pytest.raises(LaunchError, match=r"__shfl_down_sync at misuse.cu:\d+: mask 0xffffffff names lanes that do "
                                          r"not exist.*only 8 thread\(s\) \(a partial warp"):
        misuse.get_function("full_mask_partial_warp")(1, 40, (np.zeros(40, np.float32),))
    x = np.arange(32, dtype=np.float32)
    misuse.get_function("full_mask_partial_warp")(1, 32, (x,))  # full warp: fine
    np.testing.assert_array_equal(x, np.r_[np.arange(1, 32), 31])


def test_mask_naming_exited_threads(misuse):
    with pytest.raises(LaunchError, match=r"(exited while .* waits for it in __shfl_xor_sync|names lane\(s\) "
                                          r"0xffff0000 that have already exited)"):
        misuse.get_function("mask_names_exited")(1, 32, (np.zeros(32, np.float32),))


def test_mask_must_include_the_calling_lane(misuse):
    with pytest.raises(LaunchError, match=r"thread \(1,0,0\) \(lane 1\) calls it with mask 0x00000001"):
        misuse.get_function("mask_without_self")(1, 2, (np.zeros(2, np.float32),))


def test_deadlock_is_reported(misuse):
    with pytest.raises(LaunchError, match=r"deadlock: .*thread \(5,0,0\) waits at __syncthreads.*__shfl_sync"):
        misuse.get_function("deadlock")(1, 32, (np.zeros(32, np.float32),))


def test_unwritten_shared_memory_reads_as_poison(misuse):
    out = np.zeros(64, np.float32)
    misuse.get_function("unwritten_shared")(1, 64, (out,))
    assert (out[:32] == 1).all() and np.isnan(out[32:]).all()
    d = np.zeros(16)
    misuse.get_function("unwritten_dynamic")(1, 16, (d,), shared_mem=16 * 8)
    assert np.isnan(d).all()


def test_dynamic_shared_memory_has_exactly_the_launch_size(misuse):
    out = np.zeros(64, np.float32)
    misuse.get_function("dynamic_overrun")(1, 64, (out,), shared_mem=64 * 4)
    assert (out == 1).all()
    with pytest.raises(LaunchError, match=r"out-of-bounds dynamic shared memory access by thread \(32,0,0\).*"
                                          r"shared_mem=128 bytes"):
        misuse.get_function("dynamic_overrun")(1, 64, (out,), shared_mem=32 * 4)


def test_illegal_address_is_a_launch_error(misuse):
    with pytest.raises(LaunchError, match=r"kernel 'null_write'.*illegal memory access \(SIGSEGV\) by thread "
                                          r"\(0,0,0\)"):
        misuse.get_function("null_write")(1, 4, (None,))
    out = np.zeros(64, np.float32)  # the process is fine afterwards
    misuse.get_function("dynamic_overrun")(1, 64, (out,), shared_mem=64 * 4)
    assert (out == 1).all()


def test_device_assert(misuse):
    misuse.get_function("failing_assert")(1, 4, (np.arange(4, dtype=np.int32),))
    with pytest.raises(LaunchError, match=r"assertion `x\[threadIdx.x\] >= 0` failed at misuse.cu:\d+ in thread "
                                          r"\(2,0,0\)"):
        misuse.get_function("failing_assert")(1, 4, (np.array([0, 1, -1, 2], np.int32),))


@pytest.mark.parametrize("kernel, threads, message", [
    ("divergent_barrier", 32, "divergent barrier"),
    ("full_mask_partial_warp", 40, "names lanes that do not exist"),
    ("deadlock", 32, "deadlock"),
    ("dynamic_overrun", 64, "out-of-bounds dynamic shared memory access"),
])
def test_misuse_in_thread_mode(misuse_threads, kernel, threads, message):
    with pytest.raises(LaunchError, match=f"kernel '{kernel}'.*{message}"):
        misuse_threads.get_function(kernel)(1, threads, (np.zeros(threads, np.float32),), shared_mem=4)


def test_syncwarp(misuse):
    x = np.arange(32, dtype=np.float32)
    misuse.get_function("syncwarp_exchange")(1, 32, (x,))
    np.testing.assert_array_equal(x, np.arange(32)[::-1])


def test_spin_wait_hits_the_watchdog(misuse):
    flag = np.zeros(1, np.int32)
    with pytest.raises(LaunchError, match=r"did not finish within 0.5 s: thread \(0,0,0\) has run since its last "
                                          r"synchronisation"):
        misuse.get_function("spin_wait")(1, 2, (flag,), timeout=0.5)
    flag[0] = 1
    misuse.get_function("spin_wait")(1, 2, (flag,))


def test_scalar_argument_types(misuse):
    k = misuse.get_function("typed")
    x = np.zeros(4, np.float32)
    good = (x, np.float32(1), np.int32(2), np.uint64(3), np.float16(1))
    k(1, 1, good)
    k(1, 1, (x, np.float32(1), 2, 3, np.float16(1)))  # Python ints for integer parameters, like CuPy
    cases = [
        ((x, 1.0, np.int32(2), np.uint64(3), np.float16(1)), r"argument 1 'a' has C\+\+ type float .*got float "
                                                            r"\(CuPy passes a Python float as a float64\)"),
        ((x, np.float64(1), np.int32(2), np.uint64(3), np.float16(1)), r"argument 1 'a' has C\+\+ type float.*"
                                                                       r"numpy.float64"),
        ((x, np.float32(1), np.int64(2), np.uint64(3), np.float16(1)), r"argument 2 'n' has C\+\+ type int "
                                                                       r"\(pass numpy.int32\(...\)\).*numpy.int64"),
        ((x, np.float32(1), 2**31, np.uint64(3), np.float16(1)), r"argument 2 'n'.*does not fit"),
        ((x, np.float32(1), np.int32(2), -3, np.float16(1)), r"argument 3 'm' has C\+\+ type unsigned long long"),
        ((x, np.float32(1), np.int32(2), np.uint64(3), np.float32(1)), r"argument 4 'h' has C\+\+ type __half"),
        ((x.astype(np.float64), np.float32(1), np.int32(2), np.uint64(3), np.float16(1)),
         r"argument 0 'x' has C\+\+ type const float\*, but got numpy.ndarray of dtype float64"),
        ((x, np.float32(1), np.int32(2), np.uint64(3)), r"takes 5 argument\(s\) \(const float\*, float, int, "
                                                        r"unsigned long long, __half\), but 4 were given"),
    ]
    for args, message in cases:
        with pytest.raises(TypeError, match=r"kernel 'typed': " + message):
            k(1, 1, args)


@pytest.mark.parametrize("grid, block, shared_mem, message", [
    (0, 32, 0, "must be positive"),
    (1, 2048, 0, "block dimensions exceed"),
    ((1, 70000), 32, 0, "grid dimensions exceed"),
    (1, 32, 64 * 1024, "exceeds max_dynamic_shared_size_bytes=49152"),
])
def test_invalid_launch_configurations(misuse, grid, block, shared_mem, message):
    with pytest.raises(LaunchError, match=r"CUDA_ERROR_INVALID_VALUE: kernel 'dynamic_overrun'.*" + message):
        misuse.get_function("dynamic_overrun")(grid, block, (np.zeros(2048, np.float32),), shared_mem=shared_mem)


def test_more_dynamic_shared_memory_after_opting_in(misuse):
    k = misuse.get_function("dynamic_overrun")
    k.max_dynamic_shared_size_bytes = 64 * 1024
    out = np.zeros(32, np.float32)
    k(1, 32, (out,), shared_mem=64 * 1024)
    assert (out == 1).all()


def test_launch_bounds(misuse):
    x = np.zeros(256, np.float32)
    misuse.get_function("bounded")(1, 128, (x,))
    with pytest.raises(LaunchError, match=r"256 threads per block exceed the kernel's __launch_bounds__\(128\)"):
        misuse.get_function("bounded")(1, 256, (x,))


def test_compile_error_names_file_and_line():
    src = 'extern "C" __global__ void k(float* x) {\n    x[0] = undefined_name;\n}\n'
    with pytest.raises(CompileError, match=r"broken.cu:2:\d+: error: .undefined_name. was not declared"):
        RawModule(code=src, filename="broken.cu").get_function("k")
    with pytest.raises(CompileError, match=r"kernels/other.cu:2:\d+: error"):
        RawKernel('#line 1 "kernels/other.cu"\n' + src, "k").param_types


def test_compiled_modules_are_cached(mod):
    mod.compile()   # not left to the tests before this one (they may run elsewhere, under pytest-xdist)
    so1, info1 = harness_compiler.build(SAMPLES, filename="harness_samples.cu",
                                        name_expressions=["scale<float, 4>", "scale<double, 1>"])
    assert so1.parent == harness_compiler.cache_dir() and so1.is_file()
    assert so1 == mod._path and info1 == mod._info


# ------------------------------------------------------------------ >2^31 elements

BIG = r"""
extern "C" __global__ void double64(const float* x, float* y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
extern "C" __global__ void double32(const float* x, float* y, long long n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;   // overflows past 2^31
    if (i < n) y[i] = 2.0f * x[i];
}
"""


def test_index_math_beyond_two_to_the_31(mod):
    big = RawModule(code=BIG, filename="big.cu")
    n = 2**31 + 1000
    x, y = virtual_array(n, np.float32), virtual_array(n, np.float32)
    x[:10] = 1
    x[-1000:] = np.arange(1000)
    grid = (n + 255) // 256
    big.get_function("double64")(grid, 256, (x, y, np.int64(n)), blocks=[0, *range(grid - 4, grid)])
    np.testing.assert_array_equal(y[-1000:], 2 * np.arange(1000))
    assert (y[:10] == 2).all() and y[2**30] == 0  # blocks that were not run wrote nothing
    with pytest.raises(LaunchError, match=r"block \(8388611,0,0\): illegal memory access"):
        big.get_function("double32")(grid, 256, (x, y, np.int64(n)), blocks=[grid - 1])
    with pytest.raises(ValueError, match="outside the grid"):
        big.get_function("double64")(grid, 256, (x, y, np.int64(n)), blocks=[grid])


# ------------------------------------------------------------------ sanitizers (in a subprocess)

SANITIZED = r"""
extern "C" __global__ void unchecked_write(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] = 1.0f;
}
extern "C" __global__ void shift_left(const float* x, float* y, int sync) {
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    if (sync) __syncthreads();
    y[threadIdx.x] = s[(threadIdx.x + 1) % 64];
}
extern "C" __global__ void warp_then_block(const float* x, float* y) {
    __shared__ float partial[2];
    float v = x[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) { y[0] = partial[0] + partial[1]; atomicAdd(y + 1, 1.0f); }
}
"""


def _need(sanitizer):
    problem = sanitizer_problem(sanitizer)
    if problem:
        pytest.skip(f"{sanitizer} sanitizer unavailable: {problem}")


def test_address_sanitizer_catches_out_of_bounds_write():
    _need("address")
    k = RawModule(code=SANITIZED, filename="sanitized.cu", sanitizer="address").get_function("unchecked_write")
    x = np.zeros(100, np.float32)
    k(1, 100, (x, np.int32(100)))  # in bounds: no report, results come back
    assert (x == 1).all()
    with pytest.raises(SanitizerError, match=r"AddressSanitizer reported an error in kernel 'unchecked_write'") as e:
        k(1, 128, (np.zeros(100, np.float32), np.int32(100)))
    assert "heap-buffer-overflow" in e.value.report and "sanitized.cu:4" in e.value.report


def test_thread_sanitizer_catches_missing_syncthreads():
    _need("thread")
    m = RawModule(code=SANITIZED, filename="sanitized.cu", sanitizer="thread")
    x, y = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    m.get_function("shift_left")(1, 64, (x, y, np.int32(1)))  # with the barrier: no race
    np.testing.assert_array_equal(y, np.roll(x, -1))
    xs, ys = rng.standard_normal(64).astype(np.float32), np.zeros(2, np.float32)
    m.get_function("warp_then_block")(1, 64, (xs, ys))  # shuffles, barrier and atomics: no race
    np.testing.assert_allclose(ys, [xs.sum(), 1], rtol=1e-5)
    with pytest.raises(SanitizerError, match=r"ThreadSanitizer reported an error in kernel 'shift_left'") as e:
        m.get_function("shift_left")(1, 64, (x, y, np.int32(0)))
    assert "data race" in e.value.report and "sanitized.cu:" in e.value.report
