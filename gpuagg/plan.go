package gpuagg

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	amath "github.com/apache/arrow/go/v17/arrow/math"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/planner"
)

// GPUCalibrator is implemented by GPU backends that can measure their costs
// for the planner: it fills the GPU fields of cal (GPU, H2DPinned,
// H2DPageable, HostStaged, DeviceRead, Launch).
type GPUCalibrator interface {
	CalibrateGPU(ctx context.Context, cal *planner.Calibration) error
}

// Locator is implemented by GPU backends that hold columns in device memory:
// it tells the planner where a view's data lives.
type Locator interface {
	Locate(v *column.View) planner.Location
}

// WithCalibration makes the planner use cal instead of measuring or loading
// the cached calibration.
func WithCalibration(cal planner.Calibration) Option {
	return func(e *Engine) { e.cal, e.calSet = cal, true }
}

// Calibration returns the calibration the engine plans with, measuring it
// on first use when the engine has a GPU (a CPU-only engine plans with
// planner.Defaults).
func (e *Engine) Calibration(ctx context.Context) planner.Calibration {
	if e.gpu == nil {
		return planner.Defaults(e.threads)
	}
	return e.calibration(ctx)
}

// calibration returns the engine's calibration: the caller's, else the cached
// one of this host and GPU, else a fresh measurement (cached for next time).
// Only an engine with a GPU needs one: a CPU-only plan has one choice.
func (e *Engine) calibration(ctx context.Context) planner.Calibration {
	e.calOnce.Do(func() { e.calibrate(ctx) })
	return e.cal
}

// calibrate sets e.cal (once) and the sizes below which the CPU is certain
// to win.
func (e *Engine) calibrate(ctx context.Context) {
	defer func() {
		e.certain[0] = e.cal.CPUCertainBytes(false, e.threads)
		e.certain[1] = e.cal.CPUCertainBytes(true, e.threads)
	}()
	func() {
		if e.calSet {
			return
		}
		host, _ := os.Hostname()
		gpuName := ""
		if n, ok := e.gpu.(interface{ DeviceName() string }); ok {
			gpuName = n.DeviceName()
		}
		path, err := planner.CachePath(host, gpuName)
		if err == nil {
			if cal, err := planner.Load(path); err == nil && cal.MaxThreads == e.threads {
				e.cal = cal
				return
			}
		}
		cal := e.measureCPU(ctx)
		cal.Host = host
		if c, ok := e.gpu.(GPUCalibrator); ok {
			if err := c.CalibrateGPU(ctx, &cal); err != nil {
				cal.GPU = "" // unusable figures: plan CPU-only rather than guess
			}
		}
		cal.MeasuredAt = time.Now().UTC()
		e.cal = cal
		// A measurement that ctx cut short is not cached: the next run
		// measures again instead of planning with its stand-in figures.
		if path != "" && ctx.Err() == nil && cal.Validate() == nil {
			_ = planner.Save(path, cal) // a cache: failing to write it costs a re-measure
		}
	}()
}

