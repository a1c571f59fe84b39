// Multi-tensor optimizer updates: one launch updates every parameter of a group (of one dtype).
//
// Tables (device arrays built by the caller):
//   ptrs         (tensors, K) addresses: SGD K = 3 (param, grad, momentum buffer or 0),
//                Adam K = 5 (param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq or 0)
//   sizes        (tensors,) element counts
//   chunk_tensor (blocks,) the tensor block b works on; chunk_start (blocks,) its first element
// Block b updates elements [chunk_start[b], min(chunk_start[b] + chunk_size, size)) of its tensor.
//
// The arithmetic repeats the generic path (gputorch/optim/sgd.py, adam.py) operation for
// operation, each result rounded to T (Num<T>::round: a no-op for float and double), with the
// scalars already rounded to T by the caller; compiled with --fmad=false, so float32 and float64
// results are bit-identical to NumPy's.
#include "common.cuh"

using namespace gt;

// SGD flags: 1 maximize, 2 weight decay, 4 momentum, 8 dampening (!= 0), 16 nesterov.
// new_buffer[t]: the momentum buffer of tensor t is new (it becomes the update direction).
template <typename T>
__global__ void multi_tensor_sgd(const unsigned long long* ptrs, const long long* sizes, const int* chunk_tensor,
                                 const long long* chunk_start, index_t chunk_size, const int* new_buffer,
                                 double neg_lr, double weight_decay, double momentum, double one_minus_dampening,
                                 int flags) {
  typedef typename Num<T>::acc A;
  const int t = chunk_tensor[blockIdx.x];
  T* param = reinterpret_cast<T*>(ptrs[3 * t]);
  const T* grad = reinterpret_cast<const T*>(ptrs[3 * t + 1]);
  T* buf = reinterpret_cast<T*>(ptrs[3 * t + 2]);
  const index_t start = chunk_start[blockIdx.x];
  index_t stop = start + chunk_size;
  if (stop > sizes[t]) stop = sizes[t];
  const A lr = (A)neg_lr, wd = (A)weight_decay, mom = (A)momentum, damp = (A)one_minus_dampening;
  const bool fresh = new_buffer[t] != 0;
  for (index_t i = start + threadIdx.x; i < stop; i += blockDim.x) {
    A p = Num<T>::load(param[i]);
    A g = Num<T>::load(grad[i]);
    if (flags & 1) g = -g;
    if (flags & 2) g = Num<T>::round(g + Num<T>::round(p * wd));
    if (flags & 4) {
      A b;
      if (fresh) {
        b = g;
      } else {
        b = Num<T>::round(Num<T>::load(buf[i]) * mom);
        b = (flags & 8) ? Num<T>::round(b + Num<T>::round(g * damp)) : Num<T>::round(b + g);
      }
      buf[i] = Num<T>::store(b);
      g = (flags & 16) ? Num<T>::round(g + Num<T>::round(b * mom)) : b;
    }
    param[i] = Num<T>::store(p + Num<T>::round(g * lr));
  }
}

// Adam flags: 1 maximize, 2 weight decay, 4 decoupled weight decay (AdamW), 8 amsgrad,
// 16 |1 - beta1| < 0.5 (the lerp form: m + (g - m) * w, else g + (g - m) * (w - 1)).
// tensor_scalars (tensors, 2): -step_size and sqrt(bias_correction2) of each tensor's step.
// w = 1 - beta1, w_minus_one = w - 1, decay_factor = 1 - lr * weight_decay.
template <typename T>
__global__ void multi_tensor_adam(const unsigned long long* ptrs, const long long* sizes, const int* chunk_tensor,
                                  const long long* chunk_start, index_t chunk_size, const double* tensor_scalars,
                                  double one_minus_beta1, double w_minus_one, double beta2, double one_minus_beta2,
                                  double weight_decay, double decay_factor, double eps, int flags) {
  typedef typename Num<T>::acc A;
  const int t = chunk_tensor[blockIdx.x];
  T* param = reinterpret_cast<T*>(ptrs[5 * t]);
  const T* grad = reinterpret_cast<const T*>(ptrs[5 * t + 1]);
  T* exp_avg = reinterpret_cast<T*>(ptrs[5 * t + 2]);
  T* exp_avg_sq = reinterpret_cast<T*>(ptrs[5 * t + 3]);
  T* max_sq = reinterpret_cast<T*>(ptrs[5 * t + 4]);
  const index_t start = chunk_start[blockIdx.x];
  index_t stop = start + chunk_size;
  if (stop > sizes[t]) stop = sizes[t];
  const A neg_step = (A)tensor_scalars[2 * t], bc2_sqrt = (A)tensor_scalars[2 * t + 1];
  const A w = (A)one_minus_beta1, w1 = (A)w_minus_one, b2 = (A)beta2, omb2 = (A)one_minus_beta2;
  const A wd = (A)weight_decay, decay = (A)decay_factor, e = (A)eps;
  for (index_t i = start + threadIdx.x; i < stop; i += blockDim.x) {
    A p = Num<T>::load(param[i]);
    A g = Num<T>::load(grad[i]);
    if (flags & 1) g = -g;
    if (flags & 2) {
      if (flags & 4) p = Num<T>::round(p * decay);
      else g = Num<T>::round(g + Num<T>::round(p * wd));
    }
    A m = Num<T>::load(exp_avg[i]);
    const A diff = Num<T>::round(g - m);
    if (flags & 16) m = Num<T>::round(m + Num<T>::round(diff * w));
    else m = Num<T>::round(g + Num<T>::round(diff * w1));
    A v = Num<T>::round(Num<T>::load(exp_avg_sq[i]) * b2);
    A scratch = Num<T>::round(Num<T>::round(g * omb2) * g);
    v = Num<T>::round(v + scratch);
    A denom;
    if (flags & 8) {
      const A vmax = nan_max(Num<T>::load(max_sq[i]), v);
      max_sq[i] = Num<T>::store(vmax);
      denom = Num<T>::round(m_sqrt(vmax));
    } else {
      denom = Num<T>::round(m_sqrt(v));
    }
    denom = Num<T>::round(denom / bc2_sqrt);
    denom = Num<T>::round(denom + e);
    scratch = Num<T>::round(Num<T>::round(m * neg_step) / denom);
    exp_avg[i] = Num<T>::store(m);
    exp_avg_sq[i] = Num<T>::store(v);
    param[i] = Num<T>::store(p + scratch);
  }
}
