package report

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// twoPass is formatFloat's reference: the digits formatted in scientific
// notation for the exponent, then again in plain notation.
func twoPass(f float64, bits int) string {
	sci := strconv.FormatFloat(f, 'e', -1, bits)
	exp, _ := strconv.Atoi(sci[strings.LastIndexByte(sci, 'e')+1:])
	if f != 0 && (exp < -4 || exp >= 16) {
		return sci
	}
	s := strconv.FormatFloat(f, 'f', -1, bits)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// formatFloat (one pass of strconv, its digits placed by hand) writes what
// formatting twice writes, for float64 and float32 values of every
// magnitude, sign and zero.
func TestFormatFloatMatchesTwoPass(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 10, 100, 1e15, 9.999999999999998e15, 1e16, 1e-4, 1e-5, 0.00012345, 123.456, -0.5, 42, 4.257847474654077e16, math.MaxFloat64, math.SmallestNonzeroFloat64, 5e-324, 1234567890123456}
	for range 50000 {
		vals = append(vals, math.Float64frombits(r.Uint64()), r.Float64()*math.Pow(10, float64(r.IntN(40)-20)), float64(r.Int64N(1<<53))*math.Pow(10, float64(r.IntN(10)-5)))
	}
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		for _, bits := range []int{64, 32} {
			x := v
			if bits == 32 {
				x = float64(float32(v))
				if math.IsInf(x, 0) {
					continue
				}
			}
			if a, b := twoPass(x, bits), formatFloat(x, bits); a != b {
				t.Fatalf("%v (%d): two passes %s, formatFloat %s", x, bits, a, b)
			}
		}
	}
}
