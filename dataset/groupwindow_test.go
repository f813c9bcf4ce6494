package dataset

import (
	"bytes"
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/budget"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/report"
)

// A row group too large to decode at once within the budget is grouped a
// window of rows at a time: the groups are those of the whole row group,
// to the last bit, with integer, string and two keys, the page path's
// leaves and pqarrow's together, with and without filters.
func TestGroupRowGroupWindows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	const rows = 160_000
	var cols []pqCol
	for _, c := range pqCols() {
		if slices.Contains([]string{"i32", "i64", "i64_low", "f64", "f32", "price", "ts_ns", "word", "point", "u64", "flag"}, c.field.Name) {
			cols = append(cols, c)
		}
	}
	rec := pqRecord(mem, cols, rows, 21)
	path := filepath.Join(t.TempDir(), "one.parquet")
	writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(1 << 20), parquet.WithDataPageSize(16 << 10),
		parquet.WithBatchSize(4096)}})
	rec.Release()
	group := func(total int64, req engine.GroupRequest) string {
		srcs, err := Expand([]string{path})
		require.NoError(t, err)
		d, err := Open(ctx, srcs, Options{Mem: mem, Budget: budget.New(total, "the test's budget")})
		require.NoError(t, err)
		defer d.Close()
		sum, err := d.Group(ctx, newEngine(t, mem), req)
		require.NoError(t, err)
		defer sum.Groups.Release()
		var out bytes.Buffer
		require.NoError(t, report.WriteGroups(&out, report.JSON, report.Groups{Rows: sum.Rows, Files: sum.Files, Kept: sum.Kept, Record: sum.Groups}))
		return out.String()
	}
	positive, err := engine.Where("i32 > 0 or f64 < 0")
	require.NoError(t, err)
	for _, keys := range raceSubset([][]string{{"i64_low"}, {"word"}, {"flag", "i64_low"}}) {
		for _, filter := range []engine.RowFilter{nil, positive} {
			req := engine.GroupRequest{Keys: keys, Columns: []string{"i32", "i64", "f64", "f32", "price", "ts_ns", "word", "point.a", "u64"},
				Aggs: agg.Default | agg.Ordered, CountRows: true, Filter: filter}
			whole := group(4<<30, req)
			windows := groupWindows.Load() + groupParts.Load()
			got := group(64<<20, req)
			assert.Greater(t, groupWindows.Load()+groupParts.Load(), windows, "keys %v: not decoded in windows or parts", keys)
			assert.Equal(t, whole, got, "keys %v, filter %v", keys, filter)
		}
	}
	// Every leaf the page path's (strings keys as dictionary indices): the
	// row group is read as parts of its rows decoded at once, within the
	// budget and beyond it.
	for _, keys := range [][]string{{"i64_low"}, {"word"}} {
		for _, filter := range []engine.RowFilter{nil, positive} {
			req := engine.GroupRequest{Keys: keys, Columns: []string{"i32", "i64", "f64", "price", "ts_ns", "point.a"},
				Aggs: agg.Default | agg.Ordered, CountRows: true, Filter: filter}
			parts := groupParts.Load()
			want := group(1<<40, req) // (its parts: the workers')
			assert.Greater(t, groupParts.Load(), parts, "keys %v: not read in parts", keys)
			for _, total := range []int64{4 << 30, 200 << 20} {
				assert.Equal(t, want, group(total, req), "keys %v, filter %v, budget %d", keys, filter, total)
			}
		}
	}
}

// The rows that a filter's page indexes keep (ranges of rows) are grouped
// the same when the row group is decoded a window at a time, ranges
// crossing the windows' edges: the same groups to the last bit, the same
// pages skipped.
func TestGroupRowGroupWindowsPageIndex(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(3, 9))
	const rows = 300_000
	_, indexed := pageIndexFile(t, r, rows, rows, 2048, false, nil)
	for i, where := range raceSubset([]string{"x >= 100000 and x < 250000", "x < 500 or x > 290000", "y = 3", "y is null", "t >= 't0065000' and t < 't0140000'"}) {
		var cols []string // (x, y, v and s: s through pqarrow, the row group in windows)
		if i%2 == 1 {
			cols = []string{"x", "y", "v"} // (the page path's all: in parts)
		}
		whole := groupFile(t, mem, indexed, where, Options{Budget: budget.New(1<<40, "the test's budget"), Workers: 1}, cols...)
		windows := groupWindows.Load() + groupParts.Load()
		got := groupFile(t, mem, indexed, where, Options{Budget: budget.New(32<<20, "the test's budget")}, cols...)
		assert.Greater(t, groupWindows.Load()+groupParts.Load(), windows, "%s: not decoded in windows or parts", where)
		assert.Equal(t, whole.Pages, got.Pages, where)
		assert.Positive(t, got.Pages.Pages, "%s: no page skipped", where)
		assert.True(t, array.RecordEqual(whole.Groups, got.Groups), "%s", where)
		assert.Equal(t, whole.Kept, got.Kept, where)
		whole.Groups.Release()
		got.Groups.Release()
	}
}

