package core

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/startup"
	"github.com/arrowagg/arrowagg/planner"
)

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
// Under DeviceAuto a GPU backend that sets its device up lazily is probed
// first: without a device the engine plans with Defaults, on the CPU alone,
// as an engine that could not open a GPU backend does.
func (e *Engine) calibrate(ctx context.Context) {
	var cached planner.Calibration
	fromCache := false
	if e.device == DeviceAuto && !e.calSet {
		cached, fromCache = e.cachedCalibration()
	}
	switch {
	case e.calSet:
	case fromCache:
		// planned from the cache, the driver untouched
		e.cal = cached
	case e.device == DeviceAuto && e.probe() != nil:
		e.cal = planner.Defaults(e.threads)
	default:
		e.cal = planner.Calibrate(ctx, e.threads, e.gpu)
	}
	e.certain[0] = e.cal.CPUCertainBytes(false, e.threads)
	e.certain[1] = e.cal.CPUCertainBytes(true, e.threads)
	e.calDone.Store(true)
}

// cachedCalibration returns the calibration cached for the GPU the backend
// names without initializing its driver (backend.NameHinter), and whether
// there was one; it looks once, reading files only. Planning host data on
// the CPU then costs no driver call at all; the device is set up (and
// probed) only when a plan sends work to it.
func (e *Engine) cachedCalibration() (planner.Calibration, bool) {
	e.cachedOnce.Do(func() {
		h, ok := e.gpu.(backend.NameHinter)
		if !ok {
			return
		}
		start := time.Now()
		name, ok := h.NameHint()
		startup.Trace("GPU named from files", start, nil)
		if !ok {
			return
		}
		e.cached, e.cachedOK = planner.Cached(e.threads, name)
	})
	return e.cached, e.cachedOK
}

// uncalibrated reports whether planning under DeviceAuto would have to load
// or measure a calibration first (which initializes the GPU's driver): the
// caller gave none and none was made yet. Until then, columns of at most
// planner.TinyBytes go to the CPU without one (planner.Tiny), so that small
// inputs never touch the GPU.
func (e *Engine) uncalibrated() bool {
	return e.device == DeviceAuto && !e.calSet && !e.calDone.Load()
}

// tinyFirst reports that v goes to the CPU without a calibration: it is
// tiny, and the engine has none yet (uncalibrated).
func (e *Engine) tinyFirst(v *column.View) bool {
	return v.ByteSize() <= planner.TinyBytes && e.uncalibrated()
}

// smallJobKey marks a context of WithSmallJob.
type smallJobKey struct{}

// WithSmallJob returns a context that marks the work done under it as one
// job whose whole work the caller estimated at less than the GPU's start
// on the CPU (planner.DeviceStart; for a Parquet file's pages,
// planner.PagesWorthAsking): no part of it can pay for opening the device.
// Under DeviceAuto, while the engine has no calibration, the views and
// batches aggregated under it go to the CPU without one (as tiny ones do:
// planner.PlanSmallJob), so that such a job never initializes the GPU's
// driver. Once the engine has a calibration (made for other work, read
// from the cache or given), the mark changes nothing.
func WithSmallJob(ctx context.Context) context.Context {
	return context.WithValue(ctx, smallJobKey{}, true)
}

// WantsJobSize reports whether a small job's mark (WithSmallJob) would
// change the engine's plans now: it has a GPU backend, under DeviceAuto,
// and no calibration yet. A caller sizes its job only then.
func (e *Engine) WantsJobSize() bool { return e.gpu != nil && e.uncalibrated() }

// smallJobFirst reports that work under ctx goes to the CPU without a
// calibration: it is part of a small job (WithSmallJob), and the engine has
// none yet (uncalibrated).
func (e *Engine) smallJobFirst(ctx context.Context) bool {
	small, _ := ctx.Value(smallJobKey{}).(bool)
	return small && e.uncalibrated()
}

// Source is where the values of a column's plan came from. Several sources
// combine when row groups of a Parquet file were answered from statistics
// and the others read.
type Source uint8

// The sources.
const (
	// SourceNone: nothing was aggregated (an unsupported column, or none
	// yet).
	SourceNone Source = 0
	// SourceArrow: Arrow arrays, given or decoded (record batches, tables,
	// Parquet through pqarrow, IPC), aggregated by the planner's backend.
	SourceArrow Source = 1 << (iota - 1)
	// SourcePages: Parquet pages aggregated where they lie, on the CPU.
	SourcePages
	// SourceStats: Parquet row-group statistics (the footer's metadata).
	SourceStats
)

