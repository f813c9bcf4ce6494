// unsnap_bench.cu: times kernels/unsnap.cuh's snappy decompressor alone on
// the GPU, over the pages that scripts/unsnap_pages.py writes, one warp a
// page as the page route launches arrowagg_pq_unsnap (blocks of one warp
// unless told otherwise). It checks every output byte against the file's answers, then
// reports the median of ITERS timed launches, in ms and in GB/s of output.
//
//   nvcc -O3 -std=c++17 -arch=native -I KERNELS_DIR -o unsnap_bench unsnap_bench.cu
//   unsnap_bench FILE.pages [ITERS]
//
// -DUNSNAP_BENCH_MINB=N gives the kernel __launch_bounds__(threads, N), to try
// register budgets; -DUNSNAP_BENCH_THREADS=T blocks of T threads;
// -DUNSNAP_BENCH_DYNAMIC warps that take pages from a counter. scripts/bench-unsnap.sh builds and runs it for each
// kernels directory it is given.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "unsnap.cuh"

#ifndef UNSNAP_BENCH_MINB
#define UNSNAP_BENCH_MINB 1
#endif
#ifndef UNSNAP_BENCH_THREADS
#define UNSNAP_BENCH_THREADS 32
#endif

constexpr unsigned kThreads = UNSNAP_BENCH_THREADS;

#ifdef UNSNAP_BENCH_DYNAMIC
// -DUNSNAP_BENCH_DYNAMIC: as many blocks as fit the GPU at once, each warp
// taking the next page from a counter until none is left.
__device__ unsigned g_next;
#endif

__global__ void __launch_bounds__(kThreads, UNSNAP_BENCH_MINB)
    bench_unsnap(const uint8_t* in, const uint64_t* in_off, const uint32_t* in_len, uint8_t* out,
                 const uint64_t* out_off, const uint32_t* out_len, unsigned n, int* codes) {
#ifdef UNSNAP_BENCH_DYNAMIC
  for (;;) {
    unsigned w = 0;
    if (threadIdx.x % 32 == 0) w = atomicAdd(&g_next, 1u);
    w = __shfl_sync(0xffffffffu, w, 0);
    if (w >= n) return;
#else
  {
    const unsigned w = (blockIdx.x * kThreads + threadIdx.x) / 32;
    if (w >= n) return;
#endif
    const int rc = arrowagg::unsnap_warp(in + in_off[w], in_len[w], out + out_off[w], out_len[w]);
    if (threadIdx.x % 32 == 0) codes[w] = rc;
  }
}

#define CK(x)                                                                         \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                   \
    }                                                                                 \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: unsnap_bench FILE.pages [ITERS]\n");
    return 2;
  }
  const int iters = argc > 2 ? std::atoi(argv[2]) : 20;
  FILE* f = std::fopen(argv[1], "rb");
  if (!f) {
    std::perror(argv[1]);
    return 2;
  }
  char magic[8];
  uint32_t n = 0;
  if (std::fread(magic, 1, 8, f) != 8 || std::memcmp(magic, "UNSNAPB1", 8) != 0 || std::fread(&n, 4, 1, f) != 1) {
    std::fprintf(stderr, "%s: not a pages file\n", argv[1]);
    return 2;
  }
  std::vector<uint32_t> lens(2 * (size_t)n);
  if (std::fread(lens.data(), 4, lens.size(), f) != lens.size()) return 2;
  std::vector<uint32_t> in_len(n), out_len(n);
  std::vector<uint64_t> in_off(n), out_off(n);
  uint64_t in_total = 0, out_total = 0;
  for (uint32_t i = 0; i < n; i++) {
    in_len[i] = lens[2 * i];
    out_len[i] = lens[2 * i + 1];
    in_off[i] = in_total;
    out_off[i] = out_total;
    in_total += in_len[i];
    out_total += out_len[i];
  }
  std::vector<uint8_t> in(in_total), want(out_total), got(out_total);
  if (std::fread(in.data(), 1, in_total, f) != in_total || std::fread(want.data(), 1, out_total, f) != out_total) {
    std::fprintf(stderr, "%s: short file\n", argv[1]);
    return 2;
  }
  std::fclose(f);

  uint8_t *d_in, *d_out;
  uint64_t *d_in_off, *d_out_off;
  uint32_t *d_in_len, *d_out_len;
  int* d_codes;
  CK(cudaMalloc(&d_in, in_total + 8));
  CK(cudaMalloc(&d_out, out_total + 8));
  CK(cudaMalloc(&d_in_off, 8 * (size_t)n));
  CK(cudaMalloc(&d_out_off, 8 * (size_t)n));
  CK(cudaMalloc(&d_in_len, 4 * (size_t)n));
  CK(cudaMalloc(&d_out_len, 4 * (size_t)n));
  CK(cudaMalloc(&d_codes, 4 * (size_t)n));
  CK(cudaMemcpy(d_in, in.data(), in_total, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_in_off, in_off.data(), 8 * (size_t)n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_out_off, out_off.data(), 8 * (size_t)n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_in_len, in_len.data(), 4 * (size_t)n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_out_len, out_len.data(), 4 * (size_t)n, cudaMemcpyHostToDevice));
  CK(cudaMemset(d_out, 0, out_total));
  CK(cudaMemset(d_codes, 0xff, 4 * (size_t)n));

  unsigned blocks = (unsigned)((n * 32ull + kThreads - 1) / kThreads);
#ifdef UNSNAP_BENCH_DYNAMIC
  int per_sm = 0, sms = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bench_unsnap, kThreads, 0));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  blocks = std::min<unsigned>(blocks, (unsigned)(per_sm * sms));
  unsigned* next = nullptr;
  CK(cudaGetSymbolAddress((void**)&next, g_next));
#endif
  auto launch = [&] {
#ifdef UNSNAP_BENCH_DYNAMIC
    cudaMemsetAsync(next, 0, sizeof(unsigned));
#endif
    bench_unsnap<<<blocks, kThreads>>>(d_in, d_in_off, d_in_len, d_out, d_out_off, d_out_len, n, d_codes);
  };
  launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<int> codes(n);
  CK(cudaMemcpy(codes.data(), d_codes, 4 * (size_t)n, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(got.data(), d_out, out_total, cudaMemcpyDeviceToHost));
  for (uint32_t i = 0; i < n; i++) {
    if (codes[i] != arrowagg::kUnsnapOK) {
      std::fprintf(stderr, "%s: page %u: code %d\n", argv[1], i, codes[i]);
      return 1;
    }
    if (std::memcmp(got.data() + out_off[i], want.data() + out_off[i], out_len[i]) != 0) {
      std::fprintf(stderr, "%s: page %u: output differs\n", argv[1], i);
      return 1;
    }
  }
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, bench_unsnap));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms(iters);
  for (int k = 0; k < iters; k++) {
    CK(cudaEventRecord(a));
    launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms[k], a, b));
  }
  std::sort(ms.begin(), ms.end());
  const double med = ms[ms.size() / 2];
  std::printf("%s: %u pages, %.1f MB in, %.1f MB out, %d regs: median %.3f ms (min %.3f, max %.3f), %.1f GB/s of output\n",
              argv[1], n, in_total / 1e6, out_total / 1e6, attr.numRegs, med, ms.front(), ms.back(),
              out_total / med / 1e6);
  return 0;
}
