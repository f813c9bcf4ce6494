//go:build emu

// pq.cc: runs the Parquet page kernels (kernels/pq.cuh, part of agg.cu) on
// the CPU for the Go tests, launched as the CUDA backend launches them.
#include "../../kernels/emu/emu.h"
#include "readcheck.h"
#include "../../kernels/agg.cu"

#include <vector>

#include "pq.h"

extern "C" int emugpu_pq(uint32_t kind, const uint8_t* data, uint64_t data_len, const uint8_t* table,
                         uint32_t npages, const uint8_t* dict, uint64_t dict_len, uint64_t scratch_len,
                         uint32_t snappy, uint32_t maxdef, uint64_t* out, uint32_t* status) {
  // The buffers, 16-byte aligned as device allocations are.
  std::vector<uint4> dbuf(data_len / 16 + 1), sbuf(scratch_len / 16 + 1), dictbuf(dict_len / 16 + 2),
      tbuf((uint64_t)npages * AGG_PQ_PAGE_BYTES / 16 + 1);
  std::memcpy(dbuf.data(), data, data_len);
  if (dict_len) std::memcpy(dictbuf.data(), dict, dict_len);
  std::memcpy(tbuf.data(), table, (uint64_t)npages * AGG_PQ_PAGE_BYTES);
  std::vector<uint64_t> partials((uint64_t)npages * AGG_STATE_WORDS + 1);
  unsigned int ticket = 0;
  const uint8_t* chunk = reinterpret_cast<const uint8_t*>(dbuf.data()) + AGG_PQ_PAD;
  uint8_t* scr = reinterpret_cast<uint8_t*>(sbuf.data()) + AGG_PQ_PAD;
  const PageDesc* pages = reinterpret_cast<const PageDesc*>(tbuf.data());
  const void* d = dictbuf.data();
  unsigned int* st = status;
  if (snappy) {
    const unsigned warps = kBlockThreads / kWarpThreads;
    emu_launch(arrowagg_pq_unsnap, (npages + warps - 1) / warps, kBlockThreads, chunk, scr, pages,
               (unsigned long long)npages, st);
  }
  const uint8_t* cscr = scr;
  const unsigned long long md = maxdef;
  switch (kind) {
    case 0: emu_launch(arrowagg_pq_int32, npages, kBlockThreads, chunk, cscr, pages, d, md, partials.data(), &ticket, out, st); break;
    case 1: emu_launch(arrowagg_pq_int64, npages, kBlockThreads, chunk, cscr, pages, d, md, partials.data(), &ticket, out, st); break;
    case 2: emu_launch(arrowagg_pq_uint32, npages, kBlockThreads, chunk, cscr, pages, d, md, partials.data(), &ticket, out, st); break;
    case 3: emu_launch(arrowagg_pq_uint64, npages, kBlockThreads, chunk, cscr, pages, d, md, partials.data(), &ticket, out, st); break;
    case 4: emu_launch(arrowagg_pq_float32, npages, kBlockThreads, chunk, cscr, pages, d, md, partials.data(), &ticket, out, st); break;
    case 5: emu_launch(arrowagg_pq_float64, npages, kBlockThreads, chunk, cscr, pages, d, md, partials.data(), &ticket, out, st); break;
    case 6: emu_launch(arrowagg_pq_bool, npages, kBlockThreads, chunk, cscr, pages, d, md, partials.data(), &ticket, out, st); break;
    default: return -1;
  }
  return 0;
}
