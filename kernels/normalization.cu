// LayerNorm, RMSNorm and BatchNorm: statistics (Welford, accumulated in A = float for __half and
// float, double for double), normalization with the affine parameters, and gradients.
//
// Row kernels see the input as (rows, cols) with the normalized dims flattened into cols; one
// warp per row for cols <= 32 * ELEMS (the row kept in registers), else one block per row.
// The affine weight and bias are passed in A (the caller converts them, as the generic path
// does), and may be null. mean and rstd are A arrays of one value per row (per channel for
// batch norm): rstd = 1 / sqrt(M2 / n + eps). Output: ((x - mean) * rstd) * weight + bias.
//
// Gradients, with xhat = (x - mean) * rstd and gxhat = g * weight:
//   layer norm  gx = (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)) * rstd
//   rms norm    gx = (gxhat - xhat * mean(gxhat * xhat)) * rstd           (xhat = x * rstd)
//   weight      sum over rows of g * xhat, bias: sum over rows of g (norm_param_grads: partial
//               sums per chunk of rows, added up by the caller).
#include "common.cuh"

using namespace gt;

// ---------------------------------------------------------------- layer norm / rms norm forward
// RMS: no centering (mean is not written; may be null), rstd from mean(x * x).
template <typename T, typename A, bool RMS, int ELEMS>
__global__ void norm_forward_warp(const T* x, const A* weight, const A* bias, T* y, A* mean_out, A* rstd_out,
                                  index_t rows, index_t cols, double eps) {
  const int lane = threadIdx.x & 31;
  const index_t warps_per_block = blockDim.x >> 5;
  for (index_t row = (index_t)blockIdx.x * warps_per_block + (threadIdx.x >> 5); row < rows;
       row += (index_t)gridDim.x * warps_per_block) {
    const index_t base = row * cols;
    A v[ELEMS];
    A n = A(0), mean = A(0), m2 = A(0), sq = A(0);
#pragma unroll
    for (int k = 0; k < ELEMS; ++k) {
      const index_t c = lane + 32 * k;
      v[k] = c < cols ? Num<T>::load(x[base + c]) : A(0);
      if (c < cols) {
        if (RMS) sq += v[k] * v[k];
        else welford_add(n, mean, m2, v[k]);
      }
    }
    A rstd;
    if (RMS) {
      sq = warp_sum(sq);
      rstd = A(1) / m_sqrt(sq / (A)cols + (A)eps);
      mean = A(0);
    } else {
      welford_warp_reduce(n, mean, m2);
      rstd = A(1) / m_sqrt(m2 / (A)cols + (A)eps);
    }
#pragma unroll
    for (int k = 0; k < ELEMS; ++k) {
      const index_t c = lane + 32 * k;
      if (c < cols) {
        A r = (v[k] - mean) * rstd;
        if (weight != nullptr) r = r * weight[c];
        if (bias != nullptr) r = r + bias[c];
        y[base + c] = Num<T>::store(r);
      }
    }
    if (lane == 0) {
      if (mean_out != nullptr) mean_out[row] = mean;
      rstd_out[row] = rstd;
    }
  }
}

template <typename T, typename A, bool RMS>
__global__ void norm_forward_block(const T* x, const A* weight, const A* bias, T* y, A* mean_out, A* rstd_out,
                                   index_t rows, index_t cols, double eps) {
  __shared__ A scratch[99];
  for (index_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const index_t base = row * cols;
    A n = A(0), mean = A(0), m2 = A(0), sq = A(0);
    for (index_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const A v = Num<T>::load(x[base + c]);
      if (RMS) sq += v * v;
      else welford_add(n, mean, m2, v);
    }
    A rstd;
    if (RMS) {
      sq = block_sum(sq, scratch);
      rstd = A(1) / m_sqrt(sq / (A)cols + (A)eps);
      mean = A(0);
    } else {
      welford_block_reduce(n, mean, m2, scratch);
      rstd = A(1) / m_sqrt(m2 / (A)cols + (A)eps);
    }
    for (index_t c = threadIdx.x; c < cols; c += blockDim.x) {
      A r = (Num<T>::load(x[base + c]) - mean) * rstd;
      if (weight != nullptr) r = r * weight[c];
      if (bias != nullptr) r = r + bias[c];
      y[base + c] = Num<T>::store(r);
    }
    if (threadIdx.x == 0) {
      if (mean_out != nullptr) mean_out[row] = mean;
      rstd_out[row] = rstd;
    }
  }
}

