// CUDA built-ins for compiling unchanged kernel sources with g++ (C++20) on the CPU.
//
// Force-included before the kernel source by gputorch/cuda/harness (g++ -include). It
// provides: the execution-space keywords, threadIdx/blockIdx/blockDim/gridDim/warpSize,
// __syncthreads and friends, warp shuffles/votes/matches/reductions, atomics, memory
// fences, the device math and bit intrinsics, and __half/__half2 from the CUDA toolkit's
// own cuda_fp16.h (its host code path, completed here with the functions it only defines
// for device compilation). `__shared__` declarations are rewritten by the Python side into
// per-module storage that is poisoned (0xff bytes) at the start of every block.
#pragma once

#include <cmath>
#include <math.h>  // the float overloads (expf's twin exp(float), ...) in the global namespace
#include <cfloat>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include <cuda_fp16.h>
#include <vector_functions.h>
#include <vector_types.h>

#include "harness_runtime.h"

// ---------------------------------------------------------------- keywords
// The CUDA headers define these as (ignored) GNU attributes; the harness gives them their
// CPU meaning. __global__/__shared__/__launch_bounds__ become markers that the Python side
// finds in the preprocessed source (kernels, shared variables) and rewrites.
#undef __host__
#undef __device__
#undef __global__
#undef __shared__
#undef __constant__
#undef __managed__
#undef __launch_bounds__
#undef __noinline__
#undef __forceinline__
#undef __grid_constant__
#define __host__
#define __device__
#define __global__ __harness_global__
#define __shared__ __harness_shared__
#define __launch_bounds__(...) __harness_launch_bounds__(__VA_ARGS__)
#define __constant__
#define __managed__
#define __grid_constant__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#ifndef __align__
#define __align__(n) __attribute__((aligned(n)))
#endif

#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ 800
#endif
#define __CUDA_HARNESS__ 1

#define HARNESS_SITE(name) ::harness::Site{name, __builtin_FILE(), __builtin_LINE()}
#define HARNESS_SITE_ARGS const char *harness_file = __builtin_FILE(), unsigned harness_line = __builtin_LINE()
#define HARNESS_SITE_OF(name) ::harness::Site{name, harness_file, harness_line}

// ---------------------------------------------------------------- block synchronisation

inline void __syncthreads(HARNESS_SITE_ARGS) { harness::barrier(0, 0, HARNESS_SITE_OF("__syncthreads")); }
inline int __syncthreads_count(int pred, HARNESS_SITE_ARGS) {
    return harness::barrier(1, pred, HARNESS_SITE_OF("__syncthreads_count"));
}
inline int __syncthreads_and(int pred, HARNESS_SITE_ARGS) {
    return harness::barrier(2, pred, HARNESS_SITE_OF("__syncthreads_and"));
}
inline int __syncthreads_or(int pred, HARNESS_SITE_ARGS) {
    return harness::barrier(3, pred, HARNESS_SITE_OF("__syncthreads_or"));
}

inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __nanosleep(unsigned) { harness::yield_now(); }

[[noreturn]] inline void harness_device_trap(const char* what, const char* file, unsigned line) {
    auto lk = harness::lock();
    harness::fail(std::string(what) + " at " + file + ":" + std::to_string(line) + " in " +
                  harness::thread_name(*harness::g_me));
    __builtin_unreachable();
}
inline void __trap(HARNESS_SITE_ARGS) { harness_device_trap("__trap()", harness_file, harness_line); }
inline void __brkpt(HARNESS_SITE_ARGS) { harness_device_trap("__brkpt()", harness_file, harness_line); }

