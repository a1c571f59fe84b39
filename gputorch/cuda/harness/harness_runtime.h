// The CPU execution harness's runtime: runs one CUDA launch on the CPU.
//
// Blocks run one after another. The threads of a block run either as cooperative fibers
// on the calling OS thread (default: fast and deterministic) or, when compiled with
// -DHARNESS_THREADS, as one OS thread each (what AddressSanitizer/ThreadSanitizer need).
// Both modes share one synchronisation state machine (barriers, warp rendezvous, exits),
// driven under a mutex in thread mode; misuse (a barrier not reached by every thread, a
// warp mask naming missing or exited lanes) and deadlocks become launch errors.
//
// Everything here is compiled into each kernel module's shared object (one translation
// unit, hidden visibility); Python talks to it through the extern "C" functions at the end
// (see gputorch/cuda/harness/launcher.py).
#pragma once
#include <atomic>
#include <csetjmp>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ctime>
#include <unistd.h>
#include <vector>

#include <cuda_fp16.h>
#include <vector_types.h>

#include "fiber_switch.h"

#if defined(HARNESS_THREADS)
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#define HARNESS_TLS thread_local
#else
#define HARNESS_TLS
#endif

#if defined(__SANITIZE_ADDRESS__)
#define HARNESS_ASAN 1
#include <sanitizer/asan_interface.h>
#endif
#if defined(__SANITIZE_THREAD__)
#define HARNESS_TSAN 1
// ThreadSanitizer must see exactly CUDA's happens-before edges (barriers, warp
// rendezvous), not the harness's own mutex: the runtime's critical sections run with
// synchronisation and memory accesses ignored, and the sync points annotate explicit
// release/acquire pairs instead.
extern "C" {
void AnnotateIgnoreSyncBegin(const char* file, int line);
void AnnotateIgnoreSyncEnd(const char* file, int line);
void AnnotateIgnoreReadsBegin(const char* file, int line);
void AnnotateIgnoreReadsEnd(const char* file, int line);
void AnnotateIgnoreWritesBegin(const char* file, int line);
void AnnotateIgnoreWritesEnd(const char* file, int line);
void __tsan_acquire(void* addr);
void __tsan_release(void* addr);
}
#define HARNESS_HB_RELEASE(p) __tsan_release(p)
#define HARNESS_HB_ACQUIRE(p) __tsan_acquire(p)
#else
#define HARNESS_HB_RELEASE(p) ((void)(p))
#define HARNESS_HB_ACQUIRE(p) ((void)(p))
#endif

#define HARNESS_EXPORT extern "C" __attribute__((visibility("default")))

// The CUDA built-in variables. In fiber mode the scheduler stores the running fiber's
// indices here before switching to it; in thread mode each OS thread has its own copy.
inline HARNESS_TLS uint3 threadIdx;
inline HARNESS_TLS uint3 blockIdx;
inline dim3 blockDim;
inline dim3 gridDim;
constexpr int warpSize = 32;

