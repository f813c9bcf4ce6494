// emu.h: a CPU emulation of the CUDA built-ins that the kernels of this
// folder's parent (agg.cu, ladder.cu) use, so that their source runs on a
// machine without a GPU (CI has none).
//
// Model: one fiber (a stack of its own, switched to and from in user space
// on the calling OS thread) per CUDA thread of a block (any block size that
// is a multiple of 32, up to 1024); the blocks of a grid run one after
// another, so the kernels' __shared__ statics are per block and a block sees
// every write of the blocks before it. __syncthreads is a block-wide
// barrier; __syncwarp and the warp-level calls (shuffles, ballots, matches)
// are barriers of the warp's 32 threads.
//
// A thread runs until it waits at a barrier; the scheduler then runs the
// next one. It goes round the block's warps, in order one round and in
// reverse order the next, and runs each warp as far as it can (until its
// threads wait at a barrier that other warps must reach, or return) before
// the next, the warp's lanes in order one pass and in reverse order the
// next. So the threads do not run in lockstep, as on Volta and later GPUs:
// code that assumes the lanes of a warp do (a lane reading what another
// writes with no barrier between) reads a stale value in one order or the
// other, and so does code that assumes the warps of a block keep pace (a
// warp reading shared memory that another may already have overwritten);
// both fail here. Threads that wait at barriers the others never reach (a
// __syncthreads in a branch not every thread takes) are reported as a
// deadlock, and the process aborts. Fibers, not OS threads: a barrier is a
// switch in user space, not futex wake-ups of up to 1024 threads, so a
// harness runs fifty times faster, and every run takes the same steps.
//
// Limits: warp-level calls take the full-warp mask only (every lane of the
// warp must make the call, as the kernels do); shuffles move values of 4 or
// 8 bytes; launches from several OS threads run one at a time (the emulated
// threads' state is global); a variable of each emulated thread is an
// emu_local, not a C++ thread_local (every fiber runs on the launching OS
// thread). Include it first (harnesses #include it before the .cu file);
// build with g++ -std=c++20 -pthread.
#pragma once
#include <sys/mman.h>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <memory>  // (and <thread> below: the headers that use __noinline__ come before its macro)
#include <thread>
#include <type_traits>
#include <vector>

#define __device__
#define __global__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static
#define __restrict__

