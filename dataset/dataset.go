package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/gpuagg"
)

// DefaultBatchBytes is the default decoded size of one Parquet batch.
const DefaultBatchBytes = 16 << 20

// Options configures a Dataset. The zero value is ready to use.
type Options struct {
	// Mem allocates the decoded batches; default memory.DefaultAllocator.
	Mem memory.Allocator
	// Stdin is read for the source Stdin; default os.Stdin.
	Stdin io.Reader
	// Progress, when set, receives the number of input bytes newly read, from
	// any goroutine but never concurrently. The calls of a complete read add
	// up to the sum of the Size of the sources whose Size is known.
	Progress func(n int64)
	// BatchBytes is about the decoded size of one Parquet batch; default
	// DefaultBatchBytes.
	BatchBytes int64
	// Workers is how many goroutines decode Parquet columns at once; default
	// runtime.GOMAXPROCS(0).
	Workers int
}

// Dataset is a list of sources read as one table.
type Dataset struct {
	opts    Options
	sources []Source
	files   []fileInfo
}

type fileInfo struct {
	schema  *arrow.Schema
	leaves  []column.Leaf
	parquet *parquetFile
	stream  *ipcStreamReader // standard input, opened by Open
}

// Open reads the schema of every source (the footer of a Parquet file, the
// schema message of an IPC stream); a source that cannot be read is an
// *Error naming it. Close the dataset when done.
func Open(ctx context.Context, sources []Source, opts Options) (*Dataset, error) {
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
	}
	if opts.Stdin == nil {
		opts.Stdin = os.Stdin
	}
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = DefaultBatchBytes
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if len(sources) == 0 {
		return nil, errors.New("dataset without sources")
	}
	d := &Dataset{opts: opts, sources: sources, files: make([]fileInfo, len(sources))}
	for i, s := range sources {
		if err := ctx.Err(); err != nil {
			d.Close()
			return nil, err
		}
		if err := d.probe(ctx, i); err != nil {
			d.Close()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, inputError(s.Name(), err)
		}
	}
	return d, nil
}

func (d *Dataset) probe(ctx context.Context, i int) error {
	s, fi := d.sources[i], &d.files[i]
	var err error
	switch {
	case s.Path == Stdin:
		fi.stream, err = openIPCStream(ctx, d.opts.Stdin, nil, true, d.opts.Mem, nil, d.opts.Progress)
		if err != nil {
			return fmt.Errorf("reading an Arrow IPC stream: %w", err)
		}
		fi.schema = fi.stream.rdr.Schema()
	case s.Format == Parquet:
		fi.schema, fi.parquet, err = probeParquet(s.Path)
	case s.Format == IPCFile:
		fi.schema, err = probeIPCFile(ctx, s.Path, s.Size)
	case s.Format == IPCStream:
		fi.schema, err = probeIPCStream(ctx, s.Path)
	default:
		err = ErrUnknownFormat
	}
	if err != nil {
		return err
	}
	fi.leaves = column.Leaves(fi.schema)
	return nil
}

func probeIPCStream(ctx context.Context, path string) (_ *arrow.Schema, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	s, err := openIPCStream(ctx, f, f, false, memory.DefaultAllocator, nil, nil)
	if err != nil {
		return nil, err
	}
	defer s.close()
	return s.rdr.Schema(), nil
}

// Close releases what Open holds (standard input's reader).
func (d *Dataset) Close() error {
	for i := range d.files {
		if s := d.files[i].stream; s != nil {
			s.close()
			d.files[i].stream = nil
		}
	}
	return nil
}

// Sources are the dataset's inputs.
func (d *Dataset) Sources() []Source { return d.sources }

// Schema is the Arrow schema of source i.
func (d *Dataset) Schema(i int) *arrow.Schema { return d.files[i].schema }

// Selection is the set of columns to aggregate.
type Selection struct {
	// Leaves are the selected columns, in order, as the first source that has
	// each one describes it.
	Leaves []column.Leaf
	// Skipped are columns of types no backend aggregates, left out of a
	// selection that did not name them.
	Skipped []column.Leaf
}

// Names are the names of the selected leaves.
func (s Selection) Names() []string {
	out := make([]string, len(s.Leaves))
	for i, l := range s.Leaves {
		out[i] = l.Name
	}
	return out
}

