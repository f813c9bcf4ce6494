// agg.cu: the fused aggregation kernels of arrowagg.
//
// One launch of a per-kind kernel (arrowagg_<kind>) folds one Arrow column
// chunk (values, optional validity bitmap) into one partial aggregate state
// {sum, min, max, count}, with no host round trip; one launch of
// arrowagg_multi folds many small columns of any kinds, each into its own
// state (see "many columns, one launch"). The state of each type family
// mirrors gpuagg.State and is reduced in four layers, like CUB's block and
// device reductions, which both kinds of kernel share:
//
//   thread  a fused accumulator fed by a strided loop of 16-byte vector
//           loads, the validity bitmap read as 32-bit words alongside;
//   warp    a shuffle tree (fixed shape, so float results are deterministic);
//   block   one state per warp in shared memory, reduced by warp 0;
//   device  each block stores its partial state, __threadfence(), takes an
//           atomic ticket; the last block to finish merges the partials in
//           a fixed shape, writes the state and resets the ticket.
//
// Every state is an array of 64-bit words (Words<K>), so the warp, block and
// device layers are generic; each family supplies identity() and merge().
// The word layouts are read back by the Go package gpuagg/cuda (kernel.go):
//
//   signed    {sum lo, sum hi (128-bit two's complement), min, max, count}
//   unsigned  {sum lo, sum hi (128-bit), min, max, count}
//   float     {sum, compensation, special, min key, max key, count}
//   decimal   {sum w0, w1, w2 (192-bit), min lo, min hi, max lo, max hi, count}
//   bool      {trues, count}
//
// The moments kernels arrowagg_moments_<kind> (integers and floats) fold
// the sum of the squares too, for stddev and variance, in the same pass;
// their states are the kind's, then:
//
//   signed, unsigned  {sq w0, w1, w2}: the exact sum of the squares (192-bit)
//   float             {sq, sq compensation, sq special}: the squares as
//                     error-free products (an FMA gives each one's rounding
//                     error) in compensated sums, those not finite (and
//                     overflowed sums) apart in special, like the sum
//
// The sketch kernels arrowagg_sketch_<kind> (integers and floats) are the
// moments kernels with the approx_distinct sketch folded in the same pass
// (see "the sketch" below): their states are the moments kernels', and
// they take, after out, the device sketch they raise.
//
// The parameters of the per-kind kernels are all 64-bit (pointers or
// unsigned long long):
//   values    device pointer; element i of the chunk is values[voff + i]
//             (for bool: bit voff + i of the 32-bit-word bitmap);
//   voff      element (bool: bit) offset into values;
//   validity  device pointer to the validity bitmap as 32-bit words (4-byte
//             aligned), or null when every element is valid;
//   vbit      bit offset of element 0 into validity;
//   n         number of elements (64-bit: chunks of more than 2^31 elements);
//   partials  gridDim.x states of scratch, one per block;
//   ticket    a zeroed 32-bit counter, left zeroed again by the last block;
//   out       the launch's state.
// The ordered kernels arrowagg_ordered_<kind> take the same parameters
// with, after n, state: the fused kernel's state of the same elements (read
// on the device; see "ordered aggregates" below); their out is 8 words.
// values + voff must be aligned to the element width (16 bytes for decimal);
// bitmaps are readable up to the 32-bit word that holds their last bit.
// Thread sums of 8/16/32-bit integers are 64-bit: exact while a thread sees
// fewer than 2^32 elements (the host bounds n by the grid size).

#include <stdint.h>

#include "policy.h"  // the launch policy and state sizes, shared with the Go code

