package planner

import (
	"fmt"
	"sync"
	"time"
)

// A resident column is contested when the calibration cannot say with
// confidence which backend is faster: its CPU estimate is under
// ContestFactor times its GPU estimate (and above a launch: the engine asks first whether the CPU is certain to win). Near
// the crossover the estimates' errors (how fast parked goroutines wake, the
// device thread's hand-off) are as large as the difference, so the choice
// there is made from measurements of the column itself: its calls alternate
// between the host copy on the CPU and the device copy until each backend
// has ContestProbe times, then go to the faster by the fastest of its last
// ContestWindow times. Every ContestRecheck-th call runs the slower one
// again, so that a change in the host's load or the device's is noticed.
const (
	ContestFactor  = 2.0
	ContestWindow  = 4
	ContestProbe   = 2
	ContestRecheck = 16
)

// Backends of a contest.
const (
	onHost = iota
	onDevice
)

// Contest is the record of a contested column's calls; safe for concurrent
// use. The zero value is ready.
type Contest struct {
	mu    sync.Mutex
	times [2][ContestWindow]time.Duration // recent times by backend, a ring
	n     [2]int                          // times recorded by backend
	calls int
}

// ContestNote is a contest's choice for one call and what it was made from,
// for the plan's reason.
type ContestNote struct {
	Device    bool          // the call runs on the device copy (else the CPU on the host copy)
	Probe     bool          // still measuring both backends
	Recheck   bool          // the slower backend, run again
	CPU, GPU  time.Duration // fastest recent times (0: none yet)
	Contested bool          // the note is set
}

// Pick chooses the backend of the next call.
func (c *Contest) Pick() ContestNote {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	n := ContestNote{Contested: true, CPU: c.fastest(onHost), GPU: c.fastest(onDevice)}
	switch {
	case c.n[onHost] < ContestProbe || c.n[onDevice] < ContestProbe:
		n.Probe = true
		n.Device = c.n[onDevice] <= c.n[onHost]
	default:
		n.Device = n.GPU <= n.CPU
		if c.calls%ContestRecheck == 0 {
			n.Device, n.Recheck = !n.Device, true
		}
	}
	return n
}

// Record adds the time of a call on the device or on the host.
func (c *Contest) Record(device bool, d time.Duration) {
	b := onHost
	if device {
		b = onDevice
	}
	c.mu.Lock()
	c.times[b][c.n[b]%ContestWindow] = d
	c.n[b]++
	c.mu.Unlock()
}

// fastest is the shortest of b's recent times, 0 when there is none; c.mu
// held.
func (c *Contest) fastest(b int) time.Duration {
	var t time.Duration
	for i := range min(c.n[b], ContestWindow) {
		if d := c.times[b][i]; t == 0 || d < t {
			t = d
		}
	}
	return t
}

func (n ContestNote) String() string {
	where := "the CPU on the host copy"
	if n.Device {
		where = "the GPU"
	}
	measured := func(t time.Duration) string {
		if t == 0 {
			return "not yet measured"
		}
		return t.Round(100 * time.Nanosecond).String()
	}
	times := fmt.Sprintf("GPU %s, CPU %s", measured(n.GPU), measured(n.CPU))
	switch {
	case n.Probe:
		return fmt.Sprintf("contested (the calibration's estimates are within %gx): measuring both backends on this column (%s); this call on %s",
			ContestFactor, times, where)
	case n.Recheck:
		return fmt.Sprintf("contested: the fastest of this column's recent calls took %s; this call rechecks %s", times, where)
	}
	return fmt.Sprintf("contested: the fastest of this column's recent calls took %s: %s", times, where)
}

// Contested reports whether the backend of resident column c is to be
// decided by measurement: the calibration has GPU figures and the CPU's
// estimate on threads goroutines is under ContestFactor times the GPU's on
// the device copy. (The caller has ruled out first that the CPU is certain to
// win, below a launch.)
func (cal Calibration) Contested(c Column, threads int) bool {
	if !cal.HasGPU() {
		return false
	}
	cpu := cal.CPUTime(c, threads)
	gpu := DeviceEstimate(c.Bytes, false, cal)
	return float64(cpu) < ContestFactor*float64(gpu)
}

// DeviceEstimate is the estimate of aggregating bytes of data resident on the
// device, and of uploading them first (from pageable memory) when upload is
// set; zero when the calibration has no GPU figures.
func DeviceEstimate(bytes int64, upload bool, cal Calibration) time.Duration {
	if !cal.HasGPU() {
		return 0
	}
	d := Plan([]Column{{Bytes: bytes, Location: Device, GPUCapable: true}}, cal,
		Options{Threads: cal.MaxThreads, Force: ForceGPU})[0]
	est := d.GPUTime
	if upload && cal.H2DPageable > 0 {
		est += time.Duration(float64(bytes) / cal.H2DPageable * float64(time.Second))
	}
	return est
}