// ---------------------------------------------------------------- layer norm / rms norm backward
template <typename T, typename A, bool RMS, int ELEMS>
__global__ void norm_backward_warp(const T* grad, const T* x, const A* mean_in, const A* rstd_in, const A* weight,
                                   T* gx, index_t rows, index_t cols) {
  const int lane = threadIdx.x & 31;
  const index_t warps_per_block = blockDim.x >> 5;
  for (index_t row = (index_t)blockIdx.x * warps_per_block + (threadIdx.x >> 5); row < rows;
       row += (index_t)gridDim.x * warps_per_block) {
    const index_t base = row * cols;
    const A mean = RMS ? A(0) : mean_in[row], rstd = rstd_in[row];
    A gh[ELEMS], xh[ELEMS];
    A sum_g = A(0), sum_gx = A(0);
#pragma unroll
    for (int k = 0; k < ELEMS; ++k) {
      const index_t c = lane + 32 * k;
      gh[k] = A(0);
      xh[k] = A(0);
      if (c < cols) {
        gh[k] = Num<T>::load(grad[base + c]);
        if (weight != nullptr) gh[k] = gh[k] * weight[c];
        xh[k] = (Num<T>::load(x[base + c]) - mean) * rstd;
        sum_g += gh[k];
        sum_gx += gh[k] * xh[k];
      }
    }
    sum_gx = warp_sum(sum_gx);
    const A mean_gx = sum_gx / (A)cols;
    const A mean_g = RMS ? A(0) : warp_sum(sum_g) / (A)cols;
#pragma unroll
    for (int k = 0; k < ELEMS; ++k) {
      const index_t c = lane + 32 * k;
      if (c < cols) {
        const A r = RMS ? (gh[k] - xh[k] * mean_gx) * rstd : (gh[k] - mean_g - xh[k] * mean_gx) * rstd;
        gx[base + c] = Num<T>::store(r);
      }
    }
  }
}

template <typename T, typename A, bool RMS>
__global__ void norm_backward_block(const T* grad, const T* x, const A* mean_in, const A* rstd_in, const A* weight,
                                    T* gx, index_t rows, index_t cols) {
  __shared__ A scratch[33];
  for (index_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const index_t base = row * cols;
    const A mean = RMS ? A(0) : mean_in[row], rstd = rstd_in[row];
    A sum_g = A(0), sum_gx = A(0);
    for (index_t c = threadIdx.x; c < cols; c += blockDim.x) {
      A gh = Num<T>::load(grad[base + c]);
      if (weight != nullptr) gh = gh * weight[c];
      sum_g += gh;
      sum_gx += gh * ((Num<T>::load(x[base + c]) - mean) * rstd);
    }
    const A mean_gx = block_sum(sum_gx, scratch) / (A)cols;
    const A mean_g = RMS ? A(0) : block_sum(sum_g, scratch) / (A)cols;
    for (index_t c = threadIdx.x; c < cols; c += blockDim.x) {
      A gh = Num<T>::load(grad[base + c]);
      if (weight != nullptr) gh = gh * weight[c];
      const A xh = (Num<T>::load(x[base + c]) - mean) * rstd;
      const A r = RMS ? (gh - xh * mean_gx) * rstd : (gh - mean_g - xh * mean_gx) * rstd;
      gx[base + c] = Num<T>::store(r);
    }
  }
}

// Partial column sums of g * xhat (into gw_partial) and g (into gb_partial, may be null) over a
// chunk of rows: block b handles column tile b % tiles (32 columns) and row chunk b / tiles;
// warp w of the block sums rows chunk_start + w, + warps, ...; results land in row `chunk` of
// the (chunks, cols) partial arrays.
template <typename T, typename A, bool RMS>
__global__ void norm_param_grads(const T* grad, const T* x, const A* mean_in, const A* rstd_in, A* gw_partial,
                                 A* gb_partial, index_t rows, index_t cols, index_t rows_per_chunk) {
  __shared__ A sw[32][33];
  __shared__ A sb[32][33];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const index_t tiles = (cols + 31) / 32;
  const index_t tile = blockIdx.x % tiles, chunk = blockIdx.x / tiles;
  const index_t col = tile * 32 + lane;
  const index_t start = chunk * rows_per_chunk;
  index_t stop = start + rows_per_chunk;
  if (stop > rows) stop = rows;
  A acc_w = A(0), acc_b = A(0);
  if (col < cols) {
    for (index_t r = start + warp; r < stop; r += warps) {
      const A g = Num<T>::load(grad[r * cols + col]);
      const A mean = RMS ? A(0) : mean_in[r];
      acc_w += g * ((Num<T>::load(x[r * cols + col]) - mean) * rstd_in[r]);
      acc_b += g;
    }
  }
  sw[warp][lane] = acc_w;
  sb[warp][lane] = acc_b;
  __syncthreads();
  if (warp == 0 && col < cols) {
    A tw = A(0), tb = A(0);
    for (int w = 0; w < warps; ++w) {
      tw += sw[w][lane];
      tb += sb[w][lane];
    }
    gw_partial[chunk * cols + col] = tw;
    if (gb_partial != nullptr) gb_partial[chunk * cols + col] = tb;
  }
}

