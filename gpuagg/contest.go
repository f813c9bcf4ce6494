package gpuagg

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/arrowagg/arrowagg/column"
)

// A resident column is contested when the calibration cannot say with
// confidence which backend is faster: its CPU estimate is under
// contestFactor times its GPU estimate (and above a launch: cpuCertain). Near
// the crossover the estimates' errors (how fast parked goroutines wake, the
// device thread's hand-off) are as large as the difference, so the choice
// there is made from measurements of the column itself: its calls alternate
// between the host copy on the CPU and the device copy until each backend
// has contestProbe times, then go to the faster by the fastest of its last
// contestWindow times. Every contestRecheck-th call runs the slower one
// again, so that a change in the host's load or the device's is noticed.
const (
	contestFactor  = 2.0
	contestWindow  = 4
	contestProbe   = 2
	contestRecheck = 16
)

// Backends of a contest.
const (
	onHost = iota
	onDevice
)

// contest is the record of a contested column's calls; safe for concurrent
// use.
type contest struct {
	mu    sync.Mutex
	times [2][contestWindow]time.Duration // recent times by backend, a ring
	n     [2]int                          // times recorded by backend
	calls int
}

// contestNote is a contest's choice for one call and what it was made from,
// for the plan's reason.
type contestNote struct {
	device    bool
	probe     bool          // still measuring both backends
	recheck   bool          // the slower backend, run again
	cpu, gpu  time.Duration // fastest recent times (0: none yet)
	contested bool          // the note is set
}

// pick chooses the backend of the next call.
func (c *contest) pick() contestNote {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	n := contestNote{contested: true, cpu: c.fastest(onHost), gpu: c.fastest(onDevice)}
	switch {
	case c.n[onHost] < contestProbe || c.n[onDevice] < contestProbe:
		n.probe = true
		n.device = c.n[onDevice] <= c.n[onHost]
	default:
		n.device = n.gpu <= n.cpu
		if c.calls%contestRecheck == 0 {
			n.device, n.recheck = !n.device, true
		}
	}
	return n
}

// record adds the time of a call on the device or on the host.
func (c *contest) record(device bool, d time.Duration) {
	b := onHost
	if device {
		b = onDevice
	}
	c.mu.Lock()
	c.times[b][c.n[b]%contestWindow] = d
	c.n[b]++
	c.mu.Unlock()
}

// fastest is the shortest of b's recent times, 0 when there is none; c.mu
// held.
func (c *contest) fastest(b int) time.Duration {
	var t time.Duration
	for i := range min(c.n[b], contestWindow) {
		if d := c.times[b][i]; t == 0 || d < t {
			t = d
		}
	}
	return t
}

func (n contestNote) String() string {
	where := "the CPU on the host copy"
	if n.device {
		where = "the GPU"
	}
	measured := func(t time.Duration) string {
		if t == 0 {
			return "not yet measured"
		}
		return t.Round(100 * time.Nanosecond).String()
	}
	times := fmt.Sprintf("GPU %s, CPU %s", measured(n.gpu), measured(n.cpu))
	switch {
	case n.probe:
		return fmt.Sprintf("contested (the calibration's estimates are within %gx): measuring both backends on this column (%s); this call on %s",
			contestFactor, times, where)
	case n.recheck:
		return fmt.Sprintf("contested: the fastest of this column's recent calls took %s; this call rechecks %s", times, where)
	}
	return fmt.Sprintf("contested: the fastest of this column's recent calls took %s: %s", times, where)
}

// contested reports whether the backend of resident column v is to be
// decided by measurement (the CPU is not certain to win, and its estimate is
// under contestFactor times the GPU's).
func (e *Engine) contested(ctx context.Context, v *column.View) bool {
	cal := e.calibration(ctx)
	if !cal.HasGPU() {
		return false
	}
	cpu := cal.CPUTime(planColumn(v), e.threads)
	gpu := deviceEstimate(v.ByteSize(), false, cal)
	return float64(cpu) < contestFactor*float64(gpu)
}
