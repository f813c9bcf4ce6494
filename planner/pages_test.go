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

// TestPagesOnGPUHostCodecs: the host decompresses a host codec's pages on
// either route, so the GPU route saves only the CPU's fold, and pays the
// device's start, the walk of the chunks and its calls: at the H200 host's
// rates it loses even with the device open.
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
	worth, _ := PagesWorthAsking(w)
	assert.True(t, worth, "10 GiB of zstd pages: long enough to ask")
	ok, why := cal.PagesOnGPU(w, false)
	assert.False(t, ok, why)
	assert.Equal(t, "parquet pages decoded on the cpu: 1.53s estimated, 1.878s on the gpu", why)
	// With the device open, the fold saved (0.10 s) does not pay for the
	// walk of the 4 GiB of chunks (0.20 s on 16 goroutines).
	ok, why = cal.PagesOnGPU(w, true)
	assert.False(t, ok, why)
	assert.Equal(t, "parquet pages decoded on the cpu: 1.53s estimated, 1.628s on the gpu", why)

	// pyarrow's LZ4_RAW file of the file benchmark, 1.27 GB: the device's
	// calls bound the route (measured: 0.61–0.68 s against 0.07 s).
	lz4 := PageWork{Threads: 16, PageTasks: 200, Host: []CodecWork{{Codec: "LZ4_RAW", Stored: 1265486592, Decoded: 1265486592}}}
	ok, why = cal.PagesOnGPU(lz4, true)
	assert.False(t, ok, why)
	assert.Equal(t, hostRate("BROTLI"), hostRate("LZO"), "a codec not measured: the slowest rate")
}

// TestPagesOnGPUCalibratedRates: the kernels' pages cost by class, at the
// calibrated rates (DefaultPageRates's where none is measured); pages not
// classed cost as the slowest class.
func TestPagesOnGPUCalibratedRates(t *testing.T) {
	cal := Defaults(2)
	cal.GPU = "H200"
	cal.H2DPinned, cal.HostStaged, cal.DeviceRead = 50e9, 45e9, 4e12
	var w PageWork
	w.Threads = 2
	w.AddKernel(PagesSnappy, 2<<30, 4<<30)
	w.Add(PageWork{PageTasks: 3})
	assert.Equal(t, PageWork{Stored: 2 << 30, Decoded: 4 << 30, Threads: 2, PageTasks: 3,
		Kernel: [NumPageClasses]int64{PagesSnappy: 4 << 30}}, w)
	ok, why := cal.PagesOnGPU(w, false)
	assert.True(t, ok, "at the default rates: %s", why)
	cal.PageRates[PagesSnappy] = 1e9 // (4 GiB: 4.29 s, the copies 0.20, the walk on 2 goroutines 0.80)
	ok, why = cal.PagesOnGPU(w, false)
	assert.False(t, ok, why)
	assert.Equal(t, "parquet pages decoded on the cpu: 2.147s estimated, 5.291s on the gpu", why)
	cal.PageRates[PagesPlain] = 1e12 // (another class's rate changes nothing)
	_, why2 := cal.PagesOnGPU(w, false)
	assert.Equal(t, why, why2)
	ok, _ = cal.PagesOnGPU(w, true)
	assert.False(t, ok, "2.15 s on the CPU, 5.29 s on the GPU started")

	// Page kernels that failed their calibration take no pages.
	failed := cal
	failed.PageError = "out of memory"
	ok, why2 = failed.PagesOnGPU(w, true)
	assert.False(t, ok)
	assert.Equal(t, "parquet pages decoded on the cpu: the gpu's page kernels failed their calibration: out of memory", why2)

	// The same bytes not classed: at the slowest class's rate.
	ok, why2 = cal.PagesOnGPU(PageWork{Stored: 2 << 30, Decoded: 4 << 30, Threads: 2, PageTasks: 3}, false)
	assert.False(t, ok)
	assert.Equal(t, why, why2)
	assert.Equal(t, PagesSnappyDict, ClassOf(true, true))
	assert.Equal(t, "uncompressed dictionary", ClassOf(false, true).String())
}

