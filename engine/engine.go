package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/planner"
)

// MorselSize is the CPU backend's morsel (backend/cpu): UpdateView folds a
// view of at most this many values on the caller's goroutine, and views cut
// at multiples of it fold into the same morsels, whatever the cut. A source
// that runs its own tasks in parallel (the Parquet page path) sizes its views
// by it.
const MorselSize = cpu.MorselSize

// Engine aggregates Arrow data. It is safe for concurrent use by many
// goroutines; one Engine per process is the intended use.
type Engine struct {
	mem     memory.Allocator
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

// WithAllocator sets the allocator for the engine's own buffers (combined
// validity bitmaps of struct leaves, result scalars); default
// memory.DefaultAllocator.
func WithAllocator(mem memory.Allocator) Option { return func(e *Engine) { e.mem = mem } }

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
	e := &Engine{mem: memory.DefaultAllocator, threads: runtime.GOMAXPROCS(0)}
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

// Request names what to aggregate.
//
// A column that cannot be aggregated (a list, a map, a type arrowagg does not
// read) is reported one of two ways, by one rule: named by the caller (in
// Columns, or as the array of AggregateArray and AggregateChunked), it is an
// error of the call, wrapping arrow.ErrNotImplemented; met as one of every
// leaf (Columns empty), it is that column's Result.Err and the others are
// aggregated.
type Request struct {
	// Columns are leaf names (dotted for struct fields), or paths of the
	// elements of lists and maps ("tags[]", "m{key}", "m{value}",
	// "items[].price": arrow17.ResolveElement), whose values are the
	// elements that exist and whose ordered aggregates number elements;
	// empty means every leaf of the schema (no element columns),
	// unsupported ones included with their Err set.
	// Naming an unknown column is an error wrapping ErrUnknownColumn, naming
	// an unsupported one an error wrapping arrow.ErrNotImplemented.
	Columns []string
	// Aggs is the set of aggregates; 0 means AllAggs.
	Aggs agg.Set
}

// ErrUnknownColumn is wrapped by errors for requested columns the schema lacks.
var ErrUnknownColumn = errors.New("unknown column")

// Resolve returns the leaves of schema that req selects, in request order (in
// schema order when req names none, unsupported leaves included with their
// Err). A named leaf that is unsupported is an error: its Err, which wraps
// arrow.ErrNotImplemented. A name may be the path of the elements of a list
// or a map ("tags[]", "m{key}": arrow17.ResolveElement); a path that does not
// apply to its column is an error wrapping ErrUnknownColumn that says why.
func (req Request) Resolve(schema *arrow.Schema) ([]arrow17.Leaf, error) {
	all := arrow17.Leaves(schema)
	if len(req.Columns) == 0 {
		return all, nil
	}
	out := make([]arrow17.Leaf, 0, len(req.Columns))
	find := func(name string) (arrow17.Leaf, bool) { return arrow17.Find(all, name) }
	if len(req.Columns) > 8 { // (a map pays off)
		ix := arrow17.NewIndex(all)
		find = func(name string) (arrow17.Leaf, bool) {
			i, ok := ix.Find(name)
			if !ok {
				return arrow17.Leaf{}, false
			}
			return all[i], true
		}
	}
	for _, name := range req.Columns {
		l, ok := find(name)
		if !ok {
			var err error
			if l, ok, err = arrow17.ResolveElement(schema, name); err != nil {
				return nil, fmt.Errorf("%w %q: %w", ErrUnknownColumn, name, err)
			}
		}
		if !ok {
			return nil, fmt.Errorf("%w %q (columns: %s)", ErrUnknownColumn, name, arrow17.Names(all))
		}
		if !l.Supported() {
			return nil, l.Err
		}
		out = append(out, l)
	}
	return out, nil
}

func (req Request) aggs() agg.Set { return agg.Normalize(req.Aggs) }

// Accumulator aggregates a stream of record batches of one schema into one
// partial state per requested column. Batches are folded in the order they
// are added. It is not safe for concurrent use; the Engine behind it is.
type Accumulator struct {
	e      *Engine
	schema *arrow.Schema
	leaves []arrow17.Leaf
	aggs   agg.Set
	states []agg.State

	views  []*column.View
	ptrs   []*agg.State
	active []int
	cols   []arrow17.Column // one per leaf, reused batch after batch
	took   []time.Duration
	plans  []ColumnPlan // per leaf, summed over batches
	rows   int64        // rows added so far: the row of the next batch's first row
	// elems, per element column (Leaf.Repeated), is the elements added so
	// far: the position of the next batch's first element (the ordered
	// aggregates of an element column report elements, not rows).
	elems []int64
}

// NewAccumulator starts aggregating record batches of schema.
func (e *Engine) NewAccumulator(schema *arrow.Schema, req Request) (*Accumulator, error) {
	leaves, err := req.Resolve(schema)
	if err != nil {
		return nil, err
	}
	a := &Accumulator{e: e, schema: schema, leaves: leaves, aggs: req.aggs(), states: make([]agg.State, len(leaves)),
		cols: make([]arrow17.Column, len(leaves)), plans: make([]ColumnPlan, len(leaves)), elems: make([]int64, len(leaves))}
	for i, l := range leaves {
		a.states[i] = agg.New(l.Kind.Family(), a.aggs)
	}
	return a, nil
}

// Leaves are the columns the accumulator aggregates, in result order.
func (a *Accumulator) Leaves() []arrow17.Leaf { return a.leaves }

// States are the partial states so far, one per leaf (unsupported leaves keep
// an empty state).
func (a *Accumulator) States() []agg.State { return a.states }

// Add folds one record batch into the states.
func (a *Accumulator) Add(ctx context.Context, rec arrow.Record) error {
	if !rec.Schema().Equal(a.schema) {
		return fmt.Errorf("record batch schema %s does not match %s", rec.Schema(), a.schema)
	}
	a.views, a.ptrs, a.active = a.views[:0], a.ptrs[:0], a.active[:0]
	defer a.releaseColumns()
	for i, l := range a.leaves {
		if !l.Supported() {
			continue
		}
		c := &a.cols[i]
		if err := arrow17.Extract(c, rec, l, a.e.mem); err != nil {
			return err
		}
		if l.Repeated > 0 {
			c.StartAt(a.elems[i])
			a.elems[i] += c.Elements()
		} else {
			c.StartAt(a.rows)
		}
		a.views = append(a.views, &c.View)
		a.ptrs = append(a.ptrs, &a.states[i])
		a.active = append(a.active, i)
	}
	if len(a.views) == 0 {
		a.rows += rec.NumRows()
		return nil
	}
	plan := a.e.planBatch(ctx, a.views, a.ptrs)
	a.took = append(a.took[:0], make([]time.Duration, len(a.views))...)
	if err := a.e.execute(ctx, a.views, a.ptrs, plan, a.took); err != nil {
		return fmt.Errorf("aggregating %s: %w", a.leafNames(), err)
	}
	for k, i := range a.active {
		a.plans[i].Add(decided(plan[k], a.e.locate(a.views[k]), a.views[k].ByteSize(), a.took[k], ""))
	}
	// The elements of an element column that are not contiguous in its
	// leaf array (under null lists): a view each, after the first.
	for _, i := range a.active {
		for k := range a.cols[i].Rest() {
			v := &a.cols[i].Rest()[k]
			start := time.Now()
			if err := a.e.UpdateView(ctx, v, &a.states[i]); err != nil {
				return fmt.Errorf("aggregating column %q: %w", a.leaves[i].Name, err)
			}
			a.plans[i].Add(decided(a.e.PlanView(ctx, v, &a.states[i]), a.e.locate(v), v.ByteSize(), time.Since(start), ""))
		}
	}
	a.rows += rec.NumRows()
	return nil
}

// Rows is the number of rows added so far (merged accumulators' included).
func (a *Accumulator) Rows() int64 { return a.rows }

func (a *Accumulator) releaseColumns() {
	for i := range a.cols {
		a.cols[i].Release()
	}
}

func (a *Accumulator) leafNames() string {
	if len(a.active) == 1 {
		return fmt.Sprintf("column %q", a.leaves[a.active[0]].Name)
	}
	return fmt.Sprintf("%d columns", len(a.active))
}

// Merge folds the states of another accumulator of the same request into a,
// after a's own (for example a later file of the same dataset): o's rows
// follow a's.
func (a *Accumulator) Merge(o *Accumulator) error {
	if len(o.states) != len(a.states) {
		return fmt.Errorf("merging accumulators of %d and %d columns", len(a.states), len(o.states))
	}
	for i := range a.states {
		if a.leaves[i].Name != o.leaves[i].Name || !arrow.TypeEqual(a.leaves[i].Type, o.leaves[i].Type) {
			return fmt.Errorf("merging column %q (%s) with %q (%s)", a.leaves[i].Name, a.leaves[i].Type, o.leaves[i].Name, o.leaves[i].Type)
		}
	}
	a.mergeStates(o.states, o.rows)
	for i := range a.plans {
		a.plans[i].Add(o.plans[i])
	}
	return nil
}

// mergeStates merges the partial states of rows more rows after a's.
func (a *Accumulator) mergeStates(states []agg.State, rows int64) {
	for i := range a.states {
		o := states[i]
		if a.leaves[i].Repeated > 0 { // positions of elements
			o.ShiftRows(a.elems[i])
			a.elems[i] += o.Count + o.NullCount
		} else {
			o.ShiftRows(a.rows)
		}
		a.states[i].Merge(&o)
	}
	a.rows += rows
}

// Results finalizes the states.
func (a *Accumulator) Results() []Result {
	out := make([]Result, len(a.leaves))
	for i, l := range a.leaves {
		if !l.Supported() {
			out[i] = Result{Name: l.Name, Type: l.Type, Err: l.Err}
			continue
		}
		out[i] = Finalize(&a.states[i], l.Name, l.Type, a.aggs)
	}
	return out
}

// Aggregate reads every record batch of rdr and returns the aggregates of the
// requested columns. It does not release rdr.
func (e *Engine) Aggregate(ctx context.Context, rdr array.RecordReader, req Request) ([]Result, error) {
	acc, err := e.NewAccumulator(rdr.Schema(), req)
	if err != nil {
		return nil, err
	}
	for rdr.Next() {
		if err := acc.Add(ctx, rdr.Record()); err != nil {
			return nil, err
		}
	}
	if err := rdr.Err(); err != nil {
		return nil, fmt.Errorf("reading record batches: %w", err)
	}
	return acc.Results(), nil
}

// UpdateView folds one column view into a state where the planner puts it
// (CPU, GPU or both). Without a GPU it is the CPU backend's allocation-free
// core under every other entry point.
func (e *Engine) UpdateView(ctx context.Context, v *column.View, s *agg.State) error {
	if e.gpu == nil || (e.device == DeviceAuto && (e.tinyFirst(v) || e.cpuCertain(ctx, v) ||
		e.cal.CPUWherever(planner.ColumnOf(v), e.threads, e.minSplit))) {
		views, states := [1]*column.View{v}, [1]*agg.State{s} // on the stack
		return e.cpu.Update(ctx, views[:], states[:])
	}
	views, states := []*column.View{v}, []*agg.State{s}
	plan := e.planBatch(ctx, views, states)
	took := make([]time.Duration, 1)
	return e.execute(ctx, views, states, plan, took)
}

// PlanView is the planner's decision for aggregating v into a state like s,
// without aggregating it.
func (e *Engine) PlanView(ctx context.Context, v *column.View, s *agg.State) planner.Decision {
	return e.planBatch(ctx, []*column.View{v}, []*agg.State{s})[0]
}

// AggregateRecord aggregates the columns of one record batch.
func (e *Engine) AggregateRecord(ctx context.Context, rec arrow.Record, req Request) ([]Result, error) {
	acc, err := e.NewAccumulator(rec.Schema(), req)
	if err != nil {
		return nil, err
	}
	if err := acc.Add(ctx, rec); err != nil {
		return nil, err
	}
	return acc.Results(), nil
}

// AggregateTable aggregates the columns of a table, chunk by chunk.
func (e *Engine) AggregateTable(ctx context.Context, tbl arrow.Table, req Request) ([]Result, error) {
	rdr := array.NewTableReader(tbl, -1)
	defer rdr.Release()
	return e.Aggregate(ctx, rdr, req)
}

// AggregateArray aggregates one array as one column. A struct array of one
// leaf (however deep) aggregates that leaf, with the struct's nulls; a struct
// array of several leaves is an error wrapping arrow.ErrNotImplemented (put
// it in a record and use AggregateRecord for every leaf), as is an array of a
// type arrowagg does not aggregate (a list, a map, the null type).
func (e *Engine) AggregateArray(ctx context.Context, arr arrow.Array, aggs agg.Set) (Result, error) {
	ch := arrow.NewChunked(arr.DataType(), []arrow.Array{arr})
	defer ch.Release()
	return e.AggregateChunked(ctx, ch, aggs)
}

// AggregateChunked aggregates the chunks of a chunked array as one column,
// as AggregateArray does one array.
func (e *Engine) AggregateChunked(ctx context.Context, ch *arrow.Chunked, aggs agg.Set) (Result, error) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "", Type: ch.DataType(), Nullable: true}}, nil)
	acc, err := e.NewAccumulator(schema, Request{Aggs: aggs})
	if err != nil {
		return Result{}, err
	}
	if len(acc.leaves) != 1 {
		return Result{}, fmt.Errorf("%w: array of type %s has %d leaves; aggregate it as a record", arrow.ErrNotImplemented, ch.DataType(), len(acc.leaves))
	}
	if !acc.leaves[0].Supported() {
		return Result{}, acc.leaves[0].Err
	}
	for _, chunk := range ch.Chunks() {
		rec := array.NewRecord(schema, []arrow.Array{chunk}, int64(chunk.Len()))
		err := acc.Add(ctx, rec)
		rec.Release()
		if err != nil {
			return Result{}, err
		}
	}
	return acc.Results()[0], nil
}
