// Package startup traces what a process pays before its first result: with
// ARROWAGG_TRACE_STARTUP=1 in the environment, Trace prints to stderr how
// long each costly first step took (opening and initializing the CUDA
// driver, creating the device's context, loading the kernels, finding or
// measuring the planner's calibration), and the phases of a read (main
// entered, a file mapped, its chunks folded, unmapped, the result written),
// and when each ended, counted from the start of the program. Without it, Trace
// costs a load of a boolean.
package startup

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// begin approximates the start of the program: packages are initialized
// before main, this one among the first (it imports nothing of arrowagg's).
var begin = time.Now()

var (
	on = os.Getenv("ARROWAGG_TRACE_STARTUP") == "1"
	mu sync.Mutex
)

// Enabled reports whether ARROWAGG_TRACE_STARTUP=1 was set when the program
// started.
func Enabled() bool { return on }

// Trace reports that step, which began at start, has just ended, with err
// when it failed: a line "arrowagg: startup: STEP D ms (at T ms)" on stderr.
func Trace(step string, start time.Time, err error) {
	if !on {
		return
	}
	now := time.Now()
	msg := fmt.Sprintf("arrowagg: startup: %-22s %9.3f ms (at %9.3f ms)", step, ms(now.Sub(start)), ms(now.Sub(begin)))
	if err != nil {
		msg += ": " + err.Error()
	}
	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintln(os.Stderr, msg)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
