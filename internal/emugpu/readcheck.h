//go:build emu

// readcheck.h: the read-bounds hook of the kernels' sources for the
// emulated tests. Every .cc file of this package includes it after emu.h and
// before any kernel source, so that the kernels' inline functions are the
// same in every file (one definition): a kernel calls UNSNAP_CHECK_READ
// before each read of its input, and a test kernel sets the bounds of the
// input each thread decodes with read_bounds.
#pragma once
#include <cstddef>
#include <cstdint>

namespace emugpu {

// The bounds of each emulated thread (emu_local: null at every launch).
inline emu_local<const uint8_t*> read_lo;
inline emu_local<const uint8_t*> read_hi;
inline emu_local<int32_t*> read_outside;

// read_bounds says that the calling thread reads [lo, lo+n) from now on, and
// where to mark a read outside it.
inline void read_bounds(const uint8_t* lo, size_t n, int32_t* outside) {
  *read_lo = lo;
  *read_hi = lo + n;
  *read_outside = outside;
}

inline void check_read(const void* p, size_t n) {
  if (*read_outside == nullptr) return;  // (a thread given no bounds: the page kernels' own launches)
  const uint8_t* b = (const uint8_t*)p;
  if (b < *read_lo || b + n > *read_hi) __atomic_store_n(*read_outside, 1, __ATOMIC_RELAXED);
}

}  // namespace emugpu

#define UNSNAP_CHECK_READ(p, bytes) emugpu::check_read((p), (bytes))
