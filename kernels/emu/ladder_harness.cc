// ladder_harness.cc: runs the kernels of ladder.cu on the CPU (emu.h) the
// way package ladder launches them, on random inputs whose lengths are not
// powers of two, and checks every result against the host: the sum, or for
// kernel 12 the sequential fold of its operator. Small grids stand in for
// the device-filling ones. Variant 5u (the volatile-only unrolled warp) is
// reported, not checked: it is expected to fail with independent threads.
#include "emu.h"
#include "../ladder.cu"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <string>

namespace {

int failures = 0;

void fail(const std::string& what) {
  std::printf("FAIL %s\n", what.c_str());
  failures++;
}

// Scratch memory for partials, large enough for every input below.
std::vector<i64> scratch0(1 << 16), scratch1(1 << 16);

typedef void (*Kernel32)(const int*, u64, i64*);
typedef void (*Kernel64)(const i64*, u64, i64*);

// recursive runs a kernel of variants 1 to 8: one partial per block, then
// the _i64 form over the partials until one block is left; a block covers
// perBlock elements, and at most maxGrid blocks are launched (the kernel
// loops over the rest).
i64 recursive(Kernel32 k32, Kernel64 k64, unsigned block, u64 perBlock, u64 maxGrid, const int* in, u64 n) {
  u64 g = std::min((n + perBlock - 1) / perBlock, maxGrid);
  std::fill(scratch0.begin(), scratch0.begin() + g, 0x5a5a5a5a5a5a);
  emu_launch(k32, (unsigned)g, block, in, n, scratch0.data());
  i64* src = scratch0.data();
  i64* dst = scratch1.data();
  while (g > 1) {
    const u64 m = g;
    g = std::min((m + perBlock - 1) / perBlock, maxGrid);
    emu_launch(k64, (unsigned)g, block, (const i64*)src, m, dst);
    std::swap(src, dst);
  }
  return src[0];
}

i64 atomic_per_block(const int* in, u64 n, unsigned grid) {
  u64 out = 0;
  emu_launch(ladder_v9, grid, 256u, in, n, &out);
  return (i64)out;
}

i64 two_kernels(const int* in, u64 n, unsigned grid) {
  i64 out = 1;
  emu_launch(ladder_v10_partials, grid, 256u, in, n, scratch0.data());
  emu_launch(ladder_v10_final, 1u, 256u, (const i64*)scratch0.data(), (u64)grid, &out);
  return out;
}

i64 last_block(const int* in, u64 n, unsigned grid) {
  i64 out = 1;
  unsigned ticket = 0;
  emu_launch(ladder_v11, grid, 256u, in, n, scratch0.data(), &ticket, &out);
  if (ticket != 0) fail("variant 11 left its ticket at " + std::to_string(ticket));
  return out;
}

i64 window_cascade(const int* in, u64 n) {
  const u64 w = ladder::kWindow;
  u64 m = n, s = (m + w - 1) / w;
  emu_launch(ladder_v13_i32, (unsigned)((s + 255) / 256), 256u, in, m, s, scratch0.data());
  for (m = s; m > w; m = s) {
    s = (m + w - 1) / w;
    emu_launch(ladder_v13_i64, (unsigned)((s + 255) / 256), 256u, (const i64*)scratch0.data(), m, s,
               scratch0.data());
  }
  i64 sum = 0;
  for (u64 i = 0; i < m; i++) sum += scratch0[i];
  return sum;
}

template <class Op>
typename Op::S fold(const std::vector<int>& d) {
  typename Op::S s = Op::identity();
  for (int x : d) s = Op::combine(s, Op::lift(x));
  return s;
}

bool same(i64 a, i64 b) { return a == b; }
bool same(ladder::Mat2 a, ladder::Mat2 b) { return a.a == b.a && a.b == b.b && a.c == b.c && a.d == b.d; }
bool same(ladder::FirstLast a, ladder::FirstLast b) {
  return a.first == b.first && a.last == b.last && a.count == b.count;
}

// ordered runs kernel 12 with operator Op on grid blocks.
template <class Op, class Kernel>
void ordered(const char* name, Kernel k, const std::vector<int>& d, unsigned grid) {
  typedef typename Op::S S;
  std::vector<S> partials(grid);
  unsigned ticket = 0;
  S out;
  std::memset(&out, 0xa5, sizeof out);
  emu_launch(k, grid, 256u, d.data(), (u64)d.size(), partials.data(), &ticket, &out);
  if (!same(out, fold<Op>(d)) || ticket != 0)
    fail(std::string(name) + " n=" + std::to_string(d.size()) + " grid=" + std::to_string(grid));
}

}  // namespace