// TestSplitPages: the GPU takes the chunks that cost it least against the
// CPU, as many as end the file first with the CPU reading the others at
// once. On 16 threads of the H200 host, 32 snappy chunks that compress
// tenfold and 32 uncompressed ones, 64 MiB decompressed each: the CPU alone
// 268 ms; with the device open the GPU takes the snappy ones (their walk
// and copies cost a tenth of their bytes) and 8 of the others, and the CPU
// reads the other 24 meanwhile: 136 ms. Not open, the device's start
// (450 ms) costs more than the CPU's whole read.
func TestSplitPages(t *testing.T) {
	cal := Defaults(16)
	cal.GPU = "H200"
	cal.H2DPinned, cal.HostStaged, cal.DeviceRead = 50e9, 45e9, 4e12
	chunk := func(c PageClass, stored, decoded int64) PageWork {
		var w PageWork
		w.AddKernel(c, stored, decoded)
		return w
	}
	var chunks []PageWork
	for i := 0; i < 32; i++ {
		chunks = append(chunks, chunk(PagesPlain, 64<<20, 64<<20), chunk(PagesSnappy, 64<<20/10, 64<<20))
	}
	chunks = append(chunks, PageWork{}) // (a chunk of no pages)
	s := cal.SplitPages(chunks, 16, true)
	plain := 0
	for i := 0; i < 64; i++ {
		if i%2 == 1 {
			assert.True(t, s.GPU[i], "snappy chunk %d", i)
			continue
		}
		if s.GPU[i] {
			plain++
			continue
		}
		assert.Equal(t, "parquet pages decoded on the cpu, the gpu decoding the other chunks at once: 136ms estimated, 268ms on the cpu alone", s.CPUWhy[i])
	}
	assert.Equal(t, 8, plain, "uncompressed chunks on the GPU")
	assert.True(t, s.GPU[64], "an empty chunk ranks first")
	assert.Equal(t, "parquet pages decoded on the gpu, the cpu reading the other chunks at once: 136ms estimated, 268ms on 16 cpu threads alone", s.GPUWhy)

	s = cal.SplitPages(chunks, 16, false)
	assert.NotContains(t, s.GPU, true)
	assert.Equal(t, "parquet pages decoded on the cpu: 268ms estimated, 695ms on the gpu", s.CPUWhy[0])

	// Four of each of 1 GiB: the CPU reads a chunk's segments on every
	// thread, so the eight keep all 16 busy (537 ms; on a goroutine a
	// chunk, eight: 1.07 s); the GPU takes the snappy ones, the CPU reads
	// the others meanwhile.
	var big []PageWork
	for i := 0; i < 4; i++ {
		big = append(big, chunk(PagesPlain, 1<<30, 1<<30), chunk(PagesSnappy, 100<<20, 1<<30))
	}
	s = cal.SplitPages(big, 16, true)
	assert.Equal(t, []bool{false, true, false, true, false, true, false, true}, s.GPU)
	assert.Equal(t, "parquet pages decoded on the gpu, the cpu reading the other chunks at once: 347ms estimated, 537ms on 16 cpu threads alone", s.GPUWhy)
	one := big[0]
	one.OneChunk()
	assert.Equal(t, 128, one.CPUTasks, "1 GiB: 128 segments")
	assert.Equal(t, 1, one.threads(), "the walk: a chunk a goroutine")
	one.Threads = 16
	assert.Equal(t, 16, one.cpuThreads())

	// Chunks alike: the whole file's comparison, as PagesOnGPU gives it.
	var like []PageWork
	for i := 0; i < 16; i++ {
		like = append(like, PageWork{Host: []CodecWork{{Codec: "ZSTD", Stored: 256 << 20, Decoded: 640 << 20}}})
	}
	s = cal.SplitPages(like, 16, true)
	assert.NotContains(t, s.GPU, true)
	var w PageWork
	w.Threads = 16
	for _, c := range like {
		c.PageTasks = 1
		w.Add(c)
	}
	_, why := cal.PagesOnGPU(w, true)
	assert.Equal(t, "parquet pages decoded on the cpu: 1.53s estimated, 1.628s on the gpu", why)
	assert.Equal(t, why, s.CPUWhy[0])
	assert.Equal(t, []CodecWork{{Codec: "ZSTD", Stored: 256 << 20, Decoded: 640 << 20}}, like[0].Host, "the chunks left as they were")

	// On 2 threads the uncompressed chunks are the GPU's too, but for one
	// that the CPU's two threads read meanwhile (its 8 segments).
	s = cal.SplitPages(chunks[:4], 2, true)
	assert.Equal(t, []bool{true, true, false, true}, s.GPU)
	assert.Equal(t, "parquet pages decoded on the gpu, the cpu reading the other chunks at once: 64ms estimated, 134ms on 2 cpu threads alone", s.GPUWhy)

	// No GPU in the calibration: none, and why.
	s = Defaults(16).SplitPages(chunks, 16, true)
	assert.NotContains(t, s.GPU, true)
	assert.Equal(t, "no GPU calibration", s.CPUWhy[3])
}

