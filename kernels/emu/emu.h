// emu.h: a CPU emulation of the CUDA built-ins that agg.cu uses, so that the
// kernels' source runs on any machine (CI has no GPU): 256 std::threads play
// the threads of a block, the blocks of a grid run one after another (so the
// kernels' __shared__ statics are per block), warp shuffles and __syncthreads
// are barriers. Include it before agg.cu (g++ -std=c++20 -include emu.h).
#pragma once
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>
#include <functional>
#include <memory>

#define __device__
#define __global__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(x)
#define __shared__ static
#define __restrict__

struct dim3 { unsigned x = 0, y = 1, z = 1; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
inline thread_local dim3 threadIdx, blockIdx;
inline dim3 gridDim, blockDim;

struct BlockSync {
  std::barrier<> block{256};
  std::unique_ptr<std::barrier<>> warp[8];
  uint64_t xbuf[8][32];
  BlockSync() { for (auto& w : warp) w = std::make_unique<std::barrier<>>(32); }
};
inline BlockSync* g_sync;

inline void __syncthreads() { g_sync->block.arrive_and_wait(); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

template <typename T> inline T __shfl_down_sync(unsigned, T v, int d) {
  static_assert(sizeof(T) == 8);
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  uint64_t u; std::memcpy(&u, &v, 8);
  g_sync->xbuf[warp][lane] = u;
  g_sync->warp[warp]->arrive_and_wait();
  uint64_t o = lane + d < 32 ? g_sync->xbuf[warp][lane + d] : u;
  g_sync->warp[warp]->arrive_and_wait();
  T r; std::memcpy(&r, &o, 8);
  return r;
}
template <typename T> inline T __ldg(const T* p) { return *p; }
template <typename T> inline T __ldcg(const T* p) { return *(const volatile T*)p; }
template <typename T> inline void __stcg(T* p, T v) { *(volatile T*)p = v; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned sh) {
  return (unsigned)((((uint64_t)hi << 32) | lo) >> (sh & 31));
}
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline long long __double_as_longlong(double d) { long long i; std::memcpy(&i, &d, 8); return i; }
inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
using std::isfinite;
using std::isinf;

// emu_launch runs kernel k on a grid of `grid` blocks of 256 threads.
template <typename... A>
inline void emu_launch(void (*k)(A...), unsigned grid, A... args) {
  gridDim.x = grid;
  blockDim.x = 256;
  BlockSync sync;
  g_sync = &sync;
  std::barrier<> done(256);
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < 256; t++)
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
