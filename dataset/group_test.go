package dataset

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/testdatagen"
	"github.com/arrowagg/arrowagg/report"
)

// Grouping a file gives the groups of the rows it was made of: the same
// record, to the last bit, as the library's grouping of the generator's
// in-memory batches, for Parquet, IPC files and IPC streams, with one key
// and with two (a dictionary, a string, a binary and a struct field among
// them).
func TestGroupMatchesGeneratedRows(t *testing.T) {
	for _, f := range testdatagen.Files {
		for _, keys := range [][]string{{"color"}, {"flag", "point.b"}, {"i8"}, {"word"}, {"blob", "color"}} {
			t.Run(f.Name+"/"+keys[0], func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				ctx := context.Background()
				req := engine.GroupRequest{Keys: keys, Columns: []string{"i64", "f64", "word", "price", "day", "u8", "flag"},
					Aggs: agg.Default | agg.Ordered, CountRows: true}
				srcs, err := Expand([]string{filepath.Join(testdata, f.Name)})
				require.NoError(t, err)
				d, err := Open(ctx, srcs, Options{Mem: mem})
				require.NoError(t, err)
				defer d.Close()
				eng := newEngine(t, mem)
				sum, err := d.Group(ctx, eng, req)
				require.NoError(t, err)
				defer sum.Groups.Release()
				assert.Equal(t, int64(f.Rows), sum.Rows)
				assert.Equal(t, int64(f.Rows), sum.Kept)

				g, err := eng.NewGrouper(testdatagen.Schema(f), req)
				require.NoError(t, err)
				for lo := 0; lo < f.Rows; lo += f.Chunk {
					rec := testdatagen.Record(mem, f, lo, min(lo+f.Chunk, f.Rows))
					require.NoError(t, g.Add(ctx, rec))
					rec.Release()
				}
				want, err := g.Result(mem)
				require.NoError(t, err)
				defer want.Release()
				require.Greater(t, want.NumRows(), int64(1))
				var wantJSON, gotJSON bytes.Buffer
				require.NoError(t, report.WriteGroups(&wantJSON, report.JSON, report.Groups{Rows: int64(f.Rows), Files: 1, Kept: g.Kept(), Record: want}))
				require.NoError(t, report.WriteGroups(&gotJSON, report.JSON, report.Groups{Rows: sum.Rows, Files: sum.Files, Kept: sum.Kept, Record: sum.Groups}))
				assert.Equal(t, wantJSON.String(), gotJSON.String())
			})
		}
	}
}

// A filter skips the Parquet row groups whose statistics exclude its rows,
// and the groups are those of the rows it keeps, their rows the file's.
func TestGroupPrunesRowGroups(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sorted.parquet")
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}, {Name: "k", Type: arrow.PrimitiveTypes.Int32}}, nil)
	xb, kb := array.NewInt64Builder(mem), array.NewInt32Builder(mem)
	for x := range 4000 {
		xb.Append(int64(x))
		kb.Append(int32(x % 3))
	}
	cols := []arrow.Array{xb.NewArray(), kb.NewArray()}
	xb.Release()
	kb.Release()
	rec := array.NewRecord(schema, cols, 4000)
	for _, c := range cols {
		c.Release()
	}
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(1000)), pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	rec.Release()

	where, err := engine.Where("x >= 2500")
	require.NoError(t, err)
	srcs, err := Expand([]string{path})
	require.NoError(t, err)
	d, err := Open(ctx, srcs, Options{Mem: mem})
	require.NoError(t, err)
	defer d.Close()
	sum, err := d.Group(ctx, newEngine(t, mem), engine.GroupRequest{Keys: []string{"k"}, Columns: []string{"x"}, Aggs: agg.Count | agg.Sum | agg.ArgMin, Filter: where})
	require.NoError(t, err)
	defer sum.Groups.Release()
	assert.Equal(t, int64(2), sum.Pruned, "row groups 0-999 and 1000-1999")
	assert.Equal(t, int64(2000), sum.PrunedRows)
	assert.Equal(t, int64(4000), sum.Rows)
	assert.Equal(t, int64(1500), sum.Kept)
	want := [3]int64{}
	for x := 2500; x < 4000; x++ {
		want[x%3] += int64(x)
	}
	sums := sum.Groups.Column(2).(*array.Int64)
	keys := sum.Groups.Column(0).(*array.Int32)
	require.Equal(t, 3, sums.Len())
	// The rows of arg_min are the file's (those of the row groups
	// skipped counted): x is its row.
	argMin := sum.Groups.Column(sum.Groups.Schema().FieldIndices("x_arg_min")[0]).(*array.Int64)
	for i := range 3 {
		assert.Equal(t, int32(i), keys.Value(i))
		assert.Equal(t, want[i], sums.Value(i), "k = %d", i)
		assert.Equal(t, int64(2500+(i+2)%3), argMin.Value(i), "k = %d", i)
	}
}