namespace harness {

struct LaunchConfig {
    std::uint32_t grid[3];
    std::uint32_t block[3];
    std::uint64_t shared_mem;
    const std::uint64_t* blocks;  // linear block indices to run (nullptr: all of them, in order)
    std::uint64_t nblocks;
    std::uint64_t stack_size;     // fiber stack size in bytes (0: default)
    double timeout_s;             // thread mode: give up (abort the process) after this long
};

enum class State : std::uint8_t { Runnable, Barrier, Warp, Soft, Done };
enum class WarpOp : std::uint8_t { None, Shfl, Vote, SyncWarp, MatchAny, MatchAll, Reduce };

struct Site {
    const char* what = "";
    const char* file = "";
    unsigned line = 0;
    bool operator==(const Site& o) const { return line == o.line && std::strcmp(file, o.file) == 0; }
};

struct ThreadState {
    State st = State::Runnable;
    std::uint32_t tid = 0;
    uint3 idx{};
    WarpOp op = WarpOp::None;
    std::uint32_t mask = 0;
    std::uint64_t value = 0;
    int src = -1;        // shuffles: lane to read (own lane when out of the segment)
    int param = 0;       // reductions: which one
    Site site;
    std::uint64_t result = 0;
#if defined(HARNESS_THREADS)
    std::condition_variable cv;
#endif
};

struct Abort {};  // thread mode: unwinds a simulated thread after the launch failed

struct Runtime {
    // launch
    LaunchConfig cfg{};
    void (*body)(void**) = nullptr;
    void** args = nullptr;
    std::uint32_t n = 0, nwarps = 0;
    std::uint64_t current_block = 0;
    // block state
    std::vector<ThreadState> t;
    std::vector<std::uint32_t> warp_active;  // runnable lanes per warp
    std::vector<std::uint32_t> warp_exited;  // exited lanes per warp (bit mask)
    std::vector<std::uint32_t> warp_soft;    // lanes waiting in __activemask per warp
    std::uint32_t live = 0, runnable = 0, exited = 0;
    std::uint32_t barrier_count = 0;
    Site barrier_site;
    int barrier_sum = 0, barrier_and = 1, barrier_or = 0;
    bool failed = false;
    std::string error;
#if defined(HARNESS_THREADS)
    std::mutex mu;
    std::condition_variable cv_main, cv_start;
    std::uint64_t generation = 0;
    std::uint32_t busy = 0;
    bool stop = false;
#else
    FiberContext scheduler;
    std::vector<FiberContext> fibers;
#endif
};

inline Runtime g;
inline HARNESS_TLS ThreadState* g_me = nullptr;

// ---------------------------------------------------------------- messages

inline std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
inline std::string fmt(const char* f, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

inline std::string dims(uint3 v) { return fmt("(%u,%u,%u)", v.x, v.y, v.z); }
inline std::string where(const Site& s) { return fmt("%s:%u", s.file, s.line); }

inline std::string block_name() {
    std::uint64_t b = g.current_block;
    uint3 v{unsigned(b % g.cfg.grid[0]), unsigned(b / g.cfg.grid[0] % g.cfg.grid[1]),
            unsigned(b / g.cfg.grid[0] / g.cfg.grid[1])};
    return "block " + dims(v);
}

inline std::string thread_name(const ThreadState& s) { return "thread " + dims(s.idx); }

// "threads (0,0,0)..(31,0,0)" for a run of consecutive linear indices
inline std::string thread_range(std::uint32_t a, std::uint32_t b) {
    if (a == b) return thread_name(g.t[a]);
    return fmt("%u threads ", b - a + 1) + dims(g.t[a].idx) + ".." + dims(g.t[b].idx);
}

inline void fail(std::string msg);

// ---------------------------------------------------------------- scheduling primitives

inline void set_runnable(ThreadState& s) {
    s.st = State::Runnable;
    ++g.runnable;
    ++g.warp_active[s.tid / 32];
#if defined(HARNESS_THREADS)
    s.cv.notify_one();
#endif
}

inline void resolve_soft(std::uint32_t w);
inline void deadlock();

// `s` stops being runnable (it waits or has exited).
inline void drop_runnable(ThreadState& s) {
    --g.runnable;
    std::uint32_t w = s.tid / 32;
    if (--g.warp_active[w] == 0 && g.warp_soft[w]) resolve_soft(w);
    if (g.runnable == 0 && g.live > 0 && !g.failed) deadlock();
}

#if defined(HARNESS_THREADS)
#if defined(HARNESS_TSAN)
struct TsanQuiet {
    TsanQuiet() {
        AnnotateIgnoreSyncBegin(__FILE__, __LINE__);
        AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
        AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
    }
    ~TsanQuiet() {
        AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
        AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
        AnnotateIgnoreSyncEnd(__FILE__, __LINE__);
    }
    TsanQuiet(const TsanQuiet&) = delete;
};
struct Lock {
    TsanQuiet quiet;  // constructed before locking, destroyed after unlocking
    std::unique_lock<std::mutex> lk;
    Lock() : lk(g.mu) {}
    template <class P>
    void wait(std::condition_variable& cv, P pred) { cv.wait(lk, pred); }
    void wait(std::condition_variable& cv) { cv.wait(lk); }
    template <class D, class P>
    bool wait_for(std::condition_variable& cv, D d, P pred) { return cv.wait_for(lk, d, pred); }
};
inline Lock lock() { return Lock(); }
#else
struct Lock {
    std::unique_lock<std::mutex> lk;
    Lock() : lk(g.mu) {}
    template <class P>
    void wait(std::condition_variable& cv, P pred) { cv.wait(lk, pred); }
    void wait(std::condition_variable& cv) { cv.wait(lk); }
    template <class D, class P>
    bool wait_for(std::condition_variable& cv, D d, P pred) { return cv.wait_for(lk, d, pred); }
};
inline Lock lock() { return Lock(); }
#endif

inline void wait_runnable(ThreadState& s, Lock& lk) {
    while (s.st != State::Runnable && !g.failed) lk.wait(s.cv);
    if (g.failed) throw Abort{};
}

inline void yield_now() { std::this_thread::yield(); }
#else
struct Lock {};
inline Lock lock() { return {}; }

inline void wait_runnable(ThreadState& s, Lock&) {
    fiber_switch(g.fibers[s.tid], g.scheduler);
    // The scheduler resumes a fiber only once it is runnable again.
}

inline void yield_now() {
    if (g_me) fiber_switch(g.fibers[g_me->tid], g.scheduler);
}
#endif

inline void record_failure(const std::string& msg) {
    if (!g.failed) {
        g.failed = true;
        g.error = block_name() + ": " + msg;
    }
#if defined(HARNESS_THREADS)
    for (auto& s : g.t) s.cv.notify_one();
    g.cv_main.notify_one();
#endif
}

// Ends the launch with an error; called by a simulated thread (holding the lock in thread mode).
inline void fail(std::string msg) {
    record_failure(msg);
#if defined(HARNESS_THREADS)
    throw Abort{};
#else
    // Leave this fiber for good; the scheduler sees the failure and stops the launch.
    FiberContext dead;
    fiber_switch(dead, g.scheduler);
    __builtin_unreachable();
#endif
}

// ---------------------------------------------------------------- diagnostics

inline const char* state_name(const ThreadState& s) {
    switch (s.st) {
        case State::Barrier: return "__syncthreads";
        case State::Soft: return "__activemask";
        case State::Warp: return s.site.what;
        default: return "running";
    }
}

inline void deadlock() {
    std::string msg = "deadlock: no thread of the block can make progress.";
    std::uint32_t i = 0;
    int groups = 0;
    while (i < g.n && groups < 12) {
        const ThreadState& a = g.t[i];
        if (a.st == State::Done) { ++i; continue; }
        std::uint32_t j = i;
        while (j + 1 < g.n) {
            const ThreadState& b = g.t[j + 1];
            if (b.st != a.st || !(b.site == a.site) || b.mask != a.mask) break;
            ++j;
        }
        msg += " " + thread_range(i, j) + " wait" + (i == j ? "s" : "") + " at " + state_name(a) + " (" +
               where(a.site) + ")";
        if (a.st == State::Warp) msg += fmt(" with mask 0x%08x", a.mask);
        msg += ";";
        ++groups;
        i = j + 1;
    }
    if (g.exited) msg += fmt(" %u thread(s) have exited.", g.exited);
    fail(msg);
}

// ---------------------------------------------------------------- block barrier

inline int barrier_locked(int kind, int pred, Site site) {
    auto lk = lock();
    ThreadState& me = *g_me;
    if (g.exited) {
        std::uint32_t first = 0;
        while (g.t[first].st != State::Done) ++first;
        fail(site.what + std::string(" at ") + where(site) + " reached by " + thread_name(me) +
             fmt(" but %u thread(s) of the block (", g.exited) +
             thread_name(g.t[first]) + (g.exited > 1 ? ", ..." : "") + ") have already exited: " +
             "every thread of the block must reach the same barrier (divergent barrier)");
    }
    if (g.barrier_count == 0) {
        g.barrier_site = site;
        g.barrier_sum = 0;
        g.barrier_and = 1;
        g.barrier_or = 0;
    } else if (!(site == g.barrier_site)) {
        fail(std::string("divergent barrier: ") + thread_name(me) + " reached " + site.what + " at " + where(site) +
             " while other threads wait at " + g.barrier_site.what + " at " + where(g.barrier_site));
    }
    g.barrier_sum += pred != 0;
    g.barrier_and &= pred != 0;
    g.barrier_or |= pred != 0;
    int result = kind == 1 ? g.barrier_sum : kind == 2 ? g.barrier_and : g.barrier_or;
    if (++g.barrier_count == g.n) {
        g.barrier_count = 0;
        for (auto& s : g.t)
            if (s.st == State::Barrier) {
                s.result = unsigned(result);
                set_runnable(s);
            }
        return result;
    }
    me.st = State::Barrier;
    me.site = site;
    drop_runnable(me);
    wait_runnable(me, lk);
    return int(me.result);
}

inline int barrier(int kind, int pred, Site site) {
    HARNESS_HB_RELEASE(&g.barrier_count);
    int r = barrier_locked(kind, pred, site);
    HARNESS_HB_ACQUIRE(&g.barrier_count);
    return r;
}

// ---------------------------------------------------------------- warp rendezvous

inline std::uint32_t warp_lanes_mask(std::uint32_t w) {
    std::uint32_t lanes = g.n - w * 32 < 32 ? g.n - w * 32 : 32;
    return lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
}

inline void complete_warp_op(std::uint32_t w, std::uint32_t mask, ThreadState& me) {
    ThreadState* lane = &g.t[w * 32];
    WarpOp op = me.op;
    for (std::uint32_t l = 0; l < 32; ++l)
        if (mask >> l & 1 && (lane[l].op != op)) {
            fail(fmt("lanes of mask 0x%08x execute different warp operations: ", mask) + thread_name(me) + " in " +
                 me.site.what + " at " + where(me.site) + ", " + thread_name(lane[l]) + " in " + lane[l].site.what +
                 " at " + where(lane[l].site));
        }
    std::uint64_t ballot = 0;
    switch (op) {
        case WarpOp::Shfl:
            for (std::uint32_t l = 0; l < 32; ++l)
                if (mask >> l & 1) {
                    int s = lane[l].src;
                    lane[l].result = (s >= 0 && mask >> s & 1) ? lane[s].value : ~std::uint64_t(0);
                }
            break;
        case WarpOp::Vote:
            for (std::uint32_t l = 0; l < 32; ++l)
                if (mask >> l & 1 && lane[l].value) ballot |= 1u << l;
            for (std::uint32_t l = 0; l < 32; ++l)
                if (mask >> l & 1) lane[l].result = ballot;
            break;
        case WarpOp::MatchAny:
            for (std::uint32_t l = 0; l < 32; ++l)
                if (mask >> l & 1) {
                    std::uint64_t m = 0;
                    for (std::uint32_t k = 0; k < 32; ++k)
                        if (mask >> k & 1 && lane[k].value == lane[l].value) m |= 1u << k;
                    lane[l].result = m;
                }
            break;
        case WarpOp::MatchAll: {
            bool same = true;
            std::uint32_t first = __builtin_ctz(mask);
            for (std::uint32_t l = 0; l < 32; ++l)
                if (mask >> l & 1 && lane[l].value != lane[first].value) same = false;
            for (std::uint32_t l = 0; l < 32; ++l)
                if (mask >> l & 1) lane[l].result = same ? mask : 0;
            break;
        }
        case WarpOp::Reduce: {
            // param: 0 add, 1 min, 2 max, 3 and, 4 or, 5 xor; bit 8: signed
            int kind = me.param & 0xff;
            bool is_signed = me.param & 0x100;
            std::uint32_t first = __builtin_ctz(mask);
            std::uint32_t acc = std::uint32_t(lane[first].value);
            for (std::uint32_t l = first + 1; l < 32; ++l) {
                if (!(mask >> l & 1)) continue;
                std::uint32_t v = std::uint32_t(lane[l].value);
                switch (kind) {
                    case 0: acc += v; break;
                    case 1:
                        acc = is_signed ? (std::int32_t(v) < std::int32_t(acc) ? v : acc) : (v < acc ? v : acc);
                        break;
                    case 2:
                        acc = is_signed ? (std::int32_t(v) > std::int32_t(acc) ? v : acc) : (v > acc ? v : acc);
                        break;
                    case 3: acc &= v; break;
                    case 4: acc |= v; break;
                    default: acc ^= v; break;
                }
            }
            for (std::uint32_t l = 0; l < 32; ++l)
                if (mask >> l & 1) lane[l].result = acc;
            break;
        }
        default: break;
    }
    for (std::uint32_t l = 0; l < 32; ++l)
        if (mask >> l & 1) {
            lane[l].op = WarpOp::None;
            if (&lane[l] != &me) set_runnable(lane[l]);
        }
}

// A warp-synchronous operation of the calling thread over the lanes in `mask`.
inline std::uint64_t warp_op_locked(WarpOp op, std::uint32_t mask, std::uint64_t value, int src, int param, Site site) {
    auto lk = lock();
    ThreadState& me = *g_me;
    std::uint32_t w = me.tid / 32, l = me.tid % 32;
    if (!(mask >> l & 1))
        fail(std::string(site.what) + " at " + where(site) + ": " + thread_name(me) + fmt(" (lane %u)", l) +
             fmt(" calls it with mask 0x%08x, which does not include its own lane", mask));
    std::uint32_t valid = warp_lanes_mask(w);
    if (mask & ~valid)
        fail(std::string(site.what) + " at " + where(site) +
             fmt(": mask 0x%08x names lanes that do not exist: ", mask) +
             fmt("warp %u of the block has only %u thread(s) (a partial warp, blockDim has %u threads); ", w,
                 __builtin_popcount(valid), g.n) +
             "use a mask of the lanes that exist, e.g. __ballot_sync(__activemask(), ...)");
    if (mask & g.warp_exited[w])
        fail(std::string(site.what) + " at " + where(site) +
             fmt(": mask 0x%08x names lane(s) 0x%08x that have already exited", mask, mask & g.warp_exited[w]));
    me.op = op;
    me.mask = mask;
    me.value = value;
    me.src = src;
    me.param = param;
    me.site = site;
    ThreadState* lane = &g.t[w * 32];
    bool complete = true;
    for (std::uint32_t k = 0; k < 32 && complete; ++k)
        if (mask >> k & 1 && k != l && !(lane[k].st == State::Warp && lane[k].mask == mask)) complete = false;
    if (complete) {
        complete_warp_op(w, mask, me);
        return me.result;
    }
    me.st = State::Warp;
    drop_runnable(me);
    wait_runnable(me, lk);
    return me.result;
}

inline std::uint64_t warp_op(WarpOp op, std::uint32_t mask, std::uint64_t value, int src, int param, Site site) {
    void* token = &g.warp_active[g_me->tid / 32];
    HARNESS_HB_RELEASE(token);
    std::uint64_t r = warp_op_locked(op, mask, value, src, param, site);
    HARNESS_HB_ACQUIRE(token);
    return r;
}

// __activemask: the lanes of the warp that reach the same __activemask together. Resolved
// once no lane of the warp can run any further (all wait somewhere or have exited).
inline std::uint32_t activemask(Site site) {
    auto lk = lock();
    ThreadState& me = *g_me;
    std::uint32_t w = me.tid / 32;
    me.st = State::Soft;
    me.site = site;
    g.warp_soft[w] |= 1u << (me.tid % 32);
    drop_runnable(me);
    wait_runnable(me, lk);
    return std::uint32_t(me.result);
}

inline void resolve_soft(std::uint32_t w) {
    ThreadState* lane = &g.t[w * 32];
    std::uint32_t pending = g.warp_soft[w];
    while (pending) {
        std::uint32_t first = __builtin_ctz(pending);
        std::uint32_t group = 0;
        for (std::uint32_t l = first; l < 32; ++l)
            if (pending >> l & 1 && lane[l].site == lane[first].site) group |= 1u << l;
        for (std::uint32_t l = 0; l < 32; ++l)
            if (group >> l & 1) {
                lane[l].result = group;
                set_runnable(lane[l]);
            }
        pending &= ~group;
    }
    g.warp_soft[w] = 0;
}

// ---------------------------------------------------------------- thread exit

inline void thread_exit(ThreadState& me) {
    auto lk = lock();
    if (g.failed) return;
    me.st = State::Done;
    --g.live;
    ++g.exited;
    std::uint32_t w = me.tid / 32, l = me.tid % 32;
    g.warp_exited[w] |= 1u << l;
    if (g.barrier_count) {
        fail(thread_name(me) + " exited while " + fmt("%u thread(s) wait at ", g.barrier_count) + g.barrier_site.what +
             " at " + where(g.barrier_site) +
             ": every thread of the block must reach the same barrier (divergent barrier)");
    }
    ThreadState* lane = &g.t[w * 32];
    for (std::uint32_t k = 0; k < 32; ++k)
        if (w * 32 + k < g.n && lane[k].st == State::Warp && lane[k].mask >> l & 1)
            fail(thread_name(me) + fmt(" (lane %u) exited while ", l) + thread_name(lane[k]) + " waits for it in " +
                 lane[k].site.what + " at " + where(lane[k].site) + fmt(" with mask 0x%08x", lane[k].mask));
    drop_runnable(me);
#if defined(HARNESS_THREADS)
    if (g.live == 0) g.cv_main.notify_one();
#endif
}

// ---------------------------------------------------------------- shared memory

struct SharedSlot {
    void* ptr;
    std::size_t size;
};

inline std::vector<SharedSlot>& shared_slots() {
    static std::vector<SharedSlot> v;
    return v;
}
inline std::vector<void**>& dynamic_refs() {
    static std::vector<void**> v;
    return v;
}
inline void* g_dynamic_shared = nullptr;

#if defined(HARNESS_THREADS)
inline std::mutex& registry_mutex() {
    static std::mutex m;
    return m;
}
#define HARNESS_REGISTRY_LOCK std::lock_guard<std::mutex> reg_lock(registry_mutex())
#else
#define HARNESS_REGISTRY_LOCK
#endif

inline bool register_shared(void* p, std::size_t size) {
    HARNESS_REGISTRY_LOCK;
    std::memset(p, 0xff, size);
    shared_slots().push_back({p, size});
    return true;
}

// `__shared__ T name;` is rewritten to `static auto& name = harness::shared_var<T, ID, A>();`
template <class T, int ID, std::size_t Align>
inline T& shared_var() {
    alignas(Align) static unsigned char storage[sizeof(T)];
    static bool registered = register_shared(storage, sizeof(T));
    (void)registered;
    return *reinterpret_cast<T*>(storage);
}

inline void* register_dynamic(void** ref) {
    HARNESS_REGISTRY_LOCK;
    dynamic_refs().push_back(ref);
    return g_dynamic_shared;
}

// `extern __shared__ T name[];` is rewritten to `static T*& name = harness::dynamic_shared<T>();`
template <class T>
inline T*& dynamic_shared() {
    static T* p = static_cast<T*>(register_dynamic(reinterpret_cast<void**>(&p)));
    return p;
}

constexpr std::size_t kMaxDynamicShared = 256 * 1024;

#if !defined(HARNESS_ASAN)
// A region whose end is followed by an inaccessible page: the launch's dynamic shared
// memory is placed flush against it, so an access past shared_mem bytes faults.
inline char* g_dyn_region = nullptr;
inline char* g_dyn_end = nullptr;
#endif

inline void set_dynamic_shared(std::uint64_t size) {
#if defined(HARNESS_ASAN)
    std::free(g_dynamic_shared);
    g_dynamic_shared = std::malloc(size);  // exact size: ASan reports any access past it
#else
    if (!g_dyn_region) {
        long page = sysconf(_SC_PAGESIZE);
        auto* r = static_cast<char*>(mmap(nullptr, kMaxDynamicShared + page, PROT_READ | PROT_WRITE,
                                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        mprotect(r + kMaxDynamicShared, page, PROT_NONE);
        g_dyn_region = r;
        g_dyn_end = r + kMaxDynamicShared;
    }
    auto end = reinterpret_cast<std::uintptr_t>(g_dyn_end);
    g_dynamic_shared = reinterpret_cast<void*>((end - size) & ~std::uintptr_t(15));
#endif
    HARNESS_REGISTRY_LOCK;
    for (void** ref : dynamic_refs()) *ref = g_dynamic_shared;
}

inline void poison_shared() {
    HARNESS_REGISTRY_LOCK;
    for (auto& s : shared_slots()) std::memset(s.ptr, 0xff, s.size);
    if (g.cfg.shared_mem) std::memset(g_dynamic_shared, 0xff, g.cfg.shared_mem);
}

// ---------------------------------------------------------------- block setup

inline void begin_block(std::uint64_t b) {
    g.current_block = b;
    for (std::uint32_t i = 0; i < g.n; ++i) {
        ThreadState& s = g.t[i];
        s.st = State::Runnable;
        s.op = WarpOp::None;
        s.mask = 0;
        s.site = Site{};
    }
    for (std::uint32_t w = 0; w < g.nwarps; ++w) {
        g.warp_active[w] = __builtin_popcount(warp_lanes_mask(w));
        g.warp_exited[w] = 0;
        g.warp_soft[w] = 0;
    }
    g.live = g.runnable = g.n;
    g.exited = 0;
    g.barrier_count = 0;
#if !defined(HARNESS_THREADS)
    poison_shared();
#endif
}

inline uint3 block_index(std::uint64_t b) {
    return uint3{unsigned(b % g.cfg.grid[0]), unsigned(b / g.cfg.grid[0] % g.cfg.grid[1]),
                 unsigned(b / g.cfg.grid[0] / g.cfg.grid[1])};
}

inline std::uint64_t block_at(std::uint64_t i) { return g.cfg.blocks ? g.cfg.blocks[i] : i; }

inline std::uint64_t block_total() {
    return g.cfg.blocks ? g.cfg.nblocks
                        : std::uint64_t(g.cfg.grid[0]) * g.cfg.grid[1] * g.cfg.grid[2];
}

// ---------------------------------------------------------------- faults
// Faults inside kernel code (illegal addresses, a fiber stack overflow, dynamic shared
// memory overruns) jump back to the launch (fiber mode) or to the faulting simulated
// thread's entry (thread mode) and become launch errors instead of killing the process.
// Sanitizer builds leave faults to the sanitizer.
inline HARNESS_TLS sigjmp_buf g_fault_jump;
inline HARNESS_TLS bool g_fault_armed = false;
inline HARNESS_TLS std::uintptr_t g_fault_addr = 0;
inline HARNESS_TLS int g_fault_signal = 0;

#if defined(SIGRTMIN)
#define kWatchdogSignal (SIGRTMIN + 5)
#else
#define kWatchdogSignal SIGVTALRM
#endif

inline void on_fault(int sig, siginfo_t* info, void*) {
    if (!g_fault_armed) {  // not kernel code: fall back to the default action
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    g_fault_armed = false;
    g_fault_signal = sig;
    g_fault_addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
    siglongjmp(g_fault_jump, 1);
}

struct Stacks {
    char* base = nullptr;
    std::size_t count = 0, size = 0, stride = 0;
};
inline Stacks g_stacks;

inline std::string describe_fault() {
    std::uintptr_t a = g_fault_addr;
    std::string who = g_me ? thread_name(*g_me) : std::string("a thread");
    long page = sysconf(_SC_PAGESIZE);
#if !defined(HARNESS_ASAN)
    auto dyn_end = reinterpret_cast<std::uintptr_t>(g_dyn_end);
    if (g_dyn_end && a >= dyn_end && a < dyn_end + page)
        return fmt("out-of-bounds dynamic shared memory access by ") + who +
               fmt(": byte offset %lu of extern __shared__ memory, but the launch has shared_mem=%lu bytes",
                   (unsigned long)(a - reinterpret_cast<std::uintptr_t>(g_dynamic_shared)),
                   (unsigned long)g.cfg.shared_mem);
#endif
    auto sbase = reinterpret_cast<std::uintptr_t>(g_stacks.base);
    if (g_stacks.base && a >= sbase && a < sbase + g_stacks.count * g_stacks.stride &&
        (a - sbase) % g_stacks.stride < std::uintptr_t(page))
        return "stack overflow in " + who + fmt(" (fiber stacks are %lu bytes; set GPUTORCH_HARNESS_STACK to raise it)",
                                                (unsigned long)g_stacks.size);
    if (g_fault_signal == kWatchdogSignal)
        return fmt("the launch did not finish within %g s: ", g.cfg.timeout_s) + who +
               " has run since its last synchronisation (fibers switch only at __syncthreads, warp operations, "
               "a failed atomicCAS and __nanosleep: a spin-wait on another thread's plain store never ends here)";
    return fmt("illegal memory access (%s) by ", g_fault_signal == SIGBUS ? "SIGBUS" : "SIGSEGV") + who +
           fmt(" at address 0x%lx", (unsigned long)a);
}

struct FaultHandlers {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    struct sigaction old_segv {}, old_bus {}, old_watchdog{};
    stack_t old_alt{};
    bool alt = false;
    bool has_timer = false;
    timer_t timer{};
    // altstack: fiber mode (the handler must not run on a fiber's small stack), which also
    // gets a watchdog timer: a fiber that never synchronises cannot be interrupted otherwise.
    FaultHandlers(bool altstack) : alt(altstack) {
        struct sigaction sa {};
        if (alt) {
            static char altstack_mem[64 * 1024];
            stack_t st{};
            st.ss_sp = altstack_mem;
            st.ss_size = sizeof altstack_mem;
            sigaltstack(&st, &old_alt);
        }
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, &old_segv);
        sigaction(SIGBUS, &sa, &old_bus);
        if (alt && g.cfg.timeout_s > 0) {
            sigaction(kWatchdogSignal, &sa, &old_watchdog);
            // One timer per launching thread, created once and re-armed per launch.
            static thread_local timer_t thread_timer;
            static thread_local bool created = false;
            if (!created) {
                struct sigevent ev {};
                ev.sigev_notify = SIGEV_THREAD_ID;
                ev.sigev_signo = kWatchdogSignal;
                ev._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));  // this thread, not Python's others
                created = timer_create(CLOCK_MONOTONIC, &ev, &thread_timer) == 0;
            }
            if (created) {
                has_timer = true;
                timer = thread_timer;
                struct itimerspec its {};
                its.it_value.tv_sec = static_cast<time_t>(g.cfg.timeout_s);
                its.it_value.tv_nsec = static_cast<long>((g.cfg.timeout_s - double(its.it_value.tv_sec)) * 1e9);
                timer_settime(timer, 0, &its, nullptr);
            }
        }
    }
    ~FaultHandlers() {
        if (has_timer) {
            struct itimerspec off {};
            timer_settime(timer, 0, &off, nullptr);  // disarm
        }
        if (alt && g.cfg.timeout_s > 0) sigaction(kWatchdogSignal, &old_watchdog, nullptr);
        sigaction(SIGSEGV, &old_segv, nullptr);
        sigaction(SIGBUS, &old_bus, nullptr);
        if (alt) sigaltstack(&old_alt, nullptr);
    }
#else
    FaultHandlers(bool) {}
#endif
};

#if !defined(HARNESS_THREADS)
// ---------------------------------------------------------------- fiber mode

inline void ensure_stacks(std::uint32_t count, std::size_t size) {
    long page = sysconf(_SC_PAGESIZE);
    size = (size + page - 1) / page * page;
    if (g_stacks.base && g_stacks.count >= count && g_stacks.size == size) return;
    if (g_stacks.base) munmap(g_stacks.base, g_stacks.count * g_stacks.stride);
    std::size_t stride = size + page;  // one inaccessible guard page below each stack
    auto* base = static_cast<char*>(mmap(nullptr, count * stride, PROT_READ | PROT_WRITE,
                                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
    if (base == MAP_FAILED) {
        g_stacks = {};
        return;
    }
    for (std::uint32_t i = 0; i < count; ++i) mprotect(base + i * stride, page, PROT_NONE);
    g_stacks = {base, count, size, stride};
}

inline void fiber_main(void* arg) {
    (void)arg;
    g.body(g.args);
    thread_exit(*g_me);
    FiberContext dead;
    fiber_switch(dead, g.scheduler);
    __builtin_unreachable();
}

inline int run(const LaunchConfig& cfg) {
    ensure_stacks(g.n, cfg.stack_size ? cfg.stack_size : 128 * 1024);
    if (!g_stacks.base) {
        g.error = "cannot allocate fiber stacks";
        return 1;
    }
    g.fibers.resize(g.n);
    FaultHandlers handlers(true);
    if (sigsetjmp(g_fault_jump, 1)) {
        record_failure(describe_fault());
    } else {
        g_fault_armed = true;
        std::uint64_t total = block_total();
        for (std::uint64_t i = 0; i < total && !g.failed; ++i) {
            std::uint64_t b = block_at(i);
            blockIdx = block_index(b);
            begin_block(b);
            for (std::uint32_t k = 0; k < g.n; ++k)
                fiber_init(g.fibers[k], g_stacks.base + k * g_stacks.stride + (g_stacks.stride - g_stacks.size),
                           g_stacks.size, fiber_main, nullptr);
            while (g.live > 0 && !g.failed) {
                for (std::uint32_t k = 0; k < g.n && !g.failed; ++k) {
                    ThreadState& s = g.t[k];
                    if (s.st != State::Runnable) continue;
                    g_me = &s;
                    threadIdx = s.idx;
                    fiber_switch(g.scheduler, g.fibers[k]);
                }
            }
        }
    }
    g_fault_armed = false;
    g_me = nullptr;
    return g.failed ? 1 : 0;
}

#else
// ---------------------------------------------------------------- thread mode

inline char g_start_token, g_end_token;  // happens-before: block setup -> threads -> next block

inline void worker(std::uint32_t k) {
    ThreadState& me = g.t[k];
    g_me = &me;
    threadIdx = me.idx;
    std::uint64_t seen = 0;
    for (;;) {
        {
            auto lk = lock();
            lk.wait(g.cv_start, [&] { return g.generation != seen || g.stop; });
            if (g.stop) return;
            seen = g.generation;
            blockIdx = block_index(g.current_block);
        }
        HARNESS_HB_ACQUIRE(&g_start_token);
        if (sigsetjmp(g_fault_jump, 1)) {
            auto lk = lock();
            record_failure(describe_fault());
        } else {
            g_fault_armed = true;
            try {
                g.body(g.args);
                g_fault_armed = false;
                HARNESS_HB_RELEASE(&g_end_token);
                thread_exit(me);
            } catch (Abort&) {
            }
        }
        g_fault_armed = false;
        auto lk = lock();
        if (--g.busy == 0) g.cv_main.notify_one();
    }
}

inline int run(const LaunchConfig& cfg) {
    FaultHandlers handlers(false);
    std::vector<std::thread> workers;
    workers.reserve(g.n);
    for (std::uint32_t k = 0; k < g.n; ++k) workers.emplace_back(worker, k);
    std::uint64_t total = block_total();
    auto limit = std::chrono::duration<double>(cfg.timeout_s > 0 ? cfg.timeout_s : 300.0);
    for (std::uint64_t i = 0; i < total && !g.failed; ++i) {
        // All threads are idle between blocks: set up shared memory outside the lock.
        HARNESS_HB_ACQUIRE(&g_end_token);
        poison_shared();
        HARNESS_HB_RELEASE(&g_start_token);
        auto lk = lock();
        begin_block(block_at(i));
        g.busy = g.n;
        ++g.generation;
        g.cv_start.notify_all();
        if (!lk.wait_for(g.cv_main, limit, [] { return g.busy == 0; })) {
            std::fprintf(stderr, "harness: %s: the launch did not finish within %.0f s (a thread spins forever?)\n",
                         block_name().c_str(), limit.count());
            std::fflush(stderr);
            std::abort();
        }
    }
    {
        auto lk = lock();
        g.stop = true;
        g.cv_start.notify_all();
    }
    for (auto& w : workers) w.join();
    return g.failed ? 1 : 0;
}
#endif

inline int launch(void (*body)(void**), void** args, const LaunchConfig* cfg, char* err, std::uint64_t errlen) {
    g.cfg = *cfg;
    g.body = body;
    g.args = args;
    g.failed = false;
    g.error.clear();
    g.n = cfg->block[0] * cfg->block[1] * cfg->block[2];
    g.nwarps = (g.n + 31) / 32;
#if defined(HARNESS_THREADS)
    g.t = std::vector<ThreadState>(g.n);
    g.stop = false;
    g.generation = 0;
#else
    if (g.t.size() != g.n) g.t = std::vector<ThreadState>(g.n);
#endif
    g.warp_active.assign(g.nwarps, 0);
    g.warp_exited.assign(g.nwarps, 0);
    g.warp_soft.assign(g.nwarps, 0);
    for (std::uint32_t i = 0; i < g.n; ++i) {
        g.t[i].tid = i;
        g.t[i].idx = uint3{i % cfg->block[0], i / cfg->block[0] % cfg->block[1], i / cfg->block[0] / cfg->block[1]};
    }
    blockDim = dim3(cfg->block[0], cfg->block[1], cfg->block[2]);
    gridDim = dim3(cfg->grid[0], cfg->grid[1], cfg->grid[2]);
    set_dynamic_shared(cfg->shared_mem);
    int rc = run(*cfg);
    if (rc && err && errlen) {
        std::snprintf(err, errlen, "%s", g.error.c_str());
    }
    return rc;
}

// ---------------------------------------------------------------- kernel entry and signature

// Calls kernel f with the launch's arguments: a[i] points at the value of parameter i.
template <class... P, std::size_t... I>
inline void invoke_with(void (*f)(P...), void** a, std::index_sequence<I...>) {
    f(*static_cast<std::remove_cv_t<std::remove_reference_t<P>>*>(a[I])...);
}
template <class... P>
inline void invoke(void (*f)(P...), void** a) {
    invoke_with(f, a, std::index_sequence_for<P...>{});
}

// A parameter type as the Python side checks it: "i4" (int), "u8", "f4", "f2" (__half),
// "b1" (bool), "h2" (__half2), "s<size>" (other by-value types), "p:<pointee>" /
// "P:<pointee>" (pointer / pointer to const), "v" (void pointee).
template <class T>
inline std::string type_code() {
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_pointer_v<U>) {
        using E = std::remove_pointer_t<U>;
        return (std::is_const_v<E> ? "P:" : "p:") + type_code<E>();
    } else if constexpr (std::is_void_v<U>) {
        return "v";
    } else if constexpr (std::is_same_v<U, bool>) {
        return "b1";
    } else if constexpr (std::is_same_v<U, __half>) {
        return "f2";
    } else if constexpr (std::is_same_v<U, __half2>) {
        return "h2";
    } else if constexpr (std::is_floating_point_v<U>) {
        return "f" + std::to_string(sizeof(U));
    } else if constexpr (std::is_integral_v<U>) {
        return (std::is_signed_v<U> ? "i" : "u") + std::to_string(sizeof(U));
    } else if constexpr (std::is_enum_v<U>) {
        return type_code<std::underlying_type_t<U>>();
    } else {
        return "s" + std::to_string(sizeof(U));
    }
}

template <class... P>
inline const char* signature(void (*)(P...)) {
    static const std::string s = [] {
        std::string r;
        ((r += type_code<std::remove_reference_t<P>>() + ";"), ...);
        return r;
    }();
    return s.c_str();
}

}  // namespace harness

HARNESS_EXPORT int harness_abi_version() { return 1; }
