package core

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/planner"
)

// MorselSize is the CPU backend's morsel (backend/cpu): UpdateView folds a
// view of at most this many values on the caller's goroutine, and views cut
// at multiples of it fold into the same morsels, whatever the cut. A source
// that runs its own tasks in parallel (the Parquet page path) sizes its views
// by it.
const MorselSize = cpu.MorselSize

// Allocator is the allocator of the buffers a front end makes for the
// engine (combined validity bitmaps, result scalars): the methods of Arrow
// Go's memory.Allocator, which every Arrow Go version's allocators have.
type Allocator interface {
	Allocate(size int) []byte
	Reallocate(size int, b []byte) []byte
	Free(b []byte)
}

// Engine aggregates column views into partial states: it plans each view on
// the CPU, the GPU or both, and runs the plan. It is safe for concurrent use
// by many goroutines; one Engine per process is the intended use.
type Engine struct {
	// groupScratch holds the grouping workers' reusable memory
	// (*groupScratch), batch after batch.
	groupScratch sync.Pool

	mem     Allocator // nil: the front end's default
	threads int
	device  Device
	cpu     *cpu.CPU
	gpu     backend.GPUBackend // nil: CPU only
	// gpuShared: the GPU backend came from WithGPU and is the caller's to close.
	gpuShared bool
	gpuCfg    backend.GPUConfig
	minSplit  int64 // planner.Options.MinSplitBytes (planner.SplitFrom)

	cal     planner.Calibration
	calSet  bool
	calOnce sync.Once
	calDone atomic.Bool // calibrate has set cal
	// cached: the calibration cached for this host's GPU, looked up once
	// (cachedCalibration), from New under DeviceAuto.
	cachedOnce sync.Once
	cached     planner.Calibration
	cachedOK   bool
	// gpuFailed: the GPU backend, opened lazily, found no usable device
	// (backend.Prober); the engine plans on the CPU alone.
	gpuFailed atomic.Bool
	// certain: the sizes in bytes (integers, floats) below which a column of
	// one morsel is aggregated on the CPU before a GPU launch returns.
	certain [2]int64
}

// Option configures an Engine.
type Option func(*Engine)

// WithAllocator sets the allocator of the buffers the front ends make for
// the engine (combined validity bitmaps of struct leaves, result scalars);
// default (nil), the front end's default allocator.
func WithAllocator(mem Allocator) Option { return func(e *Engine) { e.mem = mem } }

// Allocator is the allocator WithAllocator set, nil for the default.
func (e *Engine) Allocator() Allocator { return e.mem }

// WithThreads sets how many goroutines the CPU backend uses; default
// runtime.GOMAXPROCS(0). Results do not depend on it.
func WithThreads(n int) Option { return func(e *Engine) { e.threads = n } }

// WithDevice sets the device policy; default DeviceAuto.
func WithDevice(d Device) Option { return func(e *Engine) { e.device = d } }

// WithGPU makes the engine use b as its GPU backend (instead of opening the
// registered one). The engine does not close it.
func WithGPU(b backend.GPUBackend) Option { return func(e *Engine) { e.gpu, e.gpuShared = b, true } }

// WithGPUMemoryLimit caps the device memory of the GPU backend the engine
// opens (bytes; 0, the default, for no cap): larger columns stream through
// the device in chunks that fit.
func WithGPUMemoryLimit(n int64) Option { return func(e *Engine) { e.gpuCfg.MemoryLimit = n } }

// WithMinSplitBytes sets the smallest column the planner considers splitting
// between the CPU and the GPU (default planner.Options' default).
func WithMinSplitBytes(n int64) Option { return func(e *Engine) { e.minSplit = n } }