// A failed device-side assert is a launch error (like cudaErrorAssert), not an abort.
#undef assert
#define assert(cond) \
    ((cond) ? (void)0 : harness_device_trap("assertion `" #cond "` failed", __builtin_FILE(), __builtin_LINE()))

inline long long clock64() {
    static long long ticks = 0;
    return __atomic_add_fetch(&ticks, 1000, __ATOMIC_RELAXED);
}

// ---------------------------------------------------------------- warp operations

namespace harness {
template <class T>
inline std::uint64_t to_bits(T v) {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "warp shuffles move values of at most 8 bytes");
    std::uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}
template <class T>
inline T from_bits(std::uint64_t b) {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
}
inline void check_width(int width, const Site& site) {
    if (width < 1 || width > 32 || (width & (width - 1))) {
        auto lk = lock();
        fail(std::string(site.what) + " at " + where(site) + fmt(": width %d is not a power of two in [1, 32]", width));
    }
}
inline int lane_id() { return int(g_me->tid % 32); }
template <class T>
inline T shuffle(unsigned mask, T var, int src, const Site& site) {
    return from_bits<T>(warp_op(WarpOp::Shfl, mask, to_bits(var), src, 0, site));
}
}  // namespace harness

template <class T>
inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize, HARNESS_SITE_ARGS) {
    auto site = HARNESS_SITE_OF("__shfl_sync");
    harness::check_width(width, site);
    int lane = harness::lane_id();
    int src = (lane & ~(width - 1)) + (srcLane & (width - 1));
    return harness::shuffle(mask, var, src, site);
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize, HARNESS_SITE_ARGS) {
    auto site = HARNESS_SITE_OF("__shfl_up_sync");
    harness::check_width(width, site);
    int lane = harness::lane_id();
    int src = unsigned(lane & (width - 1)) < delta ? lane : lane - int(delta);
    return harness::shuffle(mask, var, src, site);
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize, HARNESS_SITE_ARGS) {
    auto site = HARNESS_SITE_OF("__shfl_down_sync");
    harness::check_width(width, site);
    int lane = harness::lane_id();
    int src = unsigned(lane & (width - 1)) + delta >= unsigned(width) ? lane : lane + int(delta);
    return harness::shuffle(mask, var, src, site);
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize, HARNESS_SITE_ARGS) {
    auto site = HARNESS_SITE_OF("__shfl_xor_sync");
    harness::check_width(width, site);
    int lane = harness::lane_id();
    int src = lane ^ laneMask;
    if (src >= ((lane & ~(width - 1)) + width) || src > 31 || src < 0) src = lane;
    return harness::shuffle(mask, var, src, site);
}

inline unsigned __ballot_sync(unsigned mask, int pred, HARNESS_SITE_ARGS) {
    return unsigned(harness::warp_op(harness::WarpOp::Vote, mask, pred != 0, -1, 0, HARNESS_SITE_OF("__ballot_sync")));
}
inline int __any_sync(unsigned mask, int pred, HARNESS_SITE_ARGS) {
    return harness::warp_op(harness::WarpOp::Vote, mask, pred != 0, -1, 0, HARNESS_SITE_OF("__any_sync")) != 0;
}
inline int __all_sync(unsigned mask, int pred, HARNESS_SITE_ARGS) {
    return harness::warp_op(harness::WarpOp::Vote, mask, pred != 0, -1, 0, HARNESS_SITE_OF("__all_sync")) == mask;
}
inline int __uni_sync(unsigned mask, int pred, HARNESS_SITE_ARGS) {
    auto b = harness::warp_op(harness::WarpOp::Vote, mask, pred != 0, -1, 0, HARNESS_SITE_OF("__uni_sync"));
    return b == 0 || b == mask;
}
inline void __syncwarp(unsigned mask = 0xffffffffu, HARNESS_SITE_ARGS) {
    harness::warp_op(harness::WarpOp::SyncWarp, mask, 0, -1, 0, HARNESS_SITE_OF("__syncwarp"));
}
inline unsigned __activemask(HARNESS_SITE_ARGS) { return harness::activemask(HARNESS_SITE_OF("__activemask")); }