// Select resolves the columns to aggregate, matched by name across the
// sources. With no names it selects every supported leaf of every source, in
// order of first appearance, and lists the unsupported ones in Skipped. A
// name is a leaf (dotted for struct fields) or a struct column, which stands
// for its supported leaves; a name no source has is an error wrapping
// gpuagg.ErrUnknownColumn. A selected column has one type in every source
// that has it (else an *Error names both sources); in a source without it,
// its values are null.
func (d *Dataset) Select(names []string) (Selection, error) {
	var sel Selection
	firstSeen := map[string]int{} // leaf name -> source that first had it
	add := func(l column.Leaf, src int) {
		if _, ok := firstSeen[l.Name]; !ok {
			firstSeen[l.Name] = src
			sel.Leaves = append(sel.Leaves, l)
		}
	}
	skipped := map[string]bool{}
	skip := func(l column.Leaf) {
		if !skipped[l.Name] {
			skipped[l.Name] = true
			sel.Skipped = append(sel.Skipped, l)
		}
	}
	if len(names) == 0 {
		for i, fi := range d.files {
			for _, l := range fi.leaves {
				if l.Supported() {
					add(l, i)
				} else {
					skip(l)
				}
			}
		}
	} else {
		// Names resolve in the first source that has them.
		for _, name := range names {
			found := false
			for i, fi := range d.files {
				if l, ok := column.Find(fi.leaves, name); ok {
					if !l.Supported() {
						return Selection{}, &Error{Path: d.sources[i].Name(), Err: l.Err}
					}
					add(l, i)
					found = true
					break
				}
				if group := structLeaves(fi.leaves, name); len(group) > 0 {
					for _, l := range group {
						if l.Supported() {
							add(l, i)
						} else {
							skip(l)
						}
					}
					found = true
					break
				}
			}
			if !found {
				_, err := gpuagg.Request{Columns: []string{name}}.Resolve(d.files[0].schema)
				return Selection{}, &Error{Path: d.sources[0].Name(), Err: err}
			}
		}
	}
	// A selected leaf has one type in every source that has it.
	for i, fi := range d.files {
		for _, want := range sel.Leaves {
			got, ok := column.Find(fi.leaves, want.Name)
			if ok && !arrow.TypeEqual(got.Type, want.Type) {
				first := d.sources[firstSeen[want.Name]].Name()
				return Selection{}, &Error{Path: d.sources[i].Name(), Err: fmt.Errorf("column %q is %s here but %s in %s", want.Name, got.Type, want.Type, first)}
			}
		}
	}
	return sel, nil
}

// structLeaves returns the leaves under the struct column name.
func structLeaves(leaves []column.Leaf, name string) []column.Leaf {
	var out []column.Leaf
	for _, l := range leaves {
		if strings.HasPrefix(l.Name, name+".") {
			out = append(out, l)
		}
	}
	return out
}

// Summary is the result of aggregating a dataset.
type Summary struct {
	Rows    int64           // rows of the dataset
	Files   int             // sources read
	Results []gpuagg.Result // one per selected leaf, in selection order
	// Plan is, per result, how the column was aggregated: backend, bytes
	// read, estimated and measured time, and why.
	Plan []gpuagg.ColumnPlan
}

// AggregateOptions are the options of Aggregate.
type AggregateOptions struct {
	// Aggs are the aggregates; 0 means gpuagg.AllAggs.
	Aggs gpuagg.Agg
}

// Aggregate reads every source, batch by batch, and aggregates the selected
// columns with eng. Sources are read one after the other, their batches in
// order, and partial states are merged in that order, so results are the
// same on every run. The first error stops everything; no partial result is
// returned. A problem with an input is an *Error naming it. Files can be
// aggregated again; standard input is read once.
func (d *Dataset) Aggregate(ctx context.Context, eng *gpuagg.Engine, sel Selection, opts AggregateOptions) (*Summary, error) {
	req := gpuagg.Request{Columns: sel.Names(), Aggs: opts.Aggs}
	var total *gpuagg.Accumulator
	if len(sel.Leaves) > 0 { // (a Request without columns means all of them)
		var err error
		if total, err = eng.NewAccumulator(flatSchema(sel.Leaves), req); err != nil {
			return nil, err
		}
	}
	sum := &Summary{Files: len(d.sources)}
	for i := range d.sources {
		rows, err := d.aggregateSource(ctx, eng, i, sel, req, total)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, inputError(d.sources[i].Name(), err)
		}
		sum.Rows += rows
	}
	if total != nil {
		sum.Results, sum.Plan = total.Results(), total.Plan()
	}
	return sum, nil
}