struct dim3 { unsigned x = 0, y = 1, z = 1; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(16) int4 { int x, y, z, w; };
// threadIdx is the running emulated thread's (the scheduler sets it at
// every switch), blockIdx its block's.
inline dim3 threadIdx, blockIdx;
inline dim3 gridDim, blockDim;

constexpr unsigned kEmuWarp = 32;
constexpr unsigned kEmuMaxBlock = 1024;

// emu_local is a variable of each emulated thread (what a C++ thread_local
// was when every CUDA thread was an OS thread): *v is the running thread's.
// Every launch starts with them value-initialized.
template <typename T> struct emu_local;

// emu_local_resets are the functions that clear the emu_locals at a launch.
inline std::vector<std::function<void()>>& emu_local_resets() {
  static std::vector<std::function<void()>> r;
  return r;
}

template <typename T> struct emu_local {
  T v[kEmuMaxBlock]{};
  emu_local() {
    emu_local_resets().push_back([this] {
      for (T& x : v) x = T{};
    });
  }
  emu_local(const emu_local&) = delete;
  T& operator*() { return v[threadIdx.x]; }
};

// EmuBarrier is a barrier of n emulated threads: gen counts its releases.
struct EmuBarrier {
  unsigned n = 0, arrived = 0, gen = 0;
};

// EmuContext is a suspended context: the launcher's or an emulated
// thread's. On x86-64 it is a stack pointer, the callee-saved registers
// pushed below it (emu_switch: a switch costs a few nanoseconds); elsewhere a
// ucontext_t (swapcontext, which also makes a system call).
#if defined(__x86_64__)
struct EmuContext {
  void* sp = nullptr;
};

// emu_switch saves the running context in *from and resumes to.
__attribute__((naked, noinline)) inline void emu_switch_sp(void** /*from*/, void* /*to*/) {
  asm volatile(
      "pushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n\t"
      "movq %rsp, (%rdi)\n\tmovq %rsi, %rsp\n\t"
      "popq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n\tret\n\t");
}
inline void emu_switch(EmuContext* from, EmuContext* to) { emu_switch_sp(&from->sp, to->sp); }

// emu_start makes c a context that calls entry on the stack [lo, lo+n):
// entry is reached by emu_switch's ret, the stack aligned as at a call, and
// never returns.
inline void emu_start(EmuContext* c, char* lo, size_t n, void (*entry)()) {
  void** sp = (void**)((uintptr_t)(lo + n) & ~(uintptr_t)15);
  *--sp = nullptr;          // entry's return address (it never returns)
  *--sp = (void*)entry;     // emu_switch's ret
  for (int r = 0; r < 6; r++) *--sp = nullptr;  // rbp rbx r12 r13 r14 r15
  c->sp = sp;
}
#else
struct EmuContext {
  ucontext_t uc;
};
inline void emu_switch(EmuContext* from, EmuContext* to) { swapcontext(&from->uc, &to->uc); }
inline void emu_start(EmuContext* c, char* lo, size_t n, void (*entry)()) {
  getcontext(&c->uc);
  c->uc.uc_stack.ss_sp = lo;
  c->uc.uc_stack.ss_size = n;
  c->uc.uc_link = nullptr;  // (entry never returns)
  makecontext(&c->uc, entry, 0);
}
#endif

// EmuFiber is an emulated thread: its context, whether its kernel returned.
struct EmuFiber {
  EmuContext ctx;
  bool done = false;
};

// EmuSched runs the threads of one block: fibers[cur] is running, main is
// the launcher's context; progress counts arrivals and returns (a round
// without any is a deadlock).
struct EmuSched {
  EmuContext main;
  std::vector<EmuFiber> fibers;
  unsigned cur = 0;
  unsigned long long progress = 0;
  EmuBarrier block;
  std::vector<EmuBarrier> warp;
  uint64_t xbuf[kEmuMaxBlock / kEmuWarp][kEmuWarp];
  std::function<void()> kernel;  // the launched kernel with its arguments
};
inline EmuSched* g_sched;

// kEmuStack is the stack of each emulated thread (address space reserved
// once, pages committed as they are touched), below it a guard page.
constexpr size_t kEmuStack = 256 << 10, kEmuGuard = 4096;

// emu_stacks is the stacks' memory, for kEmuMaxBlock threads.
inline char* emu_stacks() {
  static char* base = [] {
    const size_t n = (kEmuStack + kEmuGuard) * kEmuMaxBlock;
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      std::perror("emu: the threads' stacks");
      std::abort();
    }
    for (unsigned t = 0; t < kEmuMaxBlock; t++) mprotect((char*)p + t * (kEmuStack + kEmuGuard), kEmuGuard, PROT_NONE);
    return (char*)p;
  }();
  return base;
}

// emu_yield switches from the running thread back to the scheduler.
inline void emu_yield() { emu_switch(&g_sched->fibers[g_sched->cur].ctx, &g_sched->main); }

// emu_thread_main is the body of every emulated thread: the kernel, then
// back to the scheduler for good.
[[noreturn]] inline void emu_thread_main() {
  g_sched->kernel();
  g_sched->fibers[g_sched->cur].done = true;
  g_sched->progress++;
  emu_yield();
  std::abort();  // (a finished thread is never resumed)
}

// emu_arrive waits at barrier b until all its threads have arrived.
inline void emu_arrive(EmuBarrier& b) {
  g_sched->progress++;
  const unsigned gen = b.gen;
  if (++b.arrived == b.n) {
    b.arrived = 0;
    b.gen++;
  }
  do emu_yield();  // (the last to arrive too: the others run first this round)
  while (b.gen == gen);
}