// measureCPU times the fused pass over a 128 MiB int64 column (larger than
// most caches: the rate of data in memory) with one goroutine and with all of
// them, best of three each.
func (e *Engine) measureCPU(ctx context.Context) planner.Calibration {
	const n = 16 << 20
	buf := memory.NewResizableBuffer(memory.DefaultAllocator)
	defer buf.Release()
	buf.Resize(n * 8)
	vals := column.Slice[int64](buf.Bytes())
	for i := range vals {
		vals[i] = int64(uint64(i)*2654435761) >> 7
	}
	v := column.View{Type: arrow.PrimitiveTypes.Int64, Kind: column.Int64, Len: n, Values: buf.Bytes()}
	timeIt := func(threads int) float64 {
		c := &CPU{Threads: threads}
		best := time.Duration(math.MaxInt64)
		for rep := 0; rep < 3; rep++ {
			s := NewState(v.Kind.Family())
			start := time.Now()
			views, states := [1]*column.View{&v}, [1]*State{&s}
			if err := c.Update(ctx, views[:], states[:]); err != nil {
				return 0
			}
			best = min(best, time.Since(start))
		}
		return float64(n*8) / best.Seconds()
	}
	one := timeIt(1)
	all := one
	if e.threads > 1 {
		all = max(one, timeIt(e.threads))
	}
	if one <= 0 {
		return planner.Defaults(e.threads)
	}
	const overhead = 5 * time.Microsecond
	cal := planner.Calibration{Version: planner.Version, CPUPerThread: one, CPUMax: all, MaxThreads: e.threads,
		CPUOverhead: overhead, HostMemory: memoryRate(vals, e.threads)}
	// The same buffer as finite float64 values, for the float rate.
	floats := column.Slice[float64](buf.Bytes())
	for i := range floats {
		floats[i] = float64(i%1000003) * 0.25
	}
	v.Type, v.Kind = arrow.PrimitiveTypes.Float64, column.Float64
	if f := timeIt(1); f > 0 {
		cal.CPUFloat = min(1, f/one)
	}
	if e.threads > 1 {
		// One morsel per goroutine, of int32 values (the sizes around which
		// the CPU and a GPU launch cross over), on planner.FewWorkers
		// goroutines and on all of them: what a call costs beyond its bytes
		// at the full rate is the cost of spreading it. Measured as the
		// GPU's launch is (calls back to back, the best of several), on data
		// not in the caches (another part of the buffer each time, parts
		// read longest ago first). After a pause of 200 µs before each call
		// (the goroutines' threads parked) it measured 103 µs on 16
		// goroutines of the H100 host, more than a whole 4 MiB call took
		// back to back (72 µs): planned with it, auto sent such columns to
		// the GPU at 4.5 times the CPU's time.
		part := 0
		fanout := func(w int) time.Duration {
			m := w * MorselSize // int32 elements
			c := &CPU{Threads: w}
			best := time.Duration(math.MaxInt64)
			for rep := 0; rep < 7; rep++ {
				if (part+1)*m*4 > len(v.Values) {
					part = 0
				}
				sub := column.View{Type: arrow.PrimitiveTypes.Int32, Kind: column.Int32, Len: m,
					Values: v.Values[part*m*4 : (part+1)*m*4]}
				part++
				s := NewState(column.FamilySigned)
				start := time.Now()
				views, states := [1]*column.View{&sub}, [1]*State{&s}
				if err := c.Update(ctx, views[:], states[:]); err != nil {
					return 0
				}
				best = min(best, time.Since(start))
			}
			return max(0, best-overhead-time.Duration(float64(m*4)/all*float64(time.Second)))
		}
		cal.CPUFanout = fanout(e.threads)
		if e.threads > planner.FewWorkers {
			cal.CPUFanoutFew = min(fanout(planner.FewWorkers), cal.CPUFanout)
		}
	}
	return cal
}

// memoryRate is the host's memory read rate: arrow's SIMD sum over vals in
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
				sums[w] = amath.Int64.Sum(array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, len(part),
					[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(part))}, nil, 0, 0)))
			}(w, vals[lo:hi])
		}
		wg.Wait()
		best = min(best, time.Since(start))
	}
	return float64(len(vals)*8) / best.Seconds()
}

// ColumnPlan is how one column was aggregated: the planner's choice and its
// estimate, and what it took, summed over the record batches.
type ColumnPlan struct {
	Name        string
	Backend     string // "cpu", "gpu" or "cpu+gpu"
	Location    string // where the data lived: host, pinned or device
	Bytes       int64
	GPUFraction float64
	Estimated   time.Duration
	Measured    time.Duration
	Reason      string

	why planWhy // what Plan formats Reason from, when Reason is empty
}

// planWhy is what a plan's reason is made of. Batches only record it; the
// text is formatted when a plan is asked for, off the path of every batch.
type planWhy struct {
	dec    planner.Decision
	hasDec bool
	note   string // before the decision's reason
	// resident: aggregated on the device by a Residency (use says how).
	resident bool
	use      use
	read     float64     // the calibration's device read rate, 0 if none
	race     contestNote // a contested resident column's choice (contest.go)
}

func (w *planWhy) String() string {
	r := w.note
	switch {
	case w.resident:
		r = residentReason(w.use, w.read)
	case w.hasDec:
		r = w.dec.Reason()
		if w.note != "" {
			r = w.note + "; " + r
		}
	}
	if w.race.contested {
		if r == "" {
			return w.race.String()
		}
		r = w.race.String() + "; " + r
	}
	return r
}

