package dataset

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
)

// encodeColumnIndex is ci as a writer stores it.
func encodeColumnIndex(ci *chunkIndex) []byte {
	var w compactWriter
	w.begin(0)
	w.field(1, ctList)
	w.listHeader(len(ci.nullPages), ctTrue)
	for _, null := range ci.nullPages {
		b := byte(ctFalse)
		if null {
			b = ctTrue
		}
		w.b = append(w.b, b)
	}
	for _, f := range []struct {
		id int16
		vs [][]byte
	}{{2, ci.mins}, {3, ci.maxs}} {
		w.field(f.id, ctList)
		w.listHeader(len(f.vs), ctBinary)
		for _, v := range f.vs {
			w.varint(uint64(len(v)))
			w.b = append(w.b, v...)
		}
	}
	w.i32(4, 0) // boundary_order UNORDERED
	if ci.nullCounts != nil {
		w.field(5, ctList)
		w.listHeader(len(ci.nullCounts), ctI64)
		for _, n := range ci.nullCounts {
			w.varint(uint64(n<<1 ^ n>>63))
		}
	}
	w.end()
	return w.b
}

// withColumnIndexes returns the Parquet file data with the column indexes
// index(rg, col) (nil: none) written after its pages, and its footer's
// column chunks pointing at them.
func withColumnIndexes(t testing.TB, data []byte, index func(rg, col int) []byte) []byte {
	t.Helper()
	n := len(data)
	flen := int(binary.LittleEndian.Uint32(data[n-8:]))
	footer := data[n-8-flen : n-8]
	type at struct{ pos, rg, col, last int }
	var ats []at // the stop bytes of the column chunks
	c := &compact{b: footer}
	c.fields(func(id int16, typ byte) {
		if id != 4 || typ != ctList {
			c.skip(typ, false, 1)
			return
		}
		rgs, _ := c.listHeader()
		for rg := range int(rgs) {
			c.fields(func(id int16, typ byte) {
				if id != 1 || typ != ctList {
					c.skip(typ, false, 2)
					return
				}
				cols, _ := c.listHeader()
				for col := range int(cols) {
					last := 0
					c.fields(func(id int16, typ byte) {
						last = int(id)
						c.skip(typ, false, 3)
					})
					ats = append(ats, at{c.pos - 1, rg, col, last})
				}
			})
		}
	})
	require.NoError(t, c.err)
	out := append([]byte(nil), data[:n-8-flen]...)
	var nf []byte
	prev := 0
	for _, a := range ats {
		nf = append(nf, footer[prev:a.pos]...)
		prev = a.pos
		ci := index(a.rg, a.col)
		if ci == nil {
			continue
		}
		require.Less(t, a.last, 6, "a column chunk's fields up to %d", a.last)
		off := len(out)
		out = append(out, ci...)
		w := compactWriter{last: []int16{int16(a.last)}}
		w.i64(6, int64(off))
		w.i32(7, int32(len(ci)))
		nf = append(nf, w.b...)
	}
	nf = append(nf, footer[prev:]...)
	out = append(out, nf...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(nf)))
	return append(out, "PAR1"...)
}

// indexOf is the column index of the pages (from rows starts) of an int32,
// int64, float64 or string column's rows [lo, lo+rows) of a, as writers
// make it (the extremes of floats without NaN).
func indexOf(a arrow.Array, lo, rows int64, starts []int64) *chunkIndex {
	ci := &chunkIndex{nullCounts: []int64{}}
	// less orders rows i and j; enc is row i's value plain-encoded (byte
	// arrays without their length); skip leaves NaN out.
	var less func(i, j int) bool
	var enc func(i int) []byte
	skip := func(int) bool { return false }
	switch a := a.(type) {
	case *array.Int64:
		less = func(i, j int) bool { return a.Value(i) < a.Value(j) }
		enc = func(i int) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(a.Value(i))) }
	case *array.Int32:
		less = func(i, j int) bool { return a.Value(i) < a.Value(j) }
		enc = func(i int) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(a.Value(i))) }
	case *array.Float64:
		less = func(i, j int) bool { return a.Value(i) < a.Value(j) }
		enc = func(i int) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(a.Value(i))) }
		skip = func(i int) bool { return math.IsNaN(a.Value(i)) }
	case *array.String:
		less = func(i, j int) bool { return a.Value(i) < a.Value(j) }
		enc = func(i int) []byte { return []byte(a.Value(i)) }
	}
	for p, s := range starts {
		e := rows
		if p+1 < len(starts) {
			e = starts[p+1]
		}
		var nulls int64
		mn, mx := -1, -1
		for i := int(lo + s); i < int(lo+e); i++ {
			switch {
			case a.IsNull(i):
				nulls++
			case skip(i):
			case mn < 0:
				mn, mx = i, i
			case less(i, mn):
				mn = i
			case less(mx, i):
				mx = i
			}
		}
		ci.nullPages = append(ci.nullPages, mn < 0 && nulls == e-s)
		if mn >= 0 {
			ci.mins, ci.maxs = append(ci.mins, enc(mn)), append(ci.maxs, enc(mx))
		} else {
			ci.mins, ci.maxs = append(ci.mins, []byte{}), append(ci.maxs, []byte{})
		}
		ci.nullCounts = append(ci.nullCounts, nulls)
	}
	return ci
}

