package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
)

// ipcSlices reads an IPC file's record batches (or a mapped stream file's,
// its messages walked in place) for grouping, where Arrow's reader would
// copy every column of a whole batch into memory first (a file of one batch
// of 80M rows needed 1.2 GiB for its string column alone, over the default
// budget): each batch is decoded in place (ipcload.go: its buffers views
// of the mapped file), and handed on as slices of about groupBatchBytes of
// the columns the grouping reads, copied out of the mapping under the
// budget. So a batch of any size is grouped in bounded memory, the other
// columns are not copied, and the grouper never reads the mapping, whose
// faults (the file cut while it is read) are errors of the copy
// (mapped.go).
type ipcSlices struct {
	r      *ipcFileRun
	footer *ipcFooter
	stream bool // (its errors worded as the stream's)
	// cols are the top-level fields copied, and schema theirs.
	cols   []int
	schema *arrow.Schema
	at     int // the next block of the footer
	index  int // the next record batch's
	dicts  map[int64]*array.Data
	// cur is the batch being sliced, row its next row, batch the rows of
	// a slice; sliceBytes the copied bytes of a slice (group sets it).
	cur        *slicedBatch
	row        int64
	batch      int64
	sliceBytes int64
}

// openIPCSlices opens IPC source i for grouping its leaves in place
// (ipcSlices); errNotInPlace, before anything is read, says that it is to
// be read by the stream reader.
func (d *Dataset) openIPCSlices(ctx context.Context, i int, leaves []arrow17.Leaf) (*ipcSlices, error) {
	r, footer, err := d.openIPCRun(ctx, i, nil, leaves, 0)
	if err != nil {
		return nil, err
	}
	s := &ipcSlices{r: r, footer: footer, stream: d.sources[i].Format == IPCStream, dicts: map[int64]*array.Data{}}
	var fields []arrow.Field
	for k, f := range r.schema.Fields() {
		for _, l := range leaves {
			if len(l.Path) > 0 && l.Path[0] == k {
				s.cols = append(s.cols, k)
				fields = append(fields, f)
				break
			}
		}
	}
	md := r.schema.Metadata()
	s.schema = arrow.NewSchema(fields, &md)
	return s, nil
}

// group hands the file's slices to sink in order, each copied out of the
// mapping (copySlice) and prepared (sink.prepare: engine.Grouper.Prepare)
// by one of workers goroutines while the slices before it are added
// (sink.add): an IPC file grouped on every core, in its order; prog gets
// the file's bytes as its slices are added. It returns the rows added.
func (s *ipcSlices) group(ctx context.Context, sink groupSink, workers int, prog *tracker) (rows int64, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers = max(1, workers)
	type slice struct {
		ipcSliceRows
		rec  arrow.Record
		prep *engine.Prepared
		err  error
		done chan struct{} // closed once copied and prepared
		held bool          // holds a place of sem
	}
	// sem bounds the slices copied and not yet added (each holds its
	// copy, and its batch's mapped pages until it is copied) to workers,
	// of ipcSliceSize each.
	sem := make(chan struct{}, workers)
	s.sliceBytes = ipcSliceSize(workers)
	free := func(sl *slice) {
		if sl.prep != nil {
			sl.prep.Release()
		}
		if sl.rec != nil {
			sl.rec.Release()
		}
		sl.drop()
		s.r.budget.Release(sl.charged)
		if sl.held {
			<-sem
			sl.held = false
		}
	}
	queue := make(chan *slice, workers) // in the file's order
	var wg sync.WaitGroup
	go func() {
		defer close(queue)
		for {
			// A place first, then the slice's charge: at most a slice a
			// worker is charged at once.
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			rows, err := s.nextSlice(ctx)
			if errors.Is(err, io.EOF) {
				<-sem
				return
			}
			sl := &slice{ipcSliceRows: rows, err: err, done: make(chan struct{}), held: true}
			if err != nil {
				close(sl.done)
				queue <- sl // (the consumer drains the queue whatever happens)
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(sl.done)
				if sl.rec, sl.err = s.copySlice(&sl.ipcSliceRows); sl.err == nil {
					sl.prep, sl.err = sink.prepare(sl.rec)
				}
			}()
			queue <- sl
		}
	}()
	defer func() {
		cancel()
		for sl := range queue { // (the producer stops: ctx is done)
			<-sl.done
			free(sl)
		}
		wg.Wait()
	}()
	for sl := range queue {
		<-sl.done
		if sl.err != nil {
			err := sl.err
			free(sl)
			return rows, err
		}
		rows += sl.rec.NumRows()
		p := sl.prep
		sl.prep = nil // (add releases it)
		err := sink.add(sl.rec, p)
		pos := sl.pos
		free(sl)
		if err != nil {
			return rows, err
		}
		prog.to(pos)
	}
	return rows, ctx.Err()
}

