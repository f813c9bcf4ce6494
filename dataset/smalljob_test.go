package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/budget"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/planner"
)

// lazyPageGPU is a GPU backend that sets its device up lazily
// (backend.Prober), as the CUDA backend does, and takes fixed-width views
// and Parquet pages: it counts its probes, its calibrations (the planner
// asks its DeviceName) and the work given to it.
type lazyPageGPU struct {
	cpu                  cpu.CPU
	probes, names, calls atomic.Int64
}

var (
	_ backend.Prober  = (*lazyPageGPU)(nil)
	_ backend.PageGPU = (*lazyPageGPU)(nil)
)

func (g *lazyPageGPU) Name() string       { return "gpu" }
func (g *lazyPageGPU) Close() error       { return nil }
func (g *lazyPageGPU) Warm() error        { return nil }
func (g *lazyPageGPU) Probe() error       { g.probes.Add(1); return nil }
func (g *lazyPageGPU) DeviceName() string { g.names.Add(1); return "lazy" }
func (g *lazyPageGPU) Handles(v *column.View) bool {
	return v.Kind.Family() != column.FamilyBytes && v.Kind != column.Opaque && v.Dict == nil
}
func (g *lazyPageGPU) HandlesPages(k column.Kind, _ agg.Set) bool { return column.PageKind(k) }
func (g *lazyPageGPU) Update(ctx context.Context, views []*column.View, states []*agg.State) error {
	g.calls.Add(1)
	return g.cpu.Update(ctx, views, states)
}
func (g *lazyPageGPU) UpdatePages(context.Context, *column.Pages, *agg.State) error {
	g.calls.Add(1)
	return errors.New("lazyPageGPU decodes no pages")
}

// TestSmallFileOpensNoGPU: under --device auto, a file whose every chunk
// or record batch the CPU is estimated to read in less than the GPU's
// start (planner.PagesWorthAsking over the whole file) is read without a
// calibration: the GPU backend is neither probed nor named nor given work,
// though its windows are larger than tiny views (planner.TinyBytes), which
// would each ask for one. The results are the CPU's, and the plans say
// why. A compressed IPC file is sized by what its buffers declare
// (TestIPCWorkCountsDecompressedBytes); an IPC stream file by its messages
// walked in place (streamBlocks).
func TestSmallFileOpensNoGPU(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	rec := pqRecord(mem, pqCols()[:12], 200_000, 5)
	files := map[string]string{"parquet": filepath.Join(dir, "small.parquet"), "ipc": filepath.Join(dir, "small.arrow"),
		"ipc-zstd": filepath.Join(dir, "small-zstd.arrow"), "ipc-stream": filepath.Join(dir, "small.arrows"),
		"ipc-stream-lz4": filepath.Join(dir, "small-lz4.arrows")}
	writePQ(t, files["parquet"], rec, pqConfig{props: []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(70_000)}})
	writeIPC(t, files["ipc"], rec)
	writeCompressedIPC(t, files["ipc-zstd"], rec, 70_000)
	writeIPCAs(t, files["ipc-stream"], rec, false)
	writeIPCSlices(t, files["ipc-stream-lz4"], false, rec, 70_000, ipc.WithLZ4())
	rec.Release()
	for name, path := range files {
		t.Run(name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			want, _ := aggregateFile(t, mem, []string{path}, Options{}, agg.Default)
			gpu := &lazyPageGPU{cpu: cpu.CPU{Threads: 1}}
			eng, err := engine.New(engine.WithGPU(gpu), engine.WithThreads(2), engine.WithAllocator(mem))
			require.NoError(t, err)
			defer eng.Close()
			srcs, err := Expand([]string{path})
			require.NoError(t, err)
			d, err := Open(context.Background(), srcs, Options{Mem: mem})
			require.NoError(t, err)
			defer d.Close()
			sel, err := d.Select(nil)
			require.NoError(t, err)
			sum, err := d.Aggregate(context.Background(), eng, sel, AggregateOptions{})
			require.NoError(t, err)
			gpuCapable := 0
			for i, r := range sum.Results {
				assert.Equal(t, want[i], render(r))
				p := sum.Plan[i]
				assert.Equal(t, "cpu", p.BackendName(), p.Name)
				if strings.Contains(p.Reason, "than the gpu's start") {
					gpuCapable++
				}
			}
			assert.Zero(t, gpu.calls.Load(), "work given to the GPU")
			assert.Positive(t, gpuCapable, "columns the GPU could take, planned for the file's size")
			assert.Zero(t, gpu.probes.Load(), "probed for a small file")
			assert.Zero(t, gpu.names.Load(), "calibrated for a small file")
		})
	}
}

