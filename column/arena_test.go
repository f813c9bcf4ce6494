package column

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArenaGrow grows arrays past ArenaMinBytes a few elements at a time
// and in jumps: every element survives each growth, the capacity grows by
// half at least, and the arrays past the threshold are the arena's own.
func TestArenaGrow(t *testing.T) {
	var a Arena
	defer a.Free()
	var s []int64
	var w [][3]uint64
	var f []bool
	big := 3 * ArenaMinBytes / 8
	for len(s) < big {
		n := 1 + len(s)/7
		if len(s)%5 == 0 {
			n = 5000
		}
		c := cap(s)
		s = Grow(&a, s, n)
		require.GreaterOrEqual(t, cap(s)-len(s), n)
		if c < len(s)+n {
			require.GreaterOrEqual(t, cap(s), c+c/2)
		}
		w, f = Grow(&a, w, n), Grow(&a, f, n)
		for range n {
			k := int64(len(s))
			s = append(s, k*3+1)
			w = append(w, [3]uint64{uint64(k), ^uint64(k), 7})
			f = append(f, k%3 == 0)
		}
	}
	for k := range s {
		require.Equal(t, int64(k)*3+1, s[k], "element %d", k)
		require.Equal(t, [3]uint64{uint64(k), ^uint64(k), 7}, w[k], "element %d", k)
		require.Equal(t, k%3 == 0, f[k], "element %d", k)
	}
	if mappable {
		// s and w, each once (the old mappings are gone); f, of a byte an
		// element, stays under ArenaMinBytes, on the Go heap.
		assert.Equal(t, 2, len(a.maps))
		assert.Positive(t, a.Mapped())
		_, ok := a.maps[(*byte)(unsafePointer(s))]
		assert.True(t, ok, "s lives in a mapping")
	}
	a.Free()
	assert.Zero(t, a.Mapped())
	// The arena stays usable.
	s = Grow(&a, []int64(nil), big)
	s = append(s, 1)
	assert.Equal(t, int64(1), s[0])
}

// TestArenaSmall: arrays under ArenaMinBytes, and a nil Arena, stay on the
// Go heap.
func TestArenaSmall(t *testing.T) {
	var a Arena
	s := Grow(&a, []int64{1, 2}, 100)
	assert.Equal(t, []int64{1, 2}, s)
	assert.GreaterOrEqual(t, cap(s), 102)
	assert.Zero(t, a.Mapped())
	var nilArena *Arena
	u := Grow(nilArena, []uint64(nil), 2*ArenaMinBytes)
	assert.GreaterOrEqual(t, cap(u), 2*ArenaMinBytes)
	assert.Zero(t, a.Mapped())
}

func unsafePointer[E any](s []E) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }
