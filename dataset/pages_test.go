package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/planner"
)

// pqCol is a generated column of the page path's tests.
type pqCol struct {
	field arrow.Field
	// nulls is the fraction of null rows (1: all of them).
	nulls float64
	// paged: aggregated from pages when the file's encodings allow it.
	paged bool
	fill  func(b array.Builder, r *rand.Rand)
}

// appender is a builder of values of type T.
type appender[T any] interface {
	array.Builder
	Append(T)
}

func genCol[T any](name string, dt arrow.DataType, nullable bool, nulls float64, paged bool, gen func(r *rand.Rand) T) pqCol {
	return pqCol{field: arrow.Field{Name: name, Type: dt, Nullable: nullable}, nulls: nulls, paged: paged,
		fill: func(b array.Builder, r *rand.Rand) { b.(appender[T]).Append(gen(r)) }}
}

// dyadic returns a float that sums exactly in any order (a multiple of 1/8
// below 2^20): the page path and pqarrow group the values differently.
func dyadic(r *rand.Rand) float64 { return float64(r.IntN(1<<23)-1<<22) / 8 }

var pqStruct = arrow.StructOf(
	arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Float64, Nullable: false},
)

// pqCols are the columns: every type of the page path, with no nulls
// (required and optional), some, and only nulls; and columns that go through
// pqarrow.
func pqCols() []pqCol {
	return []pqCol{
		genCol("i32", arrow.PrimitiveTypes.Int32, true, 0.2, true, func(r *rand.Rand) int32 { return int32(r.Uint32()) }),
		genCol("i32_required", arrow.PrimitiveTypes.Int32, false, 0, true, func(r *rand.Rand) int32 { return int32(r.Uint32()) }),
		genCol("i32_no_nulls", arrow.PrimitiveTypes.Int32, true, 0, true, func(r *rand.Rand) int32 { return int32(r.Uint32()) }),
		genCol("i64", arrow.PrimitiveTypes.Int64, true, 0.1, true, func(r *rand.Rand) int64 { return int64(r.Uint64()) }),
		genCol("i64_low", arrow.PrimitiveTypes.Int64, true, 0.3, true, func(r *rand.Rand) int64 { return int64(r.IntN(16)) - 8 }),
		genCol("u32", arrow.PrimitiveTypes.Uint32, true, 0.05, true, func(r *rand.Rand) uint32 { return r.Uint32() }),
		genCol("u64", arrow.PrimitiveTypes.Uint64, false, 0, true, func(r *rand.Rand) uint64 { return r.Uint64() | 1<<63 }),
		genCol("f32", arrow.PrimitiveTypes.Float32, true, 0.15, true, func(r *rand.Rand) float32 { return float32(dyadic(r) / 64) }),
		genCol("f64", arrow.PrimitiveTypes.Float64, true, 0.25, true, dyadic),
		genCol("f64_low", arrow.PrimitiveTypes.Float64, true, 0.1, true, func(r *rand.Rand) float64 { return float64(r.IntN(5)) - 2.5 }),
		genCol("f64_special", arrow.PrimitiveTypes.Float64, true, 0.1, true, func(r *rand.Rand) float64 {
			switch r.IntN(40) {
			case 0:
				return math.Inf(1)
			case 1:
				return math.Copysign(0, -1)
			case 2:
				return math.NaN()
			}
			return dyadic(r)
		}),
		genCol("f64_all_null", arrow.PrimitiveTypes.Float64, true, 1, true, dyadic),
		genCol("i64_all_null", arrow.PrimitiveTypes.Int64, true, 1, true, func(r *rand.Rand) int64 { return 1 }),
		genCol("day", arrow.FixedWidthTypes.Date32, true, 0.1, true, func(r *rand.Rand) arrow.Date32 { return arrow.Date32(r.IntN(80000) - 40000) }),
		genCol("clock_ms", arrow.FixedWidthTypes.Time32ms, true, 0.1, true, func(r *rand.Rand) arrow.Time32 { return arrow.Time32(r.IntN(86400000)) }),
		genCol("clock_us", arrow.FixedWidthTypes.Time64us, true, 0.1, true, func(r *rand.Rand) arrow.Time64 { return arrow.Time64(r.Int64N(86400e6)) }),
		genCol("clock_ns", arrow.FixedWidthTypes.Time64ns, true, 0.1, true, func(r *rand.Rand) arrow.Time64 { return arrow.Time64(r.Int64N(86400e9)) }),
		genCol("ts_ms", arrow.FixedWidthTypes.Timestamp_ms, true, 0.1, true, func(r *rand.Rand) arrow.Timestamp { return arrow.Timestamp(r.Int64N(4e12)) }),
		genCol("ts_us_paris", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"}, true, 0.1, true,
			func(r *rand.Rand) arrow.Timestamp { return arrow.Timestamp(r.Int64N(4e15)) }),
		genCol("ts_ns", &arrow.TimestampType{Unit: arrow.Nanosecond}, true, 0.1, true, func(r *rand.Rand) arrow.Timestamp { return arrow.Timestamp(r.Int64()) }),
		{field: arrow.Field{Name: "point", Type: pqStruct, Nullable: true}, nulls: 0.2, paged: true, fill: fillStruct},
		// through pqarrow: other storage than the Parquet values
		genCol("i8", arrow.PrimitiveTypes.Int8, true, 0.1, false, func(r *rand.Rand) int8 { return int8(r.Uint32()) }),
		genCol("u16", arrow.PrimitiveTypes.Uint16, true, 0.1, false, func(r *rand.Rand) uint16 { return uint16(r.Uint32()) }),
		// written as a Parquet DATE, read as date32: paged
		genCol("day64", arrow.FixedWidthTypes.Date64, true, 0.1, true, func(r *rand.Rand) arrow.Date64 { return arrow.Date64(int64(r.IntN(80000)-40000) * 86400000) }),
		// FIXED_LEN_BYTE_ARRAY (or INT32) decimals: widened to Decimal128
		genCol("price", &arrow.Decimal128Type{Precision: 9, Scale: 2}, true, 0.1, true, func(r *rand.Rand) decimal128.Num {
			return decimal128.FromI64(r.Int64N(2e8) - 1e8)
		}),
		// booleans: bits, PLAIN or RLE
		genCol("flag", arrow.FixedWidthTypes.Boolean, true, 0.1, true, func(r *rand.Rand) bool { return r.IntN(3) == 0 }),
		genCol("flag_runs", arrow.FixedWidthTypes.Boolean, false, 0, true, func(r *rand.Rand) bool { return r.IntN(50) != 0 }),
		genCol("word", arrow.BinaryTypes.String, true, 0.1, false, func(r *rand.Rand) string { return fmt.Sprint(r.IntN(500)) }),
	}
}

