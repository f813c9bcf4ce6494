package column

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// CopyBits copies exactly the bits asked for, at every pair of offsets and
// length, against a bit-by-bit copy, leaving the other bits of dst alone;
// CountSetBits counts as bit-by-bit counting does.
func TestCopyBitsAndCount(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for range 20000 {
		src := make([]byte, 1+r.IntN(40))
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		bits := 8 * len(src)
		srcOff := r.IntN(bits)
		n := r.IntN(bits - srcOff + 1)
		dst := make([]byte, (n+7)/8+1+r.IntN(8))
		for i := range dst {
			dst[i] = byte(r.Uint32())
		}
		dstOff := r.IntN(8*len(dst) - n + 1)
		want := append([]byte(nil), dst...)
		for i := range n {
			setBitTo(want, dstOff+i, BitIsSet(src, srcOff+i))
		}
		CopyBits(src, srcOff, n, dst, dstOff)
		require.Equal(t, want, dst, "src offset %d, %d bits, dst offset %d", srcOff, n, dstOff)
		count := 0
		for i := range n {
			if BitIsSet(src, srcOff+i) {
				count++
			}
		}
		require.Equal(t, count, CountSetBits(src, srcOff, n))
	}
}

// SetBits sets exactly the bits asked for, at every offset and length,
// leaving the other bits of the bitmap alone.
func TestSetBits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	for range 20000 {
		b := make([]byte, 1+r.IntN(60))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		off := r.IntN(8 * len(b))
		n := r.IntN(8*len(b) - off + 1)
		v := r.IntN(2) == 0
		want := append([]byte(nil), b...)
		for i := range n {
			setBitTo(want, off+i, v)
		}
		SetBits(b, off, n, v)
		require.Equal(t, want, b, "offset %d, %d bits, set %v", off, n, v)
	}
}
