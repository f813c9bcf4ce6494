// emu.h: a CPU emulation of the CUDA built-ins that the kernels of this
// folder's parent (agg.cu, ladder.cu) use, so that their source runs on a
// machine without a GPU (CI has none).
//
// Model: one std::thread per CUDA thread of a block (any block size that is
// a multiple of 32, up to 1024); the blocks of a grid run one after another,
// so the kernels' __shared__ statics are per block and a block sees every
// write of the blocks before it. __syncthreads is a block-wide barrier;
// __syncwarp and the warp shuffles are barriers of the warp's 32 threads.
// The threads really run independently, as on Volta and later GPUs: code
// that assumes the lanes of a warp run in lockstep fails here too.
//
// Limits: warp-level calls take the full-warp mask only (every lane of the
// warp must make the call, as the kernels do); shuffles move values of 4 or
// 8 bytes. Include it first (harnesses #include it before the .cu file);
// build with g++ -std=c++20 -pthread.
#pragma once
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
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
inline thread_local dim3 threadIdx, blockIdx;
inline dim3 gridDim, blockDim;

constexpr unsigned kEmuWarp = 32;
constexpr unsigned kEmuMaxBlock = 1024;

// BlockSync holds the barriers of one block of n threads and the exchange
// slots of its warps' shuffles.
struct BlockSync {
  std::barrier<> block;
  std::vector<std::unique_ptr<std::barrier<>>> warp;
  uint64_t xbuf[kEmuMaxBlock / kEmuWarp][kEmuWarp];
  explicit BlockSync(unsigned n) : block(n) {
    for (unsigned i = 0; i < n / kEmuWarp; i++) warp.push_back(std::make_unique<std::barrier<>>(kEmuWarp));
  }
};
inline BlockSync* g_sync;

inline void __syncthreads() { g_sync->block.arrive_and_wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) { g_sync->warp[threadIdx.x / kEmuWarp]->arrive_and_wait(); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// emu_shuffle is a warp shuffle: lane l gets lane from(l)'s value, its own
// where from(l) is outside the warp.
template <typename T, typename F> inline T emu_shuffle(T v, F from) {
  static_assert(std::is_trivially_copyable_v<T> && (sizeof(T) == 4 || sizeof(T) == 8),
                "warp shuffles move 4- or 8-byte values");
  const unsigned lane = threadIdx.x % kEmuWarp, warp = threadIdx.x / kEmuWarp;
  uint64_t u = 0;
  std::memcpy(&u, &v, sizeof(T));
  g_sync->xbuf[warp][lane] = u;
  g_sync->warp[warp]->arrive_and_wait();
  const int src = from((int)lane);
  const uint64_t o = src >= 0 && src < (int)kEmuWarp ? g_sync->xbuf[warp][src] : u;
  g_sync->warp[warp]->arrive_and_wait();  // no lane overwrites its slot before all have read
  T r;
  std::memcpy(&r, &o, sizeof(T));
  return r;
}

// __shfl_down_sync: lane l gets lane l + d's value (its own past the warp).
template <typename T> inline T __shfl_down_sync(unsigned, T v, int d) {
  return emu_shuffle(v, [d](int l) { return l + d; });
}

// __shfl_up_sync: lane l gets lane l - d's value (its own below d).
template <typename T> inline T __shfl_up_sync(unsigned, T v, int d) {
  return emu_shuffle(v, [d](int l) { return l - d; });
}

// __ballot_sync: bit k of the result is lane k's predicate.
inline unsigned __ballot_sync(unsigned, int pred) {
  const unsigned lane = threadIdx.x % kEmuWarp, warp = threadIdx.x / kEmuWarp;
  g_sync->xbuf[warp][lane] = pred != 0;
  g_sync->warp[warp]->arrive_and_wait();
  unsigned m = 0;
  for (unsigned k = 0; k < kEmuWarp; k++) m |= (unsigned)g_sync->xbuf[warp][k] << k;
  g_sync->warp[warp]->arrive_and_wait();  // no lane overwrites its slot before all have read
  return m;
}

// __match_any_sync: the lanes whose value equals this lane's.
inline unsigned __match_any_sync(unsigned, int v) {
  const unsigned lane = threadIdx.x % kEmuWarp, warp = threadIdx.x / kEmuWarp;
  g_sync->xbuf[warp][lane] = (uint64_t)(uint32_t)v;
  g_sync->warp[warp]->arrive_and_wait();
  unsigned m = 0;
  for (unsigned k = 0; k < kEmuWarp; k++) m |= (unsigned)(g_sync->xbuf[warp][k] == (uint64_t)(uint32_t)v) << k;
  g_sync->warp[warp]->arrive_and_wait();  // no lane overwrites its slot before all have read
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
  gridDim.x = grid;
  blockDim.x = block;
  BlockSync sync(block);
  g_sync = &sync;
  std::barrier<> done(block);
  std::vector<std::thread> ts;
  ts.reserve(block);
  for (unsigned t = 0; t < block; t++)
    ts.emplace_back([&, t] {
      threadIdx.x = t;
      for (unsigned b = 0; b < grid; b++) {
        blockIdx.x = b;
        k(args...);
        done.arrive_and_wait();  // the next block starts when this one is over
      }
    });
  for (auto& t : ts) t.join();
}

// emu_launch_shared is emu_launch with `shared` bytes of dynamic shared
// memory, filled with garbage before the launch (a GPU leaves it so).
template <typename... A, typename... B>
inline void emu_launch_shared(void (*k)(A...), unsigned grid, unsigned block, size_t shared, B... args) {
  g_emu_shared.assign((shared + 7) / 8 + 1, 0x5a5a5a5a5a5a5a5aULL);
  emu_launch(k, grid, block, args...);
}
