package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/metadata"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/budget"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/startup"
)

// GroupSummary is the result of grouping a dataset (Group).
type GroupSummary struct {
	Rows int64 // rows of the dataset
	Kept int64 // rows the filter kept
	// Pruned are the Parquet row groups, and their rows, skipped without
	// reading because their statistics exclude the filter's rows.
	Pruned, PrunedRows int64
	// Pages is what the page indexes of the filter's columns skipped in
	// the row groups read.
	Pages PageSkips
	Files int // sources read (not those skipped)
	// Spills are the times the groups spilled to disk (past the request's
	// MemoryLimit, to its SpillDir), SpillBytes the bytes they wrote.
	Spills     int
	SpillBytes int64
	// Batches are the record batches grouped, GPUBatches those of them
	// grouped on the GPU (engine.Grouper.GPUBatches).
	Batches, GPUBatches int
	// Groups is the result: a record batch of the groups, sorted by key
	// (engine.Grouper.Result). Release it when done.
	Groups arrow.Record
	// Results are, for a request without keys, the aggregates of its one
	// group as a Summary's (engine.Grouper.Results); nil with keys.
	Results []engine.Result
	// Skipped are the sources that failed while they were read, left out
	// (Options.SkipBad).
	Skipped []Skipped
	// Unsupported are the columns that req.Columns empty would select but
	// that are not grouped (lists, maps and the other columns only
	// counted, from Parquet), with why.
	Unsupported []Skipped
}

// Group reads every source and groups its rows as req asks (GROUP BY,
// WHERE), with eng, one source after the other: a Parquet file a row group
// at a time, its columns decoded into Arrow arrays at once (through
// pqarrow, as the leaves that the page path does not fold are); an IPC file
// or stream batch by batch. req.Columns empty means every supported column
// of the rows that is not a key. A column of req that a source lacks is
// null in its rows, a partition key (Hive) its path's value. The first error
// stops everything, but with Options.SkipBad, which leaves the failing
// source out.
func (d *Dataset) Group(ctx context.Context, eng *engine.Engine, req engine.GroupRequest) (*GroupSummary, error) {
	begun := time.Now()
	if len(d.sources) == 0 {
		return nil, errors.New("no input")
	}
	var unsupported []Skipped
	if len(req.Columns) == 0 {
		isKey := map[string]bool{}
		for _, k := range req.Keys {
			isKey[k] = true
		}
		for _, l := range d.files[0].leaves {
			if !l.Supported() || l.Repeated > 0 || isKey[l.Name] {
				continue
			}
			if l.Kind == column.Opaque && d.files[0].parquet != nil {
				unsupported = append(unsupported, Skipped{Path: l.Name, Err: errNotGrouped})
				continue
			}
			req.Columns = append(req.Columns, l.Name)
		}
	}
	names := append(append([]string(nil), req.Keys...), req.Columns...)
	if req.Filter != nil {
		names = append(names, req.Filter.Columns()...)
	}
	// The columns as the dataset types them (the first source that has
	// each): a source without one has nulls, a partition key its value.
	var unique []string
	seen := map[string]bool{}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			unique = append(unique, n)
		}
	}
	sel, err := d.SelectContext(ctx, unique)
	if err != nil {
		return nil, err
	}
	types := map[string]arrow17.Leaf{}
	for _, l := range sel.Leaves {
		types[l.Name] = l
	}
	var g *engine.Grouper
	defer func() {
		if g != nil {
			g.Close() // (its spill files and states, the result built; an error closing the files changes no answer)
		}
	}()
	sum := &GroupSummary{Unsupported: unsupported}
	var pending int64 // rows skipped before the grouper was made (groupSink.skip)
	for i := range d.sources {
		rows, err := d.groupSource(ctx, eng, i, req, unique, types, &g, &pending, sum)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var ge *groupingError
			if d.opts.SkipBad && !errors.As(err, &ge) {
				sum.Skipped = append(sum.Skipped, Skipped{Path: d.sources[i].Name(), Err: err})
				continue
			}
			return nil, inputError(d.sources[i].Name(), err)
		}
		sum.Rows += rows
		sum.Files++
	}
	if sum.Files == 0 {
		return nil, ErrAllSkipped
	}
	if g == nil { // (no batch: every row group pruned, or no rows)
		fields := make([]arrow.Field, len(unique))
		for k, n := range unique {
			fields[k] = arrow.Field{Name: n, Type: types[n].Type, Nullable: true}
		}
		if g, err = eng.NewGrouper(arrow.NewSchema(fields, nil), req); err != nil {
			return nil, err
		}
	}
	startup.Trace("rows grouped", begun, nil)
	if sum.Groups, err = g.Result(d.opts.Mem); err != nil {
		return nil, err
	}
	sum.Kept = g.Kept()
	sum.GPUBatches = g.GPUBatches()
	sum.Spills, sum.SpillBytes = g.Spills()
	if len(req.Keys) == 0 {
		sum.Results = g.Results()
	}
	return sum, nil
}

// PageSkips is what a filter skipped within Parquet row groups by the
// column indexes of its columns' pages (their least and greatest values
// and null counts): rows none of whose pages can hold a kept row are not
// decoded (by the page path) nor grouped.
type PageSkips struct {
	RowGroups int   // row groups whose page indexes were tested
	Pages     int   // pages of the filter's columns none of whose rows were read
	Rows      int64 // rows skipped
	// NotUsed says why the first column index not used was not (a
	// column index that does not describe its chunk's pages, say).
	NotUsed string
}

// errNotGrouped is why a list or map column of a Parquet file is not
// grouped.
var errNotGrouped = errors.New("lists, maps and the other nested columns of Parquet files are not grouped (unsupported)")

// groupingError is an error of the request itself (not of a source: not
// skipped).
type groupingError struct{ err error }

func (e *groupingError) Error() string { return e.err.Error() }
func (e *groupingError) Unwrap() error { return e.err }

