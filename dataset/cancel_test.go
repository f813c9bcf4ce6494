package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/budget"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/hostile"
)

// cancelBatch is a record batch of n rows: an int64 column with nulls, a
// float64 column and a string column with nulls.
func cancelBatch(mem memory.Allocator, n int) arrow.Record {
	ib := array.NewInt64Builder(mem)
	fb := array.NewFloat64Builder(mem)
	sb := array.NewStringBuilder(mem)
	defer ib.Release()
	defer fb.Release()
	defer sb.Release()
	ib.Reserve(n)
	fb.Reserve(n)
	sb.Reserve(n)
	for i := 0; i < n; i++ {
		if i%7 == 0 {
			ib.UnsafeAppendBoolToBitmap(false)
		} else {
			ib.UnsafeAppend(int64(uint64(i) * 0x9E3779B97F4A7C15))
		}
		fb.UnsafeAppend(float64(i%1000) * 0.25)
		if i%11 == 0 {
			sb.AppendNull()
		} else {
			sb.Append(fmt.Sprintf("s%07d", i*7919%1000003))
		}
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	cols := []arrow.Array{ib.NewArray(), fb.NewArray(), sb.NewArray()}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	return array.NewRecord(schema, cols, int64(n))
}

// cancelFile is a file for the cancellation tests: format, and how many
// times a batch of how many rows it repeats.
type cancelFile struct {
	format       Format
	batches      int
	rows         int
	rowsPerGroup int // Parquet
}

// write writes the file in dir and returns its path.
func (c cancelFile) write(t testing.TB, dir string) string {
	t.Helper()
	rec := cancelBatch(memory.DefaultAllocator, c.rows)
	defer rec.Release()
	path := filepath.Join(dir, fmt.Sprintf("%s-%dx%d", c.format, c.batches, c.rows))
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	switch c.format {
	case Parquet:
		props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(false), parquet.WithDictionaryFor("s", true),
			parquet.WithMaxRowGroupLength(int64(c.rowsPerGroup)), parquet.WithStats(false))
		w, err := pqarrow.NewFileWriter(rec.Schema(), f, props, pqarrow.DefaultWriterProps())
		require.NoError(t, err)
		for range c.batches {
			require.NoError(t, w.Write(rec))
		}
		require.NoError(t, w.Close()) // closes f
		return path
	case IPCFile, IPCStream:
		var w interface {
			Write(arrow.Record) error
			Close() error
		}
		if c.format == IPCFile {
			w, err = ipc.NewFileWriter(f, ipc.WithSchema(rec.Schema()))
			require.NoError(t, err)
		} else {
			w = ipc.NewWriter(f, ipc.WithSchema(rec.Schema()))
		}
		for range c.batches {
			require.NoError(t, w.Write(rec))
		}
		require.NoError(t, w.Close())
	}
	require.NoError(t, f.Close())
	return path
}

// endlessStream is an Arrow IPC stream that never ends: the schema, then
// the same batch again and again.
type endlessStream struct {
	head, batch []byte
	pos         int
}

func newEndlessStream(t testing.TB, rows int) *endlessStream {
	t.Helper()
	rec := cancelBatch(memory.DefaultAllocator, rows)
	defer rec.Release()
	stream := func(batches int) []byte {
		var b bytes.Buffer
		w := ipc.NewWriter(&b, ipc.WithSchema(rec.Schema()))
		for range batches {
			require.NoError(t, w.Write(rec))
		}
		require.NoError(t, w.Close())
		return b.Bytes()
	}
	one, two := stream(1), stream(2)
	const eos = 8 // the end-of-stream marker
	return &endlessStream{head: one[:len(one)-eos], batch: two[len(one)-eos : len(two)-eos]}
}

func (s *endlessStream) Read(p []byte) (int, error) {
	var src []byte
	if s.pos < len(s.head) {
		src = s.head[s.pos:]
	} else {
		src = s.batch[(s.pos-len(s.head))%len(s.batch):]
	}
	n := copy(p, src)
	s.pos += n
	return n, nil
}

// progressCancel cancels a context from the Progress callback once the
// input read passes at bytes; marked is closed then.
type progressCancel struct {
	at     int64
	cancel context.CancelFunc // nil: only mark
	read   atomic.Int64
	marked chan struct{}
	once   sync.Once
}

