//go:build cuda

package cuda

import (
	"fmt"
	"sync"
	"unsafe"
)

// HostAllocator is an allocator of page-locked host memory: it has the
// methods of Arrow Go's memory.Allocator (Allocate, Reallocate, Free: the
// same in every Arrow Go version), without importing one. Arrow
// buffers allocated with it (builders, IPC and Parquet readers take an
// allocator) are copied to the GPU directly by DMA, with no staging copy.
// When page-locked memory runs out it falls back to Go memory (and warns
// once); Free tells the two apart. Free every buffer before closing the
// backend.
type HostAllocator struct {
	b      *Backend
	mu     sync.Mutex
	live   map[uintptr]int // page-locked allocations by address
	bytes  int64
	warned bool
}

// HostAllocator returns an allocator of page-locked host memory for this
// backend's device.
func (b *Backend) HostAllocator() *HostAllocator {
	return &HostAllocator{b: b, live: map[uintptr]int{}}
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
		return goAlloc(size)
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
	if !ok { // Go memory (goAlloc): the collector frees it
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

// goAlignment is the alignment of goAlloc's buffers, that of Arrow Go's own
// allocator.
const goAlignment = 64

// goAlloc is size bytes of Go memory, aligned to goAlignment: the fallback
// when page-locked memory runs out.
func goAlloc(size int) []byte {
	buf := make([]byte, size+goAlignment)
	skip := -int(uintptr(unsafe.Pointer(&buf[0]))) & (goAlignment - 1)
	return buf[skip : skip+size : skip+size]
}
