//go:build emu

// pq.h: the entry point of pq.cc, for cgo.
#pragma once
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// emugpu_pq runs the Parquet page kernels (kernels/pq.cuh) over a batch laid
// out by internal/pqdev: data is the chunk buffer (data_len bytes, its
// padding included), table the npages records of the page table, dict the
// dictionaries (dict_len bytes), scratch_len the scratch buffer's size. kind
// picks the kernel (0 int32, 1 int64, 2 uint32, 3 uint64, 4 float32, 5
// float64, 6 bool). The state's words go to out (AGG_STATE_WORDS of room), a
// status word per page to status. The chunk, scratch and dictionary buffers
// end at an inaccessible page: a read past their padding faults. Returns 0,
// -1 for an unknown kind, -2 when the buffers cannot be mapped.
int emugpu_pq(uint32_t kind, const uint8_t* data, uint64_t data_len, const uint8_t* table, uint32_t npages,
              const uint8_t* dict, uint64_t dict_len, uint64_t scratch_len, uint32_t snappy, uint32_t maxdef,
              uint64_t* out, uint32_t* status);

#ifdef __cplusplus
}
#endif