namespace arrowagg {

constexpr int kBlockThreads = AGG_BLOCK_THREADS;
constexpr int kWarpThreads = AGG_WARP_THREADS;
constexpr int kBlockWarps = kBlockThreads / kWarpThreads;
constexpr int kUnroll = AGG_UNROLL;  // 16-byte loads in flight per thread
constexpr unsigned kFullMask = 0xffffffffu;

// ---------------------------------------------------------------- integers

__device__ __forceinline__ void add128(uint64_t& lo, uint64_t& hi, uint64_t xlo, uint64_t xhi) {
#ifdef __CUDA_ARCH__
  asm("add.cc.u64 %0, %0, %2;\n\taddc.u64 %1, %1, %3;" : "+l"(lo), "+l"(hi) : "l"(xlo), "l"(xhi));
#else  // host builds of this file (a CPU emulation of the kernels)
  lo += xlo;
  hi += xhi + (lo < xlo);
#endif
}

__device__ __forceinline__ void add192(uint64_t& w0, uint64_t& w1, uint64_t& w2, uint64_t x0, uint64_t x1,
                                       uint64_t x2) {
#ifdef __CUDA_ARCH__
  asm("add.cc.u64 %0, %0, %3;\n\taddc.cc.u64 %1, %1, %4;\n\taddc.u64 %2, %2, %5;"
      : "+l"(w0), "+l"(w1), "+l"(w2)
      : "l"(x0), "l"(x1), "l"(x2));
#else
  w0 += x0;
  const uint64_t c0 = w0 < x0;
  const uint64_t t = w1 + x1;
  const uint64_t c1 = t < x1;
  w1 = t + c0;
  w2 += x2 + c1 + (w1 < c0);
#endif
}

// less128 compares signed 128-bit values given as {lo, hi}.
__device__ __forceinline__ bool less128(uint64_t alo, uint64_t ahi, uint64_t blo, uint64_t bhi) {
  return (int64_t)ahi < (int64_t)bhi || (ahi == bhi && alo < blo);
}

template <typename T> struct Limits;
template <> struct Limits<int8_t> { static constexpr int8_t lo = -128, hi = 127; };
template <> struct Limits<int16_t> { static constexpr int16_t lo = -32768, hi = 32767; };
template <> struct Limits<int32_t> { static constexpr int32_t lo = INT32_MIN, hi = INT32_MAX; };
template <> struct Limits<int64_t> { static constexpr int64_t lo = INT64_MIN, hi = INT64_MAX; };
template <> struct Limits<uint8_t> { static constexpr uint8_t lo = 0, hi = UINT8_MAX; };
template <> struct Limits<uint16_t> { static constexpr uint16_t lo = 0, hi = UINT16_MAX; };
template <> struct Limits<uint32_t> { static constexpr uint32_t lo = 0, hi = UINT32_MAX; };
template <> struct Limits<uint64_t> { static constexpr uint64_t lo = 0, hi = UINT64_MAX; };

template <typename T> __device__ __forceinline__ T tmin(T a, T b) { return b < a ? b : a; }
template <typename T> __device__ __forceinline__ T tmax(T a, T b) { return b > a ? b : a; }

// ------------------------------------------------------------------ states

template <int K> struct Words {
  uint64_t w[K];
};

template <int K> __device__ __forceinline__ Words<K> shfl_down(const Words<K>& s, int delta) {
  Words<K> o;
#pragma unroll
  for (int i = 0; i < K; i++) o.w[i] = __shfl_down_sync(kFullMask, (unsigned long long)s.w[i], delta);
  return o;
}

template <int K> __device__ __forceinline__ void store_state(uint64_t* p, const Words<K>& s) {
#pragma unroll
  for (int i = 0; i < K; i++) __stcg((unsigned long long*)p + i, (unsigned long long)s.w[i]);
}

// load_state reads a state written by another block: through L2 (ld.cg),
// never a stale L1 line.
template <int K> __device__ __forceinline__ Words<K> load_state(const uint64_t* p) {
  Words<K> s;
#pragma unroll
  for (int i = 0; i < K; i++) s.w[i] = __ldcg((const unsigned long long*)p + i);
  return s;
}

// SignedFamily: {sum lo, sum hi, min, max, count}, int64 min/max.
struct SignedFamily {
  static constexpr int K = AGG_INTEGER_WORDS;
  using State = Words<K>;
  __device__ static State identity() { return State{{0, 0, (uint64_t)INT64_MAX, (uint64_t)INT64_MIN, 0}}; }
  __device__ static void merge(State& a, const State& b) {
    add128(a.w[0], a.w[1], b.w[0], b.w[1]);
    a.w[2] = (uint64_t)tmin((int64_t)a.w[2], (int64_t)b.w[2]);
    a.w[3] = (uint64_t)tmax((int64_t)a.w[3], (int64_t)b.w[3]);
    a.w[4] += b.w[4];
  }
};

// UnsignedFamily: {sum lo, sum hi, min, max, count}, uint64 min/max.
struct UnsignedFamily {
  static constexpr int K = AGG_INTEGER_WORDS;
  using State = Words<K>;
  __device__ static State identity() { return State{{0, 0, UINT64_MAX, 0, 0}}; }
  __device__ static void merge(State& a, const State& b) {
    add128(a.w[0], a.w[1], b.w[0], b.w[1]);
    a.w[2] = tmin(a.w[2], b.w[2]);
    a.w[3] = tmax(a.w[3], b.w[3]);
    a.w[4] += b.w[4];
  }
};

// Float min/max are kept as order keys: the bits of a float with the
// magnitude bits flipped when negative, compared as signed integers. The
// order is total on non-NaN values with -0 < +0; NaN never enters (it is
// replaced by the identity), so min/max skip NaN like the CPU backend.
//
// The mask is the sign spread by an arithmetic shift, then shifted right by
// one as unsigned. Do not write it (b >> 63) & INT64_MAX: NVVM 11.8 turns
// that into bfe.u64 b, 63, 63, which yields 1, not the mask (seen on the H100).
__device__ __forceinline__ int32_t flip32(int32_t b) { return b ^ (int32_t)((uint32_t)(b >> 31) >> 1); }
// flip64 works on the words: the low word flips with the sign's mask, the
// high word with the mask less its sign bit (three instructions, where the
// 64-bit shifts took six).
__device__ __forceinline__ int64_t flip64(int64_t b) {
  const uint32_t hi = (uint32_t)((uint64_t)b >> 32), m = (uint32_t)((int32_t)hi >> 31);
  return (int64_t)((uint64_t)(hi ^ (m & 0x7fffffffu)) << 32 | ((uint32_t)b ^ m));
}
__device__ __forceinline__ int32_t key32(float x) { return flip32(__float_as_int(x)); }
__device__ __forceinline__ int64_t key64(double x) { return flip64(__double_as_longlong(x)); }
__device__ __forceinline__ float unkey32(int32_t k) { return __int_as_float(flip32(k)); }

constexpr int64_t kKey64PosInf = 0x7ff0000000000000LL;
constexpr int64_t kKey64NegInf = (int64_t)(0xfff0000000000000ULL ^ 0x7fffffffffffffffULL);
constexpr int32_t kKey32PosInf = 0x7f800000;
constexpr int32_t kKey32NegInf = (int32_t)(0xff800000u ^ 0x7fffffffu);

__device__ __forceinline__ double as_f64(uint64_t w) { return __longlong_as_double((long long)w); }
__device__ __forceinline__ uint64_t f64_bits(double d) { return (uint64_t)__double_as_longlong(d); }

// FloatFamily: {sum, comp, special, min key, max key, count}. merge is
// State.Merge of the Go package: an error-free two-sum of the partial sums
// into the compensation, non-finite partial sums into special.
struct FloatFamily {
  static constexpr int K = AGG_FLOAT_WORDS;
  using State = Words<K>;
  __device__ static State identity() {
    return State{{0, 0, 0, (uint64_t)kKey64PosInf, (uint64_t)kKey64NegInf, 0}};
  }
  __device__ static void merge(State& a, const State& b) {
    const double as = as_f64(a.w[0]), bs = as_f64(b.w[0]);
    const double t = as + bs;
    if (isfinite(t)) {
      const double z = t - as;
      a.w[1] = f64_bits(as_f64(a.w[1]) + ((as - (t - z)) + (bs - z) + as_f64(b.w[1])));
      a.w[0] = f64_bits(t);
    } else {
      a.w[2] = f64_bits(as_f64(a.w[2]) + t);
      a.w[0] = f64_bits(0.0);
      a.w[1] = f64_bits(as_f64(a.w[1]) + as_f64(b.w[1]));
    }
    a.w[2] = f64_bits(as_f64(a.w[2]) + as_f64(b.w[2]));
    a.w[3] = (uint64_t)tmin((int64_t)a.w[3], (int64_t)b.w[3]);
    a.w[4] = (uint64_t)tmax((int64_t)a.w[4], (int64_t)b.w[4]);
    a.w[5] += b.w[5];
  }
};

// DecimalFamily: {sum (192-bit), min {lo, hi}, max {lo, hi}, count}.
struct DecimalFamily {
  static constexpr int K = AGG_DECIMAL_WORDS;
  using State = Words<K>;
  __device__ static State identity() {
    return State{{0, 0, 0, UINT64_MAX, (uint64_t)INT64_MAX, 0, (uint64_t)INT64_MIN, 0}};
  }
  __device__ static void merge(State& a, const State& b) {
    add192(a.w[0], a.w[1], a.w[2], b.w[0], b.w[1], b.w[2]);
    if (less128(b.w[3], b.w[4], a.w[3], a.w[4])) a.w[3] = b.w[3], a.w[4] = b.w[4];
    if (less128(a.w[5], a.w[6], b.w[5], b.w[6])) a.w[5] = b.w[5], a.w[6] = b.w[6];
    a.w[7] += b.w[7];
  }
};

// BoolFamily: {number of true values, count}.
struct BoolFamily {
  static constexpr int K = AGG_BOOL_WORDS;
  using State = Words<K>;
  __device__ static State identity() { return State{{0, 0}}; }
  __device__ static void merge(State& a, const State& b) {
    a.w[0] += b.w[0];
    a.w[1] += b.w[1];
  }
};

// The moments families: a family's state, then its sum of squares.

// IntSqFamily: {sum lo, sum hi, min, max, count, sq w0, w1, w2}.
template <class Base> struct IntSqFamily {
  static constexpr int K = AGG_INTEGER_MOMENT_WORDS;
  static_assert(Base::K + 3 == K, "the integer state, then 3 words of squares");
  using State = Words<K>;
  __device__ static State identity() {
    const typename Base::State b = Base::identity();
    return State{{b.w[0], b.w[1], b.w[2], b.w[3], b.w[4], 0, 0, 0}};
  }
  __device__ static void merge(State& a, const State& b) {
    typename Base::State x{{a.w[0], a.w[1], a.w[2], a.w[3], a.w[4]}};
    const typename Base::State y{{b.w[0], b.w[1], b.w[2], b.w[3], b.w[4]}};
    Base::merge(x, y);
#pragma unroll
    for (int i = 0; i < Base::K; i++) a.w[i] = x.w[i];
    add192(a.w[5], a.w[6], a.w[7], b.w[5], b.w[6], b.w[7]);
  }
};

// two_sum_into adds the compensated pair (x, xc) to (sum, comp), a
// non-finite result to special (State.Merge's addPair of the Go package).
__device__ __forceinline__ void two_sum_into(uint64_t& sum, uint64_t& comp, uint64_t& special, double x, double xc) {
  const double s = as_f64(sum);
  const double t = s + x;
  if (isfinite(t)) {
    const double z = t - s;
    comp = f64_bits(as_f64(comp) + ((s - (t - z)) + (x - z) + xc));
    sum = f64_bits(t);
  } else {
    special = f64_bits(as_f64(special) + t);
    sum = f64_bits(0.0);
    comp = f64_bits(as_f64(comp) + xc);
  }
}

// FloatSqFamily: the float state, then {sq, sq compensation, sq special}.
struct FloatSqFamily {
  static constexpr int K = AGG_FLOAT_MOMENT_WORDS;
  static_assert(FloatFamily::K + 3 == K, "the float state, then 3 words of squares");
  using State = Words<K>;
  __device__ static State identity() {
    const FloatFamily::State b = FloatFamily::identity();
    return State{{b.w[0], b.w[1], b.w[2], b.w[3], b.w[4], b.w[5], 0, 0, 0}};
  }
  __device__ static void merge(State& a, const State& b) {
    FloatFamily::State x{{a.w[0], a.w[1], a.w[2], a.w[3], a.w[4], a.w[5]}};
    const FloatFamily::State y{{b.w[0], b.w[1], b.w[2], b.w[3], b.w[4], b.w[5]}};
    FloatFamily::merge(x, y);
#pragma unroll
    for (int i = 0; i < FloatFamily::K; i++) a.w[i] = x.w[i];
    two_sum_into(a.w[6], a.w[7], a.w[8], as_f64(b.w[6]), as_f64(b.w[7]));
    a.w[8] = f64_bits(as_f64(a.w[8]) + as_f64(b.w[8]));
  }
};

// --------------------------------------------------- warp, block, device

// warp_reduce leaves the state of the whole warp in lane 0. Lanes whose
// partner is out of range merge garbage that lane 0 never reads.
template <class Fam> __device__ __forceinline__ typename Fam::State warp_reduce(typename Fam::State s) {
#pragma unroll
  for (int d = kWarpThreads / 2; d > 0; d >>= 1) {
    const typename Fam::State o = shfl_down(s, d);
    Fam::merge(s, o);
  }
  return s;
}

// block_reduce leaves the state of the whole block in thread 0.
template <class Fam> __device__ __forceinline__ typename Fam::State block_reduce(typename Fam::State s) {
  __shared__ typename Fam::State warp_states[kBlockWarps];
  const int lane = threadIdx.x % kWarpThreads, warp = threadIdx.x / kWarpThreads;
  s = warp_reduce<Fam>(s);
  __syncthreads();  // warp_states may still be read by an earlier call
  if (lane == 0) warp_states[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = lane < kBlockWarps ? warp_states[lane] : Fam::identity();
    s = warp_reduce<Fam>(s);
  }
  return s;
}

// merge_partials is the device layer: it merges the states of the blocks
// that share one reduction. s, in thread 0, is this block's state (from
// block_reduce): partial `index` of `count`. Each block stores its partial,
// __threadfence(), and takes an atomic ticket; the last block to finish
// merges the count partials in a fixed shape (thread i merges partials i,
// i + kBlockThreads, ..., then block_reduce), so float results do not
// depend on which block finishes last, and resets the ticket. It returns
// true in thread 0 of that block alone, whose s is then the whole state. A
// reduction of one partial needs none of it: the block's state is the whole
// state, bit for bit what the merge would give (merging an identity changes
// no bit of a block_reduce result).
template <class Fam>
__device__ __forceinline__ bool merge_partials(typename Fam::State& s, uint64_t* partials, unsigned int index,
                                               unsigned int count, unsigned int* ticket) {
  constexpr int K = Fam::K;
  __shared__ bool am_last;
  if (count == 1) return threadIdx.x == 0;
  if (threadIdx.x == 0) {
    store_state<K>(partials + (uint64_t)index * K, s);
    __threadfence();
    const unsigned int t = atomicAdd(ticket, 1u);
    am_last = t == count - 1;
  }
  __syncthreads();
  if (!am_last) return false;
  __threadfence();
  typename Fam::State acc = Fam::identity();
  for (unsigned int b = threadIdx.x; b < count; b += kBlockThreads) {
    const typename Fam::State p = load_state<K>(partials + (uint64_t)b * K);
    Fam::merge(acc, p);
  }
  acc = block_reduce<Fam>(acc);
  if (threadIdx.x != 0) return false;
  *(volatile unsigned int*)ticket = 0;
  s = acc;
  return true;
}

// grid_reduce reduces the block and merges the grid's block states (one
// per block, in block order). It returns true in thread 0 of the last block
// alone, whose s is then the launch's state.
template <class Fam>
__device__ __forceinline__ bool grid_reduce(typename Fam::State& s, uint64_t* partials, unsigned int* ticket) {
  s = block_reduce<Fam>(s);
  return merge_partials<Fam>(s, partials, blockIdx.x, gridDim.x, ticket);
}

// grid_finish reduces the launch's states with grid_reduce and writes the
// result to out.
template <class Fam>
__device__ __forceinline__ void grid_finish(typename Fam::State s, uint64_t* partials, unsigned int* ticket,
                                            uint64_t* out) {
  if (grid_reduce<Fam>(s, partials, ticket)) store_state<Fam::K>(out, s);
}

// -------------------------------------------------------- thread loops

template <typename T> __device__ __forceinline__ T vec_lane(const uint4& v, int k) {
  union {
    uint4 v;
    T e[16 / sizeof(T)];
  } u;
  u.v = v;
  return u.e[k];
}

__device__ __forceinline__ uint32_t bit_at(const uint32_t* __restrict__ bm, uint64_t p) {
  return (__ldg(bm + (p >> 5)) >> (p & 31)) & 1u;
}

// bits_at returns bits p, p+1, ... of a bitmap (bit 0 of the result is bit
// p); only the first `need` bits are meaningful, and the word after p's is
// read only when they reach into it.
__device__ __forceinline__ uint32_t bits_at(const uint32_t* __restrict__ bm, uint64_t p, unsigned need) {
  const uint64_t wi = p >> 5;
  const unsigned sh = (unsigned)(p & 31);
  const uint32_t lo = __ldg(bm + wi);
  const uint32_t hi = sh + need > 32 ? __ldg(bm + wi + 1) : 0u;
  return __funnelshift_r(lo, hi, sh);
}

// vec_bits returns the V validity bits of a vector from bit p: from one
// word when kSplit is false (p a multiple of V), else through bits_at.
template <int V, bool kSplit> __device__ __forceinline__ uint32_t vec_bits(const uint32_t* __restrict__ bm, uint64_t p) {
  if (kSplit) return bits_at(bm, p, V);
  return __ldg(bm + (p >> 5)) >> (p & 31);
}

__device__ __forceinline__ uint64_t global_thread() { return (uint64_t)blockIdx.x * kBlockThreads + threadIdx.x; }
__device__ __forceinline__ uint64_t grid_threads() { return (uint64_t)gridDim.x * kBlockThreads; }

// Share is a thread's part of a strided loop over a chunk: the items tid,
// tid + stride, ... The per-kind kernels spread a chunk over the whole grid
// (grid_share); the many-columns kernel gives each tile to one block
// (block_share). The thread layer below takes either.
struct Share {
  uint64_t tid, stride;
};
__device__ __forceinline__ Share grid_share() { return Share{global_thread(), grid_threads()}; }
__device__ __forceinline__ Share block_share() { return Share{threadIdx.x, kBlockThreads}; }

// thread_pass feeds this thread's share of elements [0, n) to fn(x, valid)
// and returns how many of them are valid: the unaligned head and the tail
// one element per thread, the body as 16-byte vectors in a strided loop
// unrolled kUnroll times, each vector's validity bits read with it: one
// word's load and a shift where no vector's bits straddle two words
// (kSplit false: the first vector's bit index a multiple of its elements,
// as in a column from its first row), else bits_at's one or two loads.
// (The single load, without bits_at's conditional second one, lets the
// folds go 5-25% faster on columns with nulls, measured on an H200.)
template <typename T, bool kNulls, typename Fn, bool kSplit = true>
__device__ __forceinline__ uint64_t thread_pass(const T* __restrict__ vals, const uint32_t* __restrict__ valid,
                                                uint64_t vbit, uint64_t n, Share sh, Fn& fn) {
  constexpr int V = 16 / sizeof(T);
  constexpr uint32_t kVecMask = V == 32 ? kFullMask : (1u << V) - 1;
  const uint64_t tid = sh.tid, stride = sh.stride;
  const uint64_t mis = (reinterpret_cast<uintptr_t>(vals) & 15) / sizeof(T);
  const uint64_t head = mis == 0 ? 0 : (V - mis < n ? V - mis : n);
  const uint64_t nvec = (n - head) / V;
  const uint64_t tail = head + nvec * V;
  uint64_t count = 0;

  auto one = [&](uint64_t e) {
    const uint32_t ok = kNulls ? bit_at(valid, vbit + e) : 1u;
    fn(vals[e], ok != 0);
    count += ok;
  };
  auto vec = [&](const uint4& v, uint32_t m) {
#pragma unroll
    for (int k = 0; k < V; k++) fn(vec_lane<T>(v, k), kNulls ? ((m >> k) & 1u) != 0 : true);
    count += kNulls ? __popc(m & kVecMask) : V;
  };

  if (tid < head) one(tid);
  if (tid < n - tail) one(tail + tid);

  const uint4* __restrict__ vp = reinterpret_cast<const uint4*>(vals + head);
  uint64_t j = tid;
  for (; j + (kUnroll - 1) * stride < nvec; j += kUnroll * stride) {
    uint4 v[kUnroll];
    uint32_t m[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; u++) v[u] = __ldg(vp + j + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; u++) m[u] = kNulls ? vec_bits<V, kSplit>(valid, vbit + head + (j + u * stride) * V) : 0u;
#pragma unroll
    for (int u = 0; u < kUnroll; u++) vec(v[u], m[u]);
  }
  for (; j < nvec; j += stride) {
    const uint4 v = __ldg(vp + j);
    vec(v, kNulls ? vec_bits<V, kSplit>(valid, vbit + head + j * V) : 0u);
  }
  return count;
}

template <typename T, typename Fn>
__device__ __forceinline__ uint64_t thread_pass(const T* vals, const uint32_t* valid, uint64_t vbit, uint64_t n,
                                                Share sh, Fn& fn) {
  if (valid != nullptr) {
    // A vector's validity bits lie in one word when its first bit's index
    // is a multiple of the vector's elements (V divides 32).
    constexpr uint64_t V = 16 / sizeof(T);
    const uint64_t mis = (reinterpret_cast<uintptr_t>(vals) & 15) / sizeof(T);
    const uint64_t head = mis == 0 ? 0 : V - mis;
    if ((vbit + head) % V == 0) return thread_pass<T, true, Fn, false>(vals, valid, vbit, n, sh, fn);
    return thread_pass<T, true>(vals, valid, vbit, n, sh, fn);
  }
  return thread_pass<T, false>(vals, nullptr, 0, n, sh, fn);
}

// thread_pass_scalar feeds fn the same elements as thread_pass, one at a
// time (no vector loads, no unrolling): for the rare re-reads, small and
// light on registers.
template <typename T, typename Fn>
__device__ __noinline__ void thread_pass_scalar(const T* __restrict__ vals, const uint32_t* __restrict__ valid,
                                                uint64_t vbit, uint64_t n, Share sh, Fn& fn) {
  constexpr uint64_t V = 16 / sizeof(T);
  const uint64_t tid = sh.tid, stride = sh.stride;
  const uint64_t mis = (reinterpret_cast<uintptr_t>(vals) & 15) / sizeof(T);
  const uint64_t head = mis == 0 ? 0 : (V - mis < n ? V - mis : n);
  const uint64_t nvec = (n - head) / V;
  const uint64_t tail = head + nvec * V;
  auto one = [&](uint64_t e) { fn(vals[e], valid == nullptr || bit_at(valid, vbit + e) != 0); };
  if (tid < head) one(tid);
  if (tid < n - tail) one(tail + tid);
  for (uint64_t j = tid; j < nvec; j += stride)
    for (uint64_t k = 0; k < V; k++) one(head + j * V + k);
}

// ------------------------------------------------ thread accumulators

// IntAcc folds integers of type T: 64-bit sums for narrow types (exact for
// 2^32 elements a thread), 128-bit sums for 64-bit types; min/max in T.
template <typename T, class Fam> struct IntAcc {
  static constexpr bool kWide = sizeof(T) == 8;
  static constexpr bool kSigned = T(-1) < T(0);
  uint64_t lo = 0, hi = 0;  // narrow types: lo is the (two's complement) sum
  T mn = Limits<T>::hi, mx = Limits<T>::lo;

  __device__ __forceinline__ void operator()(T x, bool ok) {
    const T xs = ok ? x : T(0);
    if (kWide) {
      add128(lo, hi, (uint64_t)xs, kSigned ? (uint64_t)((int64_t)xs >> 63) : 0);
    } else {
      lo += kSigned ? (uint64_t)(int64_t)xs : (uint64_t)xs;
    }
    mn = tmin(mn, ok ? x : Limits<T>::hi);
    mx = tmax(mx, ok ? x : Limits<T>::lo);
  }

  __device__ __forceinline__ typename Fam::State state(uint64_t count) const {
    typename Fam::State s;
    s.w[0] = lo;
    s.w[1] = kWide ? hi : (kSigned ? (uint64_t)((int64_t)lo >> 63) : 0);
    s.w[2] = kSigned ? (uint64_t)(int64_t)mn : (uint64_t)mn;
    s.w[3] = kSigned ? (uint64_t)(int64_t)mx : (uint64_t)mx;
    s.w[4] = count;
    return s;
  }
};

// FloatAcc folds floats: a two-sum per value (branch-free, like the CPU's
// fast path) and min/max over order keys. It does not look for NaN: a valid
// NaN (or infinity, or an overflow) makes the sum non-finite, and a thread
// whose sum is non-finite re-reads its elements through CarefulAcc, which
// keeps them apart in the special sum and out of min/max as the CPU does.
template <typename T> struct FloatKey;
template <> struct FloatKey<float> {
  using K = int32_t;
  static constexpr K pos_inf = kKey32PosInf, neg_inf = kKey32NegInf;
  __device__ static K key(float x) { return key32(x); }
  __device__ static int64_t widen(K k) { return key64((double)unkey32(k)); }
};
template <> struct FloatKey<double> {
  using K = int64_t;
  static constexpr K pos_inf = kKey64PosInf, neg_inf = kKey64NegInf;
  __device__ static K key(double x) { return key64(x); }
  __device__ static int64_t widen(K k) { return k; }
};

template <typename T> struct FloatAcc {
  using Key = FloatKey<T>;
  double s = 0, c = 0;
  typename Key::K kmn = Key::pos_inf, kmx = Key::neg_inf;

  __device__ __forceinline__ void operator()(T x, bool ok) {
    const double xd = (double)(ok ? x : T(0));
    const double t = s + xd;
    const double z = t - s;
    c += (s - (t - z)) + (xd - z);
    s = t;
    const typename Key::K k = Key::key(x);
    kmn = tmin(kmn, ok ? k : Key::pos_inf);
    kmx = tmax(kmx, ok ? k : Key::neg_inf);
  }

  __device__ __forceinline__ bool finite() const { return isfinite(s) && isfinite(c); }
};

template <typename T> struct CarefulAcc {
  using Key = FloatKey<T>;
  double s = 0, c = 0, special = 0;
  typename Key::K kmn = Key::pos_inf, kmx = Key::neg_inf;

  __device__ __forceinline__ void operator()(T x, bool ok) {
    if (!ok) return;
    if (x == x) {  // min/max skip NaN
      const typename Key::K k = Key::key(x);
      kmn = tmin(kmn, k);
      kmx = tmax(kmx, k);
    }
    const double xd = (double)x;
    if (!isfinite(xd)) {
      special += xd;
      return;
    }
    const double t = s + xd;
    if (isinf(t)) {
      special += t;  // finite values overflowed
      s = 0;
      return;
    }
    const double z = t - s;
    c += (s - (t - z)) + (xd - z);
    s = t;
  }
};

// DecAcc folds decimal128 values: 192-bit sum, signed 128-bit min/max.
struct alignas(16) Dec128 {
  uint64_t lo, hi;
};

struct DecAcc {
  uint64_t s0 = 0, s1 = 0, s2 = 0;
  uint64_t mnlo = UINT64_MAX, mnhi = (uint64_t)INT64_MAX, mxlo = 0, mxhi = (uint64_t)INT64_MIN;
  __device__ __forceinline__ void operator()(Dec128 x, bool ok) {
    const uint64_t lo = ok ? x.lo : 0, hi = ok ? x.hi : 0;
    add192(s0, s1, s2, lo, hi, (uint64_t)((int64_t)hi >> 63));
    if (ok && less128(x.lo, x.hi, mnlo, mnhi)) mnlo = x.lo, mnhi = x.hi;
    if (ok && less128(mxlo, mxhi, x.lo, x.hi)) mxlo = x.lo, mxhi = x.hi;
  }
};

// add96 adds x to the 96-bit sum {lo, hi}: one carry chain (three 32-bit
// additions).
__device__ __forceinline__ void add96(uint64_t& lo, uint32_t& hi, uint64_t x) {
#ifdef __CUDA_ARCH__
  asm("add.cc.u64 %0, %0, %2;\n\taddc.u32 %1, %1, 0;" : "+l"(lo), "+r"(hi) : "l"(x));
#else
  lo += x;
  hi += lo < x;
#endif
}

// IntSqAcc is IntAcc with the exact sum of the squares: 128-bit squares
// of 64-bit values summed in 192 bits; the square of a narrower value
// (below 2^64) is one 32x32 -> 64-bit multiply (signed: its sign no matter,
// no absolute value needed), summed in 96 bits, which hold the sum of up to
// 2^32 such squares: a launch gives a thread at most 2^31 + 2 elements
// (backend/cuda's maxLaunch). (64-bit values squared as three products of
// their 32-bit halves, each summed in 96 bits, took fewer instructions
// without nulls but ran 5-20% slower on an H200.)
template <typename T, class Fam> struct IntSqAcc {
  static constexpr bool kWide = sizeof(T) == 8;
  static constexpr bool kSigned = T(-1) < T(0);
  IntAcc<T, Fam> base;
  uint64_t q0 = 0, q1 = 0, q2 = 0;  // 64-bit values: the 192-bit sum
  uint64_t nlo = 0;                 // narrower values: the 96-bit sum
  uint32_t nhi = 0;

  __device__ __forceinline__ void operator()(T x, bool ok) {
    base(x, ok);
    const T xs = ok ? x : T(0);
    if (kWide) {
      const uint64_t m = kSigned && xs < T(0) ? (uint64_t)0 - (uint64_t)(int64_t)xs : (uint64_t)xs;
#ifdef __CUDA_ARCH__
      const uint64_t hi = __umul64hi(m, m);
#else
      const uint64_t hi = (uint64_t)(((unsigned __int128)m * m) >> 64);
#endif
      add192(q0, q1, q2, m * m, hi, 0);
    } else if (kSigned) {
      add96(nlo, nhi, (uint64_t)((int64_t)(int32_t)xs * (int32_t)xs));
    } else {
      add96(nlo, nhi, (uint64_t)(uint32_t)xs * (uint32_t)xs);
    }
  }

  // squares gives the sum of the squares in 192 bits.
  __device__ __forceinline__ void squares(uint64_t& w0, uint64_t& w1, uint64_t& w2) const {
    if (kWide) {
      w0 = q0, w1 = q1, w2 = q2;
    } else {
      w0 = nlo, w1 = nhi, w2 = 0;
    }
  }
};

// FloatSqAcc is FloatAcc with the squares: x² = p + e as an error-free
// product (e from an FMA; 0 for float32), p two-summed into (q, qc), e into
// qc. A thread whose squares end non-finite re-reads its share through
// CarefulSqAcc.
template <typename T> struct FloatSqAcc {
  FloatAcc<T> base;
  double q = 0, qc = 0;

  __device__ __forceinline__ void operator()(T x, bool ok) {
    base(x, ok);
    const double xd = (double)(ok ? x : T(0));
    const double p = xd * xd;
    const double t = q + p;
    const double z = t - q;
    // A float32's square is exact in double (48 bits of significand): its
    // rounding error is 0, and the FMA that finds it is left out.
    qc += sizeof(T) == 4 ? (q - (t - z)) + (p - z) : (q - (t - z)) + (p - z) + fma(xd, xd, -p);
    q = t;
  }

  __device__ __forceinline__ bool finite() const { return base.finite() && isfinite(q) && isfinite(qc); }
};

// CarefulSqAcc keeps non-finite squares (and lane sums that overflow) apart
// in special, the sum of the squares starting again from 0.
template <typename T> struct CarefulSqAcc {
  CarefulAcc<T> base;
  double q = 0, qc = 0, special = 0;

  __device__ __forceinline__ void operator()(T x, bool ok) {
    base(x, ok);
    if (!ok) return;
    const double xd = (double)x;
    const double p = xd * xd;
    const double t = q + p;
    if (!isfinite(t)) {
      special += t;
      q = 0;
      return;
    }
    const double e = fma(xd, xd, -p);
    const double z = t - q;
    qc += (q - (t - z)) + (p - z) + e;
    q = t;
  }
};

template <> __device__ __forceinline__ Dec128 vec_lane<Dec128>(const uint4& v, int) {
  return Dec128{(uint64_t)v.x | (uint64_t)v.y << 32, (uint64_t)v.z | (uint64_t)v.w << 32};
}

// ------------------------------------------------------------- sketch
//
// The approx_distinct sketch is agg.Sketch of the Go package: the same
// 64-bit hash of each valid value (integers sign- or zero-extended to 64
// bits, floats widened to double with -0 as +0 and every NaN as one value,
// through agg.HashInt's three Feistel rounds of 32-bit multiplies), the
// same registers (the top
// AGG_SKETCH_PRECISION bits pick one, the rank is one plus the leading zeros
// of the bits below), and, while there are at most AGG_SKETCH_EXACT of them,
// the distinct hashes themselves. Registers merge by max and hashes by
// union, so the order in which threads, blocks and launches fold them
// changes nothing: the result is bit for bit the CPU backend's.
//
// A block folds its values into a BlockSketch in shared memory (four 8-bit
// registers a word, raised with atomicCAS; an open-addressing table of its
// distinct hashes, given up once it holds more than AGG_SKETCH_EXACT), then
// flushes it into the DeviceSketch of the column: the words of registers it
// raised by a bytewise max (atomicCAS), hashes into its table by atomicCAS.
// Every launch over the column's chunks raises the same DeviceSketch, which
// the host zeroes before the first and reads after the last (a raise has
// nothing to undo). A block starts from the registers of the DeviceSketch
// as it finds them (a sketch of values folded already: raising from there
// gives the same maxima), so that once the registers are warm a hash
// rarely raises one, and from whether its table has already overflowed, in
// which case the block keeps no hashes at all. The hash of every value is
// computed, null or not; a null raises nothing. Once the registers are
// warm, a hash is tested against their floor by the bits of its top word
// alone (floor_mask), its rank found only where it passes.
//
// A table's probe is bounded by its size: a probe that finds no room
// means more than AGG_SKETCH_EXACT distinct hashes (the table holds at most
// AGG_SKETCH_EXACT + the threads in flight before the overflow is seen,
// far below its size), and marks the overflow.

constexpr int kSketchP = AGG_SKETCH_PRECISION;
constexpr int kSketchRegs = AGG_SKETCH_REGISTERS;
constexpr unsigned kSketchExact = AGG_SKETCH_EXACT;
constexpr int kBlockSlots = AGG_SKETCH_BLOCK_SLOTS;
constexpr int kSketchSlots = AGG_SKETCH_SLOTS;
static_assert(kSketchRegs == 1 << kSketchP, "a register for each value of the top bits");
static_assert(kBlockSlots >= 2 * kSketchExact && kBlockSlots - kSketchExact > kBlockThreads,
              "a block's table has room for the hashes in flight when it overflows");

// DeviceSketch is a column's sketch in device memory (AGG_SKETCH_BYTES),
// zeroed by the host before the column's first launch.
struct DeviceSketch {
  unsigned int regs[kSketchRegs / 4];      // the registers (ranks), four 8-bit ones a word
  unsigned long long slots[kSketchSlots];  // distinct nonzero hashes (0: free)
  unsigned int count;                      // distinct hashes recorded (with 0)
  unsigned int overflow;                   // 1: more than kSketchExact
  unsigned int zero;                       // 1: hash 0 was seen
  unsigned int reserved;
};
static_assert(sizeof(DeviceSketch) == AGG_SKETCH_BYTES, "DeviceSketch is AGG_SKETCH_BYTES (gpuagg/cuda)");

// hash_round is a round of agg.HashInt's Feistel network: the low ^ the
// high half of a*k + d (one IMAD.WIDE.U32 and the xor).
__device__ __forceinline__ uint32_t hash_round(uint32_t a, uint32_t k, uint64_t d) {
  const uint64_t p = (uint64_t)a * k + d;
  return (uint32_t)p ^ (uint32_t)(p >> 32);
}

// feistel is agg.HashInt of the word hi:lo, after its first round (lo ^=
// F1(hi), done by the caller).
__device__ __forceinline__ uint64_t feistel(uint32_t hi, uint32_t lo) {
  hi ^= hash_round(lo, 0x85ebca6bu, 0x27d4eb2f165667b1ULL);
  lo ^= hash_round(hi, 0xc2b2ae35u, 0x94d049bb133111ebULL);
  return (uint64_t)lo << 32 | hi;
}

// mix64 is agg.HashInt.
__device__ __forceinline__ uint64_t mix64(uint64_t x) {
  const uint32_t hi = (uint32_t)(x >> 32);
  return feistel(hi, (uint32_t)x ^ hash_round(hi, 0x9e3779b9u, 0));
}

// float_hash is agg.HashFloat.
__device__ __forceinline__ uint64_t float_hash(double x) {
  uint64_t b = f64_bits(x);
  if (x == 0) b = 0;
  if (x != x) b = 0x7ff8000000000000ULL;
  return mix64(b);
}

// sketch_hash is the hash of a value. A value of 32 bits or fewer has a
// high word of 0 or (signed, negative) all ones, and F1 of all ones is all
// ones (the fold of (2^32-1)k is (-k) ^ (k-1)): its first round is lo ^= hi.
__device__ __forceinline__ uint64_t hash32(int32_t x) {
  const uint32_t hi = (uint32_t)(x >> 31);
  return feistel(hi, (uint32_t)x ^ hi);
}
template <typename T> __device__ __forceinline__ uint64_t sketch_hash(T x) {
  return sizeof(T) == 8 ? mix64((uint64_t)x) : T(-1) < T(0) ? hash32((int32_t)x) : feistel(0u, (uint32_t)x);
}
template <> __device__ __forceinline__ uint64_t sketch_hash<float>(float x) { return float_hash((double)x); }
template <> __device__ __forceinline__ uint64_t sketch_hash<double>(double x) { return float_hash(x); }

__device__ __forceinline__ unsigned clz64(uint64_t x) {
#ifdef __CUDA_ARCH__
  return (unsigned)__clzll((long long)x);
#else
  return (unsigned)__builtin_clzll(x);  // x != 0 below
#endif
}

// insert_hash adds nonzero hash h to an open-addressing table of size
// slots (a power of two) and counts it in count when it is new; a count
// beyond kSketchExact, or a table without room, sets overflow.
__device__ __forceinline__ void insert_hash(unsigned long long* tab, int slots, unsigned int* count,
                                            unsigned int* overflow, uint64_t h) {
  unsigned i = (unsigned)h & (unsigned)(slots - 1);
  for (int p = 0; p < slots; p++, i = (i + 1) & (unsigned)(slots - 1)) {
    unsigned long long cur = *(volatile unsigned long long*)&tab[i];
    if (cur == 0) cur = atomicCAS(&tab[i], 0ULL, (unsigned long long)h);
    if (cur == h) return;  // there already
    if (cur == 0) {        // the slot is h's now
      if (atomicAdd(count, 1u) + 1 > kSketchExact) atomicExch(overflow, 1u);
      return;
    }
  }
  atomicExch(overflow, 1u);
}

// note_zero records hash 0 (kept apart from the tables, where 0 is free).
__device__ __forceinline__ void note_zero(unsigned int* zero, unsigned int* count, unsigned int* overflow) {
  if (*(volatile unsigned int*)zero == 0 && atomicExch(zero, 1u) == 0 && atomicAdd(count, 1u) + 1 > kSketchExact)
    atomicExch(overflow, 1u);
}

// max_bytes is the bytewise maximum of two words of registers (ranks are
// below 128: a SWAR compare through the free top bits, as agg's maxBytes).
__device__ __forceinline__ unsigned int max_bytes(unsigned int a, unsigned int b) {
  const unsigned int ge = ((a | 0x80808080u) - b) & 0x80808080u;  // top bit of each byte: a >= b
  const unsigned int mask = (ge >> 7) * 0xffu;
  return (a & mask) | (b & ~mask);
}

// min_byte is the smallest of the four bytes of w.
__device__ __forceinline__ unsigned min_byte(unsigned int w) {
  unsigned a = w & 0xffu, b = (w >> 8) & 0xffu, c = (w >> 16) & 0xffu, d = w >> 24;
  a = a < b ? a : b;
  c = c < d ? c : d;
  return a < c ? a : c;
}

// floor_mask is the mask of a hash's top word that decides whether its rank
// may exceed floor f: the rank (one plus the leading zeros of the hash's
// 50 bits below the register's) exceeds f where those bits' top f are zero;
// the top word holds 18 of them, so the mask is their top f, and for a
// floor above 18 all 18 (a hash that passes may still rank at most f: its
// rank is found and its register read, as for any hash that passes).
__device__ __forceinline__ uint32_t floor_mask(unsigned f) {
  constexpr unsigned kTop = 32 - kSketchP;  // rank bits in the top word
  if (f >= kTop) return (1u << kTop) - 1;
  return ((1u << f) - 1) << (kTop - f);
}

// BlockSketch is a block's sketch in shared memory.
struct BlockSketch {
  unsigned int regs[kSketchRegs / 4];      // four 8-bit registers a word
  unsigned long long slots[kBlockSlots];   // the block's distinct nonzero hashes
  unsigned int count, overflow, zero;
  // floor: every register is at least floor (the smallest at init; the
  // registers only rise): a hash of a rank at most floor raises none.
  unsigned int floor;

