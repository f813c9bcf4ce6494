//go:build emu

// pq.cc: runs the Parquet page kernels (kernels/pq.cuh, part of agg.cu) on
// the CPU for the Go tests, launched as the CUDA backend launches them.
#include "../../kernels/emu/emu.h"
#include "readcheck.h"
#include "../../kernels/agg.cu"

#include <sys/mman.h>
#include <unistd.h>

#include <vector>

#include "pq.h"

namespace {

// Guarded is a buffer of n bytes (a multiple of 16) that ends where an
// inaccessible page starts: a kernel's read past a buffer's padding faults
// instead of reading the heap.
struct Guarded {
  uint8_t* map = nullptr;
  size_t size = 0;
  uint8_t* buf = nullptr;
  explicit Guarded(size_t n) {
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t data = (n + page - 1) / page * page;
    void* m = mmap(nullptr, data + page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    if (data && mprotect(m, data, PROT_READ | PROT_WRITE) != 0) {
      munmap(m, data + page);
      return;
    }
    map = (uint8_t*)m, size = data + page, buf = map + data - n;
  }
  ~Guarded() {
    if (map) munmap(map, size);
  }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
};

size_t round16(size_t n) { return (n + 15) / 16 * 16; }

}  // namespace

extern "C" int emugpu_pq(uint32_t kind, const uint8_t* data, uint64_t data_len, const uint8_t* table,
                         uint32_t npages, const uint8_t* dict, uint64_t dict_len, uint64_t scratch_len,
                         uint32_t snappy, uint32_t maxdef, uint64_t* out, uint32_t* status) {
  // The buffers, 16-byte aligned as device allocations are; the chunks',
  // the scratch's and the dictionaries' end at an inaccessible page.
  Guarded dbuf(round16(data_len)), sbuf(round16(scratch_len)), dictbuf(round16(dict_len) + 16);
  if (!dbuf.buf || !sbuf.buf || !dictbuf.buf) return -2;
  std::vector<uint4> tbuf((uint64_t)npages * AGG_PQ_PAGE_BYTES / 16 + 1);
  std::memcpy(dbuf.buf, data, data_len);
  if (dict_len) std::memcpy(dictbuf.buf, dict, dict_len);
  std::memcpy(tbuf.data(), table, (uint64_t)npages * AGG_PQ_PAGE_BYTES);
  std::vector<uint64_t> partials((uint64_t)npages * AGG_STATE_WORDS + 1);
  unsigned int ticket = 0;
  const uint8_t* chunk = dbuf.buf + AGG_PQ_PAD;
  uint8_t* scr = sbuf.buf + AGG_PQ_PAD;
  const PageDesc* pages = reinterpret_cast<const PageDesc*>(tbuf.data());
  const void* d = dictbuf.buf;
  unsigned int* st = status;
  if (snappy) {
    emu_launch(arrowagg_pq_unsnap, npages, kWarpThreads, chunk, scr, pages, (unsigned long long)npages,
               st);  // (a block of one warp a page, as backend/cuda launches it)
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
