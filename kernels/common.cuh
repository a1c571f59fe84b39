// Shared helpers of the gputorch kernels (included by every kernels/*.cu file).
//
// - index_t: 64-bit signed index; every offset into a tensor is computed in it, so that
//   tensors with more than 2^31 elements are addressed correctly.
// - Num<T>: the accumulation type of a storage type (float for float and __half, double for
//   double) with load/store conversions and round() (the value rounded to T and back, for the
//   kernels that must reproduce the generic path's per-operation rounding).
// - Math wrappers overloaded on float/double (m_exp, m_log, ...), infinities, a NaN-propagating
//   maximum, warp and block reductions (sums and the (max, sum of exponentials) pairs of an
//   online softmax), Welford mean/M2 merging.
//
// Every kernel is launched with blockDim.x a multiple of 32 (whole warps), so full-mask warp
// shuffles are always legal.
#pragma once
#include <cuda_fp16.h>

namespace gt {

typedef long long index_t;

#define GT_FULL_MASK 0xffffffffu

// Grid-stride loop over [0, n): i is 64-bit, so neither i nor the stride overflows.
#define GT_GRID_LOOP(i, n)                                                              \
  for (::gt::index_t i = (::gt::index_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
       i += (::gt::index_t)blockDim.x * gridDim.x)

// ---------------------------------------------------------------- storage and accumulation types
template <typename T> struct Num;

template <> struct Num<float> {
  typedef float acc;
  static __device__ __forceinline__ float load(float v) { return v; }
  static __device__ __forceinline__ float store(float v) { return v; }
  static __device__ __forceinline__ float round(float v) { return v; }
};

template <> struct Num<double> {
  typedef double acc;
  static __device__ __forceinline__ double load(double v) { return v; }
  static __device__ __forceinline__ double store(double v) { return v; }
  static __device__ __forceinline__ double round(double v) { return v; }
};

template <> struct Num<__half> {
  typedef float acc;
  static __device__ __forceinline__ float load(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half store(float v) { return __float2half(v); }
  static __device__ __forceinline__ float round(float v) { return __half2float(__float2half(v)); }
};

// ---------------------------------------------------------------- math on float and double
__device__ __forceinline__ float m_exp(float x) { return expf(x); }
__device__ __forceinline__ double m_exp(double x) { return exp(x); }
__device__ __forceinline__ float m_log(float x) { return logf(x); }
__device__ __forceinline__ double m_log(double x) { return log(x); }
__device__ __forceinline__ float m_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double m_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float m_erf(float x) { return erff(x); }
__device__ __forceinline__ double m_erf(double x) { return erf(x); }
__device__ __forceinline__ float m_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double m_sqrt(double x) { return sqrt(x); }

template <typename A> __device__ __forceinline__ A pos_inf();
template <> __device__ __forceinline__ float pos_inf<float>() {
  union { unsigned int u; float f; } v;
  v.u = 0x7f800000u;
  return v.f;
}
template <> __device__ __forceinline__ double pos_inf<double>() {
  union { unsigned long long u; double f; } v;
  v.u = 0x7ff0000000000000ull;
  return v.f;
}
template <typename A> __device__ __forceinline__ A neg_inf() { return -pos_inf<A>(); }

template <typename A> __device__ __forceinline__ bool is_nan(A x) { return x != x; }

// max(a, b) that returns NaN when either is NaN (like numpy.maximum).
template <typename A> __device__ __forceinline__ A nan_max(A a, A b) {
  return (a != a || a > b) ? a : b;
}

// ---------------------------------------------------------------- warp and block sums
template <typename A> __device__ __forceinline__ A warp_sum(A v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(GT_FULL_MASK, v, offset);
  return __shfl_sync(GT_FULL_MASK, v, 0);  // every lane gets lane 0's total
}

// Sum over the block; `scratch` is __shared__ storage of at least 33 elements. Every thread of
// the block must call it; all get the total.
template <typename A> __device__ __forceinline__ A block_sum(A v, A* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_sum(v);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    A w = lane < warps ? scratch[lane] : A(0);
    w = warp_sum(w);
    if (lane == 0) scratch[32] = w;
  }
  __syncthreads();
  return scratch[32];
}

// ---------------------------------------------------------------- online softmax pairs
// (m, s): the running maximum and the sum of exp(x - m) of the values seen so far. -inf values
// contribute nothing; a NaN makes the pair NaN; +inf is fixed up by softmax_finish (the generic
// path gives NaN for a row holding +inf, since inf - inf is NaN).
template <typename A> __device__ __forceinline__ void ms_merge(A& m, A& s, A m2, A s2) {
  if (m2 != m2 || m != m) {
    m = m2 + m;
    s = m;
  } else if (m2 > m) {
    s = s * m_exp(m - m2) + s2;
    m = m2;
  } else if (m2 != neg_inf<A>()) {
    s += s2 * m_exp(m2 - m);
  }
}

template <typename A> __device__ __forceinline__ void ms_add(A& m, A& s, A x) {
  if (x != neg_inf<A>()) ms_merge(m, s, x, A(1));
}

template <typename A> __device__ __forceinline__ void ms_warp_reduce(A& m, A& s) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    A m2 = __shfl_down_sync(GT_FULL_MASK, m, offset);
    A s2 = __shfl_down_sync(GT_FULL_MASK, s, offset);
    ms_merge(m, s, m2, s2);
  }
  m = __shfl_sync(GT_FULL_MASK, m, 0);
  s = __shfl_sync(GT_FULL_MASK, s, 0);
}

