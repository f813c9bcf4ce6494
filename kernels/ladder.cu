// ladder.cu: the reduction ladder, every kernel of the classic optimization
// sequence of a parallel sum (Mark Harris, "Optimizing Parallel Reduction in
// CUDA", kernels 1 to 7), then the modern forms (warp shuffles, 16-byte
// loads, atomics, the last-block guard of arrowagg's own kernels), an
// order-preserving reduction for non-commutative operators and the
// multi-pass "window" cascade of the C++ AMP reduction sample. The Go package
// ladder runs, verifies and times them (the command arrowagg-ladder).
//
// PTX, committed as ladder.ptx, made from this directory with the flags of
// scripts/gen-ptx.sh:
//
//   nvcc -arch=compute_60 --ptx -O3 -std=c++14 -fmad=false -o ladder.ptx ladder.cu
//
// Every variant reduces int32 values to their exact int64 sum and is correct
// for any length n >= 1 (not only powers of two). Accumulators, shared memory
// slots and partials are 64-bit: a 32-bit tree would overflow on random
// int32 data (so the shared-memory access patterns of kernels 1 to 6 are those
// of 8-byte words, two banks each, not Harris's 4-byte ints). Sums are exact
// while n < 2^32.
//
// Kernel parameters are all 64-bit (pointers or unsigned long long), and every
// block has a power-of-two number of threads, at least 64 and at most
// kMaxBlock. Inputs read with 16-byte loads must be 16-byte aligned.
//
// Variants 1 to 8 write one partial per block (out[blockIdx.x]); the host
// launches the same variant again over the partials (the _i64 instantiation)
// until one block is left, as in Harris's paper:
//   1  ladder_v1   interleaved addressing with %: divergent warps;
//   2  ladder_v2   interleaved addressing, strided index: bank conflicts;
//   3  ladder_v3   sequential addressing;
//   4  ladder_v4   first add during the global load (2 elements a thread);
//   5  ladder_v5   last warp unrolled, each step separated by __syncwarp
//      ladder_v5u  the classic volatile-only unrolled warp: it relies on the
//                  lanes of a warp running in lockstep, which Volta's
//                  independent thread scheduling no longer promises;
//   6  ladder_v6_b<B>  complete unrolling, a template over the block size B;
//   7  ladder_v7   several elements a thread (grid-stride loop), grid sized
//                  to fill the device, the tree of 6;
//   8  ladder_v8   as 7 with a warp-shuffle tree instead of shared memory.
// The others launch over the int32 input once:
//   9  ladder_v9   16-byte vector loads, shuffles, one atomicAdd per block
//                  into *out (zeroed by the host first);
//   10 ladder_v10_partials + ladder_v10_final: block partials, then one block
//                  over the partials;
//   11 ladder_v11  one kernel, last-block guard: each block stores its
//                  partial, __threadfence(), takes an atomic ticket; the last
//                  block sums the partials and resets the ticket;
//   12 ladder_v12_<op>  order-preserving: each warp folds a contiguous range
//                  of the input, values combined only left with right (a
//                  fixed left-to-right tree), then warps in block order, then
//                  blocks in grid order (last-block guard); op is sum, mat2
//                  (2x2 matrix product mod 2^32) or firstlast;
//   13 ladder_v13  the "window" cascade: each pass has s = ceil(m / kWindow)
//                  threads, thread i sums a[i + k*s] for k < kWindow; the host
//                  repeats the pass until at most kWindow partials are left
//                  and adds those itself.

#include <stdint.h>

#include "policy.h"  // the block sizes and the window, shared with package ladder