template <class T>
inline unsigned __match_any_sync(unsigned mask, T value, HARNESS_SITE_ARGS) {
    return unsigned(harness::warp_op(harness::WarpOp::MatchAny, mask, harness::to_bits(value), -1, 0,
                                     HARNESS_SITE_OF("__match_any_sync")));
}
template <class T>
inline unsigned __match_all_sync(unsigned mask, T value, int* pred, HARNESS_SITE_ARGS) {
    unsigned r = unsigned(harness::warp_op(harness::WarpOp::MatchAll, mask, harness::to_bits(value), -1, 0,
                                           HARNESS_SITE_OF("__match_all_sync")));
    *pred = r != 0;
    return r;
}

#define HARNESS_WARP_REDUCE(name, kind, T, signed_flag)                                                        \
    inline T name(unsigned mask, T value, HARNESS_SITE_ARGS) {                                                 \
        return static_cast<T>(harness::warp_op(harness::WarpOp::Reduce, mask, std::uint32_t(value), -1,       \
                                               (kind) | (signed_flag), HARNESS_SITE_OF(#name)));     \
    }
HARNESS_WARP_REDUCE(__reduce_add_sync, 0, unsigned, 0)
HARNESS_WARP_REDUCE(__reduce_add_sync, 0, int, 0x100)
HARNESS_WARP_REDUCE(__reduce_min_sync, 1, unsigned, 0)
HARNESS_WARP_REDUCE(__reduce_min_sync, 1, int, 0x100)
HARNESS_WARP_REDUCE(__reduce_max_sync, 2, unsigned, 0)
HARNESS_WARP_REDUCE(__reduce_max_sync, 2, int, 0x100)
HARNESS_WARP_REDUCE(__reduce_and_sync, 3, unsigned, 0)
HARNESS_WARP_REDUCE(__reduce_or_sync, 4, unsigned, 0)
HARNESS_WARP_REDUCE(__reduce_xor_sync, 5, unsigned, 0)
#undef HARNESS_WARP_REDUCE

// ---------------------------------------------------------------- atomics (relaxed, like CUDA's)

namespace harness {
template <class T, class F>
inline T atomic_update(T* address, F f) {
    using Bits = std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                    std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;
    static_assert(sizeof(T) == sizeof(Bits));
    auto* p = reinterpret_cast<Bits*>(address);
    Bits old = __atomic_load_n(p, __ATOMIC_RELAXED);
    for (;;) {
        T cur;
        std::memcpy(&cur, &old, sizeof(T));
        T next = f(cur);
        Bits nb;
        std::memcpy(&nb, &next, sizeof(T));
        if (__atomic_compare_exchange_n(p, &old, nb, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return cur;
    }
}
}  // namespace harness

#define HARNESS_ATOMIC_INT(T)                                                                                   \
    inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_RELAXED); }                       \
    inline T atomicSub(T* a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED); }                       \
    inline T atomicExch(T* a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_RELAXED); }                     \
    inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_RELAXED); }                       \
    inline T atomicOr(T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_RELAXED); }                         \
    inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_RELAXED); }                       \
    inline T atomicMin(T* a, T v) { return harness::atomic_update(a, [v](T c) { return v < c ? v : c; }); }    \
    inline T atomicMax(T* a, T v) { return harness::atomic_update(a, [v](T c) { return v > c ? v : c; }); }    \
    inline T atomicCAS(T* a, T compare, T v) {                                                                  \
        T expected = compare;                                                                                   \
        __atomic_compare_exchange_n(a, &expected, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);               \
        if (expected != compare) harness::yield_now(); /* lets a spinning fiber's partner run */                \
        return expected;                                                                                        \
    }
HARNESS_ATOMIC_INT(int)
HARNESS_ATOMIC_INT(unsigned int)
HARNESS_ATOMIC_INT(long long)
HARNESS_ATOMIC_INT(unsigned long long)
#undef HARNESS_ATOMIC_INT