func fillStruct(b array.Builder, r *rand.Rand) {
	sb := b.(*array.StructBuilder)
	sb.Append(true)
	if r.IntN(5) == 0 {
		sb.FieldBuilder(0).AppendNull()
	} else {
		sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(r.Uint32()))
	}
	sb.FieldBuilder(1).(*array.Float64Builder).Append(dyadic(r))
}

// pqRecord builds rows of the columns.
func pqRecord(mem memory.Allocator, cols []pqCol, rows int, seed uint64) arrow.Record {
	r := rand.New(rand.NewPCG(seed, 7))
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for c, col := range cols {
		fields[c] = col.field
		b := array.NewBuilder(mem, col.field.Type)
		for i := 0; i < rows; i++ {
			if col.field.Nullable && (col.nulls >= 1 || r.Float64() < col.nulls) {
				b.AppendNull()
			} else {
				col.fill(b, r)
			}
		}
		arrs[c] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), arrs, int64(rows))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// pqConfig is how a test file is written.
type pqConfig struct {
	name  string
	props []parquet.WriterProperty
	arrow []pqarrow.WriterOption
	// notPaged are columns written in a way the page path leaves to pqarrow.
	notPaged []string
	// leaks, when set, says why pqarrow does not free all it allocates
	// reading the file: the test cannot check its allocator then.
	leaks string
}