// decided records the planner's decision d as the plan's choice and reason.
func (p *ColumnPlan) decided(d planner.Decision, note string) {
	p.Backend, p.GPUFraction, p.Reason = d.Backend.String(), d.GPUFraction, ""
	p.why = planWhy{dec: d, hasDec: true, note: note}
}

// merge adds o's totals to p (accumulators of later batches or files); the
// latest choice and reason win.
func (p *ColumnPlan) merge(o ColumnPlan) {
	if o.Backend != "" {
		p.Backend, p.Location, p.GPUFraction, p.Reason, p.why = o.Backend, o.Location, o.GPUFraction, o.Reason, o.why
	}
	p.Bytes += o.Bytes
	p.Estimated += o.Estimated
	p.Measured += o.Measured
}

// Plan reports how each column was aggregated so far, in result order
// (unsupported columns have an empty Backend and their error as Reason).
func (a *Accumulator) Plan() []ColumnPlan {
	out := make([]ColumnPlan, len(a.leaves))
	for i, l := range a.leaves {
		out[i] = a.plans[i]
		out[i].Name = l.Name
		switch {
		case !l.Supported():
			out[i].Reason = l.Err.Error()
		case out[i].Reason == "":
			out[i].Reason = out[i].why.String()
		}
	}
	return out
}

// OrderedGPU is implemented by GPU backends that compute the ordered
// aggregates (States with Ordered set); without it such columns stay on the
// CPU.
type OrderedGPU interface {
	SupportsOrdered() bool
}

// gpuTakes reports whether the GPU backend can aggregate v into a state like s.
func (e *Engine) gpuTakes(v *column.View, s *State) bool {
	if e.gpu == nil || !e.gpu.Handles(v) {
		return false
	}
	if s.Ordered() {
		o, ok := e.gpu.(OrderedGPU)
		return ok && o.SupportsOrdered()
	}
	return true
}

// cpuCertain reports, without planning, that the CPU takes v whatever else
// the planner would weigh: the CPU is done before a GPU launch returns. It
// keeps small columns free of the planner's cost.
func (e *Engine) cpuCertain(ctx context.Context, v *column.View) bool {
	e.calOnce.Do(func() { e.calibrate(ctx) })
	if v.Len <= MorselSize { // one goroutine: a size threshold, worked out once
		f := 0
		if v.Kind.Family() == column.FamilyFloat {
			f = 1
		}
		return v.ByteSize() < e.certain[f]
	}
	return e.cal.CPUTime(planColumn(v), e.threads) < e.cal.Launch
}

// planColumn is what the planner knows of v.
func planColumn(v *column.View) planner.Column {
	return planner.Column{Bytes: v.ByteSize(), Values: int64(v.Len), Float: v.Kind.Family() == column.FamilyFloat}
}

// planBatch decides where each view of a batch goes. Where a column's memory
// lives (an inquiry of the GPU backend) is asked only for the columns that
// the GPU could take at all.
func (e *Engine) planBatch(ctx context.Context, views []*column.View, states []*State) []planner.Decision {
	cols := make([]planner.Column, len(views))
	for i, v := range views {
		cols[i] = planColumn(v)
		cols[i].GPUCapable = e.gpuTakes(v, states[i])
	}
	force := planner.Auto
	switch e.device {
	case DeviceCPU:
		force = planner.ForceCPU
	case DeviceGPU:
		force = planner.ForceGPU
	}
	cal := planner.Defaults(e.threads) // a CPU-only plan needs no measurement
	if e.gpu != nil && force != planner.ForceCPU {
		cal = e.calibration(ctx)
	}
	opt := planner.Options{Threads: e.threads, Force: force, MinSplitBytes: e.minSplit}
	plan := planner.Plan(cols, cal, opt)
	if loc, ok := e.gpu.(Locator); ok && e.gpu != nil {
		again := false
		for i, d := range plan {
			// Page-locked memory is read faster and can be split: ask for the
			// columns the GPU takes or nearly does, and for every column large
			// enough to split.
			if d.Backend != planner.CPU || (cols[i].GPUCapable &&
				(cols[i].Bytes >= opt.MinSplitBytes || d.GPUTime > 0 && d.GPUTime < 2*d.CPUTime)) {
				if l := loc.Locate(views[i]); l != planner.Host {
					cols[i].Location, again = l, true
				}
			}
		}
		if again {
			plan = planner.Plan(cols, cal, opt)
		}
	}
	return plan
}