  // init starts the block's registers from the column's, its table empty,
  // and finds their floor; the block keeps no hashes when the column's
  // table has overflowed already. Every thread of the block calls it.
  __device__ __forceinline__ void init(const DeviceSketch* g) {
    if (threadIdx.x == 0) floor = 0xffu;
    __syncthreads();
    unsigned low = 0xffu;  // the smallest of this thread's registers
    for (int i = threadIdx.x; i < kSketchRegs / 4; i += kBlockThreads) {
      const unsigned int w = __ldcg(&g->regs[i]);
      regs[i] = w;
      const unsigned m = min_byte(w);
      low = m < low ? m : low;
    }
    for (int i = threadIdx.x; i < kBlockSlots; i += kBlockThreads) slots[i] = 0;
    atomicMin(&floor, low);
    if (threadIdx.x == 0) {
      count = 0, zero = 0;
      overflow = *(const volatile unsigned int*)&g->overflow;
    }
    __syncthreads();
  }

  // add folds hash h of a value, valid or not (ok); mask is the block's
  // floor_mask, and collecting whether the block kept its hashes at init
  // (it keeps none once its table overflowed, which stays so). The common
  // case once the registers are warm, a hash whose top word says its rank
  // is at most the floor and no hashes to keep, reads no shared memory and
  // finds no rank; a register that the hash does not raise is inline too;
  // the rest (raise, keep) is a call, which keeps the unrolled loops of the
  // thread layer small.
  __device__ __forceinline__ void add(uint64_t h, bool ok, uint32_t mask, bool collecting) {
    const bool keep = collecting && ok && *(volatile unsigned int*)&overflow == 0;
    if (!keep && (!ok || ((uint32_t)(h >> 32) & mask) != 0)) return;
    const unsigned rank = clz64(h << kSketchP | 1ULL << (kSketchP - 1)) + 1;
    const unsigned r = (unsigned)(h >> (64 - kSketchP));
    const unsigned int old = *(volatile unsigned int*)&regs[r >> 2];
    const bool raise = ((old >> ((r & 3) * 8)) & 0xffu) < rank;
    if (raise || keep) slow(h, r, rank, keep);
  }

