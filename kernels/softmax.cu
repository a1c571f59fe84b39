// Softmax and log-softmax along one dim, forward and backward.
//
// Three layouts of a tensor viewed as (outer, dim, inner):
// - *_warp:    inner == 1 and dim <= 32 * ELEMS (ELEMS <= 32, so rows up to 1024): one warp per
//              row, the row held in registers (ELEMS values per lane) and read once.
// - *_block:   inner == 1, longer rows: one block per row, two passes over global memory.
// - *_strided: inner > 1: one thread per (outer, inner) position, walking dim with stride inner
//              (consecutive threads read consecutive addresses).
// Statistics are an online (max, sum of exp(x - max)) pair in the accumulation type (float for
// __half). softmax = exp(x - max) * (1 / sum); log_softmax = (x - max) - log(sum), as in the
// generic path. Backward: softmax gx = y * (g - sum(g * y)); log_softmax gx = g - exp(y) * sum(g).
#include "common.cuh"

using namespace gt;

// ---------------------------------------------------------------- forward
template <typename T, bool LOG, int ELEMS>
__global__ void softmax_forward_warp(const T* x, T* y, index_t rows, index_t cols) {
  typedef typename Num<T>::acc A;
  const int lane = threadIdx.x & 31;
  const index_t warps_per_block = blockDim.x >> 5;
  for (index_t row = (index_t)blockIdx.x * warps_per_block + (threadIdx.x >> 5); row < rows;
       row += (index_t)gridDim.x * warps_per_block) {
    const T* xr = x + row * cols;
    T* yr = y + row * cols;
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
    const A log_sum = m_log(s), inv_sum = A(1) / s;
#pragma unroll
    for (int k = 0; k < ELEMS; ++k) {
      const index_t c = lane + 32 * k;
      if (c < cols) yr[c] = Num<T>::store(LOG ? (v[k] - m) - log_sum : m_exp(v[k] - m) * inv_sum);
    }
  }
}

template <typename T, bool LOG>
__global__ void softmax_forward_block(const T* x, T* y, index_t rows, index_t cols) {
  typedef typename Num<T>::acc A;
  __shared__ A scratch[66];
  for (index_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    T* yr = y + row * cols;
    A m = neg_inf<A>(), s = A(0);
    for (index_t c = threadIdx.x; c < cols; c += blockDim.x) ms_add(m, s, Num<T>::load(xr[c]));
    ms_block_reduce(m, s, scratch);
    softmax_finish(m, s);
    const A log_sum = m_log(s), inv_sum = A(1) / s;
    for (index_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const A v = Num<T>::load(xr[c]);
      yr[c] = Num<T>::store(LOG ? (v - m) - log_sum : m_exp(v - m) * inv_sum);
    }
  }
}

template <typename T, bool LOG>
__global__ void softmax_forward_strided(const T* x, T* y, index_t outer, index_t dim, index_t inner) {
  typedef typename Num<T>::acc A;
  GT_GRID_LOOP(pos, outer * inner) {
    const index_t o = pos / inner, i = pos - o * inner;
    const T* xr = x + o * dim * inner + i;
    T* yr = y + o * dim * inner + i;
    A m = neg_inf<A>(), s = A(0);
    for (index_t c = 0; c < dim; ++c) ms_add(m, s, Num<T>::load(xr[c * inner]));
    softmax_finish(m, s);
    const A log_sum = m_log(s), inv_sum = A(1) / s;
    for (index_t c = 0; c < dim; ++c) {
      const A v = Num<T>::load(xr[c * inner]);
      yr[c * inner] = Num<T>::store(LOG ? (v - m) - log_sum : m_exp(v - m) * inv_sum);
    }
  }
}

// ---------------------------------------------------------------- backward
// The per-row sum: softmax sum(g * y), log_softmax sum(g).
template <bool LOG, typename A> __device__ __forceinline__ A softmax_grad_term(A g, A v) {
  return LOG ? g : g * v;
}

template <bool LOG, typename A> __device__ __forceinline__ A softmax_grad(A g, A v, A total) {
  return LOG ? g - m_exp(v) * total : v * (g - total);
}

template <typename T, bool LOG, int ELEMS>
__global__ void softmax_backward_warp(const T* grad, const T* y, T* gx, index_t rows, index_t cols) {
  typedef typename Num<T>::acc A;
  const int lane = threadIdx.x & 31;
  const index_t warps_per_block = blockDim.x >> 5;
  for (index_t row = (index_t)blockIdx.x * warps_per_block + (threadIdx.x >> 5); row < rows;
       row += (index_t)gridDim.x * warps_per_block) {
    const index_t base = row * cols;
    A g[ELEMS], v[ELEMS];
    A total = A(0);
#pragma unroll
    for (int k = 0; k < ELEMS; ++k) {
      const index_t c = lane + 32 * k;
      g[k] = c < cols ? Num<T>::load(grad[base + c]) : A(0);
      v[k] = c < cols ? Num<T>::load(y[base + c]) : A(0);
      total += softmax_grad_term<LOG>(g[k], v[k]);
    }
    total = warp_sum(total);
#pragma unroll
    for (int k = 0; k < ELEMS; ++k) {
      const index_t c = lane + 32 * k;
      if (c < cols) gx[base + c] = Num<T>::store(softmax_grad<LOG>(g[k], v[k], total));
    }
  }
}

template <typename T, bool LOG>
__global__ void softmax_backward_block(const T* grad, const T* y, T* gx, index_t rows, index_t cols) {
  typedef typename Num<T>::acc A;
  __shared__ A scratch[33];
  for (index_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const index_t base = row * cols;
    A total = A(0);
    for (index_t c = threadIdx.x; c < cols; c += blockDim.x)
      total += softmax_grad_term<LOG>(Num<T>::load(grad[base + c]), Num<T>::load(y[base + c]));
    total = block_sum(total, scratch);
    for (index_t c = threadIdx.x; c < cols; c += blockDim.x)
      gx[base + c] = Num<T>::store(
          softmax_grad<LOG>(Num<T>::load(grad[base + c]), Num<T>::load(y[base + c]), total));
  }
}

template <typename T, bool LOG>
__global__ void softmax_backward_strided(const T* grad, const T* y, T* gx, index_t outer, index_t dim,
                                         index_t inner) {
  typedef typename Num<T>::acc A;
  GT_GRID_LOOP(pos, outer * inner) {
    const index_t o = pos / inner, i = pos - o * inner;
    const index_t base = o * dim * inner + i;
    A total = A(0);
    for (index_t c = 0; c < dim; ++c)
      total += softmax_grad_term<LOG>(Num<T>::load(grad[base + c * inner]), Num<T>::load(y[base + c * inner]));
    for (index_t c = 0; c < dim; ++c) {
      const index_t at = base + c * inner;
      gx[at] = Num<T>::store(softmax_grad<LOG>(Num<T>::load(grad[at]), Num<T>::load(y[at]), total));
    }
  }
}