// indexedColumns are the columns of pageIndexFile with column indexes: x,
// y, f and t.
var indexedColumns = []int{0, 1, 5, 6}

// pageIndexFile writes rows rows in row groups of rgRows and pages of
// about pageBytes: x (int64, ascending, nulls among them), y (int32, runs of
// 150 rows of 0 to 7 in turn, nulls in rows 10, rows/2 to rows/2+199 and
// rows-445), a key k, values v and s (a string, which pqarrow decodes), f
// (float64, ascending, NaN and nulls among them) and t (strings, ascending,
// nulls among them); pages v2 when
// v2. It returns the
// file's path, and that of the same file with column indexes of x, y, f and
// t (mend changes them first, when not nil).
func pageIndexFile(t testing.TB, r *rand.Rand, rows, rgRows, pageBytes int, v2 bool, mend func(rg int, name string, ci *chunkIndex)) (plain, indexed string) {
	t.Helper()
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "y", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "k", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "t", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	x, y := rb.Field(0).(*array.Int64Builder), rb.Field(1).(*array.Int32Builder)
	k, v, s := rb.Field(2).(*array.Int32Builder), rb.Field(3).(*array.Float64Builder), rb.Field(4).(*array.StringBuilder)
	fl, ts := rb.Field(5).(*array.Float64Builder), rb.Field(6).(*array.StringBuilder)
	yv := int32(0)
	for i := range rows {
		if r.IntN(17) == 0 {
			x.AppendNull()
		} else {
			x.Append(int64(i) - 1000)
		}
		if i%150 == 0 {
			yv = int32(i / 150 % 8) // (the same runs whatever the seed: the tests count the pages they skip)
		}
		if i >= rows/2 && i < rows/2+200 || i == 10 || i == rows-445 {
			y.AppendNull()
		} else {
			y.Append(yv)
		}
		k.Append(int32(r.IntN(5)))
		v.Append(r.Float64()*100 - 50)
		if r.IntN(9) == 0 {
			s.AppendNull()
		} else {
			s.Append(fmt.Sprintf("s%d", r.IntN(30)))
		}
		switch {
		case i%97 == 5:
			fl.Append(math.NaN())
		case i%31 == 0:
			fl.AppendNull()
		default:
			fl.Append(float64(i) / 10)
		}
		if i%23 == 0 {
			ts.AppendNull()
		} else {
			ts.Append(fmt.Sprintf("t%07d", i))
		}
	}
	rec := rb.NewRecord()
	defer rec.Release()
	version := parquet.DataPageV1
	if v2 {
		version = parquet.DataPageV2
	}
	dir := t.TempDir()
	plain = filepath.Join(dir, "plain.parquet")
	f, err := os.Create(plain)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(int64(rgRows)),
		parquet.WithDataPageSize(int64(pageBytes)), parquet.WithBatchSize(int64(min(pageBytes/8, 1024))), parquet.WithDataPageVersion(version),
		parquet.WithDictionaryFor("y", true), parquet.WithDictionaryDefault(false)), pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	data, err := os.ReadFile(plain)
	require.NoError(t, err)
	walks := map[int][]walkedChunk{}
	for _, col := range indexedColumns {
		walks[col] = walkChunks(t, plain, col)
	}
	data = withColumnIndexes(t, data, func(rg, col int) []byte {
		if !slices.Contains(indexedColumns, col) {
			return nil
		}
		ci := indexOf(rec.Column(col), int64(rg*rgRows), int64(min(rgRows, rows-rg*rgRows)), walks[col][rg].starts)
		if mend != nil {
			mend(rg, schema.Field(col).Name, ci)
		}
		return encodeColumnIndex(ci)
	})
	indexed = filepath.Join(dir, "indexed.parquet")
	require.NoError(t, os.WriteFile(indexed, data, 0o644))
	return plain, indexed
}