  // slow raises register r to rank (when it is below) and, with keep,
  // records h among the block's distinct hashes.
  __device__ __noinline__ void slow(uint64_t h, unsigned r, unsigned rank, bool keep) {
    unsigned int* w = &regs[r >> 2];
    const unsigned sh = (r & 3) * 8;
    unsigned int old = *(volatile unsigned int*)w;
    while (((old >> sh) & 0xffu) < rank) {
      const unsigned int seen = atomicCAS(w, old, (old & ~(0xffu << sh)) | rank << sh);
      if (seen == old) break;
      old = seen;
    }
    if (!keep) return;
    if (h == 0) {
      note_zero(&zero, &count, &overflow);
      return;
    }
    insert_hash(slots, kBlockSlots, &count, &overflow, h);
  }

  // flush raises the column's sketch with the block's; every thread of the
  // block calls it, after a barrier that follows the block's last add.
  __device__ __forceinline__ void flush(DeviceSketch* g) {
    for (int i = threadIdx.x; i < kSketchRegs / 4; i += kBlockThreads) {
      const unsigned int v = regs[i];
      unsigned int* gw = &g->regs[i];
      unsigned int old = __ldcg(gw);
      for (unsigned int want = max_bytes(v, old); want != old; want = max_bytes(v, old)) {
        const unsigned int seen = atomicCAS(gw, old, want);
        if (seen == old) break;
        old = seen;
      }
    }
    if (overflow != 0) {
      if (threadIdx.x == 0) atomicExch(&g->overflow, 1u);
      return;
    }
    for (int i = threadIdx.x; i < kBlockSlots; i += kBlockThreads) {
      const uint64_t h = slots[i];
      if (h != 0 && *(volatile unsigned int*)&g->overflow == 0)
        insert_hash(g->slots, kSketchSlots, &g->count, &g->overflow, h);
    }
    if (threadIdx.x == 0 && zero != 0) note_zero(&g->zero, &g->count, &g->overflow);
  }
};

// SketchHook folds each value's hash into a block's sketch; NoHook, the
// thread layers' default, does nothing.
struct SketchHook {
  BlockSketch* bs;
  uint32_t mask;    // floor_mask(bs->floor), in a register
  bool collecting;  // bs kept its hashes at init
  template <typename T> __device__ __forceinline__ void operator()(T x, bool ok) const {
    bs->add(sketch_hash<T>(x), ok, mask, collecting);
  }
};
struct NoHook {
  template <typename T> __device__ __forceinline__ void operator()(T, bool) const {}
};

// Hooked feeds a thread accumulator and a hook.
template <class Acc, class Hook> struct Hooked {
  Acc& acc;
  Hook hook;
  template <typename T> __device__ __forceinline__ void operator()(T x, bool ok) {
    acc(x, ok);
    hook(x, ok);
  }
};

// ------------------------------------------------------- thread layer

// Chunk is the elements of one reduction: element i is values[voff + i]
// (bool: bit voff + i of the 32-bit-word bitmap), valid when validity is
// null or its bit vbit + i is set.
struct Chunk {
  const void* values;
  uint64_t voff;
  const uint32_t* validity;
  uint64_t vbit;
  uint64_t n;
};

// The thread layer of each storage kind: Agg::thread_state(c, sh) folds
// this thread's share sh of chunk c into a state of Agg::Family. The
// per-kind kernels (agg_grid) and the many-columns kernel (multi_tile) run
// the same ones, and the same warp, block and device layers after them.

template <typename T, class Fam> struct IntAgg {
  using Family = Fam;
  __device__ static __forceinline__ typename Fam::State thread_state(const Chunk& c, Share sh) {
    IntAcc<T, Fam> acc;
    const uint64_t count = thread_pass(static_cast<const T*>(c.values) + c.voff, c.validity, c.vbit, c.n, sh, acc);
    return acc.state(count);
  }
};

// FloatAgg: the fast pass, and when its sum is not finite, the careful
// re-read of the same share.
template <typename T> struct FloatAgg {
  using Family = FloatFamily;
  __device__ static __forceinline__ FloatFamily::State thread_state(const Chunk& c, Share sh) {
    const T* vals = static_cast<const T*>(c.values) + c.voff;
    FloatAcc<T> acc;
    const uint64_t count = thread_pass(vals, c.validity, c.vbit, c.n, sh, acc);
    if (acc.finite()) {
      return FloatFamily::State{{f64_bits(acc.s), f64_bits(acc.c), f64_bits(0.0),
                                 (uint64_t)FloatKey<T>::widen(acc.kmn), (uint64_t)FloatKey<T>::widen(acc.kmx),
                                 count}};
    }
    CarefulAcc<T> careful;
    thread_pass_scalar(vals, c.validity, c.vbit, c.n, sh, careful);
    return FloatFamily::State{{f64_bits(careful.s), f64_bits(careful.c), f64_bits(careful.special),
                               (uint64_t)FloatKey<T>::widen(careful.kmn), (uint64_t)FloatKey<T>::widen(careful.kmx),
                               count}};
  }
};

struct DecimalAgg {
  using Family = DecimalFamily;
  __device__ static __forceinline__ DecimalFamily::State thread_state(const Chunk& c, Share sh) {
    DecAcc acc;
    const uint64_t count =
        thread_pass(static_cast<const Dec128*>(c.values) + c.voff, c.validity, c.vbit, c.n, sh, acc);
    return DecimalFamily::State{{acc.s0, acc.s1, acc.s2, acc.mnlo, acc.mnhi, acc.mxlo, acc.mxhi, count}};
  }
};

// BoolAgg reads the values bitmap and the validity bitmap 32 elements at a
// time (bit offsets need not be multiples of 8).
struct BoolAgg {
  using Family = BoolFamily;
  __device__ static __forceinline__ BoolFamily::State thread_state(const Chunk& c, Share sh) {
    const uint32_t* bits = static_cast<const uint32_t*>(c.values);
    const uint64_t words = (c.n + 31) / 32;
    uint64_t trues = 0, count = 0;
    for (uint64_t j = sh.tid; j < words; j += sh.stride) {
      const uint64_t rem = c.n - 32 * j;
      const unsigned need = rem >= 32 ? 32u : (unsigned)rem;
      const uint32_t range = need == 32 ? kFullMask : (1u << need) - 1;
      const uint32_t m = (c.validity != nullptr ? bits_at(c.validity, c.vbit + 32 * j, need) : kFullMask) & range;
      trues += __popc(bits_at(bits, c.voff + 32 * j, need) & m);
      count += __popc(m);
    }
    return BoolFamily::State{{trues, count}};
  }
};

// IntSqAgg: the integers with the sum of their squares.
template <typename T, class Base> struct IntSqAgg {
  using Family = IntSqFamily<Base>;
  template <class Hook = NoHook>
  __device__ static __forceinline__ typename Family::State thread_state(const Chunk& c, Share sh, Hook hook = Hook()) {
    IntSqAcc<T, Base> acc;
    Hooked<IntSqAcc<T, Base>, Hook> fn{acc, hook};
    const uint64_t count = thread_pass(static_cast<const T*>(c.values) + c.voff, c.validity, c.vbit, c.n, sh, fn);
    const typename Base::State b = acc.base.state(count);
    uint64_t q0, q1, q2;
    acc.squares(q0, q1, q2);
    return typename Family::State{{b.w[0], b.w[1], b.w[2], b.w[3], b.w[4], q0, q1, q2}};
  }
};

// FloatSqAgg: the floats with the sum of their squares; the careful re-read
// when the sum or the squares end non-finite (the hook sees each value once,
// in the first pass).
template <typename T> struct FloatSqAgg {
  using Family = FloatSqFamily;
  template <class Hook = NoHook>
  __device__ static __forceinline__ FloatSqFamily::State thread_state(const Chunk& c, Share sh, Hook hook = Hook()) {
    const T* vals = static_cast<const T*>(c.values) + c.voff;
    FloatSqAcc<T> acc;
    Hooked<FloatSqAcc<T>, Hook> fn{acc, hook};
    const uint64_t count = thread_pass(vals, c.validity, c.vbit, c.n, sh, fn);
    if (acc.finite()) {
      const FloatAcc<T>& b = acc.base;
      return FloatSqFamily::State{{f64_bits(b.s), f64_bits(b.c), f64_bits(0.0), (uint64_t)FloatKey<T>::widen(b.kmn),
                                   (uint64_t)FloatKey<T>::widen(b.kmx), count, f64_bits(acc.q), f64_bits(acc.qc),
                                   f64_bits(0.0)}};
    }
    CarefulSqAcc<T> careful;
    thread_pass_scalar(vals, c.validity, c.vbit, c.n, sh, careful);
    const CarefulAcc<T>& b = careful.base;
    return FloatSqFamily::State{{f64_bits(b.s), f64_bits(b.c), f64_bits(b.special),
                                 (uint64_t)FloatKey<T>::widen(b.kmn), (uint64_t)FloatKey<T>::widen(b.kmx), count,
                                 f64_bits(careful.q), f64_bits(careful.qc), f64_bits(careful.special)}};
  }
};

// ------------------------------------------------------------ kernels

// agg_grid is the body of a per-kind kernel: the chunk spread over the
// whole grid, reduced thread -> warp -> block -> device.
template <class Agg>
__device__ __forceinline__ void agg_grid(const Chunk& c, uint64_t* partials, unsigned int* ticket, uint64_t* out) {
  grid_finish<typename Agg::Family>(Agg::thread_state(c, grid_share()), partials, ticket, out);
}

// sketch_grid is the body of a sketch kernel: agg_grid with each valid
// value's hash folded into the block's sketch, which the block flushes into
// the column's before its state enters the device layer.
template <class Agg>
__device__ __forceinline__ void sketch_grid(const Chunk& c, uint64_t* partials, unsigned int* ticket, uint64_t* out,
                                            DeviceSketch* g) {
  __shared__ BlockSketch bs;
  bs.init(g);
  const typename Agg::Family::State s =
      Agg::thread_state(c, grid_share(), SketchHook{&bs, floor_mask(bs.floor), bs.overflow == 0});
  __syncthreads();
  bs.flush(g);
  grid_finish<typename Agg::Family>(s, partials, ticket, out);
}

// ---------------------------------------------- many columns, one launch
//
// arrowagg_multi aggregates many columns (of any kinds) in one launch. The
// host cuts each column into tiles of consecutive elements and lists the
// tiles, column after column, in a work list; block b takes tiles b,
// b + gridDim.x, ... and reduces each with the per-kind kernels' thread and
// block layers (the thread layer over the tile with a block-wide Share). A
// column of one tile is then done: thread 0 writes the block's state. The
// tiles of a longer column are partials of its reduction, merged by
// merge_partials (the device layer) with the column's own ticket: the last
// of its tiles to finish merges them in a fixed shape, whatever the timing.
// Every column's state has its kind's word layout (above); for a column of
// one tile it is bit for bit the per-kind kernel's on a grid of one block.
//
// Parameters (all 64-bit):
//   cols      the column descriptors (ColumnDesc);
//   tiles     the work list (Tile), the tiles of each column consecutive
//             and in element order;
//   ntiles    the length of the work list;
//   partials  kMaxWords words of scratch per tile (a column of t tiles uses
//             the slots of its tiles, from first_tile on);
//   tickets   one zeroed 32-bit counter per column, left zeroed.
// The alignment rules of the per-kind kernels hold for each column.

constexpr int kMaxWords = AGG_MAX_WORDS;  // the widest state (decimal)
static_assert(IntSqFamily<SignedFamily>::K <= AGG_STATE_WORDS && FloatSqFamily::K <= AGG_STATE_WORDS &&
                  kMaxWords <= AGG_STATE_WORDS,
              "AGG_STATE_WORDS holds every per-kind state");
static_assert(SignedFamily::K <= kMaxWords && UnsignedFamily::K <= kMaxWords && FloatFamily::K <= kMaxWords &&
                  DecimalFamily::K <= kMaxWords && BoolFamily::K <= kMaxWords,
              "kMaxWords holds every state");

// ColumnDesc describes one column (gpuagg/cuda's multiColumn, 56 bytes).
struct ColumnDesc {
  uint64_t values;      // device address of the values (bool: the bitmap)
  uint64_t voff;        // element (bool: bit) offset of element 0 into values
  uint64_t validity;    // device address of the validity bitmap; 0: every element valid
  uint64_t vbit;        // bit offset of element 0 into validity
  uint64_t out;         // device address of the column's state
  uint32_t kind;        // a KindCode
  uint32_t first_tile;  // index of its first tile in the work list
  uint32_t tiles;       // number of its tiles (at least 1)
  uint32_t reserved;
};
static_assert(sizeof(ColumnDesc) == AGG_COLUMN_DESC_BYTES, "ColumnDesc is 56 bytes (gpuagg/cuda multiColumn)");

// Tile is one block's work: elements [lo, lo + n) of column col.
struct Tile {
  uint64_t lo;
  uint32_t n;
  uint32_t col;
};
static_assert(sizeof(Tile) == AGG_TILE_BYTES, "Tile is 16 bytes (gpuagg/cuda multiTile)");

// multi_tile reduces one tile of column d, partial `index` of its tiles.
template <class Agg>
__device__ __forceinline__ void multi_tile(const ColumnDesc& d, const Tile& t, unsigned int index, uint64_t* partials,
                                           unsigned int* tickets) {
  using Fam = typename Agg::Family;
  const Chunk c{reinterpret_cast<const void*>(d.values), d.voff + t.lo,
                reinterpret_cast<const uint32_t*>(d.validity), d.vbit + t.lo, t.n};
  typename Fam::State s = block_reduce<Fam>(Agg::thread_state(c, block_share()));
  if (merge_partials<Fam>(s, partials + (uint64_t)d.first_tile * kMaxWords, index, d.tiles, tickets + t.col))
    store_state<Fam::K>(reinterpret_cast<uint64_t*>(d.out), s);
}

// ------------------------------------------------- ordered aggregates

// The ordered pass runs after the fused kernel, over the same elements, and
// reads that kernel's state (min, max, count) from device memory, so the two
// launches follow each other on the stream with no host round trip. It finds
// the first and the last valid element and the first elements equal to the
// min and to the max, as 64-bit element indices (kNoRow, -1 as int64, when
// there is none), and reads the storage bits of the first and last valid
// values:
//
//   ordered   {first, last, first == min, first == max,
//              first value lo, hi, last value lo, hi}
//
// Values are zero-extended storage bits (decimal: {lo, hi}; bool: 0 or 1);
// the host turns them into the State encoding. Equality is the CPU backend's:
// floats compare bits, so a -0 min matches -0 alone, and when every valid
// value is NaN (min key > max key with count > 0) the first NaN is the min
// and the max; the bool min is true only when every value is.
//
// A thread visits its elements in increasing order (head, vectors, tail), so
// its first hits are its earliest; the block and device layers take the
// smallest index (the largest for last), so ties go to the earliest row
// whatever the grid.

constexpr uint64_t kNoRow = AGG_NO_ROW;
static_assert(kNoRow == UINT64_MAX, "kNoRow is -1 as int64");
constexpr int kOrderedWords = AGG_ORDERED_WORDS;  // the ordered kernels' out

// OrderedFamily: {first, last, first min, first max} element indices.
struct OrderedFamily {
  static constexpr int K = AGG_ORDERED_INDEX_WORDS;
  using State = Words<K>;
  __device__ static State identity() { return State{{kNoRow, kNoRow, kNoRow, kNoRow}}; }
  __device__ static void merge(State& a, const State& b) {
    a.w[0] = tmin(a.w[0], b.w[0]);
    a.w[1] = (uint64_t)tmax((int64_t)a.w[1], (int64_t)b.w[1]);  // kNoRow is -1
    a.w[2] = tmin(a.w[2], b.w[2]);
    a.w[3] = tmin(a.w[3], b.w[3]);
  }
};

__device__ __forceinline__ unsigned lowest_bit(uint32_t m) {  // m != 0
#ifdef __CUDA_ARCH__
  return (unsigned)__ffs(m) - 1;
#else
  return (unsigned)__builtin_ctz(m);
#endif
}

__device__ __forceinline__ unsigned highest_bit(uint32_t m) {  // m != 0
#ifdef __CUDA_ARCH__
  return 31u - (unsigned)__clz(m);
#else
  return 31u - (unsigned)__builtin_clz(m);
#endif
}

// RowTracker is one thread's ordered state. add folds up to 32 elements
// from base on: bit k of each mask is element base + k.
struct RowTracker {
  uint64_t first = kNoRow, last = kNoRow, mn = kNoRow, mx = kNoRow;
  __device__ __forceinline__ void add(uint64_t base, uint32_t valid, uint32_t eqmin, uint32_t eqmax) {
    if (valid == 0) return;
    if (first == kNoRow) first = base + lowest_bit(valid);
    last = base + highest_bit(valid);
    if (mn == kNoRow && eqmin != 0) mn = base + lowest_bit(eqmin);
    if (mx == kNoRow && eqmax != 0) mx = base + lowest_bit(eqmax);
  }
};

// IntMatch: signed and unsigned states hold min and max in words 2 and 3.
template <typename T> struct IntMatch {
  T mn, mx;
  __device__ explicit IntMatch(const uint64_t* st) : mn((T)st[2]), mx((T)st[3]) {}
  __device__ __forceinline__ bool is_min(T x) const { return x == mn; }
  __device__ __forceinline__ bool is_max(T x) const { return x == mx; }
};

// FloatMatch: float states hold min and max as order keys (words 3 and 4)
// and the count in word 5.
template <typename T> struct FloatBits;
template <> struct FloatBits<float> {
  using U = uint32_t;
  __device__ static U bits(float x) { return (uint32_t)__float_as_int(x); }
};
template <> struct FloatBits<double> {
  using U = uint64_t;
  __device__ static U bits(double x) { return (uint64_t)__double_as_longlong(x); }
};

__device__ __forceinline__ double unkey64(uint64_t k) { return __longlong_as_double((long long)flip64((int64_t)k)); }

template <typename T> struct FloatMatch {
  using U = typename FloatBits<T>::U;
  U mn, mx;
  bool nan;  // every valid value is NaN: the first NaN is min and max
  __device__ explicit FloatMatch(const uint64_t* st)
      : mn(FloatBits<T>::bits((T)unkey64(st[3]))),
        mx(FloatBits<T>::bits((T)unkey64(st[4]))),
        nan(st[5] > 0 && (int64_t)st[3] > (int64_t)st[4]) {}
  __device__ __forceinline__ bool is_min(T x) const { return nan ? x != x : FloatBits<T>::bits(x) == mn; }
  __device__ __forceinline__ bool is_max(T x) const { return nan ? x != x : FloatBits<T>::bits(x) == mx; }
};

// DecMatch: decimal states hold min in words 3-4 and max in words 5-6.
struct DecMatch {
  uint64_t mnlo, mnhi, mxlo, mxhi;
  __device__ explicit DecMatch(const uint64_t* st) : mnlo(st[3]), mnhi(st[4]), mxlo(st[5]), mxhi(st[6]) {}
  __device__ __forceinline__ bool is_min(Dec128 x) const { return x.lo == mnlo && x.hi == mnhi; }
  __device__ __forceinline__ bool is_max(Dec128 x) const { return x.lo == mxlo && x.hi == mxhi; }
};

// raw_of is the storage bits of a value, zero-extended.
template <typename T> __device__ __forceinline__ Dec128 raw_of(T x) {
  union {
    T v;
    uint64_t u;
  } r;
  r.u = 0;
  r.v = x;
  return Dec128{r.u, 0};
}
template <> __device__ __forceinline__ Dec128 raw_of<Dec128>(Dec128 x) { return x; }

// ordered_pass is thread_pass's walk over the elements with their indices:
// the head, then 16-byte vectors (kUnroll in flight), then the tail.
template <typename T, bool kNulls, class Match>
__device__ __forceinline__ RowTracker ordered_pass(const T* __restrict__ vals, const uint32_t* __restrict__ valid,
                                                   uint64_t vbit, uint64_t n, const Match& mt) {
  constexpr int V = 16 / sizeof(T);
  constexpr uint32_t kVecMask = (1u << V) - 1;  // V <= 16
  const uint64_t tid = global_thread(), stride = grid_threads();
  const uint64_t mis = (reinterpret_cast<uintptr_t>(vals) & 15) / sizeof(T);
  const uint64_t head = mis == 0 ? 0 : (V - mis < n ? V - mis : n);
  const uint64_t nvec = (n - head) / V;
  const uint64_t tail = head + nvec * V;
  RowTracker tr;

  auto one = [&](uint64_t e) {
    const uint32_t ok = kNulls ? bit_at(valid, vbit + e) : 1u;
    const T x = vals[e];
    tr.add(e, ok, ok & (uint32_t)mt.is_min(x), ok & (uint32_t)mt.is_max(x));
  };
  auto vec = [&](uint64_t j, const uint4& v, uint32_t m) {
    uint32_t eqmin = 0, eqmax = 0;
#pragma unroll
    for (int k = 0; k < V; k++) {
      const T x = vec_lane<T>(v, k);
      eqmin |= (uint32_t)mt.is_min(x) << k;
      eqmax |= (uint32_t)mt.is_max(x) << k;
    }
    const uint32_t ok = kNulls ? m & kVecMask : kVecMask;
    tr.add(head + j * V, ok, eqmin & ok, eqmax & ok);
  };

  if (tid < head) one(tid);
  const uint4* __restrict__ vp = reinterpret_cast<const uint4*>(vals + head);
  uint64_t j = tid;
  for (; j + (kUnroll - 1) * stride < nvec; j += kUnroll * stride) {
    uint4 v[kUnroll];
    uint32_t m[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; u++) v[u] = __ldg(vp + j + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; u++) m[u] = kNulls ? bits_at(valid, vbit + head + (j + u * stride) * V, V) : 0u;
#pragma unroll
    for (int u = 0; u < kUnroll; u++) vec(j + u * stride, v[u], m[u]);
  }
  for (; j < nvec; j += stride) {
    const uint4 v = __ldg(vp + j);
    vec(j, v, kNulls ? bits_at(valid, vbit + head + j * V, V) : 0u);
  }
  if (tid < n - tail) one(tail + tid);
  return tr;
}

// ordered_finish reduces the threads' trackers over the grid and writes the
// ordered state, with the first and last values read through raw(index).
template <typename Raw>
__device__ __forceinline__ void ordered_finish(const RowTracker& tr, uint64_t* partials, unsigned int* ticket,
                                               uint64_t* out, const Raw& raw) {
  OrderedFamily::State s{{tr.first, tr.last, tr.mn, tr.mx}};
  if (!grid_reduce<OrderedFamily>(s, partials, ticket)) return;
  const Dec128 f = s.w[0] != kNoRow ? raw(s.w[0]) : Dec128{0, 0};
  const Dec128 l = s.w[1] != kNoRow ? raw(s.w[1]) : Dec128{0, 0};
  store_state<kOrderedWords>(out, Words<kOrderedWords>{{s.w[0], s.w[1], s.w[2], s.w[3], f.lo, f.hi, l.lo, l.hi}});
}

template <typename T, class Match>
__device__ __forceinline__ void ordered_typed(const void* values, uint64_t voff, const uint32_t* validity,
                                              uint64_t vbit, uint64_t n, const uint64_t* state, uint64_t* partials,
                                              unsigned int* ticket, uint64_t* out) {
  const T* vals = static_cast<const T*>(values) + voff;
  const Match mt(state);
  const RowTracker tr = validity != nullptr ? ordered_pass<T, true>(vals, validity, vbit, n, mt)
                                            : ordered_pass<T, false>(vals, nullptr, 0, n, mt);
  ordered_finish(tr, partials, ticket, out, [&](uint64_t e) { return raw_of<T>(vals[e]); });
}

// ordered_bool walks 32 elements at a time like BoolAgg; its state holds the
// number of true values and the count.
__device__ __forceinline__ void ordered_bool(const void* values, uint64_t voff, const uint32_t* validity,
                                             uint64_t vbit, uint64_t n, const uint64_t* state, uint64_t* partials,
                                             unsigned int* ticket, uint64_t* out) {
  const uint32_t* bits = static_cast<const uint32_t*>(values);
  const uint64_t trues = state[0], count = state[1];
  const uint32_t want_min = trues == count ? kFullMask : 0u;  // true only when every value is
  const uint32_t want_max = trues > 0 ? kFullMask : 0u;
  const uint64_t words = (n + 31) / 32;
  RowTracker tr;
  for (uint64_t j = global_thread(); j < words; j += grid_threads()) {
    const uint64_t rem = n - 32 * j;
    const unsigned need = rem >= 32 ? 32u : (unsigned)rem;
    const uint32_t range = need == 32 ? kFullMask : (1u << need) - 1;
    const uint32_t m = (validity != nullptr ? bits_at(validity, vbit + 32 * j, need) : kFullMask) & range;
    const uint32_t b = bits_at(bits, voff + 32 * j, need);
    tr.add(32 * j, m, ~(b ^ want_min) & m, ~(b ^ want_max) & m);
  }
  ordered_finish(tr, partials, ticket, out, [&](uint64_t e) { return Dec128{bit_at(bits, voff + e), 0}; });
}

}  // namespace arrowagg

using namespace arrowagg;

// ARROWAGG_KINDS lists the storage kinds with their thread layers, in the
// order of the KindCode of a ColumnDesc (gpuagg/cuda's specs table).
#define ARROWAGG_KINDS(X)                      \
  X(int8, IntAgg<int8_t, SignedFamily>)        \
  X(int16, IntAgg<int16_t, SignedFamily>)      \
  X(int32, IntAgg<int32_t, SignedFamily>)      \
  X(int64, IntAgg<int64_t, SignedFamily>)      \
  X(uint8, IntAgg<uint8_t, UnsignedFamily>)    \
  X(uint16, IntAgg<uint16_t, UnsignedFamily>)  \
  X(uint32, IntAgg<uint32_t, UnsignedFamily>)  \
  X(uint64, IntAgg<uint64_t, UnsignedFamily>)  \
  X(float32, FloatAgg<float>)                  \
  X(float64, FloatAgg<double>)                 \
  X(decimal128, DecimalAgg)                    \
  X(bool, BoolAgg)

#define ARROWAGG_KIND_CODE(name, ...) kKind_##name,
enum KindCode : uint32_t { ARROWAGG_KINDS(ARROWAGG_KIND_CODE) kKinds };

// The per-kind kernels arrowagg_<kind>: one chunk, spread over the grid.
#define ARROWAGG_KERNEL(name, ...)                                                                              \
  extern "C" __global__ void __launch_bounds__(kBlockThreads)                                                 \
      arrowagg_##name(const void* values, unsigned long long voff, const uint32_t* validity,                  \
                      unsigned long long vbit, unsigned long long n, uint64_t* partials, unsigned int* ticket, \
                      uint64_t* out) {                                                                        \
    agg_grid<__VA_ARGS__>(Chunk{values, voff, validity, vbit, n}, partials, ticket, out);                     \
  }
