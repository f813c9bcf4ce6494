// pq.cuh: Parquet pages decoded and aggregated on the GPU (included at the
// end of agg.cu, whose thread accumulators, families and block and device
// layers it reuses).
//
// The host uploads a column's chunks as they are stored in the file (pages
// still compressed, headers between them) and a page table (PageDesc, one
// per data page, written by the Go package internal/pqdev), and the
// dictionaries of its dictionary-encoded chunks, decompressed and PLAIN (a
// few values each). Two launches then give the column's state:
//
//   arrowagg_pq_unsnap     one warp per snappy page decompresses its body
//                          into the page's slot of a scratch buffer
//                          (unsnap.cuh); the other pages are read in place;
//   arrowagg_pq_<kind>     one block per page: the definition levels are
//                          counted (not expanded: the aggregates need only
//                          how many values are non-null, and a page's
//                          non-null values are stored densely, in order),
//                          then its values, PLAIN or dictionary indices
//                          (RLE/bit-packed hybrid) gathered from the
//                          dictionary, go to the same thread accumulators as
//                          the per-kind kernels', and the same warp, block
//                          and device layers merge the pages' states (the
//                          last-block guard, pages in page order).
//
// No decoded value is written to memory: PLAIN values are read where they
// lie (a snappy page's in its scratch slot, the only copy), indices are
// unpacked into registers and gathered.
//
// A page whose bytes contradict its header is not aggregated: the block
// writes its code (AGG_PQ_ERR_*) to status[page] and contributes an empty state;
// the host reads status and fails with the page's number before it reads the
// state. No read leaves the page's bytes but by the padding the host adds
// (AGG_PQ_PAD bytes before and after the chunk and scratch buffers): the
// 8-byte words that hold a misaligned value or a bit-packed index.
//
// Scope: flat columns (max repetition level 0, max definition level 0 or 1)
// of 4- and 8-byte integers and floats (the temporal types are their
// integers; decimals stored as INT32 or INT64 are their unscaled integers,
// the host makes the state a decimal one) and of booleans, data pages v1
// and v2, definition levels RLE, values PLAIN or
// RLE_DICTIONARY/PLAIN_DICTIONARY (booleans: PLAIN, bit-packed, or RLE). The
// host leaves the other chunks to the CPU.

#pragma once

#include <stdint.h>

#include "policy.h"
#include "unsnap.cuh"

