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
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/budget"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
)

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
	// DecodeBytes bounds the memory of the Parquet column chunks decoded
	// into Arrow arrays at once, all workers together (a chunk being decoded
	// takes about 16 MiB, whatever its size); default DefaultDecodeBytes.
	DecodeBytes int64
	// Workers is how many goroutines aggregate Parquet column chunks at
	// once; default runtime.GOMAXPROCS(0). Of the chunks decoded into Arrow
	// arrays, at most one per CPU (runtime.NumCPU) is decoded at a time: more
	// would only hold more memory.
	Workers int
	// Budget is the memory budget charged, before they are made, with the
	// allocations whose size a file decides: decompressed pages and IPC
	// buffers, dictionaries at what their decoders hold, standard input
	// buffered, decoded footers (see the budget package). A need that can
	// never fit is refused with a *budget.Error naming it (wrapped in the
	// *Error of its source); one that fits waits for memory that other
	// workers (or other reads sharing the budget) hold. Default:
	// budget.Default(), shared by every read of the process given none.
	Budget *budget.Budget
	// SkipBad leaves out a source that cannot be read (a corrupt file, an
	// unsupported feature, a file over the memory budget) instead of ending
	// with its error: Open lists those whose schema it cannot read in
	// Dataset.Skipped, Aggregate those that fail while they are read in
	// Summary.Skipped (their rows are not counted). Cancellation still ends
	// everything.
	SkipBad bool
	// Keys are the keys of encrypted Parquet files (Parquet modular
	// encryption), for every Parquet file of the dataset: the footer key,
	// column keys by column path, an AAD prefix (see Keys). Without them
	// (nil) an encrypted file is an error saying which keys it needs (a
	// *KeyError, wrapping ErrMissingKey); a wrong key is one wrapping
	// ErrWrongKey. Plaintext files are read as ever.
	Keys *Keys
	// Int96 is the unit INT96 timestamps (Impala's and Spark's legacy
	// type) are read in, as pyarrow's coerce_int96_timestamp_unit: by
	// default nanoseconds, as arrow-go and pyarrow read them, which reach
	// 1677 to 2262 (an instant outside is an error); Int96Microseconds
	// reaches ±294,247 years (Spark's resolution, and DuckDB's). Columns
	// of INT96 inside lists and maps stay in nanoseconds.
	Int96 Int96Unit
	// ArrowDecode decodes every Parquet column into Arrow arrays through
	// pqarrow, even those Aggregate would otherwise fold from their pages
	// (slower; for comparisons).
	ArrowDecode bool
}

// ErrAllSkipped is the error of Open when Options.SkipBad left every source
// out.
var ErrAllSkipped = errors.New("every input was skipped: none could be read")

// Dataset is a list of sources read as one table.
type Dataset struct {
	opts    Options
	sources []Source
	files   []fileInfo
	// Skipped are the sources Open left out (Options.SkipBad).
	Skipped []Skipped
}

