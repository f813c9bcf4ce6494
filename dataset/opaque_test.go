package dataset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

// opaqueColumn is a column of the files of the tests below: row i of it is
// the JSON cell(i), "null" for a null. A struct column lists its fields,
// whose cells are inside the struct's (a null struct makes every field
// null).
type opaqueColumn struct {
	name   string
	dt     arrow.DataType
	cell   func(i int) string
	fields []opaqueColumn
	// null says which rows are null where a cell "null" does not (a
	// union's: the child value selected is null).
	null func(i int) bool
}

func structColumn(name string, null func(i int) bool, fields ...opaqueColumn) opaqueColumn {
	var fs []arrow.Field
	for _, f := range fields {
		fs = append(fs, arrow.Field{Name: f.name, Type: f.dt, Nullable: true})
	}
	return opaqueColumn{name: name, dt: arrow.StructOf(fs...), fields: fields, cell: func(i int) string {
		if null(i) {
			return "null"
		}
		parts := make([]string, len(fields))
		for k, f := range fields {
			parts[k] = fmt.Sprintf("%q: %s", f.name, f.cell(i))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}}
}

// pick is a cell function: "null" where null says, else value(i).
func pick(null func(i int) bool, value func(i int) string) func(i int) string {
	return func(i int) string {
		if null(i) {
			return "null"
		}
		return value(i)
	}
}

func every(k, r int) func(i int) bool { return func(i int) bool { return i%k == r } }

func always(s string) func(int) string { return func(int) string { return s } }

// parquetColumns are columns of types only counted that pqarrow writes
// (not fixed-size lists with null lists, which it refuses).
func parquetColumns() []opaqueColumn {
	list := arrow.ListOf(arrow.PrimitiveTypes.Int32)
	return []opaqueColumn{
		{name: "l", dt: list, cell: func(i int) string {
			switch i % 5 {
			case 0:
				return "null"
			case 1:
				return "[]"
			case 2:
				return "[null]"
			}
			return fmt.Sprintf("[%d, %d]", i, i+1)
		}},
		structColumn("s", every(6, 0),
			opaqueColumn{name: "sl", dt: arrow.ListOf(arrow.BinaryTypes.String), cell: pick(every(4, 0), always(`["x"]`))},
			opaqueColumn{name: "sm", dt: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32),
				cell: pick(every(3, 0), func(i int) string { return fmt.Sprintf(`[{"key": "k", "value": %d}]`, i) })},
			opaqueColumn{name: "sf", dt: arrow.FixedWidthTypes.Float16, cell: pick(every(2, 0), always("1.5"))}),
		{name: "ls", dt: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "b", Type: list, Nullable: true})), cell: func(i int) string {
			switch i % 7 {
			case 0:
				return "null"
			case 1:
				return "[]"
			}
			return fmt.Sprintf(`[{"a": %d, "b": null}, {"a": null, "b": []}]`, i)
		}},
		{name: "m", dt: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), cell: func(i int) string {
			switch i % 4 {
			case 0:
				return "null"
			case 1:
				return "[]"
			}
			return `[{"key": "a", "value": null}, {"key": "b", "value": 2}]`
		}},
		{name: "f16", dt: arrow.FixedWidthTypes.Float16, cell: pick(every(3, 0), always("0.5"))},
		{name: "d256", dt: &arrow.Decimal256Type{Precision: 40, Scale: 2}, cell: pick(every(4, 2), always(`"12.50"`))},
		{name: "fsb", dt: &arrow.FixedSizeBinaryType{ByteWidth: 3}, cell: pick(every(5, 3), always(`"AAEC"`))},
		{name: "fsl", dt: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), cell: func(i int) string { return fmt.Sprintf("[%d, null]", i) }},
		{name: "n", dt: arrow.Null, cell: always("null")},
	}
}