inline void __syncthreads() { emu_arrive(g_sched->block); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu_arrive(g_sched->warp[threadIdx.x / kEmuWarp]); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// emu_shuffle is a warp shuffle: lane l gets lane from(l)'s value, its own
// where from(l) is outside the warp.
template <typename T, typename F> inline T emu_shuffle(T v, F from) {
  static_assert(std::is_trivially_copyable_v<T> && (sizeof(T) == 4 || sizeof(T) == 8),
                "warp shuffles move 4- or 8-byte values");
  const unsigned lane = threadIdx.x % kEmuWarp, warp = threadIdx.x / kEmuWarp;
  uint64_t u = 0;
  std::memcpy(&u, &v, sizeof(T));
  g_sched->xbuf[warp][lane] = u;
  __syncwarp();
  const int src = from((int)lane);
  const uint64_t o = src >= 0 && src < (int)kEmuWarp ? g_sched->xbuf[warp][src] : u;
  __syncwarp();  // no lane overwrites its slot before all have read
  T r;
  std::memcpy(&r, &o, sizeof(T));
  return r;
}

// __shfl_down_sync: lane l gets lane l + d's value (its own past the warp).
template <typename T> inline T __shfl_down_sync(unsigned, T v, int d) {
  return emu_shuffle(v, [d](int l) { return l + d; });
}

// __shfl_sync: lane l gets lane src's value (src taken modulo the warp).
template <typename T> inline T __shfl_sync(unsigned, T v, int src) {
  return emu_shuffle(v, [src](int) { return src & (int)(kEmuWarp - 1); });
}

// __shfl_up_sync: lane l gets lane l - d's value (its own below d).
template <typename T> inline T __shfl_up_sync(unsigned, T v, int d) {
  return emu_shuffle(v, [d](int l) { return l - d; });
}

// __ballot_sync: bit k of the result is lane k's predicate.
inline unsigned __ballot_sync(unsigned, int pred) {
  const unsigned lane = threadIdx.x % kEmuWarp, warp = threadIdx.x / kEmuWarp;
  g_sched->xbuf[warp][lane] = pred != 0;
  __syncwarp();
  unsigned m = 0;
  for (unsigned k = 0; k < kEmuWarp; k++) m |= (unsigned)g_sched->xbuf[warp][k] << k;
  __syncwarp();  // no lane overwrites its slot before all have read
  return m;
}

// __match_any_sync: the lanes whose value equals this lane's.
inline unsigned __match_any_sync(unsigned, int v) {
  const unsigned lane = threadIdx.x % kEmuWarp, warp = threadIdx.x / kEmuWarp;
  g_sched->xbuf[warp][lane] = (uint64_t)(uint32_t)v;
  __syncwarp();
  unsigned m = 0;
  for (unsigned k = 0; k < kEmuWarp; k++) m |= (unsigned)(g_sched->xbuf[warp][k] == (uint64_t)(uint32_t)v) << k;
  __syncwarp();  // no lane overwrites its slot before all have read
  return m;
}

template <typename T> inline T __ldg(const T* p) { return *p; }
template <typename T> inline T __ldcg(const T* p) { return *(const volatile T*)p; }
template <typename T> inline void __stcg(T* p, T v) { *(volatile T*)p = v; }

inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
  return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}

inline int atomicAdd(int* p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }

// atomic_minmax is atomicMin (less) or atomicMax of any integer type.
template <typename T> inline T atomic_minmax(T* p, T v, bool less) {
  T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while ((less ? v < old : v > old) &&
         !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  return old;
}
inline long long atomicMin(long long* p, long long v) { return atomic_minmax(p, v, true); }
inline long long atomicMax(long long* p, long long v) { return atomic_minmax(p, v, false); }
inline unsigned long long atomicMin(unsigned long long* p, unsigned long long v) { return atomic_minmax(p, v, true); }
inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v) { return atomic_minmax(p, v, false); }