func pqConfigs() []pqConfig {
	small := []parquet.WriterProperty{parquet.WithMaxRowGroupLength(700), parquet.WithDataPageSize(1 << 10), parquet.WithBatchSize(128)}
	with := func(p ...parquet.WriterProperty) []parquet.WriterProperty {
		return append(append([]parquet.WriterProperty(nil), small...), p...)
	}
	ints := []string{"i32", "i32_required", "i32_no_nulls", "i64", "i64_low", "u32", "u64", "i64_all_null", "day", "clock_ms", "clock_us", "clock_ns",
		"ts_ms", "ts_us_paris", "ts_ns", "point.a", "day64"}
	var delta []parquet.WriterProperty
	for _, c := range ints {
		delta = append(delta, parquet.WithEncodingFor(c, parquet.Encodings.DeltaBinaryPacked))
	}
	return []pqConfig{
		{name: "v1-snappy-dict", props: with(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(true))},
		{name: "v2-zstd-plain", props: with(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(false),
			parquet.WithDataPageVersion(parquet.DataPageV2))},
		{name: "v2-snappy-dict", props: with(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(true),
			parquet.WithDataPageVersion(parquet.DataPageV2))},
		// dictionaries that overflow fall back to PLAIN within a chunk
		{name: "v1-uncompressed-dict-fallback", props: with(parquet.WithCompression(compress.Codecs.Uncompressed), parquet.WithDictionaryDefault(true),
			parquet.WithDictionaryPageSizeLimit(200))},
		{name: "v1-gzip-large-pages", props: []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Gzip), parquet.WithMaxRowGroupLength(1000)}},
		{name: "v1-delta", props: with(append(delta, parquet.WithDictionaryDefault(false))...), notPaged: ints,
			leaks: "arrow-go v17's DELTA_BINARY_PACKED decoder never frees its miniblock bit widths (deltaBitPackDecoder.deltaBitWidths)"},
		{name: "v1-int96", props: with(), arrow: []pqarrow.WriterOption{pqarrow.WithDeprecatedInt96Timestamps(true)}},
		{name: "v1-decimal-as-int", props: with(parquet.WithStoreDecimalAsInteger(true))},
		{name: "v1-rle-booleans", props: with(parquet.WithDictionaryDefault(false),
			parquet.WithEncodingFor("flag", parquet.Encodings.RLE), parquet.WithEncodingFor("flag_runs", parquet.Encodings.RLE))},
		{name: "v2-snappy-rle-booleans", props: with(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageVersion(parquet.DataPageV2),
			parquet.WithEncodingFor("flag", parquet.Encodings.RLE), parquet.WithEncodingFor("flag_runs", parquet.Encodings.RLE))},
	}
}

// writePQ writes rec as a Parquet file.
func writePQ(t *testing.T, path string, rec arrow.Record, cfg pqConfig) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	opts := append([]pqarrow.WriterOption{pqarrow.WithStoreSchema()}, cfg.arrow...)
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(cfg.props...), pqarrow.NewArrowWriterProperties(opts...))
	require.NoError(t, err)
	require.NoError(t, w.WriteBuffered(rec))
	require.NoError(t, w.Close())
}

// render prints every aggregate of a result, exactly.
func render(r engine.Result) string {
	s := func(v any) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%s %s count=%d nulls=%d sum=%s exact=%s min=%s max=%s mean=%s first=%s last=%s argmin=%s argmax=%s",
		r.Name, r.Type, r.Count, r.NullCount, s(r.Sum), s(r.SumExact), s(r.Min), s(r.Max), s(r.Mean), s(r.First), s(r.Last), s(r.ArgMin), s(r.ArgMax))
}

// aggregateFile aggregates every column of the files.
func aggregateFile(t *testing.T, mem memory.Allocator, paths []string, opts Options, aggs agg.Set) ([]string, *Summary) {
	t.Helper()
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
	out := make([]string, len(sum.Results))
	for i, r := range sum.Results {
		out[i] = render(r)
	}
	return out, sum
}

