package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/gpuagg"
)

// A Parquet file is aggregated a column chunk at a time: each (row group,
// selected leaf) pair is a task, run by one of the workers, that folds the
// chunk into a state of its own, either from its pages (pages.go) or from
// the Arrow arrays pqarrow decodes it into, batch by batch. Chunk states are
// merged in file order (row group by row group, leaves in selection order),
// so results do not depend on the number of workers or on timing, and a
// worker holds one chunk's buffers at a time: memory is bounded by the
// workers and the decode budget, not by the size or width of the file.

// DefaultDecodeBytes is the default of Options.DecodeBytes.
const DefaultDecodeBytes = 96 << 20

const (
	// batchBytes is about the size of the Arrow batches a column chunk is
	// decoded into: fixed, so that the batches, and with them the order in
	// which float values are summed, do not depend on the workers.
	batchBytes = 2 << 20
	// minBatchRows is the fewest rows of a batch (of wide values).
	minBatchRows = 4096
	// arrowTaskBytes is about the memory a task decoding a chunk into Arrow
	// arrays holds (its peak RSS is about twice that with Go's default GC,
	// garbage included: 35 to 45 MiB measured): its batches (the record reader
	// grows its buffers to powers of two, and allocates the next batch's
	// while the engine folds the last), the levels, the decoders' scratch
	// and the buffers of the page reader under it.
	arrowTaskBytes = 16 << 20
)

// parquetLeaf is a selected leaf of a Parquet file.
type parquetLeaf struct {
	out   int    // index of the leaf in the selection
	name  string // (dotted for struct fields)
	col   int    // its Parquet leaf column
	typ   arrow.DataType
	page  *pageLeaf  // how to aggregate it from its pages; nil: decode it into Arrow arrays
	stats *statsLeaf // the row groups answered from their statistics (stats.go); nil: none
}

// chunkResult is the partial aggregate of one column chunk.
type chunkResult struct {
	state gpuagg.State
	plan  gpuagg.ColumnPlan
}

// parquetLeaves resolves the leaves (as the file's schema has them, with
// their index in the selection in outIdx) to Parquet leaf columns, and picks
// those aggregated from pages when paged is set.
func parquetLeaves(pqf *parquetFile, leaves []column.Leaf, outIdx []int, paged bool) ([]parquetLeaf, error) {
	out := make([]parquetLeaf, len(leaves))
	for k, l := range leaves {
		sf := &pqf.manifest.Fields[l.Path[0]]
		for _, i := range l.Path[1:] {
			sf = &sf.Children[i]
		}
		if !sf.IsLeaf() {
			return nil, fmt.Errorf("column %q is not a Parquet leaf column", l.Name)
		}
		out[k] = parquetLeaf{out: outIdx[k], name: l.Name, col: sf.ColIndex, typ: sf.Field.Type}
		if paged {
			if pl, err := pageLeafOf(pqf.meta, sf.ColIndex, sf.Field.Type); err == nil {
				out[k].page = &pl
			}
		}
	}
	return out, nil
}

// parquetRun aggregates the selected leaves of one Parquet file.
type parquetRun struct {
	path    string
	pqf     *parquetFile
	leaves  []parquetLeaf
	mem     memory.Allocator
	eng     *gpuagg.Engine // for the leaves decoded into Arrow arrays
	pageEng *gpuagg.Engine // for the leaves aggregated from pages
	aggs    gpuagg.Agg
	workers int
	// decodeBytes bounds the memory of the tasks decoding chunks into Arrow
	// arrays at once, all workers together: at most decodeBytes /
	// arrowTaskBytes of them run at a time.
	decodeBytes int64
	// useStats answers the chunks whose row-group statistics give the
	// aggregates from them (stats.go).
	useStats bool
}

// worker is what one worker reuses from task to task.
type worker struct {
	pages pageScratch
	guard pageGuard // checks chunks before arrow-go reads them (pqguard.go)
}