func (s Source) String() string {
	var parts []string
	for _, x := range [...]struct {
		s    Source
		name string
	}{{SourceStats, "stats"}, {SourceArrow, "arrow"}, {SourcePages, "pages"}} {
		if s&x.s != 0 {
			parts = append(parts, x.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

// ColumnPlan is how one column was aggregated: the planner's choice and its
// estimate, and what it took, summed over the record batches (Add).
type ColumnPlan struct {
	Name string
	// Source is where the values came from; SourceNone when nothing was
	// aggregated.
	Source Source
	// Backend is the planner's choice of the latest batch: cpu, gpu or both
	// (planner.Split). BackendName is what plans print.
	Backend planner.Backend
	// Location is where the data lived: host, pinned or device memory.
	// LocationName is what plans print.
	Location    planner.Location
	Bytes       int64
	GPUFraction float64
	Estimated   time.Duration
	Measured    time.Duration
	Reason      string

	why planWhy // what Plan formats Reason from, when Reason is empty
}

// BackendName is the plan's backend as plans print it: "cpu", "gpu" or
// "cpu+gpu"; "stats" for a column answered from statistics alone, with the
// backend of the rest after "stats+" when only some row groups were; empty
// when nothing was aggregated.
func (p *ColumnPlan) BackendName() string {
	switch {
	case p.Source == SourceNone:
		return ""
	case p.Source == SourceStats:
		return "stats"
	case p.Source&SourceStats != 0:
		return "stats+" + p.Backend.String()
	}
	return p.Backend.String()
}

// LocationName is where the data lived as plans print it: "host", "pinned",
// "device", or "metadata" for a column answered from statistics alone.
func (p *ColumnPlan) LocationName() string {
	if p.Source == SourceStats {
		return "metadata"
	}
	return p.Location.String()
}

// Add folds the plan of later rows (a batch, a file, another accumulator's
// plan) into p: its choice, location and reason replace p's when it made one
// (its Source is set), its bytes and times add to p's.
func (p *ColumnPlan) Add(o ColumnPlan) {
	if o.Source != SourceNone {
		p.Source, p.Backend, p.Location, p.GPUFraction, p.Reason, p.why = o.Source, o.Backend, o.Location, o.GPUFraction, o.Reason, o.why
	}
	p.Bytes += o.Bytes
	p.Estimated += o.Estimated
	p.Measured += o.Measured
}

// decided is the plan of one batch of a column of Arrow data that the
// planner put on d's backend: bytes read from loc in took; note goes before
// the decision's reason.
func decided(d planner.Decision, loc planner.Location, bytes int64, took time.Duration, note string) ColumnPlan {
	return ColumnPlan{Source: SourceArrow, Backend: d.Backend, Location: loc, GPUFraction: d.GPUFraction,
		Bytes: bytes, Estimated: d.Estimate, Measured: took, why: planWhy{dec: d, hasDec: true, note: note}}
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
	read     float64             // the calibration's device read rate, 0 if none
	race     planner.ContestNote // a contested resident column's choice
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
	if w.race.Contested {
		if r == "" {
			return w.race.String()
		}
		r = w.race.String() + "; " + r
	}
	return r
}

// Plan reports how each column was aggregated so far, in result order
// (unsupported columns have no Source and their error as Reason).
func (a *Accumulator) Plan() []ColumnPlan {
	out := make([]ColumnPlan, len(a.cols))
	for i, l := range a.cols {
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

// gpuTakes reports whether the GPU backend can aggregate v into a state like s.
func (e *Engine) gpuTakes(v *column.View, s *agg.State) bool {
	return e.gpuHandles(v, s) && e.gpuComputes(v, s)
}

// gpuHandles reports whether the GPU backend handles v's type, and the
// ordered aggregates where s tracks them.
func (e *Engine) gpuHandles(v *column.View, s *agg.State) bool {
	if e.gpu == nil || !e.gpu.Handles(v) {
		return false
	}
	if s.Ordered() {
		o, ok := e.gpu.(backend.OrderedGPU)
		return ok && o.SupportsOrdered()
	}
	return true
}

// gpuComputes reports whether the GPU backend computes the statistics s
// tracks (stddev, variance, approx_distinct) of a view like v.
func (e *Engine) gpuComputes(v *column.View, s *agg.State) bool {
	if !s.Tracks.Any(agg.Moments | agg.ApproxDistinct) {
		return true
	}
	g, ok := e.gpu.(backend.StatsGPU)
	return ok && g.SupportsStats(v.Kind, s.Tracks)
}

// cpuCertain reports, without planning, that the CPU takes v whatever else
// the planner would weigh: the CPU is done before a GPU launch returns. It
// keeps small columns free of the planner's cost.
func (e *Engine) cpuCertain(ctx context.Context, v *column.View) bool {
	e.calOnce.Do(func() { e.calibrate(ctx) })
	if v.Len <= cpu.MorselSize { // one goroutine: a size threshold, worked out once
		f := 0
		if v.Kind.Family() == column.FamilyFloat {
			f = 1
		}
		return v.ByteSize() < e.certain[f]
	}
	return e.cal.CPUTime(planner.ColumnOf(v), e.threads) < e.cal.Launch
}

// contested reports whether the backend of resident column v is to be
// decided by measurement (planner.Calibration.Contested).
func (e *Engine) contested(ctx context.Context, v *column.View) bool {
	return e.calibration(ctx).Contested(planner.ColumnOf(v), e.threads)
}

// locator is the GPU backend's Locator, nil when it has none.
func (e *Engine) locator() backend.Locator {
	if loc, ok := e.gpu.(backend.Locator); ok && e.gpu != nil {
		return loc
	}
	return nil
}

// locate is where v's data lives, as the GPU backend tells.
func (e *Engine) locate(v *column.View) planner.Location {
	if loc := e.locator(); loc != nil {
		return loc.Locate(v)
	}
	return planner.Host
}

// planBatch decides where each view of a batch goes (planner.PlanViews),
// under the engine's device policy and calibration.
func (e *Engine) planBatch(ctx context.Context, views []*column.View, states []*agg.State) []planner.Decision {
	cols := make([]planner.Column, len(views))
	for i, v := range views {
		cols[i] = planner.ColumnOf(v)
		cols[i].GPUCapable = e.gpuHandles(v, states[i])
		cols[i].CPUAggs = cols[i].GPUCapable && !e.gpuComputes(v, states[i])
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
		if e.smallJobFirst(ctx) {
			return planner.PlanSmallJob(cols, e.threads)
		}
		if e.uncalibrated() {
			if plan, ok := planner.PlanTiny(cols, e.threads); ok {
				return plan // nothing the GPU could take is worth calibrating for
			}
		}
		cal = e.calibration(ctx)
	}
	opt := planner.Options{Threads: e.threads, Force: force, MinSplitBytes: e.minSplit}
	return planner.PlanViews(views, cols, cal, opt, e.locator())
}

// execute runs one batch's plan: the GPU's share and the CPU's share at the
// same time, then merges each column's GPU part before its CPU part.
func (e *Engine) execute(ctx context.Context, views []*column.View, states []*agg.State, plan []planner.Decision, took []time.Duration) error {
	var gv, cv []*column.View
	var gs, cs []*agg.State
	var gi, ci []int // which column each work item belongs to
	var splits []agg.State
	for i, v := range views {
		d := plan[i]
		switch d.Backend {
		case planner.GPU:
			gv, gs, gi = append(gv, v), append(gs, states[i]), append(gi, i)
		case planner.Split:
			// The GPU takes the first part (whole morsels), the CPU the rest.
			k := int(float64(v.Len)*d.GPUFraction) / cpu.MorselSize * cpu.MorselSize
			if k == 0 || k >= v.Len {
				cv, cs, ci = append(cv, v), append(cs, states[i]), append(ci, i)
				continue
			}
			splits = append(splits, states[i].Identity())
			head, tail := v.Sub(0, k), v.Sub(k, v.Len)
			gv, gi = append(gv, &head), append(gi, i)
			cv, ci = append(cv, &tail), append(ci, i)
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
		own := make([]agg.State, len(gs))
		gpuStates = make([]*agg.State, len(gs))
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
	var sc *cpu.Scratch
	start := time.Now()
	if len(cv) > 0 {
		sc, cpuErr = e.cpu.Compute(ctx, cv, cs)
		defer e.cpu.Done(sc)
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
		sc.Commit(cs)
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