// BenchmarkSplitPages: the planner's choice for a file of 100,000 chunks
// (the most a footer of a few MB lists), alternating two classes.
func BenchmarkSplitPages(b *testing.B) {
	cal := Defaults(16)
	cal.GPU = "H200"
	cal.H2DPinned, cal.HostStaged, cal.DeviceRead = 50e9, 45e9, 4e12
	chunks := make([]PageWork, 100_000)
	for i := range chunks {
		if i%2 == 0 {
			chunks[i].AddKernel(PagesSnappy, 1<<20, 8<<20)
		} else {
			chunks[i].AddHost("ZSTD", 3<<20, 8<<20)
		}
	}
	for b.Loop() {
		cal.SplitPages(chunks, 16, true)
	}
}

// TestPageWorkDeviceBytes: a chunk's stored pages and their bodies, and of
// the host's codecs a piece at most.
func TestPageWorkDeviceBytes(t *testing.T) {
	var w PageWork
	w.AddKernel(PagesSnappy, 3<<20, 9<<20)
	assert.Equal(t, int64(12<<20), w.DeviceBytes())
	w.Host = []CodecWork{{Codec: "ZSTD", Stored: 2 << 20, Decoded: 5 << 20}}
	assert.Equal(t, int64(17<<20), w.DeviceBytes())
	w.Host = append(w.Host, CodecWork{Codec: "GZIP", Stored: 40 << 20, Decoded: 100 << 20})
	assert.Equal(t, int64(12<<20+PageHostPieceBytes), w.DeviceBytes())
}

// TestViewsWorthAsking: Arrow buffers folded where they lie (an IPC file's
// bodies) are weighed at the CPU's stand-in view rate against the GPU's
// start and their upload at the link's best: 8 GiB on 16 goroutines is the
// CPU's (the H200 host measured 1.0 s for such a first run with a
// calibration, 0.1 s with one cached), 8 GiB on 2 goroutines and 80 GiB on
// 16 are worth asking.
func TestViewsWorthAsking(t *testing.T) {
	views := func(n int64, threads int) PageWork { return PageWork{Views: n, Threads: threads} }
	ok, why := PagesWorthAsking(views(8<<30, 16))
	assert.False(t, ok)
	assert.Equal(t, "on the cpu: 215ms estimated, less than the gpu's start (450ms) and the upload", why)
	ok, _ = PagesWorthAsking(views(8<<30, 2))
	assert.True(t, ok, "a CPU of 2 goroutines: 1.4 s")
	ok, _ = PagesWorthAsking(views(80<<30, 16))
	assert.True(t, ok, "80 GiB: 2.1 s, the GPU's start and upload 1.8 s")
}
