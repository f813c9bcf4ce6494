package planner

import (
	"fmt"
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
	// Stored and Decoded are the pages' bytes as stored and decompressed,
	// every column's, which the CPU page path decodes on Threads goroutines
	// (at PageCPURate each), or on as many as PageTasks, the columns'
	// chunks, when fewer (a chunk is one goroutine's; 0: not known).
	Stored, Decoded    int64
	Threads, PageTasks int
}

// cpuTime is the CPU's time for w.
func (w PageWork) cpuTime() time.Duration { return pageCPUTime(w.Decoded, w.threads()) }

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
	gpu := time.Duration((float64(w.Stored)/PageUploadRate + float64(w.Stored)/PageDeviceRate) * float64(time.Second))
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
