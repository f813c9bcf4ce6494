//go:build cuda

package cuda

// The driver calls that gorgonia.org/cu v0.9.6 does not bind: page-locked host
// memory (cuMemHostAlloc) and pointer attributes.

/*
#cgo LDFLAGS: -lcuda
#cgo linux CFLAGS: -I/usr/local/cuda/include
#cgo linux LDFLAGS: -L/usr/local/cuda/lib64 -L/usr/local/cuda/lib64/stubs
#include <cuda.h>
#include <stdint.h>

// arrowagg_pinned_range reports in *base and *size the page-locked host
// allocation that contains p (either from cuMemHostAlloc or registered with
// cuMemHostRegister); CUDA_ERROR_INVALID_VALUE for pageable memory.
static CUresult arrowagg_pinned_range(uintptr_t p, uintptr_t *base, size_t *size) {
	unsigned int mt = 0;
	CUresult r = cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p);
	if (r != CUDA_SUCCESS) return r;
	if (mt != CU_MEMORYTYPE_HOST) return CUDA_ERROR_INVALID_VALUE;
	CUdeviceptr start = 0;
	r = cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, (CUdeviceptr)p);
	if (r != CUDA_SUCCESS) return r;
	size_t n = 0;
	r = cuPointerGetAttribute(&n, CU_POINTER_ATTRIBUTE_RANGE_SIZE, (CUdeviceptr)p);
	if (r != CUDA_SUCCESS) return r;
	*base = (uintptr_t)start;
	*size = n;
	return CUDA_SUCCESS;
}
*/
import "C"

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"gorgonia.org/cu"
)

// driverError is a CUresult from one of this file's calls.
type driverError C.CUresult

func (e driverError) Error() string {
	var name, desc *C.char
	C.cuGetErrorName(C.CUresult(e), &name)
	C.cuGetErrorString(C.CUresult(e), &desc)
	if name == nil || desc == nil {
		return fmt.Sprintf("CUDA driver error %d", int(e))
	}
	return C.GoString(name) + ": " + C.GoString(desc)
}

// Is makes out-of-memory errors match ErrOutOfMemory and gorgonia.org/cu's
// OutOfMemory.
func (e driverError) Is(target error) bool {
	switch target {
	case ErrOutOfMemory:
		return C.CUresult(e) == C.CUDA_ERROR_OUT_OF_MEMORY
	case cu.OutOfMemory:
		return C.CUresult(e) == C.CUDA_ERROR_OUT_OF_MEMORY
	}
	return false
}

func check(r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return driverError(r)
}

// ErrOutOfMemory is matched (errors.Is) by the errors of allocations that
// failed for lack of device or page-locked host memory.
var ErrOutOfMemory = errors.New("out of memory")

// isOOM reports whether err is an out-of-memory error of the driver.
func isOOM(err error) bool {
	return errors.Is(err, ErrOutOfMemory) || errors.Is(err, cu.OutOfMemory)
}

// pinnedBytes is the number of bytes of page-locked memory that hostAlloc
// handed out and hostFree has not freed, in the whole process.
var pinnedBytes atomic.Int64

// hostAlloc allocates n bytes of page-locked host memory, portable across
// contexts. The calling thread must have a current context.
func hostAlloc(n int) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	var p unsafe.Pointer
	if err := check(C.cuMemHostAlloc(&p, C.size_t(n), C.CU_MEMHOSTALLOC_PORTABLE)); err != nil {
		return nil, err
	}
	pinnedBytes.Add(int64(n))
	ours.add(uintptr(p), n)
	return unsafe.Slice((*byte)(p), n), nil
}

// hostFree frees memory from hostAlloc: b is the whole allocation.
func hostFree(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	ours.remove(uintptr(unsafe.Pointer(&b[0])))
	if err := check(C.cuMemFreeHost(unsafe.Pointer(&b[0]))); err != nil {
		return err
	}
	pinnedBytes.Add(-int64(len(b)))
	return nil
}

// pinned reports whether b lies entirely in one page-locked host allocation,
// from which the GPU can copy directly.
func pinned(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(&b[0]))
	var base C.uintptr_t
	var size C.size_t
	if C.arrowagg_pinned_range(C.uintptr_t(p), &base, &size) != C.CUDA_SUCCESS {
		return false
	}
	return uintptr(base) <= p && p+uintptr(len(b)) <= uintptr(base)+uintptr(size)
}

// ours is the set of page-locked allocations that hostAlloc made, which any
// goroutine can ask about without the driver (whose answers need the
// device's thread: a round trip of tens of microseconds).
var ours pinnedSet

// pinnedSet is a set of disjoint address ranges, sorted by start.
type pinnedSet struct {
	mu     sync.RWMutex
	ranges []pinnedRange
}

type pinnedRange struct{ start, end uintptr }

// add records [p, p+n).
func (s *pinnedSet) add(p uintptr, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, _ := slices.BinarySearchFunc(s.ranges, p, func(r pinnedRange, p uintptr) int { return cmp.Compare(r.start, p) })
	s.ranges = slices.Insert(s.ranges, i, pinnedRange{p, p + uintptr(n)})
}

// remove forgets the range that starts at p.
func (s *pinnedSet) remove(p uintptr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := slices.BinarySearchFunc(s.ranges, p, func(r pinnedRange, p uintptr) int { return cmp.Compare(r.start, p) }); ok {
		s.ranges = slices.Delete(s.ranges, i, i+1)
	}
}

// holds reports whether b lies entirely in one recorded range.
func (s *pinnedSet) holds(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(&b[0]))
	s.mu.RLock()
	defer s.mu.RUnlock()
	// The last range starting at or before p.
	i, ok := slices.BinarySearchFunc(s.ranges, p, func(r pinnedRange, p uintptr) int { return cmp.Compare(r.start, p) })
	if !ok {
		i--
	}
	return i >= 0 && p+uintptr(len(b)) <= s.ranges[i].end
}