func newProgressCancel(at int64, cancel context.CancelFunc) *progressCancel {
	return &progressCancel{at: at, cancel: cancel, marked: make(chan struct{})}
}

func (p *progressCancel) progress(n int64) {
	if p.read.Add(n) >= p.at {
		p.once.Do(func() {
			if p.cancel != nil {
				p.cancel()
			}
			close(p.marked)
		})
	}
}

// aggregateSources opens srcs and aggregates every column.
func aggregateSources(ctx context.Context, t testing.TB, eng *engine.Engine, srcs []Source, opts Options) (*Summary, error) {
	d, err := Open(ctx, srcs, opts)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	sel, err := d.Select(nil)
	require.NoError(t, err)
	return d.Aggregate(ctx, eng, sel, AggregateOptions{})
}

// cancelCases are the inputs the cancellation tests and benchmarks read:
// a file (Parquet: decoded from pages, or into Arrow arrays), or standard
// input.
type cancelCase struct {
	name  string
	file  cancelFile
	stdin bool // the endless stream on standard input, not a file
	arrow bool // Options.ArrowDecode
}

// Aggregating a file or standard input, cancelled half-way through the
// input, returns context.Canceled, stops reading (a single large batch too)
// and frees every buffer it allocated before it returns.
func TestCancelAggregate(t *testing.T) {
	dir := t.TempDir()
	cases := []cancelCase{
		{name: "parquet-pages", file: cancelFile{format: Parquet, batches: 16, rows: 1 << 16, rowsPerGroup: 1 << 16}},
		{name: "parquet-arrow", file: cancelFile{format: Parquet, batches: 16, rows: 1 << 16, rowsPerGroup: 1 << 16}, arrow: true},
		{name: "ipc-file", file: cancelFile{format: IPCFile, batches: 16, rows: 1 << 16}},
		{name: "ipc-stream", file: cancelFile{format: IPCStream, batches: 16, rows: 1 << 16}},
		{name: "ipc-file-one-batch", file: cancelFile{format: IPCFile, batches: 1, rows: 1 << 20}},
		{name: "stdin", stdin: true, file: cancelFile{rows: 1 << 16}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer func() {
				waitReleased(mem, 100*stopGrace)
				mem.AssertSize(t, 0)
			}()
			opts := Options{Mem: mem, ArrowDecode: c.arrow, Workers: 2}
			var srcs []Source
			at := int64(16 << 20) // stdin: after 16 MiB
			if c.stdin {
				opts.Stdin = newEndlessStream(t, c.file.rows)
				srcs = []Source{{Path: Stdin, Format: IPCStream, Size: -1}}
			} else {
				path := c.file.write(t, dir)
				var err error
				srcs, err = Expand([]string{path})
				require.NoError(t, err)
				at = srcs[0].Size / 2
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pc := newProgressCancel(at, cancel)
			opts.Progress = pc.progress
			eng := newEngine(t, mem)
			sum, err := aggregateSources(ctx, t, eng, srcs, opts)
			require.ErrorIs(t, err, context.Canceled)
			assert.Nil(t, sum)
			assert.GreaterOrEqual(t, pc.read.Load(), at, "cancelled half-way")
			if !c.stdin {
				// Reading stopped soon after, even inside a batch.
				assert.Less(t, pc.read.Load(), at+srcs[0].Size/4, "read on after the cancel")
			}
		})
	}
}