// The page path computes what decoding through pqarrow computes, for every
// type it takes, with and without nulls, over several row groups and pages,
// PLAIN and dictionary-encoded, data pages v1 and v2, every codec; the
// columns it does not take go through pqarrow and are right too.
func TestPagePathMatchesArrowDecode(t *testing.T) {
	dir := t.TempDir()
	for ci, cfg := range pqConfigs() {
		t.Run(cfg.name, func(t *testing.T) {
			var mem memory.Allocator = memory.DefaultAllocator
			if cfg.leaks == "" {
				checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer checked.AssertSize(t, 0)
				mem = checked
			} else {
				t.Log("not checking the allocator:", cfg.leaks)
			}
			rec := pqRecord(mem, pqCols(), 2500, uint64(ci))
			path := filepath.Join(dir, cfg.name+".parquet")
			writePQ(t, path, rec, cfg)
			rec.Release()

			for _, aggs := range []agg.Set{agg.Default, agg.Default | agg.Ordered} {
				want, _ := aggregateFile(t, mem, []string{path}, Options{ArrowDecode: true, Workers: 3}, aggs)
				for _, workers := range []int{1, 4} {
					got, sum := aggregateFile(t, mem, []string{path}, Options{Workers: workers}, aggs)
					require.Equal(t, want, got, "aggs %s, %d workers", aggs, workers)
					paged := map[string]bool{"point.b": true}
					for _, c := range pqCols() {
						name := c.field.Name
						if name == "point" {
							name = "point.a"
						}
						paged[name] = c.paged && !slices.Contains(cfg.notPaged, name)
					}
					for i, p := range sum.Plan {
						assert.Equal(t, paged[p.Name], p.Reason == pageReason, "%s: %s", p.Name, p.Reason)
						assert.Equal(t, "cpu", p.BackendName(), p.Name)
						assert.Positive(t, p.Bytes, p.Name)
						assert.Equal(t, sum.Results[i].Name, p.Name)
					}
				}
			}
		})
	}
}

// Results are the same, to the last bit, whatever the number of workers,
// and the same as before when the file is read again (float sums of values
// that do not sum exactly included).
func TestPagePathDeterministic(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cols := []pqCol{
		genCol("f64", arrow.PrimitiveTypes.Float64, true, 0.1, true, func(r *rand.Rand) float64 { return r.NormFloat64() * 1e10 }),
		genCol("f32", arrow.PrimitiveTypes.Float32, true, 0.1, true, func(r *rand.Rand) float32 { return float32(r.ExpFloat64()) }),
		genCol("f64_low", arrow.PrimitiveTypes.Float64, true, 0.1, true, func(r *rand.Rand) float64 { return float64(r.IntN(7)) / 3 }),
	}
	rec := pqRecord(mem, cols, 20000, 42)
	path := filepath.Join(t.TempDir(), "floats.parquet")
	writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(3000), parquet.WithDataPageSize(4 << 10)}})
	rec.Release()
	want, _ := aggregateFile(t, mem, []string{path}, Options{Workers: 1}, agg.Default|agg.Ordered)
	for _, workers := range []int{1, 2, 7, 64} {
		got, _ := aggregateFile(t, mem, []string{path}, Options{Workers: workers}, agg.Default|agg.Ordered)
		assert.Equal(t, want, got, "%d workers", workers)
	}
}

// Several files: the rows of the ordered aggregates count on across them,
// and a column a file lacks is null there.
func TestPagePathAcrossFiles(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	all := pqCols()
	var paths []string
	for i, cols := range [][]pqCol{all[:5], all[3:9], all} {
		rec := pqRecord(mem, cols, 900+100*i, uint64(10+i))
		p := filepath.Join(dir, fmt.Sprintf("part%d.parquet", i))
		writePQ(t, p, rec, pqConfigs()[i])
		rec.Release()
		paths = append(paths, p)
	}
	for _, aggs := range []agg.Set{agg.Default, agg.Default | agg.Ordered} {
		want, _ := aggregateFile(t, mem, paths, Options{ArrowDecode: true}, aggs)
		got, sum := aggregateFile(t, mem, paths, Options{Workers: 3}, aggs)
		assert.Equal(t, want, got)
		assert.Equal(t, int64(900+1000+1100), sum.Rows)
	}
}

