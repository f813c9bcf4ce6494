// unsnap.cuh: a warp-cooperative decompressor of snappy's raw block format
// (the format of Parquet's SNAPPY codec), for the GPU page decoder.
//
// The format: a varint preamble (the uncompressed length, < 2^32), then
// tags until the input ends. A tag's low two bits are its kind:
//
//   00 literal  length-1 in the upper 6 bits when < 60; 60..63 mean that
//               1..4 little-endian bytes after the tag hold length-1; the
//               literal's bytes follow.
//   01 copy-1   length 4 + bits 2..4, offset bits 5..7 << 8 | the next byte.
//   10 copy-2   length 1 + the upper 6 bits, offset the next 2 bytes (LE).
//   11 copy-4   length 1 + the upper 6 bits, offset the next 4 bytes (LE).
//
// A copy repeats the `length` bytes that begin `offset` bytes before the
// output's end, byte by byte, so offset < length repeats a pattern.
//
// Design (the why):
//
// - The tag stream is serial: where a tag starts depends on every tag
//   before it. A warp walking it a tag at a time, every lane parsing the same
//   tag, spends a chain of dependent instructions on each (65 instructions
//   and about 580 cycles a tag on an H200, for the short tags of 8-byte
//   integers of 37 significant bits: 30 GB/s of output over 2,500 pages).
//   So the warp takes a window of 64 input bytes at once: lane i decodes the
//   tags that would start at bytes 2i and 2i + 1 (three aligned word loads,
//   no dependence on the other lanes; a tag takes at least two bytes, so at
//   most one of the two is real), and the real tags are the chain from the
//   window's first byte, followed two tags a shuffle. A prefix sum of their
//   lengths gives each real tag its output position. Windows of 32 bytes, a
//   candidate a lane, took 7% longer on those integers' pages: the chain,
//   the prefix sum, the ballots and the round of writes are paid a window,
//   and 64 bytes hold about nineteen such tags, not ten. (Four candidates
//   a lane, 128 bytes, took 60% longer in a general form of this code: four
//   tags' registers, sixteen shuffles for the chain's pairs, two tags a lane
//   to write.) A window that is one long literal (values that do not
//   compress: a few such literals a page) is copied before any of this.
// - The window's tags are then written together, a lane each for tags of
//   at most kLaneTag bytes. A copy reads output that earlier tags wrote,
//   maybe tags of the same window: the tags go in rounds, each round the
//   first tag not yet written and every short tag whose source lies before
//   it; __syncwarp orders a round's writes before the next round's reads. A
//   copy's source is read by all its lane's loads at once, and by all the
//   round's lanes together: one trip to memory for the round, not one a tag.
//   A window whose copies all read what earlier windows wrote (most windows)
//   is one round, with none of the rounds' bookkeeping. A copy that reads
//   what a tag A of its window writes reads first where A's bytes come from
//   (A's source, or A's literal bytes in the input), which takes most such
//   windows out of the rounds.
// - Longer tags are written by the whole warp, when they come first in a
//   round. Long literals (incompressible data: tags of up to 64 KiB and
//   more) move as 4-byte words aligned to the output: each lane loads the
//   two aligned input words that hold its output word's bytes and joins them
//   with a funnel shift, so the stores are whole words whatever the relative
//   alignment of input and output; the unaligned head and tail go bytewise.
// - A copy with offset o < length is periodic: byte i of it equals
//   out[start - o + i mod o], and those o bytes are already written. So every
//   copy, overlapping or not, is written in one pass with no rounds of its
//   own; each lane keeps its i mod o incrementally, so there is no division.
// - The input is read ahead of the windows (prefetch_ahead), a line not yet
//   cached costing a trip to DRAM in the chain.
// - Bounds are checked before any byte is touched: every read of in[] is
//   below in_len and every write of out[] below out_len, for any input
//   (pages come from files: hostile bytes must give an error, never a
//   fault). A window whose chain reaches a bad tag is an error before any of
//   its tags is written. The checks follow github.com/golang/snappy's
//   decoder, so the two accept and reject the same streams (the Go tests
//   fuzz them against each other).
// - No shared memory and no allocation: the state is registers.
//
// Usage: all 32 lanes of a warp call unsnap_warp with the same arguments;
// each warp decodes its own buffer. The output is visible to the whole warp
// on return. Compiles with nvcc -std=c++14 and, on the CPU, with g++ under
// emu/emu.h.
#pragma once

