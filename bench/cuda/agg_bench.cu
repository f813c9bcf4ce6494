// agg_bench times one kernel of kernels/agg.cu's per-kind families (the
// six, the moments, the sketch kernels) from a fatbin or cubin file, on a
// resident random column: the kernels' own launches, as the CUDA backend
// makes them (256 threads a block, as many blocks as fit the GPU at once),
// without the Go test binary around them. Built on a GPU host against the
// driver API:
//
//   nvcc -O3 -o agg_bench bench/cuda/agg_bench.cu -lcuda
//   agg_bench FATBIN KERNEL BYTES NULL_PERCENT LAUNCHES
//
// KERNEL is a kernel's name (arrowagg_moments_float64); its kind, and so the
// column's element type, is the name's last part. It prints the median
// milliseconds a launch, TB/s of the column's values, the grid, and the
// state of the last launch (words in hex), so that two builds of the same
// kernel can be checked for the same answer. scripts/bench-agg.sh runs it
// over several fatbins, interleaved.
#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../kernels/policy.h"

#define CHECK(x)                                                           \
  do {                                                                     \
    CUresult r_ = (x);                                                     \
    if (r_ != CUDA_SUCCESS) {                                              \
      const char* s_ = nullptr;                                            \
      cuGetErrorString(r_, &s_);                                           \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

__device__ __forceinline__ uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// fill writes n random elements of `size` bytes (floats: values in ±2^20
// with random fractions; integers: random bits of the width) and, with
// nulls, a validity bitmap of about pct% cleared bits.
__global__ void fill(void* vals, int size, bool isfloat, uint64_t n, uint32_t* valid, unsigned pct) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
    const uint64_t r = mix(i);
    if (isfloat && size == 8) {
      ((double*)vals)[i] = ((double)(int64_t)r) * 0x1p-43;
    } else if (isfloat) {
      ((float*)vals)[i] = (float)((double)(int32_t)(r >> 32) * 0x1p-11);
    } else if (size == 8) {
      ((uint64_t*)vals)[i] = r;
    } else if (size == 4) {
      ((uint32_t*)vals)[i] = (uint32_t)r;
    } else if (size == 2) {
      ((uint16_t*)vals)[i] = (uint16_t)r;
    } else {
      ((uint8_t*)vals)[i] = (uint8_t)r;
    }
    if (valid != nullptr && i % 32 == 0) {
      uint32_t w = 0;
      for (int b = 0; b < 32; b++) w |= (mix(i + b + (1ULL << 40)) % 100 >= pct ? 1u : 0u) << b;
      valid[i / 32] = w;
    }
  }
}

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s FATBIN KERNEL BYTES NULL_PERCENT LAUNCHES\n", argv[0]);
    return 2;
  }
  const char* path = argv[1];
  const std::string name = argv[2];
  const uint64_t bytes = strtoull(argv[3], nullptr, 10);
  const unsigned pct = (unsigned)atoi(argv[4]);
  const int launches = atoi(argv[5]);
  const std::string kind = name.substr(name.rfind('_') + 1);
  int size = 0;
  bool isfloat = false;
  if (kind == "float64") size = 8, isfloat = true;
  if (kind == "float32") size = 4, isfloat = true;
  if (kind == "int64" || kind == "uint64") size = 8;
  if (kind == "int32" || kind == "uint32") size = 4;
  if (kind == "int16" || kind == "uint16") size = 2;
  if (kind == "int8" || kind == "uint8") size = 1;
  if (size == 0) {
    fprintf(stderr, "kind %s: not one this harness fills\n", kind.c_str());
    return 2;
  }
  const bool sketch = name.rfind("arrowagg_sketch_", 0) == 0;
  const uint64_t n = bytes / size;

  CHECK(cuInit(0));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  int sms = 0;
  CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  CUmodule mod;
  CHECK(cuModuleLoad(&mod, path));
  CUfunction fn;
  CHECK(cuModuleGetFunction(&fn, mod, name.c_str()));
  int occ = 0, regs = 0;
  CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fn, AGG_BLOCK_THREADS, 0));
  CHECK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn));
  // The backend's grid: as many blocks as fit at once, fewer for a short
  // column (backend/cuda's grid: a block's iteration is its threads' loads).
  const uint64_t per = (uint64_t)AGG_BLOCK_THREADS * (16 / size) * AGG_UNROLL;
  const unsigned grid = (unsigned)std::max<uint64_t>(1, std::min<uint64_t>((n + per - 1) / per, (uint64_t)occ * sms));

  CUdeviceptr vals, valid = 0, partials, ticket, out, sk = 0;
  CHECK(cuMemAlloc(&vals, n * size));
  if (pct > 0) CHECK(cuMemAlloc(&valid, (n + 31) / 32 * 4 + 8));
  {
    void* fv = (void*)vals;
    uint32_t* fvalid = (uint32_t*)valid;
    fill<<<1024, 256>>>(fv, size, isfloat, n, fvalid, pct);
    CHECK(cuCtxSynchronize());
  }
  constexpr int kWords = 16;  // at least any state's words
  CHECK(cuMemAlloc(&partials, (size_t)grid * kWords * 8));
  CHECK(cuMemAlloc(&ticket, 4));
  CHECK(cuMemsetD32(ticket, 0, 1));
  CHECK(cuMemAlloc(&out, kWords * 8));
  CHECK(cuMemsetD8(out, 0, kWords * 8));
  if (sketch) {
    CHECK(cuMemAlloc(&sk, AGG_SKETCH_BYTES));
    CHECK(cuMemsetD8(sk, 0, AGG_SKETCH_BYTES));
  }
  unsigned long long voff = 0, vbit = 0, nn = n;
  void* args[] = {&vals, &voff, &valid, &vbit, &nn, &partials, &ticket, &out, &sk};
  CUevent a, b;
  CHECK(cuEventCreate(&a, 0));
  CHECK(cuEventCreate(&b, 0));
  CHECK(cuLaunchKernel(fn, grid, 1, 1, AGG_BLOCK_THREADS, 1, 1, 0, 0, args, nullptr));  // warm-up
  CHECK(cuCtxSynchronize());
  std::vector<float> ms;
  for (int i = 0; i < launches; i++) {
    CHECK(cuEventRecord(a, 0));
    CHECK(cuLaunchKernel(fn, grid, 1, 1, AGG_BLOCK_THREADS, 1, 1, 0, 0, args, nullptr));
    CHECK(cuEventRecord(b, 0));
    CHECK(cuEventSynchronize(b));
    float t = 0;
    CHECK(cuEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  const double med = ms[ms.size() / 2];
  uint64_t st[kWords];
  CHECK(cuMemcpyDtoH(st, out, sizeof st));
  printf("%s bytes=%llu nulls=%u%% regs=%d blocks/SM=%d grid=%u median=%.4f ms min=%.4f ms %.3f TB/s state=", name.c_str(),
         (unsigned long long)(n * size), pct, regs, occ, grid, med, ms[0], (double)n * size / (med * 1e-3) / 1e12);
  for (int i = 0; i < 9; i++) printf("%s%llx", i ? "," : "", (unsigned long long)st[i]);
  printf("\n");
  return 0;
}
