package cpu

// SumInt64 is the wrapping sum of vals: a plain read of memory, in the
// widest SIMD registers the CPU has, that the planner times as the host's
// memory read rate.
func SumInt64(vals []int64) int64 {
	s, k := kernelSum(vals)
	var a, b, c, d int64
	p := vals[k:]
	for ; len(p) >= 4; p = p[4:] {
		a, b, c, d = a+p[0], b+p[1], c+p[2], d+p[3]
	}
	for _, x := range p {
		a += x
	}
	return s + a + b + c + d
}
