package staging

// Fill is how a slot is filled from the source.
type Fill int

const (
	// FillCopy is Go's copy (on Intel CPUs with fast strings, REP MOVS
	// from 2 KiB on).
	FillCopy Fill = iota
	// FillDemote copies with AVX2 vector stores and then demotes each line
	// (CLDEMOTE) to the shared cache, out of the filling core's own; it is
	// FillCopy without AVX2, and the demotion a no-op without CLDEMOTE.
	// Vector stores alone measured no faster than FillCopy, non-temporal
	// ones slower (BENCHMARKS.md).
	FillDemote
)

func (f Fill) String() string {
	if f == FillDemote {
		return "demote"
	}
	return "copy"
}

// fill copies src to dst (len(dst) >= len(src)) the way f says.
func fill(f Fill, dst, src []byte) {
	n := len(src) &^ 127
	if f != FillDemote || !haveDemote || n == 0 {
		copy(dst, src)
		return
	}
	copyDemote(&dst[0], &src[0], n)
	copy(dst[n:], src[n:])
}