// ipcWork counts a compressed IPC file's batches at the sizes their
// buffers declare, decompressed, not at their stored bytes: a file of
// zeros, which zstd stores in a few kB, is sized by its 8 MB of values.
func TestIPCWorkCountsDecompressedBytes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	b := array.NewInt64Builder(mem)
	b.AppendValues(make([]int64, 1<<20), nil)
	arr := b.NewArray()
	b.Release()
	rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "z", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{arr}, 1<<20)
	arr.Release()
	plain, packed := filepath.Join(dir, "zeros.arrow"), filepath.Join(dir, "zeros-zstd.arrow")
	writeIPC(t, plain, rec)
	writeCompressedIPC(t, packed, rec, 1<<18)
	rec.Release()
	eng, err := engine.New(engine.WithThreads(2), engine.WithAllocator(mem))
	require.NoError(t, err)
	defer eng.Close()
	work := func(path string) planner.PageWork {
		data, footer := openIPCFooter(t, path, mem)
		r := &ipcFileRun{eng: eng, mem: trackingAllocator(mem), data: data}
		w, ok := r.ipcWork(footer)
		require.True(t, ok)
		return w
	}
	w := work(plain)
	assert.GreaterOrEqual(t, w.Views, int64(8<<20), "an uncompressed body folded where it lies")
	assert.Zero(t, w.Decoded)
	assert.Empty(t, w.Host)
	w = work(packed)
	assert.Equal(t, int64(8<<20), w.Views, "the declared sizes of the compressed buffers")
	assert.Zero(t, w.Decoded)
	assert.Empty(t, w.Host, "decompressed on the host by either backend: not weighed")
}

// TestMappedMetadataCharged: a mapped IPC file's batches are read in place,
// but each message's metadata is copied for the decoders: the copy is
// charged to the budget before it is made, as an unmapped file's whole
// read is.
func TestMappedMetadataCharged(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewInt64Builder(mem)
	b.AppendValues(make([]int64, 1000), nil)
	arr := b.NewArray()
	b.Release()
	rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "z", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{arr}, 1000)
	arr.Release()
	path := filepath.Join(t.TempDir(), "z.arrow")
	writeIPC(t, path, rec)
	rec.Release()
	data, footer := openIPCFooter(t, path, mem)
	require.NotNil(t, data.mapped)
	require.NotEmpty(t, footer.blocks)
	blk := footer.blocks[0]
	var asked int64
	r := &ipcFileRun{data: data}
	msg, charged, err := r.readMessage(blk, "a record batch read", func(_ string, n int64) error {
		asked += n
		return nil
	})
	require.NoError(t, err)
	defer msg.done()
	assert.Equal(t, asked, charged)
	assert.Equal(t, blk.meta, charged, "the metadata's copy, not the mapped body")
	assert.LessOrEqual(t, int64(len(msg.meta)), charged)

	// refused, it reads nothing
	refused := errors.New("over the budget")
	_, charged, err = r.readMessage(blk, "a record batch read", func(string, int64) error { return refused })
	require.ErrorIs(t, err, refused)
	assert.Zero(t, charged)
}

// openIPCFooter opens the IPC file at path as the file path reads it
// (mapped when it can be) and reads its footer; the data is closed when
// the test ends.
func openIPCFooter(t *testing.T, path string, mem memory.Allocator) (*ipcData, *ipcFooter) {
	t.Helper()
	srcs, err := Expand([]string{path})
	require.NoError(t, err)
	data, err := openIPCData(srcs[0], mem)
	require.NoError(t, err)
	t.Cleanup(func() { data.close() }) //nolint:errcheck
	footer, err := readIPCFooter(data.f, data.size)
	require.NoError(t, err)
	return data, footer
}

