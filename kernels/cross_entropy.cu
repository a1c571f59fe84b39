// Fused cross entropy with class-index targets: log-softmax, the target's log-probability and the
// label-smoothing sum in one read of the logits, and the gradient in one elementwise pass.
//
// The logits are viewed as (outer, C, inner) (class axis in the middle; inner == 1 for (N, C));
// "row" r = o * inner + i is one sample position. Targets are the *safe* targets (ignored ones
// already replaced by class 0 on the host side, which also checked the range).
//
// Forward, per row: logp = (x - max) - log(sum(exp(x - max))) (written when `logp` is not null),
// picked[r] = logp[target[r]], smooth[r] = sum_c weight[c] * logp[c] (weight 1 when null), each
// log-probability rounded to T first, as the generic path rounds its log-probability tensor.
// The reductions over rows (ignore mask, class weights, mean) are done by the caller on these
// per-row values.
//
// Backward: gx = exp(logp) * a[r] - (c == target[r] ? b[r] : 0) - s[r] * (weight ? weight[c] : 1),
// the per-row coefficients a, b, s (rowsum, one-hot and smoothing terms, already scaled by the
// reduction and the output gradient) computed by the caller.
#include "common.cuh"

using namespace gt;

template <typename T, int ELEMS>
__global__ void cross_entropy_forward_warp(const T* x, const long long* target, const T* weight, T* logp,
                                           T* picked, T* smooth, index_t rows, index_t cols) {
  typedef typename Num<T>::acc A;
  const int lane = threadIdx.x & 31;
  const index_t warps_per_block = blockDim.x >> 5;
  for (index_t row = (index_t)blockIdx.x * warps_per_block + (threadIdx.x >> 5); row < rows;
       row += (index_t)gridDim.x * warps_per_block) {
    const T* xr = x + row * cols;
    A v[ELEMS];
    A m = neg_inf<A>(), s = A(0);
#pragma unroll
    for (int k = 0; k < ELEMS; ++k) {
      const index_t c = lane + 32 * k;
      v[k] = c < cols ? Num<T>::load(xr[c]) : neg_inf<A>();
      ms_add(m, s, v[k]);
    }
    ms_warp_reduce(m, s);
    softmax_finish(m, s);
    const A log_sum = m_log(s);
    const long long t = target[row];
    A mine = A(0), smooth_sum = A(0);
#pragma unroll
    for (int k = 0; k < ELEMS; ++k) {
      const index_t c = lane + 32 * k;
      if (c < cols) {
        const T lp = Num<T>::store((v[k] - m) - log_sum);
        if (logp != nullptr) logp[row * cols + c] = lp;
        const A lpa = Num<T>::load(lp);
        if (c == t) mine = lpa;
        smooth_sum += weight != nullptr ? Num<T>::load(weight[c]) * lpa : lpa;
      }
    }
    mine = warp_sum(mine);  // only the lane holding the target contributed
    smooth_sum = warp_sum(smooth_sum);
    if (lane == 0) {
      picked[row] = Num<T>::store(mine);
      smooth[row] = Num<T>::store(smooth_sum);
    }
  }
}

template <typename T>
__global__ void cross_entropy_forward_block(const T* x, const long long* target, const T* weight, T* logp,
                                            T* picked, T* smooth, index_t rows, index_t cols) {
  typedef typename Num<T>::acc A;
  __shared__ A scratch[66];
  for (index_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    A m = neg_inf<A>(), s = A(0);
    for (index_t c = threadIdx.x; c < cols; c += blockDim.x) ms_add(m, s, Num<T>::load(xr[c]));
    ms_block_reduce(m, s, scratch);
    softmax_finish(m, s);
    const A log_sum = m_log(s);
    const long long t = target[row];
    A mine = A(0), smooth_sum = A(0);
    for (index_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const T lp = Num<T>::store((Num<T>::load(xr[c]) - m) - log_sum);
      if (logp != nullptr) logp[row * cols + c] = lp;
      const A lpa = Num<T>::load(lp);
      if (c == t) mine = lpa;
      smooth_sum += weight != nullptr ? Num<T>::load(weight[c]) * lpa : lpa;
    }
    mine = block_sum(mine, scratch);
    smooth_sum = block_sum(smooth_sum, scratch);
    if (threadIdx.x == 0) {
      picked[row] = Num<T>::store(mine);
      smooth[row] = Num<T>::store(smooth_sum);
    }
  }
}

template <typename T>
__global__ void cross_entropy_forward_strided(const T* x, const long long* target, const T* weight, T* logp,
                                              T* picked, T* smooth, index_t outer, index_t dim, index_t inner) {
  typedef typename Num<T>::acc A;
  GT_GRID_LOOP(row, outer * inner) {
    const index_t o = row / inner, i = row - o * inner;
    const index_t base = o * dim * inner + i;
    A m = neg_inf<A>(), s = A(0);
    for (index_t c = 0; c < dim; ++c) ms_add(m, s, Num<T>::load(x[base + c * inner]));
    softmax_finish(m, s);
    const A log_sum = m_log(s);
    const long long t = target[row];
    A mine = A(0), smooth_sum = A(0);
    for (index_t c = 0; c < dim; ++c) {
      const T lp = Num<T>::store((Num<T>::load(x[base + c * inner]) - m) - log_sum);
      if (logp != nullptr) logp[base + c * inner] = lp;
      const A lpa = Num<T>::load(lp);
      if (c == t) mine = lpa;
      smooth_sum += weight != nullptr ? Num<T>::load(weight[c]) * lpa : lpa;
    }
    picked[row] = Num<T>::store(mine);
    smooth[row] = Num<T>::store(smooth_sum);
  }
}

// A: the coefficients' type (float for float and __half, double for double).
template <typename T, typename A>
__global__ void cross_entropy_backward(const T* logp, const long long* target, const T* weight, const A* a,
                                       const A* b, const A* s, T* gx, index_t outer, index_t dim, index_t inner) {
  GT_GRID_LOOP(idx, outer * dim * inner) {
    const index_t o = idx / (dim * inner);
    const index_t rest = idx - o * dim * inner;
    const index_t c = rest / inner, i = rest - c * inner;
    const index_t row = o * inner + i;
    A g = m_exp((A)Num<T>::load(logp[idx])) * a[row];
    if (c == target[row]) g -= b[row];
    if (s != nullptr) g -= s[row] * (weight != nullptr ? (A)Num<T>::load(weight[c]) : A(1));
    gx[idx] = Num<T>::store(g);
  }
}
