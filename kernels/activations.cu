// Elementwise activations and their gradients, and bias + activation fused after a matrix product.
//
// ACT codes (template parameter): 0 identity, 1 relu, 2 gelu (erf), 3 gelu (tanh approximation),
// 4 silu, 5 sigmoid, 6 tanh. Values are loaded into the accumulation type (float for __half),
// computed there, and rounded once on store. The formulas follow the generic (NumPy/CuPy) path
// of gputorch/nn/functional/activation.py and gputorch/ops/activation_backward.py term by term.
#include "common.cuh"

namespace gt {

#define GT_SQRT1_2 0.70710678118654752440
#define GT_GELU_PDF 0.39894228040143267794        // 1 / sqrt(2 pi)
#define GT_GELU_TANH_BETA 0.79788456080286535588  // sqrt(2 / pi)
#define GT_GELU_TANH_KAPPA 0.044715

template <typename A> __device__ __forceinline__ A sigmoid_of(A x) { return A(1) / (m_exp(-x) + A(1)); }

template <int ACT, typename A> __device__ __forceinline__ A activate(A x) {
  if (ACT == 0) return x;
  if (ACT == 1) return x < A(0) ? A(0) : x;  // NaN stays NaN, -0.0 stays -0.0 (PyTorch's clamp_min)
  if (ACT == 2) return (m_erf(x * A(GT_SQRT1_2)) + A(1)) * (x * A(0.5));
  if (ACT == 3) {
    A inner = x * x * x * A(GT_GELU_TANH_KAPPA) + x;
    return (m_tanh(inner * A(GT_GELU_TANH_BETA)) + A(1)) * (x * A(0.5));
  }
  if (ACT == 4) return x * sigmoid_of(x);
  if (ACT == 5) return sigmoid_of(x);
  return m_tanh(x);
}

// d activation / dx at the input x (relu: 1 where x > 0).
template <int ACT, typename A> __device__ __forceinline__ A activation_slope(A x) {
  if (ACT == 0) return A(1);
  if (ACT == 1) return x > A(0) ? A(1) : A(0);
  if (ACT == 2) {
    A cdf = (m_erf(x * A(GT_SQRT1_2)) + A(1)) * A(0.5);
    A pdf = m_exp(x * x * A(-0.5)) * A(GT_GELU_PDF);
    return cdf + x * pdf;
  }
  if (ACT == 3) {
    A x_sq = x * x;
    A inner = (x + x_sq * x * A(GT_GELU_TANH_KAPPA)) * A(GT_GELU_TANH_BETA);
    A t = m_tanh(inner);
    A left = (t + A(1)) * A(0.5);
    A right = x * A(0.5) * (A(1) - t * t) * ((x_sq * A(3 * GT_GELU_TANH_KAPPA) + A(1)) * A(GT_GELU_TANH_BETA));
    return left + right;
  }
  if (ACT == 4) {
    A s = sigmoid_of(x);
    return s * (x * (A(1) - s) + A(1));
  }
  if (ACT == 5) {
    A s = sigmoid_of(x);
    return s * (A(1) - s);
  }
  A t = m_tanh(x);
  return A(1) - t * t;
}

}  // namespace gt

using namespace gt;

// y = act(x); y may alias x.
template <typename T, int ACT>
__global__ void activation_forward(const T* x, T* y, index_t n) {
  typedef typename Num<T>::acc A;
  GT_GRID_LOOP(i, n) { y[i] = Num<T>::store(activate<ACT>(Num<T>::load(x[i]))); }
}

// out = grad * act'(x) for the activations differentiated at their input (gelu, silu, ...).
template <typename T, int ACT>
__global__ void activation_backward(const T* grad, const T* x, T* out, index_t n) {
  typedef typename Num<T>::acc A;
  GT_GRID_LOOP(i, n) {
    A g = Num<T>::load(grad[i]);
    out[i] = Num<T>::store(g * activation_slope<ACT>(Num<T>::load(x[i])));
  }
}

// The gradients computed from the saved output y: ACT 5 (sigmoid) grad * (1 - y) * y,
// ACT 6 (tanh) grad * (1 - y * y).
template <typename T, int ACT>
__global__ void output_backward(const T* grad, const T* y, T* out, index_t n) {
  typedef typename Num<T>::acc A;
  GT_GRID_LOOP(i, n) {
    A g = Num<T>::load(grad[i]);
    A v = Num<T>::load(y[i]);
    A r = ACT == 5 ? (A(1) - v) * g * v : (A(1) - v * v) * g;
    out[i] = Num<T>::store(r);
  }
}

// 0 where y <= threshold, else grad: the gradient of relu and threshold. A select, as PyTorch's:
// a NaN y passes the gradient, and a NaN or infinite gradient where y <= threshold gives 0.
template <typename T>
__global__ void threshold_backward(const T* grad, const T* y, T* out, double threshold, index_t n) {
  typedef typename Num<T>::acc A;
  const A thr = (A)threshold;
  GT_GRID_LOOP(i, n) {
    out[i] = Num<T>::load(y[i]) <= thr ? Num<T>::store(A(0)) : grad[i];
  }
}

// After a matrix product x (rows, cols): pre = x + bias (broadcast over rows) and y = act(pre).
// `pre` (may be null, may alias x) keeps the pre-activation for backward; y may alias x.
template <typename T, int ACT>
__global__ void bias_activation_forward(const T* x, const T* bias, T* pre, T* y, index_t n, index_t cols) {
  typedef typename Num<T>::acc A;
  GT_GRID_LOOP(i, n) {
    T z = Num<T>::store(Num<T>::load(x[i]) + Num<T>::load(bias[i % cols]));
    if (pre != nullptr) pre[i] = z;
    y[i] = Num<T>::store(activate<ACT>(Num<T>::load(z)));
  }
}