// groupSource feeds source i's rows of the columns names to the grouper
// *g (made from the first batch's schema; the rows skipped before it is
// made counted in *pending) and returns its rows.
func (d *Dataset) groupSource(ctx context.Context, eng *engine.Engine, i int, req engine.GroupRequest, names []string, types map[string]arrow17.Leaf,
	g **engine.Grouper, pending *int64, sum *GroupSummary) (int64, error) {
	fi := &d.files[i]
	var leaves []arrow17.Leaf
	var extra []extraColumn // the source's partition keys and the columns it lacks
	for _, n := range names {
		if v, ok := fi.partitions[n]; ok {
			extra = append(extra, extraColumn{leaf: types[n], value: v})
			continue
		}
		l, ok := fi.leaf(n)
		if !ok {
			extra = append(extra, extraColumn{leaf: types[n], value: partitionValue{null: true}})
			continue
		}
		if !l.Supported() {
			return 0, fmt.Errorf("column %q: %w", n, l.Err)
		}
		if l.Repeated > 0 {
			return 0, fmt.Errorf("column %q: the elements of lists and maps are not grouped (unsupported)", n)
		}
		if l.Kind == column.Opaque && fi.parquet != nil {
			return 0, fmt.Errorf("column %q: %w", n, errNotGrouped)
		}
		leaves = append(leaves, l)
	}
	sink := d.newGroupSink(ctx, eng, req, extra, g, pending, sum)
	prog := d.progress(i)
	rows, err := d.groupRead(ctx, i, leaves, req, sink, sum, prog)
	if err == nil {
		prog.finish()
	}
	return rows, err
}

// groupRead reads source i's leaves into sink (groupSource), its progress
// to prog.
func (d *Dataset) groupRead(ctx context.Context, i int, leaves []arrow17.Leaf, req engine.GroupRequest, sink groupSink, sum *GroupSummary,
	prog *tracker) (int64, error) {
	fi := &d.files[i]
	if fi.parquet != nil {
		keys := map[string]bool{}
		for _, k := range req.Keys {
			keys[k] = true
		}
		return d.groupParquet(ctx, i, leaves, keys, req.Filter, sink, sum, prog)
	}
	// IPC files, and stream files, are read in place (ipcSlices); standard
	// input, and files of types the in-place decoder does not lay out, by
	// the stream reader.
	if s := d.sources[i]; s.Path != Stdin && fi.stream == nil {
		sl, err := d.openIPCSlices(ctx, i, leaves)
		if err == nil {
			rows, err := sl.group(ctx, sink, d.opts.Workers, prog)
			if cerr := sl.close(); err == nil && cerr != nil {
				err = cerr
			}
			return rows, err
		}
		if !errors.Is(err, errNotInPlace) {
			return 0, err
		}
	}
	rdr, err := d.openReader(ctx, i, prog)
	if err != nil {
		return 0, err
	}
	defer rdr.close() //nolint:errcheck // (a reader's close fails only after its own error)
	var rows int64
	for {
		rec, err := rdr.next(ctx)
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return 0, err
		}
		rows += rec.NumRows()
		err = sink.add(rec, nil)
		rec.Release()
		if err != nil {
			return 0, err
		}
	}

}

// newGroupSink is the sink of a source's record batches (extra: the
// columns added to each, withExtra), grouped by *g, which the first batch
// prepared or added makes (eng.NewGrouper of its schema, on whichever
// goroutine has it first; *pending, the rows skipped before, are skipped
// by it then).
func (d *Dataset) newGroupSink(ctx context.Context, eng *engine.Engine, req engine.GroupRequest, extra []extraColumn,
	g **engine.Grouper, pending *int64, sum *GroupSummary) groupSink {
	// The grouper, made by the first batch prepared or added (its schema's,
	// on whichever goroutine has it first), for the decoding goroutines:
	// they prepare the batches (engine.Grouper.Prepare), which add then adds
	// in order. Made by add alone, the grouper would leave the row groups
	// decoded ahead of the first one added unprepared, each then grouped in
	// turn by add, a few morsels at a time.
	var made atomic.Pointer[engine.Grouper]
	made.Store(*g)
	var making sync.Mutex // (*g and *pending while the grouper is not made)
	grouper := func(schema *arrow.Schema) (*engine.Grouper, error) {
		if gr := made.Load(); gr != nil {
			return gr, nil
		}
		making.Lock()
		defer making.Unlock()
		if *g == nil {
			gr, err := eng.NewGrouper(schema, req)
			if err != nil {
				return nil, &groupingError{err}
			}
			gr.SkipRows(*pending)
			*pending = 0
			*g = gr
			made.Store(gr)
		}
		return *g, nil
	}
	return groupSink{
		prepare: func(rec arrow.Record) (p *engine.Prepared, err error) {
			defer recoverTo(&err) // (arrays Arrow builds lazily panic on corrupt bytes)
			if len(extra) > 0 {
				if rec, err = d.withExtra(rec, extra); err != nil {
					return nil, err
				}
				defer rec.Release()
			}
			gr, err := grouper(rec.Schema())
			if err != nil {
				return nil, err
			}
			return gr.Prepare(ctx, rec)
		},
		add: func(rec arrow.Record, p *engine.Prepared) (err error) {
			defer recoverTo(&err)
			if p != nil { // (prepared by the grouper made)
				sum.Batches++
				return made.Load().AddPrepared(ctx, p)
			}
			if len(extra) > 0 {
				if rec, err = d.withExtra(rec, extra); err != nil {
					return err
				}
				defer rec.Release()
			}
			gr, err := grouper(rec.Schema())
			if err != nil {
				return err
			}
			sum.Batches++
			return gr.Add(ctx, rec)
		},
		skip: func(n int64) {
			making.Lock()
			defer making.Unlock()
			if *g == nil {
				*pending += n
			} else {
				(*g).SkipRows(n)
			}
		},
	}
}

