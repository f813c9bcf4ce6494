package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/metadata"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/budget"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/startup"
	"github.com/arrowagg/arrowagg/planner"
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
	// list, for a list or a map (a leaf that is no Parquet leaf column),
	// is its levels: it is counted from the levels of col, the first
	// Parquet leaf column under it (pqlist.go).
	list *file.LevelInfo
	// elem: the leaf is an element column (arrow17.Leaf.Repeated > 0), whose
	// values are the elements of lists; its states count elements, not
	// rows (pqlist.go).
	elem bool
	// gpu says, per row group, whether the GPU decodes its chunk's pages
	// there, every such chunk's at once (pqgpu.go); their tasks have
	// nothing to do. nil: none. cpuWhy, per row group, is why the planner
	// left the chunk's pages to the CPU, when it weighed the GPU for it.
	gpu    []bool
	cpuWhy []string
}

// onGPU reports whether the GPU decodes l's chunk in row group rg.
func (l *parquetLeaf) onGPU(rg int) bool { return l.gpu != nil && l.gpu[rg] }

// chunkResult is the partial aggregate of one column chunk.
type chunkResult struct {
	state agg.State
	plan  engine.ColumnPlan
	// viewBytes and gpuBytes, of a chunk the CPU page path decodes: the
	// bytes of the views it handed the engine, and the share of them the
	// engine gave the GPU (foldView).
	viewBytes, gpuBytes float64
}

// foldView folds view v of the chunk of res with eng, counting where the
// engine put it.
func (res *chunkResult) foldView(ctx context.Context, eng *engine.Engine, v *column.View) error {
	d, err := eng.FoldView(ctx, v, &res.state)
	n := float64(v.ByteSize())
	res.viewBytes += n
	res.gpuBytes += n * d.GPUFraction
	return err
}

// onDevice makes the plan of a chunk whose views the dataset made say so
// when the engine aggregated them on the GPU, in whole or in part (under
// --device gpu, or as the planner chose): its backend, its GPU share, and
// the reason gpuWhy or splitWhy.
func (res *chunkResult) onDevice(gpuWhy, splitWhy string) {
	if res.gpuBytes <= 0 {
		return
	}
	res.plan.GPUFraction = res.gpuBytes / res.viewBytes
	res.plan.Backend, res.plan.Reason = planner.GPU, gpuWhy
	if res.plan.GPUFraction < 1 {
		res.plan.Backend, res.plan.Reason = planner.Split, splitWhy
	}
}

// parquetLeaves resolves the leaves (as the file's schema has them, with
// their index in the selection in outIdx) to Parquet leaf columns, and picks
// those aggregated from pages when paged is set.
func parquetLeaves(pqf *parquetFile, leaves []arrow17.Leaf, outIdx []int, paged bool) ([]parquetLeaf, error) {
	out := make([]parquetLeaf, len(leaves))
	for k, l := range leaves {
		sf := &pqf.manifest.Fields[l.Path[0]]
		for _, i := range l.Path[1:] {
			sf = &sf.Children[i]
		}
		if len(sf.Children) > 0 { // (pqarrow's lists and maps say ColIndex 0: IsLeaf)
			leaf := smallestLeaf(sf, pqf.meta)
			if leaf == nil || sf.Field == nil {
				return nil, fmt.Errorf("column %q has no Parquet leaf column", l.Name)
			}
			levels := sf.LevelInfo
			out[k] = parquetLeaf{out: outIdx[k], name: l.Name, col: leaf.ColIndex, typ: sf.Field.Type, list: &levels, elem: l.Repeated > 0}
			continue
		}
		if !sf.IsLeaf() {
			return nil, fmt.Errorf("column %q is not a Parquet leaf column", l.Name)
		}
		typ := sf.Field.Type
		if lt, ok := l.Type.(*logicalType); ok {
			typ = lt // (an unknown logical type: counted, pqlogical.go)
		}
		if ts, ok := l.Type.(*arrow.TimestampType); ok && ts.Unit != arrow.Nanosecond && pqf.meta.Schema.Column(sf.ColIndex).PhysicalType() == parquet.Types.Int96 {
			// INT96 read in another unit (int96Schema): from its pages
			// alone, pqarrow decoding it as timestamp[ns].
			if !paged {
				return nil, fmt.Errorf("column %q: %w: INT96 timestamps read as %s through pqarrow (Options.ArrowDecode), which decodes them as timestamp[ns]", l.Name, arrow.ErrNotImplemented, ts)
			}
			typ = ts
		}
		out[k] = parquetLeaf{out: outIdx[k], name: l.Name, col: sf.ColIndex, typ: typ, elem: l.Repeated > 0}
		if paged {
			pl, err := pageLeafOf(pqf.meta, sf.ColIndex, typ)
			if out[k].elem {
				pl, err = elemPageLeafOf(pqf.meta, sf.ColIndex, sf.Field.Type, sf.LevelInfo.RepeatedAncestorDefLevel)
			}
			if err == nil {
				out[k].page = &pl
			}
		}
	}
	return out, nil
}

