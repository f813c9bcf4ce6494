package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/testdatagen"
	"github.com/arrowagg/arrowagg/report"
)

func newEngine(t testing.TB, mem memory.Allocator) *engine.Engine {
	t.Helper()
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithAllocator(mem), engine.WithThreads(2))
	require.NoError(t, err)
	t.Cleanup(func() { eng.Close() })
	return eng
}

// aggregatePaths expands, opens, selects and aggregates.
func aggregatePaths(ctx context.Context, t *testing.T, mem memory.Allocator, in []string, columns []string, opts Options) (*Summary, Selection, error) {
	t.Helper()
	srcs, err := Expand(in)
	if err != nil {
		return nil, Selection{}, err
	}
	opts.Mem = mem
	d, err := Open(ctx, srcs, opts)
	if err != nil {
		return nil, Selection{}, err
	}
	defer d.Close()
	sel, err := d.Select(columns)
	if err != nil {
		return nil, sel, err
	}
	sum, err := d.Aggregate(ctx, newEngine(t, mem), sel, AggregateOptions{})
	return sum, sel, err
}

func jsonOf(t *testing.T, rows int64, files int, res []engine.Result) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, report.Write(&b, report.JSON, report.Report{Rows: rows, Files: files, Columns: res}))
	return b.String()
}