// New returns an Engine. With DeviceGPU it fails when no GPU backend can be
// opened; with DeviceAuto it falls back to the CPU. A GPU backend that sets
// its device up lazily (backend.Prober, like the CUDA backend) costs nothing
// here under DeviceAuto: its driver is initialized when a plan first needs a
// calibration, its context when work first goes to it.
func New(opts ...Option) (*Engine, error) {
	e := &Engine{threads: runtime.GOMAXPROCS(0)}
	for _, o := range opts {
		o(e)
	}
	if e.threads < 1 {
		e.threads = 1
	}
	e.minSplit = planner.SplitFrom(e.minSplit)
	e.cpu = &cpu.CPU{Threads: e.threads}
	if e.gpu == nil && e.device != DeviceCPU && backend.GPUBuiltIn() {
		g, err := backend.OpenGPU(e.gpuCfg)
		switch {
		case err == nil:
			e.gpu = g
		case e.device == DeviceGPU:
			return nil, err
		}
	}
	if e.device == DeviceGPU && e.gpu != nil {
		// A backend that sets its device up lazily is asked now whether
		// there is one, so that DeviceGPU fails here, clearly.
		if err := e.probe(); err != nil {
			if !e.gpuShared {
				e.gpu.Close() //nolint:errcheck // nothing was opened
			}
			e.gpu = nil
			return nil, fmt.Errorf("%w: %w", backend.ErrNoGPU, err)
		}
	}
	if e.device == DeviceGPU && e.gpu == nil {
		_, err := backend.OpenGPU(e.gpuCfg)
		return nil, err
	}
	if e.device == DeviceCPU {
		e.gpu = nil
	}
	if e.device == DeviceAuto && e.gpu != nil && !e.calSet {
		// The cached calibration is looked up (files only, no driver) while
		// the caller opens its input, so that the first plan finds it ready.
		go e.cachedCalibration()
	}
	return e, nil
}

// Close releases the GPU backend the engine opened.
func (e *Engine) Close() error {
	if e.gpu != nil && !e.gpuShared {
		err := e.gpu.Close()
		e.gpu = nil
		return err
	}
	return nil
}

// Threads is the CPU backend's goroutine count.
func (e *Engine) Threads() int { return e.threads }

// HasGPU reports whether the engine has a GPU backend to plan with. A
// backend that sets its device up lazily (backend.Prober) counts until the
// engine has found it has no device (when it first needed one).
func (e *Engine) HasGPU() bool { return e.gpu != nil && !e.gpuFailed.Load() }

// probe asks a GPU backend that sets its device up lazily whether it has one
// (backend.Prober; nil for other backends). The backend answers once and
// then repeats itself.
func (e *Engine) probe() error {
	p, ok := e.gpu.(backend.Prober)
	if !ok {
		return nil
	}
	err := p.Probe()
	if err != nil {
		e.gpuFailed.Store(true)
	}
	return err
}

// Device is the engine's device policy.
func (e *Engine) Device() Device { return e.device }

// UpdateView folds one column view into a state where the planner puts it
// (CPU, GPU or both). Without a GPU it is the CPU backend's allocation-free
// core under every other entry point.
func (e *Engine) UpdateView(ctx context.Context, v *column.View, s *agg.State) error {
	_, err := e.FoldView(ctx, v, s)
	return err
}

// FoldView is UpdateView, and says where v went: the planner's decision,
// or the CPU (a zero Decision) where the engine did not ask the planner
// (no GPU, or the CPU certain), so that a caller that plans its own
// source's reading can tell which backend aggregated it.
func (e *Engine) FoldView(ctx context.Context, v *column.View, s *agg.State) (planner.Decision, error) {
	if e.gpu == nil || (e.device == DeviceAuto && (e.tinyFirst(v) || e.smallJobFirst(ctx) || e.cpuCertain(ctx, v) ||
		e.cal.CPUWherever(planner.ColumnOf(v), e.threads, e.minSplit))) {
		views, states := [1]*column.View{v}, [1]*agg.State{s} // on the stack
		return planner.Decision{}, e.cpu.Update(ctx, views[:], states[:])
	}
	views, states := []*column.View{v}, []*agg.State{s}
	plan := e.planBatch(ctx, views, states)
	took := make([]time.Duration, 1)
	return plan[0], e.execute(ctx, views, states, plan, took)
}

// PlanView is the planner's decision for aggregating v into a state like s,
// without aggregating it.
func (e *Engine) PlanView(ctx context.Context, v *column.View, s *agg.State) planner.Decision {
	return e.planBatch(ctx, []*column.View{v}, []*agg.State{s})[0]
}