// smallestLeaf is the Parquet leaf column under sf (a list, a map or a
// struct of them) whose chunks are the fewest bytes uncompressed, all row
// groups of md together (the first of those tied); nil when there is none.
// The levels of any leaf under a list tell which lists are null (listChunk):
// the smallest is the cheapest to decode. A map of large strings to
// integers is counted from its values' levels, never decompressing the
// keys (parquet-testing's large_string_map.brotli.parquet: a 1 GiB page of
// keys and a small page of values).
func smallestLeaf(sf *pqarrow.SchemaField, md *metadata.FileMetaData) *pqarrow.SchemaField {
	var best *pqarrow.SchemaField
	bestBytes := int64(math.MaxInt64)
	var walk func(f *pqarrow.SchemaField)
	walk = func(f *pqarrow.SchemaField) {
		if len(f.Children) == 0 {
			if !f.IsLeaf() {
				return
			}
			var n int64
			for _, rg := range md.RowGroups {
				if f.ColIndex < len(rg.Columns) {
					if m := rg.Columns[f.ColIndex].GetMetaData(); m != nil {
						n += max(m.GetTotalUncompressedSize(), 0)
					}
				}
			}
			if best == nil || n < bestBytes {
				best, bestBytes = f, n
			}
			return
		}
		for i := range f.Children {
			walk(&f.Children[i])
		}
	}
	walk(sf)
	return best
}

// parquetRun aggregates the selected leaves of one Parquet file.
type parquetRun struct {
	src    Source
	pqf    *parquetFile
	leaves []parquetLeaf
	mem    memory.Allocator
	// eng folds every chunk: the Arrow batches of the leaves decoded, the
	// page windows (at most a morsel each) of those aggregated from pages.
	eng     *engine.Engine
	aggs    agg.Set
	workers int
	// decodeBytes bounds the memory of the tasks decoding chunks into Arrow
	// arrays at once, all workers together: at most decodeBytes /
	// arrowTaskBytes of them run at a time.
	decodeBytes int64
	// budget is charged with what the chunks' tasks allocate (charge.go).
	budget *budget.Budget
	// useStats answers the chunks whose row-group statistics give the
	// aggregates from them (stats.go).
	useStats bool
	// rows is the file's rows, those of its row groups (planTasks).
	rows int64
	// mapped is the file mapped into memory (mapped.go), from which the
	// page path reads its pages in place; nil when it reads them with
	// ReadAt.
	mapped []byte
	// rowScratch and rowBufs are the grouped route's page path buffers,
	// reused from chunk to chunk (decodePaged): workers (their windows'
	// scratch and page guard), and the chunks' rows (pageRows).
	rowScratch sync.Pool
	rowBufs    rowBuffers
	// pages, when grouping with a filter, tests the pages of the filter's
	// columns by their column indexes (pageindex.go); nil: no filter.
	pages *pageFilter
	// shortOfDevice holds the columns (leaf indexes in the file's schema)
	// whose pages the GPU had too little memory for, even a chunk at a
	// time: the page route leaves them to the CPU (planGPU), and run adds
	// those it meets failing so (the caller reads the file again then).
	shortOfDevice map[int]bool
	// helps takes, from the chunks' tasks, the segments of their pages that
	// idle workers fold (aggregateChunk).
	helps chan func(*worker)
}

