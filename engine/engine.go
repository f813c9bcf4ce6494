package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine/core"
)

// MorselSize is the CPU backend's morsel (backend/cpu): UpdateView folds a
// view of at most this many values on the caller's goroutine, and views cut
// at multiples of it fold into the same morsels, whatever the cut. A source
// that runs its own tasks in parallel (the Parquet page path) sizes its views
// by it.
const MorselSize = core.MorselSize

// Engine aggregates Arrow Go v17 data: the version-free engine (package
// engine/core: planning, backends, residency), whose methods it has, with
// the entry points of v17 arrays, records, tables and readers. It is safe
// for concurrent use by many goroutines; one Engine per process is the
// intended use.
type Engine struct {
	*core.Engine
	mem memory.Allocator
}

// Option configures an Engine (the core engine's options).
type Option = core.Option

// The device policy, how a column was aggregated, and the routes of
// Parquet chunks (the core's).
type (
	Device     = core.Device
	ColumnPlan = core.ColumnPlan
	Source     = core.Source
	PageColumn = core.PageColumn
	PageRoute  = core.PageRoute
)

// The sources of a ColumnPlan.
const (
	SourceNone  = core.SourceNone
	SourceArrow = core.SourceArrow
	SourcePages = core.SourcePages
	SourceStats = core.SourceStats
)

// The device policies.
const (
	DeviceAuto = core.DeviceAuto
	DeviceCPU  = core.DeviceCPU
	DeviceGPU  = core.DeviceGPU
)

// The engine's options but WithAllocator: the core's.
var (
	WithThreads        = core.WithThreads
	WithDevice         = core.WithDevice
	WithGPU            = core.WithGPU
	WithGPUMemoryLimit = core.WithGPUMemoryLimit
	WithMinSplitBytes  = core.WithMinSplitBytes
	WithCalibration    = core.WithCalibration
	ParseDevice        = core.ParseDevice
	WithSmallJob       = core.WithSmallJob
)

// WithAllocator sets the allocator for the engine's own buffers (combined
// validity bitmaps of struct leaves, result scalars); default
// memory.DefaultAllocator.
func WithAllocator(mem memory.Allocator) Option { return core.WithAllocator(mem) }

// New returns an Engine. With DeviceGPU it fails when no GPU backend can be
// opened; with DeviceAuto it falls back to the CPU. A GPU backend that sets
// its device up lazily (backend.Prober, like the CUDA backend) costs nothing
// here under DeviceAuto: its driver is initialized when a plan first needs a
// calibration, its context when work first goes to it.
func New(opts ...Option) (*Engine, error) {
	c, err := core.New(opts...)
	if err != nil {
		return nil, err
	}
	mem := memory.DefaultAllocator
	if a, ok := c.Allocator().(memory.Allocator); ok && a != nil {
		mem = a
	}
	return &Engine{Engine: c, mem: mem}, nil
}

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

// ErrDeviceMemory is matched by the errors of GPU work that found too
// little device memory at its smallest size (Engine.UpdatePages): no fault
// of the data, which can be read on the CPU instead.
var ErrDeviceMemory = core.ErrDeviceMemory

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

// Accumulator aggregates a stream of record batches of one schema into one
// partial state per requested column. Batches are folded in the order they
// are added. It is not safe for concurrent use; the Engine behind it is.
type Accumulator struct {
	e      *Engine
	c      *core.Accumulator
	schema *arrow.Schema
	leaves []arrow17.Leaf
	cols   []arrow17.Column // one per leaf, reused batch after batch
	parts  []core.Part
}

// NewAccumulator starts aggregating record batches of schema.
func (e *Engine) NewAccumulator(schema *arrow.Schema, req Request) (*Accumulator, error) {
	leaves, err := req.Resolve(schema)
	if err != nil {
		return nil, err
	}
	return &Accumulator{e: e, c: e.Engine.NewAccumulator(coreColumns(leaves), req.Aggs), schema: schema, leaves: leaves,
		cols: make([]arrow17.Column, len(leaves)), parts: make([]core.Part, len(leaves))}, nil
}

// coreColumns describes leaves to the core.
func coreColumns(leaves []arrow17.Leaf) []core.Column {
	out := make([]core.Column, len(leaves))
	for i, l := range leaves {
		out[i] = core.Column{Name: l.Name, Type: l.Type, Kind: l.Kind, Repeated: l.Repeated, Err: l.Err}
	}
	return out
}

// Leaves are the columns the accumulator aggregates, in result order.
func (a *Accumulator) Leaves() []arrow17.Leaf { return a.leaves }

// States are the partial states so far, one per leaf (unsupported leaves keep
// an empty state).
func (a *Accumulator) States() []agg.State { return a.c.States() }

// Rows is the number of rows added so far (merged accumulators' included).
func (a *Accumulator) Rows() int64 { return a.c.Rows() }

// Plan is how each column was aggregated so far, in result order.
func (a *Accumulator) Plan() []ColumnPlan { return a.c.Plan() }

// Add folds one record batch into the states.
func (a *Accumulator) Add(ctx context.Context, rec arrow.Record) error {
	if !rec.Schema().Equal(a.schema) {
		return fmt.Errorf("record batch schema %s does not match %s", rec.Schema(), a.schema)
	}
	defer a.releaseColumns()
	for i, l := range a.leaves {
		a.parts[i] = core.Part{}
		if !l.Supported() {
			continue
		}
		c := &a.cols[i]
		if err := arrow17.Extract(c, rec, l, a.e.mem); err != nil {
			return err
		}
		a.parts[i] = core.Part{View: &c.View, Rest: c.Rest(), Elements: c.Elements()}
	}
	return a.c.Add(ctx, rec.NumRows(), a.parts)
}

func (a *Accumulator) releaseColumns() {
	for i := range a.cols {
		a.cols[i].Release()
	}
}

// Merge folds the states of another accumulator of the same request into a,
// after a's own (for example a later file of the same dataset): o's rows
// follow a's.
func (a *Accumulator) Merge(o *Accumulator) error {
	if len(o.leaves) != len(a.leaves) {
		return fmt.Errorf("merging accumulators of %d and %d columns", len(a.leaves), len(o.leaves))
	}
	for i := range a.leaves {
		if a.leaves[i].Name != o.leaves[i].Name || !arrow.TypeEqual(a.leaves[i].Type, o.leaves[i].Type) {
			return fmt.Errorf("merging column %q (%s) with %q (%s)", a.leaves[i].Name, a.leaves[i].Type, o.leaves[i].Name, o.leaves[i].Type)
		}
	}
	return a.c.Merge(o.c)
}

// Results finalizes the states.
func (a *Accumulator) Results() []Result {
	out := make([]Result, len(a.leaves))
	states := a.c.States()
	for i, l := range a.leaves {
		if !l.Supported() {
			out[i] = Result{Name: l.Name, Type: l.Type, Err: l.Err}
			continue
		}
		out[i] = Finalize(&states[i], l.Name, l.Type, a.c.Aggs())
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