type fileInfo struct {
	// pinned is what the source holds of the budget while the dataset is
	// open: its decoded footer.
	pinned  int64
	schema  *arrow.Schema
	leaves  []arrow17.Leaf
	index   arrow17.Index // leaves by name
	parquet *parquetFile
	stream  *ipcStreamReader // standard input, opened by Open
	// partitions are the values of the source's partition keys (its
	// path's key=value directories), also among its leaves.
	partitions map[string]partitionValue
	// unknownTypes, for a Parquet file, are its columns of logical types
	// arrow-go does not know (checkParquetFooter): left out with a note.
	unknownTypes *footerFix
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
	if opts.DecodeBytes <= 0 {
		opts.DecodeBytes = DefaultDecodeBytes
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Budget == nil {
		opts.Budget = budget.Default()
	}
	if len(sources) == 0 {
		return nil, errors.New("dataset without sources")
	}
	d := &Dataset{opts: opts, sources: sources, files: make([]fileInfo, len(sources))}
	kept := 0
	for i, s := range sources {
		if err := ctx.Err(); err != nil {
			d.Close()
			return nil, err
		}
		err := d.probe(ctx, i)
		if err != nil && ctx.Err() == nil && opts.SkipBad {
			d.releaseFile(i)
			d.Skipped = append(d.Skipped, Skipped{Path: s.Name(), Err: err})
			continue
		}
		if err != nil {
			d.Close()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, inputError(s.Name(), err)
		}
		d.sources[kept], d.files[kept] = d.sources[i], d.files[i]
		kept++
	}
	d.sources, d.files = d.sources[:kept], d.files[:kept]
	if err := d.addPartitions(); err != nil {
		d.Close()
		return nil, err
	}
	if kept == 0 {
		var why []string
		for _, sk := range d.Skipped {
			why = append(why, sk.Path+": "+sk.Err.Error())
		}
		return nil, fmt.Errorf("%w (%s)", ErrAllSkipped, strings.Join(why, "; "))
	}
	return d, nil
}

func (d *Dataset) probe(ctx context.Context, i int) error {
	s, fi := d.sources[i], &d.files[i]
	var err error
	switch {
	case s.Path == Stdin:
		fi.stream, err = openIPCStream(ctx, d.opts.Stdin, nil, true, d.opts.Mem, d.opts.Budget, nil, d.opts.Progress)
		if err != nil {
			return fmt.Errorf("reading an Arrow IPC stream: %w", err)
		}
		fi.schema = fi.stream.schema
	case s.Format == Parquet:
		// The footer is checked against the limits before arrow-go
		// decodes it (limits.go).
		var n int64
		var fix *footerFix
		if n, fix, err = checkParquetFooter(ctx, s); err != nil {
			return err
		}
		if err := d.opts.Budget.Pin(ctx, "the decoded footer", footerMemory*n); err != nil {
			return err
		}
		fi.pinned = footerMemory * n
		fi.schema, fi.parquet, err = probeParquetFixed(s, fix, d.opts.Keys, d.opts.Int96)
		fi.unknownTypes = fix
	case s.Format == IPCFile:
		fi.schema, err = probeIPCFile(ctx, s)
	case s.Format == IPCStream:
		fi.schema, err = probeIPCStream(ctx, s)
	default:
		err = ErrUnknownFormat
	}
	if err != nil {
		return err
	}
	fi.leaves, err = arrow17.LeavesContext(ctx, fi.schema, leafLimits)
	if err != nil {
		return err
	}
	fi.unknownTypes.countLeaves(fi.leaves)
	fi.index = arrow17.NewIndex(fi.leaves)
	return nil
}

func probeIPCStream(ctx context.Context, src Source) (_ *arrow.Schema, err error) {
	f, err := src.open()
	if err != nil {
		return nil, err
	}
	s, err := openIPCStream(ctx, f, f, false, memory.DefaultAllocator, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	defer s.close()
	return s.schema, nil
}

// Close releases what Open holds (standard input's reader, the footers'
// share of the memory budget).
func (d *Dataset) Close() error {
	for i := range d.files {
		d.releaseFile(i)
	}
	return nil
}

// releaseFile releases what Open holds of source i.
func (d *Dataset) releaseFile(i int) {
	d.opts.Budget.Unpin(d.files[i].pinned)
	d.files[i].pinned = 0
	if s := d.files[i].stream; s != nil {
		s.close()
		d.files[i].stream = nil
	}
}

// Leaves are the columns of source i as Select sees them: the leaves of its
// schema (struct fields flattened), then its partition keys (without a
// Path: they are not in the file).
func (d *Dataset) Leaves(i int) []arrow17.Leaf { return d.files[i].leaves }

// SchemaLeaves are Leaves(i) with the element columns of its lists and maps
// (arrow17.ElementLeaves: "tags[]", "m{key}", named with Select) each after
// the leaf it lies in, in schema order.
func (d *Dataset) SchemaLeaves(i int) []arrow17.Leaf {
	leaves, elems := d.files[i].leaves, arrow17.ElementLeaves(d.files[i].schema)
	out := make([]arrow17.Leaf, 0, len(leaves)+len(elems))
	j := 0
	for _, l := range leaves {
		for j < len(elems) && l.Path != nil && pathBefore(elems[j].Path, l.Path) {
			out = append(out, elems[j])
			j++
		}
		out = append(out, l)
	}
	return append(out, elems[j:]...)
}

// pathBefore reports whether field path a comes before b in schema order.
func pathBefore(a, b []int) bool {
	for k := 0; k < len(a) && k < len(b); k++ {
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return len(a) < len(b)
}

// Schema is the Arrow schema of source i.
func (d *Dataset) Schema(i int) *arrow.Schema { return d.files[i].schema }

// Selection is the set of columns to aggregate.
type Selection struct {
	// Leaves are the selected columns, in order, as the first source that has
	// each one describes it.
	Leaves []arrow17.Leaf
	// Skipped are columns of types no backend aggregates, left out of a
	// selection that did not name them.
	Skipped []arrow17.Leaf
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
// name is a leaf (dotted for struct fields), the elements of a list or a
// map ("tags[]", "m{key}": arrow17.ResolveElement), or a struct column or
// struct elements ("items[]"), which stand for their supported leaves; a name no source has is an error wrapping
// engine.ErrUnknownColumn. A selected column has one type in every source
// that has it (else an *Error names both sources); in a source without it,
// its values are null. It takes time linear in the leaves of the sources
// and the names (SelectContext can be cancelled).
func (d *Dataset) Select(names []string) (Selection, error) {
	return d.SelectContext(context.Background(), names)
}

// selectCheckEvery is how many leaves Select looks at between two looks at
// its context.
const selectCheckEvery = 4096

// SelectContext is Select, stopping with ctx's error when ctx is done.
func (d *Dataset) SelectContext(ctx context.Context, names []string) (Selection, error) {
	var sel Selection
	steps := 0
	tick := func() error {
		steps++
		if steps%selectCheckEvery == 0 {
			return ctx.Err()
		}
		return nil
	}
	firstSeen := map[string]int{} // leaf name -> source that first had it
	add := func(l arrow17.Leaf, src int) {
		if _, ok := firstSeen[l.Name]; !ok {
			firstSeen[l.Name] = src
			sel.Leaves = append(sel.Leaves, l)
		}
	}
	noted := map[string]int{} // leaf name -> the source whose column of that name was noted
	skip := func(l arrow17.Leaf, src int) {
		// One note for a column several sources have; every column of one
		// source (names may repeat in a schema) is noted.
		if first, ok := noted[l.Name]; ok && first != src {
			return
		}
		noted[l.Name] = src
		sel.Skipped = append(sel.Skipped, l)
	}
	if len(names) == 0 {
		for i, fi := range d.files {
			for _, l := range fi.leaves {
				if err := tick(); err != nil {
					return Selection{}, err
				}
				if l.Supported() {
					add(l, i)
				} else {
					skip(l, i)
				}
			}
		}
	} else {
		// Names resolve in the first source that has them.
		for _, name := range names {
			if err := tick(); err != nil {
				return Selection{}, err
			}
			found := false
			var badPath error // why the name is no element path of the first source it starts a column of
			for i, fi := range d.files {
				if _, _, err := arrow17.ResolveElement(fi.schema, name); err != nil && badPath == nil {
					badPath = &Error{Path: d.sources[i].Name(), Err: fmt.Errorf("%w %q: %w", engine.ErrUnknownColumn, name, err)}
				}
				if l, ok := fi.leaf(name); ok {
					if !l.Supported() {
						return Selection{}, &Error{Path: d.sources[i].Name(), Err: l.Err}
					}
					add(l, i)
					found = true
					break
				}
				group := structLeaves(fi.leaves, name)
				if len(group) == 0 && strings.ContainsAny(name, "[{") { // struct elements: their fields
					group = elementFields(arrow17.ElementLeaves(fi.schema), name)
				}
				if len(group) > 0 {
					for _, l := range group {
						if l.Supported() {
							add(l, i)
						} else {
							skip(l, i)
						}
					}
					found = true
					break
				}
			}
			if !found && badPath != nil {
				return Selection{}, badPath
			}
			if !found {
				_, err := engine.Request{Columns: []string{name}}.Resolve(d.files[0].schema)
				return Selection{}, &Error{Path: d.sources[0].Name(), Err: err}
			}
		}
	}
	// A selected leaf has one type in every source that has it, or types
	// of one family of different widths, widened to the widest (as
	// DuckDB's union_by_name does).
	for i, fi := range d.files {
		for k := range sel.Leaves {
			want := &sel.Leaves[k]
			if err := tick(); err != nil {
				return Selection{}, err
			}
			got, ok := fi.leaf(want.Name)
			if !ok || arrow.TypeEqual(got.Type, want.Type) {
				continue
			}
			wide, ok := widen(want.Type, got.Type)
			if !ok {
				first := d.sources[firstSeen[want.Name]].Name()
				return Selection{}, &Error{Path: d.sources[i].Name(), Err: fmt.Errorf("column %q is %s here but %s in %s", want.Name, got.Type, want.Type, first)}
			}
			if kind, err := arrow17.KindOf(wide); err == nil {
				want.Type, want.Kind = wide, kind
			}
		}
	}
	return sel, nil
}

// widen returns the type that holds the values of a and b when they are
// integers of one signedness or floats, of different widths: the wider.
func widen(a, b arrow.DataType) (arrow.DataType, bool) {
	signed := map[arrow.Type]int{arrow.INT8: 1, arrow.INT16: 2, arrow.INT32: 4, arrow.INT64: 8}
	unsigned := map[arrow.Type]int{arrow.UINT8: 1, arrow.UINT16: 2, arrow.UINT32: 4, arrow.UINT64: 8}
	floats := map[arrow.Type]int{arrow.FLOAT32: 4, arrow.FLOAT64: 8}
	for _, family := range []map[arrow.Type]int{signed, unsigned, floats} {
		wa, okA := family[a.ID()]
		wb, okB := family[b.ID()]
		if okA && okB {
			if wb > wa {
				return b, true
			}
			return a, true
		}
	}
	return nil, false
}

// leaf returns the source's leaf named name: one of its leaves, or the
// element column of a list or map that name is the path of.
func (fi *fileInfo) leaf(name string) (arrow17.Leaf, bool) {
	var l arrow17.Leaf
	ok := false
	if fi.index == nil {
		l, ok = arrow17.Find(fi.leaves, name)
	} else if i, found := fi.index.Find(name); found {
		l, ok = fi.leaves[i], true
	}
	if !ok && fi.schema != nil {
		l, ok, _ = arrow17.ResolveElement(fi.schema, name)
	}
	return l, ok
}

// structLeaves returns the leaves under the struct column name.
func structLeaves(leaves []arrow17.Leaf, name string) []arrow17.Leaf {
	var out []arrow17.Leaf
	for _, l := range leaves {
		if strings.HasPrefix(l.Name, name+".") {
			out = append(out, l)
		}
	}
	return out
}

// elementFields returns the element leaves of the fields of the struct
// elements name ("items[]": "items[].price", "items[].tags", but not
// "items[].tags[]", as a struct's name stands for its fields).
func elementFields(elems []arrow17.Leaf, name string) []arrow17.Leaf {
	group := structLeaves(elems, name)
	depth := 0
	for i, l := range group {
		if i == 0 || l.Repeated < depth {
			depth = l.Repeated
		}
	}
	out := group[:0]
	for _, l := range group {
		if l.Repeated == depth {
			out = append(out, l)
		}
	}
	return out
}

// Summary is the result of aggregating a dataset.
type Summary struct {
	Rows    int64           // rows of the dataset
	Files   int             // sources read (not those skipped)
	Results []engine.Result // one per selected leaf, in selection order
	// Skipped are the sources that failed while they were read, left out
	// (Options.SkipBad).
	Skipped []Skipped
	// Plan is, per result, how the column was aggregated: backend, bytes
	// read, estimated and measured time, and why.
	Plan []engine.ColumnPlan
}

// AggregateOptions are the options of Aggregate.
type AggregateOptions struct {
	// Aggs are the aggregates; 0 means agg.Default.
	Aggs agg.Set
	// IgnoreStatistics reads every Parquet column chunk. By default, when
	// every aggregate asked for is count, null_count, min or max, a chunk
	// whose row-group statistics give them exactly (integer, date, time,
	// timestamp and integer-backed decimal columns, boolean chunks of one
	// value; see stats.go for the rules) is answered from the file's footer
	// without reading its pages, and its plan says so. The results are the
	// same either way; the states of Results then hold only those
	// aggregates (their Sum is not the column's).
	IgnoreStatistics bool
}

// Aggregate reads every source and aggregates the selected columns with
// eng. Sources are read one after the other; Parquet columns whose pages
// hold their Arrow values as they are (flat integer, float and temporal
// columns, PLAIN or dictionary-encoded) are aggregated from their pages, a
// column chunk per task, unless Options.ArrowDecode is set: each worker
// folds a chunk's pages through eng a morsel (engine.MorselSize values) at
// a time, so that its planner places each window (and the CPU backend folds
// it in the worker's goroutine). Every other column is decoded batch by
// batch, but for the chunks answered from their row-group statistics (see
// AggregateOptions.IgnoreStatistics). Partial states are
// merged in a fixed order (sources, then row groups or batches, in order),
// so results are the same on every run and for every number of workers. The
// first error stops everything; no partial result is returned. A problem
// with an input is an *Error naming it. Files can be aggregated again;
// standard input is read once.
func (d *Dataset) Aggregate(ctx context.Context, eng *engine.Engine, sel Selection, opts AggregateOptions) (*Summary, error) {
	aggs := agg.Normalize(opts.Aggs)
	total := newPartial(sel.Leaves, aggs)
	var skipped []Skipped
	for i := range d.sources {
		src, err := d.aggregateSource(ctx, eng, i, sel, aggs, !opts.IgnoreStatistics)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if d.opts.SkipBad {
				skipped = append(skipped, Skipped{Path: d.sources[i].Name(), Err: err})
				continue
			}
			return nil, inputError(d.sources[i].Name(), err)
		}
		total.merge(src)
	}
	sum := &Summary{Files: len(d.sources) - len(skipped), Rows: total.rows, Skipped: skipped}
	if len(sel.Leaves) > 0 {
		sum.Results, sum.Plan = total.results(), total.plans
	}
	return sum, nil
}

// partial is the partial aggregate of some rows of the dataset: a state and
// a plan per selected leaf, rows counted from the first of them.
type partial struct {
	leaves []arrow17.Leaf
	aggs   agg.Set
	states []agg.State
	plans  []engine.ColumnPlan
	rows   int64
	// elems, per element column (Leaf.Repeated), is the elements merged:
	// the ordered aggregates of an element column report elements, and
	// states merge in order, so a state's elements follow those merged.
	elems []int64
}

func newPartial(leaves []arrow17.Leaf, aggs agg.Set) *partial {
	p := &partial{leaves: leaves, aggs: aggs, states: make([]agg.State, len(leaves)), plans: make([]engine.ColumnPlan, len(leaves)),
		elems: make([]int64, len(leaves))}
	for i, l := range leaves {
		p.states[i] = agg.New(l.Kind.Family(), aggs)
		p.plans[i].Name = l.Name
	}
	return p
}

// add merges state s of leaf i, whose rows start at row at of p, and the
// plan that made it. The state of an element column is of the elements
// after those merged (at is ignored).
func (p *partial) add(i int, s agg.State, at int64, plan engine.ColumnPlan) {
	if p.leaves[i].Repeated > 0 {
		at = p.elems[i]
		p.elems[i] += s.Count + s.NullCount
	}
	s.ShiftRows(at)
	p.states[i].Merge(&s)
	// The latest choice and reason win; the amounts add up.
	p.plans[i].Add(plan)
}

// merge folds o, whose rows follow p's, into p.
func (p *partial) merge(o *partial) {
	for i := range p.states {
		p.add(i, o.states[i], p.rows, o.plans[i])
	}
	p.rows += o.rows
}

// addAccumulator merges the states of an accumulator whose first row is row
// at of p; byName maps leaf names to their index in p.
func (p *partial) addAccumulator(acc *engine.Accumulator, at int64, byName map[string]int) {
	plans := acc.Plan()
	for k, l := range acc.Leaves() {
		p.add(byName[l.Name], acc.States()[k], at, plans[k])
	}
}

// results finalizes the states.
func (p *partial) results() []engine.Result {
	out := make([]engine.Result, len(p.leaves))
	for i, l := range p.leaves {
		out[i] = engine.Finalize(&p.states[i], l.Name, l.Type, p.aggs)
	}
	return out
}

// progress is the tracker of source i's bytes read (Options.Progress), nil
// when there is none or the source's size is not known.
func (d *Dataset) progress(i int) *tracker {
	if s := d.sources[i]; d.opts.Progress != nil && s.Size >= 0 {
		return &tracker{report: d.opts.Progress, size: s.Size}
	}
	return nil
}

// openReader opens the batch reader of an IPC source i; prog, when set,
// gets the progress of its bytes.
func (d *Dataset) openReader(ctx context.Context, i int, prog *tracker) (batchReader, error) {
	s, fi := d.sources[i], &d.files[i]
	switch {
	case fi.stream != nil:
		r := fi.stream
		fi.stream = nil // handed over: the reader closes it
		return r, nil
	case s.Path == Stdin:
		return nil, errors.New("standard input was read already")
	case s.Format == IPCFile:
		return openIPCFile(ctx, s, d.opts.Mem, d.opts.Budget, prog)
	case s.Format == IPCStream:
		f, err := s.open()
		if err != nil {
			return nil, err
		}
		return openIPCStream(ctx, f, f, false, d.opts.Mem, d.opts.Budget, prog, nil)
	}
	return nil, ErrUnknownFormat
}

// aggregateSource aggregates source i: the selected leaves it has (Parquet
// column chunk by column chunk, IPC batch by batch); those it lacks are null
// in each of its rows.
func (d *Dataset) aggregateSource(ctx context.Context, eng *engine.Engine, i int, sel Selection, aggs agg.Set, useStats bool) (*partial, error) {
	s, fi := d.sources[i], &d.files[i]
	src := newPartial(sel.Leaves, aggs)
	byName := make(map[string]int, len(sel.Leaves))
	var present []arrow17.Leaf // as this source has them
	var outIdx []int           // their index in the selection
	var keys []int             // the selected leaves that are partition keys of this source
	for k, l := range sel.Leaves {
		byName[l.Name] = k
		if _, ok := fi.partitions[l.Name]; ok {
			keys = append(keys, k)
			continue
		}
		if fl, ok := fi.leaf(l.Name); ok {
			present = append(present, fl)
			outIdx = append(outIdx, k)
		}
	}
	prog := d.progress(i)
	if fi.parquet != nil {
		// newRun is a read of the file that leaves to the CPU the chunks
		// of the columns in short.
		newRun := func(short map[int]bool) (*parquetRun, error) {
			leaves, err := parquetLeaves(fi.parquet, present, outIdx, !d.opts.ArrowDecode)
			if err != nil {
				return nil, err
			}
			return &parquetRun{src: s, pqf: fi.parquet, leaves: leaves, mem: d.opts.Mem, eng: eng, aggs: aggs,
				workers: d.opts.Workers, decodeBytes: d.opts.DecodeBytes, budget: d.opts.Budget, useStats: useStats,
				shortOfDevice: short}, nil
		}
		run, err := newRun(nil)
		if err != nil {
			return nil, err
		}
		err = run.run(ctx, src, prog)
		for short := 0; errors.Is(err, engine.ErrDeviceMemory) && len(run.shortOfDevice) > short && ctx.Err() == nil; {
			// The GPU had too little memory for a column's pages, even a
			// chunk at a time (the backend warned): the file is read
			// again, the CPU reading that column's chunks, as its plan
			// says (deviceShortReason). Each try leaves one more column
			// to the CPU.
			short = len(run.shortOfDevice)
			if run, err = newRun(run.shortOfDevice); err != nil {
				return nil, err
			}
			src = newPartial(sel.Leaves, aggs)
			err = run.run(ctx, src, prog)
		}
		if err != nil {
			return nil, err
		}
		src.rows = run.rows
		prog.finish()
	} else {
		// IPC files are read in place from their footer, and stream
		// files from their messages walked in place; standard input, and
		// files of types the in-place decoder does not lay out, batch by
		// batch as a stream.
		rows, err := int64(0), errNotInPlace
		if s.Path != Stdin && fi.stream == nil {
			rows, err = d.aggregateIPCFile(ctx, eng, i, present, aggs, src, byName, prog)
		}
		if errors.Is(err, errNotInPlace) {
			rows, err = d.aggregateBatches(ctx, eng, i, present, aggs, src, byName, prog)
		}
		if err != nil {
			return nil, err
		}
		src.rows = rows
	}
	for _, k := range keys {
		l := sel.Leaves[k]
		st, err := d.partitionState(ctx, eng, l, fi.partitions[l.Name], src.rows, aggs)
		if err != nil {
			return nil, err
		}
		src.add(k, st, 0, engine.ColumnPlan{Source: engine.SourceArrow, Reason: partitionReason})
		present = append(present, l)
	}
	src.nullRest(present)
	return src, nil
}

// nullRest counts a null in each row for the selected leaves a source lacks.
func (p *partial) nullRest(present []arrow17.Leaf) {
	has := make(map[string]bool, len(present))
	for _, l := range present {
		has[l.Name] = true
	}
	for i, l := range p.leaves {
		if !has[l.Name] && l.Repeated == 0 { // (a source without a list has none of its elements)
			p.states[i].AddNulls(p.rows)
		}
	}
}

// aggregateBatches folds the leaves of IPC source i (as the source has them;
// none: rows only) into src, batch by batch, and returns the source's rows.
func (d *Dataset) aggregateBatches(ctx context.Context, eng *engine.Engine, i int, leaves []arrow17.Leaf, aggs agg.Set, src *partial, byName map[string]int, prog *tracker) (rows int64, err error) {
	if s := d.sources[i]; s.Format == IPCStream && smallStream(s, eng, d.opts.Mem) {
		// (Under --device auto, no calibration, no driver for this file.)
		ctx = engine.WithSmallJob(ctx)
	}
	names := make([]string, len(leaves))
	for k, l := range leaves {
		names[k] = l.Name
	}
	rdr, err := d.openReader(ctx, i, prog)
	if err != nil {
		return 0, err
	}
	pf := startPrefetch(ctx, rdr)
	defer func() {
		if cerr := pf.stop(); err == nil && cerr != nil {
			err = cerr
		}
	}()

	// One accumulator per batch schema, merged into src in order.
	req := engine.Request{Columns: names, Aggs: aggs}
	var acc *engine.Accumulator
	var accSchema *arrow.Schema
	var accFrom int64 // the source's row of the accumulator's first row
	var batches int64
	flush := func() {
		if acc != nil {
			src.addAccumulator(acc, accFrom, byName)
			acc = nil
		}
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
		if batches++; batches > MaxBatches && d.sources[i].Path != Stdin {
			rec.Release()
			return 0, limitError("number of record batches", batches, "MaxBatches", MaxBatches)
		}
		if len(leaves) == 0 { // rows only
			rows += rec.NumRows()
			rec.Release()
			continue
		}
		err := func() (err error) {
			defer rec.Release()
			// Arrow builds some arrays lazily (the values of a
			// dictionary) and panics there on corrupt offsets.
			defer recoverTo(&err)
			if acc == nil || !rec.Schema().Equal(accSchema) {
				flush()
				var err error
				if acc, err = eng.NewAccumulator(rec.Schema(), req); err != nil {
					return err
				}
				accSchema, accFrom = rec.Schema(), rows
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
	flush()
	return rows, nil
}
