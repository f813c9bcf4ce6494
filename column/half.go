package column

import "math"

// HalfToFloat64 is the IEEE 754 half-precision float of bits h as a
// float64: exact, subnormals included; -0 stays -0, NaN stays NaN.
// (arrow-go v17's float16 conversions flush subnormals to zero.)
func HalfToFloat64(h uint16) float64 {
	sign := uint64(h&0x8000) << 48
	exp, frac := uint64(h>>10)&0x1f, uint64(h&0x3ff)
	switch exp {
	case 0: // zero or subnormal: frac * 2^-24, exact
		return math.Float64frombits(math.Float64bits(float64(frac)*0x1p-24) | sign)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return math.Float64frombits(sign | 0x7ff<<52)
	}
	// normal: the exponent rebiased (1023 - 15), the fraction widened
	return math.Float64frombits(sign | (exp+1008)<<52 | frac<<42)
}

// HalfFromFloat64 is f rounded to the nearest half-precision float (ties to
// even), as its bits: exact for a float64 that is a half (HalfToFloat64's
// results); beyond the largest half, an infinity; NaN is 0x7e00 (with f's
// sign).
func HalfFromFloat64(f float64) uint16 {
	sign := uint16(math.Float64bits(f)>>48) & 0x8000
	a := math.Abs(f)
	switch {
	case math.IsNaN(f):
		return sign | 0x7e00
	case a >= 65520: // halfway past 65504, the largest half: rounds up
		return sign | 0x7c00
	case a < 0x1p-14: // subnormal or zero, in units of 2^-24; 1024 is the smallest normal's bits
		return sign | uint16(math.RoundToEven(a*0x1p24))
	}
	e := math.Ilogb(a)
	m := math.RoundToEven(math.Ldexp(a, 10-e)) // in [1024, 2048]
	if m == 2048 {
		m, e = 1024, e+1
	}
	return sign | uint16(e+15)<<10 | uint16(m-1024)
}