#include <stdint.h>

namespace arrowagg {

// unsnap_warp's results.
constexpr int kUnsnapOK = 0;
// The stream is not valid snappy: a bad preamble, a truncated tag, a literal
// or copy running past the input or the output, a copy offset of 0 or
// before the output's start, or fewer bytes than the preamble says.
constexpr int kUnsnapCorrupt = 1;
// The preamble's length differs from the caller's out_len.
constexpr int kUnsnapLength = 2;

namespace unsnap_detail {

constexpr unsigned kWarp = 32;
constexpr unsigned kLaneMask = kWarp - 1;
constexpr unsigned kWarpMask = 0xffffffffu;  // every lane
// Literals at least this long take the word path (shorter ones are one or
// two bytewise steps, cheaper than the word path's setup).
constexpr uint32_t kWordLiteral = 128;

// UNSNAP_CHECK_READ(p, bytes) is called before each read of the input: a
// hook for the CPU emulation's tests (internal/emugpu), which define it to
// check that no read leaves the input, to the byte (a guard page catches
// only reads that cross a page). Nothing by default.
#ifndef UNSNAP_CHECK_READ
#define UNSNAP_CHECK_READ(p, bytes)
#endif

// ld_in reads input bytes: read-only for the kernel's lifetime, so through
// the read-only cache.
__device__ __forceinline__ uint32_t ld_in(const uint8_t* p) {
  UNSNAP_CHECK_READ(p, 1);
  return __ldg(p);
}

// copy_literal writes out[0, n) = in[0, n) with all lanes (bytes ranges
// that do not overlap: input and output are different buffers).
__device__ __forceinline__ void copy_literal(const uint8_t* __restrict__ in, uint8_t* __restrict__ out,
                                             uint32_t n, unsigned lane) {
  if (n < kWordLiteral) {
    for (uint32_t i = lane; i < n; i += kWarp) out[i] = (uint8_t)ld_in(in + i);
    return;
  }
  // Output words [w0, w1) (byte offsets from out, multiples of 4 in address)
  // go as words. For the word at byte offset a, its input bytes start at
  // in + a; the two aligned input words around them lie within in[0, n)
  // when a >= 4 and a + 8 <= n (the first aligned word starts at most 3
  // bytes before in + a, the second ends at most 7 bytes after it).
  const uintptr_t ob = (uintptr_t)out;
  const uint32_t w0 = (uint32_t)((4 - (ob & 3)) & 3) + 4;  // first aligned offset >= 4
  const uint32_t w1 = w0 + ((n - 8 - w0) & ~3u) + 4;        // end: last word with a + 8 <= n, + 4
  // head and tail bytewise: [0, w0) and [w1, n)
  if (lane < w0) out[lane] = (uint8_t)ld_in(in + lane);
  for (uint32_t i = w1 + lane; i < n; i += kWarp) out[i] = (uint8_t)ld_in(in + i);
  const uintptr_t p0 = (uintptr_t)(in + w0);  // input address of the first word's bytes
  const unsigned sh = (unsigned)(p0 & 3) * 8;
  const uint32_t* src = (const uint32_t*)(p0 & ~(uintptr_t)3);
  uint32_t* dst = (uint32_t*)(out + w0);
  const uint32_t words = (w1 - w0) / 4;
  for (uint32_t k = lane; k < words; k += kWarp) {
    UNSNAP_CHECK_READ(src + k, sh ? 8 : 4);
    const uint32_t lo = __ldg(src + k);
    const uint32_t hi = sh ? __ldg(src + k + 1) : 0u;
    dst[k] = __funnelshift_r(lo, hi, sh);
  }
}

// copy_back writes out[d, d+n) = the byte-by-byte copy from o bytes back,
// with all lanes: byte i is out[d - o + i mod o], which the caller has made
// visible to every lane.
__device__ __forceinline__ void copy_back(uint8_t* out, uint32_t d, uint32_t n, uint32_t o, unsigned lane) {
  const uint8_t* src = out + (d - o);
  uint8_t* dst = out + d;
  if (o >= n) {  // no overlap: a plain parallel copy
    for (uint32_t i = lane; i < n; i += kWarp) dst[i] = src[i];
    return;
  }
  uint32_t j = lane < o ? lane : lane % o;  // i mod o
  const uint32_t step = kWarp < o ? kWarp : kWarp % o;
  for (uint32_t i = lane; i < n; i += kWarp) {
    dst[i] = src[j];
    j += step;
    if (j >= o) j -= o;
  }
}

// Tags of at most kLaneTag bytes (most tags of data that compresses a
// little: a few literal bytes, then a copy of 4 to 8) are written by one
// lane each, the window's tags at once; longer ones by the whole warp.
constexpr uint32_t kLaneTag = 8;

// lane_tag writes out[dst, dst+n) (n <= kLaneTag) from one lane: a literal
// (o == 0) of in[src, src+n), or a copy of out[src, src+min(n, o)) repeated
// with period o, whose bytes are already visible to the lane. Every load
// first, then every store. Literals and copies that do not overlap their
// output (o >= n) take one path, so that a window's literal and copy lanes
// do not run two paths in turn (a quarter of the instructions of 8-byte
// integers' pages went there).
__device__ __forceinline__ void lane_tag(const uint8_t* __restrict__ in, uint8_t* __restrict__ out, uint32_t src,
                                         uint32_t dst, uint32_t n, uint32_t o) {
  uint8_t b[kLaneTag];
  if (o == 0 || o >= n) {
    // A literal, or a copy whose bytes lie before its output: n bytes one
    // after the other, from the input or the output.
    const uint8_t* p = o == 0 ? in + src : out + src;
    if (o == 0) UNSNAP_CHECK_READ(p, n);
#pragma unroll
    for (uint32_t k = 0; k < kLaneTag; k++)
      if (k < n) b[k] = p[k];
  } else {
    uint32_t j = 0;  // k mod o
#pragma unroll
    for (uint32_t k = 0; k < kLaneTag; k++) {
      if (k < n) {
        b[k] = out[src + j];
        if (++j == o) j = 0;
      }
    }
  }
  // (A pointer, not out[dst + k]: the stores' addresses are then one
  // register and constant offsets, not a 64-bit sum a byte.)
  uint8_t* q = out + dst;
#pragma unroll
  for (uint32_t k = 0; k < kLaneTag; k++)
    if (k < n) q[k] = b[k];
}

// header returns in[s, s+5) as the low bytes of a word (zeros past in_len):
// a tag and the bytes that may follow it, read at once from the two aligned
// words that hold them when both lie within the input.
__device__ __forceinline__ uint64_t header(const uint8_t* in, uint32_t in_len, uint32_t s) {
  const uintptr_t p = (uintptr_t)(in + s);
  const uintptr_t a = p & ~(uintptr_t)3;
  if (a >= (uintptr_t)in && a + 8 <= (uintptr_t)in + in_len) {
    UNSNAP_CHECK_READ((const uint8_t*)a, 8);
    const uint32_t* w = (const uint32_t*)a;
    const uint64_t x = (uint64_t)__ldg(w + 1) << 32 | __ldg(w);
    return x >> ((p & 3) * 8);  // at least 5 bytes: p & 3 <= 3
  }
  uint64_t h = 0;
  for (uint32_t i = 0; i < 5 && s + i < in_len; i++) h |= (uint64_t)ld_in(in + s + i) << (8 * i);
  return h;
}

// The windows are read one after the other, each waiting for the chain of
// the one before: a line of the input not yet in the cache would stall the
// warp for a trip to DRAM every 128 bytes. So every kPrefetchStep bytes of
// input, the first lanes ask for the next kPrefetchStep bytes beyond the
// following ones.
constexpr uint32_t kPrefetchStep = 512;
constexpr uint32_t kLine = 128;

__device__ __forceinline__ void prefetch_ahead(const uint8_t* in, uint32_t in_len, uint32_t s, unsigned lane) {
#ifdef __CUDA_ARCH__
  const uint64_t at = (uint64_t)s + kPrefetchStep + (uint64_t)lane * kLine;
  if (lane < kPrefetchStep / kLine && at < in_len) asm volatile("prefetch.global.L1 [%0];" ::"l"(in + at));
#else
  (void)in, (void)in_len, (void)s, (void)lane;  // (the CPU emulation has no cache to fill)
#endif
}

// A window is 64 input bytes, two a lane: lane i decodes the tags that would
// start at bytes 2i and 2i + 1 (a tag takes at least 2 bytes, so at most
// one of them is real). One window's chain, prefix sum, ballots and round
// of writes serve twice the tags of a window of 32 bytes.
constexpr uint32_t kWindow = 2 * kWarp;

// headers returns header(in, in_len, at) and header(in, in_len, at + 1)
// (0 past the input), from the three aligned words that hold both when
// they lie within the input.
__device__ __forceinline__ void headers(const uint8_t* in, uint32_t in_len, uint64_t at, uint64_t& h0, uint64_t& h1) {
  const uintptr_t p = (uintptr_t)in + (uintptr_t)(at < in_len ? at : 0);
  const uintptr_t a = p & ~(uintptr_t)3;
  if (at < in_len && a >= (uintptr_t)in && a + 12 <= (uintptr_t)in + in_len) {
    UNSNAP_CHECK_READ((const uint8_t*)a, 12);
    const uint32_t* w = (const uint32_t*)a;
    const uint64_t x0 = __ldg(w), x1 = __ldg(w + 1), x2 = __ldg(w + 2);
    const uint32_t sh = (uint32_t)(p & 3) * 8;
    h0 = (x1 << 32 | x0) >> sh;                                  // bytes sh/8 .. sh/8 + 7
    h1 = sh == 24 ? (x2 << 32 | x1) : (x1 << 32 | x0) >> (sh + 8);  // one byte on: >= 5 bytes either way
    return;
  }
  h0 = at < in_len ? header(in, in_len, (uint32_t)at) : 0;
  h1 = at + 1 < in_len ? header(in, in_len, (uint32_t)(at + 1)) : 0;
}

// Tag is the tag that would start at some input position, as one lane
// decodes it: its bytes in the input (step: the header's, and a literal's
// data), its output length n and a copy's offset o (0: a literal). ok is
// false when its header or a literal's data run past the input, or a copy's
// offset is 0; such a tag ends the window's chain of tags (step kWindow),
// and is an error if the chain reaches it.
struct Tag {
  uint32_t step;
  uint32_t need;  // the header's bytes
  uint32_t n, o;
  bool ok;
};

// decode_tag decodes the tag at in[at] with no branch on its kind: the
// lanes of a window hold tags of every kind, and a switch would run each
// kind's path one after the other.
__device__ __forceinline__ Tag decode_tag(uint64_t h, uint32_t in_len, uint64_t at) {
  if (at >= in_len) return Tag{kWindow, 1, 0, 0, false};
  const uint32_t tag = (uint32_t)h & 0xff, kind = tag & 3, x = tag >> 2;
  const uint32_t after = (uint32_t)(h >> 8);   // the 4 bytes after the tag
  const uint32_t left = in_len - (uint32_t)at;  // >= 1
  const uint32_t nb = x >= 60 ? x - 59 : 0;     // a literal's length bytes
  Tag t;
  if (kind == 0) {  // (selects, not branches: every path is a few instructions)
    const uint32_t lx = nb == 0 ? x : after & (nb == 4 ? 0xffffffffu : (1u << (8 * nb)) - 1);  // length - 1
    t.need = 1 + nb;
    // the literal's lx + 1 bytes must lie within the input (which also
    // keeps lx + 1 within 32 bits)
    t.ok = left > t.need && lx < left - t.need;
    t.n = lx + 1;
    t.o = 0;
    t.step = t.need + lx + 1;
  } else {
    t.need = kind == 1 ? 2 : kind == 2 ? 3 : 5;
    t.n = kind == 1 ? 4 + (x & 7) : 1 + x;
    t.o = kind == 1 ? (tag & 0xe0) << 3 | (after & 0xff) : kind == 2 ? after & 0xffff : after;
    t.ok = left >= t.need && t.o != 0;  // (offset 0 is corrupt, and o == 0 marks a literal)
    t.step = t.need;
  }
  if (!t.ok) t.step = kWindow;
  return t;
}

}  // namespace unsnap_detail

// unsnap_warp decodes the snappy block in[0, in_len) into out[0, out_len),
// called by all 32 lanes of a warp with the same arguments. It returns
// kUnsnapOK, kUnsnapCorrupt or kUnsnapLength, the same in every lane; it
// reads no byte of in[] outside [0, in_len) and writes none of out[] outside
// [0, out_len), whatever the input. On return the output is visible to every
// lane of the warp (on an error, out holds whatever was decoded before it).
//
// The tags go a window of 64 input bytes at a time: lane i decodes the tags
// that would start at bytes 2i and 2i + 1 of the window; the chain of tags
// from the window's first byte (two tags a shuffle) says which lanes hold a
// real tag; a prefix sum of their lengths gives each its output position;
// then the lanes write their tags together, in rounds: a copy waits for the
// round after the tags whose bytes it reads.
__device__ inline int unsnap_warp(const uint8_t* __restrict__ in, uint32_t in_len, uint8_t* __restrict__ out,
                                  uint32_t out_len) {
  using namespace unsnap_detail;
  const unsigned lane = threadIdx.x & kLaneMask;
  int err = kUnsnapOK;
  uint32_t s = 0;  // input position

  // The preamble: a varint as Go's binary.Uvarint reads it (at most 10
  // bytes, the 10th at most 1), whose value must fit in 32 bits.
  uint64_t want = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (s >= in_len || s == 10) {
      err = kUnsnapCorrupt;
      break;
    }
    const uint32_t b = ld_in(in + s++);
    if (b < 0x80) {
      if (s == 10 && b > 1) err = kUnsnapCorrupt;
      want |= (uint64_t)b << shift;
      break;
    }
    want |= (uint64_t)(b & 0x7f) << shift;
  }
  if (err == kUnsnapOK && want > 0xffffffffull) err = kUnsnapCorrupt;
  if (err == kUnsnapOK && want != out_len) err = kUnsnapLength;

