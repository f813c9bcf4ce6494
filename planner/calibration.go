package planner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/arrowagg/arrowagg/backend/cpu"
)

// Calibration holds the measured costs the planner works from. Rates are in
// bytes per second.
type Calibration struct {
	// Version is the layout of the figures (Version below); a cached
	// calibration of another version is measured again.
	Version int    `json:"version"`
	Host    string `json:"host"` // what the CPU figures were measured on
	// CPU fused-pass throughput: PerThread with one goroutine, Max with
	// MaxThreads goroutines (memory bandwidth caps the scaling).
	CPUPerThread float64 `json:"cpu_per_thread"`
	CPUMax       float64 `json:"cpu_max"`
	MaxThreads   int     `json:"max_threads"`
	// HostMemory is the host's memory read bandwidth (a plain SIMD sum on
	// every core), which the CPU and the GPU's uploads share when a column is
	// split between them; 0 means unknown (CPUMax stands in).
	HostMemory float64 `json:"host_memory,omitempty"`
	// CPUOverhead is the fixed cost of one CPU aggregation call.
	CPUOverhead time.Duration `json:"cpu_overhead"`
	// CPUFanout is the further fixed cost of a call that spreads a column
	// over MaxThreads goroutines (waking and joining them), beyond what its
	// bytes cost at CPUMax; fewer goroutines cost their share of it.
	CPUFanout time.Duration `json:"cpu_fanout"`
	// CPUFanoutFew is that cost with FewWorkers goroutines (0: unknown,
	// CPUFanout shared out instead); between the two it is interpolated.
	CPUFanoutFew time.Duration `json:"cpu_fanout_few"`
	// CPUFloat is one goroutine's fused-pass rate on float64 values
	// relative to int64 ones (compensated sums cost more); 0 means 1.
	CPUFloat float64 `json:"cpu_float"`

	// GPU is empty when there is none; the GPU figures are then unused.
	GPU string `json:"gpu,omitempty"`
	// H2DPinned and H2DPageable are host-to-device copy rates from pinned
	// and from ordinary (pageable) host memory; HostStaged is the rate of the
	// backend's own path from ordinary memory (staging through pinned buffers,
	// overlapped with the copies), which is what ordinary Arrow data takes.
	H2DPinned   float64 `json:"h2d_pinned,omitempty"`
	H2DPageable float64 `json:"h2d_pageable,omitempty"`
	HostStaged  float64 `json:"host_staged,omitempty"`
	// DeviceRead is the fused kernel's read rate on GPU-resident data.
	DeviceRead float64 `json:"device_read,omitempty"`
	// Launch is a kernel launch plus reading its result back, for a small
	// column.
	Launch time.Duration `json:"launch,omitempty"`
	// PageRates are the Parquet page kernels' rates by class, on pages
	// resident on the device (0: not measured; PageRate stands in).
	PageRates PageRates `json:"page_rates,omitzero"`
	// PageError is why the page kernels could not be measured (they failed
	// on this GPU, or found no memory): the planner then keeps pages off
	// them. Empty when they were measured, or not tried.
	PageError string `json:"page_error,omitempty"`

	MeasuredAt time.Time `json:"measured_at"`
}

// Version is the current layout of Calibration, and of what its figures
// measure (4: uploads from ordinary memory through the staging ring, much
// faster than the figures of 3, and the fan-out measured back to back; 5:
// the ring's slots filled by demoted vector stores, faster again; 6: the
// page kernels' rates).
const Version = 6

// cpuRateOf is the CPU's rate on col with threads goroutines: CPURate, or
// for floats, whose compensated sums cost more per value, what their
// per-goroutine rate allows on threads goroutines, whichever is lower
// (memory bandwidth bounds both alike). The per-goroutine rates are measured
// on data in memory: columns that fit the caches go several times faster,
// so they are not scaled down to the goroutines a small column occupies.
func (c Calibration) cpuRateOf(col Column, threads int) float64 {
	r := c.CPURate(threads)
	if col.Float && c.CPUFloat > 0 {
		r = min(r, c.CPUPerThread*c.CPUFloat*float64(max(threads, 1)))
	}
	return r
}

// workers is how many goroutines the CPU backend spreads col over: one per
// morsel, up to threads.
func workers(col Column, threads int) int {
	w := max(1, threads)
	if col.Values > 0 {
		w = int(min(int64(w), (col.Values+cpu.MorselSize-1)/cpu.MorselSize))
	}
	return w
}

// CPUTime is the estimated time of the CPU's fused pass over column c with
// up to threads goroutines: the fixed cost, the bytes at the full rate
// (floats at their own), and the cost of spreading the column over as many
// goroutines as it has morsels, up to threads.
func (c Calibration) CPUTime(col Column, threads int) time.Duration {
	t := c.CPUOverhead + seconds(float64(col.Bytes)/c.cpuRateOf(col, threads))
	return t + c.fanout(workers(col, threads))
}