// ---------------------------------------------------------------- batch norm
// The input is (N, C, inner); channel c's values are x[n * C * inner + c * inner + i].
// One block per channel (grid-stride over channels): count, mean and M2 (sum of squared
// deviations) of the channel's N * inner values.
template <typename T, typename A>
__global__ void batch_norm_stats(const T* x, A* mean_out, A* m2_out, index_t batch, index_t channels,
                                 index_t inner) {
  __shared__ A scratch[99];
  const index_t count = batch * inner;
  for (index_t c = blockIdx.x; c < channels; c += gridDim.x) {
    A n = A(0), mean = A(0), m2 = A(0);
    for (index_t k = threadIdx.x; k < count; k += blockDim.x) {
      const index_t b = k / inner, i = k - b * inner;
      welford_add(n, mean, m2, (A)Num<T>::load(x[(b * channels + c) * inner + i]));
    }
    welford_block_reduce(n, mean, m2, scratch);
    if (threadIdx.x == 0) {
      mean_out[c] = mean;
      m2_out[c] = m2;
    }
  }
}

// y = ((x - mean[c]) * rstd[c]) * weight[c] + bias[c] over (N, C, inner); weight/bias may be null.
template <typename T, typename A>
__global__ void channel_affine(const T* x, const A* mean, const A* rstd, const A* weight, const A* bias, T* y,
                               index_t total, index_t channels, index_t inner) {
  GT_GRID_LOOP(idx, total) {
    const index_t c = (idx / inner) % channels;
    A r = ((A)Num<T>::load(x[idx]) - mean[c]) * rstd[c];
    if (weight != nullptr) r = r * weight[c];
    if (bias != nullptr) r = r + bias[c];
    y[idx] = Num<T>::store(r);
  }
}

// Per channel: sum of g and of g * xhat (block per channel).
template <typename T, typename A>
__global__ void batch_norm_backward_reduce(const T* grad, const T* x, const A* mean, const A* rstd, A* sum_g,
                                           A* sum_gxhat, index_t batch, index_t channels, index_t inner) {
  __shared__ A scratch[33];
  const index_t count = batch * inner;
  for (index_t c = blockIdx.x; c < channels; c += gridDim.x) {
    A sg = A(0), sgx = A(0);
    const A mu = mean[c], rs = rstd[c];
    for (index_t k = threadIdx.x; k < count; k += blockDim.x) {
      const index_t b = k / inner, i = k - b * inner;
      const index_t at = (b * channels + c) * inner + i;
      const A g = Num<T>::load(grad[at]);
      sg += g;
      sgx += g * (((A)Num<T>::load(x[at]) - mu) * rs);
    }
    sg = block_sum(sg, scratch);
    sgx = block_sum(sgx, scratch);
    if (threadIdx.x == 0) {
      sum_g[c] = sg;
      sum_gxhat[c] = sgx;
    }
  }
}

// Training-mode input gradient: gx = (w*g - w*sum_g/n - xhat * w*sum_gxhat/n) * rstd.
template <typename T, typename A>
__global__ void batch_norm_backward_apply(const T* grad, const T* x, const A* mean, const A* rstd, const A* weight,
                                          const A* sum_g, const A* sum_gxhat, T* gx, index_t total, index_t channels,
                                          index_t inner, double count) {
  GT_GRID_LOOP(idx, total) {
    const index_t c = (idx / inner) % channels;
    const A w = weight != nullptr ? weight[c] : A(1);
    const A xh = ((A)Num<T>::load(x[idx]) - mean[c]) * rstd[c];
    const A gh = (A)Num<T>::load(grad[idx]) * w;
    const A mean_g = sum_g[c] * w / (A)count;
    const A mean_gx = sum_gxhat[c] * w / (A)count;
    gx[idx] = Num<T>::store((gh - mean_g - xh * mean_gx) * rstd[c]);
  }
}