// groupParquet reads the leaves of Parquet source i a row group at a time
// (groupRowGroups: walked by the guard, charged to the memory budget, then
// decoded a batch at a time), and hands the rows to add as record batches
// of the leaves, under their names. A row group whose statistics (stats.go:
// the exact ones) exclude every row filter f keeps is skipped, and counted
// in sum.
func (d *Dataset) groupParquet(ctx context.Context, i int, leaves []arrow17.Leaf, keys map[string]bool, f engine.RowFilter, sink groupSink, sum *GroupSummary,
	prog *tracker) (int64, error) {
	fi := &d.files[i]
	pls, err := parquetLeaves(fi.parquet, leaves, make([]int, len(leaves)), !fi.parquet.crypt.encrypted && !d.opts.ArrowDecode)
	if err != nil {
		return 0, err
	}
	for k := range pls {
		// The page path decodes the flat leaves of fixed width; pqarrow
		// the others (strings, booleans).
		if p := pls[k].page; p != nil && (p.kind == column.Opaque || p.maxRep > 0 || p.exists > 0 || pls[k].elem || pls[k].list != nil || pageRowWidth(p) <= 0) {
			pls[k].page = nil
		}
		// Keys: their chunks of dictionary-encoded pages as dictionary
		// indices (pageLeaf.dictKey), a key's group then found once per
		// dictionary entry. The other chunks of an integer key are its
		// values from the page path; of a string or binary key (which the
		// page path does not decode otherwise, dictKeyPageLeaf), through
		// pqarrow (as dictionaries: newLeafFileReader).
		if l := &pls[k]; keys[leaves[k].Name] && l.list == nil && !l.elem && !fi.parquet.crypt.encrypted && !d.opts.ArrowDecode {
			if l.page != nil {
				if pl, ok := asDictKey(*l.page); ok {
					l.page = &pl
				}
			} else if pl, err := dictKeyPageLeaf(fi.parquet.meta, l.col, l.typ); err == nil {
				l.page = &pl
			}
		}
	}
	md := fi.parquet.meta
	run := &parquetRun{src: d.sources[i], pqf: fi.parquet, leaves: pls, mem: d.opts.Mem, workers: d.opts.Workers,
		decodeBytes: d.opts.DecodeBytes, budget: d.opts.Budget}
	mayMatch := func(int) bool { return true }
	if f != nil {
		cols := f.Columns()
		fl := make([]arrow17.Leaf, len(cols))
		sls := make([]*statsLeaf, len(cols))
		for k, name := range cols {
			for j, l := range leaves {
				if l.Name == name {
					fl[k] = l
					if sl, err := pruneLeafOf(md, pls[j].col, pls[j].typ); err == nil {
						sls[k] = &sl
					}
				}
			}
		}
		test, err := engine.Pruner(f, fl)
		if err != nil {
			return 0, &groupingError{err} // (the filter's errors say "where:")
		}
		states := make([]agg.State, len(cols))
		ptrs := make([]*agg.State, len(cols))
		if !fi.parquet.crypt.encrypted {
			pf := &pageFilter{leaf: make([]int, len(cols)), stats: sls, test: test}
			for k, name := range cols {
				pf.leaf[k] = -1
				for j, l := range leaves {
					if l.Name == name && sls[k] != nil {
						pf.leaf[k] = j
					}
				}
			}
			run.pages = pf
		}
		mayMatch = func(rg int) bool {
			for k, sl := range sls {
				ptrs[k] = nil
				if sl == nil {
					continue
				}
				if st, err := sl.state(md, rg); err == nil {
					states[k] = st
					ptrs[k] = &states[k]
				}
			}
			return test(ptrs)
		}
	}
	src, err := d.sources[i].open()
	if err != nil {
		return 0, err
	}
	defer src.Close()
	var pf *file.Reader
	if fi.parquet.crypt.encrypted {
		pf, err = fi.parquet.openReader(src, md)
	} else {
		pf, err = file.NewParquetReader(src, file.WithReadProps(parquetReadProps(md)), file.WithMetadata(md))
	}
	if err != nil {
		return 0, fmt.Errorf("opening the Parquet file: %w", err)
	}
	// String and binary keys are read as dictionaries, as most writers
	// store them: a key's group is then found once per dictionary value.
	var dictCols []int
	for k, l := range leaves {
		if keys[l.Name] && (l.Kind == column.Binary || l.Kind == column.LargeBinary) && pls[k].list == nil {
			dictCols = append(dictCols, pls[k].col)
		}
	}
	fr, err := newLeafFileReader(pf, d.opts.Mem, dictCols...)
	if err != nil {
		return 0, fmt.Errorf("reading the Parquet schema: %w", err)
	}
	var rows int64
	var todo []int // the row groups the filter may keep
	for rg := range md.RowGroups {
		n := md.RowGroups[rg].NumRows
		rows += n
		if !mayMatch(rg) {
			sum.Pruned++
			sum.PrunedRows += n
			continue
		}
		todo = append(todo, rg)
	}
	m, err := mapSource(src, src.Size())
	if err != nil {
		return 0, err
	}
	defer m.unmap() //nolint:errcheck // (an unmap fails only for a bad range)
	run.mapped = m.mapped
	err = run.groupRowGroups(ctx, src, pf, fr, todo, sink, prog)
	if run.pages != nil {
		sk, ps := &sum.Pages, &run.pages.skips
		sk.RowGroups, sk.Pages, sk.Rows = sk.RowGroups+ps.RowGroups, sk.Pages+ps.Pages, sk.Rows+ps.Rows
		if sk.NotUsed == "" && ps.NotUsed != "" {
			sk.NotUsed = d.sources[i].Name() + ": " + ps.NotUsed
		}
	}
	if err != nil {
		return 0, err
	}
	return rows, nil
}

// groupAhead is the fewest row groups decoded at once while grouping.
const groupAhead = 3

// groupBatchBytes is about the bytes of the record batches of a row group
// that grouping decodes, all its leaves together: large enough that a batch
// keeps the grouper's workers busy, small enough that memory does not grow
// with the row group.
const groupBatchBytes = 32 << 20

// groupBatchesHeld is how many of a row group's batches are held at once:
// one being decoded, one waiting, one being grouped.
const groupBatchesHeld = 3