// deviceShortReason is the plan's reason for the chunks that the GPU had
// too little memory for.
const deviceShortReason = "the GPU had too little free memory for its pages, even a chunk at a time"

// worker is what one worker reuses from task to task.
type worker struct {
	pages pageScratch
	guard pageGuard // walks and checks chunks' pages (pqwalk.go)
	// meta, for an encrypted file, is the footer as the worker's own
	// reader decoded it, which decrypts the metadata of its encrypted
	// chunks (openLeafReader).
	meta *metadata.FileMetaData
	// padded is what the worker's reader of an encrypted file reads
	// (pqpadded.go); nil for another file.
	padded *paddedHeaders
}

// run aggregates every chunk of the leaves into src, whose rows are the
// file's, and reports the progress of the file's bytes to prog: it plans the
// tasks (planTasks), starts the workers (work) and schedules the tasks and
// merges their states in order (schedule).
func (r *parquetRun) run(ctx context.Context, src *partial, prog *tracker) (err error) {
	defer recoverTo(&err)
	plan, err := r.planTasks()
	if err != nil || plan.tasks == 0 {
		return err
	}
	if r.pqf.crypt.encrypted && r.pqf.kms == nil { // (a KMS's keys: arrow-go asks for them)
		cols := make([]int, len(r.leaves))
		for i, l := range r.leaves {
			cols[i] = l.col
		}
		if err := missingColumnKeys(r.pqf.meta, cols, r.pqf.keys); err != nil {
			return err
		}
	}
	f, err := r.src.open()
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := mapSource(f, f.Size())
	if err != nil {
		return err
	}
	defer m.unmap() //nolint:errcheck // (an unmap fails only for a bad range)
	r.mapped = m.mapped
	var fr *pqarrow.FileReader
	if !r.pqf.crypt.encrypted { // (else each worker opens its own: work)
		if fr, err = r.openLeafReader(f); err != nil {
			return err
		}
	}
	if r.eng != nil && r.smallJob() {
		// (Under --device auto, no calibration, no driver for this file.)
		ctx = engine.WithSmallJob(ctx)
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gl, weighed, err := r.planGPU(ctx, f, f.Size())
	if err != nil {
		return err
	}
	if weighed && len(gl) == 0 && r.eng.WantsJobSize() {
		// (The planner kept every page chunk on the CPU without a
		// calibration, at the default rates: their views need none either,
		// nor the driver.)
		ctx = engine.WithSmallJob(ctx)
	}
	gpuDone := make(chan struct{})
	// (The GPU's own context: schedule cancels ctx when it is done.)
	gctx, gcancel := context.WithCancel(parent)
	defer gcancel()
	if len(gl) > 0 {
		for _, g := range gl {
			g.leaf.gpu = g.rgs
		}
		go r.runGPU(gctx, gl, gpuDone)
	} else {
		close(gpuDone)
	}
	workers := max(1, min(r.workers, plan.tasks))
	if r.paged() {
		// (Workers with no chunk of their own fold segments of others'.)
		workers = max(1, r.workers)
		r.helps = make(chan func(*worker))
	}
	tasks := make(chan int)
	results := make(chan taskDone)
	for w := 0; w < workers; w++ {
		go r.work(ctx, f, f.Size(), fr, tasks, results)
	}
	folding := time.Now()
	err = r.schedule(ctx, cancel, &plan, workers, tasks, results, src, prog)
	if err != nil {
		gcancel()
	}
	<-gpuDone
	for _, g := range gl {
		if errors.Is(g.err, engine.ErrDeviceMemory) {
			if r.shortOfDevice == nil {
				r.shortOfDevice = make(map[int]bool)
			}
			r.shortOfDevice[g.leaf.col] = true
		}
		if err == nil && g.err != nil {
			err = g.err
		}
		if err == nil {
			p := g.leaf.splitPlan(g.plan)
			p.GPUFraction = r.gpuShare(g.leaf)
			src.add(g.leaf.out, g.state, 0, p)
		}
	}
	for i := range r.leaves {
		if l := &r.leaves[i]; err == nil && l.gpu == nil && slices.Contains([]string{pageReason, pageGPUReason, pageSplitReason}, src.plans[l.out].Reason) {
			if why := l.cpuReasons(); why != "" {
				src.plans[l.out].Reason += " (" + why + ")"
			}
		}
	}
	startup.Trace("chunks folded", folding, err)
	if err != nil {
		if parent.Err() == nil {
			if uerr := m.unchanged(); uerr != nil {
				// (What the read met, bytes missing or faults, is the
				// file's change, not corrupt bytes.)
				return fmt.Errorf("%w; reading it: %w", uerr, err)
			}
		}
		return err
	}
	return m.unchanged()
}

// taskPlan is what run works out before it reads a chunk. Task t is the
// chunk of leaf t%len(r.leaves) in row group t/len(r.leaves).
type taskPlan struct {
	tasks  int
	starts []int64 // the first row of each row group, then the file's rows
	sizes  []int64 // per task, the compressed bytes of its chunk (progress)
	total  int64   // their sum
}

// planTasks checks the rows of the row groups against the footer's, picks
// the chunks answered from their statistics (planStats), and sizes the
// tasks.
func (r *parquetRun) planTasks() (taskPlan, error) {
	md := r.pqf.meta
	nrg := len(md.RowGroups)
	p := taskPlan{tasks: nrg * len(r.leaves), starts: make([]int64, nrg+1)}
	for rg := 0; rg < nrg; rg++ {
		n := md.RowGroup(rg).NumRows()
		if n < 0 {
			return p, fmt.Errorf("row group %d: %d rows", rg, n)
		}
		p.starts[rg+1] = p.starts[rg] + n
	}
	if p.starts[nrg] != md.NumRows && md.NumRows != 0 {
		// (A footer that says 0, as some writers leave it, is read as its
		// row groups say, as Arrow C++ reads it.)
		return p, fmt.Errorf("the row groups have %d rows, the footer says %d", p.starts[nrg], md.NumRows)
	}
	r.rows = p.starts[nrg]
	r.planStats()
	// Progress: the compressed bytes of the chunks merged.
	p.sizes = make([]int64, p.tasks)
	for t := range p.sizes {
		rg, l := r.task(t)
		if rcs := md.RowGroups[rg].Columns; l.col < len(rcs) {
			if m := rcs[l.col].GetMetaData(); m != nil {
				p.sizes[t] = max(m.GetTotalCompressedSize(), 0)
			}
		}
		p.total += p.sizes[t]
	}
	return p, nil
}

// paged reports whether a leaf of the run is aggregated from its pages on
// the CPU (aggregateChunk), in some row group.
func (r *parquetRun) paged() bool {
	for _, l := range r.leaves {
		if l.page != nil {
			return true
		}
	}
	return false
}

// task returns the row group and the leaf of task t.
func (r *parquetRun) task(t int) (int, *parquetLeaf) {
	return t / len(r.leaves), &r.leaves[t%len(r.leaves)]
}

// isArrow says whether task t decodes its chunk into Arrow arrays (those
// tasks are limited by the decode budget).
func (r *parquetRun) isArrow(t int) bool {
	rg, l := r.task(t)
	return l.page == nil && !l.stats.answers(rg)
}

// openLeafReader opens the pqarrow reader of the leaves decoded into Arrow
// arrays (newLeafFileReader); nil when every leaf is aggregated from its
// pages or its statistics. The reader of an encrypted file decodes its
// footer again, with decryption properties of its own: arrow-go's
// decryptors are not safe for concurrent use, so each worker has one
// (work).
func (r *parquetRun) openLeafReader(f parquet.ReaderAtSeeker) (*pqarrow.FileReader, error) {
	md := r.pqf.meta
	for _, l := range r.leaves {
		if l.page == nil && !l.stats.all() {
			var pf *file.Reader
			var err error
			if r.pqf.crypt.encrypted {
				pf, err = r.pqf.openReader(f, md)
				if err == nil {
					// The footer decoded again: its stored schema's
					// decimal32 and decimal64 rewritten again.
					_, err = checkStoredSchema(pf.MetaData().KeyValueMetadata())
				}
			} else {
				pf, err = file.NewParquetReader(f, file.WithReadProps(parquetReadProps(md)), file.WithMetadata(md))
			}
			if err != nil {
				return nil, fmt.Errorf("opening the Parquet file: %w", err)
			}
			fr, err := newLeafFileReader(pf, r.mem)
			if err != nil {
				return nil, fmt.Errorf("reading the Parquet schema: %w", err)
			}
			return fr, nil
		}
	}
	return nil, nil
}

// openWorkerReader is openLeafReader for one worker of an encrypted file
// (of size bytes), on a reader of f of its own; a panic of arrow-go is an
// error.
func (r *parquetRun) openWorkerReader(f io.ReaderAt, size int64, wk *worker) (fr *pqarrow.FileReader, err error) {
	defer recoverTo(&err)
	wk.padded = &paddedHeaders{f: f, size: size, keys: r.pqf.keys, kms: r.pqf.kms}
	if fr, err = r.openLeafReader(io.NewSectionReader(wk.padded, 0, size)); err != nil || fr == nil {
		return fr, err
	}
	// (The footer read as it is; the encrypted chunks' page headers
	// without parquet-mr's padding: pqpadded.go.)
	wk.padded.setMeta(fr.ParquetReader().MetaData())
	return fr, nil
}

// taskDone is the outcome of task t.
type taskDone struct {
	t   int
	res chunkResult
	err error
}

// work is a worker: it runs the tasks it receives, one at a time in its
// goroutine (the engine folds a task's windows there too), and sends each
// outcome to results, until tasks is closed. f is the file, of size bytes;
// fr reads the chunks decoded into Arrow arrays.
func (r *parquetRun) work(ctx context.Context, f io.ReaderAt, size int64, fr *pqarrow.FileReader, tasks <-chan int, results chan<- taskDone) {
	debug.SetPanicOnFault(true) // the mapped file's faults: errors of the chunk (mapped.go)
	var wk worker
	var frErr error // (opening this worker's reader of an encrypted file)
	for {
		var t int
		select {
		case next, ok := <-tasks:
			if !ok {
				return
			}
			t = next
		case help := <-r.helps: // (nil: none)
			help(&wk)
			continue
		}
		d := taskDone{t: t}
		rg, l := r.task(t)
		var ok bool
		if r.pqf.crypt.encrypted && fr == nil && frErr == nil && r.isArrow(t) {
			fr, frErr = r.openWorkerReader(f, size, &wk)
			if fr != nil {
				wk.meta = fr.ParquetReader().MetaData()
			}
		}
		if l.onGPU(rg) { // (runGPU aggregates its chunks)
			d.res.state = agg.New(l.page.kind.Family(), agg.Default)
		} else if frErr != nil {
			d.err = frErr
		} else if d.res, ok = r.statsChunk(rg, l); !ok {
			d.err = r.budget.Run(ctx, "a column chunk", func(c *budget.Charge) error {
				var err error
				d.res, err = r.chunk(ctx, f, size, fr, &wk, c, rg, l)
				return err
			})
			wk.padded.forget() // (charged with the chunk)
		}
		results <- d
	}
}

// schedule hands the tasks of plan to the workers and merges their states
// into src, in task order, reporting progress to prog. Tasks go out in
// order, at most a window ahead of the first one not merged yet, and at most
// maxArrow of those decoding into Arrow arrays at once: few chunk states
// wait, however many row groups there are. The first error (that of the
// earliest task that failed) cancels the others; on every way out schedule
// closes tasks and waits for the tasks running.
func (r *parquetRun) schedule(ctx context.Context, cancel context.CancelFunc, plan *taskPlan, workers int, tasks chan<- int, results <-chan taskDone, src *partial, prog *tracker) error {
	ntasks := plan.tasks
	maxArrow := max(1, min(int(r.decodeBytes/arrowTaskBytes), runtime.NumCPU())) // decoding tasks at once
	next, merged, running, arrowRunning := 0, 0, 0, 0
	defer func() { // stop the workers, wait for their tasks
		cancel()
		close(tasks)
		for ; running > 0; running-- {
			<-results
		}
	}()
	window := 4 * workers
	waiting := make(map[int]chunkResult, window)
	var first error // the error of the earliest failed task
	firstAt := ntasks
	var progressed int64
	for merged < ntasks && (first == nil || running > 0) {
		var send chan<- int
		if first == nil && next < ntasks && next-merged < window && (!r.isArrow(next) || arrowRunning < maxArrow) {
			send = tasks
		}
		select {
		case send <- next:
			if r.isArrow(next) {
				arrowRunning++
			}
			next++
			running++
		case d := <-results:
			running--
			if r.isArrow(d.t) {
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
				rg, l := r.task(merged)
				src.add(l.out, res.state, plan.starts[rg], res.plan)
				progressed += plan.sizes[merged]
				if prog != nil && plan.total > 0 {
					prog.to(int64(float64(prog.size) * float64(progressed) / float64(plan.total)))
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
// Its buffers are charged to charge.
func (r *parquetRun) chunk(ctx context.Context, f io.ReaderAt, size int64, fr *pqarrow.FileReader, wk *worker, charge *budget.Charge, rg int, l *parquetLeaf) (res chunkResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = chunkPanicError(p, r.pqf.meta, rg, l.col)
			if kerr := r.pqf.kms.failed(); kerr != nil {
				err = kerr // (a key the KMS's master keys did not give: arrow-go saw none)
			}
		}
		if errors.Is(err, errShortDecode) && chunkEncrypted(r.pqf.meta, rg, l.col) {
			err = encryptedChunkError(err)
		}
		if err != nil {
			err = fmt.Errorf("row group %d: column %q: %w", rg, l.name, err)
		}
	}()
	md := r.pqf.meta
	if wk.meta != nil && chunkEncrypted(md, rg, l.col) {
		md = wk.meta // (which decrypts the chunk's metadata in this worker: openLeafReader)
	}
	rgm := md.RowGroup(rg)
	rows := rgm.NumRows()
	if l.col >= rgm.NumColumns() {
		return res, fmt.Errorf("the row group has %d columns", rgm.NumColumns())
	}
	cc, err := rgm.ColumnChunk(l.col)
	if err != nil {
		return res, err
	}
	if off, n, err := chunkRange(md, cc, size); err == nil {
		defer releaseMapped(r.mapped, off, n)
	}
	if l.page == nil {
		need, allNull, encrypted, err := r.arrowCost(ctx, f, size, &wk.guard, charge, md, cc, l)
		if err != nil {
			return res, err
		}
		if encrypted && md.Schema.Column(l.col).PhysicalType() == parquet.Types.Int96 {
			// Decoded once, by arrow-go's column reader: pqarrow would wrap
			// instants past timestamp[ns] around, and reads no other unit.
			if ts, _ := l.typ.(*arrow.TimestampType); ts != nil && l.list == nil && !l.elem {
				return r.encryptedInt96(ctx, fr.ParquetReader(), rg, l, ts.Unit)
			}
			if err := checkEncryptedInt96(ctx, fr.ParquetReader(), rg, l.col); err != nil {
				return res, err
			}
		}
		if allNull && l.list == nil && !l.elem && cc.NumValues() == rows { // (pqwalk.go's nullPage)
			return r.nullChunk(l, rows)
		}
		if err := charge.Grow("a column chunk decoded", need); err != nil {
			return res, err
		}
		if l.list != nil {
			return r.listChunk(ctx, fr, rg, l, rows)
		}
		return r.arrowChunk(ctx, fr, rg, l, rows)
	}
	if l.elem { // the pages hold levels, elements or not, of any number of rows
		rows = cc.NumValues()
	}
	if cc.NumValues() != rows {
		return res, fmt.Errorf("the column chunk has %d values, the row group %d rows", cc.NumValues(), rows)
	}
	if rows == 0 {
		res.state = agg.New(l.page.kind.Family(), r.aggs)
		return res, nil
	}
	c, ok, err := r.guardChunkOf(f, size, cc, l.col, false)
	if err != nil {
		return res, err
	}
	if !ok {
		return res, errors.New("an encrypted column chunk") // (pageLeafOf leaves those to pqarrow)
	}
	c.charge = charge
	wk.pages.stats = r.aggs & (agg.Moments | agg.ApproxDistinct)
	wk.pages.helpers = r.helps
	return wk.pages.aggregateChunk(ctx, r.eng, &wk.guard, &c, l.page, rows, r.aggs&agg.Ordered != 0)
}

// arrowCost walks the pages of chunk cc of leaf l with guard g (charging
// its buffers to charge) before pqarrow decodes the chunk, and returns what
// arrow-go holds to decode it a batch at a time: its batches and scratch, a
// page read and decompressed, the dictionary as its decoders hold it.
// allNull says the walk found nulls only (pqwalk.go's nullPage); an
// encrypted chunk is left to arrow-go, which decrypts its page headers: its
// pages are not known, only bounded by its metadata.
func (r *parquetRun) arrowCost(ctx context.Context, f io.ReaderAt, size int64, g *pageGuard, charge *budget.Charge, md *metadata.FileMetaData, cc *metadata.ColumnChunkMetaData, l *parquetLeaf) (need int64, allNull, encrypted bool, err error) {
	c, ok, err := r.guardChunkOf(f, size, cc, l.col, true) // (ok: not encrypted)
	if err != nil {
		return 0, false, false, err
	}
	var largest, unpadded int64
	g.allNull = false
	if ok {
		c.charge = charge
		if largest, err = g.check(ctx, &c); err != nil {
			return 0, false, false, err
		}
	} else {
		largest, c.dictCost = encryptedChunkCost(md, cc, l.col)
		// The chunk read whole and its page headers unpadded
		// (pqpadded.go): twice its bytes, which lie in the file.
		unpadded = 2 * min(max(cc.TotalCompressedSize(), 0), size)
	}
	if ts, _ := l.typ.(*arrow.TimestampType); ok && ts != nil && ts.Unit != arrow.Nanosecond && md.Schema.Column(l.col).PhysicalType() == parquet.Types.Int96 {
		// (pqarrow decodes INT96 as nanoseconds: a chunk the page path
		// does not read cannot be read in another unit.)
		return 0, false, false, fmt.Errorf("%w: INT96 timestamps read as %s through pqarrow, which decodes them as timestamp[ns]", arrow.ErrNotImplemented, ts)
	}
	return arrowTaskCost(l, cc.NumValues()) + 2*largest + c.dictCost + unpadded, g.allNull, !ok, nil
}

// arrowTaskScratch is the part of a pqarrow decoding task's memory that
// does not grow with its chunk (arrowTaskCost).
const arrowTaskScratch = 1 << 20

// arrowTaskCost is what a task decoding a chunk of values values of leaf l
// through pqarrow holds: arrowTaskBytes, or, for a flat leaf of fixed
// width whose chunk fills less than that, its batches as they can grow
// (the values, validity and levels of up to a batch of its values, in
// buffers grown to powers of two, the next batch's while the last is
// folded: 8 times (width + 5) bytes a value) and arrowTaskScratch.
func arrowTaskCost(l *parquetLeaf, values int64) int64 {
	k, err := arrow17.KindOf(l.typ)
	if err != nil || k.Width() <= 0 || l.list != nil {
		return arrowTaskBytes
	}
	w := int64(k.Width())
	n := min(max(values, 0), batchOf(batchBytes, w, max(values, 1)))
	return min(arrowTaskBytes, arrowTaskScratch+8*(w+5)*n)
}
