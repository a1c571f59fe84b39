// Dropout with a counter-based random number generator: the keep mask is a pure function of
// (seed, offset, element index), so backward regenerates it instead of storing it.
//
// The stream is gputorch's CUDA generator's (gputorch/backends/philox.py): Philox4x32-10 with
// key (seed low word, seed high word) and counter (offset + block, 0, 0) for 128-bit block
// `block`. Element i takes a float64 uniform from two 32-bit words, as PhiloxEngine.random(n,
// float64) does: words 2i and 2i + 1 of the stream (block i / 2; words (0, 1) for even i, (2, 3)
// for odd i), u = ((hi << 32 | lo) >> 11) * 2^-53. The element is kept when u < keep_prob, and
// out = x * (kept ? scale : 0) with scale = 1 / keep_prob rounded to T by the caller (a
// multiplication, so that inf and NaN inputs behave as in `input * noise`). The engine's offset
// then moves on by ceil(n / 2) blocks, as the generic draw would.
#include "common.cuh"

using namespace gt;

struct PhiloxOut {
  unsigned int w[4];
};

__device__ __forceinline__ PhiloxOut philox4x32_10(unsigned long long counter, unsigned long long seed) {
  unsigned int c0 = (unsigned int)(counter & 0xffffffffull), c1 = (unsigned int)(counter >> 32);
  unsigned int c2 = 0u, c3 = 0u;
  unsigned int k0 = (unsigned int)(seed & 0xffffffffull), k1 = (unsigned int)(seed >> 32);
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    if (r) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const unsigned long long p0 = (unsigned long long)c0 * 0xD2511F53ull;
    const unsigned long long p1 = (unsigned long long)c2 * 0xCD9E8D57ull;
    const unsigned int n0 = (unsigned int)(p1 >> 32) ^ c1 ^ k0;
    const unsigned int n2 = (unsigned int)(p0 >> 32) ^ c3 ^ k1;
    c1 = (unsigned int)p1;
    c3 = (unsigned int)p0;
    c0 = n0;
    c2 = n2;
  }
  PhiloxOut out;
  out.w[0] = c0;
  out.w[1] = c1;
  out.w[2] = c2;
  out.w[3] = c3;
  return out;
}

__device__ __forceinline__ double philox_uniform(unsigned int hi, unsigned int lo) {
  const unsigned long long bits = (((unsigned long long)hi << 32) | lo) >> 11;
  return (double)bits * (1.0 / 9007199254740992.0);
}

// One thread per Philox block (two elements).
template <typename T>
__device__ __forceinline__ void dropout_body(const T* x, T* y, index_t n, unsigned long long seed,
                                             unsigned long long offset, double keep_prob, double scale) {
  typedef typename Num<T>::acc A;
  const A kept_scale = (A)scale;
  GT_GRID_LOOP(block, (n + 1) / 2) {
    const PhiloxOut r = philox4x32_10(offset + (unsigned long long)block, seed);
    const index_t i = 2 * block;
    const A s0 = philox_uniform(r.w[0], r.w[1]) < keep_prob ? kept_scale : A(0);
    y[i] = Num<T>::store(Num<T>::load(x[i]) * s0);
    if (i + 1 < n) {
      const A s1 = philox_uniform(r.w[2], r.w[3]) < keep_prob ? kept_scale : A(0);
      y[i + 1] = Num<T>::store(Num<T>::load(x[i + 1]) * s1);
    }
  }
}

// Seed and offset by value (eager launches).
template <typename T>
__global__ void dropout_philox(const T* x, T* y, index_t n, unsigned long long seed, unsigned long long offset,
                               double keep_prob, double scale) {
  dropout_body(x, y, n, seed, offset, keep_prob, scale);
}

// Seed and offset read from device memory (launches captured into a CUDA graph): state[0] is the
// seed, state[1] the generator's offset when the replay began, which gputorch writes before each
// replay; `relative` is this launch's offset from it. So every replay draws a fresh mask.
template <typename T>
__global__ void dropout_philox_state(const T* x, T* y, index_t n, const unsigned long long* state,
                                     unsigned long long relative, double keep_prob, double scale) {
  dropout_body(x, y, n, state[0], state[1] + relative, keep_prob, scale);
}