// Which columns take the page path, and why the others do not.
func TestPageLeafOf(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	rec := pqRecord(mem, pqCols(), 100, 1)
	defer rec.Release()
	reasons := func(cfg pqConfig) map[string]string {
		path := filepath.Join(dir, cfg.name+".parquet")
		writePQ(t, path, rec, cfg)
		schema, pqf, err := probeParquet(pathSource(t, path))
		require.NoError(t, err)
		out := map[string]string{}
		for _, l := range arrow17.Leaves(schema) {
			sf := &pqf.manifest.Fields[l.Path[0]]
			for _, i := range l.Path[1:] {
				sf = &sf.Children[i]
			}
			_, err := pageLeafOf(pqf.meta, sf.ColIndex, sf.Field.Type)
			out[l.Name] = "paged"
			if err != nil {
				require.ErrorIs(t, err, errNotPaged)
				out[l.Name] = strings.TrimPrefix(err.Error(), errNotPaged.Error()+": ")
			}
		}
		return out
	}
	got := reasons(pqConfig{name: "plain"})
	assert.Equal(t, "paged", got["i32"])
	assert.Equal(t, "paged", got["ts_us_paris"])
	assert.Equal(t, "paged", got["point.a"])
	assert.Equal(t, "paged", got["point.b"])
	assert.Equal(t, "paged", got["day64"], "read as date32: the days as stored")
	assert.Equal(t, "INT32 read as int8", got["i8"])
	assert.Equal(t, "INT32 read as uint16", got["u16"])
	assert.Equal(t, "paged", got["price"], "a decimal as FIXED_LEN_BYTE_ARRAY: widened to Decimal128 by the page path")
	assert.Equal(t, "paged", got["flag"])
	assert.Equal(t, "BYTE_ARRAY read as utf8", got["word"])

	got = reasons(pqConfig{name: "int96-decimal", props: []parquet.WriterProperty{parquet.WithStoreDecimalAsInteger(true)},
		arrow: []pqarrow.WriterOption{pqarrow.WithDeprecatedInt96Timestamps(true)}})
	assert.Equal(t, "paged", got["ts_ns"], "INT96 converted to nanoseconds")
	assert.Equal(t, "paged", got["price"], "a decimal as INT32: widened to Decimal128 by the page path")
	assert.Equal(t, "paged", got["ts_ms"], "only nanoseconds are written as INT96")

	got = reasons(pqConfig{name: "delta", props: []parquet.WriterProperty{parquet.WithDictionaryDefault(false),
		parquet.WithEncodingFor("i64", parquet.Encodings.DeltaBinaryPacked)}})
	assert.Equal(t, "encoding DELTA_BINARY_PACKED", got["i64"])
	assert.Equal(t, "paged", got["i32"])

	list := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int64)
	defer list.Release()
	list.Append(true)
	list.ValueBuilder().(*array.Int64Builder).Append(3)
	arr := list.NewArray()
	defer arr.Release()
	lrec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "l", Type: arr.DataType(), Nullable: true}}, nil), []arrow.Array{arr}, 1)
	defer lrec.Release()
	path := filepath.Join(dir, "list.parquet")
	writePQ(t, path, lrec, pqConfig{})
	_, pqf, err := probeParquet(pathSource(t, path))
	require.NoError(t, err)
	_, err = pageLeafOf(pqf.meta, 0, arrow.PrimitiveTypes.Int64)
	assert.EqualError(t, err, "not aggregated from pages: repeated column")
}

// chunkRanges lists the byte ranges of the column chunks of a Parquet file.
func chunkRanges(t *testing.T, path string) [][2]int64 {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer pf.Close()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	var out [][2]int64
	for rg := 0; rg < pf.NumRowGroups(); rg++ {
		rgm := pf.MetaData().RowGroup(rg)
		for c := 0; c < rgm.NumColumns(); c++ {
			cc, err := rgm.ColumnChunk(c)
			require.NoError(t, err)
			off, n, err := chunkRange(pf.MetaData(), cc, fi.Size())
			require.NoError(t, err)
			out = append(out, [2]int64{off, off + n})
		}
	}
	return out
}

// goodFile writes 1,500 rows of the page path's columns (seed ci) as
// Parquet file dir/good.parquet in configuration cfg, and returns its path
// and bytes: the file the corrupt-page tests damage.
func goodFile(t *testing.T, dir string, ci int, cfg pqConfig) (string, []byte) {
	t.Helper()
	rec := pqRecord(memory.DefaultAllocator, pqCols()[:21], 1500, uint64(ci))
	good := filepath.Join(dir, "good.parquet")
	writePQ(t, good, rec, cfg)
	rec.Release()
	data, err := os.ReadFile(good)
	require.NoError(t, err)
	return good, data
}

