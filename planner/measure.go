package planner

import (
	"context"
	"math"
	"os"
	"sync"
	"time"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/startup"
)

// GPUCalibrator is implemented by GPU backends that can measure their costs
// for the planner: it fills the GPU fields of cal (GPU, H2DPinned,
// H2DPageable, HostStaged, DeviceRead, Launch).
type GPUCalibrator interface {
	CalibrateGPU(ctx context.Context, cal *Calibration) error
}

// Calibrate returns the calibration of this host and gpu for threads CPU
// goroutines: the cached one (CachePath) when it was measured for as many
// threads, else a fresh measurement of the CPU (MeasureCPU) and of gpu when
// it is a GPUCalibrator, cached for next time. A measurement that ctx cut
// short, or one that does not validate, is not cached: the next run measures
// again instead of planning with its stand-in figures.
func Calibrate(ctx context.Context, threads int, gpu backend.GPUBackend) Calibration {
	start := time.Now()
	host, _ := os.Hostname()
	gpuName := ""
	if n, ok := gpu.(interface{ DeviceName() string }); ok {
		gpuName = n.DeviceName()
	}
	path, err := CachePath(host, gpuName)
	if err == nil {
		if cal, err := Load(path); err == nil && cal.MaxThreads == threads {
			startup.Trace("calibration (cached)", start, nil)
			return cal
		}
	}
	cal := MeasureCPU(ctx, threads)
	cal.Host = host
	if c, ok := gpu.(GPUCalibrator); ok {
		if err := c.CalibrateGPU(ctx, &cal); err != nil {
			cal.GPU = "" // unusable figures: plan CPU-only rather than guess
		}
	}
	cal.MeasuredAt = time.Now().UTC()
	if path != "" && ctx.Err() == nil && cal.Validate() == nil {
		_ = Save(path, cal) // a cache: failing to write it costs a re-measure
	}
	startup.Trace("calibration (measured)", start, nil)
	return cal
}

// Cached returns the cached calibration of this host and the GPU named gpu,
// when one was measured for threads goroutines: what Calibrate would load,
// without asking the GPU backend anything.
func Cached(threads int, gpu string) (Calibration, bool) {
	start := time.Now()
	host, _ := os.Hostname()
	path, err := CachePath(host, gpu)
	if err != nil || gpu == "" {
		return Calibration{}, false
	}
	cal, err := Load(path)
	if err != nil || cal.MaxThreads != threads {
		return Calibration{}, false
	}
	startup.Trace("calibration (cached, by name)", start, nil)
	return cal, true
}

// MeasureCPU times the CPU backend's fused pass over a 128 MiB int64 column
// (larger than most caches: the rate of data in memory) with one goroutine
// and with threads of them, best of three each; then the float rate, the
// host's memory rate and the cost of fanning a call out over goroutines. It
// returns Defaults(threads) when the first measurement fails (ctx done).
func MeasureCPU(ctx context.Context, threads int) Calibration {
	const n = 16 << 20
	buf := make([]byte, n*8)
	vals := column.Slice[int64](buf)
	for i := range vals {
		vals[i] = int64(uint64(i)*2654435761) >> 7
	}
	v := column.View{Type: column.TypeName("int64"), Kind: column.Int64, Len: n, Values: buf}
	timeIt := func(threads int) float64 {
		c := &cpu.CPU{Threads: threads}
		best := time.Duration(math.MaxInt64)
		for rep := 0; rep < 3; rep++ {
			s := agg.New(v.Kind.Family(), 0)
			start := time.Now()
			views, states := [1]*column.View{&v}, [1]*agg.State{&s}
			if err := c.Update(ctx, views[:], states[:]); err != nil {
				return 0
			}
			best = min(best, time.Since(start))
		}
		return float64(n*8) / best.Seconds()
	}
	one := timeIt(1)
	all := one
	if threads > 1 {
		all = max(one, timeIt(threads))
	}
	if one <= 0 {
		return Defaults(threads)
	}
	const overhead = 5 * time.Microsecond
	cal := Calibration{Version: Version, CPUPerThread: one, CPUMax: all, MaxThreads: threads,
		CPUOverhead: overhead, HostMemory: memoryRate(vals, threads)}
	// The same buffer as finite float64 values, for the float rate.
	floats := column.Slice[float64](buf)
	for i := range floats {
		floats[i] = float64(i%1000003) * 0.25
	}
	v.Type, v.Kind = column.TypeName("float64"), column.Float64
	if f := timeIt(1); f > 0 {
		cal.CPUFloat = min(1, f/one)
	}
	if threads > 1 {
		// One morsel per goroutine, of int32 values (the sizes around which
		// the CPU and a GPU launch cross over), on FewWorkers goroutines and
		// on all of them: what a call costs beyond its bytes at the full
		// rate is the cost of spreading it. Measured as the GPU's launch is
		// (calls back to back, the best of several), on data not in the
		// caches (another part of the buffer each time, parts read longest
		// ago first). After a pause of 200 µs before each call (the
		// goroutines' threads parked) it measured 103 µs on 16 goroutines
		// of the H100 host, more than a whole 4 MiB call took back to back
		// (72 µs): planned with it, auto sent such columns to the GPU at
		// 4.5 times the CPU's time.
		part := 0
		fanout := func(w int) time.Duration {
			m := w * cpu.MorselSize // int32 elements
			c := &cpu.CPU{Threads: w}
			best := time.Duration(math.MaxInt64)
			for rep := 0; rep < 7; rep++ {
				if (part+1)*m*4 > len(v.Values) {
					part = 0
				}
				sub := column.View{Type: column.TypeName("int32"), Kind: column.Int32, Len: m,
					Values: v.Values[part*m*4 : (part+1)*m*4]}
				part++
				s := agg.New(column.FamilySigned, 0)
				start := time.Now()
				views, states := [1]*column.View{&sub}, [1]*agg.State{&s}
				if err := c.Update(ctx, views[:], states[:]); err != nil {
					return 0
				}
				best = min(best, time.Since(start))
			}
			return max(0, best-overhead-time.Duration(float64(m*4)/all*float64(time.Second)))
		}
		cal.CPUFanout = fanout(threads)
		if threads > FewWorkers {
			cal.CPUFanoutFew = min(fanout(FewWorkers), cal.CPUFanout)
		}
	}
	return cal
}

// memoryRate is the host's memory read rate: a SIMD sum (cpu.SumInt64) over vals in
// as many parts as threads, all at once (best of three).
func memoryRate(vals []int64, threads int) float64 {
	best := time.Duration(math.MaxInt64)
	per := (len(vals) + threads - 1) / threads
	for rep := 0; rep < 3; rep++ {
		var wg sync.WaitGroup
		sums := make([]int64, threads)
		start := time.Now()
		for w := 0; w < threads; w++ {
			lo, hi := min(len(vals), w*per), min(len(vals), (w+1)*per)
			wg.Add(1)
			go func(w int, part []int64) {
				defer wg.Done()
				sums[w] = cpu.SumInt64(part)
			}(w, vals[lo:hi])
		}
		wg.Wait()
		best = min(best, time.Since(start))
	}
	return float64(len(vals)*8) / best.Seconds()
}