// waitReleased waits, at most bound, until mem holds nothing: after a
// cancel, Aggregate returns within stopGrace, and a goroutine still inside
// Arrow's reader frees what it holds when it ends (reader.go's prefetcher),
// later on a loaded machine. Every byte must come back, if not at once.
func waitReleased(mem *memory.CheckedAllocator, bound time.Duration) {
	for end := time.Now().Add(bound); mem.CurrentAlloc() != 0 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkCancel measures how long Dataset.Aggregate takes to return
// after its context is cancelled part-way through large inputs (written in
// a temporary directory first): Parquet (about 128 MiB, decoded from pages
// and into Arrow arrays), Arrow IPC files and streams (about 256 MiB; in
// batches of 1M rows, or one batch), and an endless stream on standard
// input. ms-to-stop is the mean, worst-ms-to-stop the worst of the
// iterations, full-ms the time of a whole run (standard input: to the
// first 512 MiB). Iterations cancel once 10% to 60% of the input is read;
// missed counts those that ended before their cancel came (a busy machine),
// left out of the figures. ns/op is left out: it is not the latency.
func BenchmarkCancel(b *testing.B) {
	dir := b.TempDir()
	const mib = 1 << 20
	cases := []cancelCase{
		{name: "parquet-pages", file: cancelFile{format: Parquet, batches: 8, rows: 1 << 20, rowsPerGroup: 1 << 20}},
		{name: "parquet-arrow", file: cancelFile{format: Parquet, batches: 8, rows: 1 << 20, rowsPerGroup: 1 << 20}, arrow: true},
		{name: "ipc-file", file: cancelFile{format: IPCFile, batches: 8, rows: 1 << 20}},
		{name: "ipc-stream", file: cancelFile{format: IPCStream, batches: 8, rows: 1 << 20}},
		{name: "ipc-file-one-batch", file: cancelFile{format: IPCFile, batches: 1, rows: 8 << 20}},
		{name: "stdin", stdin: true, file: cancelFile{rows: 1 << 20}},
	}
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU))
	require.NoError(b, err)
	defer eng.Close()
	paths := map[cancelFile]string{}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var srcs []Source
			size := int64(512 * mib) // stdin: as much as a run reads
			if !c.stdin {
				path, ok := paths[c.file]
				if !ok {
					path = c.file.write(b, dir)
					paths[c.file] = path
				}
				srcs, err = Expand([]string{path})
				require.NoError(b, err)
				size = srcs[0].Size
			}
			opts := func() Options {
				o := Options{ArrowDecode: c.arrow}
				if c.stdin {
					o.Stdin = newEndlessStream(b, c.file.rows)
					srcs = []Source{{Path: Stdin, Format: IPCStream, Size: -1}}
				}
				return o
			}
			// A whole run; standard input is cancelled after size bytes.
			full := time.Duration(1<<63 - 1)
			for range 2 {
				ctx, cancel := context.WithCancel(context.Background())
				o := opts()
				pc := newProgressCancel(size, nil)
				if c.stdin {
					pc.cancel = cancel
				}
				o.Progress = pc.progress
				start := time.Now()
				_, err := aggregateSources(ctx, b, eng, srcs, o)
				full = min(full, time.Since(start))
				cancel()
				if !c.stdin {
					require.NoError(b, err)
				}
			}
			b.ResetTimer()
			var total, worst time.Duration
			missed := 0
			for i := 0; i < b.N; i++ {
				ctx, cancel := context.WithCancel(context.Background())
				o := opts()
				pc := newProgressCancel(size*int64(10+50*(i%8)/7)/100, nil)
				o.Progress = pc.progress
				done := make(chan error, 1)
				go func() {
					_, err := aggregateSources(ctx, b, eng, srcs, o)
					done <- err
				}()
				<-pc.marked
				t0 := time.Now()
				cancel()
				err := <-done
				took := time.Since(t0)
				switch {
				case errors.Is(err, context.Canceled):
				case err == nil && !c.stdin:
					// It read to the end before the cancel came: this
					// goroutine ran too late (others use the CPUs).
					missed++
					continue
				default:
					b.Fatalf("iteration %d: Aggregate ended with %v, not cancelled", i, err)
				}
				total += took
				worst = max(worst, took)
			}
			if missed == b.N {
				b.Fatalf("every iteration ended before its cancel")
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(missed), "missed")
			b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N-missed), "ms-to-stop")
			b.ReportMetric(float64(worst.Microseconds())/1e3, "worst-ms-to-stop")
			b.ReportMetric(float64(full.Microseconds())/1e3, "full-ms")
			b.ReportMetric(float64(size)/mib, "MiB")
		})
	}
}

// writeZeroIPC writes an Arrow IPC file of one batch of an int64 column of
// n zeros, its buffer compressed with zstd.
func writeZeroIPC(t testing.TB, path string, n int) {
	t.Helper()
	values := memory.NewBufferBytes(make([]byte, 8*n)) // (fresh pages: not touched until compressed)
	data := array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil, values}, nil, 0, 0)
	col := array.MakeFromData(data)
	data.Release()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "z", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{col}, int64(n))
	defer rec.Release()
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithZstd())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