  uint32_t d = 0;        // output position; out[0, d) is visible to every lane
  uint32_t fetched = 0;  // prefetch_ahead's next position
  while (err == kUnsnapOK && s < in_len) {
    if (s >= fetched) {
      prefetch_ahead(in, in_len, s, lane);
      fetched = s + kPrefetchStep;
    }
    const uint64_t at2 = (uint64_t)s + 2 * lane;  // this lane's first candidate
    uint64_t h0, h1;
    headers(in, in_len, at2, h0, h1);
    const Tag t0 = decode_tag(h0, in_len, at2), t1 = decode_tag(h1, in_len, at2 + 1);
    // A window whose first tag takes 32 input bytes or more holds that tag
    // alone: a literal of 27 bytes or more (copies take at most 5 bytes),
    // or a tag that is not valid. The literal is copied here, outside the
    // rounds: values that do not compress are a few such literals a page,
    // and with the rounds' registers live around it, the word loop's loads
    // were issued two groups apart, each waited for.
    const uint32_t step0 = __shfl_sync(kWarpMask, t0.step, 0);
    if (step0 >= 32) {
      const uint32_t n0 = __shfl_sync(kWarpMask, t0.n, 0);
      const uint32_t need0 = __shfl_sync(kWarpMask, t0.need, 0);
      if (!__shfl_sync(kWarpMask, (int)t0.ok, 0) || __shfl_sync(kWarpMask, t0.o, 0) != 0 || n0 > out_len - d) {
        err = kUnsnapCorrupt;
        break;
      }
      copy_literal(in + s + need0, out + d, n0, lane);
      __syncwarp();
      s += step0;
      d += n0;
      continue;
    }
    // The chain: the window's real tags, starting at its first byte, two
    // tags a step. sa, sb: the input bytes of the lane's candidates' tags (at
    // most the window); sa2, sb2: those of each and the tag after it.
    const uint32_t sa = t0.step < kWindow ? t0.step : kWindow, sb = t1.step < kWindow ? t1.step : kWindow;
    const uint32_t na = 2 * lane + sa, nb = 2 * lane + 1 + sb;  // < 2 * kWindow
    const uint32_t na0 = __shfl_sync(kWarpMask, sa, (int)((na / 2) & kLaneMask));
    const uint32_t na1 = __shfl_sync(kWarpMask, sb, (int)((na / 2) & kLaneMask));
    const uint32_t nb0 = __shfl_sync(kWarpMask, sa, (int)((nb / 2) & kLaneMask));
    const uint32_t nb1 = __shfl_sync(kWarpMask, sb, (int)((nb / 2) & kLaneMask));
    const uint32_t sa2 = sa + (na < kWindow ? (na & 1 ? na1 : na0) : 0);
    const uint32_t sb2 = sb + (nb < kWindow ? (nb & 1 ? nb1 : nb0) : 0);
    const uint32_t lim = in_len - s < kWindow ? in_len - s : kWindow;  // the window's input bytes
    uint64_t starts = 0;
    uint32_t p = 0, last = 0;
    while (p < lim) {
      starts |= 1ull << p;
      last = p;
      const uint32_t q = p + __shfl_sync(kWarpMask, p & 1 ? sb : sa, (int)(p / 2));
      const uint32_t r = p + __shfl_sync(kWarpMask, p & 1 ? sb2 : sa2, (int)(p / 2));
      if (q < lim) {
        starts |= 1ull << q;
        last = q;
        p = r;
      } else {
        p = q;
      }
    }
    // The lane's real tag, if any: at most one of its two candidates.
    const uint32_t two = (uint32_t)(starts >> (2 * lane)) & 3;
    const bool mine = two != 0;
    const Tag t = two & 1 ? t0 : t1;
    const uint64_t at = at2 + (two & 1 ? 0 : 1);
    // Output positions: an exclusive prefix sum of the tags' lengths. Only
    // the window's last tag can be longer than 64 bytes (a copy writes at
    // most 64, a literal fewer than the input it takes), so the sums before
    // any tag fit 32 bits; a lane's sum past the last tag wraps only when
    // the last tag runs past out_len, an error (below) before it is used.
    const uint32_t len = mine ? t.n : 0;
    uint32_t incl = len;
#pragma unroll
    for (unsigned k = 1; k < kWarp; k <<= 1) {
      const uint32_t y = __shfl_up_sync(kWarpMask, incl, k);
      if (lane >= k) incl += y;
    }
    const uint64_t at_out = (uint64_t)d + (incl - len);  // this lane's output position
    // Each real tag must fit the input (decode_tag), the output, and a
    // copy's offset the output before it.
    bool bad = !t.ok || at_out + t.n > out_len;
    if (t.o != 0) bad = bad || t.o > at_out;
    if (__ballot_sync(kWarpMask, mine && bad) != 0) {
      err = kUnsnapCorrupt;
      break;
    }
    const uint32_t dst = (uint32_t)at_out;  // <= out_len
    const bool is_long = t.n > kLaneTag;
    // a copy reads out[dst - o, dst - o + min(n, o)); a literal reads none
    uint32_t o = t.o;
    uint32_t src_end = o == 0 ? 0 : dst - o + (t.n < o ? t.n : o);
    uint32_t src = o == 0 ? (uint32_t)at + t.need : dst - o;
    // A copy that reads what a tag A of this window writes (the high bytes
    // of 8-byte integers, copied from the value before: the rounds in most
    // windows) reads those bytes where A reads them: A's literal bytes in the
    // input (when the copy does not overlap its own output), or, A being a
    // copy, o_A bytes further back (out[x] = out[x - o_A] for every x of A's
    // output, overlapping or not). That source may still lie in the window
    // (A read it): the rounds below then order them as before. A is the last
    // lane whose output starts at or before the copy's source: the lanes'
    // output positions do not decrease (a lane without a tag holds the
    // position after the tags before it, and none passes out_len), and that
    // lane holds a tag (lane 0 does; a lane without one starts where the
    // next tag does, or past every tag's output).
    if (__ballot_sync(kWarpMask, mine && o != 0 && src_end > d) != 0) {
      uint32_t a = 0;
#pragma unroll
      for (unsigned k = kWarp / 2; k > 0; k >>= 1)
        if (__shfl_sync(kWarpMask, dst, (int)(a + k)) <= src) a += k;
      const uint32_t a_dst = __shfl_sync(kWarpMask, dst, (int)a);
      const uint32_t a_n = __shfl_sync(kWarpMask, t.n, (int)a);
      const uint32_t a_o = __shfl_sync(kWarpMask, o, (int)a);
      const uint32_t a_src = __shfl_sync(kWarpMask, src, (int)a);
      const uint32_t span = t.n < o ? t.n : o;  // the bytes the copy reads
      if (mine && o != 0 && src_end > d && a_dst <= src && src + span <= a_dst + a_n) {
        if (a_o != 0) {
          src -= a_o;  // (>= 0: a_o <= a_dst <= src)
          src_end -= a_o;
        } else if (o >= t.n) {
          src = a_src + (src - a_dst);
          o = 0;
          src_end = 0;
        }
      }
    }
    if (__ballot_sync(kWarpMask, mine && (is_long || src_end > d)) == 0) {
      // Every tag is short and reads only what the windows before wrote
      // (most windows): one round, without the rounds' bookkeeping.
      if (mine) lane_tag(in, out, src, dst, t.n, o);
      __syncwarp();
    } else {
      // Rounds: the first tag not yet written and every short tag whose
      // bytes lie before it.
      uint32_t todo = __ballot_sync(kWarpMask, mine);
      const uint32_t longs = __ballot_sync(kWarpMask, mine && is_long);  // the tags the whole warp writes
      while (todo != 0) {
        const int first = __ffs((int)todo) - 1;
        const uint32_t frontier = __shfl_sync(kWarpMask, dst, first);
        const bool ready = ((todo >> lane) & 1) && !is_long && src_end <= frontier;
        if (ready) lane_tag(in, out, src, dst, t.n, o);
        uint32_t done = __ballot_sync(kWarpMask, ready);
        if ((longs >> first) & 1) {  // the first tag is long: the warp writes it
          const uint32_t fsrc = __shfl_sync(kWarpMask, src, first);
          const uint32_t fn = __shfl_sync(kWarpMask, t.n, first);
          const uint32_t fo = __shfl_sync(kWarpMask, o, first);  // (copy_back reads o back: written)
          if (fo == 0) copy_literal(in + fsrc, out + frontier, fn, lane);
          else copy_back(out, frontier, fn, fo, lane);
          done |= 1u << first;
        }
        todo &= ~done;
        __syncwarp();
      }
    }
    s += last + __shfl_sync(kWarpMask, t.step, (int)(last / 2));  // (a real tag's step fits the input)
    d = __shfl_sync(kWarpMask, dst + t.n, (int)(last / 2));  // (the last tag fits the output)
  }
  if (err == kUnsnapOK && d != out_len) err = kUnsnapCorrupt;
  __syncwarp();
  return err;
}

}  // namespace arrowagg
