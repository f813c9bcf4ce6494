package cpu

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSumInt64: the kernel and the Go loop give the wrapping sum, at every
// length around the kernel's blocks of 32.
func TestSumInt64(t *testing.T) {
	vals := make([]int64, 200)
	for i := range vals {
		vals[i] = int64(uint64(i+1) * 0x9e3779b97f4a7c15)
	}
	for n := 0; n <= len(vals); n++ {
		var want int64
		for _, x := range vals[:n] {
			want += x
		}
		require.Equal(t, want, SumInt64(vals[:n]), "n=%d", n)
	}
}