namespace arrowagg {

// PageDesc is one data page of the table (AGG_PQ_PAGE_BYTES; internal/pqdev
// writes it).
struct PageDesc {
  uint64_t src;     // offset in the chunk buffer of the page's stored bytes (right after its header)
  uint64_t dst;     // offset in the scratch buffer of its decompressed body (snappy pages)
  uint64_t dict;    // offset in the dictionary buffer (in values) of its chunk's dictionary
  uint32_t stored;  // bytes stored at src (v2: the levels included)
  uint32_t body;    // bytes of the body once decompressed (v2: the levels excluded)
  uint32_t rows;    // the page's num_values: its definition levels
  uint32_t ndict;   // values of its chunk's dictionary (0: none)
  uint32_t lev;     // v2: bytes of the levels at src (repetition, then definition), never compressed; v1: 0
  uint32_t def;     // v2: bytes of the definition levels (the last of the lev bytes); v1: 0
  uint32_t flags;   // AGG_PQ_FLAG_V2 | AGG_PQ_FLAG_SNAPPY | AGG_PQ_FLAG_DICT
  uint32_t reserved;
};
static_assert(sizeof(PageDesc) == AGG_PQ_PAGE_BYTES, "PageDesc is AGG_PQ_PAGE_BYTES (internal/pqdev)");

// load_word returns the 8 bytes at p, of any alignment, from the aligned
// words that hold them (p's slack is the buffers' padding).
__device__ __forceinline__ uint64_t load_word(const uint8_t* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const uint64_t* w = reinterpret_cast<const uint64_t*>(a & ~(uintptr_t)7);
  const unsigned sh = (unsigned)(a & 7) * 8;
  const uint64_t lo = __ldg(w);
  return sh == 0 ? lo : (lo >> sh) | (__ldg(w + 1) << (64 - sh));
}

template <typename T> __device__ __forceinline__ T load_plain(const uint8_t* p) {
  const uint64_t w = load_word(p);  // little-endian: the value is its low bytes
  T x;
  memcpy(&x, &w, sizeof(T));
  return x;
}

// bits_from returns the width bits (width <= 32) of a little-endian bit
// stream that start at bit `bit` of p.
__device__ __forceinline__ uint32_t bits_from(const uint8_t* p, uint64_t bit, unsigned width) {
  const uint64_t w = load_word(p + (bit >> 3));
  const uint64_t v = w >> (bit & 7);
  return width == 0 ? 0u : (uint32_t)(v & (width == 32 ? 0xffffffffull : ((1ull << width) - 1)));
}

// read_varint reads the ULEB128 varint at pos of p[0, len) (at most 32 bits,
// as the hybrid's run headers are), moving pos; false when it runs off the
// end or is longer than 5 bytes.
__device__ __forceinline__ bool read_varint(const uint8_t* p, uint32_t len, uint32_t& pos, uint32_t& v) {
  uint64_t x = 0;
  for (int i = 0; i < 5; i++) {
    if (pos >= len) return false;
    const uint8_t b = p[pos++];
    x |= (uint64_t)(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      if (x > 0xffffffffull) return false;
      v = (uint32_t)x;
      return true;
    }
  }
  return false;
}

// count_defined is run by the 32 lanes of one warp together: it counts the
// levels equal to 1 among the first `rows` levels of the RLE/bit-packed
// hybrid stream p[0, len) of bit width 1 (a flat optional column's
// definition levels), or returns false when the stream is corrupt or ends
// before `rows` levels. The lanes walk the run headers alike (broadcast
// loads) and share each bit-packed run's bytes.
__device__ __forceinline__ bool count_defined(const uint8_t* p, uint32_t len, uint32_t rows, uint32_t& defined) {
  const unsigned lane = threadIdx.x % kWarpThreads;
  uint32_t pos = 0, seen = 0;
  uint64_t ones = 0;  // this lane's
  bool ok = true;
  while (seen < rows) {
    uint32_t h;
    if (!read_varint(p, len, pos, h)) {
      ok = false;
      break;
    }
    if ((h & 1) == 0) {  // RLE run: a count, then the value in one byte
      if (pos >= len || p[pos] > 1) {
        ok = false;
        break;
      }
      const uint32_t v = p[pos++];
      const uint32_t take = tmin(h >> 1, rows - seen);
      if (lane == 0 && v) ones += take;
      seen += take;
    } else {  // bit-packed run: h>>1 groups of 8 levels, a byte each
      const uint32_t bytes = h >> 1;
      const uint32_t avail = tmin(bytes, len - pos);
      const uint64_t usable = tmin((uint64_t)avail * 8, (uint64_t)(rows - seen));
      if (usable < tmin((uint64_t)bytes * 8, (uint64_t)(rows - seen))) {
        ok = false;
        break;
      }
      const uint32_t full = (uint32_t)(usable / 8), rest = (uint32_t)(usable % 8);
      for (uint32_t i = lane; i < full; i += kWarpThreads) ones += __popc(p[pos + i]);
      if (rest != 0 && lane == 0) ones += __popc(p[pos + full] & ((1u << rest) - 1));
      seen += (uint32_t)usable;
      pos += avail;
    }
  }
#pragma unroll
  for (int d = kWarpThreads / 2; d > 0; d >>= 1) ones += __shfl_down_sync(kFullMask, ones, d);
  defined = (uint32_t)ones;  // lane 0's is the warp's
  return ok;
}

// PageBytes is where a page's parts are, once its levels are read.
struct PageBytes {
  const uint8_t* vals;  // the values: PLAIN, or the dictionary indices' bit width then their hybrid stream
  uint32_t vals_len;
  uint32_t defined;  // the non-null values
};

// The hybrid runs of a batch of dictionary indices, parsed by thread 0.
constexpr int kPqRuns = 512;
struct IndexRuns {
  uint32_t start[kPqRuns + 1];  // the first index of each run; start[n] ends the last
  uint32_t at[kPqRuns];         // bit-packed: the bit offset of its first index; RLE: its value
  uint8_t packed[kPqRuns];
  int n;
  uint32_t pos;  // where the next run header is
  int err;
};

// parse_runs (thread 0) parses the runs of indices [from, total) of the
// hybrid stream p[0, len) of bit width bw from r.pos on, as many as fit in
// r; it sets r.err on a corrupt stream.
__device__ __forceinline__ void parse_runs(IndexRuns& r, const uint8_t* p, uint32_t len, unsigned bw, uint32_t from,
                                           uint32_t total) {
  int n = 0;
  uint32_t seen = from, pos = r.pos;
  while (seen < total && n < kPqRuns) {
    uint32_t h;
    if (!read_varint(p, len, pos, h)) {
      r.err = AGG_PQ_ERR_INDICES;
      break;
    }
    if ((h & 1) == 0) {
      const uint32_t vb = (bw + 7) / 8;
      if (len - pos < vb) {
        r.err = AGG_PQ_ERR_INDICES;
        break;
      }
      uint32_t v = 0;
      for (uint32_t i = 0; i < vb; i++) v |= (uint32_t)p[pos + i] << (8 * i);
      pos += vb;
      const uint32_t take = tmin(h >> 1, total - seen);
      if (take == 0) continue;
      r.start[n] = seen;
      r.at[n] = v;
      r.packed[n] = 0;
      n++;
      seen += take;
    } else {
      const uint64_t bytes = (uint64_t)(h >> 1) * bw;
      const uint64_t avail = tmin(bytes, (uint64_t)(len - pos));
      const uint64_t take = tmin((uint64_t)(h >> 1) * 8, (uint64_t)(total - seen));
      if ((take * bw + 7) / 8 > avail) {
        r.err = AGG_PQ_ERR_INDICES;
        break;
      }
      if (take != 0) {
        r.start[n] = seen;
        r.at[n] = pos * 8;
        r.packed[n] = 1;
        n++;
        seen += (uint32_t)take;
      }
      pos += (uint32_t)avail;
    }
  }
  r.start[n] = seen;
  r.n = n;
  r.pos = pos;
}

// page_values feeds fn(x) this thread's share of the page's non-null
// values and returns how many it fed. PLAIN values are read where they lie;
// dictionary indices are unpacked a batch of runs at a time (thread 0
// parses, every thread unpacks and gathers). All threads of the block call
// it (it synchronizes them); a corrupt page sets *err (shared).
template <typename T, typename Fn>
__device__ __forceinline__ uint64_t page_values(const PageDesc& pg, const PageBytes& pb, const T* dict, int* err,
                                                Fn& fn) {
  const uint32_t n = pb.defined;
  uint64_t count = 0;
  if ((pg.flags & AGG_PQ_FLAG_DICT) == 0) {
    if ((uint64_t)n * sizeof(T) > pb.vals_len) {
      if (threadIdx.x == 0) *err = AGG_PQ_ERR_VALUES;
      return 0;
    }
    if ((reinterpret_cast<uintptr_t>(pb.vals) & (sizeof(T) - 1)) == 0) {
      auto ok = [&](T x, bool) { fn(x); };
      return thread_pass<T, false>(reinterpret_cast<const T*>(pb.vals), nullptr, 0, n, block_share(), ok);
    }
    for (uint32_t j = threadIdx.x; j < n; j += kBlockThreads) {
      fn(load_plain<T>(pb.vals + (uint64_t)j * sizeof(T)));
      count++;
    }
    return count;
  }
  __shared__ IndexRuns runs;
  if (n == 0) return 0;
  if (pb.vals_len < 1 || pb.vals[0] > 32) {
    if (threadIdx.x == 0) *err = AGG_PQ_ERR_BIT_WIDTH;
    return 0;
  }
  const unsigned bw = pb.vals[0];
  const uint8_t* p = pb.vals + 1;
  const uint32_t len = pb.vals_len - 1;
  __syncthreads();  // runs may still be read by an earlier call
  if (threadIdx.x == 0) {
    runs.pos = 0;
    runs.err = 0;
  }
  uint32_t from = 0;
  bool bad_index = false;
  while (from < n) {
    __syncthreads();
    if (threadIdx.x == 0) parse_runs(runs, p, len, bw, from, n);
    __syncthreads();
    if (runs.err != 0 || runs.n == 0) {
      if (threadIdx.x == 0) *err = runs.err != 0 ? runs.err : AGG_PQ_ERR_INDICES;
      return count;
    }
    const uint32_t to = runs.start[runs.n];
    int r = 0;
    for (uint32_t j = from + threadIdx.x; j < to; j += kBlockThreads) {
      while (runs.start[r + 1] <= j) r++;
      const uint32_t idx =
          runs.packed[r] ? bits_from(p, (uint64_t)runs.at[r] + (uint64_t)(j - runs.start[r]) * bw, bw) : runs.at[r];
      if (idx >= pg.ndict) {
        bad_index = true;
        continue;
      }
      fn(__ldg(dict + idx));
      count++;
    }
    from = to;
  }
  if (bad_index) *err = AGG_PQ_ERR_INDEX;
  return count;
}

// page_bytes finds the parts of page pg (every thread, alike) and counts
// its non-null values (warp 0); the block's threads all return the same.
__device__ __forceinline__ PageBytes page_bytes(const PageDesc& pg, const uint8_t* chunk, const uint8_t* scratch,
                                                uint32_t maxdef, int* err) {
  __shared__ uint32_t defined;
  PageBytes pb;
  const uint8_t* body = (pg.flags & AGG_PQ_FLAG_SNAPPY) ? scratch + pg.dst : chunk + pg.src + pg.lev;
  uint32_t body_len = pg.body;
  const uint8_t* levels = nullptr;
  uint32_t levels_len = 0;
  pb.vals = body;
  pb.vals_len = body_len;
  pb.defined = pg.rows;
  if (maxdef == 0) return pb;
  if (pg.flags & AGG_PQ_FLAG_V2) {
    levels = chunk + pg.src + (pg.lev - pg.def);
    levels_len = pg.def;
  } else {
    if (body_len < 4) {
      if (threadIdx.x == 0) *err = AGG_PQ_ERR_LEVELS;
      pb.defined = 0;
      return pb;
    }
    const uint32_t n = (uint32_t)body[0] | (uint32_t)body[1] << 8 | (uint32_t)body[2] << 16 | (uint32_t)body[3] << 24;
    if (n > body_len - 4) {
      if (threadIdx.x == 0) *err = AGG_PQ_ERR_LEVELS;
      pb.defined = 0;
      return pb;
    }
    levels = body + 4;
    levels_len = n;
    pb.vals = body + 4 + n;
    pb.vals_len = body_len - 4 - n;
  }
  if (threadIdx.x < kWarpThreads) {
    uint32_t d = 0;
    const bool ok = count_defined(levels, levels_len, pg.rows, d);
    if (threadIdx.x == 0) {
      defined = ok ? d : 0;
      if (!ok) *err = AGG_PQ_ERR_LEVELS;
    }
  }
  __syncthreads();
  pb.defined = defined;
  return pb;
}

// The per-kind page accumulators: each folds a page's values with the
// per-kind kernels' thread accumulator and gives the same state.
template <typename T, class Fam> struct PqInt {
  using Family = Fam;
  __device__ static __forceinline__ typename Fam::State page_state(const PageDesc& pg, const PageBytes& pb,
                                                                   const void* dict, int* err) {
    IntAcc<T, Fam> acc;
    auto fn = [&](T x) { acc(x, true); };
    const uint64_t count = page_values<T>(pg, pb, static_cast<const T*>(dict) + pg.dict, err, fn);
    return acc.state(count);
  }
};

template <typename T> struct PqFloat {
  using Family = FloatFamily;
  __device__ static __forceinline__ FloatFamily::State page_state(const PageDesc& pg, const PageBytes& pb,
                                                                  const void* dict, int* err) {
    const T* d = static_cast<const T*>(dict) + pg.dict;
    FloatAcc<T> acc;
    auto fn = [&](T x) { acc(x, true); };
    const uint64_t count = page_values<T>(pg, pb, d, err, fn);
    // A sum that is not finite: the page again, carefully (NaN and
    // infinities apart, as the per-kind kernels do). Every thread of the
    // block must take part in the dictionary path's barriers.
    __shared__ int careless;
    if (threadIdx.x == 0) careless = 0;
    __syncthreads();
    if (!acc.finite()) careless = 1;
    __syncthreads();
    if (!careless) {
      return FloatFamily::State{{f64_bits(acc.s), f64_bits(acc.c), f64_bits(0.0),
                                 (uint64_t)FloatKey<T>::widen(acc.kmn), (uint64_t)FloatKey<T>::widen(acc.kmx), count}};
    }
    CarefulAcc<T> careful;
    auto cf = [&](T x) { careful(x, true); };
    page_values<T>(pg, pb, d, err, cf);
    return FloatFamily::State{{f64_bits(careful.s), f64_bits(careful.c), f64_bits(careful.special),
                               (uint64_t)FloatKey<T>::widen(careful.kmn), (uint64_t)FloatKey<T>::widen(careful.kmx),
                               count}};
  }
};

// PqBool folds a page of booleans: PLAIN (bit-packed, the first value in
// the lowest bit), the threads counting the true bits of a word each in
// turn, or RLE (a 4-byte length, then the RLE/bit-packed hybrid of bit
// width 1), counted by warp 0 as definition levels are. Thread 0 carries
// the page's count.
struct PqBool {
  using Family = BoolFamily;
  __device__ static __forceinline__ BoolFamily::State page_state(const PageDesc& pg, const PageBytes& pb, const void*,
                                                                 int* err) {
    const uint32_t n = pb.defined;
    uint64_t trues = 0;
    if (pg.flags & AGG_PQ_FLAG_RLE) {
      __shared__ uint32_t rle_trues;
      if (threadIdx.x < kWarpThreads && n > 0) {  // (the warp's lanes alike: the same bytes)
        bool ok = pb.vals_len >= 4;
        const uint32_t len = ok ? (uint32_t)pb.vals[0] | (uint32_t)pb.vals[1] << 8 | (uint32_t)pb.vals[2] << 16 |
                                      (uint32_t)pb.vals[3] << 24
                                : 0;
        ok = ok && len <= pb.vals_len - 4;
        uint32_t d = 0;
        if (ok) ok = count_defined(pb.vals + 4, len, n, d);
        if (threadIdx.x == 0) {
          rle_trues = ok ? d : 0;
          if (!ok) *err = AGG_PQ_ERR_BOOLS;
        }
      }
      __syncthreads();
      if (threadIdx.x == 0 && n > 0) trues = rle_trues;
    } else {
      if ((uint64_t)n > (uint64_t)pb.vals_len * 8) {
        if (threadIdx.x == 0) *err = AGG_PQ_ERR_VALUES;
        return BoolFamily::identity();
      }
      const uint32_t words = (n + 63) / 64;
      for (uint32_t j = threadIdx.x; j < words; j += kBlockThreads) {
        uint64_t w = load_word(pb.vals + 8 * (uint64_t)j);  // (past the values: the next bytes, or padding)
        const uint32_t rest = n - 64 * j;
        if (rest < 64) w &= (1ull << rest) - 1;
        trues += __popcll(w);
      }
    }
    return BoolFamily::State{{trues, threadIdx.x == 0 ? (uint64_t)n : 0}};
  }
};

// pq_page is the body of arrowagg_pq_<kind>: block b folds page b, and the
// device layer merges the pages' states in page order.
template <class Pq>
__device__ __forceinline__ void pq_page(const uint8_t* chunk, const uint8_t* scratch, const PageDesc* pages,
                                        const void* dict, uint32_t maxdef, uint64_t* partials, unsigned int* ticket,
                                        uint64_t* out, unsigned int* status) {
  using Fam = typename Pq::Family;
  __shared__ int err;
  const PageDesc pg = pages[blockIdx.x];
  // A page whose decompression failed (arrowagg_pq_unsnap set its status)
  // is not read: its status stays the decompression's.
  // Every thread reads err between two barriers: thread 0 may set it as
  // soon as the next step starts, and the threads must all take the same
  // branch (the steps have barriers of their own).
  if (threadIdx.x == 0) err = status[blockIdx.x] != 0 ? -1 : 0;
  __syncthreads();
  bool go = err == 0;
  __syncthreads();
  typename Fam::State s = Fam::identity();
  if (go) {
    const PageBytes pb = page_bytes(pg, chunk, scratch, maxdef, &err);
    __syncthreads();
    go = err == 0;
    __syncthreads();
    if (go) s = Pq::page_state(pg, pb, dict, &err);
  }
  __syncthreads();
  if (err != 0) {
    s = Fam::identity();
    if (threadIdx.x == 0 && err > 0) status[blockIdx.x] = (unsigned int)err;
  }
  grid_finish<Fam>(s, partials, ticket, out);
}

}  // namespace arrowagg