// groupFile groups the file at path by k, with filter where: the columns
// cols (none: x, y, v and s).
func groupFile(t testing.TB, mem memory.Allocator, path, where string, o Options, cols ...string) *GroupSummary {
	t.Helper()
	ctx := context.Background()
	f, err := engine.Where(where)
	require.NoError(t, err)
	srcs, err := Expand([]string{path})
	require.NoError(t, err)
	o.Mem = mem
	d, err := Open(ctx, srcs, o)
	require.NoError(t, err)
	defer d.Close()
	if cols == nil {
		cols = []string{"x", "y", "v", "s"}
	}
	sum, err := d.Group(ctx, newEngine(t, mem), engine.GroupRequest{Keys: []string{"k"}, Columns: cols,
		Aggs: agg.Default | agg.Ordered, CountRows: true, Filter: f})
	require.NoError(t, err)
	return sum
}

// groupRows groups the rows of the Parquet file at path, read by pqarrow,
// in memory, as req asks, and returns the groups and the rows kept.
func groupRows(t *testing.T, mem memory.Allocator, path string, req engine.GroupRequest) (arrow.Record, int64) {
	t.Helper()
	tbl := readTable(t, mem, path)
	defer tbl.Release()
	g, err := newEngine(t, mem).NewGrouper(tbl.Schema(), req)
	require.NoError(t, err)
	defer g.Close()
	tr := array.NewTableReader(tbl, 777)
	defer tr.Release()
	for tr.Next() {
		require.NoError(t, g.Add(context.Background(), tr.Record()))
	}
	rec, err := g.Result(mem)
	require.NoError(t, err)
	return rec, g.Kept()
}

var pageIndexFilters = []string{
	"x < 500", "x >= 2100 and x < 2300", "y = 3", "y is null", "x < 100 or y = 6", "not (x > 200)",
	"y in (1, 5) and x > 3000", "x is not null and x < 50", "x > 100000", "y >= 0 or x < 0",
	"f < 50", "f >= 210 and f < 230", "f != 3", "t >= 't0002100' and t < 't0002300'", "t in ('t0000007', 't0005999')",
	"not (t > 't0000300') and f < 100", "t is null and x < 1000",
}

// A filter skips the rows whose pages' column indexes exclude it, and the
// groups are those of the same file without column indexes, to the last
// bit: data pages v1 and v2, the page path and pqarrow (Options.
// ArrowDecode), filters on one column and on two (AND, OR, NOT, IN, IS
// NULL), pages of nulls only.
func TestGroupPageIndex(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for _, v2 := range []bool{false, true} {
		plain, indexed := pageIndexFile(t, r, 6000, 2000, 256, v2, nil)
		for _, arrowDecode := range []bool{false, true} {
			for _, where := range pageIndexFilters {
				t.Run(fmt.Sprintf("v2=%v/arrow=%v/%s", v2, arrowDecode, where), func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					o := Options{ArrowDecode: arrowDecode}
					want := groupFile(t, mem, plain, where, o)
					defer want.Groups.Release()
					got := groupFile(t, mem, indexed, where, o)
					defer got.Groups.Release()
					assert.True(t, array.RecordEqual(want.Groups, got.Groups), "want\n%v\ngot\n%v", want.Groups, got.Groups)
					if !arrowDecode {
						// (the statistics of row groups prune the file
						// without column indexes too)
						f, err := engine.Where(where)
						require.NoError(t, err)
						rows, kept := groupRows(t, mem, plain, engine.GroupRequest{Keys: []string{"k"}, Columns: []string{"x", "y", "v", "s"},
							Aggs: agg.Default | agg.Ordered, CountRows: true, Filter: f})
						assert.True(t, array.RecordEqual(rows, got.Groups), "rows\n%v\ngot\n%v", rows, got.Groups)
						assert.Equal(t, kept, got.Kept)
						rows.Release()
					}
					assert.Equal(t, want.Kept, got.Kept)
					assert.Zero(t, want.Pages.RowGroups, "no column index")
					assert.Empty(t, got.Pages.NotUsed)
					assert.Equal(t, 3-int(got.Pruned), got.Pages.RowGroups)
					switch where {
					case "x < 500":
						// rows 0-1499 may hold x < 500: the other row
						// groups are pruned by their statistics.
						assert.Equal(t, int64(4000), got.PrunedRows)
						assert.Greater(t, got.Pages.Rows, int64(400))
						assert.LessOrEqual(t, got.Pages.Rows, int64(500))
					case "x > 100000":
						assert.Equal(t, int64(6000), got.PrunedRows)
					case "y >= 0 or x < 0", "f != 3":
						assert.Zero(t, got.Pages.Rows)
					default:
						assert.Positive(t, got.Pages.Rows)
						assert.Positive(t, got.Pages.Pages)
					}
				})
			}
		}
	}
}