// ipcColumns are those and the types that only IPC carries (some of which
// the in-place decoder does not lay out: views, run-end encoded).
func ipcColumns(inPlace bool) []opaqueColumn {
	cols := append(parquetColumns(),
		opaqueColumn{name: "ll", dt: arrow.LargeListOf(arrow.PrimitiveTypes.Int32), cell: pick(every(5, 0), func(i int) string { return fmt.Sprintf("[%d]", i) })},
		opaqueColumn{name: "fsl_nulls", dt: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), cell: pick(every(3, 0), always("[1, null]"))},
		opaqueColumn{name: "iv", dt: arrow.FixedWidthTypes.MonthDayNanoInterval, cell: pick(every(2, 0), always(`{"months": 1, "days": 2, "nanoseconds": 3}`))},
	)
	cols = append(cols, unionColumns()...)
	if inPlace {
		return cols
	}
	cols = append(cols,
		opaqueColumn{name: "lv", dt: arrow.ListViewOf(arrow.PrimitiveTypes.Int32), cell: pick(every(5, 0), func(i int) string { return fmt.Sprintf("[%d]", i) })},
		opaqueColumn{name: "sv", dt: arrow.BinaryTypes.StringView, cell: pick(every(3, 1), always(`"a string longer than twelve bytes"`))},
		opaqueColumn{name: "bv", dt: arrow.BinaryTypes.BinaryView, cell: pick(every(4, 1), always(`"YWI="`))},
		// runs of three rows, one run in three null
		opaqueColumn{name: "ree", dt: arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64),
			cell: pick(func(i int) bool { return i/3%3 == 0 }, func(i int) string { return fmt.Sprint(i / 3) })},
	)
	return cols
}

// unionColumns are a sparse and a dense union, whose nulls are those of
// the child values they select (a null child's always).
func unionColumns() []opaqueColumn {
	return []opaqueColumn{
		// even rows select f1, null in one in four rows; odd rows f2,
		// null where i%3 == 1
		{name: "sparse", dt: arrow.SparseUnionOf([]arrow.Field{{Name: "f1", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			{Name: "f2", Type: arrow.BinaryTypes.String, Nullable: true}}, []arrow.UnionTypeCode{5, 7}),
			cell: func(i int) string {
				switch {
				case i%2 == 0 && i%4 == 0:
					return "[5, null]"
				case i%2 == 0:
					return fmt.Sprintf("[5, %d]", i)
				case i%3 == 1:
					return "[7, null]"
				}
				return `[7, "s"]`
			},
			null: func(i int) bool { return (i%2 == 0 && i%4 == 0) || (i%2 == 1 && i%3 == 1) }},
		// one row in five selects the null child, one in five a null int8
		{name: "dense", dt: arrow.DenseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
			{Name: "n", Type: arrow.Null, Nullable: true}}, []arrow.UnionTypeCode{1, 2}),
			cell: func(i int) string {
				switch i % 5 {
				case 0:
					return "[2, null]"
				case 1:
					return "[1, null]"
				}
				return fmt.Sprintf("[1, %d]", i%100)
			},
			null: func(i int) bool { return i%5 < 2 }},
	}
}

// opaqueRecord builds rows [lo, hi) of cols.
func opaqueRecord(t testing.TB, mem memory.Allocator, cols []opaqueColumn, lo, hi int) arrow.Record {
	t.Helper()
	var fields []arrow.Field
	var arrs []arrow.Array
	for _, c := range cols {
		cells := make([]string, 0, hi-lo)
		for i := lo; i < hi; i++ {
			cells = append(cells, c.cell(i))
		}
		arr, _, err := array.FromJSON(mem, c.dt, strings.NewReader("["+strings.Join(cells, ", ")+"]"))
		require.NoError(t, err, c.name)
		defer arr.Release()
		fields = append(fields, arrow.Field{Name: c.name, Type: c.dt, Nullable: true})
		arrs = append(arrs, arr)
	}
	return array.NewRecord(arrow.NewSchema(fields, nil), arrs, int64(hi-lo))
}

// wantCounts are the count and null_count of every leaf of cols over rows
// [0, n), from the cells: a leaf of a struct is null where the struct is.
func wantCounts(cols []opaqueColumn, n int) map[string][2]int64 {
	out := map[string][2]int64{}
	var walk func(prefix string, c opaqueColumn, null func(i int) bool)
	walk = func(prefix string, c opaqueColumn, null func(i int) bool) {
		here := func(i int) bool { return null(i) || c.cell(i) == "null" || (c.null != nil && c.null(i)) }
		if c.fields != nil {
			for _, f := range c.fields {
				walk(prefix+c.name+".", f, here)
			}
			return
		}
		var w [2]int64
		for i := 0; i < n; i++ {
			if here(i) {
				w[1]++
			} else {
				w[0]++
			}
		}
		out[prefix+c.name] = w
	}
	for _, c := range cols {
		walk("", c, func(int) bool { return false })
	}
	return out
}

// aggregateCounts aggregates every column of the files at paths with aggs
// and returns their results by name, checking that what is only counted
// answers nothing else.
func aggregateCounts(t *testing.T, paths []string, opts Options, aggs agg.Set) (map[string][2]int64, *Summary) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	srcs, err := Expand(paths)
	require.NoError(t, err)
	opts.Mem = mem
	d, err := Open(context.Background(), srcs, opts)
	require.NoError(t, err)
	defer d.Close()
	sel, err := d.Select(nil)
	require.NoError(t, err)
	sum, err := d.Aggregate(context.Background(), newEngine(t, mem), sel, AggregateOptions{Aggs: aggs})
	require.NoError(t, err)
	got := map[string][2]int64{}
	for i, r := range sum.Results {
		require.NoError(t, r.Err, r.Name)
		got[r.Name] = [2]int64{r.Count, r.NullCount}
		if sel.Leaves[i].Kind == column.Opaque {
			for _, s := range []scalar.Scalar{r.Sum, r.Min, r.Max, r.Mean, r.First, r.Last, r.ArgMin, r.ArgMax} {
				assert.Nil(t, s, r.Name)
			}
		}
	}
	return got, sum
}

// Parquet lists, maps (also in structs, and lists of structs of lists),
// float16, decimal256, fixed-size binaries and lists and null columns are
// counted as the rows were written, over several row groups, with as many
// workers, decoded through pqarrow or not, statistics allowed or not.
func TestParquetOpaqueColumns(t *testing.T) {
	const rows = 70
	cols := parquetColumns()
	path := filepath.Join(t.TempDir(), "opaque.parquet")
	f, err := os.Create(path)
	require.NoError(t, err)
	rec := opaqueRecord(t, memory.DefaultAllocator, cols, 0, 40)
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(16)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	rec.Release()
	rec = opaqueRecord(t, memory.DefaultAllocator, cols, 40, rows)
	require.NoError(t, w.Write(rec))
	rec.Release()
	require.NoError(t, w.Close())

	want := wantCounts(cols, rows)
	require.Len(t, want, 11)
	for _, opts := range []Options{{Workers: 1}, {Workers: 4}, {ArrowDecode: true}} {
		for _, aggs := range []agg.Set{agg.Default, agg.All, agg.Count | agg.NullCount} {
			got, sum := aggregateCounts(t, []string{path}, opts, aggs)
			assert.Equal(t, want, got, "%+v %s", opts, aggs)
			for _, p := range sum.Plan {
				if p.Name == "l" || p.Name == "s.sl" || p.Name == "ls" || p.Name == "m" {
					assert.Equal(t, listReason, p.Reason, p.Name)
					assert.Equal(t, "cpu", p.BackendName(), p.Name)
				}
			}
		}
	}
}

// The lists of a row group of many rows are counted batch after batch.
func TestParquetListBatches(t *testing.T) {
	const rows = 3 * minBatchRows
	elems := make([]string, 100)
	for k := range elems {
		elems[k] = fmt.Sprint(k)
	}
	long := "[" + strings.Join(elems, ", ") + "]"
	cols := []opaqueColumn{{name: "l", dt: arrow.ListOf(arrow.PrimitiveTypes.Int32), cell: pick(every(7, 3), always(long))}}
	path := filepath.Join(t.TempDir(), "lists.parquet")
	f, err := os.Create(path)
	require.NoError(t, err)
	rec := opaqueRecord(t, memory.DefaultAllocator, cols, 0, rows)
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.Record{rec})
	require.NoError(t, pqarrow.WriteTable(tbl, f, rows, parquet.NewWriterProperties(parquet.WithDictionaryDefault(false)),
		pqarrow.DefaultWriterProps())) // (it closes f)
	tbl.Release()
	rec.Release()

	schema, pqf, err := probeParquet(pathSource(t, path))
	require.NoError(t, err)
	require.Len(t, pqf.meta.RowGroups, 1)
	leaves, err := parquetLeaves(pqf, arrow17.Leaves(schema), []int{0}, true)
	require.NoError(t, err)
	run := &parquetRun{pqf: pqf}
	require.Less(t, run.batchRows(0, &leaves[0], rows), int64(rows/2), "several batches")

	got, _ := aggregateCounts(t, []string{path}, Options{}, agg.Default)
	assert.Equal(t, wantCounts(cols, rows), got)
}

