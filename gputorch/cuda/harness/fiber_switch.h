// Cooperative fibers for the CPU execution harness: one stack per simulated CUDA thread.
//
// x86-64: a hand-written context switch (callee-saved registers, MXCSR and the x87
// control word are saved on the fiber's own stack; switching is a stack-pointer swap,
// about 10 instructions). Elsewhere, or with -DHARNESS_UCONTEXT, ucontext's
// swapcontext is used instead (it also saves the signal mask with a system call, which
// makes it roughly 50x slower per switch; see the harness package docstring for figures).
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) && !defined(HARNESS_UCONTEXT)
#define HARNESS_ASM_FIBERS 1

// harness_fiber_swap(&save_sp, load_sp): push the callee-saved state, store the stack
// pointer into *save_sp, continue on load_sp by popping the state saved there.
extern "C" void harness_fiber_swap(void** save_sp, void* load_sp);
// First instruction of a new fiber: calls entry(arg) with entry in rbx and arg in r12.
extern "C" void harness_fiber_start();

asm(R"(
    .text
    .p2align 4
    .globl harness_fiber_swap
    .hidden harness_fiber_swap
    .type harness_fiber_swap, @function
harness_fiber_swap:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size harness_fiber_swap, .-harness_fiber_swap

    .p2align 4
    .globl harness_fiber_start
    .hidden harness_fiber_start
    .type harness_fiber_start, @function
harness_fiber_start:
    movq %r12, %rdi
    callq *%rbx
    ud2
    .size harness_fiber_start, .-harness_fiber_start
)");

namespace harness {

struct FiberContext {
    void* sp = nullptr;
};

// Prepare `ctx` so that switching to it runs entry(arg) on the stack [base, base+size).
inline void fiber_init(FiberContext& ctx, char* base, std::size_t size, void (*entry)(void*), void* arg) {
    auto top = reinterpret_cast<std::uintptr_t>(base + size) & ~std::uintptr_t(15);
    auto* x = reinterpret_cast<std::uint64_t*>(top - 16);   // rsp after the final `ret`, 16-aligned
    std::uint32_t mxcsr;
    std::uint16_t fpucw;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(fpucw));
    x[-1] = reinterpret_cast<std::uint64_t>(&harness_fiber_start);  // return address
    x[-2] = 0;                                                       // rbp: ends frame chains
    x[-3] = reinterpret_cast<std::uint64_t>(entry);                  // rbx
    x[-4] = reinterpret_cast<std::uint64_t>(arg);                    // r12
    x[-5] = 0;                                                       // r13
    x[-6] = 0;                                                       // r14
    x[-7] = 0;                                                       // r15
    x[-8] = static_cast<std::uint64_t>(mxcsr) | (static_cast<std::uint64_t>(fpucw) << 32);
    x[0] = 0;                                                        // fake caller frame
    ctx.sp = &x[-8];
}

inline void fiber_switch(FiberContext& from, FiberContext& to) { harness_fiber_swap(&from.sp, to.sp); }

}  // namespace harness

#else  // ucontext fallback
#include <ucontext.h>

namespace harness {

struct FiberContext {
    ucontext_t uc;
};

inline void fiber_init(FiberContext& ctx, char* base, std::size_t size, void (*entry)(void*), void* arg) {
    getcontext(&ctx.uc);
    ctx.uc.uc_stack.ss_sp = base;
    ctx.uc.uc_stack.ss_size = size;
    ctx.uc.uc_link = nullptr;
    // makecontext passes int arguments: split the pointer in two halves.
    auto bits = reinterpret_cast<std::uintptr_t>(arg);
    auto fn = reinterpret_cast<std::uintptr_t>(entry);
    makecontext(&ctx.uc, reinterpret_cast<void (*)()>(+[](unsigned a0, unsigned a1, unsigned f0, unsigned f1) {
                    auto e = reinterpret_cast<void (*)(void*)>((std::uintptr_t(f1) << 32) | f0);
                    e(reinterpret_cast<void*>((std::uintptr_t(a1) << 32) | a0));
                }),
                4, unsigned(bits), unsigned(bits >> 32), unsigned(fn), unsigned(fn >> 32));
}

inline void fiber_switch(FiberContext& from, FiberContext& to) { swapcontext(&from.uc, &to.uc); }

}  // namespace harness
#endif