// whyFilter reads the pages of x and y in every row group.
const whyFilter = "x >= 1100 and x < 1300 or y is null"

// A column index that does not describe its chunk's pages (too few
// entries, values not of the column's type, extremes the wrong way round)
// or cannot be read is not used, and says why; the groups do not change.
func TestGroupPageIndexNotUsed(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for name, c := range map[string]struct {
		mend func(rg int, name string, ci *chunkIndex)
		why  string
	}{
		"too few pages": {func(rg int, name string, ci *chunkIndex) {
			if rg == 1 && name == "x" {
				ci.nullPages, ci.mins, ci.maxs, ci.nullCounts = ci.nullPages[1:], ci.mins[1:], ci.maxs[1:], ci.nullCounts[1:]
			}
		}, `row group 1: column "x": the column index has`},
		"not values": {func(rg int, name string, ci *chunkIndex) {
			if name == "x" {
				for p := range ci.mins {
					ci.mins[p], ci.maxs[p] = []byte{1, 2, 3}, []byte{4, 5, 6}
				}
			}
		}, ""},
		"inconsistent": {func(rg int, name string, ci *chunkIndex) {
			if rg == 2 && name == "y" {
				ci.nullCounts = ci.nullCounts[:3]
			}
		}, `row group 2: column "y": corrupt column index: `},
	} {
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			plain, indexed := pageIndexFile(t, r, 6000, 2000, 256, false, c.mend)
			for _, where := range append(pageIndexFilters, whyFilter) {
				want := groupFile(t, mem, plain, where, Options{})
				got := groupFile(t, mem, indexed, where, Options{})
				assert.True(t, array.RecordEqual(want.Groups, got.Groups), where)
				if c.why != "" && where == whyFilter {
					assert.Contains(t, got.Pages.NotUsed, c.why, where)
				}
				want.Groups.Release()
				got.Groups.Release()
			}
		})
	}
}

// The column indexes of the Parquet project's files with page indexes skip
// rows, and the groups are those of their rows read by pqarrow and grouped
// in memory.
func TestGroupPageIndexCorpus(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"alltypes_tiny_pages.parquet", "alltypes_tiny_pages_plain.parquet"} {
		path := filepath.Join(corpusDir, "parquet-testing", "data", name)
		for _, where := range []string{"id < 100", "id >= 7000 and tinyint_col < 3", "id > 100 and id < 200 or bigint_col = 0", "not (id < 7000)"} {
			t.Run(name+"/"+where, func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				f, err := engine.Where(where)
				require.NoError(t, err)
				req := engine.GroupRequest{Keys: []string{"month"}, Columns: []string{"id", "int_col", "bigint_col", "double_col", "string_col"},
					Aggs: agg.Default | agg.Ordered, CountRows: true, Filter: f}
				srcs, err := Expand([]string{path})
				require.NoError(t, err, "the corpus is checked out beside the repository")
				d, err := Open(ctx, srcs, Options{Mem: mem})
				require.NoError(t, err)
				defer d.Close()
				sum, err := d.Group(ctx, newEngine(t, mem), req)
				require.NoError(t, err)
				defer sum.Groups.Release()
				assert.Positive(t, sum.Pages.Rows)
				assert.Empty(t, sum.Pages.NotUsed)

				want, kept := groupRows(t, mem, path, req)
				defer want.Release()
				assert.True(t, array.RecordEqual(want, sum.Groups), "want\n%v\ngot\n%v", want, sum.Groups)
				assert.Equal(t, kept, sum.Kept)
			})
		}
	}
}

