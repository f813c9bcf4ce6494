//go:build cuda

package cuda

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestPinnedSet: the set answers for slices inside one recorded range only.
func TestPinnedSet(t *testing.T) {
	var s pinnedSet
	mem := make([]byte, 1000)
	base := uintptr(unsafe.Pointer(&mem[0]))
	s.add(base+500, 100)
	s.add(base+100, 200)
	s.add(base+700, 50)
	require.True(t, s.holds(mem[100:300]))
	require.True(t, s.holds(mem[550:600]))
	require.True(t, s.holds(mem[700:750]))
	require.False(t, s.holds(mem[50:150]), "starts before a range")
	require.False(t, s.holds(mem[250:350]), "ends after one")
	require.False(t, s.holds(mem[300:500]), "between ranges")
	require.False(t, s.holds(mem[550:720]), "across two")
	require.False(t, s.holds(mem[:0]))
	s.remove(base + 100)
	require.False(t, s.holds(mem[100:300]))
	require.True(t, s.holds(mem[500:600]))
	s.remove(base + 1) // not a range start: nothing happens
	require.True(t, s.holds(mem[700:750]))
}