ARROWAGG_KINDS(ARROWAGG_KERNEL)

// The moments kernels arrowagg_moments_<kind>: the per-kind kernels with
// the sum of the squares (stddev, variance), for integers and floats, each
// compiled for the blocks per multiprocessor its family's policy asks.
#define ARROWAGG_MOMENT_KINDS(X)                                                 \
  X(int8, AGG_INT_MOMENT_MIN_BLOCKS, IntSqAgg<int8_t, SignedFamily>)       \
  X(int16, AGG_INT_MOMENT_MIN_BLOCKS, IntSqAgg<int16_t, SignedFamily>)     \
  X(int32, AGG_INT_MOMENT_MIN_BLOCKS, IntSqAgg<int32_t, SignedFamily>)     \
  X(int64, AGG_INT_MOMENT_MIN_BLOCKS, IntSqAgg<int64_t, SignedFamily>)     \
  X(uint8, AGG_INT_MOMENT_MIN_BLOCKS, IntSqAgg<uint8_t, UnsignedFamily>)   \
  X(uint16, AGG_INT_MOMENT_MIN_BLOCKS, IntSqAgg<uint16_t, UnsignedFamily>) \
  X(uint32, AGG_INT_MOMENT_MIN_BLOCKS, IntSqAgg<uint32_t, UnsignedFamily>) \
  X(uint64, AGG_INT_MOMENT_MIN_BLOCKS, IntSqAgg<uint64_t, UnsignedFamily>) \
  X(float32, AGG_FLOAT_MOMENT_MIN_BLOCKS, FloatSqAgg<float>)               \
  X(float64, AGG_FLOAT_MOMENT_MIN_BLOCKS, FloatSqAgg<double>)

