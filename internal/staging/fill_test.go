package staging

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFill: every fill copies exactly the source, whatever its length and
// the alignment of either end, and writes nothing past it.
func TestFill(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	src := randomBytes(rng, 1<<16+300)
	buf := make([]byte, 1<<16+400)
	for _, f := range []Fill{FillCopy, FillDemote} {
		for _, n := range []int{0, 1, 127, 128, 129, 255, 4096, 4096 + 77, 1 << 16} {
			for _, so := range []int{0, 1, 32} {
				for _, do := range []int{0, 8, 32} {
					for i := range buf {
						buf[i] = 0xa5
					}
					fill(f, buf[do:], src[so:so+n])
					require.Equal(t, src[so:so+n], buf[do:do+n], "%v: %d bytes, source at +%d, destination at +%d", f, n, so, do)
					require.Equal(t, byte(0xa5), buf[do+n], "%v: nothing written past the end", f)
				}
			}
		}
	}
}