// ipcWriter is an IPC file or stream writer.
type ipcWriter interface {
	Write(arrow.Record) error
	Close() error
}

// newIPCWriter writes f as an IPC file or (file false) stream, with opts.
func newIPCWriter(t testing.TB, f *os.File, file bool, opts ...ipc.Option) ipcWriter {
	t.Helper()
	if !file {
		return ipc.NewWriter(f, opts...)
	}
	w, err := ipc.NewFileWriter(f, opts...)
	require.NoError(t, err)
	return w
}

// writeIPCSlices writes rec to path, an IPC file or (file false) stream,
// as batches of batch rows.
func writeIPCSlices(t *testing.T, path string, file bool, rec arrow.Record, batch int64, opts ...ipc.Option) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	w := newIPCWriter(t, f, file, append([]ipc.Option{ipc.WithSchema(rec.Schema())}, opts...)...)
	for lo := int64(0); lo < rec.NumRows(); lo += batch {
		s := rec.NewSlice(lo, min(lo+batch, rec.NumRows()))
		require.NoError(t, w.Write(s))
		s.Release()
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

// streamBlocks walks an IPC stream's messages: every dictionary and record
// batch, in order, with the framing of the format since 1.0 and of the one
// before, and stops at the end marker; framing that runs past the bytes is
// not walked.
func TestStreamBlocks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := pqRecord(mem, pqCols()[:4], 1000, 3)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "s.arrows")
	writeIPCSlices(t, path, false, rec, 300)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var blocks []ipcBlock
	require.True(t, streamBlocks(data, func(b ipcBlock) bool { blocks = append(blocks, b); return true }))
	require.Len(t, blocks, 4, "batches of 300, 300, 300 and 100 rows")
	var rows int64
	for _, b := range blocks {
		m, err := parseIPCMessage(data[b.offset:b.offset+b.meta+b.body], ipcBlock{offset: b.offset, meta: b.meta, body: b.body}, false)
		require.NoError(t, err)
		length, ok := m.hdr.scalar(0, 8)
		require.True(t, ok)
		rows += int64(length)
	}
	assert.Equal(t, int64(1000), rows)
	n := 0
	require.True(t, streamBlocks(data, func(ipcBlock) bool { n++; return n < 2 }), "stopped by f")
	assert.Equal(t, 2, n)
	// Cut anywhere: no block past the bytes, and the walk says it reached
	// the end only where the cut falls between two messages.
	ends := map[int64]bool{blocks[0].offset: true}
	for _, b := range blocks {
		ends[b.offset+b.meta+b.body] = true
	}
	for cut := int64(1); cut < int64(len(data)); cut++ {
		var got []ipcBlock
		ok := streamBlocks(data[:cut], func(b ipcBlock) bool { got = append(got, b); return true })
		for _, b := range got {
			require.LessOrEqual(t, b.offset+b.meta+b.body, cut, "a block past the bytes at cut %d", cut)
		}
		if len(got) < len(blocks) {
			require.Equal(t, ends[cut], ok, "a stream cut at %d", cut)
		}
	}
}

// A stream file of many tiny messages has its list of messages charged to
// the memory budget before it is made: with a budget smaller than the
// list, the read is refused, saying what did not fit, instead of growing
// past it.
func TestStreamListCharged(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	path := filepath.Join(t.TempDir(), "tiny.arrows")
	f, err := os.Create(path)
	require.NoError(t, err)
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	w := ipc.NewWriter(f, ipc.WithSchema(schema))
	b := array.NewInt64Builder(mem)
	arr := b.NewArray()
	b.Release()
	empty := array.NewRecord(schema, []arrow.Array{arr}, 0)
	arr.Release()
	const batches = 50_000
	for range batches {
		require.NoError(t, w.Write(empty))
	}
	empty.Release()
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())

	_, _, err = aggregatePaths(context.Background(), t, mem, []string{path}, nil, Options{Budget: budget.New(1<<20, "--memory")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the Arrow IPC stream's messages listed")

	// With room for the list, the stream is read in place: 0 rows.
	sum, _, err := aggregatePaths(context.Background(), t, mem, []string{path}, nil, Options{Budget: budget.New(64<<20, "--memory")})
	require.NoError(t, err)
	assert.Zero(t, sum.Rows)
}