// run aggregates every chunk of the leaves into src, whose rows are the
// file's, and reports the progress of the file's bytes to prog.
func (r *parquetRun) run(ctx context.Context, src *partial, prog *tracker) (err error) {
	defer recoverTo(&err)
	md := r.pqf.meta
	nrg := len(md.RowGroups)
	starts := make([]int64, nrg+1) // the first row of each row group
	for rg := 0; rg < nrg; rg++ {
		n := md.RowGroup(rg).NumRows()
		if n < 0 {
			return fmt.Errorf("row group %d: %d rows", rg, n)
		}
		starts[rg+1] = starts[rg] + n
	}
	if starts[nrg] != md.NumRows {
		return fmt.Errorf("the row groups have %d rows, the footer says %d", starts[nrg], md.NumRows)
	}
	r.planStats()
	ntasks := nrg * len(r.leaves)
	if ntasks == 0 {
		return nil
	}

	f, err := os.Open(r.path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	var fr *pqarrow.FileReader
	for _, l := range r.leaves {
		if l.page == nil && !l.stats.all() {
			pf, err := file.NewParquetReader(f, file.WithReadProps(parquetReadProps(md)), file.WithMetadata(md))
			if err != nil {
				return fmt.Errorf("opening the Parquet file: %w", err)
			}
			if fr, err = newLeafFileReader(pf, r.mem); err != nil {
				return fmt.Errorf("reading the Parquet schema: %w", err)
			}
			break
		}
	}
	// Progress: the compressed bytes of the chunks merged.
	sizes := make([]int64, ntasks)
	var total int64
	for t := range sizes {
		if rcs := md.RowGroups[t/len(r.leaves)].Columns; r.leaves[t%len(r.leaves)].col < len(rcs) {
			if m := rcs[r.leaves[t%len(r.leaves)].col].GetMetaData(); m != nil {
				sizes[t] = max(m.GetTotalCompressedSize(), 0)
			}
		}
		total += sizes[t]
	}

	type done struct {
		t   int
		res chunkResult
		err error
	}
	workers := max(1, min(r.workers, ntasks))
	maxArrow := max(1, min(int(r.decodeBytes/arrowTaskBytes), runtime.NumCPU())) // decoding tasks at once
	tasks := make(chan int)
	results := make(chan done)
	ctx, cancel := context.WithCancel(ctx)
	next, merged, running, arrowRunning := 0, 0, 0, 0
	defer func() { // on every way out: stop the workers, wait for their tasks
		cancel()
		close(tasks)
		for ; running > 0; running-- {
			<-results
		}
	}()
	for w := 0; w < workers; w++ {
		go func() {
			var wk worker
			for t := range tasks {
				d := done{t: t}
				rg, l := t/len(r.leaves), &r.leaves[t%len(r.leaves)]
				var ok bool
				if d.res, ok = r.statsChunk(rg, l); !ok {
					d.res, d.err = r.chunk(ctx, f, fi.Size(), fr, &wk, rg, l)
				}
				results <- d
			}
		}()
	}
	// Tasks go out in order, at most window ahead of the first one not
	// merged yet, and are merged in order: few chunk states wait, however
	// many row groups there are.
	window := 4 * workers
	waiting := make(map[int]chunkResult, window)
	isArrow := func(t int) bool {
		l := &r.leaves[t%len(r.leaves)]
		return l.page == nil && !l.stats.answers(t/len(r.leaves))
	}
	var first error // the error of the earliest failed task
	firstAt := ntasks
	var progressed int64
	for merged < ntasks && (first == nil || running > 0) {
		var send chan int
		if first == nil && next < ntasks && next-merged < window && (!isArrow(next) || arrowRunning < maxArrow) {
			send = tasks
		}
		select {
		case send <- next:
			if isArrow(next) {
				arrowRunning++
			}
			next++
			running++
		case d := <-results:
			running--
			if isArrow(d.t) {
				arrowRunning--
			}
			if d.err != nil {
				// The earliest chunk's error, but not the cancellations the
				// first error caused.
				if d.t < firstAt && (first == nil || !errors.Is(d.err, context.Canceled)) {
					first, firstAt = d.err, d.t
				}
				cancel()
				continue
			}
			waiting[d.t] = d.res
			for {
				res, ok := waiting[merged]
				if !ok {
					break
				}
				delete(waiting, merged)
				src.add(r.leaves[merged%len(r.leaves)].out, res.state, starts[merged/len(r.leaves)], res.plan)
				progressed += sizes[merged]
				if prog != nil && total > 0 {
					prog.to(int64(float64(prog.size) * float64(progressed) / float64(total)))
				}
				merged++
			}
		}
	}
	if first == nil {
		r.notePlans(src)
	}
	return first
}

// chunk aggregates the chunk of leaf l in row group rg; a panic of the
// Parquet reader on corrupt bytes is an error.
func (r *parquetRun) chunk(ctx context.Context, f io.ReaderAt, size int64, fr *pqarrow.FileReader, wk *worker, rg int, l *parquetLeaf) (res chunkResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicError(p)
		}
		if err != nil {
			err = fmt.Errorf("row group %d: column %q: %w", rg, l.name, err)
		}
	}()
	rgm := r.pqf.meta.RowGroup(rg)
	rows := rgm.NumRows()
	if l.col >= rgm.NumColumns() {
		return res, fmt.Errorf("the row group has %d columns", rgm.NumColumns())
	}
	cc, err := rgm.ColumnChunk(l.col)
	if err != nil {
		return res, err
	}
	if l.page == nil {
		if _, err := r.guard(ctx, &wk.guard, f, size, cc, l.col, true); err != nil {
			return res, err
		}
		return r.arrowChunk(ctx, fr, rg, l, rows)
	}
	if cc.NumValues() != rows {
		return res, fmt.Errorf("the column chunk has %d values, the row group %d rows", cc.NumValues(), rows)
	}
	if rows == 0 {
		res.state = agg.New(l.page.kind.Family(), r.aggs)
		return res, nil
	}
	off, n, err := chunkRange(r.pqf.meta, cc, size)
	if err != nil {
		return res, err
	}
	if _, err := compress.GetCodec(cc.Compression()); err != nil {
		return res, err
	}
	s := &wk.pages
	if s.pages.limit, err = r.guard(ctx, &wk.guard, f, size, cc, l.col, false); err != nil {
		return res, err
	}
	s.stream.reset(f, off, n)
	if s.pr == nil {
		if s.pr, err = file.NewPageReader(&s.stream, rows, cc.Compression(), &s.pages, nil); err != nil {
			return res, err
		}
	} else {
		s.pr.Reset(&s.stream, rows, cc.Compression(), nil)
	}
	return s.aggregateChunk(ctx, r.pageEng, s.pr, l.page, rows, r.aggs&gpuagg.OrderedAggs != 0)
}