// flatSchema is a schema of one top-level field per leaf, named with the
// leaf's (dotted) name: every selected leaf resolves in it, which makes it
// the schema of an accumulator over them.
func flatSchema(leaves []arrow17.Leaf) *arrow.Schema {
	fields := make([]arrow.Field, len(leaves))
	for i, l := range leaves {
		fields[i] = arrow.Field{Name: l.Name, Type: l.Type, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// inMemory aggregates file f from the generator's rows, batch by batch as the
// file was written (a batch per Parquet row group or IPC record batch), in
// one accumulator merged into one over the selected leaves.
func inMemory(t *testing.T, mem memory.Allocator, f testdatagen.File, leaves []arrow17.Leaf) []engine.Result {
	t.Helper()
	eng := newEngine(t, mem)
	req := engine.Request{Columns: Selection{Leaves: leaves}.Names()}
	total, err := eng.NewAccumulator(flatSchema(leaves), req)
	require.NoError(t, err)
	acc, err := eng.NewAccumulator(testdatagen.Schema(f), req)
	require.NoError(t, err)
	for lo := 0; lo < f.Rows; lo += f.Chunk {
		rec := testdatagen.Record(mem, f, lo, min(lo+f.Chunk, f.Rows))
		require.NoError(t, acc.Add(context.Background(), rec))
		rec.Release()
	}
	require.NoError(t, total.Merge(acc))
	return total.Results()
}

// Every file reads back as the rows it was made of: the same aggregates,
// to the last bit, as the generator's in-memory batches.
// With many workers, several Parquet row groups are decoded at once.
func TestAggregateMatchesGeneratedRows(t *testing.T) {
	for _, tc := range []struct {
		f       testdatagen.File
		workers int
	}{{testdatagen.Files[0], 1}, {testdatagen.Files[0], 64}, {testdatagen.Files[1], 3}, {testdatagen.Files[2], 3}} {
		f := tc.f
		t.Run(fmt.Sprintf("%s/%d", f.Name, tc.workers), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			sum, sel, err := aggregatePaths(context.Background(), t, mem, []string{filepath.Join(testdata, f.Name)}, nil, Options{Workers: tc.workers})
			require.NoError(t, err)
			assert.Equal(t, int64(f.Rows), sum.Rows)
			assert.Equal(t, 1, sum.Files)
			require.Empty(t, sel.Skipped)
			assert.Equal(t, "tags", sel.Leaves[len(sel.Leaves)-1].Name, "the list column is counted")
			want := inMemory(t, mem, f, sel.Leaves)
			assert.Equal(t, jsonOf(t, int64(f.Rows), 1, want), jsonOf(t, sum.Rows, sum.Files, sum.Results))
			require.Len(t, sum.Plan, len(sel.Leaves))
			for i, p := range sum.Plan {
				assert.Positive(t, p.Bytes, sel.Leaves[i].Name)
				assert.Equal(t, "cpu", p.BackendName(), sel.Leaves[i].Name)
				assert.Positive(t, p.Measured, sel.Leaves[i].Name)
			}
		})
	}
}

// Columns are matched by name across files; a column a file lacks is null
// in its rows.
func TestAggregateUnionByName(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sum, sel, err := aggregatePaths(context.Background(), t, mem, []string{testdata}, nil, Options{})
	require.NoError(t, err)
	total := 0
	for _, f := range testdatagen.Files {
		total += f.Rows
	}
	assert.Equal(t, int64(total), sum.Rows)
	assert.Equal(t, len(testdatagen.Files), sum.Files)
	assert.Len(t, sel.Leaves, 28)

	perFile := map[string]engine.Result{}
	for _, f := range testdatagen.Files {
		one, _, err := aggregatePaths(context.Background(), t, mem, []string{filepath.Join(testdata, f.Name)}, nil, Options{})
		require.NoError(t, err)
		for _, r := range one.Results {
			acc := perFile[r.Name]
			acc.Count += r.Count
			acc.NullCount += r.NullCount
			perFile[r.Name] = acc
		}
		for _, name := range f.Omit {
			acc := perFile[name]
			acc.NullCount += int64(f.Rows)
			perFile[name] = acc
		}
	}
	for _, r := range sum.Results {
		assert.Equal(t, perFile[r.Name].Count, r.Count, r.Name)
		assert.Equal(t, perFile[r.Name].NullCount, r.NullCount, r.Name)
		assert.Equal(t, int64(total), r.Count+r.NullCount, r.Name)
	}
}

func TestSelect(t *testing.T) {
	srcs, err := Expand([]string{testdata})
	require.NoError(t, err)
	d, err := Open(context.Background(), srcs, Options{})
	require.NoError(t, err)
	defer d.Close()

	sel, err := d.Select([]string{"point", "u8", "u8", "elapsed"})
	require.NoError(t, err)
	assert.Equal(t, []string{"point.a", "point.b", "u8", "elapsed"}, sel.Names())
	assert.Equal(t, arrow.FixedWidthTypes.Duration_ms, sel.Leaves[3].Type, "elapsed is described by the first file that has it")

	_, err = d.Select([]string{"nope"})
	assert.ErrorIs(t, err, engine.ErrUnknownColumn)
	assert.True(t, strings.HasPrefix(err.Error(), filepath.Join(testdata, "sample.arrow")+`: unknown column "nope" (columns: i8, i16,`), err.Error())

	sel, err = d.Select([]string{"tags"})
	require.NoError(t, err)
	require.Len(t, sel.Leaves, 1)
	assert.Equal(t, column.Opaque, sel.Leaves[0].Kind)
}

func writeIPC(t *testing.T, path string, rec arrow.Record) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(rec.Schema()))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

func int64Record(name string, vals ...int64) arrow.Record {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, nil)
	arr := b.NewArray()
	defer arr.Release()
	return array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil), []arrow.Array{arr}, int64(len(vals)))
}

// oneColumn is a record of one column named name.
func oneColumn(name string, arr arrow.Array) arrow.Record {
	defer arr.Release()
	return array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: name, Type: arr.DataType(), Nullable: true}}, nil), []arrow.Array{arr}, int64(arr.Len()))
}