// Damaged pages never crash or hang the page path: every failure is an
// *Error naming the file, and nothing is reported for a file that failed.
func TestPagePathCorruptPages(t *testing.T) {
	dir := t.TempDir()
	for ci, cfg := range pqConfigs()[:4] {
		good, data := goodFile(t, dir, ci, cfg)
		r := rand.New(rand.NewPCG(uint64(ci), 3))
		failures := 0
		for k, cr := range chunkRanges(t, good) {
			if k%3 != ci%3 {
				continue // a third of the chunks per configuration: enough, and quick
			}
			for trial := 0; trial < 6; trial++ {
				d := bytes.Clone(data)
				off := cr[0] + r.Int64N(cr[1]-cr[0])
				switch trial % 3 {
				case 0: // random bytes
					for i := off; i < min(off+8, cr[1]); i++ {
						d[i] = byte(r.Uint32())
					}
				case 1: // a run of 0xFF (huge varints, levels, indices)
					for i := off; i < min(off+5, cr[1]); i++ {
						d[i] = 0xFF
					}
				default: // one flipped bit
					d[off] ^= 1 << r.IntN(8)
				}
				path := filepath.Join(dir, fmt.Sprintf("bad-%d-%d-%d.parquet", ci, k, trial))
				require.NoError(t, os.WriteFile(path, d, 0o644))
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				sum, _, err := aggregatePaths(ctx, t, memory.DefaultAllocator, []string{path}, nil, Options{Workers: 4})
				require.NoError(t, ctx.Err(), "%s: hung", path)
				cancel()
				if err != nil {
					failures++
					var e *Error
					require.ErrorAs(t, err, &e, "%s: %v", path, err)
					assert.Equal(t, path, e.Path)
					assert.Nil(t, sum)
				}
				os.Remove(path)
			}
		}
		assert.Positive(t, failures, cfg.name)
	}
}

// A cancelled context stops the page path's workers.
func TestPagePathCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := pqRecord(mem, pqCols()[:5], 3000, 5)
	path := filepath.Join(t.TempDir(), "c.parquet")
	writePQ(t, path, rec, pqConfigs()[0])
	rec.Release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := aggregatePaths(ctx, t, mem, []string{path}, nil, Options{Workers: 2})
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}

// Pages of more rows than a window (dictionary indices and values spread
// for the ordered aggregates go a window at a time).
func TestPagePathLargePages(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cols := pqCols()
	rec := pqRecord(mem, []pqCol{cols[0], cols[1], cols[4], cols[8], cols[12], cols[20]}, 3*pageWindow+1234, 9)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "large.parquet")
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithDataPageSize(64 << 20), parquet.WithDataPageVersion(v),
			parquet.WithDictionaryPageSizeLimit(64 << 20), parquet.WithMaxRowGroupLength(1 << 20)}})
		pf, err := file.OpenParquetFile(path, false)
		require.NoError(t, err)
		pr, err := pf.RowGroup(0).GetColumnPageReader(0)
		require.NoError(t, err)
		var sizes []int32
		for pr.Next() {
			sizes = append(sizes, pr.Page().NumValues())
		}
		require.NoError(t, pf.Close())
		require.Len(t, sizes, 2, "a dictionary page, then one data page")
		require.Equal(t, int32(rec.NumRows()), sizes[1], "of every row")
		for _, aggs := range []agg.Set{agg.Default, agg.Default | agg.Ordered} {
			want, _ := aggregateFile(t, mem, []string{path}, Options{ArrowDecode: true}, aggs)
			got, sum := aggregateFile(t, mem, []string{path}, Options{Workers: 2}, aggs)
			assert.Equal(t, want, got)
			assert.Equal(t, pageReason, sum.Plan[0].Reason)
		}
	}
}

// fakeGPU is a GPU backend that aggregates on the CPU, and counts the views
// it is given.
type fakeGPU struct {
	cpu   cpu.CPU
	views atomic.Int64
	// mapped, when set, says whether b lies in a mapped file: a view that
	// does is counted in inMapping (the GPU backend must get copies).
	mapped    func(b []byte) bool
	inMapping atomic.Int64
}

func (g *fakeGPU) Name() string { return "gpu" }
func (g *fakeGPU) Update(ctx context.Context, views []*column.View, states []*agg.State) error {
	g.views.Add(int64(len(views)))
	if g.mapped != nil {
		for _, v := range views {
			if g.mapped(v.Values) || g.mapped(v.Validity) {
				g.inMapping.Add(1)
			}
		}
	}
	return g.cpu.Update(ctx, views, states)
}