// rowGroupRead is a row group being decoded for grouping: its record
// batches, in order, then an error if one stopped it; charge holds the
// memory budget's charge of its decoding until it is released.
type rowGroupRead struct {
	batches chan decodedBatch
	charge  *budget.Charge
	// first and rows are the row group's rows in the file's.
	first, rows int64
	// skips is what the page indexes skipped of it (pageFilter).
	skips PageSkips
}

// decodedBatch is a batch of rows of a row group's leaves, as Arrow arrays
// (a table: a leaf's arrays may be cut where its dictionary changes), or
// the error that stopped the decoding.
type decodedBatch struct {
	tbl arrow.Table
	err error
	// skip are the rows of the row group before the batch's and after the
	// batch before, not decoded (pageFilter).
	skip int64
	// recs are tbl's record batches and preps their grouping begun
	// (groupSink.prepare) on the decoding goroutine; nil: not prepared.
	recs  []arrow.Record
	preps []*engine.Prepared
}

// groupSink takes a source's record batches in order (add), each prepared
// or not (nil); prepare, on a decoding goroutine, begins a batch's
// grouping ahead of add (making the grouper, for the first batch to get
// there).
type groupSink struct {
	prepare func(arrow.Record) (*engine.Prepared, error)
	add     func(arrow.Record, *engine.Prepared) error
	// skip counts, in order with the batches added, rows of the source
	// that the filter keeps none of and that are not added (engine.
	// Grouper.SkipRows).
	skip func(n int64)
}

