package planner

import (
	"fmt"
	"math"
	"time"
)

// The costs of Parquet pages, which the page path decodes on the CPU and the
// GPU's page kernels on the device. They are constants measured on the GPU
// hosts (BENCHMARKS.md, "Parquet pages decoded on the GPU" on the H100, the
// page kernels' rate again on the H200), not yet part of the calibration.
const (
	// PageCPURate is the CPU page path's rate per goroutine on snappy
	// Parquet, in bytes of decompressed pages per second (16 goroutines
	// read pyarrow's 8.5 GB snappy file in 0.535 s: 15.9 GB/s).
	PageCPURate = 1.0e9
	// PageUploadRate is the GPU page route's host side, in stored bytes per
	// second: the chunks copied from the mapped file through the staging
	// ring to the device (8.5 GB from the end of the pages' walk to the last
	// launch in 0.77 s on the H100 host).
	PageUploadRate = 11e9
	// PageDeviceRate is the page kernels' rate, decompression included, in
	// stored bytes per second: the slowest column measured (snappy int64
	// pages of short copies, 1.07 GB in 19.5–19.9 ms on the H200 host with
	// the window kernel's first form, 4% more with its last; BENCHMARKS.md,
	// "Snappy pages on the GPU: a window of tags a warp").
	PageDeviceRate = 52e9
	// DeviceStart is what a process pays on the GPU page route beyond the
	// pages' copies and kernels when the GPU is not open yet: the driver's
	// initialization, the primary context and the module (the pages' walk
	// overlaps them), and the route's first copies and launches. On the
	// H200 host (2026-11-29, scripts/bench-pages.sh's kinds step) the cuda
	// build under --device gpu took 0.52–0.70 s on columns of 10 MB to
	// 586 MB of pages, 0.36–0.39 s on one of 134 KB; the CPU build read the
	// last in 0.07–0.11 s.
	DeviceStart = 450 * time.Millisecond
)

// PageWork is what the CPU does instead of the GPU's page kernels on the
// Parquet pages of a file's columns that the GPU could read.
type PageWork struct {
	// Stored and Decoded are the bytes as stored and decompressed of the
	// pages that the kernels decompress themselves (snappy, uncompressed),
	// every column's, which the CPU page path decodes on Threads goroutines
	// (at PageCPURate each), or on as many as PageTasks, the columns'
	// chunks, when fewer (a chunk is one goroutine's; 0: not known).
	Stored, Decoded    int64
	Threads, PageTasks int
	// Host is the pages of the codecs that the host decompresses on
	// either route (HostCodecRates), a total per codec.
	Host []CodecWork
}

// Codec is a Parquet codec, named as the format's thrift enum names it
// ("ZSTD", "GZIP", "BROTLI", "LZ4", "LZ4_RAW").
type Codec string

// CodecWork is pages of one codec: their bytes as stored and decompressed.
type CodecWork struct {
	Codec           Codec
	Stored, Decoded int64
}

// AddHost adds to w pages of codec c that the host decompresses.
func (w *PageWork) AddHost(c Codec, stored, decoded int64) {
	for i := range w.Host {
		if w.Host[i].Codec == c {
			w.Host[i].Stored += stored
			w.Host[i].Decoded += decoded
			return
		}
	}
	w.Host = append(w.Host, CodecWork{Codec: c, Stored: stored, Decoded: decoded})
}

// Add adds o's pages and chunks to w (its Threads are w's).
func (w *PageWork) Add(o PageWork) {
	w.Stored += o.Stored
	w.Decoded += o.Decoded
	w.PageTasks += o.PageTasks
	for _, h := range o.Host {
		w.AddHost(h.Codec, h.Stored, h.Decoded)
	}
}

// CodecRate is what one goroutine of the host does with pages of a codec
// that the GPU's kernels do not decompress, in decompressed bytes per
// second: Inflate, decompress them (the GPU route's share of the host);
// Path, aggregate them on the CPU page path (decompression, decoding and
// the fold).
type CodecRate struct{ Inflate, Path float64 }

// HostCodecRates are the rates of the codecs the host decompresses, one
// goroutine's, measured on the H200 host's CPU (2026-11-30, dataset's
// BenchmarkPageCodecs: pages of the file benchmark's int64 and float64
// columns; the 2-core build machine's were 0.69/0.70, 0.36/0.37 and
// 0.115/0.113 GB/s). Decompression is nearly all of the CPU page path's
// work on these codecs, so the GPU's share cannot pay for zstd and gzip;
// for brotli the decompression alone measured 13% faster, which the
// planner takes for a GPU win on files of more than about 3.5 GB of pages
// (not measured). A codec not named here (LZ4) is taken at the slowest
// rates.
var HostCodecRates = map[Codec]CodecRate{
	"ZSTD":   {Inflate: 0.45e9, Path: 0.46e9},
	"GZIP":   {Inflate: 0.20e9, Path: 0.255e9},
	"BROTLI": {Inflate: 0.066e9, Path: 0.058e9},
}