// Damaged files grouped never crash or hang: every failure is an *Error
// naming the file.
func TestGroupCorruptInputs(t *testing.T) {
	dir := t.TempDir()
	where, err := engine.Where("i64 > 0 or word is null")
	require.NoError(t, err)
	req := engine.GroupRequest{Keys: []string{"color", "i8"}, Columns: []string{"i64", "f64", "word", "price"}, Aggs: agg.Default, Filter: where}
	for _, f := range testdatagen.Files {
		data, err := os.ReadFile(filepath.Join(testdata, f.Name))
		require.NoError(t, err)
		failures := 0
		for name, d := range corruptions(data) {
			path := filepath.Join(dir, f.Name)
			require.NoError(t, os.WriteFile(path, d, 0o644))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			err := func() error {
				srcs, err := Expand([]string{path})
				if err != nil {
					return err
				}
				ds, err := Open(ctx, srcs, Options{Mem: mem})
				if err != nil {
					return err
				}
				defer ds.Close()
				sum, err := ds.Group(ctx, newEngine(t, mem), req)
				if err == nil {
					sum.Groups.Release()
				}
				return err
			}()
			require.NoError(t, ctx.Err(), "%s %s: hung", f.Name, name)
			cancel()
			mem.AssertSize(t, 0)
			if err != nil {
				failures++
				var e *Error
				require.ErrorAs(t, err, &e, "%s %s: %v", f.Name, name, err)
				assert.Equal(t, path, e.Path)
			}
		}
		assert.Positive(t, failures, f.Name)
	}
}

// Grouping stops when its context is cancelled, holding nothing.
func TestGroupCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	srcs, err := Expand([]string{testdata})
	require.NoError(t, err)
	d, err := Open(context.Background(), srcs, Options{Mem: mem})
	require.NoError(t, err)
	defer d.Close()
	_, err = d.Group(ctx, newEngine(t, mem), engine.GroupRequest{Keys: []string{"color"}, Columns: []string{"i64"}})
	require.ErrorIs(t, err, context.Canceled)
}

// Hive partition keys group like columns, and a column a file lacks is
// null in its rows.
func TestGroupPartitionsAndMissingColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	dir := t.TempDir()
	for _, y := range []string{"year=2023", "year=2024"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, y), 0o755))
	}
	a := int64Record("x", 1, 2, 3)
	writeIPC(t, filepath.Join(dir, "year=2023", "a.arrow"), a)
	a.Release()
	xb, yb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	xb.AppendValues([]int64{10, 20}, nil)
	yb.AppendValues([]int64{5, 7}, nil)
	x, y := xb.NewArray(), yb.NewArray()
	xb.Release()
	yb.Release()
	b := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "y", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil),
		[]arrow.Array{x, y}, 2)
	x.Release()
	y.Release()
	writeIPC(t, filepath.Join(dir, "year=2024", "b.arrow"), b)
	b.Release()

	srcs, err := Expand([]string{dir})
	require.NoError(t, err)
	d, err := Open(ctx, srcs, Options{Mem: mem})
	require.NoError(t, err)
	defer d.Close()
	where, err := engine.Where("year >= 2023")
	require.NoError(t, err)
	sum, err := d.Group(ctx, newEngine(t, mem), engine.GroupRequest{Keys: []string{"year"}, Columns: []string{"x", "y"},
		Aggs: agg.Count | agg.NullCount | agg.Sum, CountRows: true, Filter: where})
	require.NoError(t, err)
	defer sum.Groups.Release()
	var out bytes.Buffer
	require.NoError(t, report.WriteGroups(&out, report.CSV, report.Groups{Record: sum.Groups}))
	assert.Equal(t, "year,count_all,x_count,x_null_count,x_sum,y_count,y_null_count,y_sum\n"+
		"2023,3,3,0,6,0,3,\n"+
		"2024,2,2,0,30,2,0,12\n", out.String())
}