// kUnsnapWarpsPerSM is the warps (blocks of one warp) of arrowagg_pq_unsnap
// that its register budget lets one multiprocessor hold: 28 keeps it at 72
// registers a thread. Without the bound unsnap_warp takes 80 and 25 warps
// fit: on a column of 17,500 pages (350M 8-byte integers) that cost the 7%
// that its 64-byte windows gain where fewer pages leave room to spare
// (BENCHMARKS.md, "Snappy windows of 64 bytes"). Multiprocessors that hold
// fewer than 28 blocks (sm_75 and sm_86/87 16, sm_89 24) get their most,
// which bounds nothing there (ptxas ignores, with a warning, a bound a
// multiprocessor cannot hold).
namespace arrowagg {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 750 || __CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870)
constexpr int kUnsnapWarpsPerSM = 16;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 890
constexpr int kUnsnapWarpsPerSM = 24;
#else
constexpr int kUnsnapWarpsPerSM = 28;
#endif
}  // namespace arrowagg

// arrowagg_pq_unsnap: warp w of the grid decompresses page w when it is a
// snappy page (the others are read in place). Parameters: the chunk and
// scratch buffers, the page table and its length, status (a word per page,
// zeroed: a page whose snappy stream is corrupt gets its code). Blocks of
// one warp (the launch bounds say so),
// which the block scheduler spreads over the multiprocessors more evenly
// than blocks of eight (2,500 pages on 132 multiprocessors: 19 warps on
// the busiest, not 24), the pages' time being the busiest one's.
extern "C" __global__ void __launch_bounds__(arrowagg::kWarpThreads, arrowagg::kUnsnapWarpsPerSM)
    arrowagg_pq_unsnap(const uint8_t* chunk, uint8_t* scratch, const arrowagg::PageDesc* pages,
                       unsigned long long npages, unsigned int* status) {
  using namespace arrowagg;
  const uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / kWarpThreads;
  if (w >= npages) return;
  const PageDesc pg = pages[w];
  if ((pg.flags & AGG_PQ_FLAG_SNAPPY) == 0) return;
  const int rc = unsnap_warp(chunk + pg.src + pg.lev, pg.stored - pg.lev, scratch + pg.dst, pg.body);
  if (rc != kUnsnapOK && threadIdx.x % kWarpThreads == 0)
    status[w] = rc == kUnsnapLength ? AGG_PQ_ERR_SNAPPY_LENGTH : AGG_PQ_ERR_SNAPPY;
}