// groupRowGroups decodes row groups todo of the run's file (src, read by pf
// and fr; fixed-width leaves through the page path, the others through
// pqarrow), several at once, and hands their rows to sink in order, as
// record batches of the leaves under their names: each batch prepared
// (sink.prepare, engine.Grouper.Prepare) by the goroutine that decoded it,
// then added (sink.add) in order. Before a row group is decoded, its
// chunks' pages are walked by the guard (pqwalk.go), and what decoding
// them holds (arrowCost, and the batches held) is charged to the memory
// budget until the row group is grouped: the same checks and charges as
// the chunks aggregated without grouping. Each batch's leaves are decoded
// by a goroutine each (one after the other for an encrypted file, whose
// decryptors are not safe for concurrent use).
func (r *parquetRun) groupRowGroups(ctx context.Context, src *sourceBytes, pf *file.Reader, fr *pqarrow.FileReader, todo []int, sink groupSink,
	prog *tracker) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	serial := r.pqf.crypt.encrypted
	// A row group's leaves decode a goroutine each, then its batches are
	// prepared (pre-aggregated) by the workers: enough row groups ahead to
	// give every worker two chunks.
	ahead := max(groupAhead, 2*r.workers/max(1, len(r.leaves)))
	if serial {
		ahead = 1
	}
	// A row group holds a place of sem from before its walk until it is
	// grouped: at most ahead are walked or decoded at once.
	sem := make(chan struct{}, ahead)
	reads := make(chan *rowGroupRead, ahead)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		for rd := range reads { // (the row groups started: their decoders stop)
			for b := range rd.batches {
				b.release()
			}
			rd.charge.Close()
		}
		wg.Wait()
	}()
	md := r.pqf.meta
	firsts := make([]int64, len(md.RowGroups)+1) // the row groups' first rows, and the file's rows
	for rg, g := range md.RowGroups {
		firsts[rg+1] = firsts[rg] + g.NumRows
	}
	go func() {
		defer close(reads)
		for _, rg := range todo {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			rows := md.RowGroups[rg].NumRows
			rd := &rowGroupRead{batches: make(chan decodedBatch, 1), first: firsts[rg], rows: rows}
			cost, undict, keep, err := r.groupCost(ctx, src, pf.MetaData(), rg, serial, &rd.skips)
			// A row group whose leaves the page path decodes all is read
			// as parts of its rows that decode at once (each a window),
			// when it is read in windows or the file has fewer row groups
			// than workers.
			parts := int64(1)
			if err == nil && !serial && rows > 0 && r.allPaged(undict) {
				parts = (rows + cost.window - 1) / max(cost.window, 1)
				if n := int64(len(todo)); n < int64(r.workers) {
					parts = max(parts, min((int64(r.workers)+n-1)/n, rows/minGroupWindow))
				}
			}
			step := max(1, (rows+parts-1)/parts)
			for lo := int64(0); lo == 0 || lo < rows; lo += step {
				hi := min(lo+step, rows)
				if lo > 0 { // (the row group's first part took the place of it)
					groupParts.Add(1)
					select {
					case sem <- struct{}{}:
					case <-ctx.Done():
						return
					}
					rd = &rowGroupRead{batches: make(chan decodedBatch, 1), first: firsts[rg] + lo, rows: hi - lo}
				} else if parts > 1 {
					rd.rows = hi
				}
				need, window := cost.need(), cost.window
				if parts > 1 {
					need, window = cost.fixed+cost.held(hi-lo), hi-lo
				}
				if err == nil {
					rd.charge = r.budget.Holder(ctx)
					err = rd.charge.Grow("a row group decoded for grouping", need)
				}
				if err != nil {
					rd.batches <- decodedBatch{err: err}
					close(rd.batches)
				} else {
					wg.Add(1)
					batches := rd.batches
					go func() {
						defer wg.Done()
						defer close(batches)
						r.decodeRowGroup(ctx, src, fr, rg, undict, keep, lo, hi, window, serial, sink.prepare, batches)
					}()
				}
				select {
				case reads <- rd:
				case <-ctx.Done():
					for b := range rd.batches {
						b.release()
					}
					rd.charge.Close()
					return
				}
				if err != nil {
					break
				}
			}
		}
	}()
	next := int64(0) // the file's rows added or skipped
	for rd := range reads {
		sink.skip(rd.first - next) // (row groups pruned)
		next = rd.first
		var err error
		for b := range rd.batches {
			if err == nil {
				if err = b.err; err == nil {
					sink.skip(b.skip)
					next += b.skip + b.tbl.NumRows()
					err = b.add(sink.add)
				}
				if err != nil {
					cancel()
				}
			}
			b.release()
		}
		rd.charge.Close()
		<-sem
		if err != nil {
			return err
		}
		sink.skip(rd.first + rd.rows - next)
		next = rd.first + rd.rows
		// Progress: the file's bytes in proportion to its rows grouped.
		prog.to(int64(float64(prog.total()) * float64(next) / float64(max(firsts[len(md.RowGroups)], 1))))
		if r.pages != nil {
			r.pages.add(rd.skips)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	sink.skip(firsts[len(md.RowGroups)] - next)
	return nil
}

// groupCost walks the pages of the run's leaves' chunks in row group rg
// (each by a goroutine of its own, one after the other when serial), with
// md the file's metadata as its reader decrypts it, and returns what
// decoding them for grouping holds, and which dictKey leaves' chunks are
// not read as dictionary indices (undict: a page of them is not
// dictionary-encoded; those of strings and binaries pqarrow decodes, those
// of integers the page path as values), and the rows that the page indexes
// of the filter's columns may keep (keep: r.pages.keep; nil: every row),
// what they skip said in skips. A row group whose leaves the page path
// decodes would hold more than a quarter of the budget (groupWindowShare)
// is decoded a window of rows at a time (rowGroupCost.window).
func (r *parquetRun) groupCost(ctx context.Context, src *sourceBytes, md *metadata.FileMetaData, rg int, serial bool, skips *PageSkips) (
	cost rowGroupCost, undict []bool, keep []rowRange, err error) {
	rows := md.RowGroups[rg].NumRows
	needs := make([]int64, len(r.leaves))
	pls := make([]*pageLeaf, len(r.leaves)) // the leaves whose rows the page path holds
	undict = make([]bool, len(r.leaves))
	starts := make([][]int64, len(r.leaves)) // of the filter's columns (pageFilter)
	err = eachLeaf(len(r.leaves), serial, len(r.leaves), func(k int) error {
		l := &r.leaves[k]
		err := r.budget.Run(ctx, "a column chunk", func(c *budget.Charge) (err error) {
			defer recoverTo(&err)
			var g pageGuard
			if g.recordStarts = r.pages.filters(k); g.recordStarts {
				defer func() { starts[k] = g.starts }()
			}
			cc, err := md.RowGroup(rg).ColumnChunk(l.col)
			if err != nil {
				return err
			}
			if cc.NumValues() != rows {
				return fmt.Errorf("the column chunk has %d values, the row group %d rows", cc.NumValues(), rows)
			}
			var largest int64
			if l.page == nil || l.page.dictKey && l.page.width() == 0 {
				// Walked as pqarrow's chunks are (its decoders' checks and
				// costs, a string dictionary within MaxChunkDecodeBytes):
				// a string key's chunk is pqarrow's unless all its pages are
				// dictionary-encoded. A string key's chunk is walked first
				// with the indices of its dictionary-encoded pages left to
				// the page path (pageIndices), and again by arrowCost only
				// when pqarrow reads it.
				paged := false
				if l.page != nil {
					gc, ok, err := r.guardChunkOf(src, src.Size(), cc, l.col, true)
					if err != nil {
						return err
					}
					if ok {
						gc.charge, gc.pageIndices = c, true
						if largest, err = g.check(ctx, &gc); err != nil {
							return err
						}
						paged = !g.walk.undict
					}
				}
				if !paged {
					need, _, _, err := r.arrowCost(ctx, src, src.Size(), &g, c, md, cc, l)
					if err != nil || l.page == nil || g.walk.undict {
						// (its batches are counted with the row group's, below)
						needs[k], undict[k] = need-arrowTaskCost(l, cc.NumValues()), l.page != nil
						return err
					}
					largest = g.walk.largest
				}
			} else {
				gc, ok, err := r.guardChunkOf(src, src.Size(), cc, l.col, false)
				if err != nil {
					return err
				}
				if !ok {
					return errors.New("an encrypted column chunk") // (not paged: groupParquet)
				}
				gc.charge = c
				if largest, err = g.check(ctx, &gc); err != nil {
					return err
				}
				undict[k] = l.page.dictKey && g.walk.undict
			}
			pl := l.page.chunkLeaf(undict[k])
			pls[k] = pl
			needs[k] = pageRowsBytes(pl, rows) + largest + 16*max(g.walk.dict, 0)
			if pl.dictKey { // the dictionary's entries and offsets, held with the rows
				needs[k] += g.walk.dictBytes + 8*(max(g.walk.dict, 0)+1)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("row group %d: column %q: %w", rg, l.name, err)
		}
		return nil
	})
	if err != nil {
		return cost, nil, nil, err
	}
	// The batches (decodeRowGroup's: the rows pqarrow decodes, the page
	// path's sliced), counted once for all leaves; the page path's windows,
	// for the chunks it decodes at once (decodePagedLeaves), no larger than
	// the row group. A small row group holds little of either.
	var w int64 // bytes a row of the leaves pqarrow decodes
	paged := 0
	for k := range r.leaves {
		if pls[k] != nil {
			paged++
		} else {
			w += r.rowBytes(rg, &r.leaves[k], rows)
		}
	}
	var need int64
	if w > 0 {
		need += groupBatchesHeld * batchOf(groupBatchBytes, w, rows) * w
	}
	if paged > 0 {
		need += int64(pagedAtOnce(paged)) * pageWindowBytes / pageWindow * min(pageWindow, rows)
	}
	for _, n := range needs {
		need += n
	}
	cost = rowGroupCost{pls: pls, rows: rows, window: rows}
	all := cost.held(rows)
	cost.fixed = need - all
	if share := r.budget.Total() / groupWindowShare; all > 0 && need > share {
		fit := int64(float64(max(share-cost.fixed, 0)) / 2 / float64(all) * float64(rows))
		cost.window = min(rows, max(fit, minGroupWindow))
	}
	if r.pages != nil {
		// (run again when the budget is busy: what it counts is its own)
		err := r.budget.Run(ctx, "a column index", func(c *budget.Charge) (err error) {
			var sk PageSkips
			if keep, err = r.pages.keep(c, src, md, rg, r.leaves, starts, &sk); err == nil {
				*skips = sk
			}
			return err
		})
		if err != nil {
			return cost, nil, nil, fmt.Errorf("row group %d: %w", rg, err)
		}
	}
	return cost, undict, keep, nil
}

// rowGroupCost is what decoding a row group for grouping holds (groupCost).
type rowGroupCost struct {
	// fixed is held whatever its rows; pls are the leaves whose rows the
	// page path holds (nil for the others).
	fixed int64
	pls   []*pageLeaf
	// rows are the row group's; window the rows decoded at once (rows
	// when all fit a quarter of the budget).
	rows, window int64
}

// held is what the page path's rows hold of n rows of each leaf.
func (c rowGroupCost) held(n int64) (b int64) {
	for _, pl := range c.pls {
		if pl != nil {
			b += pageRowsBytes(pl, n)
		}
	}
	return b
}

// need is what decoding the row group holds: two windows when it is read
// in windows (one decoded while the batches of the one before are
// grouped).
func (c rowGroupCost) need() int64 {
	if c.window < c.rows {
		return c.fixed + 2*c.held(c.window)
	}
	return c.fixed + c.held(c.rows)
}

// allPaged reports whether the page path decodes every leaf of the run
// for grouping (decodePagedLeaves; undict as groupCost says): then any
// range of a row group's rows decodes alone.
func (r *parquetRun) allPaged(undict []bool) bool {
	for k, l := range r.leaves {
		if l.page == nil || undict[k] && l.page.width() == 0 {
			return false
		}
	}
	return len(r.leaves) > 0
}

// groupWindowShare: a row group whose page leaves' rows take more than
// 1/groupWindowShare of the budget is decoded for grouping a window of rows
// at a time (groupCost), of at least minGroupWindow rows.
const groupWindowShare = 4

// minGroupWindow is the fewest rows of a window (a variable for the tests).
var minGroupWindow int64 = 1 << 16

// groupWindows and groupParts count the windows of rows decoded after a
// row group's first, and its parts after its first (for the tests).
var groupWindows, groupParts atomic.Int64

// decodeRowGroup decodes the chunks of the run's leaves in row group rg
// (those of undict not as dictionary indices: groupCost) into batches of
// about groupBatchBytes of its rows [lo, hi) that keep keeps (nil: all),
// sent to out in order, the page path's leaves a window of rows at a time
// (groupCost); an error is the last thing sent. Only a run whose leaves
// the page path decodes all (allPaged) starts past the row group's first
// row.
func (r *parquetRun) decodeRowGroup(ctx context.Context, src *sourceBytes, fr *pqarrow.FileReader, rg int, undict []bool, keep []rowRange,
	lo, hi, window int64, serial bool, prepare func(arrow.Record) (*engine.Prepared, error), out chan<- decodedBatch) {
	rows := r.pqf.meta.RowGroups[rg].NumRows
	if keep = clipRanges(keep, rows, lo, hi); keep == nil {
		keep = []rowRange{{0, rows}}
	}
	if len(keep) == 0 { // (no row the filter keeps)
		return
	}
	send := func(b decodedBatch) bool {
		b.prepare(prepare)
		select {
		case out <- b:
			return true
		case <-ctx.Done():
			b.release()
			return false
		}
	}
	fail := func(err error) { send(decodedBatch{err: fmt.Errorf("row group %d: %w", rg, err)}) }
	readers := make([]*pqarrow.ColumnReader, len(r.leaves))
	fields := make([]arrow.Field, len(r.leaves))
	defer func() {
		for _, cr := range readers {
			if cr != nil {
				cr.Release()
			}
		}
	}()
	// The leaves the page path decodes: each chunk's rows of a window at
	// once, by a goroutine each (pageRows), sliced into the batches.
	window = max(1, window)
	paged, err := r.decodePagedLeaves(ctx, src, rg, rows, undict, keep, lo, min(lo+window, hi), serial)
	release := func() {
		for k, a := range paged {
			if a != nil {
				a.Release()
				paged[k] = nil
			}
		}
	}
	defer func() { release() }()
	if err != nil {
		fail(err)
		return
	}
	var w int64
	for k := range r.leaves {
		l := &r.leaves[k]
		if paged[k] != nil {
			continue
		}
		var err error
		if readers[k], fields[k], err = openLeafChunk(ctx, fr, rg, l); err != nil {
			fail(err)
			return
		}
		w += r.rowBytes(rg, l, rows)
	}
	batch := window // (every leaf paged: a window at once)
	if w > 0 {
		batch = batchOf(groupBatchBytes, w, rows)
	}
	if len(r.leaves) == 0 { // (rows of none of the columns: their number)
		send(decodedBatch{tbl: array.NewTable(arrow.NewSchema(nil, nil), nil, hi-lo)})
		return
	}
	// skip reads n rows of the leaves pqarrow decodes, and drops them.
	skip := func(n int64) error {
		return eachLeaf(len(r.leaves), serial, len(r.leaves), func(k int) error {
			for left := n; left > 0 && readers[k] != nil; {
				ch, err := readLeafBatch(readers[k], &r.leaves[k], min(batch, left))
				if err != nil {
					return err
				}
				left -= int64(ch.Len())
				ch.Release()
			}
			return nil
		})
	}
	cols := make([]*arrow.Chunked, len(r.leaves))
	pos := lo  // the next row of the leaves pqarrow decodes
	last := lo // the end of the last range sent
	for wlo := lo; wlo < hi; wlo += window {
		whi := min(wlo+window, hi)
		kept := clipRanges(keep, rows, wlo, whi)
		if kept == nil {
			kept = []rowRange{{wlo, whi}}
		}
		if len(kept) == 0 {
			continue
		}
		if wlo > lo {
			groupWindows.Add(1)
			release()
			if paged, err = r.decodePagedLeaves(ctx, src, rg, rows, undict, keep, wlo, whi, serial); err != nil {
				fail(err)
				return
			}
		}
		for k, a := range paged {
			if a != nil {
				fields[k] = arrow.Field{Name: r.leaves[k].name, Type: a.DataType(), Nullable: true}
			}
		}
		for _, kr := range kept {
			if kr.lo > pos {
				if err := skip(kr.lo - pos); err != nil {
					fail(err)
					return
				}
				pos = kr.lo
			}
			if !r.sendRows(ctx, rg, pos, kr.hi, kr.lo-last, batch, paged, wlo, readers, fields, cols, serial, send) {
				return
			}
			pos, last = kr.hi, kr.hi
		}
	}
}

// sendRows decodes rows [done, end) of row group rg into batches of batch
// rows, sent by send (false: stopped, by an error sent or a cancel), the
// first after skip rows not decoded: the leaves the page path decoded
// (paged, from row base on) sliced, the others read by their readers, each
// leaf by a goroutine of its own.
func (r *parquetRun) sendRows(ctx context.Context, rg int, done, end, skip, batch int64, paged []arrow.Array, base int64, readers []*pqarrow.ColumnReader,
	fields []arrow.Field, cols []*arrow.Chunked, serial bool, send func(decodedBatch) bool) bool {
	for done < end {
		n := min(batch, end-done)
		err := eachLeaf(len(r.leaves), serial, len(r.leaves), func(k int) (err error) {
			if a := paged[k]; a != nil {
				sl := array.NewSlice(a, done-base, done+n-base)
				cols[k] = arrow.NewChunked(a.DataType(), []arrow.Array{sl})
				sl.Release()
				return nil
			}
			cols[k], err = readLeafBatch(readers[k], &r.leaves[k], n)
			return err
		})
		tcols := make([]arrow.Column, 0, len(cols))
		for k, c := range cols {
			if c != nil {
				fields[k].Type = c.DataType()
				tcols = append(tcols, *arrow.NewColumn(fields[k], c))
				c.Release()
				cols[k] = nil
			}
		}
		b := decodedBatch{skip: skip}
		skip = 0
		if err != nil {
			b.err = fmt.Errorf("row group %d: %w", rg, err)
		} else {
			b.tbl = array.NewTable(arrow.NewSchema(fields, nil), tcols, n)
		}
		for k := range tcols {
			tcols[k].Release()
		}
		if !send(b) || b.err != nil {
			return false
		}
		done += n
	}
	return ctx.Err() == nil
}

// decodePagedLeaves decodes rows [lo, hi) of the chunks of the run's page
// leaves (l.page set) in row group rg, of rows rows, through the page path
// (pageRows),
// those of undict not as dictionary indices (those of strings and
// binaries not at all), each by a goroutine of its own (one after the
// other when serial), and returns them as Arrow arrays at the leaves'
// places (nil for the others).
func (r *parquetRun) decodePagedLeaves(ctx context.Context, src *sourceBytes, rg int, rows int64, undict []bool, keep []rowRange, lo, hi int64, serial bool) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(r.leaves))
	err := eachLeaf(len(r.leaves), serial, pagedAtOnce(len(r.leaves)), func(k int) (err error) {
		l := &r.leaves[k]
		if l.page == nil || undict[k] && l.page.width() == 0 {
			return nil
		}
		if out[k], err = r.decodePaged(ctx, src, rg, l, l.page.chunkLeaf(undict[k]), rows, keep, lo, hi); err != nil {
			return fmt.Errorf("column %q: %w", l.name, err)
		}
		return nil
	})
	return out, err
}

// eachLeaf runs f(k) for k in [0, n), each by a goroutine of its own, at
// most atOnce at a time (one after the other when serial), and returns
// their errors joined.
func eachLeaf(n int, serial bool, atOnce int, f func(k int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, max(1, atOnce))
	var wg sync.WaitGroup
	for k := range n {
		if serial {
			errs[k] = f(k)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[k] = f(k)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// pagedAtOnce is how many of a row group's leaves (of leaves) the page path
// decodes at once.
func pagedAtOnce(leaves int) int {
	return max(1, min(leaves, runtime.GOMAXPROCS(0)))
}

// pageWindowBytes bounds the buffers of the page path's windows (a window of
// values of up to 16 bytes, their indices, validity and spread copies).
const pageWindowBytes = 64 * pageWindow

// decodePaged decodes rows [lo, hi) of the chunk of leaf l in row group rg,
// of rows rows, into an Arrow array through the page path, as page leaf pl
// (l.page or a copy), its data pages none of whose rows are in keep not
// read (their rows null); a fault of the mapped file, or a panic, is an
// error.
func (r *parquetRun) decodePaged(ctx context.Context, src *sourceBytes, rg int, l *parquetLeaf, pl *pageLeaf, rows int64, keep []rowRange, lo, hi int64) (a arrow.Array, err error) {
	debug.SetPanicOnFault(true) // (the mapped file's faults: mapped.go)
	defer recoverTo(&err)
	md := r.pqf.meta
	cc, err := md.RowGroup(rg).ColumnChunk(l.col)
	if err != nil {
		return nil, err
	}
	if cc.NumValues() != rows {
		return nil, fmt.Errorf("the column chunk has %d values, the row group %d rows", cc.NumValues(), rows)
	}
	c, ok, err := r.guardChunkOf(src, src.Size(), cc, l.col, false)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("an encrypted column chunk") // (not paged: groupParquet)
	}
	if off, n, err := chunkRange(md, cc, src.Size()); err == nil {
		defer releaseMapped(r.mapped, off, n)
	}
	wk, _ := r.rowScratch.Get().(*worker)
	if wk == nil {
		wk = new(worker)
	}
	defer r.rowScratch.Put(wk)
	pr, err := wk.pages.decodeRows(ctx, &wk.guard, &c, pl, rows, keep, lo, hi, &r.rowBufs)
	if err != nil {
		return nil, err
	}
	return pr.array(), nil
}

// prepare cuts the batch into its record batches and begins their
// grouping (prepare; the batch is left as it is when prepare is nil or
// declines the first): an error of prepare becomes the batch's.
func (b *decodedBatch) prepare(prepare func(arrow.Record) (*engine.Prepared, error)) {
	if prepare == nil || b.err != nil || b.tbl == nil {
		return
	}
	tr := array.NewTableReader(b.tbl, b.tbl.NumRows())
	defer tr.Release()
	for tr.Next() {
		rec := tr.Record()
		p, err := prepare(rec)
		if err != nil {
			b.err = err
			return
		}
		if p == nil && len(b.recs) == 0 {
			return // (not prepared: add reads the table)
		}
		rec.Retain()
		b.recs, b.preps = append(b.recs, rec), append(b.preps, p)
	}
}

// add hands the batch to add as record batches, with their preparations
// (nil: none).
func (b *decodedBatch) add(add func(arrow.Record, *engine.Prepared) error) error {
	if b.recs != nil {
		for k, rec := range b.recs {
			p := b.preps[k]
			b.preps[k] = nil // (add releases it)
			if err := add(rec, p); err != nil {
				return err
			}
		}
		return nil
	}
	if b.tbl.NumCols() == 0 { // (rows of none of the columns: their number)
		rec := array.NewRecord(b.tbl.Schema(), nil, b.tbl.NumRows())
		defer rec.Release()
		return add(rec, nil)
	}
	tr := array.NewTableReader(b.tbl, b.tbl.NumRows())
	defer tr.Release()
	for tr.Next() {
		if err := add(tr.Record(), nil); err != nil {
			return err
		}
	}
	return nil
}

func (b *decodedBatch) release() {
	for _, p := range b.preps {
		if p != nil {
			p.Release()
		}
	}
	for _, rec := range b.recs {
		rec.Release()
	}
	b.recs, b.preps = nil, nil
	if b.tbl != nil {
		b.tbl.Release()
	}
}

// openLeafChunk opens the reader of the chunk of leaf l in row group rg,
// and returns it with the leaf's field, under the leaf's name; a panic of
// arrow-go's readers is an error.
func openLeafChunk(ctx context.Context, fr *pqarrow.FileReader, rg int, l *parquetLeaf) (cr *pqarrow.ColumnReader, field arrow.Field, err error) {
	defer recoverTo(&err)
	if cr, err = fr.GetFieldReader(ctx, l.col, map[int]bool{l.col: true}, []int{rg}); err != nil {
		return nil, field, fmt.Errorf("column %q: %w", l.name, err)
	}
	if cr == nil {
		return nil, field, fmt.Errorf("column %q: no reader for Parquet leaf column %d", l.name, l.col)
	}
	field = *cr.Field()
	field.Name, field.Nullable = l.name, true
	return cr, field, nil
}

// readLeafBatch decodes the next n rows of leaf l from cr into Arrow
// arrays; a panic of arrow-go's decoders is an error.
func readLeafBatch(cr *pqarrow.ColumnReader, l *parquetLeaf, n int64) (ch *arrow.Chunked, err error) {
	defer func() {
		if p := recover(); p != nil {
			if ch != nil {
				ch.Release()
				ch = nil
			}
			err = fmt.Errorf("column %q: %w", l.name, panicError(p))
		}
	}()
	if ch, err = cr.NextBatch(n); err != nil {
		return nil, fmt.Errorf("column %q: %w", l.name, err)
	}
	if int64(ch.Len()) != n {
		got := ch.Len()
		ch.Release()
		return nil, fmt.Errorf("column %q: %w: decoded %d rows of %d", l.name, errShortDecode, got, n)
	}
	if lt, ok := l.typ.(*logicalType); ok { // (its arrays counted, pqlogical.go)
		chunks := make([]arrow.Array, len(ch.Chunks()))
		for k, c := range ch.Chunks() {
			chunks[k] = array.NewExtensionArrayWithStorage(lt, c)
		}
		ch.Release()
		ch = arrow.NewChunked(lt, chunks)
		for _, c := range chunks {
			c.Release()
		}
	}
	return ch, nil
}

// extraColumn is a column of a source that the source does not store: a
// partition key of its path (a constant), or a column of the dataset it
// lacks (null).
type extraColumn struct {
	leaf  arrow17.Leaf // as the dataset types it
	value partitionValue
}

// withExtra is rec with the extra columns appended (a new record: release
// it).
func (d *Dataset) withExtra(rec arrow.Record, extra []extraColumn) (arrow.Record, error) {
	n := rec.NumRows()
	fields := append([]arrow.Field(nil), rec.Schema().Fields()...)
	cols := append([]arrow.Array(nil), rec.Columns()...)
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	for _, x := range extra {
		arr, err := constantArray(d.opts.Mem, x.leaf.Type, x.value, n)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", x.leaf.Name, err)
		}
		made = append(made, arr)
		fields = append(fields, arrow.Field{Name: x.leaf.Name, Type: x.leaf.Type, Nullable: true})
		cols = append(cols, arr)
	}
	return array.NewRecord(arrow.NewSchema(fields, nil), cols, n), nil
}

// constantArray is n values v of type dt: nulls, or a partition key's
// value (int64 or utf8, as partitions type them).
func constantArray(mem memory.Allocator, dt arrow.DataType, v partitionValue, n int64) (arrow.Array, error) {
	if v.null {
		return array.MakeArrayOfNull(mem, dt, int(n)), nil
	}
	switch dt.ID() {
	case arrow.INT64:
		x, err := strconv.ParseInt(v.value, 10, 64)
		if err != nil {
			return nil, err
		}
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.Reserve(int(n))
		for range n {
			b.UnsafeAppend(x)
		}
		return b.NewArray(), nil
	case arrow.STRING:
		b := array.NewStringBuilder(mem)
		defer b.Release()
		b.Reserve(int(n))
		b.ReserveData(int(n) * len(v.value))
		for range n {
			b.Append(v.value)
		}
		return b.NewArray(), nil
	}
	return nil, fmt.Errorf("a partition key of type %s", dt)
}