// A filter whose statistics exclude every row group groups no row: no
// group, or the one group of no row without keys.
func TestGroupEverythingPruned(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	where, err := engine.Where("i64 > 9223372036854775807 or i32 < -2147483648")
	require.NoError(t, err)
	srcs, err := Expand([]string{filepath.Join(testdata, "sample.parquet")})
	require.NoError(t, err)
	d, err := Open(ctx, srcs, Options{Mem: mem})
	require.NoError(t, err)
	defer d.Close()
	for _, keys := range [][]string{{"color"}, nil} {
		sum, err := d.Group(ctx, newEngine(t, mem), engine.GroupRequest{Keys: keys, Columns: []string{"i64"}, Aggs: agg.Count | agg.Sum | agg.ArgMin, Filter: where})
		require.NoError(t, err)
		assert.Equal(t, int64(4), sum.Pruned)
		assert.Equal(t, int64(0), sum.Kept)
		if keys == nil {
			require.Len(t, sum.Results, 1)
			assert.Equal(t, int64(0), sum.Results[0].Count)
			assert.Equal(t, int64(1), sum.Groups.NumRows())
		} else {
			assert.Equal(t, int64(0), sum.Groups.NumRows())
		}
		sum.Groups.Release()
	}
}

// Grouping a Parquet file without keys gives, for its one group, what the
// ungrouped route gives, for every column of every file of the
// parquet-testing corpus that both read (the encrypted files aside): the
// grouped route decodes fixed-width leaves through the page path into rows
// (pagerows.go) and folds them per group, the ungrouped one folds the pages
// in place, so the two meet every writer's pages (dictionaries, nulls, v2
// pages, decimals, INT96) by different code. The same again with
// ArrowDecode, which groups pqarrow's arrays.
func TestGroupKeylessMatchesAggregateCorpus(t *testing.T) {
	dir := filepath.Dir(parquetTesting(t, "alltypes_plain.parquet"))
	files, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	ctx := context.Background()
	compared := 0
	for _, path := range files {
		name := filepath.Base(path)
		if strings.Contains(name, "encrypt") {
			continue
		}
		for _, arrowDecode := range []bool{false, true} {
			o := Options{ArrowDecode: arrowDecode}
			if strings.Contains(name, "int96") && !arrowDecode {
				o.Int96 = Int96Microseconds
			}
			want, wleak, werr := keylessRoute(ctx, t, path, o, false)
			got, gleak, gerr := keylessRoute(ctx, t, path, o, true)
			// (arrow-go's DELTA_* decoders leave some bytes allocated, by
			// either route: the grouped route leaves no more.)
			assert.LessOrEqual(t, gleak, wleak, "%s (arrow %v): bytes left allocated", name, arrowDecode)
			if werr != nil || gerr != nil {
				// A file one route refuses: the grouped route refuses it
				// too, or groups none of the columns the other failed on.
				if werr == nil {
					t.Errorf("%s (arrow %v): grouped: %v", name, arrowDecode, gerr)
				}
				continue
			}
			byName := map[string]engine.Result{}
			for _, r := range got.Results {
				byName[r.Name] = r
			}
			for _, w := range want.Results {
				g, ok := byName[w.Name]
				if !ok || w.Err != nil || g.Err != nil {
					continue
				}
				compared++
				assertSameColumn(t, fmt.Sprintf("%s (arrow %v): %s", name, arrowDecode, w.Name), w, g)
			}
		}
	}
	assert.Greater(t, compared, 300, "columns compared")
}

// keylessRoute aggregates every column of path that grouping takes, grouped
// without keys (grouped) or not, with options o.
// leaked is the bytes of o.Mem left allocated after it (arrow-go's DELTA_*
// decoders leave some, whichever route reads them).
func keylessRoute(ctx context.Context, t *testing.T, path string, o Options, grouped bool) (sum *Summary, leaked int, err error) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer func() { leaked = mem.CurrentAlloc() }()
	o.Mem = mem
	eng := newEngine(t, mem)
	srcs, err := Expand([]string{path})
	if err != nil {
		return nil, 0, err
	}
	ds, err := Open(ctx, srcs, o)
	if err != nil {
		return nil, 0, err
	}
	defer ds.Close()
	if !grouped {
		sel, err := ds.Select(nil)
		if err != nil {
			return nil, 0, err
		}
		sum, err := ds.Aggregate(ctx, eng, sel, AggregateOptions{})
		return sum, 0, err
	}
	gs, err := ds.Group(ctx, eng, engine.GroupRequest{Aggs: agg.Default})
	if err != nil {
		return nil, 0, err
	}
	gs.Groups.Release()
	return &Summary{Results: gs.Results}, 0, nil
}

