//go:build cuda

package cuda

import (
	"cmp"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/arrowagg/arrowagg/internal/cudrv"
)

// Page-locked host memory and what the backend knows of it.

// ErrOutOfMemory is matched (errors.Is) by the errors of allocations that
// failed for lack of device or page-locked host memory: it is the driver's
// CUDA_ERROR_OUT_OF_MEMORY (cudrv.OutOfMemory), which a limit of the backend
// (WithMemoryLimit) reports too.
var ErrOutOfMemory error = cudrv.OutOfMemory

// isOOM reports whether err is an out-of-memory error of the driver.
func isOOM(err error) bool { return errors.Is(err, ErrOutOfMemory) }

// pinnedBytes is the number of bytes of page-locked memory that hostAlloc
// handed out and hostFree has not freed, in the whole process.
var pinnedBytes atomic.Int64

// hostAlloc allocates n bytes of page-locked host memory, portable across
// contexts. The calling thread must have a current context.
func hostAlloc(n int) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	p, err := cudrv.MemHostAlloc(int64(n))
	if err != nil {
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
	if err := cudrv.MemFreeHost(unsafe.Pointer(&b[0])); err != nil {
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
	base, size, ok := cudrv.PinnedRange(p)
	return ok && base <= p && p+uintptr(len(b)) <= base+uintptr(size)
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
