package dataset

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/report"
)

// elementAggs are the aggregates the element tests compare.
const elementAggs = agg.Default | agg.Ordered | agg.ApproxDistinct

// randJSON is a random JSON value of type dt (arrow-go's JSON form), null
// with probability 1/5.
func randJSON(r *rand.Rand, dt arrow.DataType) string {
	if r.IntN(5) == 0 {
		return "null"
	}
	n := r.IntN(4)
	var parts []string
	switch t := dt.(type) {
	case *arrow.MapType:
		for k := 0; k < n; k++ {
			parts = append(parts, fmt.Sprintf(`{"key": "k%d", "value": %s}`, r.IntN(50), randJSON(r, t.ItemType())))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case arrow.ListLikeType:
		for k := 0; k < n; k++ {
			parts = append(parts, randJSON(r, t.Elem()))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *arrow.StructType:
		for _, f := range t.Fields() {
			parts = append(parts, fmt.Sprintf("%q: %s", f.Name, randJSON(r, f.Type)))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case *arrow.StringType:
		return fmt.Sprintf(`"s%d"`, r.IntN(1000))
	case *arrow.Decimal128Type:
		return fmt.Sprintf(`"%d.%02d"`, r.IntN(2000)-1000, r.IntN(100))
	case *arrow.Float64Type:
		return fmt.Sprintf("%d.5", r.IntN(2000)-1000)
	}
	return fmt.Sprint(r.IntN(2000) - 1000)
}

// elementSchema has nested columns pqarrow writes (large lists, list views
// and fixed-size lists with nulls it does not: the engine's tests have
// those).
var elementSchema = arrow.NewSchema([]arrow.Field{
	{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
	{Name: "names", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64), Nullable: true},
	{Name: "grid", Type: arrow.ListOf(innerList(arrow.PrimitiveTypes.Int32)), Nullable: true},
	{Name: "items", Type: arrow.ListOf(arrow.StructOf(
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		arrow.Field{Name: "p", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true})), Nullable: true},
	{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Uint32), Nullable: true}), Nullable: true},
	{Name: "mm", Type: arrow.MapOf(arrow.BinaryTypes.String, innerList(arrow.PrimitiveTypes.Int64)), Nullable: true},
}, nil)

// innerList is a list of dt as pqarrow reads one back from Parquet (its
// element named "list"), so that the types printed agree.
func innerList(dt arrow.DataType) arrow.DataType {
	return arrow.ListOfField(arrow.Field{Name: "list", Type: dt, Nullable: true})
}

// elementRecords are batches of random rows of elementSchema.
func elementRecords(t *testing.T, r *rand.Rand, batches, rows int) []arrow.Record {
	var out []arrow.Record
	for b := 0; b < batches; b++ {
		cols := make([]arrow.Array, len(elementSchema.Fields()))
		for k, f := range elementSchema.Fields() {
			cells := make([]string, rows)
			for i := range cells {
				cells[i] = randJSON(r, f.Type)
			}
			arr, _, err := array.FromJSON(memory.DefaultAllocator, f.Type, strings.NewReader("["+strings.Join(cells, ", ")+"]"))
			require.NoError(t, err, f.Name)
			cols[k] = arr
		}
		out = append(out, array.NewRecord(elementSchema, cols, int64(rows)))
		for _, c := range cols {
			c.Release()
		}
	}
	return out
}

// elementNames are the element columns of schema (ElementLeaves).
func elementNames(schema *arrow.Schema) []string {
	var names []string
	for _, l := range arrow17.ElementLeaves(schema) {
		names = append(names, l.Name)
	}
	return names
}

// resultsJSON prints results as the CLI's JSON does, every aggregate of
// aggs.
func resultsJSON(t *testing.T, res []engine.Result, aggs agg.Set) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, report.Write(&b, report.JSON, report.Report{Aggs: aggs, Columns: res}))
	return b.String()
}

// aggregateNamed aggregates columns of the files at paths.
func aggregateNamed(t *testing.T, paths []string, columns []string, opts Options, aggs agg.Set) []engine.Result {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	srcs, err := Expand(paths)
	require.NoError(t, err)
	opts.Mem = mem
	d, err := Open(context.Background(), srcs, opts)
	require.NoError(t, err)
	defer d.Close()
	sel, err := d.Select(columns)
	require.NoError(t, err)
	sum, err := d.Aggregate(context.Background(), newEngine(t, mem), sel, AggregateOptions{Aggs: aggs})
	require.NoError(t, err)
	return sum.Results
}

