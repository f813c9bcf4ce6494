package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPagesOnGPU(t *testing.T) {
	cal := Defaults(16)
	ok, why := cal.PagesOnGPU(PageWork{Stored: 8 << 30, Decoded: 8 << 30, Paged: 8 << 30, Threads: 16}, false)
	assert.False(t, ok, "no GPU in the calibration")
	assert.Equal(t, "no GPU calibration", why)
	cal.GPU = "H100"
	cal.H2DPinned, cal.HostStaged, cal.DeviceRead = 50e9, 45e9, 2.9e12
	// The H100 host's snappy files hardly compress: the CPU page path wins
	// at 1 and at 8.5 GB (measured: 0.12 against 0.67 s, 0.54 against 1.43).
	for _, n := range []int64{1 << 30, 8500 << 20} {
		ok, why = cal.PagesOnGPU(PageWork{Stored: n, Decoded: n + n/20, Paged: n + n/20, Threads: 16}, false)
		assert.False(t, ok, "%d bytes: %s", n, why)
	}
	// Pages that compress fourfold on a CPU of 2 threads: the GPU.
	ok, why = cal.PagesOnGPU(PageWork{Stored: 1 << 30, Decoded: 4 << 30, Paged: 4 << 30, Threads: 2}, false)
	assert.True(t, ok, why)
	assert.Contains(t, why, "parquet pages decoded on the gpu")
	paged := func(n int64) PageWork { return PageWork{Stored: n, Decoded: n, Paged: n, Threads: 16} }
	ok, why = PagesWorthAsking(paged(1 << 30))
	assert.False(t, ok, "1 GiB on 16 threads: the CPU before the device could start")
	assert.Equal(t, "parquet pages decoded on the cpu: 67ms estimated, less than the gpu's start (450ms)", why)
	ok, _ = PagesWorthAsking(paged(8 << 30))
	assert.True(t, ok)
}

// TestPagesOnGPUArrow weighs the columns the CPU decodes through pqarrow
// (booleans, decimals stored as integers) against the GPU as measured on
// the H200 host (scripts/bench-pages.sh's kinds step, 2026-11-29: the CPU
// build against the cuda build under --device gpu, whole processes), on
// pyarrow's files of 50M rows, row groups of 16M rows (3 chunks a column)
// or 1M (48).
func TestPagesOnGPUArrow(t *testing.T) {
	cal := Defaults(16)
	cal.GPU = "H200"
	cal.H2DPinned, cal.HostStaged, cal.DeviceRead = 50e9, 45e9, 4e12
	const rows = 50_000_000
	for _, c := range []struct {
		what            string
		stored          int64
		bools, decimals int64
		chunks          int
		gpu             bool
	}{
		// 1.53 s on the CPU, 0.55-0.70 s on the GPU.
		{"all four, 16M rows a group", 586 << 20, 2 * rows, 2 * rows, 12, true},
		// 1.02-1.06 s on the CPU, 0.55-0.63 s on the GPU.
		{"all four, 1M rows a group", 586 << 20, 2 * rows, 2 * rows, 192, true},
		// 0.41-0.43 s on the CPU, 0.57-0.59 s on the GPU.
		{"random booleans", 10 << 20, rows, 0, 3, false},
		// 0.11 s on the CPU, 0.36-0.39 s on the GPU.
		{"booleans in runs", 1 << 17, rows, 0, 3, false},
		// 0.86-0.90 s on the CPU, 0.52-0.70 s on the GPU.
		{"decimal(18, 4), 16M rows a group", 367 << 20, 0, rows, 3, true},
		// 0.46-0.48 s on the CPU, 0.52-0.59 s on the GPU.
		{"decimal(18, 4), 1M rows a group", 367 << 20, 0, rows, 48, false},
		// 0.38-0.39 s on the CPU, 0.53-0.61 s on the GPU.
		{"decimal(9, 2), 1M rows a group", 191 << 20, 0, rows, 48, false},
	} {
		w := PageWork{Stored: c.stored, Decoded: c.stored, Threads: 16, Bools: c.bools, Decimals: c.decimals,
			ArrowTasks: min(c.chunks, 6)} // (6: the default decode budget's tasks at once)
		ok, why := cal.PagesOnGPU(w, false)
		assert.Equal(t, c.gpu, ok, "%s: %s", c.what, why)
		if c.gpu {
			ok, _ := PagesWorthAsking(w)
			assert.True(t, ok, c.what)
		}
	}
}