namespace ladder {

typedef long long i64;
typedef unsigned long long u64;

constexpr unsigned kMaxBlock = LADDER_MAX_BLOCK;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr unsigned kWindow = LADDER_WINDOW;

template <typename T>
__device__ __forceinline__ i64 at(const T* in, u64 i, u64 n) {
  return i < n ? (i64)in[i] : 0;
}

// ------------------------------------------------- kernels 1 to 8: partials

// 1: interleaved addressing; `tid % (2*s)` leaves most lanes of every warp
// idle (divergent) and the modulo is slow.
template <typename T>
__device__ void reduce1(const T* in, u64 n, i64* out) {
  __shared__ i64 sdata[kMaxBlock];
  const unsigned tid = threadIdx.x;
  sdata[tid] = at(in, (u64)blockIdx.x * blockDim.x + tid, n);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// 2: interleaved addressing with a strided index: no divergence, but lanes
// of a warp hit the same shared-memory banks.
template <typename T>
__device__ void reduce2(const T* in, u64 n, i64* out) {
  __shared__ i64 sdata[kMaxBlock];
  const unsigned tid = threadIdx.x;
  sdata[tid] = at(in, (u64)blockIdx.x * blockDim.x + tid, n);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < blockDim.x) sdata[index] += sdata[index + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// 3: sequential addressing: conflict-free, but half the threads idle from
// the first step.
template <typename T>
__device__ void reduce3(const T* in, u64 n, i64* out) {
  __shared__ i64 sdata[kMaxBlock];
  const unsigned tid = threadIdx.x;
  sdata[tid] = at(in, (u64)blockIdx.x * blockDim.x + tid, n);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// first_add loads the two elements a thread of kernels 4 to 6 adds while
// loading: i and i + blockDim.x of the block's 2*blockDim.x.
template <typename T>
__device__ __forceinline__ i64 first_add(const T* in, u64 n) {
  const u64 i = (u64)blockIdx.x * (2 * blockDim.x) + threadIdx.x;
  return at(in, i, n) + at(in, i + blockDim.x, n);
}

// 4: first add during the global load: half the blocks.
template <typename T>
__device__ void reduce4(const T* in, u64 n, i64* out) {
  __shared__ i64 sdata[kMaxBlock];
  const unsigned tid = threadIdx.x;
  sdata[tid] = first_add(in, n);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// warp_reduce_synced finishes a tree of B >= 64 slots in the first warp
// (tid < 32): each step reads, then __syncwarp, then writes, then
// __syncwarp, so no lane reads a slot another lane is writing in the same
// step, whatever the order the lanes run in. Lane 0 returns the sum.
template <unsigned B>
__device__ __forceinline__ i64 warp_reduce_synced(i64* sdata, unsigned tid) {
  static_assert(B >= 64, "the unrolled warp reads sdata[tid + 32]");
  volatile i64* v = sdata;
  i64 x = v[tid];
#pragma unroll
  for (unsigned off = 32; off > 1; off >>= 1) {
    x += v[tid + off];
    __syncwarp();
    v[tid] = x;
    __syncwarp();
  }
  return x + v[tid + 1];
}

// warp_reduce_volatile is Harris's unrolled last warp: correct only if the
// 32 lanes execute each statement together, which Volta and later GPUs do
// not promise (independent thread scheduling). Kept to show the difference.
__device__ __forceinline__ void warp_reduce_volatile(volatile i64* s, unsigned tid) {
  s[tid] += s[tid + 32];
  s[tid] += s[tid + 16];
  s[tid] += s[tid + 8];
  s[tid] += s[tid + 4];
  s[tid] += s[tid + 2];
  s[tid] += s[tid + 1];
}

// 5: the last warp unrolled: no __syncthreads and no `if (tid < s)` for the
// last six steps.
template <typename T>
__device__ void reduce5(const T* in, u64 n, i64* out) {
  __shared__ i64 sdata[kMaxBlock];
  const unsigned tid = threadIdx.x;
  sdata[tid] = first_add(in, n);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    const i64 x = warp_reduce_synced<64>(sdata, tid);
    if (tid == 0) out[blockIdx.x] = x;
  }
}

// 5, unsafe: the classic form, with volatile alone.
template <typename T>
__device__ void reduce5_unsafe(const T* in, u64 n, i64* out) {
  __shared__ i64 sdata[kMaxBlock];
  const unsigned tid = threadIdx.x;
  sdata[tid] = first_add(in, n);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) warp_reduce_volatile(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// block_tree reduces sdata[0..B) (filled, then __syncthreads by the caller)
// with every loop unrolled at compile time; thread 0 returns the sum.
template <unsigned B>
__device__ __forceinline__ i64 block_tree(i64* sdata, unsigned tid) {
  if (B >= 512) {
    if (tid < 256) sdata[tid] += sdata[tid + 256];
    __syncthreads();
  }
  if (B >= 256) {
    if (tid < 128) sdata[tid] += sdata[tid + 128];
    __syncthreads();
  }
  if (B >= 128) {
    if (tid < 64) sdata[tid] += sdata[tid + 64];
    __syncthreads();
  }
  i64 x = 0;
  if (tid < 32) x = warp_reduce_synced<B>(sdata, tid);
  return x;
}

// 6: complete unrolling over the block size B (== blockDim.x).
template <unsigned B, typename T>
__device__ void reduce6(const T* in, u64 n, i64* out) {
  static_assert(B >= LADDER_MIN_BLOCK && B <= kMaxBlock && (B & (B - 1)) == 0,
                "B: a power of two in [LADDER_MIN_BLOCK, kMaxBlock]");
  __shared__ i64 sdata[B];
  const unsigned tid = threadIdx.x;
  sdata[tid] = first_add(in, n);
  __syncthreads();
  const i64 x = block_tree<B>(sdata, tid);
  if (tid == 0) out[blockIdx.x] = x;
}

// grid_stride_pairs is the thread sum of kernels 7 and 8: elements i and
// i + B of each 2*B-element slice of the grid-stride loop.
template <unsigned B, typename T>
__device__ __forceinline__ i64 grid_stride_pairs(const T* in, u64 n) {
  const u64 step = 2 * (u64)B * gridDim.x;
  i64 sum = 0;
  for (u64 i = (u64)blockIdx.x * (2 * B) + threadIdx.x; i < n; i += step) {
    sum += in[i];
    if (i + B < n) sum += in[i + B];
  }
  return sum;
}

constexpr unsigned kBlock = LADDER_BLOCK;  // the block size of kernels 7 to 13

// 7: several elements a thread: a grid that just fills the device loops
// over the input, then the unrolled tree of 6.
template <typename T>
__device__ void reduce7(const T* in, u64 n, i64* out) {
  __shared__ i64 sdata[kBlock];
  const unsigned tid = threadIdx.x;
  sdata[tid] = grid_stride_pairs<kBlock>(in, n);
  __syncthreads();
  const i64 x = block_tree<kBlock>(sdata, tid);
  if (tid == 0) out[blockIdx.x] = x;
}

// warp_sum: lane 0 gets the sum of the warp's 32 values.
__device__ __forceinline__ i64 warp_sum(i64 x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x += __shfl_down_sync(kFullMask, x, off);
  return x;
}

// block_sum: thread 0 gets the sum of the block's values (blockDim.x a
// multiple of 32). Its shared memory may be reused after a __syncthreads.
__device__ __forceinline__ i64 block_sum(i64 x) {
  __shared__ i64 warps[32];
  const unsigned lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  x = warp_sum(x);
  if (lane == 0) warps[wid] = x;
  __syncthreads();
  if (wid == 0) x = warp_sum(lane < (blockDim.x >> 5) ? warps[lane] : 0);
  return x;
}

// 8: as 7, the tree in registers with warp shuffles: one __syncthreads.
template <typename T>
__device__ void reduce8(const T* in, u64 n, i64* out) {
  const i64 x = block_sum(grid_stride_pairs<kBlock>(in, n));
  if (threadIdx.x == 0) out[blockIdx.x] = x;
}

// ---------------------------------------------- kernels 9 to 11: one pass

// thread_sum_vec4: the grid-stride sum of 16-byte vectors (4 int32); the
// last n % 4 elements go to the first threads of the grid.
__device__ __forceinline__ i64 thread_sum_vec4(const int* in, u64 n) {
  const int4* v = reinterpret_cast<const int4*>(in);
  const u64 nv = n / 4;
  const u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  const u64 step = (u64)gridDim.x * blockDim.x;
  i64 sum = 0;
  for (u64 i = g; i < nv; i += step) {
    const int4 q = v[i];
    sum += (i64)q.x + (i64)q.y + (i64)q.z + (i64)q.w;
  }
  if (g < n % 4) sum += in[nv * 4 + g];
  return sum;
}

// last_block: after each block's thread 0 has stored its partial, it makes
// the store visible device-wide (__threadfence) and takes a ticket; the block
// that draws the last ticket sees every partial. Uniform over the block.
__device__ __forceinline__ bool last_block(unsigned* ticket) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    __threadfence();  // release: this block's partial before its ticket
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    if (last) __threadfence();  // acquire: the others' partials after the ticket
  }
  __syncthreads();
  return last;
}

// --------------------------------------------- kernel 12: ordered (monoids)

// Each operator: a state S, its identity, lift (an int32 to a state), an
// associative combine(left, right), a warp shuffle and a load that bypasses
// the L1 cache (partials written by other blocks).

struct SumOp {
  typedef i64 S;
  static __device__ __forceinline__ S identity() { return 0; }
  static __device__ __forceinline__ S lift(int x) { return x; }
  static __device__ __forceinline__ S combine(S l, S r) { return l + r; }
  static __device__ __forceinline__ S shfl_down(S x, int d) { return __shfl_down_sync(kFullMask, x, d); }
  static __device__ __forceinline__ S load_cg(const S* p) { return __ldcg(p); }
};

// Mat2 is a 2x2 matrix {{a, b}, {c, d}} of integers mod 2^32; x lifts to
// {{x, 1}, {1, 0}}: products of such matrices depend on the order.
struct Mat2 {
  unsigned a, b, c, d;
};

struct Mat2Op {
  typedef Mat2 S;
  static __device__ __forceinline__ S identity() { return S{1, 0, 0, 1}; }
  static __device__ __forceinline__ S lift(int x) { return S{(unsigned)x, 1, 1, 0}; }
  static __device__ __forceinline__ S combine(S l, S r) {
    return S{l.a * r.a + l.b * r.c, l.a * r.b + l.b * r.d, l.c * r.a + l.d * r.c, l.c * r.b + l.d * r.d};
  }
  static __device__ __forceinline__ S shfl_down(S x, int d) {
    return S{__shfl_down_sync(kFullMask, x.a, d), __shfl_down_sync(kFullMask, x.b, d),
             __shfl_down_sync(kFullMask, x.c, d), __shfl_down_sync(kFullMask, x.d, d)};
  }
  static __device__ __forceinline__ S load_cg(const S* p) {
    return S{__ldcg(&p->a), __ldcg(&p->b), __ldcg(&p->c), __ldcg(&p->d)};
  }
};

// FirstLast is the first and the last value of a sequence and its length
// (the identity is the empty sequence).
struct FirstLast {
  int first, last;
  u64 count;
};
static_assert(sizeof(Mat2) <= LADDER_MAX_STATE_BYTES && sizeof(FirstLast) <= LADDER_MAX_STATE_BYTES,
              "LADDER_MAX_STATE_BYTES holds every state of kernel 12");

struct FirstLastOp {
  typedef FirstLast S;
  static __device__ __forceinline__ S identity() { return S{0, 0, 0}; }
  static __device__ __forceinline__ S lift(int x) { return S{x, x, 1}; }
  static __device__ __forceinline__ S combine(S l, S r) {
    if (l.count == 0) return r;
    if (r.count == 0) return l;
    return S{l.first, r.last, l.count + r.count};
  }
  static __device__ __forceinline__ S shfl_down(S x, int d) {
    return S{__shfl_down_sync(kFullMask, x.first, d), __shfl_down_sync(kFullMask, x.last, d),
             __shfl_down_sync(kFullMask, x.count, d)};
  }
  static __device__ __forceinline__ S load_cg(const S* p) {
    return S{__ldcg(&p->first), __ldcg(&p->last), __ldcg(&p->count)};
  }
};

// warp_fold: lane 0 gets x[0] . x[1] . ... . x[31] of the warp's lanes, in
// lane order. Step `off` combines, in each lane l with l % (2*off) == 0, the
// fold of lanes [l, l+off) with that of [l+off, l+2*off): a fixed
// left-to-right tree. Every lane shuffles; only those lanes combine.
template <class Op>
__device__ __forceinline__ typename Op::S warp_fold(typename Op::S x) {
  const unsigned lane = threadIdx.x & 31;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const typename Op::S y = Op::shfl_down(x, off);
    if ((lane & (2 * off - 1)) == 0) x = Op::combine(x, y);
  }
  return x;
}

// fold_tiles: lane 0 gets the ordered fold of the warp-tiles [t0, t1) of
// `count` items, 32 consecutive items a tile, item(i) giving item i.
template <class Op, class Item>
__device__ __forceinline__ typename Op::S fold_tiles(u64 t0, u64 t1, Item item) {
  typedef typename Op::S S;
  const unsigned lane = threadIdx.x & 31;
  S acc = Op::identity();
  for (u64 t = t0; t < t1; ++t) {
    const S x = warp_fold<Op>(item(t * 32 + lane));
    acc = Op::combine(acc, x);  // meaningful in lane 0
  }
  return acc;
}

// block_fold: thread 0 gets the fold of the warps' values (lane 0 of each),
// in warp order.
template <class Op>
__device__ __forceinline__ typename Op::S block_fold(typename Op::S x) {
  typedef typename Op::S S;
  __shared__ S warps[32];
  const unsigned lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  if (lane == 0) warps[wid] = x;
  __syncthreads();
  if (wid == 0) x = warp_fold<Op>(lane < (blockDim.x >> 5) ? warps[lane] : Op::identity());
  return x;
}

// 12: the input in 16-byte vectors of 4 consecutive values, folded in order
// by their thread; tiles of 32 consecutive vectors folded by a warp; each
// warp of the grid takes a contiguous range of tiles, the warps of a block
// consecutive ranges, so block partials come in grid order; the last block
// folds them.
template <class Op>
__device__ void reduce12(const int* in, u64 n, typename Op::S* partials, unsigned* ticket, typename Op::S* out) {
  typedef typename Op::S S;
  const unsigned nw = blockDim.x >> 5;
  const u64 nv = (n + 3) / 4;        // vectors, the last one maybe partial
  const u64 tiles = (nv + 31) / 32;  // warp tiles
  const u64 gw = (u64)blockIdx.x * nw + (threadIdx.x >> 5), warps = (u64)gridDim.x * nw;
  const int4* vec = reinterpret_cast<const int4*>(in);
  S x = fold_tiles<Op>(tiles * gw / warps, tiles * (gw + 1) / warps, [&](u64 v) {
    if (v * 4 + 4 <= n) {
      const int4 q = vec[v];
      return Op::combine(Op::combine(Op::lift(q.x), Op::lift(q.y)), Op::combine(Op::lift(q.z), Op::lift(q.w)));
    }
    S s = Op::identity();
    for (u64 i = v * 4; i < v * 4 + 4 && i < n; ++i) s = Op::combine(s, Op::lift(in[i]));
    return s;
  });
  x = block_fold<Op>(x);
  if (threadIdx.x == 0) partials[blockIdx.x] = x;
  if (!last_block(ticket)) return;
  // The last block: partials [0, gridDim.x) split into consecutive ranges
  // over its warps, folded like the input.
  const u64 g = gridDim.x, w = threadIdx.x >> 5;
  const u64 p0 = g * w / nw, p1 = g * (w + 1) / nw;
  S y = Op::identity();
  for (u64 base = p0; base < p1; base += 32) {
    const u64 i = base + (threadIdx.x & 31);
    y = Op::combine(y, warp_fold<Op>(i < p1 ? Op::load_cg(partials + i) : Op::identity()));
  }
  y = block_fold<Op>(y);
  if (threadIdx.x == 0) {
    *out = y;
    *(volatile unsigned*)ticket = 0;
  }
}

// ------------------------------------------------ kernel 13: window cascade

// window_pass: thread i < s sums in[i + k*s] for k < kWindow (those < m) into
// out[i]. In place (in == out) is safe: thread i reads index i and indices
// >= s, and writes only index i < s.
template <typename T>
__device__ void window_pass(const T* in, u64 m, u64 s, i64* out) {
  const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= s) return;
  i64 sum = 0;
#pragma unroll
  for (unsigned k = 0; k < kWindow; ++k) sum += at(in, i + k * s, m);
  out[i] = sum;
}

}  // namespace ladder