// writeOpaqueIPC writes rows [0, rows) of cols in batches of batch rows, an
// IPC file or stream.
func writeOpaqueIPC(t testing.TB, path string, file bool, cols []opaqueColumn, rows, batch int) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	var w interface {
		Write(arrow.Record) error
		Close() error
	}
	for lo := 0; lo < rows; lo += batch {
		rec := opaqueRecord(t, memory.DefaultAllocator, cols, lo, min(lo+batch, rows))
		if w == nil {
			if file {
				w, err = ipc.NewFileWriter(f, ipc.WithSchema(rec.Schema()))
				require.NoError(t, err)
			} else {
				w = ipc.NewWriter(f, ipc.WithSchema(rec.Schema()))
			}
		}
		require.NoError(t, w.Write(rec))
		rec.Release()
	}
	require.NoError(t, w.Close())
}

// IPC files (read in place, or as a stream where the in-place decoder does
// not lay a type out) and streams count every column only counted as the
// rows were written: lists, maps, structs of them, views, run-end encoded
// (the nulls of the runs' values), unions (the nulls of the child values
// selected), intervals, float16, decimal256, null.
func TestIPCOpaqueColumns(t *testing.T) {
	const rows = 70
	dir := t.TempDir()
	for _, inPlaceTypes := range []bool{true, false} {
		cols := ipcColumns(inPlaceTypes)
		want := wantCounts(cols, rows)
		name := fmt.Sprint("in-place-", inPlaceTypes)
		file, stream := filepath.Join(dir, name+".arrow"), filepath.Join(dir, name+".arrows")
		writeOpaqueIPC(t, file, true, cols, rows, 25)
		writeOpaqueIPC(t, stream, false, cols, rows, 25)
		if inPlaceTypes {
			require.NoError(t, inPlace(t, file))
		} else {
			require.ErrorIs(t, inPlace(t, file), errNotInPlace)
		}
		for _, aggs := range []agg.Set{agg.Default, agg.All, agg.Count | agg.NullCount} {
			for _, path := range []string{file, stream} {
				got, _ := aggregateCounts(t, []string{path}, Options{}, aggs)
				assert.Equal(t, want, got, "%s %s", path, aggs)
			}
		}
	}
}

// A dictionary of lists is null where its index is, or points at a null
// list; a union where the child value an element selects is.
func TestIPCDictionaryOfListsAndUnion(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// (arrow-go's IPC writers keep a reference to the dictionaries they
	// wrote: the record is not made with mem.)
	values, _, err := array.FromJSON(memory.DefaultAllocator, arrow.ListOf(arrow.PrimitiveTypes.Int32), strings.NewReader(`[[1], null, []]`))
	require.NoError(t, err)
	defer values.Release()
	idx, _, err := array.FromJSON(memory.DefaultAllocator, arrow.PrimitiveTypes.Int16, strings.NewReader(`[0, 1, null, 2, 1, 0, null]`))
	require.NoError(t, err)
	defer idx.Release()
	dict := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: values.DataType()}, idx, values)
	defer dict.Release()
	union, _, err := array.FromJSON(memory.DefaultAllocator, arrow.SparseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int8, Nullable: true}}, []arrow.UnionTypeCode{0}),
		strings.NewReader(`[[0, 1], [0, null], [0, 2], [0, 3], [0, 4], [0, 5], [0, 6]]`))
	require.NoError(t, err)
	defer union.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dict.DataType(), Nullable: true}, {Name: "u", Type: union.DataType(), Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{dict, union}, 7)
	defer rec.Release()
	for _, file := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "dict.arrow")
		f, err := os.Create(path)
		require.NoError(t, err)
		var w interface {
			Write(arrow.Record) error
			Close() error
		}
		if file {
			w, err = ipc.NewFileWriter(f, ipc.WithSchema(schema))
			require.NoError(t, err)
		} else {
			w = ipc.NewWriter(f, ipc.WithSchema(schema))
		}
		require.NoError(t, w.Write(rec))
		require.NoError(t, w.Close())
		require.NoError(t, f.Close())

		srcs, err := Expand([]string{path})
		require.NoError(t, err)
		d, err := Open(context.Background(), srcs, Options{Mem: mem})
		require.NoError(t, err)
		sel, err := d.Select(nil)
		require.NoError(t, err)
		require.Equal(t, []string{"d", "u"}, sel.Names())
		require.Empty(t, sel.Skipped)
		sum, err := d.Aggregate(context.Background(), newEngine(t, mem), sel, AggregateOptions{})
		require.NoError(t, err)
		assert.Equal(t, [2]int64{3, 4}, [2]int64{sum.Results[0].Count, sum.Results[0].NullCount}, "file %t", file)
		assert.Equal(t, [2]int64{6, 1}, [2]int64{sum.Results[1].Count, sum.Results[1].NullCount}, "file %t", file)
		d.Close()
	}
}