// Block-wide (m, s); `scratch` is __shared__ storage of at least 66 elements.
template <typename A> __device__ __forceinline__ void ms_block_reduce(A& m, A& s, A* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  ms_warp_reduce(m, s);
  __syncthreads();
  if (lane == 0) {
    scratch[warp] = m;
    scratch[33 + warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    A wm = lane < warps ? scratch[lane] : neg_inf<A>();
    A ws = lane < warps ? scratch[33 + lane] : A(0);
    ms_warp_reduce(wm, ws);
    if (lane == 0) {
      scratch[32] = wm;
      scratch[65] = ws;
    }
  }
  __syncthreads();
  m = scratch[32];
  s = scratch[65];
}

// A row holding +inf is all NaN in the generic path: make its sum NaN.
template <typename A> __device__ __forceinline__ void softmax_finish(A m, A& s) {
  if (m == pos_inf<A>()) s = m - m;
}

// ---------------------------------------------------------------- Welford mean / M2
// (n, mean, m2): count, mean and sum of squared deviations of the values seen so far.
template <typename A> __device__ __forceinline__ void welford_add(A& n, A& mean, A& m2, A x) {
  n += A(1);
  A delta = x - mean;
  mean += delta / n;
  m2 += delta * (x - mean);
}

template <typename A>
__device__ __forceinline__ void welford_merge(A& n, A& mean, A& m2, A n2, A mean2, A m22) {
  A total = n + n2;
  if (n2 == A(0)) return;
  if (n == A(0)) {
    n = n2;
    mean = mean2;
    m2 = m22;
    return;
  }
  A delta = mean2 - mean;
  A frac = n2 / total;
  mean += delta * frac;
  m2 += m22 + delta * delta * n * frac;
  n = total;
}

template <typename A> __device__ __forceinline__ void welford_warp_reduce(A& n, A& mean, A& m2) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    A n2 = __shfl_down_sync(GT_FULL_MASK, n, offset);
    A mean2 = __shfl_down_sync(GT_FULL_MASK, mean, offset);
    A m22 = __shfl_down_sync(GT_FULL_MASK, m2, offset);
    welford_merge(n, mean, m2, n2, mean2, m22);
  }
  n = __shfl_sync(GT_FULL_MASK, n, 0);
  mean = __shfl_sync(GT_FULL_MASK, mean, 0);
  m2 = __shfl_sync(GT_FULL_MASK, m2, 0);
}

// Block-wide Welford; `scratch` is __shared__ storage of at least 99 elements.
template <typename A> __device__ __forceinline__ void welford_block_reduce(A& n, A& mean, A& m2, A* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  welford_warp_reduce(n, mean, m2);
  __syncthreads();
  if (lane == 0) {
    scratch[warp] = n;
    scratch[33 + warp] = mean;
    scratch[66 + warp] = m2;
  }
  __syncthreads();
  if (warp == 0) {
    A wn = lane < warps ? scratch[lane] : A(0);
    A wmean = lane < warps ? scratch[33 + lane] : A(0);
    A wm2 = lane < warps ? scratch[66 + lane] : A(0);
    welford_warp_reduce(wn, wmean, wm2);
    if (lane == 0) {
      scratch[32] = wn;
      scratch[65] = wmean;
      scratch[98] = wm2;
    }
  }
  __syncthreads();
  n = scratch[32];
  mean = scratch[65];
  m2 = scratch[98];
}

}  // namespace gt
