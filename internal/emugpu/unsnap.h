//go:build emu

// unsnap.h: the entry point of unsnap.cc, for cgo.
#pragma once
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// emugpu_unsnap decodes n snappy blocks, block i being src[src_off[i], +src_len[i])
// into dst[dst_off[i], +dst_len[i]) (out_len dst_len[i]), writing the code of
// lane l of its warp to codes[i*32 + l]. Inputs lie against an inaccessible
// page: after their end, or before their start when at_start is non-zero.
// Returns 0; -1 when a mapping failed; -2-i when input i was read outside
// its bounds; i+1 when the guard bytes around output i were written (the
// outputs from i on are not copied to dst in the last two cases).
int emugpu_unsnap(const uint8_t* src, const uint64_t* src_off, const uint32_t* src_len, uint8_t* dst,
                  const uint64_t* dst_off, const uint32_t* dst_len, int32_t* codes, uint32_t n, int at_start);

#ifdef __cplusplus
}
#endif