// pageRows holding a window of a chunk's rows holds what the rows of the
// whole chunk hold there, whatever the windows of values placed across
// its edges: values at their rows or gathered from a dictionary, with and
// without nulls, and null rows.
func TestPageRowsWindow(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	l := &pageLeaf{typ: arrow.PrimitiveTypes.Int64, kind: column.Int64}
	dict := column.View{Type: l.typ, Kind: l.kind, Width: 8, Len: 5, Values: arrow.Int64Traits.CastToBytes([]int64{10, 20, 30, 40, 50})}
	for trial := range 200 {
		const chunk = 1000
		lo := r.Int64N(chunk)
		hi := lo + r.Int64N(chunk-lo+1)
		whole, part := newPageRows(l, 0, chunk, chunk, mem), newPageRows(l, lo, hi, chunk, mem)
		for at := int64(0); at < chunk; {
			m := min(int64(1+r.IntN(120)), chunk-at)
			switch r.IntN(3) {
			case 0:
				require.NoError(t, whole.nullRows(at, m))
				require.NoError(t, part.nullRows(at, m))
			default:
				var valid []byte
				k := int(m)
				if r.IntN(2) == 0 {
					valid = make([]byte, (m+7)/8)
					k = 0
					for i := range int(m) {
						if r.IntN(4) != 0 {
							valid[i/8] |= 1 << (i % 8)
							k++
						}
					}
				}
				v := column.View{Type: l.typ, Kind: l.kind, Width: 8, Len: k}
				if r.IntN(2) == 0 {
					idx := make([]int32, k)
					for i := range idx {
						idx[i] = int32(r.IntN(5))
					}
					v.Values, v.IndexKind, v.Dict = arrow.Int32Traits.CastToBytes(idx), column.Int32, &dict
				} else {
					vals := make([]int64, k)
					for i := range vals {
						vals[i] = r.Int64()
					}
					v.Values = arrow.Int64Traits.CastToBytes(vals)
				}
				require.NoError(t, whole.place(&v, valid, at, int(m)))
				require.NoError(t, part.place(&v, valid, at, int(m)))
			}
			at += m
		}
		assertWindowRows(t, whole, part, lo, hi, trial)
	}
}

// The dictionary indices of a key (pageLeaf.dictKey) decoded in place
// (indicesAt) where a window holds all of a page window's rows, and placed
// otherwise, are the whole chunk's there.
func TestPageRowsWindowIndices(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	l := &pageLeaf{typ: arrow.PrimitiveTypes.Int64, kind: column.Int64, dictKey: true}
	entries := arrow.Int64Traits.CastToBytes([]int64{10, 20, 30, 40, 50})
	inPlace := 0
	for trial := range 200 {
		const chunk = 1000
		lo := r.Int64N(chunk)
		hi := lo + 1 + r.Int64N(chunk-lo)
		whole, part := newPageRows(l, 0, chunk, chunk, mem), newPageRows(l, lo, hi, chunk, mem)
		whole.setFixedDict(entries, 5)
		part.setFixedDict(entries, 5)
		for at := int64(0); at < chunk; {
			m := min(int64(1+r.IntN(120)), chunk-at)
			idx := make([]int32, m)
			for i := range idx {
				idx[i] = int32(r.IntN(5))
			}
			for _, p := range []*pageRows{whole, part} {
				v := column.View{Type: l.typ, Kind: column.Int32, Width: 4, Len: int(m), Values: arrow.Int32Traits.CastToBytes(idx)}
				if dst := p.indicesAt(l, at, int(m), int(m)); dst != nil {
					copy(dst, v.Values)
					v.Values = dst
					if p == part {
						inPlace++
					}
				}
				require.NoError(t, p.place(&v, nil, at, int(m)))
			}
			at += m
		}
		assertWindowRows(t, whole, part, lo, hi, trial)
	}
	assert.Positive(t, inPlace)
}