// subView returns elements [lo, hi) of v as a view of its own.
func subView(v *column.View, lo, hi int) *column.View {
	s := *v
	s.Offset += lo
	s.ValidityOffset += lo
	s.Row += int64(lo)
	s.Len = hi - lo
	if s.Validity != nil {
		s.NullCount = s.Len - bitutil.CountSetBits(s.Validity, s.ValidityOffset, s.Len)
		if s.NullCount == 0 {
			s.Validity = nil
		}
	}
	return &s
}

// execute runs one batch's plan: the GPU's share and the CPU's share at the
// same time, then merges each column's GPU part before its CPU part.
func (e *Engine) execute(ctx context.Context, views []*column.View, states []*State, plan []planner.Decision, took []time.Duration) error {
	var gv, cv []*column.View
	var gs, cs []*State
	var gi, ci []int // which column each work item belongs to
	var splits []State
	for i, v := range views {
		d := plan[i]
		switch d.Backend {
		case planner.GPU:
			gv, gs, gi = append(gv, v), append(gs, states[i]), append(gi, i)
		case planner.Split:
			// The GPU takes the first part (whole morsels), the CPU the rest.
			k := int(float64(v.Len)*d.GPUFraction) / MorselSize * MorselSize
			if k == 0 || k >= v.Len {
				cv, cs, ci = append(cv, v), append(cs, states[i]), append(ci, i)
				continue
			}
			part := states[i].Identity()
			splits = append(splits, part)
			gv, gi = append(gv, subView(v, 0, k)), append(gi, i)
			cv, ci = append(cv, subView(v, k, v.Len)), append(ci, i)
			gs = append(gs, states[i])
			cs = append(cs, nil) // filled below, once splits stops growing
		default:
			cv, cs, ci = append(cv, v), append(cs, states[i]), append(ci, i)
		}
	}
	// Split columns: the CPU part goes into a state of its own, merged after
	// the GPU part so that the order of merges is fixed.
	k := 0
	for j := range cs {
		if cs[j] == nil {
			cs[j] = &splits[k]
			k++
		}
	}
	// Each backend leaves its states untouched when it fails; so that a
	// failed batch changes no state at all, the GPU works into states of
	// its own and the CPU's morsels are merged in only once both succeeded.
	gpuStates := gs
	if len(gv) > 0 && len(cv) > 0 {
		own := make([]State, len(gs))
		gpuStates = make([]*State, len(gs))
		for j, s := range gs {
			own[j] = s.Identity()
			gpuStates[j] = &own[j]
		}
	}
	var wg sync.WaitGroup
	var gpuErr error
	var gpuTook time.Duration
	if len(gv) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			gpuErr = e.gpu.Update(ctx, gv, gpuStates)
			gpuTook = time.Since(start)
		}()
	}
	var cpuErr error
	var sc *cpuScratch
	start := time.Now()
	if len(cv) > 0 {
		sc, cpuErr = e.cpu.compute(ctx, cv, cs)
		defer e.cpu.done(sc)
	}
	cpuTook := time.Since(start)
	wg.Wait()
	if gpuErr != nil {
		return fmt.Errorf("on the %s: %w", e.gpu.Name(), gpuErr)
	}
	if cpuErr != nil {
		return fmt.Errorf("on the cpu: %w", cpuErr)
	}
	for j := range gs {
		if gpuStates[j] != gs[j] {
			gs[j].Merge(gpuStates[j])
		}
	}
	if sc != nil {
		sc.commit(cs)
	}
	for j := range cv {
		if i := ci[j]; cs[j] != states[i] {
			states[i].Merge(cs[j]) // a split column's CPU part, after its GPU part
		}
	}
	// Every column of a batch shares the batch's wall time by backend.
	for _, i := range gi {
		took[i] = max(took[i], gpuTook)
	}
	for _, i := range ci {
		took[i] = max(took[i], cpuTook)
	}
	return nil
}
