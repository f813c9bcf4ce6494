package column

import (
	"slices"
	"unsafe"
)

// Flat is the element types an Arena grows: fixed size, no pointers.
type Flat interface {
	~int32 | ~uint32 | ~int64 | ~uint64 | ~float64 | ~bool | ~[2]uint64 | ~[3]uint64
}

// ArenaMinBytes is the size from which an Arena keeps an array in a mapping
// of its own; smaller arrays grow on the Go heap.
const ArenaMinBytes = 1 << 20

// Arena holds large arrays that grow without being copied. An array of
// ArenaMinBytes or more lives in an anonymous memory mapping of its own
// (on Linux), which mremap extends by moving page tables, not bytes: the
// states of tens of millions of groups grow as they are found, and on the
// Go heap each growth copied every array and faulted in fresh pages for
// the copy (a seventh of a 50M-group aggregation's CPU time). Smaller
// arrays, and every array where mappings fail or are not available, grow
// on the Go heap, as append would.
//
// The arrays are pointer-free (Flat): the garbage collector does not see
// inside a mapping. An Arena is not safe for concurrent use. Free unmaps
// every array it holds, after which none of them may be used; its owner
// frees it when the arrays' owner is done (or, as a net, when that owner
// is collected: runtime.AddCleanup).
type Arena struct {
	maps map[*byte][]byte // the mappings, by their first byte
}

// Grow returns s with room for n more elements, as slices.Grow does; an
// array that grows grows to one and a half times its capacity at least.
// s must be nil, on the Go heap, or an array a returned; after Grow only
// the returned slice may be used. A nil Arena grows on the Go heap.
func Grow[E Flat](a *Arena, s []E, n int) []E {
	if n <= cap(s)-len(s) {
		return s
	}
	want := max(len(s)+n, cap(s)+cap(s)/2)
	var zero E
	size := int(unsafe.Sizeof(zero))
	if a == nil || want < ArenaMinBytes/size || !mappable {
		return slices.Grow(s, want-len(s))
	}
	bytes := (want*size + pageBytes - 1) &^ (pageBytes - 1)
	var old []byte
	if cap(s) > 0 {
		old = a.maps[(*byte)(unsafe.Pointer(unsafe.SliceData(s)))]
	}
	if old != nil {
		if m, err := remap(old, bytes); err == nil {
			delete(a.maps, &old[0])
			a.maps[&m[0]] = m
			return arenaView[E](m, len(s))
		}
	}
	m, err := mapBytes(bytes)
	if err != nil {
		out := slices.Grow(s[:len(s):len(s)], want-len(s)) // (a copy)
		a.unmap(old)
		return out
	}
	out := arenaView[E](m, len(s))
	copy(out, s)
	a.unmap(old)
	if a.maps == nil {
		a.maps = make(map[*byte][]byte)
	}
	a.maps[&m[0]] = m
	return out
}

// arenaView is mapping m as a slice of n elements of E, its capacity all
// of m.
func arenaView[E Flat](m []byte, n int) []E {
	var zero E
	return unsafe.Slice((*E)(unsafe.Pointer(&m[0])), len(m)/int(unsafe.Sizeof(zero)))[:n]
}

// unmap drops mapping m (nil: none) of a.
func (a *Arena) unmap(m []byte) {
	if m == nil {
		return
	}
	delete(a.maps, &m[0])
	unmapBytes(m) //nolint:errcheck // (a failed munmap leaves the range mapped: nothing to do)
}

// Mapped is the bytes of a's mappings.
func (a *Arena) Mapped() int64 {
	var n int64
	for _, m := range a.maps {
		n += int64(len(m))
	}
	return n
}

// Free unmaps every array of a. The arrays must not be used after it; a
// stays usable, empty.
func (a *Arena) Free() {
	for _, m := range a.maps {
		unmapBytes(m) //nolint:errcheck // (as in unmap)
	}
	a.maps = nil
}