// TestElementsAgreeAcrossFormats: the element columns of the same rows
// written as Parquet by arrow-go (several row groups), as an IPC file and
// as an IPC stream, in two files each, aggregate as the engine does the
// Arrow arrays themselves: the Parquet leaf's levels and the Arrow lists'
// offsets give one answer, positions of elements (first, arg_min...)
// included, over row groups and files.
func TestElementsAgreeAcrossFormats(t *testing.T) {
	r, seed := seededRand(t)
	dir := t.TempDir()
	recs := elementRecords(t, r, 4, 50)
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	names := elementNames(elementSchema)
	require.Equal(t, []string{"tags[]", "names[]", "m{key}", "m{value}", "grid[]", "grid[][]", "items[].x", "items[].p",
		"s.l[]", "mm{key}", "mm{value}", "mm{value}[]"}, names)

	// The engine on the arrays.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	acc, err := newEngine(t, mem).NewAccumulator(elementSchema, engine.Request{Columns: names, Aggs: elementAggs})
	require.NoError(t, err)
	for _, rec := range recs {
		require.NoError(t, acc.Add(context.Background(), rec))
	}
	want := resultsJSON(t, acc.Results(), elementAggs)
	mem.AssertSize(t, 0)

	var pq, ipcFiles, streams []string
	for half := 0; half < 2; half++ {
		part := recs[2*half : 2*half+2]
		p := filepath.Join(dir, fmt.Sprintf("e%d.parquet", half))
		f, err := os.Create(p)
		require.NoError(t, err)
		w, err := pqarrow.NewFileWriter(elementSchema, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(30)), pqarrow.DefaultWriterProps())
		require.NoError(t, err)
		for _, rec := range part {
			require.NoError(t, w.Write(rec))
		}
		require.NoError(t, w.Close())
		pq = append(pq, p)
		for _, isFile := range []bool{true, false} {
			p := filepath.Join(dir, fmt.Sprintf("e%d-%t.arrow", half, isFile))
			f, err := os.Create(p)
			require.NoError(t, err)
			var w interface {
				Write(arrow.Record) error
				Close() error
			}
			if isFile {
				w, err = ipc.NewFileWriter(f, ipc.WithSchema(elementSchema))
				require.NoError(t, err)
				ipcFiles = append(ipcFiles, p)
			} else {
				w = ipc.NewWriter(f, ipc.WithSchema(elementSchema))
				streams = append(streams, p)
			}
			for _, rec := range part {
				require.NoError(t, w.Write(rec))
			}
			require.NoError(t, w.Close())
			require.NoError(t, f.Close())
		}
	}
	for _, c := range []struct {
		what  string
		paths []string
		opts  Options
	}{
		{"parquet", pq, Options{Workers: 3}},
		{"parquet via pqarrow", pq, Options{ArrowDecode: true, Workers: 1}},
		{"ipc files", ipcFiles, Options{}},
		{"ipc streams", streams, Options{}},
	} {
		got := aggregateNamed(t, c.paths, names, c.opts, elementAggs)
		require.Equal(t, want, resultsJSON(t, got, elementAggs), "%s seed=%d", c.what, seed)
	}
	// Aggregates that row-group statistics could answer are read from the
	// levels all the same (a repeated leaf's statistics count levels).
	const statsAggs = agg.Count | agg.NullCount | agg.Min | agg.Max
	acc, err = newEngine(t, memory.DefaultAllocator).NewAccumulator(elementSchema, engine.Request{Columns: names, Aggs: statsAggs})
	require.NoError(t, err)
	for _, rec := range recs {
		require.NoError(t, acc.Add(context.Background(), rec))
	}
	got := aggregateNamed(t, pq, names, Options{}, statsAggs)
	require.Equal(t, resultsJSON(t, acc.Results(), statsAggs), resultsJSON(t, got, statsAggs), "seed=%d", seed)
}

// seededRand is a random source of a seed the test prints.
func seededRand(t *testing.T) (*rand.Rand, uint64) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed>>1)), seed
}

// elementCorpus are the files of parquet-testing with lists and maps, as
// Impala, Spark, parquet-java, parquet-rs, Presto and pyarrow wrote them.
var elementCorpus = []string{
	"list_columns.parquet", "nested_lists.snappy.parquet", "nested_maps.snappy.parquet",
	"repeated_no_annotation.parquet", "repeated_primitive_no_list.parquet", "incorrect_map_schema.parquet",
	"nullable.impala.parquet", "nonnullable.impala.parquet", "null_list.parquet", "old_list_structure.parquet",
	"map_no_value.parquet",
}

