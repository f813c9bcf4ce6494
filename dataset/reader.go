package dataset

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/metadata"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/arrowagg/arrowagg/column"
)

// batchReader yields the record batches of one source.
type batchReader interface {
	// next returns the next batch, owned by the caller, or io.EOF.
	next(ctx context.Context) (arrow.Record, error)
	// abort unblocks a next that waits for input (standard input); it may be
	// called from any goroutine.
	abort()
	close() error
}

// progressFunc receives the number of input bytes newly done.
type progressFunc func(n int64)

// tracker reports the progress of one source of known size: done never goes
// past the size, and finish reports the rest.
type tracker struct {
	report progressFunc
	size   int64
	done   atomic.Int64
}

func (t *tracker) to(pos int64) {
	if t == nil || t.report == nil {
		return
	}
	pos = min(pos, t.size)
	for {
		cur := t.done.Load()
		if pos <= cur {
			return
		}
		if t.done.CompareAndSwap(cur, pos) {
			t.report(pos - cur)
			return
		}
	}
}

func (t *tracker) add(n int64) {
	if t != nil {
		t.to(t.done.Load() + n)
	}
}

func (t *tracker) finish() {
	if t != nil {
		t.to(t.size)
	}
}

// --- Parquet ---------------------------------------------------------------

// parquetFile is what probing a Parquet file keeps: its metadata, so that the
// footer is read and decoded once.
type parquetFile struct {
	meta *metadata.FileMetaData
}

func parquetReadProps(md *metadata.FileMetaData) *parquet.ReaderProperties {
	// Page buffers come from the Go allocator: the parquet reader pools and
	// finalizes them itself. Buffered streams read a column chunk about a
	// page at a time (1 MiB, or the largest column chunk of a smaller file;
	// more for larger pages), so that memory does not grow with the row
	// group size.
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	props.BufferedStreamEnabled = true
	props.BufferSize = 1 << 20
	if md != nil {
		var largest int64
		for rg := 0; rg < len(md.RowGroups); rg++ {
			for _, cc := range md.RowGroups[rg].Columns {
				if m := cc.GetMetaData(); m != nil {
					largest = max(largest, m.GetTotalCompressedSize())
				}
			}
		}
		props.BufferSize = min(props.BufferSize, max(largest, 4<<10))
	}
	return props
}

// probeParquet reads the footer and the Arrow schema of a Parquet file.
func probeParquet(path string) (_ *arrow.Schema, _ *parquetFile, err error) {
	defer recoverTo(&err)
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f, file.WithReadProps(parquetReadProps(nil)))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the Parquet footer: %w", err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the Parquet schema: %w", err)
	}
	schema, err := fr.Schema()
	if err != nil {
		return nil, nil, fmt.Errorf("converting the Parquet schema to Arrow: %w", err)
	}
	return schema, &parquetFile{meta: pf.MetaData()}, nil
}

// parquetReader decodes the row groups of a Parquet file in order. Up to
// ahead row groups are decoded at once, each by a goroutine of its own that
// decodes the row group's columns in parallel, batch after batch; batches
// are handed out in file order, so that results do not depend on timing.
type parquetReader struct {
	f       *os.File
	pf      *file.Reader
	fr      *pqarrow.FileReader
	mem     memory.Allocator
	cols    []int // Parquet leaf columns to decode; empty: rows only
	fields  []int // the top-level fields holding them
	leafSet map[int]bool
	target  int64 // bytes of one decoded batch
	workers int   // goroutines decoding the columns of one row group
	ahead   int   // row groups decoded at once
	prog    *tracker

	nextRG  int           // next row group to start
	pending []*rowGroup   // started, in order
	quit    chan struct{} // closed by close
	wg      sync.WaitGroup
	done    int64 // rows of the row groups handed out in full
	rows    int64 // rows of the file, from the footer
}