// slicedBatch is a decoded record batch whose rows are being copied: the
// slicing holds it while it is the current batch, and each slice until its
// rows are copied; the last to let go releases it (its views of the
// mapping, its charge).
type slicedBatch struct {
	b    *ipcFileBatch
	refs atomic.Int32
}

func (h *slicedBatch) retain() { h.refs.Add(1) }

func (h *slicedBatch) release() {
	if h.refs.Add(-1) == 0 {
		h.b.release()
	}
}

// ipcSliceRows is a slice to copy: rows [lo, hi) of a batch, and what the
// copy holds of the budget (charged before it is made, until the slice is
// added).
type ipcSliceRows struct {
	src     *slicedBatch // nil once copied
	lo, hi  int64
	charged int64
	pos     int64 // the file's bytes read once it is added (the progress)
}

// drop lets go of the slice's batch, if it still holds it.
func (r *ipcSliceRows) drop() {
	if r.src != nil {
		r.src.release()
		r.src = nil
	}
}

// nextSlice returns the next slice of the file's batches to copy, its copy
// charged; io.EOF after the last.
func (s *ipcSlices) nextSlice(ctx context.Context) (rows ipcSliceRows, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = faultError(p)
		}
		if err != nil {
			rows.drop()
			s.r.budget.Release(rows.charged)
			rows = ipcSliceRows{}
		}
		if s.stream {
			err = asIPCStream(err)
		}
	}()
	acquire := func(what string, n int64) error { return s.r.budget.Acquire(ctx, what, n) }
	for {
		if err := ctx.Err(); err != nil {
			return ipcSliceRows{}, err
		}
		if h := s.cur; h != nil && s.row < h.b.rec.NumRows() {
			return s.slice(ctx)
		}
		if s.cur != nil {
			s.cur.release()
			s.cur = nil
		}
		if s.at >= len(s.footer.blocks) {
			if err := s.r.data.unchanged(); err != nil {
				return ipcSliceRows{}, err
			}
			return ipcSliceRows{}, io.EOF
		}
		blk := s.footer.blocks[s.at]
		s.at++
		if blk.dict {
			if err := s.r.dictionary(ctx, blk, s.dicts, acquire); err != nil {
				return ipcSliceRows{}, err
			}
			continue
		}
		b := &ipcFileBatch{block: blk, index: s.index, budget: s.r.budget}
		s.index++
		s.cur = &slicedBatch{b: b}
		s.cur.refs.Store(1) // (the slicing's)
		if err := s.decode(ctx, b, acquire); err != nil {
			return ipcSliceRows{}, fmt.Errorf("record batch %d: %w", b.index, err)
		}
		s.row = 0
	}
}

// decode reads batch b and decodes it in place, charging what decoding it
// allocates (ipcFileRun.charge), and sizes its slices: sliceBytes of the
// copied columns' bytes, by their bytes a row.
func (s *ipcSlices) decode(ctx context.Context, b *ipcFileBatch, acquire func(string, int64) error) error {
	if err := s.r.charge(b, acquire); err != nil {
		return err
	}
	b.dicts = make(map[int64]*array.Data, len(s.dicts))
	for id, d := range s.dicts {
		d.Retain()
		b.dicts[id] = d
	}
	dec, err := newBatchDecoder(b.msg.hdr, b.msg.body, s.r.mem, b.dicts, b.msg.version)
	if err != nil {
		return err
	}
	if b.rec, err = dec.record(ctx, s.r.schema, s.r.fields); err != nil {
		return err
	}
	var perRow int64 = 1
	if n := b.rec.NumRows(); n > 0 {
		for _, k := range s.cols {
			col := b.rec.Column(k)
			if err := checkArray(col); err != nil {
				return asIPCFile(fmt.Errorf("column %q: %w", b.rec.ColumnName(k), err))
			}
			perRow += sliceBytes(col, 0, n) / n
		}
	}
	s.batch = max(1, s.sliceBytes/perRow)
	return nil
}