// The rows keptRanges keeps are those a row at a time keeps: a row is
// kept when test keeps the states of the pages that hold it.
func TestKeptRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		rows := int64(r.IntN(60))
		cols := make([]pageStates, 1+r.IntN(3))
		for k := range cols {
			if r.IntN(4) == 0 {
				continue // (no index)
			}
			cols[k].starts = []int64{0}
			for at := int64(0); rows > 0; {
				at += 1 + int64(r.IntN(12))
				if at >= rows {
					break
				}
				cols[k].starts = append(cols[k].starts, at)
			}
			for range cols[k].starts {
				var st *agg.State
				if r.IntN(5) > 0 {
					s := agg.Nulls(column.FamilySigned, int64(r.IntN(3))) // (Count: whether the page keeps)
					st = &s
				}
				cols[k].states = append(cols[k].states, st)
			}
		}
		// test keeps unless a column's state says no: a page keeps
		// when its null count is not 1 (the states are only tokens).
		and := r.IntN(2) == 0
		test := func(ptrs []*agg.State) bool {
			keep := and
			for _, p := range ptrs {
				m := p == nil || p.NullCount != 1
				if and {
					keep = keep && m
				} else {
					keep = keep || m
				}
			}
			return keep
		}
		keep, skipped := keptRanges(rows, cols, test)
		want := []bool{}
		for row := range rows {
			ptrs := make([]*agg.State, len(cols))
			for k, c := range cols {
				for p, s := range c.starts {
					if s <= row {
						ptrs[k] = c.states[p]
					}
				}
			}
			want = append(want, test(ptrs))
		}
		got := make([]bool, rows)
		if keep == nil {
			for i := range got {
				got[i] = true
			}
		}
		last := int64(-1)
		for _, kr := range keep {
			require.Greater(t, kr.lo, last, "ranges in order and apart")
			require.Less(t, kr.lo, kr.hi)
			for i := kr.lo; i < kr.hi; i++ {
				got[i] = true
			}
			last = kr.hi
		}
		require.Equal(t, want, got)
		wantSkipped := 0
		if keep != nil {
			for _, c := range cols {
				for p, s := range c.starts {
					e := rows
					if p+1 < len(c.starts) {
						e = c.starts[p+1]
					}
					any := false
					for i := s; i < e; i++ {
						any = any || got[i]
					}
					if e > s && !any {
						wantSkipped++
					}
				}
			}
		}
		require.Equal(t, wantSkipped, skipped)
	}
}

// A column index survives the round trip through its encoding; a list
// longer than the chunk's pages, and every cut of it, are errors, not
// panics.
func TestParseColumnIndex(t *testing.T) {
	ci := &chunkIndex{nullPages: []bool{false, true, false}, mins: [][]byte{{1}, {}, {3, 4}}, maxs: [][]byte{{2}, {}, {5, 6}}, nullCounts: []int64{0, 9, 2}}
	b := encodeColumnIndex(ci)
	got, err := parseColumnIndex(b, 3)
	require.NoError(t, err)
	assert.Equal(t, ci, got)
	_, err = parseColumnIndex(b, 2)
	assert.ErrorContains(t, err, "a list of 3 pages in the column index of a column chunk of 2")
	ci.nullCounts = nil
	got, err = parseColumnIndex(encodeColumnIndex(ci), 3)
	require.NoError(t, err)
	assert.Equal(t, ci, got)
	for n := range len(b) {
		_, err := parseColumnIndex(b[:n], 3)
		assert.Error(t, err, "cut at %d", n)
	}
}