func (d *Dataset) openReader(ctx context.Context, i int, leaves []string) (batchReader, error) {
	s, fi := d.sources[i], &d.files[i]
	var prog *tracker
	if d.opts.Progress != nil && s.Size >= 0 {
		prog = &tracker{report: d.opts.Progress, size: s.Size}
	}
	switch {
	case fi.stream != nil:
		r := fi.stream
		fi.stream = nil // handed over: the reader closes it
		return r, nil
	case s.Path == Stdin:
		return nil, errors.New("standard input was read already")
	case s.Format == Parquet:
		return openParquet(s.Path, fi.parquet, fi.schema, leaves, d.opts.Mem, d.opts.BatchBytes, d.opts.Workers, prog)
	case s.Format == IPCFile:
		return openIPCFile(ctx, s.Path, s.Size, d.opts.Mem, prog)
	case s.Format == IPCStream:
		f, err := os.Open(s.Path)
		if err != nil {
			return nil, err
		}
		return openIPCStream(ctx, f, f, false, d.opts.Mem, prog, nil)
	}
	return nil, ErrUnknownFormat
}

// flatSchema is a schema of one top-level field per leaf, named with the
// leaf's (dotted) name: every selected leaf resolves in it, which makes it
// the schema of the dataset's accumulator.
func flatSchema(leaves []column.Leaf) *arrow.Schema {
	fields := make([]arrow.Field, len(leaves))
	for i, l := range leaves {
		fields[i] = arrow.Field{Name: l.Name, Type: l.Type, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// nullColumns appends all-null columns, for the selected leaves a source
// lacks, to the source's batches.
type nullColumns struct {
	fields []arrow.Field
	n      int64
	arrs   []arrow.Array
}

func (c *nullColumns) augment(rec arrow.Record, mem memory.Allocator) arrow.Record {
	if c.arrs == nil || c.n != rec.NumRows() {
		c.release()
		c.n = rec.NumRows()
		c.arrs = make([]arrow.Array, len(c.fields))
		for j, f := range c.fields {
			c.arrs[j] = array.MakeArrayOfNull(mem, f.Type, int(c.n))
		}
	}
	fields := append(rec.Schema().Fields(), c.fields...)
	cols := append(append([]arrow.Array(nil), rec.Columns()...), c.arrs...)
	return array.NewRecord(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}

func (c *nullColumns) release() {
	for _, a := range c.arrs {
		a.Release()
	}
	c.arrs = nil
}

// aggregateSource folds source i into total and returns its row count.
func (d *Dataset) aggregateSource(ctx context.Context, eng *gpuagg.Engine, i int, sel Selection, req gpuagg.Request, total *gpuagg.Accumulator) (rows int64, err error) {
	var present []string
	var missing nullColumns
	for _, l := range sel.Leaves {
		if _, ok := column.Find(d.files[i].leaves, l.Name); ok {
			present = append(present, l.Name)
		} else {
			missing.fields = append(missing.fields, arrow.Field{Name: l.Name, Type: l.Type, Nullable: true})
		}
	}
	defer missing.release()
	rdr, err := d.openReader(ctx, i, present)
	if err != nil {
		return 0, err
	}
	pf := startPrefetch(ctx, rdr)
	defer func() {
		if cerr := pf.stop(ctx); err == nil && cerr != nil {
			err = cerr
		}
	}()

	// One accumulator per batch schema (a Parquet file's batches share the
	// schema of its projected columns), merged into total in order.
	var acc *gpuagg.Accumulator
	var accSchema *arrow.Schema
	flush := func() error {
		if acc == nil {
			return nil
		}
		err := total.Merge(acc)
		acc = nil
		return err
	}
	for {
		var b batch
		var ok bool
		select {
		case b, ok = <-pf.ch:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		if !ok {
			break
		}
		if b.err != nil {
			return 0, b.err
		}
		rec := b.rec
		if total == nil { // no column to aggregate: rows only
			rows += rec.NumRows()
			rec.Release()
			continue
		}
		if len(missing.fields) > 0 {
			full := missing.augment(rec, d.opts.Mem)
			rec.Release()
			rec = full
		}
		err := func() error {
			defer rec.Release()
			if acc == nil || !rec.Schema().Equal(accSchema) {
				if err := flush(); err != nil {
					return err
				}
				if acc, err = eng.NewAccumulator(rec.Schema(), req); err != nil {
					return err
				}
				accSchema = rec.Schema()
			}
			if err := acc.Add(ctx, rec); err != nil {
				return err
			}
			rows += rec.NumRows()
			return nil
		}()
		if err != nil {
			return 0, err
		}
	}
	return rows, flush()
}