// --------------------------------------------------------- entry points

using ladder::i64;
using ladder::u64;

// Kernels 1 to 8 over int32 input (_i32) and over int64 partials (_i64).
#define LADDER_PARTIALS(name, fn)                                                                \
  extern "C" __global__ void name##_i32(const int* in, u64 n, i64* out) { fn<int>(in, n, out); } \
  extern "C" __global__ void name##_i64(const i64* in, u64 n, i64* out) { fn<i64>(in, n, out); }

#define LADDER_V6(B)                                                          \
  extern "C" __global__ void ladder_v6_b##B##_i32(const int* in, u64 n, i64* out) { \
    ladder::reduce6<B, int>(in, n, out);                                      \
  }                                                                           \
  extern "C" __global__ void ladder_v6_b##B##_i64(const i64* in, u64 n, i64* out) { \
    ladder::reduce6<B, i64>(in, n, out);                                      \
  }

LADDER_PARTIALS(ladder_v1, ladder::reduce1)
LADDER_PARTIALS(ladder_v2, ladder::reduce2)
LADDER_PARTIALS(ladder_v3, ladder::reduce3)
LADDER_PARTIALS(ladder_v4, ladder::reduce4)
LADDER_PARTIALS(ladder_v5, ladder::reduce5)
LADDER_PARTIALS(ladder_v5u, ladder::reduce5_unsafe)
LADDER_V6(64)
LADDER_V6(128)
LADDER_V6(256)
LADDER_V6(512)
LADDER_PARTIALS(ladder_v7, ladder::reduce7)
LADDER_PARTIALS(ladder_v8, ladder::reduce8)