#define ARROWAGG_MOMENT_KERNEL(name, min_blocks, ...)                                                         \
  extern "C" __global__ void __launch_bounds__(kBlockThreads, min_blocks)                                     \
      arrowagg_moments_##name(const void* values, unsigned long long voff, const uint32_t* validity,          \
                              unsigned long long vbit, unsigned long long n, uint64_t* partials,              \
                              unsigned int* ticket, uint64_t* out) {                                          \
    agg_grid<__VA_ARGS__>(Chunk{values, voff, validity, vbit, n}, partials, ticket, out);                     \
  }
ARROWAGG_MOMENT_KINDS(ARROWAGG_MOMENT_KERNEL)

// The sketch kernels arrowagg_sketch_<kind>: the moments kernels with the
// approx_distinct sketch, raised into the column's DeviceSketch at sketch
// (without the moments kernels' blocks bound: the block's sketch in shared
// memory allows three blocks a multiprocessor, and the hash's registers
// spilled under a bound of four).
#define ARROWAGG_SKETCH_KERNEL(name, min_blocks, ...)                                                         \
  extern "C" __global__ void __launch_bounds__(kBlockThreads)                                                 \
      arrowagg_sketch_##name(const void* values, unsigned long long voff, const uint32_t* validity,            \
                             unsigned long long vbit, unsigned long long n, uint64_t* partials,               \
                             unsigned int* ticket, uint64_t* out, DeviceSketch* sketch) {                     \
    sketch_grid<__VA_ARGS__>(Chunk{values, voff, validity, vbit, n}, partials, ticket, out, sketch);          \
  }