// fileMapping returns whether a slice lies in a mapping of the file path
// by this process (/proc/self/maps).
func fileMapping(t *testing.T, path string) func(b []byte) bool {
	return func(b []byte) bool {
		if len(b) == 0 {
			return false
		}
		maps, err := os.ReadFile("/proc/self/maps")
		require.NoError(t, err)
		p := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
		for _, line := range strings.Split(string(maps), "\n") {
			f := strings.Fields(line)
			if len(f) < 6 || f[5] != path {
				continue
			}
			var lo, hi uint64
			if _, err := fmt.Sscanf(f[0], "%x-%x", &lo, &hi); err == nil && p >= lo && p < hi {
				return true
			}
		}
		return false
	}
}
func (g *fakeGPU) Handles(*column.View) bool { return true }
func (g *fakeGPU) Close() error              { return nil }

// With a GPU, the page path still reads the columns it takes, and folds
// their windows through the one engine, whose planner places them (here: a
// GPU forced): the same results. The pages of a mapped file (uncompressed
// pages are folded where they lie) reach the GPU backend as copies: it
// reads them in goroutines that could not catch a fault of the mapping.
func TestPagePathWithGPU(t *testing.T) {
	for _, cfg := range []pqConfig{pqConfigs()[0], pqConfigs()[3]} {
		t.Run(cfg.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rec := pqRecord(mem, pqCols()[:12], 3000, 8)
			path := filepath.Join(t.TempDir(), "gpu.parquet")
			writePQ(t, path, rec, cfg)
			rec.Release()
			want, _ := aggregateFile(t, mem, []string{path}, Options{}, agg.Default)

			gpu := &fakeGPU{cpu: cpu.CPU{Threads: 1}, mapped: fileMapping(t, path)}
			eng, err := engine.New(engine.WithGPU(gpu), engine.WithDevice(engine.DeviceGPU),
				engine.WithCalibration(planner.Calibration{Host: "test", CPUPerThread: 10e9, CPUMax: 10e9, MaxThreads: 1, HostMemory: 100e9,
					CPUOverhead: time.Microsecond, GPU: "fake", H2DPinned: 20e9, H2DPageable: 5e9, HostStaged: 10e9, DeviceRead: 1e12,
					Launch: 20 * time.Microsecond}), engine.WithAllocator(mem))
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
			paged := 0
			for i, r := range sum.Results {
				assert.Equal(t, want[i], render(r))
				if sum.Plan[i].Reason == pageReason {
					paged++
				}
			}
			assert.Positive(t, paged, "columns aggregated from their pages")
			assert.Positive(t, gpu.views.Load(), "views placed on the GPU")
			assert.Zero(t, gpu.inMapping.Load(), "views of the mapped file given to the GPU backend")
		})
	}
}

// The page path reads each page header once: the walk that checks a chunk
// is the one its pages are read from (a second walk, or arrow-go's page
// reader parsing them again, would double the count).
func TestPagePathParsesEachHeaderOnce(t *testing.T) {
	dir := t.TempDir()
	cols := pqCols()[:21] // the page path's columns
	for ci, cfg := range pqConfigs()[:4] {
		t.Run(cfg.name, func(t *testing.T) {
			rec := pqRecord(memory.DefaultAllocator, cols, 2500, uint64(ci))
			path := filepath.Join(dir, cfg.name+".parquet")
			writePQ(t, path, rec, cfg)
			rec.Release()
			// The pages of the file, as arrow-go's page reader finds them
			// (it does not use parsePageHeader).
			pf, err := file.OpenParquetFile(path, false)
			require.NoError(t, err)
			pages := 0
			for rg := 0; rg < pf.NumRowGroups(); rg++ {
				for c := 0; c < pf.MetaData().Schema.NumColumns(); c++ {
					pr, err := pf.RowGroup(rg).GetColumnPageReader(c)
					require.NoError(t, err)
					for pr.Next() {
						pages++
					}
					require.NoError(t, pr.Err())
				}
			}
			require.NoError(t, pf.Close())

			var parses atomic.Int64
			headerParsed = func() { parses.Add(1) }
			defer func() { headerParsed = nil }()
			_, sum := aggregateFile(t, memory.DefaultAllocator, []string{path}, Options{Workers: 3}, agg.Default)
			for _, p := range sum.Plan {
				require.Equal(t, pageReason, p.Reason, p.Name)
			}
			assert.Equal(t, int64(pages), parses.Load(), "page headers parsed, for %d pages", pages)
		})
	}
}

// goroutineID is the id of the calling goroutine.
func goroutineID() string {
	var buf [64]byte
	f := strings.Fields(string(buf[:runtime.Stack(buf[:], false)]))
	return f[1] // "goroutine N [running]:"
}