inline unsigned short atomicCAS(unsigned short* a, unsigned short compare, unsigned short v) {
    unsigned short expected = compare;
    __atomic_compare_exchange_n(a, &expected, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    if (expected != compare) harness::yield_now();
    return expected;
}
inline float atomicAdd(float* a, float v) { return harness::atomic_update(a, [v](float c) { return c + v; }); }
inline double atomicAdd(double* a, double v) { return harness::atomic_update(a, [v](double c) { return c + v; }); }
inline float atomicExch(float* a, float v) { return harness::atomic_update(a, [v](float) { return v; }); }
inline __half atomicAdd(__half* a, __half v) {
    return harness::atomic_update(a, [v](__half c) { return __float2half(__half2float(c) + __half2float(v)); });
}
inline __half2 atomicAdd(__half2* a, __half2 v) {
    return harness::atomic_update(a, [v](__half2 c) {
        return __floats2half2_rn(__low2float(c) + __low2float(v), __high2float(c) + __high2float(v));
    });
}
inline unsigned atomicInc(unsigned* a, unsigned limit) {
    return harness::atomic_update(a, [limit](unsigned c) { return c >= limit ? 0u : c + 1; });
}
inline unsigned atomicDec(unsigned* a, unsigned limit) {
    return harness::atomic_update(a, [limit](unsigned c) { return (c == 0 || c > limit) ? limit : c - 1; });
}
// Unsigned long (64-bit on Linux) is what size_t is: accept it like unsigned long long.
inline unsigned long atomicAdd(unsigned long* a, unsigned long v) { return __atomic_fetch_add(a, v, __ATOMIC_RELAXED); }

#define HARNESS_ATOMIC_SCOPES(op)                                                  \
    template <class... A>                                                          \
    inline auto op##_block(A... a) { return op(a...); }                            \
    template <class... A>                                                          \
    inline auto op##_system(A... a) { return op(a...); }
HARNESS_ATOMIC_SCOPES(atomicAdd)
HARNESS_ATOMIC_SCOPES(atomicSub)
HARNESS_ATOMIC_SCOPES(atomicExch)
HARNESS_ATOMIC_SCOPES(atomicMin)
HARNESS_ATOMIC_SCOPES(atomicMax)
HARNESS_ATOMIC_SCOPES(atomicCAS)
HARNESS_ATOMIC_SCOPES(atomicAnd)
HARNESS_ATOMIC_SCOPES(atomicOr)
HARNESS_ATOMIC_SCOPES(atomicXor)
HARNESS_ATOMIC_SCOPES(atomicInc)
HARNESS_ATOMIC_SCOPES(atomicDec)
#undef HARNESS_ATOMIC_SCOPES

// ---------------------------------------------------------------- cached loads and stores

template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldca(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline T __ldlu(const T* p) { return *p; }
template <class T> inline T __ldcv(const T* p) { return *p; }
template <class T> inline void __stwb(T* p, T v) { *p = v; }
template <class T> inline void __stcg(T* p, T v) { *p = v; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }
template <class T> inline void __stwt(T* p, T v) { *p = v; }

// ---------------------------------------------------------------- min / max

#define HARNESS_MINMAX(A, B, R)                                 \
    inline R min(A a, B b) { return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); } \
    inline R max(A a, B b) { return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); }
HARNESS_MINMAX(int, int, int)
HARNESS_MINMAX(unsigned int, unsigned int, unsigned int)
HARNESS_MINMAX(int, unsigned int, unsigned int)
HARNESS_MINMAX(unsigned int, int, unsigned int)
HARNESS_MINMAX(long, long, long)
HARNESS_MINMAX(unsigned long, unsigned long, unsigned long)
HARNESS_MINMAX(long, unsigned long, unsigned long)
HARNESS_MINMAX(unsigned long, long, unsigned long)
HARNESS_MINMAX(long long, long long, long long)
HARNESS_MINMAX(unsigned long long, unsigned long long, unsigned long long)
HARNESS_MINMAX(long long, unsigned long long, unsigned long long)
HARNESS_MINMAX(unsigned long long, long long, unsigned long long)
#undef HARNESS_MINMAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline double min(float a, double b) { return fmin(a, b); }
inline double max(float a, double b) { return fmax(a, b); }
inline double min(double a, float b) { return fmin(a, b); }
inline double max(double a, float b) { return fmax(a, b); }
inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

