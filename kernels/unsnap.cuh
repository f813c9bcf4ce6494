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
// - The tag stream is inherently serial: where a tag starts depends on every
//   tag before it. All 32 lanes parse every tag header redundantly from the
//   same bytes (one broadcast load per byte: the lanes read the same
//   address) instead of lane 0 parsing and broadcasting: the lanes stay in
//   lockstep with no shuffle or shared memory per tag, and since every lane
//   reads the same bytes, every lane reaches the same decision and the same
//   error code with no vote. With thousands of warps resident, the latency of
//   these dependent loads is hidden by the other warps; what a tag costs is
//   its instruction count, which this keeps small.
// - The bytes of one tag are then written by all 32 lanes at once. Long
//   literals (incompressible data: tags of up to 64 KiB and more) move as
//   4-byte words aligned to the output: each lane loads the two aligned
//   input words that hold its output word's bytes and joins them with a
//   funnel shift, so the stores are whole words whatever the relative
//   alignment of input and output; the unaligned head and tail go bytewise.
// - A copy with offset o < length is periodic: byte i of it equals
//   out[start - o + i mod o], and those o bytes are already written. So every
//   copy, overlapping or not, is written in one parallel pass (32 bytes per
//   step) with no rounds; each lane keeps its i mod o incrementally (it
//   advances by 32 mod o per step), so there is no division in the loop.
// - A copy reads output that other lanes wrote: __syncwarp orders those
//   writes before the reads. It is issued only when the copy reads bytes
//   written since the last one (copies far back need none).
// - Bounds are checked before any byte is touched: every read of in[] is
//   below in_len and every write of out[] below out_len, for any input
//   (pages come from files: hostile bytes must give an error, never a
//   fault). The checks follow github.com/golang/snappy's decoder, so the two
//   accept and reject the same streams (the Go tests fuzz them against each
//   other).
// - No shared memory and no allocation: the state is a few registers.
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

}  // namespace unsnap_detail

// unsnap_warp decodes the snappy block in[0, in_len) into out[0, out_len),
// called by all 32 lanes of a warp with the same arguments. It returns
// kUnsnapOK, kUnsnapCorrupt or kUnsnapLength, the same in every lane; it
// reads no byte of in[] outside [0, in_len) and writes none of out[] outside
// [0, out_len), whatever the input. On return the output is visible to every
// lane of the warp (on an error, out holds whatever was decoded before it).
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

  uint32_t d = 0;       // output position
  uint32_t synced = 0;  // out[0, synced) is visible to every lane
  while (err == kUnsnapOK && s < in_len) {
    const uint32_t tag = ld_in(in + s);
    const uint32_t left = in_len - s;  // >= 1: the tag byte
    if ((tag & 3) == 0) {
      uint32_t x = tag >> 2;  // length - 1
      if (x < 60) {
        s += 1;
      } else {
        const uint32_t nb = x - 59;  // 1..4 length bytes
        if (left <= nb) {
          err = kUnsnapCorrupt;
          break;
        }
        x = ld_in(in + s + 1);
        if (nb > 1) x |= ld_in(in + s + 2) << 8;
        if (nb > 2) x |= ld_in(in + s + 3) << 16;
        if (nb > 3) x |= ld_in(in + s + 4) << 24;
        s += 1 + nb;
      }
      // length x + 1 must fit in the output and the input left (x + 1 may
      // overflow 32 bits: compare x against the room instead)
      if (x >= out_len - d || x >= in_len - s) {
        err = kUnsnapCorrupt;
        break;
      }
      copy_literal(in + s, out + d, x + 1, lane);
      s += x + 1;
      d += x + 1;
      continue;
    }
    uint32_t n, o;
    switch (tag & 3) {
      case 1:
        if (left < 2) {
          err = kUnsnapCorrupt;
          break;
        }
        n = 4 + ((tag >> 2) & 7);
        o = (tag & 0xe0) << 3 | ld_in(in + s + 1);
        s += 2;
        break;
      case 2:
        if (left < 3) {
          err = kUnsnapCorrupt;
          break;
        }
        n = 1 + (tag >> 2);
        o = ld_in(in + s + 1) | ld_in(in + s + 2) << 8;
        s += 3;
        break;
      default:
        if (left < 5) {
          err = kUnsnapCorrupt;
          break;
        }
        n = 1 + (tag >> 2);
        o = ld_in(in + s + 1) | ld_in(in + s + 2) << 8 | ld_in(in + s + 3) << 16 | ld_in(in + s + 4) << 24;
        s += 5;
        break;
    }
    if (err != kUnsnapOK) break;
    if (o == 0 || o > d || n > out_len - d) {
      err = kUnsnapCorrupt;
      break;
    }
    // The copy reads out[d - o, d - o + min(n, o)): make the lanes' writes
    // of that range visible first, unless they already are.
    if (d - o + (n < o ? n : o) > synced) {
      __syncwarp();
      synced = d;
    }
    copy_back(out, d, n, o, lane);
    d += n;
  }
  if (err == kUnsnapOK && d != out_len) err = kUnsnapCorrupt;
  __syncwarp();
  return err;
}

}  // namespace arrowagg