// TestElementsCorpus: every element column of the corpus files aggregates
// as pqarrow's reading of the whole file (Arrow list and map arrays, read
// through the engine's element views) does; the files whose content is
// documented give their documented answers.
func TestElementsCorpus(t *testing.T) {
	for _, name := range elementCorpus {
		path := filepath.Join(corpusDir, "parquet-testing", "data", name)
		_, err := os.Stat(path)
		require.NoError(t, err, "the corpus is checked out beside the repository")
		// The footer as Open reads it (maps with optional keys are lists
		// of key-value structs: pqfooter.go), the whole file through
		// pqarrow's nested readers.
		src := pathSource(t, path)
		_, fix, err := checkParquetFooter(context.Background(), src)
		require.NoError(t, err, name)
		_, pqf, err := probeParquetFixed(src, fix, nil, Int96Nanoseconds)
		require.NoError(t, err, name)
		f, err := os.Open(path)
		require.NoError(t, err)
		pf, err := file.NewParquetReader(f, file.WithMetadata(pqf.meta))
		require.NoError(t, err, name)
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		require.NoError(t, err, name)
		tbl, err := fr.ReadTable(context.Background())
		require.NoError(t, err, name)
		require.NoError(t, pf.Close())
		names := elementNames(tbl.Schema())
		require.NotEmpty(t, names, name)
		want, err := newEngine(t, memory.DefaultAllocator).AggregateTable(context.Background(), tbl, engine.Request{Columns: names, Aggs: elementAggs})
		tbl.Release()
		require.NoError(t, err, name)
		got := aggregateNamed(t, []string{path}, names, Options{}, elementAggs)
		require.Equal(t, resultsJSON(t, want, elementAggs), resultsJSON(t, got, elementAggs), name)
	}
	// A struct element's name stands for its fields, not for the elements
	// of lists among them.
	srcs, err := Expand([]string{filepath.Join(corpusDir, "parquet-testing", "data", "nullable.impala.parquet")})
	require.NoError(t, err)
	d, err := Open(context.Background(), srcs, Options{})
	require.NoError(t, err)
	sel, err := d.Select([]string{"nested_struct.C.d[][]", "nested_struct.g{value}.H"})
	require.NoError(t, err)
	require.Equal(t, []string{"nested_struct.C.d[][].E", "nested_struct.C.d[][].F", "nested_struct.g{value}.H.i"}, sel.Names())
	require.NoError(t, d.Close())

	// Documented: old_list_structure.md, [[1, 2], [3, 4]]; map_no_value.md,
	// maps of keys 1 to 9 with null values, and the lists of those keys.
	dir := filepath.Join(corpusDir, "parquet-testing", "data")
	res := aggregateNamed(t, []string{filepath.Join(dir, "old_list_structure.parquet")}, []string{"a[].array", "a[].array[]"}, Options{}, agg.Default)
	require.Equal(t, [2]int64{2, 0}, [2]int64{res[0].Count, res[0].NullCount})
	require.Equal(t, [5]int64{4, 0, 10, 1, 4}, ints(res[1]))
	res = aggregateNamed(t, []string{filepath.Join(dir, "map_no_value.parquet")}, []string{"my_map{key}", "my_map{value}", "my_map_no_v[]", "my_list[]"}, Options{}, agg.Default)
	require.Equal(t, [5]int64{9, 0, 45, 1, 9}, ints(res[0]))
	require.Equal(t, [2]int64{0, 9}, [2]int64{res[1].Count, res[1].NullCount})
	require.Equal(t, [5]int64{9, 0, 45, 1, 9}, ints(res[2]))
	require.Equal(t, [5]int64{9, 0, 45, 1, 9}, ints(res[3]))
}

// ints are the count, null_count, sum, min and max of an integer column's
// result.
func ints(r engine.Result) [5]int64 {
	num := func(s interface{ String() string }) int64 {
		var v int64
		fmt.Sscan(s.String(), &v)
		return v
	}
	return [5]int64{r.Count, r.NullCount, num(r.Sum), num(r.Min), num(r.Max)}
}

