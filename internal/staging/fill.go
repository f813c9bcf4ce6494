package staging

import "unsafe"

// Fill is how a slot is filled from the source.
type Fill int

const (
	// FillCopy is Go's copy (on Intel CPUs with fast strings, REP MOVS
	// from 2 KiB on).
	FillCopy Fill = iota
	// FillCached copies with ordinary vector stores: the slot stays in the
	// caches for the copy engine to read (AVX2; FillCopy without it).
	FillCached
	// FillStream copies with non-temporal vector stores: the slot goes to
	// memory, not read first (AVX2; FillCopy without it).
	FillStream
	// FillDemote is FillCached with each line then demoted (CLDEMOTE) to
	// the shared cache, out of the filling core's own (AVX2; FillCopy
	// without it; the demotion a no-op without CLDEMOTE).
	FillDemote
)

func (f Fill) String() string {
	switch f {
	case FillCached:
		return "cached"
	case FillStream:
		return "stream"
	case FillDemote:
		return "demote"
	}
	return "copy"
}

// fill copies src to dst (len(dst) >= len(src)) the way f says.
func fill(f Fill, dst, src []byte) {
	n := len(src) &^ 127
	if f == FillCopy || !haveFills || n == 0 ||
		(f == FillStream && uintptr(unsafe.Pointer(&dst[0]))%32 != 0) {
		copy(dst, src)
		return
	}
	switch f {
	case FillCached:
		copyCached(&dst[0], &src[0], n)
	case FillDemote:
		copyDemote(&dst[0], &src[0], n)
	default:
		copyStream(&dst[0], &src[0], n)
	}
	copy(dst[n:], src[n:])
}
