package planner

import (
	"fmt"
	"time"
)

// The costs of Parquet pages, which the page path decodes on the CPU and the
// GPU's page kernels on the device. They are constants measured on the H100
// host (BENCHMARKS.md, "Parquet pages decoded on the GPU"), not yet part of
// the calibration.
const (
	// PageCPURate is the CPU page path's rate per goroutine on snappy
	// Parquet, in bytes of decompressed pages per second (16 goroutines
	// read pyarrow's 1.16 GiB snappy file in 0.10 s).
	PageCPURate = 0.75e9
	// PageDeviceRate is the page kernels' rate, decompression included, in
	// stored bytes per second on the device.
	PageDeviceRate = 100e9
	// DeviceStart is what a process pays before the first launch when the
	// GPU is not open yet: the driver's initialization, the primary
	// context and the module.
	DeviceStart = 250 * time.Millisecond
)

// PagesOnGPU says whether the Parquet pages of a file's columns, stored
// bytes stored and decoded bytes once decompressed, are aggregated faster by
// the GPU's page kernels (uploaded as stored through the staging, decoded on
// the device) than by the CPU page path on threads goroutines; started: the
// device is open already. The reason says why, for the plan.
func (cal Calibration) PagesOnGPU(stored, decoded int64, threads int, started bool) (bool, string) {
	cpu := time.Duration(float64(decoded) / (PageCPURate * float64(max(threads, 1))) * float64(time.Second))
	up := cal.HostStaged
	if up <= 0 {
		up = cal.H2DPageable
	}
	if !cal.HasGPU() || up <= 0 {
		return false, "no GPU calibration"
	}
	gpu := time.Duration((float64(stored)/up + float64(stored)/PageDeviceRate) * float64(time.Second))
	if !started {
		gpu += DeviceStart
	}
	if gpu < cpu {
		return true, fmt.Sprintf("pages decoded on the gpu: %v estimated there, %v on %d cpu threads", gpu.Round(time.Millisecond), cpu.Round(time.Millisecond), threads)
	}
	return false, fmt.Sprintf("pages decoded on the cpu: %v estimated, %v on the gpu", cpu.Round(time.Millisecond), gpu.Round(time.Millisecond))
}

// PagesWorthAsking says whether pages of decoded bytes take long enough on
// threads goroutines that the GPU might win even from its start: below,
// the CPU page path is certain and no calibration (which opens the driver)
// is needed.
func PagesWorthAsking(decoded int64, threads int) bool {
	cpu := time.Duration(float64(decoded) / (PageCPURate * float64(max(threads, 1))) * float64(time.Second))
	return cpu > DeviceStart
}