// assertWindowRows checks that part holds rows [lo, hi) of whole, and
// releases both.
func assertWindowRows(t *testing.T, whole, part *pageRows, lo, hi int64, trial int) {
	t.Helper()
	want, got := whole.array(), part.array()
	defer want.Release()
	defer got.Release()
	sl := array.NewSlice(want, lo, hi)
	defer sl.Release()
	assert.True(t, array.Equal(sl, got), "trial %d: rows [%d, %d)", trial, lo, hi)
}

// A file of small row groups groups within a small budget: what a row
// group's decoding holds (groupCost) is bounded by its rows, the batches of
// the leaves pqarrow decodes and the page path's windows no larger than the
// row group (a file of 180 KB once needed 104 MiB of --memory to group).
func TestGroupSmallRowGroupsSmallBudget(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	rec := pqRecord(mem, pqCols(), 30_000, 5)
	path := filepath.Join(t.TempDir(), "small.parquet")
	writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(5000)}})
	rec.Release()
	for _, req := range []engine.GroupRequest{
		{Keys: []string{"i64_low"}, Columns: []string{"i32", "f64", "price"}, Aggs: agg.Default, CountRows: true}, // (the page path's all)
		{Keys: []string{"word"}, Columns: []string{"i32", "word", "point.a", "flag"}, Aggs: agg.Default | agg.Ordered, CountRows: true},
	} {
		var outs []string
		for _, total := range []int64{1 << 40, 4 << 20} {
			srcs, err := Expand([]string{path})
			require.NoError(t, err)
			d, err := Open(ctx, srcs, Options{Mem: mem, Budget: budget.New(total, "the test's budget")})
			require.NoError(t, err)
			sum, err := d.Group(ctx, newEngine(t, mem), req)
			require.NoError(t, err, "keys %v, a budget of %d", req.Keys, total)
			var out bytes.Buffer
			require.NoError(t, report.WriteGroups(&out, report.JSON, report.Groups{Rows: sum.Rows, Files: sum.Files, Kept: sum.Kept, Record: sum.Groups}))
			sum.Groups.Release()
			require.NoError(t, d.Close())
			outs = append(outs, out.String())
		}
		assert.Equal(t, outs[0], outs[1], "keys %v", req.Keys)
	}
}

// Grouping reports its progress (Options.Progress) as it goes, not only
// at its end: a Parquet file of several row groups, the same rows in one
// row group (read as parts of its rows by the workers), an IPC file of
// several batches and of one; the reports add up to the file's bytes.
func TestGroupProgress(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	rec := pqRecord(mem, pqCols()[:12], 40_000, 5)
	dir := t.TempDir()
	files := map[string]string{"row groups": filepath.Join(dir, "rg.parquet"), "one row group": filepath.Join(dir, "one.parquet"),
		"batches": filepath.Join(dir, "b.arrow"), "one batch": filepath.Join(dir, "one.arrow")}
	writePQ(t, files["row groups"], rec, pqConfig{props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(5000)}})
	writePQ(t, files["one row group"], rec, pqConfig{props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(1 << 20)}})
	writeIPCSlices(t, files["batches"], true, rec, 5000)
	writeIPC(t, files["one batch"], rec)
	rec.Release()
	was, wasWindow := ipcSliceBytes, minGroupWindow
	ipcSliceBytes, minGroupWindow = 16<<10, 4096 // (parts of the row group of 40,000 rows)
	t.Cleanup(func() { ipcSliceBytes, minGroupWindow = was, wasWindow })
	req := engine.GroupRequest{Keys: []string{"i64_low"}, Columns: []string{"i32", "f64"}, Aggs: agg.Default}
	for name, path := range files {
		var reports []int64
		srcs, err := Expand([]string{path})
		require.NoError(t, err)
		d, err := Open(ctx, srcs, Options{Mem: mem, Budget: budget.New(1<<40, "the test's budget"), Workers: 4,
			Progress: func(n int64) { reports = append(reports, n) }})
		require.NoError(t, err)
		sum, err := d.Group(ctx, newEngine(t, mem), req)
		require.NoError(t, err, name)
		sum.Groups.Release()
		require.NoError(t, d.Close())
		var added int64
		for _, n := range reports {
			assert.Positive(t, n, name)
			added += n
		}
		assert.Equal(t, srcs[0].Size, added, "%s: the file's bytes", name)
		assert.Greater(t, len(reports), 2, "%s: reported as it goes", name)
	}
}
