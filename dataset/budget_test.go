package dataset

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/budget"
	"github.com/arrowagg/arrowagg/engine"
)

// bigRecord is rows rows of an int64 column (i % 1000) and a float64 one
// (every third row null).
func bigRecord(mem memory.Allocator, rows int) arrow.Record {
	ib := array.NewInt64Builder(mem)
	fb := array.NewFloat64Builder(mem)
	defer ib.Release()
	defer fb.Release()
	for i := 0; i < rows; i++ {
		ib.Append(int64(i % 1000))
		if i%3 == 0 {
			fb.AppendNull()
		} else {
			fb.Append(float64(i%77) / 4)
		}
	}
	a, b := ib.NewArray(), fb.NewArray()
	defer a.Release()
	defer b.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64}, {Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	return array.NewRecord(schema, []arrow.Array{a, b}, int64(rows))
}

// A Parquet file of pages larger than the budget is refused, naming the
// need and the budget; one whose pages fit it is answered exactly as with
// all the memory it wants, with several workers sharing the budget (so that
// they wait for one another), which is never exceeded and comes back whole.
func TestBudgetParquetPages(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const rows = 4 << 20 // pages of 16 MiB and more, over 4 row groups
	rec := bigRecord(mem, rows)
	defer rec.Release()
	dir := t.TempDir()
	for _, dict := range []bool{false, true} {
		path := filepath.Join(dir, "big.parquet")
		writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithDataPageSize(64 << 20), parquet.WithMaxRowGroupLength(rows / 4), parquet.WithDictionaryDefault(dict),
			parquet.WithDictionaryPageSizeLimit(64 << 20)}})
		want, _ := aggregateFile(t, mem, []string{path}, Options{Budget: budget.New(1<<40, "")}, agg.Default)

		small := budget.New(6<<20, "--memory")
		_, _, err := aggregatePaths(context.Background(), t, mem, []string{path}, nil, Options{Budget: small})
		if dict { // pages of indices, of a few MiB: no large buffer
			assert.NoError(t, err)
		} else {
			var be *budget.Error
			require.ErrorAs(t, err, &be)
			assert.ErrorContains(t, err, "the budget is 6.0 MiB (--memory)")
			assert.ErrorContains(t, err, path)
		}
		assert.Zero(t, small.Used())

		b := budget.New(40<<20, "")
		got, _ := aggregateFile(t, mem, []string{path}, Options{Budget: b, Workers: 8}, agg.Default)
		assert.Equal(t, want, got, "dictionary %v", dict)
		assert.LessOrEqual(t, b.Peak(), b.Total())
		if !dict {
			assert.Greater(t, b.Peak(), int64(keepBytes), "the pages were charged")
		}
		assert.Zero(t, b.Used())
		// through pqarrow alike
		got, _ = aggregateFile(t, mem, []string{path}, Options{Budget: b, Workers: 8, ArrowDecode: true}, agg.Default)
		assert.Equal(t, want, got, "dictionary %v", dict)
		assert.Zero(t, b.Used())
	}
}

// The decoded footer of an open Parquet file is charged until Close.
func TestBudgetFooter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.parquet")
	rec := bigRecord(memory.DefaultAllocator, 10)
	defer rec.Release()
	writePQ(t, path, rec, pqConfig{})
	srcs, err := Expand([]string{path})
	require.NoError(t, err)
	b := budget.New(1<<30, "")
	d, err := Open(context.Background(), srcs, Options{Budget: b})
	require.NoError(t, err)
	assert.Positive(t, b.Used())
	require.NoError(t, d.Close())
	assert.Zero(t, b.Used())

	_, err = Open(context.Background(), srcs, Options{Budget: budget.New(100, "")})
	var be *budget.Error
	assert.ErrorAs(t, err, &be)
}

// writeCompressedIPC writes rec as an IPC file of batches of batch rows,
// zstd-compressed.
func writeCompressedIPC(t *testing.T, path string, rec arrow.Record, batch int64) {
	t.Helper()
	writeIPCSlices(t, path, true, rec, batch, ipc.WithZstd())
}

