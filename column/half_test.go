package column

import (
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/stretchr/testify/require"
)

// Every half: its value is the format's (normal values as arrow-go's
// float16 converts them, subnormals as multiples of 2^-24, the sign of
// zero kept, NaN a NaN: 0x7e00 back), and HalfFromFloat64 gives its bits back; a value
// half-way between two neighbouring finite halves rounds to the one whose
// last bit is 0, and the values past the largest half round to infinity.
func TestHalfConversions(t *testing.T) {
	for b := 0; b < 1<<16; b++ {
		h := uint16(b)
		f := HalfToFloat64(h)
		exp, frac := h>>10&0x1f, h&0x3ff
		switch {
		case exp == 0x1f && frac != 0:
			require.True(t, math.IsNaN(f), "%#04x", h)
			require.Equal(t, uint16(0x7e00), HalfFromFloat64(f), "%#04x", h)
			continue
		case exp == 0:
			require.Equal(t, float64(frac)*math.Pow(2, -24), math.Abs(f), "%#04x", h)
		default:
			require.Equal(t, float64(float16.FromBits(h).Float32()), f, "%#04x", h)
		}
		require.Equal(t, h>>15 == 1, math.Signbit(f), "%#04x", h)
		require.Equal(t, h, HalfFromFloat64(f), "%#04x", h)
		if exp < 0x1e || (exp == 0x1e && frac < 0x3ff) {
			next := HalfToFloat64(h + 1)
			mid := (f + next) / 2 // exact: halves have 11 bits
			want := h
			if h&1 == 1 {
				want = h + 1
			}
			require.Equal(t, want, HalfFromFloat64(mid), "%#04x: half-way to the next", h)
		}
	}
	require.Equal(t, uint16(0xFE00), HalfFromFloat64(math.Copysign(math.NaN(), -1)))
	require.Equal(t, uint16(0x7BFF), HalfFromFloat64(65519.99))
	require.Equal(t, uint16(0x7C00), HalfFromFloat64(65520))
	require.Equal(t, uint16(0xFC00), HalfFromFloat64(-1e300))
	require.Equal(t, uint16(0x0000), HalfFromFloat64(math.Pow(2, -26)))
	require.Equal(t, uint16(0x0001), HalfFromFloat64(math.Pow(2, -25)*1.0001))
}
