// Embedding backward: the rows of the output gradient added into a (num_weights, dim) table at
// their indices (atomic adds, so repeated indices accumulate), skipping padding_idx and, with
// scale_grad_by_freq, dividing each row by its index's count in the batch.
//
// out is an A-typed table (float for __half and float, double for double), zeroed by the caller,
// who rounds it to T afterwards where T is __half. counts (may be null): per position, how often
// its index occurs.
#include "common.cuh"

using namespace gt;

template <typename T, typename A>
__global__ void embedding_backward(const T* grad, const long long* indices, const long long* counts, A* out,
                                   index_t positions, index_t dim, long long padding_idx) {
  GT_GRID_LOOP(k, positions * dim) {
    const index_t pos = k / dim, d = k - pos * dim;
    const long long row = indices[pos];
    if (row == padding_idx) continue;
    A v = Num<T>::load(grad[k]);
    if (counts != nullptr) v = v / (A)counts[pos];
    atomicAdd(out + row * dim + d, v);
  }
}