// The page kernels arrowagg_pq_<kind>: a grid of one block per page of the
// table. Parameters (64-bit): chunk, scratch, pages, dict (the chunks'
// dictionaries, PLAIN values of the kind; none for booleans), maxdef (0 or 1), partials,
// ticket, out (as the per-kind kernels'), status (as above).
#define ARROWAGG_PQ_KINDS(X)                   \
  X(int32, PqInt<int32_t, SignedFamily>)       \
  X(int64, PqInt<int64_t, SignedFamily>)       \
  X(uint32, PqInt<uint32_t, UnsignedFamily>)   \
  X(uint64, PqInt<uint64_t, UnsignedFamily>)   \
  X(float32, PqFloat<float>)                   \
  X(float64, PqFloat<double>)                  \
  X(bool, PqBool)

#define ARROWAGG_PQ_KERNEL(name, ...)                                                                        \
  extern "C" __global__ void __launch_bounds__(arrowagg::kBlockThreads)                                    \
      arrowagg_pq_##name(const uint8_t* chunk, const uint8_t* scratch, const arrowagg::PageDesc* pages,    \
                         const void* dict, unsigned long long maxdef, uint64_t* partials,                 \
                         unsigned int* ticket, uint64_t* out, unsigned int* status) {                     \
    arrowagg::pq_page<arrowagg::__VA_ARGS__>(chunk, scratch, pages, dict, (uint32_t)maxdef, partials, ticket, \
                                             out, status);                                                \
  }
ARROWAGG_PQ_KINDS(ARROWAGG_PQ_KERNEL)