// CPUCertainBytes is the size below which a column of one morsel (integers,
// or floats when float is set) is aggregated on the CPU, with threads
// goroutines, before a GPU launch returns: where CPUTime < Launch.
func (c Calibration) CPUCertainBytes(float bool, threads int) int64 {
	spare := c.Launch - c.CPUOverhead
	if spare <= 0 {
		return 0
	}
	return int64(spare.Seconds() * c.cpuRateOf(Column{Float: float, Values: 1}, threads))
}

// FewWorkers is the smaller number of goroutines the fan-out cost is
// measured with (CPUFanoutFew).
const FewWorkers = 4

// fanout is the cost of spreading a call over w goroutines: none for one,
// measured for FewWorkers and MaxThreads, proportional below the first and
// interpolated between them.
func (c Calibration) fanout(w int) time.Duration {
	w = min(w, c.MaxThreads)
	switch {
	case w <= 1:
		return 0
	case c.CPUFanoutFew == 0 || c.MaxThreads <= FewWorkers:
		return c.CPUFanout * time.Duration(w) / time.Duration(max(c.MaxThreads, 1))
	case w <= FewWorkers:
		return c.CPUFanoutFew * time.Duration(w) / FewWorkers
	}
	return c.CPUFanoutFew + (c.CPUFanout-c.CPUFanoutFew)*time.Duration(w-FewWorkers)/time.Duration(c.MaxThreads-FewWorkers)
}

// memory is the host memory bandwidth the planner assumes: no less than what
// the CPU pass or a pinned upload was seen to read.
func (c Calibration) memory() float64 {
	return max(c.HostMemory, c.CPUMax, c.H2DPinned)
}

// HasGPU reports whether the calibration describes a usable GPU.
func (c Calibration) HasGPU() bool {
	return c.GPU != "" && c.DeviceRead > 0 && c.HostStaged > 0
}

// CPURate is the CPU's fused-pass throughput with n goroutines: linear in n
// up to the measured maximum.
func (c Calibration) CPURate(n int) float64 {
	if n < 1 {
		n = 1
	}
	r := c.CPUPerThread * float64(n)
	if c.CPUMax > 0 && r > c.CPUMax {
		r = c.CPUMax
	}
	return r
}

// Validate checks that the figures are usable.
func (c Calibration) Validate() error {
	if c.CPUPerThread <= 0 || c.CPUMax < c.CPUPerThread || c.MaxThreads < 1 {
		return fmt.Errorf("calibration: CPU figures missing or inconsistent (per thread %g B/s, max %g B/s, %d threads)",
			c.CPUPerThread, c.CPUMax, c.MaxThreads)
	}
	if c.GPU != "" && (c.DeviceRead <= 0 || c.HostStaged <= 0 || c.H2DPinned <= 0 || c.Launch <= 0) {
		return fmt.Errorf("calibration: GPU %q has missing figures", c.GPU)
	}
	return nil
}

// Defaults is a conservative calibration for a CPU-only host of n cores, used
// until a measurement exists: 4 GB/s per goroutine, 12 GB/s at most.
func Defaults(n int) Calibration {
	if n < 1 {
		n = 1
	}
	return Calibration{Version: Version, Host: "defaults", CPUPerThread: 4e9, CPUMax: max(4e9, min(12e9, 4e9*float64(n))), MaxThreads: n,
		CPUOverhead: 2 * time.Microsecond}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// CachePath is where the calibration of a host and GPU is cached: a file under
// os.UserCacheDir()/arrowagg.
func CachePath(host, gpu string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("calibration cache: %w", err)
	}
	name := unsafeName.ReplaceAllString(host, "_")
	if gpu != "" {
		name += "-" + unsafeName.ReplaceAllString(gpu, "_")
	}
	return filepath.Join(dir, "arrowagg", "calibration-"+name+".json"), nil
}

// ErrNoCache is returned by Load when no calibration is cached.
var ErrNoCache = errors.New("no cached calibration")

// Load reads a cached calibration.
func Load(path string) (Calibration, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Calibration{}, fmt.Errorf("%w at %s", ErrNoCache, path)
	}
	if err != nil {
		return Calibration{}, fmt.Errorf("reading calibration: %w", err)
	}
	var c Calibration
	if err := json.Unmarshal(b, &c); err != nil {
		return Calibration{}, fmt.Errorf("calibration %s: %w", path, err)
	}
	if c.Version != Version {
		return Calibration{}, fmt.Errorf("%w at %s (version %d, want %d)", ErrNoCache, path, c.Version, Version)
	}
	if err := c.Validate(); err != nil {
		return Calibration{}, fmt.Errorf("calibration %s: %w", path, err)
	}
	return c, nil
}

// Save writes a calibration to path (atomically: a temporary file renamed).
func Save(path string, c Calibration) error {
	if err := c.Validate(); err != nil {
		return err
	}
	c.Version = Version
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding calibration: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("calibration cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".calibration-*")
	if err != nil {
		return fmt.Errorf("calibration cache: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("writing calibration: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing calibration: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing calibration: %w", err)
	}
	return nil
}
