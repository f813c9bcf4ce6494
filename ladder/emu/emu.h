// emu.h: a CPU emulation of the CUDA built-ins that kernels/ladder.cu uses, so
// that its kernels run on a machine without a GPU: one std::thread per CUDA
// thread of a block (any block size that is a multiple of 32), the blocks of
// a grid one after another (so __shared__ statics are per block), barriers
// for __syncthreads, __syncwarp and warp shuffles. The threads really run
// independently, as on Volta and later GPUs: code that assumes the lanes of
// a warp run in lockstep fails here too. Include it first
// (g++ -std=c++20 -include emu.h).
#pragma once
#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>
#include <memory>
#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__ static
struct dim3 { unsigned x = 0, y = 1, z = 1; };
struct alignas(16) int4 { int x, y, z, w; };
inline thread_local dim3 threadIdx, blockIdx;
inline dim3 gridDim, blockDim;
struct BlockSync {
  std::barrier<> block;
  std::vector<std::unique_ptr<std::barrier<>>> warp;
  uint64_t xbuf[32][32];
  explicit BlockSync(unsigned n) : block(n) { for (unsigned i = 0; i < n / 32; i++) warp.push_back(std::make_unique<std::barrier<>>(32)); }
};
inline BlockSync* g_sync;
inline void __syncthreads() { g_sync->block.arrive_and_wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) { g_sync->warp[threadIdx.x / 32]->arrive_and_wait(); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
template <typename T> inline T __shfl_down_sync(unsigned, T v, int d) {
  static_assert(sizeof(T) <= 8);
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  uint64_t u = 0; std::memcpy(&u, &v, sizeof(T));
  g_sync->xbuf[warp][lane] = u;
  g_sync->warp[warp]->arrive_and_wait();
  uint64_t o = lane + d < 32 ? g_sync->xbuf[warp][lane + d] : u;
  g_sync->warp[warp]->arrive_and_wait();
  T r; std::memcpy(&r, &o, sizeof(T));
  return r;
}
template <typename T> inline T __ldcg(const T* p) { return *(const volatile T*)p; }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
template <typename... A, typename... B>
inline void emu_launch(void (*k)(A...), unsigned grid, unsigned block, B... args) {
  gridDim.x = grid; blockDim.x = block;
  BlockSync sync(block); g_sync = &sync;
  std::barrier<> done(block);
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < block; t++)
    ts.emplace_back([&, t] {
      threadIdx.x = t;
      for (unsigned b = 0; b < grid; b++) { blockIdx.x = b; k(args...); done.arrive_and_wait(); }
    });
  for (auto& t : ts) t.join();
}
