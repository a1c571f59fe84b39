// 2-D max and average pooling over (planes, H, W) = (N * C, H, W) contiguous inputs.
//
// Window (oh, ow) reads rows oh * sh - ph + i * dh (i < kh) and columns ow * sw - pw + j * dw
// (j < kw); positions outside the input are skipped (max pooling pads with -inf, average pooling
// with zeros). Max pooling visits the window's taps in order: the first real position starts the
// maximum, a later value wins when it is greater or NaN (ties keep the first position, the last
// NaN wins), and its flat h * W + w index is recorded (int64), as the generic path does.
//
// Backward kernels gather rather than scatter (one thread per input element, no atomics): they
// visit the taps (i, j) in order and add the contributions of the windows that reach the
// element, rounding to T after every addition like the generic path's tap-by-tap `+=`.
#include "common.cuh"

using namespace gt;

template <typename T>
__global__ void max_pool2d_forward(const T* x, T* y, long long* indices, index_t planes, index_t h, index_t w,
                                   index_t ho, index_t wo, int kh, int kw, int sh, int sw, int ph, int pw, int dh,
                                   int dw) {
  typedef typename Num<T>::acc A;
  GT_GRID_LOOP(idx, planes * ho * wo) {
    const index_t plane = idx / (ho * wo);
    const index_t rest = idx - plane * ho * wo;
    const index_t oh = rest / wo, ow = rest - oh * wo;
    const T* xp = x + plane * h * w;
    A best = A(0);
    index_t best_at = -1;
    for (int i = 0; i < kh; ++i) {
      const index_t ih = oh * sh - ph + (index_t)i * dh;
      if (ih < 0 || ih >= h) continue;
      for (int j = 0; j < kw; ++j) {
        const index_t iw = ow * sw - pw + (index_t)j * dw;
        if (iw < 0 || iw >= w) continue;
        const A v = Num<T>::load(xp[ih * w + iw]);
        if (best_at < 0 || v > best || v != v) {
          best = v;
          best_at = ih * w + iw;
        }
      }
    }
    y[idx] = Num<T>::store(best);
    indices[idx] = best_at;
  }
}

template <typename T>
__global__ void max_pool2d_backward(const T* grad, const long long* indices, T* gx, index_t planes, index_t h,
                                    index_t w, index_t ho, index_t wo, int kh, int kw, int sh, int sw, int ph, int pw,
                                    int dh, int dw) {
  typedef typename Num<T>::acc A;
  GT_GRID_LOOP(idx, planes * h * w) {
    const index_t plane = idx / (h * w);
    const index_t at = idx - plane * h * w;
    const index_t ih = at / w, iw = at - ih * w;
    const index_t obase = plane * ho * wo;
    A acc = A(0);
    for (int i = 0; i < kh; ++i) {
      const index_t th = ih + ph - (index_t)i * dh;
      if (th < 0 || th % sh != 0 || th / sh >= ho) continue;
      const index_t oh = th / sh;
      for (int j = 0; j < kw; ++j) {
        const index_t tw = iw + pw - (index_t)j * dw;
        if (tw < 0 || tw % sw != 0 || tw / sw >= wo) continue;
        const index_t o = obase + oh * wo + tw / sw;
        if (indices[o] == at) acc = Num<T>::round(acc + Num<T>::load(grad[o]));
      }
    }
    gx[idx] = Num<T>::store(acc);
  }
}

// The divisor of window (oh, ow): divisor_override when > 0, else the window's size counted
// over the input and its padding (count_include_pad) or over the input only.
__device__ __forceinline__ index_t avg_pool_divisor(index_t oh, index_t ow, index_t h, index_t w, int kh, int kw,
                                                    int sh, int sw, int ph, int pw, int count_include_pad,
                                                    long long divisor_override) {
  if (divisor_override > 0) return divisor_override;
  index_t h0 = oh * sh - ph, w0 = ow * sw - pw;
  index_t h1 = h0 + kh, w1 = w0 + kw;
  if (h1 > h + ph) h1 = h + ph;
  if (w1 > w + pw) w1 = w + pw;
  if (!count_include_pad) {
    if (h0 < 0) h0 = 0;
    if (w0 < 0) w0 = 0;
    if (h1 > h) h1 = h;
    if (w1 > w) w1 = w;
  }
  return (h1 - h0) * (w1 - w0);
}

template <typename T>
__global__ void avg_pool2d_forward(const T* x, T* y, index_t planes, index_t h, index_t w, index_t ho, index_t wo,
                                   int kh, int kw, int sh, int sw, int ph, int pw, int count_include_pad,
                                   long long divisor_override) {
  typedef typename Num<T>::acc A;
  GT_GRID_LOOP(idx, planes * ho * wo) {
    const index_t plane = idx / (ho * wo);
    const index_t rest = idx - plane * ho * wo;
    const index_t oh = rest / wo, ow = rest - oh * wo;
    const T* xp = x + plane * h * w;
    A total = A(0);
    for (int i = 0; i < kh; ++i) {
      const index_t ih = oh * sh - ph + i;
      if (ih < 0 || ih >= h) continue;
      for (int j = 0; j < kw; ++j) {
        const index_t iw = ow * sw - pw + j;
        if (iw >= 0 && iw < w) total += Num<T>::load(xp[ih * w + iw]);
      }
    }
    const index_t div = avg_pool_divisor(oh, ow, h, w, kh, kw, sh, sw, ph, pw, count_include_pad, divisor_override);
    y[idx] = Num<T>::store(total / (A)div);
  }
}

template <typename T>
__global__ void avg_pool2d_backward(const T* grad, T* gx, index_t planes, index_t h, index_t w, index_t ho,
                                    index_t wo, int kh, int kw, int sh, int sw, int ph, int pw, int count_include_pad,
                                    long long divisor_override) {
  typedef typename Num<T>::acc A;
  GT_GRID_LOOP(idx, planes * h * w) {
    const index_t plane = idx / (h * w);
    const index_t at = idx - plane * h * w;
    const index_t ih = at / w, iw = at - ih * w;
    const index_t obase = plane * ho * wo;
    A acc = A(0);
    for (int i = 0; i < kh; ++i) {
      const index_t th = ih + ph - i;
      if (th < 0 || th % sh != 0 || th / sh >= ho) continue;
      const index_t oh = th / sh;
      for (int j = 0; j < kw; ++j) {
        const index_t tw = iw + pw - j;
        if (tw < 0 || tw % sw != 0 || tw / sw >= wo) continue;
        const index_t ow = tw / sw;
        const index_t div =
            avg_pool_divisor(oh, ow, h, w, kh, kw, sh, sw, ph, pw, count_include_pad, divisor_override);
        const A g = Num<T>::round(Num<T>::load(grad[obase + oh * wo + ow]) / (A)div);
        acc = Num<T>::round(acc + g);
      }
    }
    gx[idx] = Num<T>::store(acc);
  }
}
