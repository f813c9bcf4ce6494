//go:build emu

// unsnap.cc: runs kernels/unsnap.cuh's unsnap_warp on the CPU for the Go
// tests: one warp per input, several warps per block and several blocks per
// launch, as a page decoder would run it.
//
// Each input is copied to the end of its own mapping, against an
// inaccessible page (or, placed at the start, just after one), so a read
// past either end of the input faults; each output has guard bytes on both
// sides, checked after the launch, so a write outside it is reported; every
// read of an input is checked against its bounds (UNSNAP_CHECK_READ), so a
// read outside it is reported too, to the byte.
#include "../../kernels/emu/emu.h"

#include "readcheck.h"  // every read of an input checked, to the byte

#include "../../kernels/unsnap.cuh"

#include <sys/mman.h>
#include <unistd.h>

#include "unsnap.h"

namespace {

constexpr unsigned kBlockWarps = 2;  // warps per block
constexpr unsigned kMaxBlocks = 4;   // blocks per launch; warps loop over the rest
constexpr size_t kGuard = 64;        // guard bytes on each side of an output
constexpr uint8_t kGuardByte = 0xA5;

__global__ void unsnap_test(const uint8_t* const* ins, const uint32_t* in_lens, uint8_t* const* outs,
                            const uint32_t* out_lens, int32_t* codes, int32_t* outside, unsigned n) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned warps = gridDim.x * (blockDim.x / 32);
  for (unsigned i = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; i < n; i += warps) {
    emugpu::read_bounds(ins[i], in_lens[i], &outside[i]);
    codes[(size_t)i * 32 + lane] = arrowagg::unsnap_warp(ins[i], in_lens[i], outs[i], out_lens[i]);
  }
}

// A Mapping holds one input between inaccessible pages.
struct Mapping {
  uint8_t* base = nullptr;
  size_t size = 0;
};

}  // namespace

extern "C" int emugpu_unsnap(const uint8_t* src, const uint64_t* src_off, const uint32_t* src_len, uint8_t* dst,
                             const uint64_t* dst_off, const uint32_t* dst_len, int32_t* codes, uint32_t n,
                             int at_start) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  std::vector<Mapping> maps(n);
  std::vector<const uint8_t*> ins(n);
  std::vector<uint8_t*> outs(n);
  std::vector<std::vector<uint8_t>> outbufs(n);
  int rc = 0;
  for (uint32_t i = 0; i < n; i++) {
    // [guard page][data pages][guard page]; the input ends at the second
    // guard page, or starts just after the first.
    const size_t data = (src_len[i] + page - 1) / page * page;
    const size_t size = data + 2 * page;
    void* m = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      rc = -1;
      n = i;
      break;
    }
    maps[i] = {(uint8_t*)m, size};
    if (data && mprotect((uint8_t*)m + page, data, PROT_READ | PROT_WRITE) != 0) {
      rc = -1;
      n = i + 1;
      break;
    }
    uint8_t* in = at_start ? (uint8_t*)m + page : (uint8_t*)m + page + data - src_len[i];
    std::memcpy(in, src + src_off[i], src_len[i]);
    ins[i] = in;
    outbufs[i].assign(dst_len[i] + 2 * kGuard, kGuardByte);
    outs[i] = outbufs[i].data() + kGuard;
  }
  if (rc == 0 && n > 0) {
    std::vector<uint32_t> out_lens(dst_len, dst_len + n);
    std::vector<uint32_t> in_lens(src_len, src_len + n);
    std::vector<int32_t> outside(n);
    const unsigned blocks = std::min<unsigned>((n + kBlockWarps - 1) / kBlockWarps, kMaxBlocks);
    emu_launch(unsnap_test, blocks, kBlockWarps * 32, (const uint8_t* const*)ins.data(),
               (const uint32_t*)in_lens.data(), (uint8_t* const*)outs.data(), (const uint32_t*)out_lens.data(),
               codes, outside.data(), n);
    for (uint32_t i = 0; i < n; i++)
      if (outside[i]) {
        rc = -2 - (int)i;  // the first input read outside
        break;
      }
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
      const std::vector<uint8_t>& b = outbufs[i];
      for (size_t k = 0; k < kGuard; k++)
        if (b[k] != kGuardByte || b[kGuard + dst_len[i] + k] != kGuardByte) {
          rc = (int)i + 1;  // the first input whose output's guard was written
          break;
        }
      if (rc > 0) break;
      std::memcpy(dst + dst_off[i], outs[i], dst_len[i]);
    }
  }
  for (uint32_t i = 0; i < maps.size() && i < n; i++)
    if (maps[i].base) munmap(maps[i].base, maps[i].size);
  return rc;
}
