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
	// DeviceStart is what a process pays before the first launch when the
	// GPU is not open yet: the driver's initialization, the primary
	// context and the module (the pages' walk overlaps it).
	DeviceStart = 250 * time.Millisecond
)

// PagesOnGPU says whether the Parquet pages of a file's columns, stored
// bytes stored and decoded bytes once decompressed, are aggregated faster by
// the GPU's page kernels (uploaded as stored, decoded on the device) than by
// the CPU page path on threads goroutines; started: the device is open
// already. The reason says why, for the plan.
func (cal Calibration) PagesOnGPU(stored, decoded int64, threads int, started bool) (bool, string) {
	if !cal.HasGPU() {
		return false, "no GPU calibration"
	}
	cpu := pageCPUTime(decoded, threads)
	gpu := time.Duration((float64(stored)/PageUploadRate + float64(stored)/PageDeviceRate) * float64(time.Second))
	if !started {
		gpu += DeviceStart
	}
	if gpu < cpu {
		return true, fmt.Sprintf("parquet pages decoded on the gpu: %v estimated there, %v on %d cpu threads", gpu.Round(time.Millisecond), cpu.Round(time.Millisecond), threads)
	}
	return false, fmt.Sprintf("parquet pages decoded on the cpu: %v estimated, %v on the gpu", cpu.Round(time.Millisecond), gpu.Round(time.Millisecond))
}

// PagesWorthAsking says whether pages of decoded bytes take long enough on
// threads goroutines that the GPU might win even from its start: below,
// the CPU page path is certain and no calibration (which opens the driver)
// is needed.
func PagesWorthAsking(decoded int64, threads int) bool {
	return pageCPUTime(decoded, threads) > DeviceStart
}

// pageCPUTime is the CPU page path's time for decoded bytes of pages on
// threads goroutines.
func pageCPUTime(decoded int64, threads int) time.Duration {
	return time.Duration(float64(decoded) / (PageCPURate * float64(max(threads, 1))) * float64(time.Second))
}