// openParquet opens a probed Parquet file to decode the Parquet columns of
// the leaves (found by name in the file's schema), projecting struct columns
// on the leaves asked for.
func openParquet(path string, pqf *parquetFile, schema *arrow.Schema, leaves []string, mem memory.Allocator, batchBytes int64, workers int, prog *tracker) (_ *parquetReader, err error) {
	defer recoverTo(&err)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	pf, err := file.NewParquetReader(f, file.WithReadProps(parquetReadProps(pqf.meta)), file.WithMetadata(pqf.meta))
	if err != nil {
		return nil, fmt.Errorf("opening the Parquet file: %w", err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		return nil, fmt.Errorf("reading the Parquet schema: %w", err)
	}
	r := &parquetReader{f: f, pf: pf, fr: fr, mem: mem, target: batchBytes, workers: max(workers, 1), prog: prog,
		rows: pqf.meta.NumRows, leafSet: map[int]bool{}, quit: make(chan struct{})}
	all := column.Leaves(schema)
	for _, name := range leaves {
		l, ok := column.Find(all, name)
		if !ok {
			return nil, fmt.Errorf("%w %q", errMissingColumn, name)
		}
		sf := &fr.Manifest.Fields[l.Path[0]]
		for _, i := range l.Path[1:] {
			sf = &sf.Children[i]
		}
		for _, c := range leafColumns(sf) {
			if !r.leafSet[c] {
				r.leafSet[c] = true
				r.cols = append(r.cols, c)
			}
		}
	}
	if len(r.cols) > 0 {
		if r.fields, err = fr.Manifest.GetFieldIndices(r.cols); err != nil {
			return nil, err
		}
	}
	// Enough row groups at once to keep every worker busy when the columns
	// are fewer than the workers (each row group in flight holds a few
	// batches).
	r.ahead = min(max(1, (r.workers+len(r.fields)-1)/max(len(r.fields), 1)), 8)
	return r, nil
}

var errMissingColumn = errors.New("no column")

// leafColumns lists the Parquet leaf columns under a schema field.
func leafColumns(sf *pqarrow.SchemaField) []int {
	if sf.IsLeaf() {
		return []int{sf.ColIndex}
	}
	var out []int
	for i := range sf.Children {
		out = append(out, leafColumns(&sf.Children[i])...)
	}
	return out
}

// batchRows is the number of rows of a batch of row group rg: about target
// bytes once decoded, a multiple of the CPU morsel when large.
func (r *parquetReader) batchRows(rg int) int64 {
	md := r.pf.MetaData().RowGroup(rg)
	rows := md.NumRows()
	if rows <= 0 {
		return 1
	}
	var perRow int64
	for _, c := range r.cols {
		w := int64(8)
		if sf, ok := r.fr.Manifest.ColIndexToField[c]; ok && sf.Field != nil {
			if k, err := column.KindOf(sf.Field.Type); err == nil && k.Width() > 0 {
				w = int64(k.Width())
			}
		}
		if cc, err := md.ColumnChunk(c); err == nil {
			w = max(w, cc.TotalUncompressedSize()/rows+1)
		}
		perRow += w
	}
	n := r.target / max(perRow, 1)
	const morsel = 1 << 16
	if n > morsel {
		n -= n % morsel
	}
	return max(min(n, rows), min(rows, 4096))
}

// rowGroup is a row group being decoded by its goroutine.
type rowGroup struct {
	idx   int
	rows  int64
	out   chan batch // closed after the last batch or an error
	taken int64      // rows handed out
}

func (r *parquetReader) next(ctx context.Context) (rec arrow.Record, err error) {
	defer recoverTo(&err)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for len(r.pending) < r.ahead && r.nextRG < r.pf.NumRowGroups() {
			if err := r.start(ctx, r.nextRG); err != nil {
				return nil, err
			}
			r.nextRG++
		}
		if len(r.pending) == 0 {
			if r.done != r.rows {
				return nil, fmt.Errorf("the row groups have %d rows, the footer says %d", r.done, r.rows)
			}
			r.prog.finish()
			return nil, io.EOF
		}
		g := r.pending[0]
		var b batch
		var ok bool
		select {
		case b, ok = <-g.out:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if !ok {
			r.pending = r.pending[1:]
			r.done += g.rows
			r.progressTo(r.done)
			continue
		}
		if b.err != nil {
			return nil, fmt.Errorf("row group %d: %w", g.idx, b.err)
		}
		g.taken += b.rec.NumRows()
		r.progressTo(r.done + g.taken)
		return b.rec, nil
	}
}

// start begins decoding row group rg in a goroutine of its own.
func (r *parquetReader) start(ctx context.Context, rg int) error {
	rows := r.pf.MetaData().RowGroup(rg).NumRows()
	if rows < 0 {
		return fmt.Errorf("row group %d: %d rows", rg, rows)
	}
	g := &rowGroup{idx: rg, rows: rows, out: make(chan batch, 1)}
	r.pending = append(r.pending, g)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(g.out)
		send := func(b batch) bool {
			select {
			case g.out <- b:
				return true
			case <-r.quit:
				if b.rec != nil {
					b.rec.Release()
				}
				return false
			}
		}
		defer func() {
			if p := recover(); p != nil {
				send(batch{err: panicError(p)})
			}
		}()
		if rows == 0 {
			return
		}
		if len(r.cols) == 0 {
			// Nothing to decode: a batch of rows without columns.
			send(batch{rec: array.NewRecord(arrow.NewSchema(nil, nil), nil, rows)})
			return
		}
		d := &rowGroupDecoder{r: r, rg: rg}
		defer d.release()
		if err := d.open(ctx); err != nil {
			send(batch{err: err})
			return
		}
		for done := int64(0); done < rows; {
			select {
			case <-r.quit:
				return
			default:
			}
			rec, err := d.decode(ctx, min(d.batch, rows-done))
			if err != nil {
				send(batch{err: err})
				return
			}
			done += rec.NumRows()
			if !send(batch{rec: rec}) {
				return
			}
		}
	}()
	return nil
}