// A list or map is counted from the levels of its smallest leaf column: a
// map of long string keys from its values' column, a list of structs from
// its narrowest field, with the counts of the first leaf.
func TestListCountedFromSmallestLeaf(t *testing.T) {
	long := strings.Repeat("k", 4000)
	cols := []opaqueColumn{
		{name: "m", dt: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), cell: func(i int) string {
			switch i % 4 {
			case 0:
				return "null"
			case 1:
				return "[]"
			}
			return fmt.Sprintf(`[{"key": "%s%d", "value": null}, {"key": "b%d", "value": %d}]`, long, i, i, i)
		}},
		{name: "ls", dt: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
			arrow.Field{Name: "i", Type: arrow.PrimitiveTypes.Int8, Nullable: true})), cell: func(i int) string {
			if i%3 == 0 {
				return "null"
			}
			return fmt.Sprintf(`[{"s": "%s%d", "i": 1}, null]`, long, i)
		}},
	}
	const rows = 50
	path := filepath.Join(t.TempDir(), "long.parquet")
	f, err := os.Create(path)
	require.NoError(t, err)
	rec := opaqueRecord(t, memory.DefaultAllocator, cols, 0, rows)
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(20), parquet.WithDictionaryDefault(false)),
		pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	rec.Release()
	require.NoError(t, w.Close())

	schema, pqf, err := probeParquet(pathSource(t, path))
	require.NoError(t, err)
	leaves := arrow17.Leaves(schema)
	pls, err := parquetLeaves(pqf, leaves, []int{0, 1}, true)
	require.NoError(t, err)
	// Parquet leaves: m's key 0, value 1; ls's s 2, i 3.
	assert.Equal(t, 1, pls[0].col, "m: its values, not its long keys")
	assert.Equal(t, 3, pls[1].col, "ls: its int8 field, not its long strings")

	got, _ := aggregateCounts(t, []string{path}, Options{}, agg.Default)
	assert.Equal(t, wantCounts(cols, rows), got)
}

// parquet-testing's large_string_map.brotli.parquet: a map whose one key is
// a string of 1 GiB, in a page over the page limit. Its count comes from
// the levels of its values, without decompressing the key.
func TestLargeStringMap(t *testing.T) {
	path := parquetTesting(t, "large_string_map.brotli.parquet")
	got, sum := aggregateCounts(t, []string{path}, Options{}, agg.Default)
	assert.Equal(t, map[string][2]int64{"arr": {2, 0}}, got)
	require.Len(t, sum.Plan, 1)
	assert.Less(t, sum.Plan[0].Bytes, int64(1<<20), "the values' levels read, not the key")
	// Its keys named as a column: the page over the limit is refused.
	_, _, err := aggregatePaths(t.Context(), t, memory.DefaultAllocator, []string{path}, []string{"arr{key}"}, Options{})
	assert.ErrorContains(t, err, "a page of 1073741828 bytes (at most 1073741824 are read)")
}
