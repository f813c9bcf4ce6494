package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPagesOnGPU(t *testing.T) {
	cal := Defaults(16)
	ok, why := cal.PagesOnGPU(PageWork{Stored: 8 << 30, Decoded: 8 << 30, Threads: 16}, false)
	assert.False(t, ok, "no GPU in the calibration")
	assert.Equal(t, "no GPU calibration", why)
	cal.GPU = "H100"
	cal.H2DPinned, cal.HostStaged, cal.DeviceRead = 50e9, 45e9, 2.9e12
	// The H100 host's snappy files hardly compress: the CPU page path wins
	// at 1 and at 8.5 GB (measured: 0.12 against 0.67 s, 0.54 against 1.43).
	for _, n := range []int64{1 << 30, 8500 << 20} {
		ok, why = cal.PagesOnGPU(PageWork{Stored: n, Decoded: n + n/20, Threads: 16}, false)
		assert.False(t, ok, "%d bytes: %s", n, why)
	}
	// Pages that compress fourfold on a CPU of 2 threads: the GPU.
	ok, why = cal.PagesOnGPU(PageWork{Stored: 1 << 30, Decoded: 4 << 30, Threads: 2}, false)
	assert.True(t, ok, why)
	assert.Contains(t, why, "parquet pages decoded on the gpu")
	paged := func(n int64) PageWork { return PageWork{Stored: n, Decoded: n, Threads: 16} }
	ok, why = PagesWorthAsking(paged(1 << 30))
	assert.False(t, ok, "1 GiB on 16 threads: the CPU before the device could start")
	assert.Equal(t, "parquet pages decoded on the cpu: 67ms estimated, less than the gpu's start (450ms)", why)
	ok, _ = PagesWorthAsking(paged(8 << 30))
	assert.True(t, ok)
}

// TestPagesOnGPUChunks: the CPU page path reads a chunk on one goroutine,
// so the same pages in fewer chunks than threads take it longer.
func TestPagesOnGPUChunks(t *testing.T) {
	cal := Defaults(16)
	cal.GPU = "H200"
	cal.H2DPinned, cal.HostStaged, cal.DeviceRead = 50e9, 45e9, 4e12
	w := PageWork{Stored: 2 << 30, Decoded: 4 << 30, Threads: 16, PageTasks: 64}
	ok, why := cal.PagesOnGPU(w, false)
	assert.False(t, ok, why)
	w.PageTasks = 2
	ok, why = cal.PagesOnGPU(w, false)
	assert.True(t, ok, why)
	assert.Contains(t, why, "on 2 cpu threads", "as many as the chunks")
}

// TestPagesOnGPUHostCodecs: pages of a codec the host decompresses go to
// the GPU only when decompressing them is enough faster than the CPU page
// path's whole work for the GPU's share to pay.
func TestPagesOnGPUHostCodecs(t *testing.T) {
	cal := Defaults(16)
	cal.GPU = "H200"
	cal.H2DPinned, cal.HostStaged, cal.DeviceRead = 50e9, 45e9, 4e12
	var w PageWork
	w.Threads = 16
	w.Add(PageWork{PageTasks: 8, Host: []CodecWork{{Codec: "ZSTD", Stored: 3 << 30, Decoded: 8 << 30}}})
	w.Add(PageWork{PageTasks: 8, Host: []CodecWork{{Codec: "ZSTD", Stored: 1 << 30, Decoded: 2 << 30}}})
	assert.Equal(t, []CodecWork{{Codec: "ZSTD", Stored: 4 << 30, Decoded: 10 << 30}}, w.Host)
	assert.Equal(t, 16, w.PageTasks)
	ok, why := cal.PagesOnGPU(w, true)
	assert.False(t, ok, why) // (decompression alone is as slow as the CPU page path)
	worth, _ := PagesWorthAsking(w)
	assert.True(t, worth, "10 GB of zstd pages: long enough to ask")

	defer func(r map[Codec]CodecRate) { HostCodecRates = r }(HostCodecRates)
	HostCodecRates = map[Codec]CodecRate{"FAST": {Inflate: 4e9, Path: 1e9}, "SLOW": {Inflate: 0.2e9, Path: 0.1e9}}
	fast := PageWork{Threads: 16, Host: []CodecWork{{Codec: "FAST", Stored: 4 << 30, Decoded: 10 << 30}}}
	ok, why = cal.PagesOnGPU(fast, true)
	assert.True(t, ok, why) // (0.28 s at the staged rate and the kernels', 0.17 to decompress; 0.67 s on the CPU)
	assert.Contains(t, why, "282ms estimated there, 671ms on 16 cpu threads")
	assert.Equal(t, hostRate("SLOW"), hostRate("LZO"), "a codec not measured: the slowest rates")
}