// FuzzColumnIndex: any bytes parse to a column index or an error.
func FuzzColumnIndex(f *testing.F) {
	f.Add(encodeColumnIndex(&chunkIndex{nullPages: []bool{false, true}, mins: [][]byte{{1, 0, 0, 0}, {}}, maxs: [][]byte{{9, 0, 0, 0}, {}}, nullCounts: []int64{0, 3}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		ci, err := parseColumnIndex(b, 1000)
		if err == nil {
			require.LessOrEqual(t, len(ci.nullPages), 1000)
			require.Len(t, ci.mins, len(ci.nullPages))
			require.Len(t, ci.maxs, len(ci.nullPages))
		}
	})
}

// readTable reads the Parquet file at path through pqarrow.
func readTable(t *testing.T, mem memory.Allocator, path string) arrow.Table {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, mem)
	require.NoError(t, err)
	tbl, err := fr.ReadTable(context.Background())
	require.NoError(t, err)
	return tbl
}

// BenchmarkGroupPageIndex groups 4M rows (row groups of 1M, pages of about
// 64 KiB) with a filter that keeps 1% of them, a run of x (ascending) in
// one row group: the file without column indexes, and with them; columns
// the page path decodes (numbers), and a string too (which pqarrow
// decodes, every row of the row group).
func BenchmarkGroupPageIndex(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	plain, indexed := pageIndexFile(b, r, 4_000_000, 1_000_000, 64<<10, false, nil)
	for _, cols := range [][]string{{"x", "y", "v"}, {"x", "y", "v", "s"}} {
		for _, c := range []struct{ name, path string }{{"plain", plain}, {"indexed", indexed}} {
			b.Run(fmt.Sprintf("%s/%d-columns", c.name, len(cols)), func(b *testing.B) {
				for b.Loop() {
					sum := groupFile(b, memory.DefaultAllocator, c.path, "x >= 1500000 and x < 1540000", Options{}, cols...)
					sum.Groups.Release()
				}
			})
		}
	}
}

// The bounds of floats and byte arrays prune, but NaN bounds, bounds the
// wrong way round and values of another width do not (the states are
// unknown).
func TestPruneBounds(t *testing.T) {
	plain, _ := pageIndexFile(t, rand.New(rand.NewPCG(9, 9)), 600, 600, 256, false, nil)
	srcs, err := Expand([]string{plain})
	require.NoError(t, err)
	d, err := Open(context.Background(), srcs, Options{})
	require.NoError(t, err)
	defer d.Close()
	md := d.files[0].parquet.meta
	f64 := func(v float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)) }
	fl, err := pruneLeafOf(md, 5, arrow.PrimitiveTypes.Float64)
	require.NoError(t, err)
	require.True(t, fl.bounds)
	st, err := fl.extremes(md, 10, 2, true, f64(-1.5), f64(7))
	require.NoError(t, err)
	assert.Equal(t, int64(8), st.Count)
	assert.Equal(t, -1.5, math.Float64frombits(st.Min[0]))
	assert.Equal(t, 7.0, math.Float64frombits(st.Max[0]))
	for _, c := range [][2][]byte{{f64(math.NaN()), f64(1)}, {f64(0), f64(math.NaN())}, {f64(2), f64(1)}, {f64(1)[:4], f64(2)[:4]}} {
		_, err := fl.extremes(md, 10, 0, true, c[0], c[1])
		assert.Error(t, err, "%x %x", c[0], c[1])
	}
	tl, err := pruneLeafOf(md, 6, arrow.BinaryTypes.String)
	require.NoError(t, err)
	st, err = tl.extremes(md, 10, 0, true, []byte("ab"), []byte("b"))
	require.NoError(t, err)
	assert.Equal(t, []byte("ab"), st.BMin)
	assert.Equal(t, []byte("b"), st.BMax)
	_, err = tl.extremes(md, 10, 0, true, []byte("b"), []byte("ab"))
	assert.Error(t, err)
	_, err = pruneLeafOf(md, 6, arrow.PrimitiveTypes.Float64)
	assert.Error(t, err, "a byte array read as float64")
	sl, err := pruneLeafOf(md, 0, arrow.PrimitiveTypes.Int64)
	require.NoError(t, err)
	assert.False(t, sl.bounds, "integers: exact statistics")
}