// A column of integers (or floats) of different widths in different files
// is widened to the widest; types of different families are an error
// naming both files.
func TestSameNameOtherType(t *testing.T) {
	mem := memory.DefaultAllocator
	dir := t.TempDir()
	write := func(name string, rec arrow.Record) string {
		defer rec.Release()
		p := filepath.Join(dir, name)
		writeIPC(t, p, rec)
		return p
	}
	i64 := array.NewInt64Builder(mem)
	i64.AppendValues([]int64{1, -1 << 40}, nil)
	a := write("a.arrow", oneColumn("x", i64.NewArray()))
	i32 := array.NewInt32Builder(mem)
	i32.AppendValues([]int32{3, -7}, []bool{true, false})
	b := write("b.arrow", oneColumn("x", i32.NewArray()))
	i8 := array.NewInt8Builder(mem)
	i8.AppendValues([]int8{100}, nil)
	c := write("c.arrow", oneColumn("x", i8.NewArray()))
	u32 := array.NewUint32Builder(mem)
	u32.AppendValues([]uint32{3}, nil)
	u := write("u.arrow", oneColumn("x", u32.NewArray()))
	f32 := array.NewFloat32Builder(mem)
	f32.AppendValues([]float32{0.5, 1e30}, nil)
	f := write("f.arrow", oneColumn("f", f32.NewArray()))
	f64 := array.NewFloat64Builder(mem)
	f64.AppendValues([]float64{-2.25}, nil)
	g := write("g.arrow", oneColumn("f", f64.NewArray()))
	i64.Release()
	i32.Release()
	i8.Release()
	u32.Release()
	f32.Release()
	f64.Release()

	for _, order := range [][]string{{a, b, c}, {c, b, a}, {b, c}} {
		sum, _, err := aggregatePaths(context.Background(), t, mem, order, nil, Options{})
		require.NoError(t, err, order)
		r := sum.Results[0]
		want := "int64"
		if len(order) == 2 {
			want = "int32"
		}
		assert.Equal(t, want, r.Type.String(), order)
		assert.Equal(t, int64(1), r.NullCount)
		if len(order) == 3 {
			assert.Equal(t, fmt.Sprint(1-(int64(1)<<40)+3+100), fmt.Sprint(r.SumExact))
			assert.Equal(t, "-1099511627776", fmt.Sprint(r.Min))
			assert.Equal(t, "100", fmt.Sprint(r.Max))
		}
	}
	sum, _, err := aggregatePaths(context.Background(), t, mem, []string{f, g}, nil, Options{})
	require.NoError(t, err)
	assert.Equal(t, "float64", sum.Results[0].Type.String())
	assert.Equal(t, "-2.25", fmt.Sprint(sum.Results[0].Min))
	assert.Equal(t, "1.0000000150474662e+30", fmt.Sprint(sum.Results[0].Max))

	_, _, err = aggregatePaths(context.Background(), t, mem, []string{a, u}, nil, Options{})
	assert.EqualError(t, err, u+`: column "x" is uint32 here but int64 in `+a)
	var e *Error
	assert.ErrorAs(t, err, &e)
	_, _, err = aggregatePaths(context.Background(), t, mem, []string{g, a, write("xf.arrow", oneColumn("x", func() arrow.Array {
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		b.Append(1)
		return b.NewArray()
	}()))}, nil, Options{})
	assert.ErrorContains(t, err, `column "x" is float64 here but int64 in `+a)
}