// 9: one atomicAdd per block into *out, which the host zeroes first (two's
// complement: the unsigned 64-bit sum is the signed one).
extern "C" __global__ void ladder_v9(const int* in, u64 n, u64* out) {
  const i64 x = ladder::block_sum(ladder::thread_sum_vec4(in, n));
  if (threadIdx.x == 0) atomicAdd(out, (u64)x);
}

// 10: block partials, then ladder_v10_final, one block, over them.
extern "C" __global__ void ladder_v10_partials(const int* in, u64 n, i64* partials) {
  const i64 x = ladder::block_sum(ladder::thread_sum_vec4(in, n));
  if (threadIdx.x == 0) partials[blockIdx.x] = x;
}

extern "C" __global__ void ladder_v10_final(const i64* partials, u64 count, i64* out) {
  i64 x = 0;
  for (u64 i = threadIdx.x; i < count; i += blockDim.x) x += partials[i];
  x = ladder::block_sum(x);
  if (threadIdx.x == 0) *out = x;
}

// 11: one launch; the last block to finish sums the partials and leaves the
// ticket at zero for the next launch.
extern "C" __global__ void ladder_v11(const int* in, u64 n, i64* partials, unsigned* ticket, i64* out) {
  i64 x = ladder::block_sum(ladder::thread_sum_vec4(in, n));
  if (threadIdx.x == 0) partials[blockIdx.x] = x;
  if (!ladder::last_block(ticket)) return;
  x = 0;
  for (u64 i = threadIdx.x; i < gridDim.x; i += blockDim.x) x += __ldcg(partials + i);
  x = ladder::block_sum(x);
  if (threadIdx.x == 0) {
    *out = x;
    *(volatile unsigned*)ticket = 0;
  }
}

// 12, per operator.
#define LADDER_V12(name, Op)                                                                                \
  extern "C" __global__ void ladder_v12_##name(const int* in, u64 n, Op::S* partials, unsigned* ticket, \
                                               Op::S* out) {                                            \
    ladder::reduce12<Op>(in, n, partials, ticket, out);                                                 \
  }

LADDER_V12(sum, ladder::SumOp)
LADDER_V12(mat2, ladder::Mat2Op)
LADDER_V12(firstlast, ladder::FirstLastOp)

// 13: the first pass reads the int32 input, the next ones the int64
// partials in place.
extern "C" __global__ void ladder_v13_i32(const int* in, u64 m, u64 s, i64* out) {
  ladder::window_pass<int>(in, m, s, out);
}

extern "C" __global__ void ladder_v13_i64(const i64* in, u64 m, u64 s, i64* out) {
  ladder::window_pass<i64>(in, m, s, out);
}