// The record batches of a compressed IPC file are charged before they are
// decoded: one larger than the budget is refused, the others wait for the
// memory of the batches before them, in file order, and the answer is the
// same. Mapped or read, and as a stream on standard input.
func TestBudgetIPC(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const rows = 1 << 21
	rec := bigRecord(mem, rows)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "z.arrow")
	writeCompressedIPC(t, path, rec, rows/8) // batches of 4 MiB and more decompressed
	want, _ := aggregateFile(t, mem, []string{path}, Options{Budget: budget.New(1<<40, "")}, agg.Default)
	for _, mapped := range []bool{true, false} {
		func() {
			defer func(old bool) { useMmap = old }(useMmap)
			useMmap = mapped
			small := budget.New(2<<20, "--memory")
			_, _, err := aggregatePaths(context.Background(), t, mem, []string{path}, nil, Options{Budget: small})
			var be *budget.Error
			require.ErrorAs(t, err, &be, "mapped %v", mapped)
			assert.ErrorContains(t, err, "a record batch")
			assert.Zero(t, small.Used())

			b := budget.New(12<<20, "")
			got, _ := aggregateFile(t, mem, []string{path}, Options{Budget: b, Workers: 8}, agg.Default)
			assert.Equal(t, want, got, "mapped %v", mapped)
			assert.LessOrEqual(t, b.Peak(), b.Total())
			assert.Greater(t, b.Peak(), int64(4<<20))
			assert.Zero(t, b.Used())
		}()
	}

	// The same batches as a stream on standard input.
	var stream bytes.Buffer
	w := ipc.NewWriter(&stream, ipc.WithSchema(rec.Schema()), ipc.WithZstd())
	for lo := int64(0); lo < rows; lo += rows / 8 {
		s := rec.NewSlice(lo, lo+rows/8)
		require.NoError(t, w.Write(s))
		s.Release()
	}
	require.NoError(t, w.Close())
	small := budget.New(2<<20, "--memory")
	_, _, err := aggregatePaths(context.Background(), t, mem, []string{Stdin}, nil, Options{Stdin: bytes.NewReader(stream.Bytes()), Budget: small})
	var be *budget.Error
	require.ErrorAs(t, err, &be)
	assert.Zero(t, small.Used())
	b := budget.New(64<<20, "")
	srcs, err := Expand([]string{Stdin})
	require.NoError(t, err)
	d, err := Open(context.Background(), srcs, Options{Mem: mem, Stdin: bytes.NewReader(stream.Bytes()), Budget: b})
	require.NoError(t, err)
	sel, err := d.Select(nil)
	require.NoError(t, err)
	sum, err := d.Aggregate(context.Background(), newEngine(t, mem), sel, AggregateOptions{})
	require.NoError(t, err)
	got := make([]string, len(sum.Results))
	for i, r := range sum.Results {
		got[i] = render(r)
	}
	assert.Equal(t, want, got)
	assert.Positive(t, b.Peak())
	require.NoError(t, d.Close())
	assert.Zero(t, b.Used())
}

// The bitmap that the view of a null (or run-end encoded, or union) column
// makes, a bit a row, is charged before the batch is decoded: 2^30 rows of
// a null column, a file of a few hundred bytes, need 128 MiB.
func TestBudgetIPCOwnValidity(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const rows = 1 << 30
	n := array.NewNull(rows)
	defer n.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.Null, Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{n}, rows)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "n.arrow")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())

	small := budget.New(64<<20, "--memory")
	_, _, err = aggregatePaths(context.Background(), t, mem, []string{path}, nil, Options{Budget: small})
	var be *budget.Error
	require.ErrorAs(t, err, &be)
	assert.ErrorContains(t, err, "a record batch")
	assert.Zero(t, small.Used())

	b := budget.New(1<<30, "")
	sum, _, err := aggregatePaths(context.Background(), t, mem, []string{path}, nil, Options{Budget: b})
	require.NoError(t, err)
	assert.Equal(t, int64(rows), sum.Rows)
	assert.GreaterOrEqual(t, b.Peak(), int64(rows/8))
	assert.Zero(t, b.Used())
}

// The plan of a Parquet file's GPU page route is charged while it is made
// (planChunkBytes a column chunk): a file of 4,000 row groups whose plan
// does not fit beside its pinned footer is refused, naming it; with room
// for it, the answer is the CPU's and the budget comes back whole.
func TestBudgetPagePlan(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := bigRecord(mem, 40_000)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "groups.parquet")
	writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(10)}})
	want, _ := aggregateFile(t, mem, []string{path}, Options{}, agg.Default)
	srcs, err := Expand([]string{path})
	require.NoError(t, err)
	probe := budget.New(1<<40, "")
	d, err := Open(context.Background(), srcs, Options{Budget: probe, Mem: mem})
	require.NoError(t, err)
	footer := probe.Used()
	require.NoError(t, d.Close())
	plan := int64(4000 * 2 * planChunkBytes) // (two leaves)
	for _, room := range []int64{plan / 2, 2 * plan} {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		b := budget.New(footer+room, "--memory")
		gpu := &lazyPageGPU{cpu: cpu.CPU{Threads: 1}}
		eng, err := engine.New(engine.WithGPU(gpu), engine.WithThreads(2), engine.WithAllocator(mem))
		require.NoError(t, err)
		d, err := Open(context.Background(), srcs, Options{Budget: b, Mem: mem})
		require.NoError(t, err)
		sel, err := d.Select(nil)
		require.NoError(t, err)
		sum, err := d.Aggregate(context.Background(), eng, sel, AggregateOptions{})
		if room < plan {
			var be *budget.Error
			require.ErrorAs(t, err, &be)
			assert.ErrorContains(t, err, "the plan of the file's chunks")
		} else {
			require.NoError(t, err)
			for i, r := range sum.Results {
				assert.Equal(t, want[i], render(r))
			}
			assert.GreaterOrEqual(t, b.Peak(), footer+plan, "the plan charged")
		}
		require.NoError(t, d.Close())
		require.NoError(t, eng.Close())
		assert.Zero(t, b.Used())
	}
}

// A small file of fixed-width columns that pqarrow decodes is aggregated
// within a small budget: a decoding task is charged what its chunk's
// batches can hold (arrowTaskCost), not arrowTaskBytes whatever the chunk
// (a file of 180 KB once needed 16.2 MiB of --memory), and the answers are
// those of an unbounded budget.
func TestAggregateSmallChunksSmallBudget(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := pqRecord(mem, pqCols()[:12], 20_000, 9)
	path := filepath.Join(t.TempDir(), "small.parquet")
	writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(5000)}})
	rec.Release()
	want, _ := aggregateFile(t, mem, []string{path}, Options{ArrowDecode: true, Budget: budget.New(1<<40, "the test's budget")}, agg.Default)
	got, _ := aggregateFile(t, mem, []string{path}, Options{ArrowDecode: true, Budget: budget.New(4<<20, "the test's budget")}, agg.Default)
	assert.Equal(t, want, got)
}
