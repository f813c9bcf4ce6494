package planner

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestContestPicks: a contest measures both backends (alternating, the GPU
// first) until each has ContestProbe times, then takes the faster by its
// fastest recent time, rechecks the slower every ContestRecheck-th call,
// and follows a change once the window has forgotten the old times.
func TestContestPicks(t *testing.T) {
	var c Contest
	us := time.Microsecond
	var probes []bool
	for range 2 * ContestProbe {
		n := c.Pick()
		require.True(t, n.Probe && n.Contested)
		probes = append(probes, n.Device)
		if n.Device {
			c.Record(true, 40*us)
		} else {
			c.Record(false, 30*us)
		}
	}
	require.Equal(t, []bool{true, false, true, false}, probes)

	var onGPU, rechecks int
	for i := 2*ContestProbe + 1; i <= 64; i++ {
		n := c.Pick()
		require.False(t, n.Probe)
		require.Equal(t, 30*us, n.CPU)
		require.Equal(t, 40*us, n.GPU)
		require.Equal(t, i%ContestRecheck == 0, n.Recheck, "call %d", i)
		if n.Device {
			onGPU++
			require.True(t, n.Recheck, "the GPU only to recheck it")
			c.Record(true, 40*us)
		} else {
			c.Record(false, 30*us)
		}
		if n.Recheck {
			rechecks++
		}
	}
	require.Equal(t, 64/ContestRecheck, rechecks)
	require.Equal(t, rechecks, onGPU)

	// The CPU slows down: once its window holds only slow times, the GPU wins.
	for range ContestWindow {
		c.Record(false, 90*us)
	}
	n := c.Pick()
	require.True(t, n.Device || n.Recheck)
	require.Equal(t, 90*us, n.CPU)
	require.Contains(t, n.String(), "GPU 40µs, CPU 90µs")
}
