// Mixed precision: GradScaler's inf/NaN check and unscale of many gradients in one launch.
//
// multi_tensor_unscale: for every element g of every tensor of the list (the pointer/size/chunk
// tables of optimizers.cu, K = 1 address per tensor), sets *found_inf to 1 when g is an inf or a
// NaN, and writes g * inv_scale back in place. The product is computed in A (float for __half and
// float, double for double) with inv_scale first rounded to T, as the generic path multiplies by
// inv_scale cast to the gradient's dtype, so that both paths give the same bits. Several blocks may
// store 1 into *found_inf at once: they all store the same value.
#include "common.cuh"

using namespace gt;

// Whether v is neither an inf nor a NaN (v - v is 0 exactly for finite v, NaN otherwise).
template <typename A> __device__ __forceinline__ bool is_finite(A v) { return v - v == A(0); }

template <typename T>
__global__ void multi_tensor_unscale(const unsigned long long* ptrs, const long long* sizes, const int* chunk_tensor,
                                     const long long* chunk_start, index_t chunk_size, float* found_inf,
                                     const float* inv_scale) {
  typedef typename Num<T>::acc A;
  const int t = chunk_tensor[blockIdx.x];
  T* g = reinterpret_cast<T*>(ptrs[t]);
  const index_t start = chunk_start[blockIdx.x];
  index_t stop = start + chunk_size;
  if (stop > sizes[t]) stop = sizes[t];
  const A s = Num<T>::round((A)(*inv_scale));
  bool bad = false;
  for (index_t i = start + threadIdx.x; i < stop; i += blockDim.x) {
    const A v = Num<T>::load(g[i]);
    if (!is_finite(v)) bad = true;
    g[i] = Num<T>::store(v * s);
  }
  if (bad) *found_inf = 1.0f;
}
