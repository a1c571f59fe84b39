// im2col / col2im for convolutions computed as matrix products (gputorch/nn/functional/_windows.py).
//
// im2col writes the windows of x (N, C, H, W) -- any strides, given in elements -- as columns,
// zero where a window reaches into the padding. Output layout (contiguous):
//   CF = false: (N, C, kh, kw, Ho, Wo)        CF = true: (C, kh, kw, N, Ho, Wo)
// One thread per output element, in output memory order (coalesced writes).
//
// col2im is its adjoint: x (N, C, H, W), contiguous, gets the sum of the columns
// (N, C, kh, kw, Ho, Wo) that read each element; one thread per image element gathers them,
// visiting the taps (i, j) in order and rounding to T after every addition (the generic path's
// tap-by-tap `+=`).
#include "common.cuh"

using namespace gt;

template <typename T, bool CF>
__global__ void im2col(const T* x, T* cols, index_t n, index_t c, index_t h, index_t w, int kh, int kw, index_t ho,
                       index_t wo, int sh, int sw, int ph, int pw, int dh, int dw, index_t xs_n, index_t xs_c,
                       index_t xs_h, index_t xs_w) {
  GT_GRID_LOOP(idx, n * c * kh * kw * ho * wo) {
    index_t r = idx;
    const index_t ow = r % wo;
    r /= wo;
    const index_t oh = r % ho;
    r /= ho;
    index_t b, ch, i, j;
    if (CF) {  // (C, kh, kw, N, Ho, Wo)
      b = r % n;
      r /= n;
      j = r % kw;
      r /= kw;
      i = r % kh;
      ch = r / kh;
    } else {  // (N, C, kh, kw, Ho, Wo)
      j = r % kw;
      r /= kw;
      i = r % kh;
      r /= kh;
      ch = r % c;
      b = r / c;
    }
    const index_t ih = oh * sh - ph + i * dh, iw = ow * sw - pw + j * dw;
    T v = Num<T>::store(0);
    if (ih >= 0 && ih < h && iw >= 0 && iw < w) v = x[b * xs_n + ch * xs_c + ih * xs_h + iw * xs_w];
    cols[idx] = v;
  }
}

template <typename T>
__global__ void col2im(const T* cols, T* x, index_t n, index_t c, index_t h, index_t w, int kh, int kw, index_t ho,
                       index_t wo, int sh, int sw, int ph, int pw, int dh, int dw) {
  typedef typename Num<T>::acc A;
  GT_GRID_LOOP(idx, n * c * h * w) {
    const index_t iw = idx % w;
    const index_t ih = (idx / w) % h;
    const index_t plane = idx / (h * w);  // b * C + ch
    const T* cp = cols + plane * kh * kw * ho * wo;
    A acc = A(0);
    for (int i = 0; i < kh; ++i) {
      const index_t th = ih + ph - (index_t)i * dh;
      if (th < 0 || th % sh != 0 || th / sh >= ho) continue;
      const index_t oh = th / sh;
      for (int j = 0; j < kw; ++j) {
        const index_t tw = iw + pw - (index_t)j * dw;
        if (tw < 0 || tw % sw != 0 || tw / sw >= wo) continue;
        acc = Num<T>::round(acc + Num<T>::load(cp[((index_t)(i * kw + j) * ho + oh) * wo + tw / sw]));
      }
    }
    x[idx] = Num<T>::store(acc);
  }
}