inline unsigned atomicCAS(unsigned* p, unsigned cmp, unsigned v) {
  __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return cmp;
}
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long cmp, unsigned long long v) {
  __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return cmp;
}
inline unsigned atomicExch(unsigned* p, unsigned v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicOr(unsigned* p, unsigned v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicMax(unsigned* p, unsigned v) {
  unsigned old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while (old < v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  return old;
}

inline unsigned atomicMin(unsigned* p, unsigned v) {
  unsigned old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while (old > v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  return old;
}

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned sh) {
  return (unsigned)((((uint64_t)hi << 32) | lo) >> (sh & 31));
}
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline long long __double_as_longlong(double d) { long long i; std::memcpy(&i, &d, 8); return i; }
inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
using std::isfinite;
using std::isinf;

// g_emu_shared is the dynamic shared memory of the running block (the
// kernels' extern __shared__ array; emu_launch_shared sizes it).
inline std::vector<unsigned long long> g_emu_shared;
inline unsigned long long* emu_dynamic_shared() { return g_emu_shared.data(); }

// emu_launch runs kernel k on a grid of `grid` blocks of `block` threads,
// like k<<<grid, block>>>(args...) followed by a synchronize. An invalid
// configuration (no blocks, a block size that is not a multiple of 32 in
// [32, 1024]) aborts, as the launch would fail on a GPU.
template <typename... A, typename... B>
inline void emu_launch(void (*k)(A...), unsigned grid, unsigned block, B... args) {
  if (grid == 0 || block == 0 || block % kEmuWarp != 0 || block > kEmuMaxBlock) {
    std::fprintf(stderr, "emu_launch: invalid configuration: grid %u, block %u\n", grid, block);
    std::abort();
  }
  static std::mutex one;  // one launch at a time: the emulated threads' state is global
  std::lock_guard<std::mutex> hold(one);
  gridDim.x = grid;
  blockDim.x = block;
  for (auto& reset : emu_local_resets()) reset();
  EmuSched s;
  s.block.n = block;
  s.warp.resize(block / kEmuWarp);
  for (auto& w : s.warp) w.n = kEmuWarp;
  s.fibers.resize(block);
  s.kernel = [&] { k(args...); };
  g_sched = &s;
  char* stacks = emu_stacks();
  for (unsigned b = 0; b < grid; b++) {  // the next block starts when this one is over
    blockIdx.x = b;
    for (unsigned t = 0; t < block; t++) {
      s.fibers[t].done = false;
      emu_start(&s.fibers[t].ctx, stacks + t * (kEmuStack + kEmuGuard) + kEmuGuard, kEmuStack, emu_thread_main);
    }
    unsigned running = block;
    const unsigned warps = block / kEmuWarp;
    for (unsigned round = 0; running > 0; round++) {
      const unsigned long long before = s.progress;
      for (unsigned i = 0; i < warps; i++) {
        const unsigned w = round % 2 == 0 ? i : warps - 1 - i;
        // The warp runs as far as it can before the next one starts.
        for (unsigned pass = round;; pass++) {
          const unsigned long long start = s.progress;
          for (unsigned j = 0; j < kEmuWarp; j++) {
            const unsigned t = w * kEmuWarp + (pass % 2 == 0 ? j : kEmuWarp - 1 - j);
            if (s.fibers[t].done) continue;
            s.cur = threadIdx.x = t;
            emu_switch(&s.main, &s.fibers[t].ctx);
            if (s.fibers[t].done) running--;
          }
          if (s.progress == start) break;
        }
      }
      if (running > 0 && s.progress == before) {
        std::fprintf(stderr, "emu_launch: deadlock in block %u of %u: %u of its %u threads wait at barriers the others do not reach\n",
                     b, grid, running, block);
        std::abort();
      }
    }
  }
  g_sched = nullptr;
}

// emu_launch_shared is emu_launch with `shared` bytes of dynamic shared
// memory, filled with garbage before the launch (a GPU leaves it so).
template <typename... A, typename... B>
inline void emu_launch_shared(void (*k)(A...), unsigned grid, unsigned block, size_t shared, B... args) {
  g_emu_shared.assign((shared + 7) / 8 + 1, 0x5a5a5a5a5a5a5a5aULL);
  emu_launch(k, grid, block, args...);
}
