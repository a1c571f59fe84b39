// Reductions where a chain of array-library calls would be slow.
//
// multi_tensor_sum_squares: the sum of squares of every tensor of a list in one launch (for
// clip_grad_norm_ and get_total_norm), with the pointer/size/chunk tables of optimizers.cu
// (K = 1 address per tensor). Each block reduces one chunk in A (float for __half and float,
// double for double) and adds its partial sum into out[tensor] atomically; out must be zeroed.
//
// column_sums: partial sums over chunks of rows of a (rows, cols) matrix (e.g. the bias gradient
// of a linear layer): block b handles the 32-column tile b % tiles and the row chunk b / tiles,
// writing row `chunk` of the (chunks, cols) A-typed partial array; the caller adds the chunks.
#include "common.cuh"

using namespace gt;

template <typename T, typename A>
__global__ void multi_tensor_sum_squares(const unsigned long long* ptrs, const long long* sizes,
                                         const int* chunk_tensor, const long long* chunk_start, index_t chunk_size,
                                         A* out) {
  __shared__ A scratch[33];
  const int t = chunk_tensor[blockIdx.x];
  const T* x = reinterpret_cast<const T*>(ptrs[t]);
  const index_t start = chunk_start[blockIdx.x];
  index_t stop = start + chunk_size;
  if (stop > sizes[t]) stop = sizes[t];
  A acc = A(0);
  for (index_t i = start + threadIdx.x; i < stop; i += blockDim.x) {
    const A v = Num<T>::load(x[i]);
    acc += v * v;
  }
  acc = block_sum(acc, scratch);
  if (threadIdx.x == 0) atomicAdd(out + t, acc);
}

template <typename T, typename A>
__global__ void column_sums(const T* x, A* partial, index_t rows, index_t cols, index_t rows_per_chunk) {
  __shared__ A part[32][33];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const index_t tiles = (cols + 31) / 32;
  const index_t tile = blockIdx.x % tiles, chunk = blockIdx.x / tiles;
  const index_t col = tile * 32 + lane;
  const index_t start = chunk * rows_per_chunk;
  index_t stop = start + rows_per_chunk;
  if (stop > rows) stop = rows;
  A acc = A(0);
  if (col < cols)
    for (index_t r = start + warp; r < stop; r += warps) acc += Num<T>::load(x[r * cols + col]);
  part[warp][lane] = acc;
  __syncthreads();
  if (warp == 0 && col < cols) {
    A total = A(0);
    for (int w = 0; w < warps; ++w) total += part[w][lane];
    partial[chunk * cols + col] = total;
  }
}