// ipcSliceBytes is the most copied bytes of a slice (a variable for the
// tests); ipcSlicesHeld the copied bytes of the slices of a file held at
// once, about: workers slices of ipcSlicesHeld/workers bytes each, but no
// smaller than minIPCSliceBytes, so that many workers do not hold many
// whole slices (and the mapped pages of their batches, until they are
// copied).
var ipcSliceBytes int64 = groupBatchBytes

const (
	ipcSlicesHeld    = 64 << 20
	minIPCSliceBytes = 4 << 20
)

// ipcSliceSize is the copied bytes of a slice of a file grouped by workers.
func ipcSliceSize(workers int) int64 {
	return min(ipcSliceBytes, max(minIPCSliceBytes, ipcSlicesHeld/int64(max(1, workers))))
}

// slice charges the copy of the next rows of the current batch's columns
// cols (sliceBytes) and returns them to copy.
func (s *ipcSlices) slice(ctx context.Context) (ipcSliceRows, error) {
	h := s.cur
	lo := s.row
	hi := min(lo+s.batch, h.b.rec.NumRows())
	var need int64
	for _, k := range s.cols {
		need += sliceBytes(h.b.rec.Column(k), lo, hi)
	}
	if err := s.r.budget.Acquire(ctx, "a record batch's rows copied for grouping", need); err != nil {
		return ipcSliceRows{}, fmt.Errorf("record batch %d: %w", h.b.index, err)
	}
	s.row = hi
	h.retain()
	blk := h.b.block
	pos := blk.offset + blk.meta + int64(float64(blk.body)*float64(hi)/float64(h.b.rec.NumRows()))
	return ipcSliceRows{src: h, lo: lo, hi: hi, charged: need, pos: pos}, nil
}

// copySlice copies rows r of its batch's columns cols out of the mapping
// (on any goroutine: a fault of the mapping, the file cut while it is
// read, is the slice's error) and lets go of the batch.
func (s *ipcSlices) copySlice(r *ipcSliceRows) (rec arrow.Record, err error) {
	b := r.src.b
	defer r.drop()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			rec, err = nil, faultError(p)
		}
		if err != nil {
			err = fmt.Errorf("record batch %d: %w", b.index, err)
			if s.stream {
				err = asIPCStream(err)
			}
		}
	}()
	cols := make([]arrow.Array, len(s.cols))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for j, k := range s.cols {
		sl := array.NewSlice(b.rec.Column(k), r.lo, r.hi)
		c, err := array.Concatenate([]arrow.Array{sl}, s.r.mem)
		sl.Release()
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", b.rec.ColumnName(k), runtimeFailure(err))
		}
		cols[j] = c
	}
	return array.NewRecord(s.schema, cols, r.hi-r.lo), nil
}

// sliceBytes bounds what copying rows [i, j) of a takes (array.Concatenate
// of the slice): exactly for fixed-width, boolean, binary and string
// values and dictionary indices (their dictionary whole), the whole array
// for the others.
func sliceBytes(a arrow.Array, i, j int64) int64 {
	const pad = 3 * 64 // (each buffer rounded up to 64 bytes)
	n := j - i
	bitmap := (n + 7) / 8
	switch a := a.(type) {
	case *array.String:
		offs := a.ValueOffsets()
		return pad + bitmap + 4*(n+1) + int64(offs[j]-offs[i])
	case *array.Binary:
		offs := a.ValueOffsets()
		return pad + bitmap + 4*(n+1) + int64(offs[j]-offs[i])
	case *array.LargeString:
		offs := a.ValueOffsets()
		return pad + bitmap + 8*(n+1) + offs[j] - offs[i]
	case *array.LargeBinary:
		offs := a.ValueOffsets()
		return pad + bitmap + 8*(n+1) + offs[j] - offs[i]
	case *array.Boolean:
		return pad + 2*bitmap
	case *array.Dictionary:
		return pad + bitmap + sliceBytes(a.Indices(), i, j) + 2*int64(a.Dictionary().Data().SizeInBytes())
	}
	if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok {
		return pad + bitmap + n*int64((fw.BitWidth()+7)/8)
	}
	return pad + int64(a.Data().SizeInBytes())
}

// close releases the batch being sliced, the dictionaries and the run.
func (s *ipcSlices) close() error {
	if s.cur != nil {
		s.cur.release()
		s.cur = nil
	}
	for id, d := range s.dicts {
		d.Release()
		delete(s.dicts, id)
	}
	for id, n := range s.r.dictCharged {
		s.r.budget.Release(n)
		delete(s.r.dictCharged, id)
	}
	return s.r.close()
}