// ---------------------------------------------------------------- float math intrinsics

inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return exp10f(x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __powf(float a, float b) { return powf(a, b); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float* s, float* c) { sincosf(x, s, c); }
inline float __tanhf(float x) { return tanhf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x >= 1.0f ? 1.0f : (x > 0.0f ? x : 0.0f); }  // NaN -> 0
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline double rcbrt(double x) { return 1.0 / cbrt(x); }
inline float sinpif(float x) { return sinf(float(M_PI) * x); }
inline float cospif(float x) { return cosf(float(M_PI) * x); }
inline double sinpi(double x) { return sin(M_PI * x); }
inline double cospi(double x) { return cos(M_PI * x); }
inline void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }
inline float normcdff(float x) { return 0.5f * erfcf(-x * float(M_SQRT1_2)); }
inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
inline double erfinv(double y) {
    // Newton iterations on erf from a rational first guess (Giles' approximation).
    if (y <= -1.0) return y == -1.0 ? -INFINITY : NAN;
    if (y >= 1.0) return y == 1.0 ? INFINITY : NAN;
    double w = -log((1.0 - y) * (1.0 + y)), x;
    if (w < 5.0) {
        w -= 2.5;
        x = 2.81022636e-08;
        for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                         -0.00417768164, 0.246640727, 1.50140941})
            x = c + x * w;
    } else {
        w = sqrt(w) - 3.0;
        x = -0.000200214257;
        for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                         0.00943887047, 1.00167406, 2.83297682})
            x = c + x * w;
    }
    x *= y;
    for (int i = 0; i < 2; ++i) x -= (erf(x) - y) / (2.0 / sqrt(M_PI) * exp(-x * x));
    return x;
}
inline float erfinvf(float y) { return float(erfinv(y)); }
inline double erfcinv(double y) { return erfinv(1.0 - y); }
inline float erfcinvf(float y) { return float(erfinv(1.0 - double(y))); }
inline double normcdfinv(double p) { return M_SQRT2 * erfinv(2.0 * p - 1.0); }
inline float normcdfinvf(float p) { return float(normcdfinv(p)); }

inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline float __frsqrt_rn(float a) { return 1.0f / sqrtf(a); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline double __drcp_rn(double a) { return 1.0 / a; }
inline double __dsqrt_rn(double a) { return sqrt(a); }
#define HARNESS_ROUNDING_ALIASES(base, ret, ...)                                     \
    inline ret base##_rz(__VA_ARGS__ a, __VA_ARGS__ b) { return base##_rn(a, b); }  \
    inline ret base##_ru(__VA_ARGS__ a, __VA_ARGS__ b) { return base##_rn(a, b); }  \
    inline ret base##_rd(__VA_ARGS__ a, __VA_ARGS__ b) { return base##_rn(a, b); }
HARNESS_ROUNDING_ALIASES(__fadd, float, float)
HARNESS_ROUNDING_ALIASES(__fsub, float, float)
HARNESS_ROUNDING_ALIASES(__fmul, float, float)
HARNESS_ROUNDING_ALIASES(__fdiv, float, float)
HARNESS_ROUNDING_ALIASES(__dadd, double, double)
HARNESS_ROUNDING_ALIASES(__dmul, double, double)
#undef HARNESS_ROUNDING_ALIASES

inline int __isnanf(float x) { return std::isnan(x); }
inline int __isinff(float x) { return std::isinf(x); }
inline int __finitef(float x) { return std::isfinite(x); }
inline int __isnan(double x) { return std::isnan(x); }
inline int __isinf(double x) { return std::isinf(x); }
inline int __finite(double x) { return std::isfinite(x); }

// ---------------------------------------------------------------- conversions and bit casts

inline int __float_as_int(float x) { int r; std::memcpy(&r, &x, 4); return r; }
inline unsigned __float_as_uint(float x) { unsigned r; std::memcpy(&r, &x, 4); return r; }
inline float __int_as_float(int x) { float r; std::memcpy(&r, &x, 4); return r; }
inline float __uint_as_float(unsigned x) { float r; std::memcpy(&r, &x, 4); return r; }
inline long long __double_as_longlong(double x) { long long r; std::memcpy(&r, &x, 8); return r; }
inline double __longlong_as_double(long long x) { double r; std::memcpy(&r, &x, 8); return r; }
inline int __double2hiint(double x) { return int(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return int(__double_as_longlong(x)); }
inline double __hiloint2double(int hi, int lo) {
    return __longlong_as_double((static_cast<long long>(hi) << 32) | static_cast<unsigned>(lo));
}

namespace harness {
template <class I, class F>
inline I float_to_int(F x, int mode) {  // CUDA saturates and maps NaN to 0
    if (std::isnan(x)) return 0;
    F r = mode == 0 ? std::nearbyint(x) : mode == 1 ? std::trunc(x) : mode == 2 ? std::floor(x) : std::ceil(x);
    if (r <= F(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
    if (r >= F(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
    return I(r);
}
}  // namespace harness
#define HARNESS_F2I(name, I, F)                                                               \
    inline I name##_rn(F x) { return harness::float_to_int<I>(x, 0); }                        \
    inline I name##_rz(F x) { return harness::float_to_int<I>(x, 1); }                        \
    inline I name##_rd(F x) { return harness::float_to_int<I>(x, 2); }                        \
    inline I name##_ru(F x) { return harness::float_to_int<I>(x, 3); }
HARNESS_F2I(__float2int, int, float)
HARNESS_F2I(__float2uint, unsigned, float)
HARNESS_F2I(__float2ll, long long, float)
HARNESS_F2I(__float2ull, unsigned long long, float)
HARNESS_F2I(__double2int, int, double)
HARNESS_F2I(__double2uint, unsigned, double)
HARNESS_F2I(__double2ll, long long, double)
HARNESS_F2I(__double2ull, unsigned long long, double)
#undef HARNESS_F2I
inline float __int2float_rn(int x) { return float(x); }
inline float __uint2float_rn(unsigned x) { return float(x); }
inline float __ll2float_rn(long long x) { return float(x); }
inline float __ull2float_rn(unsigned long long x) { return float(x); }
inline double __int2double_rn(int x) { return double(x); }
inline double __ll2double_rn(long long x) { return double(x); }
inline float __double2float_rn(double x) { return float(x); }

// ---------------------------------------------------------------- integer intrinsics

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x ? __builtin_clz(unsigned(x)) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
    return (static_cast<unsigned long long>(__brev(unsigned(x))) << 32) | __brev(unsigned(x >> 32));
}
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
    unsigned r = 0;
    for (int i = 0; i < 4; ++i) r |= unsigned((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return unsigned((v << (s & 31)) >> 32);
}
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return unsigned((v << (s > 32 ? 32 : s)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return unsigned(v >> (s & 31));
}
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return unsigned(v >> (s > 32 ? 32 : s));
}
inline unsigned __umulhi(unsigned a, unsigned b) { return unsigned((static_cast<unsigned long long>(a) * b) >> 32); }
inline int __mulhi(int a, int b) { return int((static_cast<long long>(a) * b) >> 32); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
inline long long __mul64hi(long long a, long long b) {
    return static_cast<long long>((static_cast<__int128>(a) * b) >> 64);
}
inline int __mul24(int a, int b) {
    auto s = [](int v) { return (v << 8) >> 8; };  // low 24 bits, sign-extended
    return s(a) * s(b);
}
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline int __hadd(int a, int b) { return int((static_cast<long long>(a) + b) >> 1); }
inline int __rhadd(int a, int b) { return int((static_cast<long long>(a) + b + 1) >> 1); }
inline unsigned __uhadd(unsigned a, unsigned b) { return unsigned((static_cast<unsigned long long>(a) + b) >> 1); }
inline unsigned __urhadd(unsigned a, unsigned b) { return unsigned((static_cast<unsigned long long>(a) + b + 1) >> 1); }
inline unsigned __sad(int a, int b, unsigned c) { return c + unsigned(a > b ? a - b : b - a); }
inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return c + (a > b ? a - b : b - a); }

// ---------------------------------------------------------------- __half completions
// cuda_fp16.h defines these only for device compilation; same results, computed in float.

#define HARNESS_HALF_UNARY(name, expr) \
    inline __half name(const __half h) { float x = __half2float(h); return __float2half(expr); }
HARNESS_HALF_UNARY(hexp, expf(x))
HARNESS_HALF_UNARY(hexp2, exp2f(x))
HARNESS_HALF_UNARY(hexp10, exp10f(x))
HARNESS_HALF_UNARY(hlog, logf(x))
HARNESS_HALF_UNARY(hlog2, log2f(x))
HARNESS_HALF_UNARY(hlog10, log10f(x))
HARNESS_HALF_UNARY(hsqrt, sqrtf(x))
HARNESS_HALF_UNARY(hrsqrt, 1.0f / sqrtf(x))
HARNESS_HALF_UNARY(hrcp, 1.0f / x)
HARNESS_HALF_UNARY(hsin, sinf(x))
HARNESS_HALF_UNARY(hcos, cosf(x))
HARNESS_HALF_UNARY(htanh, tanhf(x))
HARNESS_HALF_UNARY(hfloor, floorf(x))
HARNESS_HALF_UNARY(hceil, ceilf(x))
HARNESS_HALF_UNARY(htrunc, truncf(x))
HARNESS_HALF_UNARY(hrint, nearbyintf(x))
#undef HARNESS_HALF_UNARY
#define HARNESS_HALF2_UNARY(name, scalar) \
    inline __half2 name(const __half2 h) { return __halves2half2(scalar(__low2half(h)), scalar(__high2half(h))); }
HARNESS_HALF2_UNARY(h2exp, hexp)
HARNESS_HALF2_UNARY(h2exp2, hexp2)
HARNESS_HALF2_UNARY(h2exp10, hexp10)
HARNESS_HALF2_UNARY(h2log, hlog)
HARNESS_HALF2_UNARY(h2log2, hlog2)
HARNESS_HALF2_UNARY(h2log10, hlog10)
HARNESS_HALF2_UNARY(h2sqrt, hsqrt)
HARNESS_HALF2_UNARY(h2rsqrt, hrsqrt)
HARNESS_HALF2_UNARY(h2rcp, hrcp)
HARNESS_HALF2_UNARY(h2sin, hsin)
HARNESS_HALF2_UNARY(h2cos, hcos)
HARNESS_HALF2_UNARY(h2tanh, htanh)
HARNESS_HALF2_UNARY(h2floor, hfloor)
HARNESS_HALF2_UNARY(h2ceil, hceil)
HARNESS_HALF2_UNARY(h2trunc, htrunc)
HARNESS_HALF2_UNARY(h2rint, hrint)
#undef HARNESS_HALF2_UNARY
inline __half __hfma(const __half a, const __half b, const __half c) {
    return __float2half(fmaf(__half2float(a), __half2float(b), __half2float(c)));
}
inline __half __hfma_relu(const __half a, const __half b, const __half c) {
    float r = fmaf(__half2float(a), __half2float(b), __half2float(c));
    return __float2half(std::isnan(r) ? r : (r < 0.0f ? 0.0f : r));
}
inline __half2 __hfma2(const __half2 a, const __half2 b, const __half2 c) {
    return __halves2half2(__hfma(__low2half(a), __low2half(b), __low2half(c)),
                          __hfma(__high2half(a), __high2half(b), __high2half(c)));
}
inline int __half2int_rn(const __half h) { return __float2int_rn(__half2float(h)); }
inline int __half2int_rd(const __half h) { return __float2int_rd(__half2float(h)); }
inline int __half2int_ru(const __half h) { return __float2int_ru(__half2float(h)); }
inline unsigned __half2uint_rn(const __half h) { return __float2uint_rn(__half2float(h)); }
inline long long __half2ll_rn(const __half h) { return __float2ll_rn(__half2float(h)); }
