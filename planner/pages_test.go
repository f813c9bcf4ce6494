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

// TestPagesOnGPUBools weighs the boolean columns, which the CPU decodes
// through pqarrow, with the decimals stored as integers beside them, which
// the page path decodes, against the GPU as measured on the H200 host
// (scripts/bench-pages.sh's kinds step, 2026-11-29: the CPU build against
// the cuda build under --device gpu, whole processes), on pyarrow's files
// of 50M rows, row groups of 16M rows (3 chunks a column) or 1M (48).
func TestPagesOnGPUBools(t *testing.T) {
	cal := Defaults(16)
	cal.GPU = "H200"
	cal.H2DPinned, cal.HostStaged, cal.DeviceRead = 50e9, 45e9, 4e12
	const rows = 50_000_000
	for _, c := range []struct {
		what   string
		stored int64
		bools  int64
		chunks int
		gpu    bool
	}{
		// 0.41-0.43 s on the CPU, 0.57-0.59 s on the GPU.
		{"random booleans", 10 << 20, rows, 3, false},
		// 0.11 s on the CPU, 0.36-0.39 s on the GPU.
		{"booleans in runs", 1 << 17, rows, 3, false},
		// 0.23-0.26 s on the CPU, 0.53-0.67 s on the GPU.
		{"random booleans, 1M rows a group", 10 << 20, rows, 48, false},
		// 0.42-0.44 s on the CPU, 0.53-0.59 s on the GPU: the booleans, and
		// 576 MB of decimals' pages in 6 chunks.
		{"booleans and decimals", 586 << 20, 2 * rows, 6, false},
		// 0.30-0.32 s on the CPU, 0.61-0.70 s on the GPU.
		{"booleans and decimals, 1M rows a group", 586 << 20, 2 * rows, 96, false},
	} {
		w := PageWork{Stored: c.stored, Decoded: c.stored, Threads: 16, Bools: c.bools,
			ArrowTasks: min(c.chunks, 6)} // (6: the default decode budget's tasks at once)
		if c.stored > 100<<20 { // (the decimals: on the page path)
			w.Paged, w.PageTasks = 576<<20, c.chunks
		}
		ok, why := cal.PagesOnGPU(w, false)
		assert.Equal(t, c.gpu, ok, "%s: %s", c.what, why)
	}
}