// Leaves resolve to their Parquet leaf columns, and those whose pages hold
// their Arrow values as they are take the page path.
func TestParquetLeaves(t *testing.T) {
	pq := filepath.Join(testdata, "sample.parquet")
	schema, pqf, err := probeParquet(pathSource(t, pq))
	require.NoError(t, err)
	all := arrow17.Leaves(schema)
	var pick []arrow17.Leaf
	var pointB int
	for i, l := range all {
		switch l.Name {
		case "point.b":
			pointB = i
			pick = append(pick, l)
		case "u64", "i8", "price", "ts_paris", "point.a", "tags":
			pick = append(pick, l)
		}
	}
	leaves, err := parquetLeaves(pqf, pick, []int{10, 11, 12, 13, 14, 15, 16}, true)
	require.NoError(t, err)
	got := map[string]parquetLeaf{}
	for k, l := range leaves {
		assert.Equal(t, 10+k, l.out)
		got[l.name] = l
	}
	// Parquet leaf columns: u64 is leaf 7, point.b the one after point.a.
	assert.Equal(t, 7, got["u64"].col)
	assert.Equal(t, pointB, got["point.b"].col)
	// tags, a list, is counted from the levels of the last leaf column, its
	// element (pqarrow's SchemaField of a list says ColIndex 0).
	assert.Equal(t, pqf.meta.Schema.NumColumns()-1, got["tags"].col)
	require.NotNil(t, got["tags"].list)
	assert.Equal(t, int16(1), got["tags"].list.RepLevel)
	for name, l := range got {
		assert.Equal(t, name == "tags", l.list != nil, name)
	}
	for name, paged := range map[string]bool{"u64": true, "ts_paris": true, "point.a": true, "i8": false, "price": true, "point.b": false, "tags": false} {
		assert.Equal(t, paged, got[name].page != nil, name)
	}
	leaves, err = parquetLeaves(pqf, pick, []int{0, 1, 2, 3, 4, 5, 6}, false)
	require.NoError(t, err)
	for _, l := range leaves {
		assert.Nil(t, l.page, l.name)
	}
}

func TestNoColumnsCountsRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	srcs, err := Expand([]string{testdata})
	require.NoError(t, err)
	d, err := Open(context.Background(), srcs, Options{Mem: mem})
	require.NoError(t, err)
	defer d.Close()
	sum, err := d.Aggregate(context.Background(), newEngine(t, mem), Selection{}, AggregateOptions{})
	require.NoError(t, err)
	assert.Equal(t, int64(2300), sum.Rows)
	assert.Empty(t, sum.Results)
}

func TestStdin(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	stream, err := os.ReadFile(filepath.Join(testdata, "sample.arrows"))
	require.NoError(t, err)
	var progressed atomic.Int64
	sum, _, err := aggregatePaths(context.Background(), t, mem, []string{"-"}, []string{"i64"},
		Options{Stdin: bytes.NewReader(stream), Progress: func(n int64) { progressed.Add(n) }})
	require.NoError(t, err)
	assert.Equal(t, int64(500), sum.Rows)
	assert.Equal(t, int64(len(stream)), progressed.Load(), "every byte of the stream is counted")

	want, _, err := aggregatePaths(context.Background(), t, mem, []string{filepath.Join(testdata, "sample.arrows")}, []string{"i64"}, Options{})
	require.NoError(t, err)
	assert.Equal(t, jsonOf(t, want.Rows, 1, want.Results), jsonOf(t, sum.Rows, 1, sum.Results))
}

// A Parquet or IPC file on standard input is told to be passed as a path.
func TestStdinOtherFormats(t *testing.T) {
	for name, want := range map[string]string{
		"sample.parquet": "stdin: reading an Arrow IPC stream: this looks like a Parquet file (it starts with PAR1): pass it as a path",
		"sample.arrow":   "stdin: reading an Arrow IPC stream: this looks like an Arrow IPC file (it starts with ARROW1): pass it as a path",
	} {
		b, err := os.ReadFile(filepath.Join(testdata, name))
		require.NoError(t, err)
		_, _, err = aggregatePaths(context.Background(), t, memory.DefaultAllocator, []string{"-"}, nil, Options{Stdin: bytes.NewReader(b)})
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), want), "%s: %v", name, err)
	}
}

// A read of standard input that never returns is abandoned when the
// context ends, while reading the schema and while reading batches.
func TestStdinCancel(t *testing.T) {
	stream, err := os.ReadFile(filepath.Join(testdata, "sample.arrows"))
	require.NoError(t, err)
	for _, stall := range []int{0, 2000} { // before the schema; after the first messages
		t.Run(fmt.Sprint(stall), func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			go func() { _, _ = pw.Write(stream[:stall]) }() // then nothing, for ever
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			done := make(chan error, 1)
			go func() {
				_, _, err := aggregatePaths(ctx, t, memory.DefaultAllocator, []string{"-"}, nil, Options{Stdin: pr})
				done <- err
			}()
			select {
			case err := <-done:
				assert.ErrorIs(t, err, context.Canceled)
			case <-time.After(10 * time.Second):
				t.Fatal("reading a stalled stdin did not stop when the context ended")
			}
		})
	}
}