ARROWAGG_MOMENT_KINDS(ARROWAGG_SKETCH_KERNEL)

// The many-columns kernel: its tiles in a block-strided loop, each
// dispatched on its column's kind (uniform in the block, as the block
// layer's barriers need).
#define ARROWAGG_MULTI_CASE(name, ...)                                \
  case kKind_##name:                                                  \
    multi_tile<__VA_ARGS__>(d, t, (unsigned int)(i - d.first_tile), partials, tickets); \
    break;

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    arrowagg_multi(const ColumnDesc* __restrict__ cols, const Tile* __restrict__ tiles, unsigned long long ntiles,
                   uint64_t* partials, unsigned int* tickets) {
  for (uint64_t i = blockIdx.x; i < ntiles; i += gridDim.x) {
    const Tile t = tiles[i];
    const ColumnDesc d = cols[t.col];
    switch (d.kind) { ARROWAGG_KINDS(ARROWAGG_MULTI_CASE) }
  }
}

#define ARROWAGG_ORDERED_KERNEL(name, body)                                                                 \
  extern "C" __global__ void __launch_bounds__(kBlockThreads)                                             \
      name(const void* values, unsigned long long voff, const uint32_t* validity, unsigned long long vbit, \
           unsigned long long n, const uint64_t* state, uint64_t* partials, unsigned int* ticket,         \
           uint64_t* out) {                                                                               \
    body(values, voff, validity, vbit, n, state, partials, ticket, out);                                  \
  }

ARROWAGG_ORDERED_KERNEL(arrowagg_ordered_int8, (ordered_typed<int8_t, IntMatch<int8_t>>))
ARROWAGG_ORDERED_KERNEL(arrowagg_ordered_int16, (ordered_typed<int16_t, IntMatch<int16_t>>))
ARROWAGG_ORDERED_KERNEL(arrowagg_ordered_int32, (ordered_typed<int32_t, IntMatch<int32_t>>))
ARROWAGG_ORDERED_KERNEL(arrowagg_ordered_int64, (ordered_typed<int64_t, IntMatch<int64_t>>))
ARROWAGG_ORDERED_KERNEL(arrowagg_ordered_uint8, (ordered_typed<uint8_t, IntMatch<uint8_t>>))
ARROWAGG_ORDERED_KERNEL(arrowagg_ordered_uint16, (ordered_typed<uint16_t, IntMatch<uint16_t>>))
ARROWAGG_ORDERED_KERNEL(arrowagg_ordered_uint32, (ordered_typed<uint32_t, IntMatch<uint32_t>>))
ARROWAGG_ORDERED_KERNEL(arrowagg_ordered_uint64, (ordered_typed<uint64_t, IntMatch<uint64_t>>))
ARROWAGG_ORDERED_KERNEL(arrowagg_ordered_float32, (ordered_typed<float, FloatMatch<float>>))
ARROWAGG_ORDERED_KERNEL(arrowagg_ordered_float64, (ordered_typed<double, FloatMatch<double>>))
ARROWAGG_ORDERED_KERNEL(arrowagg_ordered_decimal128, (ordered_typed<Dec128, DecMatch>))
ARROWAGG_ORDERED_KERNEL(arrowagg_ordered_bool, ordered_bool)

// The grouped kernels (arrowagg_group_<kind>), on this file's layers.
#include "group.cuh"

// The Parquet page kernels (arrowagg_pq_unsnap, arrowagg_pq_<kind>), on this
// file's layers.
#include "pq.cuh"