// TestElementPages: the page path folds the elements of integer and float
// leaves in lists (levels v1 and v2, dictionary and PLAIN pages, many small
// pages, snappy and zstd) as pqarrow's reading and the engine on the arrays
// do, the ordered aggregates' nulls spread over the elements included.
func TestElementPages(t *testing.T) {
	r, seed := seededRand(t)
	recs := elementRecords(t, r, 2, 400)
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	names := elementNames(elementSchema)
	acc, err := newEngine(t, memory.DefaultAllocator).NewAccumulator(elementSchema, engine.Request{Columns: names, Aggs: elementAggs})
	require.NoError(t, err)
	for _, rec := range recs {
		require.NoError(t, acc.Add(context.Background(), rec))
	}
	want := resultsJSON(t, acc.Results(), elementAggs)
	paged := map[string]bool{"tags[]": true, "m{value}": true, "grid[][]": true, "s.l[]": true, "mm{value}[]": true, "items[].p": true}
	small := []parquet.WriterProperty{parquet.WithMaxRowGroupLength(300), parquet.WithDataPageSize(512), parquet.WithBatchSize(64)}
	for _, props := range [][]parquet.WriterProperty{
		append(small, parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(true)),
		append(small, parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV2)),
		append(small, parquet.WithDictionaryDefault(true), parquet.WithDataPageVersion(parquet.DataPageV2)),
		{parquet.WithDictionaryDefault(false)}, // one page a chunk
	} {
		path := filepath.Join(t.TempDir(), "e.parquet")
		f, err := os.Create(path)
		require.NoError(t, err)
		w, err := pqarrow.NewFileWriter(elementSchema, f, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
		require.NoError(t, err)
		for _, rec := range recs {
			require.NoError(t, w.Write(rec))
		}
		require.NoError(t, w.Close())
		for _, opts := range []Options{{Workers: 2}, {ArrowDecode: true}} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			sum, sel, err := aggregatePathsAggs(t, mem, []string{path}, names, opts, elementAggs)
			require.NoError(t, err)
			require.Len(t, sel.Leaves, len(names))
			require.Equal(t, want, resultsJSON(t, sum.Results, elementAggs), "%+v seed=%d", opts, seed)
			for _, p := range sum.Plan {
				require.Equal(t, paged[p.Name] && !opts.ArrowDecode, p.Reason == pageReason, "%s: %s", p.Name, p.Reason)
			}
			mem.AssertSize(t, 0)
		}
	}
}

// aggregatePathsAggs is aggregatePaths with the aggregates aggs.
func aggregatePathsAggs(t *testing.T, mem memory.Allocator, in []string, columns []string, opts Options, aggs agg.Set) (*Summary, Selection, error) {
	t.Helper()
	srcs, err := Expand(in)
	require.NoError(t, err)
	opts.Mem = mem
	d, err := Open(context.Background(), srcs, opts)
	require.NoError(t, err)
	defer d.Close()
	sel, err := d.Select(columns)
	require.NoError(t, err)
	sum, err := d.Aggregate(context.Background(), newEngine(t, mem), sel, AggregateOptions{Aggs: aggs})
	return sum, sel, err
}

// TestElementLargePage: a PLAIN page of elements over streamPageBytes is
// read as a stream, its repetition levels skipped there too (v1 pages put
// them before the definition levels), as pqarrow reads it.
func TestElementLargePage(t *testing.T) {
	const rows = 300_000 // four elements a row: 9.6 MB of int64 in one page
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int64)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Int64Builder)
	for i := 0; i < rows; i++ {
		if i%97 == 5 {
			b.AppendNull()
			continue
		}
		b.Append(true)
		for k := 0; k < 4; k++ {
			if (i+k)%89 == 3 {
				vb.AppendNull()
			} else {
				vb.Append(int64(i*4+k) - 600_000)
			}
		}
	}
	arr := b.NewArray()
	defer arr.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arr.DataType(), Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{arr}, rows)
	defer rec.Release()
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		path := filepath.Join(t.TempDir(), "large.parquet")
		f, err := os.Create(path)
		require.NoError(t, err)
		w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithDataPageSize(64<<20), parquet.WithDataPageVersion(v),
			parquet.WithDictionaryDefault(false), parquet.WithMaxRowGroupLength(rows)), pqarrow.DefaultWriterProps())
		require.NoError(t, err)
		require.NoError(t, w.Write(rec))
		require.NoError(t, w.Close())
		pf, err := file.OpenParquetFile(path, false)
		require.NoError(t, err)
		pr, err := pf.RowGroup(0).GetColumnPageReader(0)
		require.NoError(t, err)
		pages := 0
		for pr.Next() {
			pages++
			require.Greater(t, int64(len(pr.Page().Data())), int64(streamPageBytes), "one page, streamed")
		}
		require.NoError(t, pf.Close())
		require.Equal(t, 1, pages)
		for _, aggs := range []agg.Set{agg.Default, agg.Default | agg.Ordered} {
			want, err := newEngine(t, mem).AggregateRecord(context.Background(), rec, engine.Request{Columns: []string{"l[]"}, Aggs: aggs})
			require.NoError(t, err)
			sum, _, err := aggregatePathsAggs(t, mem, []string{path}, []string{"l[]"}, Options{}, aggs)
			require.NoError(t, err)
			require.Equal(t, pageReason, sum.Plan[0].Reason)
			require.Equal(t, resultsJSON(t, want, aggs), resultsJSON(t, sum.Results, aggs), "v%d", v)
		}
	}
}