func TestProgressAddsUpToTheInputSize(t *testing.T) {
	var total int64
	for _, f := range testdatagen.Files {
		fi, err := os.Stat(filepath.Join(testdata, f.Name))
		require.NoError(t, err)
		total += fi.Size()
	}
	for _, cols := range [][]string{nil, {"u8"}} {
		var done atomic.Int64
		_, _, err := aggregatePaths(context.Background(), t, memory.DefaultAllocator, []string{testdata}, cols,
			Options{Progress: func(n int64) {
				assert.Positive(t, n)
				done.Add(n)
			}})
		require.NoError(t, err)
		assert.Equal(t, total, done.Load(), "columns %v", cols)
	}
}

// corruptions returns damaged copies of a file: cut at many lengths, and
// with a run of bytes overwritten at many offsets.
func corruptions(data []byte) map[string][]byte {
	out := map[string][]byte{}
	step := max(len(data)/40, 1)
	for n := 1; n < len(data); n += step {
		out[fmt.Sprintf("cut at %d", n)] = data[:n]
	}
	for k := 1; k < 8; k++ { // at every eighth: inside a batch's body, most likely
		out[fmt.Sprintf("cut at %d/8", k)] = data[:len(data)*k/8]
	}
	for off := 0; off < len(data); off += step {
		for _, fill := range []byte{0x00, 0xFF} {
			d := bytes.Clone(data)
			for i := off; i < min(off+16, len(d)); i++ {
				d[i] = fill
			}
			out[fmt.Sprintf("%#x at %d", fill, off)] = d
		}
	}
	return out
}

// Damaged files never crash or hang the reader: every failure is an
// *Error naming the file, and what does decode is reported like any data.
func TestCorruptInputs(t *testing.T) {
	dir := t.TempDir()
	for _, f := range testdatagen.Files {
		data, err := os.ReadFile(filepath.Join(testdata, f.Name))
		require.NoError(t, err)
		failures := 0
		for name, d := range corruptions(data) {
			path := filepath.Join(dir, f.Name)
			require.NoError(t, os.WriteFile(path, d, 0o644))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			// many workers: several row groups decoded at once
			_, _, err := aggregatePaths(ctx, t, memory.DefaultAllocator, []string{path}, nil, Options{Workers: 64})
			require.NoError(t, ctx.Err(), "%s %s: hung", f.Name, name)
			cancel()
			if err != nil {
				failures++
				var e *Error
				require.ErrorAs(t, err, &e, "%s %s: %v", f.Name, name, err)
				assert.Equal(t, path, e.Path)
				assert.False(t, errors.Is(err, context.DeadlineExceeded))
			}
		}
		assert.Positive(t, failures, f.Name)
	}
}

// BenchmarkAggregate reads and aggregates every column of testdata/.
func BenchmarkAggregate(b *testing.B) {
	srcs, err := Expand([]string{testdata})
	require.NoError(b, err)
	var size int64
	for _, s := range srcs {
		size += s.Size
	}
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU))
	require.NoError(b, err)
	defer eng.Close()
	b.SetBytes(size)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d, err := Open(context.Background(), srcs, Options{})
		require.NoError(b, err)
		sel, err := d.Select(nil)
		require.NoError(b, err)
		if _, err := d.Aggregate(context.Background(), eng, sel, AggregateOptions{}); err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
}

// pathSource is the source of the file at path, whatever its format.
func pathSource(t testing.TB, path string) Source {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return Source{Path: path, Size: fi.Size()}
}