// arrowChunk decodes the chunk of leaf l in row group rg into Arrow arrays
// through pqarrow, batch by batch, and aggregates them with the engine. fr
// is a newLeafFileReader: the leaf is read by a leaf reader of its own, in
// this goroutine, whether or not it is nested in a struct.
func (r *parquetRun) arrowChunk(ctx context.Context, fr *pqarrow.FileReader, rg int, l *parquetLeaf, rows int64) (chunkResult, error) {
	cr, err := fr.GetFieldReader(ctx, l.col, map[int]bool{l.col: true}, []int{rg})
	if err != nil {
		return chunkResult{}, err
	}
	if cr == nil {
		return chunkResult{}, fmt.Errorf("no reader for Parquet leaf column %d", l.col)
	}
	defer cr.Release()
	// The leaf under its dotted name; nullable, since a leaf that is
	// required in a struct that is not has nulls.
	field := *cr.Field()
	field.Name, field.Nullable = l.name, true
	schema := arrow.NewSchema([]arrow.Field{field}, nil)
	acc, err := r.eng.NewAccumulator(schema, gpuagg.Request{Columns: []string{l.name}, Aggs: r.aggs})
	if err != nil {
		return chunkResult{}, err
	}
	batch := r.batchRows(rg, l, rows)
	for done := int64(0); done < rows; {
		if err := ctx.Err(); err != nil {
			return chunkResult{}, err
		}
		ch, err := cr.NextBatch(min(batch, rows-done))
		if err != nil {
			return chunkResult{}, err
		}
		got := int64(0)
		for _, c := range ch.Chunks() { // more than one when the dictionary changes
			rec := array.NewRecord(schema, []arrow.Array{c}, int64(c.Len()))
			err = acc.Add(ctx, rec)
			rec.Release()
			if err != nil {
				break
			}
			got += int64(c.Len())
		}
		ch.Release()
		if err != nil {
			return chunkResult{}, err
		}
		if got == 0 || got > rows-done {
			return chunkResult{}, fmt.Errorf("decoded %d rows where %d were left", got, rows-done)
		}
		done += got
	}
	return chunkResult{state: acc.States()[0], plan: acc.Plan()[0]}, nil
}

// batchRows is the number of rows of the Arrow batches of leaf l in row
// group rg: about batchBytes, a multiple of the CPU morsel when large.
func (r *parquetRun) batchRows(rg int, l *parquetLeaf, rows int64) int64 {
	w := int64(8)
	if k, err := column.KindOf(l.typ); err == nil && k.Width() > 0 {
		w = int64(k.Width())
	}
	if rcs := r.pqf.meta.RowGroups[rg].Columns; l.col < len(rcs) && rows > 0 {
		if m := rcs[l.col].GetMetaData(); m != nil {
			w = max(w, m.GetTotalUncompressedSize()/rows+1)
		}
	}
	n := batchBytes / w
	if n > gpuagg.MorselSize {
		n -= n % gpuagg.MorselSize
	}
	return max(min(n, rows), min(rows, minBatchRows))
}
