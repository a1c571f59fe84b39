// Batched matrix product C = A @ B without cuBLAS, for CUDA-graph capture (CuPy refuses cuBLAS
// calls while a stream captures, CuPy issue 6290).
//
// A is (batch, m, k), B is (batch, k, n), each addressed through element strides (batch, row,
// column), so transposed and broadcast operands (stride 0) need no copy; C is a contiguous
// (batch, m, n). Sums are accumulated in Num<T>::acc (float for __half, as cuBLAS's
// half-precision GEMM does) in k order, and rounded to T once.
//
// Tiling: a TILE x TILE block of threads computes a TILE x TILE tile of C; the k dimension is
// walked in TILE-wide slabs staged in shared memory (zero-padded at the edges). The grid is
// (ceil(n / TILE), ceil(m / TILE), min(batch, 65535)) and grid-strides over the batch.
#include "common.cuh"

using namespace gt;

#define GT_GEMM_TILE 16

template <typename T>
__global__ void gemm_strided(const T* a, const T* b, T* c, index_t batch, index_t m, index_t n, index_t k,
                             index_t a_sb, index_t a_sm, index_t a_sk, index_t b_sb, index_t b_sk, index_t b_sn) {
  typedef typename Num<T>::acc A;
  __shared__ A tile_a[GT_GEMM_TILE][GT_GEMM_TILE];
  __shared__ A tile_b[GT_GEMM_TILE][GT_GEMM_TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const index_t row = (index_t)blockIdx.y * GT_GEMM_TILE + ty;
  const index_t col = (index_t)blockIdx.x * GT_GEMM_TILE + tx;
  for (index_t z = blockIdx.z; z < batch; z += gridDim.z) {
    const T* az = a + z * a_sb;
    const T* bz = b + z * b_sb;
    A sum = A(0);
    for (index_t k0 = 0; k0 < k; k0 += GT_GEMM_TILE) {
      const index_t ka = k0 + tx, kb = k0 + ty;
      tile_a[ty][tx] = (row < m && ka < k) ? Num<T>::load(az[row * a_sm + ka * a_sk]) : A(0);
      tile_b[ty][tx] = (kb < k && col < n) ? Num<T>::load(bz[kb * b_sk + col * b_sn]) : A(0);
      __syncthreads();
#pragma unroll
      for (int j = 0; j < GT_GEMM_TILE; ++j) sum += tile_a[ty][j] * tile_b[j][tx];
      __syncthreads();
    }
    if (row < m && col < n) c[(z * m + row) * n + col] = Num<T>::store(sum);
  }
}