// freeMemory frees what the last run allocated, pooled objects included
// (a sync.Pool keeps them through one collection), and returns it to the
// operating system: each run of a benchmark starts from the same state.
func freeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// BenchmarkCancelLarge measures how long Dataset.Aggregate takes to return
// after its context is cancelled in the middle of one large page or buffer
// (files written in a temporary directory first): a Parquet file of one
// zstd page of 1 GiB (2^28 int32 zeros, internal/hostile's large-page
// case), and an Arrow IPC file whose one zstd buffer holds 4 GiB (2^29
// int64 zeros). Iterations cancel at 20% to 80% of the time of a whole run
// (full-ms); ms-to-stop is the mean time from the cancel to the return,
// worst-ms-to-stop the worst. ns/op is left out: it is not the latency. The
// memory budget is 16 GiB: the default one refuses a page or buffer held
// whole.
func BenchmarkCancelLarge(b *testing.B) {
	dir := b.TempDir()
	opts := Options{Budget: budget.New(16<<30, "the benchmark's budget")}
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU))
	require.NoError(b, err)
	defer eng.Close()
	cases := []struct {
		name  string
		write func(path string)
	}{
		{"parquet-zstd-1GiB-page", func(path string) { require.NoError(b, hostile.WriteZeroPages(path, "zstd", 1, 1)) }},
		{"ipc-zstd-4GiB-buffer", func(path string) { writeZeroIPC(b, path, 1<<29) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			path := filepath.Join(dir, c.name)
			if _, err := os.Stat(path); err != nil {
				c.write(path)
			}
			srcs, err := Expand([]string{path})
			require.NoError(b, err)
			freeMemory()
			start := time.Now()
			_, err = aggregateSources(context.Background(), b, eng, srcs, opts)
			require.NoError(b, err)
			full := time.Since(start)
			b.ResetTimer()
			var total, worst time.Duration
			missed := 0
			for i := 0; i < b.N; i++ {
				freeMemory()
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() {
					_, err := aggregateSources(ctx, b, eng, srcs, opts)
					done <- err
				}()
				time.Sleep(full * time.Duration(20+20*(i%4)) / 100)
				t0 := time.Now()
				cancel()
				err := <-done
				took := time.Since(t0)
				switch {
				case errors.Is(err, context.Canceled):
				case err == nil:
					missed++ // it ended before the cancel came
					continue
				default:
					b.Fatalf("iteration %d: Aggregate ended with %v, not cancelled", i, err)
				}
				total += took
				worst = max(worst, took)
			}
			if missed == b.N {
				b.Fatalf("every iteration ended before its cancel")
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(missed), "missed")
			b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N-missed), "ms-to-stop")
			b.ReportMetric(float64(worst.Microseconds())/1e3, "worst-ms-to-stop")
			b.ReportMetric(float64(full.Microseconds())/1e3, "full-ms")
		})
	}
}

// busyReader is a batch reader whose next is busy (as Arrow's reader is,
// decompressing a large buffer whole) until it is released.
type busyReader struct {
	started, release, closed chan struct{}
}

func (r *busyReader) next(ctx context.Context) (arrow.Record, error) {
	close(r.started)
	<-r.release
	return nil, io.EOF
}
func (r *busyReader) abort()       {}
func (r *busyReader) close() error { close(r.closed); return nil }

// After a cancel, stopping the prefetcher returns within stopGrace even
// while the reader is busy; the reader is closed once it is done.
func TestPrefetchStopAfterCancel(t *testing.T) {
	r := &busyReader{started: make(chan struct{}), release: make(chan struct{}), closed: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	p := startPrefetch(ctx, r)
	<-r.started
	cancel()
	returned := make(chan struct{})
	go func() { p.stop(); close(returned) }()
	select {
	case <-returned:
	case <-time.After(100 * stopGrace): // (a bound far past the grace: not a timing assertion)
		t.Fatal("stop waited for the busy reader")
	}
	select {
	case <-r.closed:
		t.Fatal("closed while busy")
	default:
	}
	close(r.release)
	<-r.closed // closed once done
}