int main() {
  std::mt19937_64 rng(12345);
  const std::vector<u64> sizes = {1, 2, 3, 5, 31, 33, 64, 255, 257, 1000, 1023, 1025, 4097, 20011};
  int unsafeWrong = 0;
  for (const u64 n : sizes) {
    // MaxInt32 past the end, inside the vector's capacity: a read past n
    // shows in the sum.
    std::vector<int> d(n + 4, 0x7fffffff);
    for (u64 i = 0; i < n; i++) d[i] = (int)(rng() >> 32);
    d.resize(n);
    i64 want = 0;
    for (int x : d) want += x;
    const int* in = d.data();
    const unsigned grid = (unsigned)std::min<u64>((n + 1023) / 1024, 5);
    const u64 all = ~0ull;
    const std::vector<std::pair<std::string, std::function<i64()>>> variants = {
        {"1", [&] { return recursive(ladder_v1_i32, ladder_v1_i64, 256, 256, all, in, n); }},
        {"1/block 64", [&] { return recursive(ladder_v1_i32, ladder_v1_i64, 64, 64, all, in, n); }},
        {"2", [&] { return recursive(ladder_v2_i32, ladder_v2_i64, 256, 256, all, in, n); }},
        {"3/block 128", [&] { return recursive(ladder_v3_i32, ladder_v3_i64, 128, 128, all, in, n); }},
        {"4", [&] { return recursive(ladder_v4_i32, ladder_v4_i64, 256, 512, all, in, n); }},
        {"5", [&] { return recursive(ladder_v5_i32, ladder_v5_i64, 256, 512, all, in, n); }},
        {"5/block 64", [&] { return recursive(ladder_v5_i32, ladder_v5_i64, 64, 128, all, in, n); }},
        {"5u", [&] { return recursive(ladder_v5u_i32, ladder_v5u_i64, 256, 512, all, in, n); }},
        {"6/block 64", [&] { return recursive(ladder_v6_b64_i32, ladder_v6_b64_i64, 64, 128, all, in, n); }},
        {"6/block 128", [&] { return recursive(ladder_v6_b128_i32, ladder_v6_b128_i64, 128, 256, all, in, n); }},
        {"6", [&] { return recursive(ladder_v6_b256_i32, ladder_v6_b256_i64, 256, 512, all, in, n); }},
        {"6/block 512", [&] { return recursive(ladder_v6_b512_i32, ladder_v6_b512_i64, 512, 1024, all, in, n); }},
        {"7", [&] { return recursive(ladder_v7_i32, ladder_v7_i64, 256, 512, 3, in, n); }},
        {"8", [&] { return recursive(ladder_v8_i32, ladder_v8_i64, 256, 512, 3, in, n); }},
        {"9", [&] { return atomic_per_block(in, n, std::min(grid, 3u)); }},
        {"10", [&] { return two_kernels(in, n, grid); }},
        {"11", [&] { return last_block(in, n, grid); }},
        {"13", [&] { return window_cascade(in, n); }},
    };
    for (const auto& [id, run] : variants) {
      const i64 got = run();
      if (got == want) continue;
      if (id == "5u") {
        unsafeWrong++;
        continue;
      }
      fail("variant " + id + " n=" + std::to_string(n) + ": got " + std::to_string(got) + ", want " +
           std::to_string(want));
    }
    for (unsigned g : {1u, 2u, 5u}) {
      ordered<ladder::SumOp>("variant 12 (sum)", ladder_v12_sum, d, g);
      ordered<ladder::Mat2Op>("variant 12 (mat2)", ladder_v12_mat2, d, g);
      ordered<ladder::FirstLastOp>("variant 12 (first/last)", ladder_v12_firstlast, d, g);
    }
  }
  // The matrix product sees order: the checks of kernel 12 have teeth.
  if (same(fold<ladder::Mat2Op>({3, 5, 7}), fold<ladder::Mat2Op>({5, 3, 7}))) fail("the 2x2 product commutes");
  std::printf("variant 5u (unsafe) wrong on %d of %zu inputs\n", unsafeWrong, sizes.size());
  std::printf("%s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
  return failures != 0;
}