// hostRate is HostCodecRates's rate of c.
func hostRate(c Codec) CodecRate {
	if r, ok := HostCodecRates[c]; ok {
		return r
	}
	slow := CodecRate{Inflate: math.Inf(1), Path: math.Inf(1)}
	for _, r := range HostCodecRates {
		slow.Inflate, slow.Path = min(slow.Inflate, r.Inflate), min(slow.Path, r.Path)
	}
	return slow
}

// PageHostUploadRate is the GPU page route's rate for pages the host
// decompressed, in decompressed bytes per second, when the calibration has
// no staged upload rate.
const PageHostUploadRate = 20e9

// PagePlainDeviceRate is the page kernels' rate on uncompressed pages, in
// bytes per second (the decoded int64 and float64 values' rate, which the
// host's pages are: BENCHMARKS.md, "Parquet pages decoded on the GPU").
const PagePlainDeviceRate = 250e9

// cpuTime is the CPU's time for w.
func (w PageWork) cpuTime() time.Duration {
	t := pageCPUTime(w.Decoded, w.threads())
	for _, h := range w.Host {
		t += rateTime(h.Decoded, hostRate(h.Codec).Path*float64(w.threads()))
	}
	return t
}

// gpuTime is the GPU route's time for w, the device started, where the
// host's staged uploads run at staged (0: not known): the kernels' pages
// copied and decoded, and the host's decompressed by w's goroutines while
// the GPU decodes those decompressed before (the slower of the two).
func (w PageWork) gpuTime(staged float64) time.Duration {
	t := rateTime(w.Stored, PageUploadRate) + rateTime(w.Stored, PageDeviceRate)
	if staged <= 0 {
		staged = PageHostUploadRate
	}
	for _, h := range w.Host {
		inflate := rateTime(h.Decoded, hostRate(h.Codec).Inflate*float64(w.threads()))
		t += max(inflate, rateTime(h.Decoded, staged)+rateTime(h.Decoded, PagePlainDeviceRate))
	}
	return t
}

// rateTime is the time of n bytes at rate bytes per second.
func rateTime(n int64, rate float64) time.Duration {
	return time.Duration(float64(n) / rate * float64(time.Second))
}

// threads is the goroutines the CPU page path reads w on.
func (w PageWork) threads() int {
	if w.PageTasks > 0 {
		return max(1, min(w.Threads, w.PageTasks))
	}
	return w.Threads
}

// PagesOnGPU says whether the Parquet pages of w are aggregated faster by
// the GPU's page kernels (uploaded as stored, decoded on the device) than
// by the CPU; started: the device is open already. The reason says why,
// for the plan.
func (cal Calibration) PagesOnGPU(w PageWork, started bool) (bool, string) {
	if !cal.HasGPU() {
		return false, "no GPU calibration"
	}
	cpu := w.cpuTime()
	gpu := w.gpuTime(cal.HostStaged)
	if !started {
		gpu += DeviceStart
	}
	if gpu < cpu {
		return true, fmt.Sprintf("parquet pages decoded on the gpu: %v estimated there, %v on %d cpu threads", gpu.Round(time.Millisecond), cpu.Round(time.Millisecond), w.threads())
	}
	return false, fmt.Sprintf("parquet pages decoded on the cpu: %v estimated, %v on the gpu", cpu.Round(time.Millisecond), gpu.Round(time.Millisecond))
}

// PagesWorthAsking says whether the CPU takes long enough on w that the
// GPU might win even from its start: if not, the CPU is certain and no
// calibration (which opens the driver) is needed, and the reason says why.
func PagesWorthAsking(w PageWork) (bool, string) {
	if t := w.cpuTime(); t <= DeviceStart {
		return false, fmt.Sprintf("parquet pages decoded on the cpu: %v estimated, less than the gpu's start (%v)",
			t.Round(time.Millisecond), DeviceStart)
	}
	return true, ""
}

// pageCPUTime is the CPU page path's time for decoded bytes of pages on
// threads goroutines.
func pageCPUTime(decoded int64, threads int) time.Duration {
	return time.Duration(float64(decoded) / (PageCPURate * float64(max(threads, 1))) * float64(time.Second))
}