// goroutineCtx is a context that records the goroutines that ask it for
// its error (every worker of the CPU backend does, before its first morsel).
type goroutineCtx struct {
	context.Context
	mu  sync.Mutex
	ids map[string]bool
}

func (c *goroutineCtx) Err() error {
	c.mu.Lock()
	c.ids[goroutineID()] = true
	c.mu.Unlock()
	return c.Context.Err()
}

// A window of the page path is one morsel: the engine's CPU backend folds
// it in the caller's goroutine, however many threads it has (the workers
// are the page path's parallelism). Two morsels would fan out.
func TestPageWindowFoldsInline(t *testing.T) {
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithThreads(4))
	require.NoError(t, err)
	defer eng.Close()
	vals := make([]byte, 8*2*pageWindow)
	for _, n := range []int{pageWindow, 2 * pageWindow} {
		v := column.View{Type: arrow.PrimitiveTypes.Float64, Kind: column.Float64, Len: n, Values: vals[:8*n]}
		st := agg.New(column.Float64.Family(), 0)
		ctx := &goroutineCtx{Context: context.Background(), ids: map[string]bool{}}
		require.NoError(t, eng.UpdateView(ctx, &v, &st))
		others := 0
		for id := range ctx.ids {
			if id != goroutineID() {
				others++
			}
		}
		if n <= pageWindow {
			assert.Zero(t, others, "goroutines of a one-morsel view")
		} else {
			assert.Positive(t, others, "goroutines of a two-morsel view (the test sees a fan-out)")
		}
	}
}

// The package decides nothing by whether the engine has a GPU (its planner
// places each view), and reads no page through arrow-go's page reader.
func TestNoGPURuleNorPageReader(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		for _, bad := range []string{"HasGPU(", "NewPageReader(", "GetColumnPageReader("} {
			assert.NotContains(t, string(src), bad, name)
		}
	}
}

// BenchmarkParquetPaths aggregates a file of the page path's columns from
// its pages and through pqarrow.
func BenchmarkParquetPaths(b *testing.B) {
	cols := pqCols()[:21]
	rec := pqRecord(memory.DefaultAllocator, cols, 200_000, 1)
	path := filepath.Join(b.TempDir(), "bench.parquet")
	f, err := os.Create(path)
	require.NoError(b, err)
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(50_000)), pqarrow.DefaultWriterProps())
	require.NoError(b, err)
	require.NoError(b, w.Write(rec))
	require.NoError(b, w.Close())
	rec.Release()
	fi, err := os.Stat(path)
	require.NoError(b, err)
	srcs, err := Expand([]string{path})
	require.NoError(b, err)
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU))
	require.NoError(b, err)
	defer eng.Close()
	for _, arrowDecode := range []bool{false, true} {
		b.Run(map[bool]string{false: "pages", true: "pqarrow"}[arrowDecode], func(b *testing.B) {
			d, err := Open(context.Background(), srcs, Options{ArrowDecode: arrowDecode})
			require.NoError(b, err)
			defer d.Close()
			sel, err := d.Select(nil)
			require.NoError(b, err)
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := d.Aggregate(context.Background(), eng, sel, AggregateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestWidenDecimalsOracle widens big-endian two's complement decimals of
// every width from 1 to 16 bytes to little-endian Decimal128 words, checked
// against math/big.
func TestWidenDecimalsOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for w := 1; w <= 16; w++ {
		const k = 64
		src := make([]byte, w*k)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		src[0], src[w] = 0x80, 0x7f // (the extremes' sign bytes)
		dst := make([]byte, 16*k)
		widenDecimals(dst, src, w, k)
		for i := 0; i < k; i++ {
			v := src[i*w : (i+1)*w]
			want := new(big.Int).SetBytes(v)
			if v[0]&0x80 != 0 {
				want.Sub(want, new(big.Int).Lsh(big.NewInt(1), uint(8*w)))
			}
			lo := binary.LittleEndian.Uint64(dst[16*i:])
			hi := int64(binary.LittleEndian.Uint64(dst[16*i+8:]))
			got := new(big.Int).Lsh(big.NewInt(hi), 64)
			got.Add(got, new(big.Int).SetUint64(lo))
			require.Equal(t, want.String(), got.String(), "width %d, value %d", w, i)
		}
	}
}
