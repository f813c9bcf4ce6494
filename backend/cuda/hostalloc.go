//go:build cuda

package cuda

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// HostAllocator is a memory.Allocator of page-locked host memory. Arrow
// buffers allocated with it (builders, IPC and Parquet readers take an
// allocator) are copied to the GPU directly by DMA, with no staging copy.
// When page-locked memory runs out it falls back to Go memory (and warns
// once); Free tells the two apart. Free every buffer before closing the
// backend.
type HostAllocator struct {
	b        *Backend
	mu       sync.Mutex
	live     map[uintptr]int // page-locked allocations by address
	bytes    int64
	fallback memory.Allocator
	warned   bool
}

var _ memory.Allocator = (*HostAllocator)(nil)

// HostAllocator returns an allocator of page-locked host memory for this
// backend's device.
func (b *Backend) HostAllocator() *HostAllocator {
	return &HostAllocator{b: b, live: map[uintptr]int{}, fallback: memory.NewGoAllocator()}
}

// Allocate implements memory.Allocator (page-aligned memory).
func (a *HostAllocator) Allocate(size int) []byte {
	if size <= 0 {
		return []byte{}
	}
	var buf []byte
	err := a.b.d.do(func() error {
		var err error
		buf, err = hostAlloc(size)
		return err
	})
	if err != nil {
		a.mu.Lock()
		warn := !a.warned
		a.warned = true
		a.mu.Unlock()
		if warn {
			a.b.opts.warn(fmt.Sprintf("page-locked host allocation of %d bytes failed (%v): using Go memory", size, err))
		}
		return a.fallback.Allocate(size)
	}
	a.mu.Lock()
	a.live[uintptr(unsafe.Pointer(&buf[0]))] = size
	a.bytes += int64(size)
	a.mu.Unlock()
	return buf
}

// Reallocate implements memory.Allocator.
func (a *HostAllocator) Reallocate(size int, b []byte) []byte {
	if size == len(b) {
		return b
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free implements memory.Allocator.
func (a *HostAllocator) Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	a.mu.Lock()
	size, ok := a.live[p]
	if ok {
		delete(a.live, p)
		a.bytes -= int64(size)
	}
	a.mu.Unlock()
	if !ok {
		a.fallback.Free(b)
		return
	}
	a.b.d.do(func() error { return hostFree(unsafe.Slice(unsafe.SliceData(b), size)) }) //nolint:errcheck // ErrClosed: the context freed it
}

// Allocated is the number of page-locked bytes allocated and not freed.
func (a *HostAllocator) Allocated() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bytes
}