// assertSameColumn compares two routes' results of a column: counts,
// extremes and integer sums exactly, float sums within 1e-12 relative.
func assertSameColumn(t *testing.T, what string, want, got engine.Result) {
	t.Helper()
	assert.Equal(t, want.Count, got.Count, what)
	assert.Equal(t, want.NullCount, got.NullCount, what)
	assert.Equal(t, fmt.Sprint(want.Min), fmt.Sprint(got.Min), what)
	assert.Equal(t, fmt.Sprint(want.Max), fmt.Sprint(got.Max), what)
	if ws, ok := want.Sum.(*scalar.Float64); ok && ws.Valid && !math.IsNaN(ws.Value) && !math.IsInf(ws.Value, 0) {
		assert.InDelta(t, ws.Value, got.Sum.(*scalar.Float64).Value, 1e-12*math.Max(1, math.Abs(ws.Value)), what)
	} else {
		assert.Equal(t, fmt.Sprint(want.Sum), fmt.Sprint(got.Sum), what)
	}
}

// A source's first batches, prepared on several goroutines before any is
// added (as the row groups decoded ahead of the first one are), are all
// prepared: the first to get there makes the grouper, once, and the rows
// skipped before it was made are counted once. The groups are the same
// bytes as those of a grouper fed the batches in order.
func TestGroupSinkPreparesBeforeTheFirstAdd(t *testing.T) {
	f := testdatagen.Files[0]
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	req := engine.GroupRequest{Keys: []string{"color"}, Columns: []string{"i64", "f64", "word", "day"},
		Aggs: agg.Default | agg.Ordered, CountRows: true}
	eng := newEngine(t, mem)
	var recs []arrow.Record
	for lo := 0; lo < f.Rows; lo += f.Chunk {
		recs = append(recs, testdatagen.Record(mem, f, lo, min(lo+f.Chunk, f.Rows)))
	}
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	require.Greater(t, len(recs), 2)
	const skipped = 7

	var g *engine.Grouper
	var pending int64
	sum := &GroupSummary{}
	sink := (&Dataset{}).newGroupSink(ctx, eng, req, nil, &g, &pending, sum)
	sink.skip(skipped)
	preps := make([]*engine.Prepared, len(recs))
	errs := make([]error, len(recs))
	var wg sync.WaitGroup
	for i, rec := range recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			preps[i], errs[i] = sink.prepare(rec)
		}()
	}
	wg.Wait()
	for i := range recs {
		require.NoError(t, errs[i])
		require.NotNil(t, preps[i], "batch %d was not prepared", i)
	}
	require.NotNil(t, g)
	defer g.Close()
	for i, rec := range recs {
		require.NoError(t, sink.add(rec, preps[i]))
	}
	assert.Equal(t, len(recs), sum.Batches)
	assert.Equal(t, int64(f.Rows+skipped), g.Rows())
	got, err := g.Result(mem)
	require.NoError(t, err)
	defer got.Release()

	w, err := eng.NewGrouper(testdatagen.Schema(f), req)
	require.NoError(t, err)
	defer w.Close()
	w.SkipRows(skipped)
	for _, rec := range recs {
		require.NoError(t, w.Add(ctx, rec))
	}
	want, err := w.Result(mem)
	require.NoError(t, err)
	defer want.Release()
	var wantJSON, gotJSON bytes.Buffer
	require.NoError(t, report.WriteGroups(&wantJSON, report.JSON, report.Groups{Rows: w.Rows(), Files: 1, Kept: w.Kept(), Record: want}))
	require.NoError(t, report.WriteGroups(&gotJSON, report.JSON, report.Groups{Rows: g.Rows(), Files: 1, Kept: g.Kept(), Record: got}))
	assert.Equal(t, wantJSON.String(), gotJSON.String())
}