// rowGroupDecoder decodes the selected fields of one row group.
type rowGroupDecoder struct {
	r       *parquetReader
	rg      int
	readers []*pqarrow.ColumnReader
	schema  *arrow.Schema
	batch   int64 // rows per batch
}

// parallel runs f(i) for i in [0, n) on up to workers goroutines, each
// guarded against decoder panics, and returns the errors.
func parallel(ctx context.Context, workers, n int, f func(i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				func() {
					defer recoverTo(&errs[i])
					errs[i] = f(i)
				}()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// open makes the readers of the selected fields in the row group.
func (d *rowGroupDecoder) open(ctx context.Context) error {
	r := d.r
	d.readers = make([]*pqarrow.ColumnReader, len(r.fields))
	err := parallel(ctx, r.workers, len(r.fields), func(i int) error {
		cr, err := r.fr.GetFieldReader(ctx, r.fields[i], r.leafSet, []int{d.rg})
		d.readers[i] = cr
		return err
	})
	if err != nil {
		return err
	}
	fields := make([]arrow.Field, len(d.readers))
	for i, cr := range d.readers {
		fields[i] = *cr.Field()
	}
	d.schema = arrow.NewSchema(fields, r.fr.Manifest.SchemaMeta)
	d.batch = r.batchRows(d.rg)
	return nil
}

// decode reads the next n rows of every selected field, in parallel.
func (d *rowGroupDecoder) decode(ctx context.Context, n int64) (arrow.Record, error) {
	cols := make([]arrow.Array, len(d.readers))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	err := parallel(ctx, d.r.workers, len(d.readers), func(i int) error {
		ch, err := d.readers[i].NextBatch(n)
		if err != nil {
			return fmt.Errorf("column %q: %w", d.schema.Field(i).Name, err)
		}
		defer ch.Release()
		switch len(ch.Chunks()) {
		case 0:
			return fmt.Errorf("column %q: no values left", d.schema.Field(i).Name)
		case 1:
			cols[i] = ch.Chunk(0)
			cols[i].Retain()
		default: // the dictionary changed within the batch
			cols[i], err = array.Concatenate(ch.Chunks(), d.r.mem)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, c := range cols {
		if int64(c.Len()) != n {
			return nil, fmt.Errorf("column %q: decoded %d rows, the footer says %d are left", d.schema.Field(i).Name, c.Len(), n)
		}
	}
	return array.NewRecord(d.schema, cols, n), nil
}

func (d *rowGroupDecoder) release() {
	for _, cr := range d.readers {
		if cr != nil {
			cr.Release()
		}
	}
	d.readers = nil
}

// progressTo reports the file's bytes in proportion to the rows read.
func (r *parquetReader) progressTo(rows int64) {
	if r.prog == nil || r.rows <= 0 {
		return
	}
	r.prog.to(int64(float64(r.prog.size) * float64(rows) / float64(r.rows)))
}

func (r *parquetReader) abort() {}

// close stops the row groups' goroutines, releases what they decoded and
// closes the file.
func (r *parquetReader) close() error {
	close(r.quit)
	for _, g := range r.pending {
		for b := range g.out {
			if b.rec != nil {
				b.rec.Release()
			}
		}
	}
	r.pending = nil
	r.wg.Wait()
	return r.f.Close()
}

// --- Arrow IPC file ----------------------------------------------------------

// An Arrow IPC file is "ARROW1", padding to 8 bytes, the stream format, the
// footer, the footer's int32 length and "ARROW1" again. It is read as the
// stream it holds, batch by batch, in order; the footer, which only indexes
// that stream for random access, is not needed.

// ipcFileStream returns the stream part of the IPC file r of size bytes.
func ipcFileStream(r io.ReaderAt, size int64) (*io.SectionReader, error) {
	const start, trailer = 8, 4 + 6 // footer length, magic
	if size < start+trailer {
		return nil, fmt.Errorf("truncated Arrow IPC file (%d bytes)", size)
	}
	var b [4]byte
	if _, err := r.ReadAt(b[:], size-trailer); err != nil {
		return nil, err
	}
	footer := int64(int32(binary.LittleEndian.Uint32(b[:])))
	end := size - trailer - footer
	if footer <= 0 || end < start {
		return nil, fmt.Errorf("corrupt Arrow IPC file: footer length %d in a file of %d bytes", footer, size)
	}
	return io.NewSectionReader(r, start, end-start), nil
}

func probeIPCFile(ctx context.Context, path string, size int64) (_ *arrow.Schema, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sr, err := ipcFileStream(f, size)
	if err != nil {
		return nil, err
	}
	s, err := openIPCStream(ctx, sr, nil, false, memory.DefaultAllocator, nil, nil)
	if err != nil {
		return nil, err
	}
	defer s.close()
	return s.rdr.Schema(), nil
}

func openIPCFile(ctx context.Context, path string, size int64, mem memory.Allocator, prog *tracker) (_ *ipcStreamReader, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	sr, err := ipcFileStream(f, size)
	if err != nil {
		f.Close()
		return nil, err
	}
	return openIPCStream(ctx, sr, f, false, mem, prog, nil)
}

// --- Arrow IPC stream -----------------------------------------------------

// countingReader counts the bytes read from a stream for the progress bar.
type countingReader struct {
	r    io.Reader
	prog progressFunc
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 && c.prog != nil {
		c.prog(int64(n))
	}
	return n, err
}

// errAborted ends the read of a stream that is no longer wanted.
var errAborted = errors.New("reading aborted")

// pump copies a reader that may block for ever (standard input) into a pipe
// from a goroutine of its own, so that closing the pipe unblocks whoever
// reads it. The goroutine ends at the next read of the source after that.
func pump(src io.Reader) (*io.PipeReader, func()) {
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 1<<20)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if _, werr := pw.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr, func() { pr.CloseWithError(errAborted) }
}

type ipcStreamReader struct {
	rdr    *ipc.Reader
	closer io.Closer // the file, if any
	stop   func()
	prog   *tracker
}

// openIPCStream starts reading a stream (reading its schema). r is a file or
// standard input; with stdin set, r is read through a pump so that abort, or
// the end of ctx, unblocks it.
func openIPCStream(ctx context.Context, r io.Reader, closer io.Closer, stdin bool, mem memory.Allocator, prog *tracker, report progressFunc) (_ *ipcStreamReader, err error) {
	defer recoverTo(&err)
	s := &ipcStreamReader{closer: closer, prog: prog, stop: func() {}}
	if stdin {
		pr, stop := pump(r)
		// Cancelling ctx unblocks a read of standard input at once.
		unregister := context.AfterFunc(ctx, stop)
		s.stop = func() {
			unregister()
			stop()
		}
		r = pr
	}
	if prog != nil {
		report = prog.add
	}
	rdr, err := ipc.NewReader(&countingReader{r: r, prog: report}, ipc.WithAllocator(mem))
	if err != nil {
		s.stop()
		if closer != nil {
			closer.Close()
		}
		return nil, err
	}
	s.rdr = rdr
	return s, nil
}

func (s *ipcStreamReader) next(ctx context.Context) (rec arrow.Record, err error) {
	defer recoverTo(&err)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !s.rdr.Next() {
		if err := s.rdr.Err(); err != nil {
			return nil, err
		}
		s.prog.finish()
		return nil, io.EOF
	}
	rec = s.rdr.Record()
	rec.Retain()
	return rec, nil
}

func (s *ipcStreamReader) abort() { s.stop() }

func (s *ipcStreamReader) close() error {
	s.stop()
	s.rdr.Release()
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

// --- prefetching ------------------------------------------------------------

type batch struct {
	rec arrow.Record
	err error
}

// prefetcher decodes the next batch of a reader while the current one is
// aggregated.
type prefetcher struct {
	ch   chan batch
	quit chan struct{}
	wg   sync.WaitGroup
	r    batchReader
	once sync.Once
}

func startPrefetch(ctx context.Context, r batchReader) *prefetcher {
	p := &prefetcher{ch: make(chan batch, 1), quit: make(chan struct{}), r: r}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(p.ch)
		for {
			rec, err := r.next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			select {
			case p.ch <- batch{rec, err}:
			case <-p.quit:
				if rec != nil {
					rec.Release()
				}
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

// stop ends the prefetching goroutine, releases what it decoded and not
// handed out, and closes the reader. It waits for the goroutine unless ctx
// is done (a read of standard input is aborted either way).
func (p *prefetcher) stop(ctx context.Context) error {
	var err error
	p.once.Do(func() {
		close(p.quit)
		p.r.abort()
		done := make(chan error, 1)
		go func() {
			for b := range p.ch {
				if b.rec != nil {
					b.rec.Release()
				}
			}
			p.wg.Wait()
			done <- p.r.close()
		}()
		select {
		case err = <-done:
		case <-ctx.Done():
		}
	})
	return err
}
