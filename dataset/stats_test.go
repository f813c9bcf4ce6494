package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/metadata"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/engine"
)

// statsBackend and statsLocation are the plan's backend and data location,
// as plans print them, of a column answered from statistics alone.
const (
	statsBackend  = "stats"
	statsLocation = "metadata"
)

// Which columns row-group statistics answer.
const (
	statsNever    = iota // floats and byte arrays: no word about statistics
	statsRejected        // of a type they answer, but not these (the plan says why)
	statsSigned          // answered whenever the file has statistics
	statsUnsigned        // also needs a writer whose unsigned statistics are right
	statsDecimal         // when stored as integers
)

// statsCol is a column of the statistics tests.
type statsCol struct {
	pqCol
	answered int
	floats   []string // leaves of a struct column that are floats: never answered
}

func sc(answered int, c pqCol) statsCol { return statsCol{pqCol: c, answered: answered} }

// pqStructReq is a nullable struct of a leaf that is required within it:
// its nulls are the struct's.
var pqStructReq = arrow.StructOf(arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Int64, Nullable: false})

// statsCols are every type statistics answer, with no nulls (required and
// optional), some and only nulls, leaves of structs, and columns they do
// not answer.
func statsCols() []statsCol {
	return []statsCol{
		sc(statsSigned, genCol("i8", arrow.PrimitiveTypes.Int8, true, 0.1, false, func(r *rand.Rand) int8 { return int8(r.Uint32()) })),
		sc(statsSigned, genCol("i16", arrow.PrimitiveTypes.Int16, false, 0, false, func(r *rand.Rand) int16 { return int16(r.Uint32()) })),
		sc(statsSigned, genCol("i32", arrow.PrimitiveTypes.Int32, true, 0.2, true, func(r *rand.Rand) int32 { return int32(r.Uint32()) })),
		sc(statsSigned, genCol("i32_no_nulls", arrow.PrimitiveTypes.Int32, true, 0, true, func(r *rand.Rand) int32 { return int32(r.IntN(100)) - 50 })),
		sc(statsSigned, genCol("i64", arrow.PrimitiveTypes.Int64, true, 0.1, true, func(r *rand.Rand) int64 { return int64(r.Uint64()) })),
		sc(statsSigned, genCol("i64_all_null", arrow.PrimitiveTypes.Int64, true, 1, true, func(r *rand.Rand) int64 { return 1 })),
		sc(statsUnsigned, genCol("u16", arrow.PrimitiveTypes.Uint16, false, 0, false, func(r *rand.Rand) uint16 { return uint16(r.Uint32()) })),
		// arrow-go v17 writes the minimum of a nullable unsigned column as
		// 0xffffffff (apache/arrow-go#209), out of range: never used.
		sc(statsRejected, genCol("u16_nullable", arrow.PrimitiveTypes.Uint16, true, 0, false, func(r *rand.Rand) uint16 { return uint16(r.Uint32()) })),
		sc(statsRejected, genCol("u32_nullable", arrow.PrimitiveTypes.Uint32, true, 0.1, false, func(r *rand.Rand) uint32 { return r.Uint32() })),
		sc(statsUnsigned, genCol("u32", arrow.PrimitiveTypes.Uint32, false, 0, true, func(r *rand.Rand) uint32 { return r.Uint32() | 1<<31 })),
		sc(statsUnsigned, genCol("u64", arrow.PrimitiveTypes.Uint64, false, 0, true, func(r *rand.Rand) uint64 { return r.Uint64() })),
		sc(statsUnsigned, genCol("u8_all_null", arrow.PrimitiveTypes.Uint8, true, 1, false, func(r *rand.Rand) uint8 { return 1 })),
		sc(statsSigned, genCol("day", arrow.FixedWidthTypes.Date32, true, 0.1, true, func(r *rand.Rand) arrow.Date32 { return arrow.Date32(r.IntN(80000) - 40000) })),
		sc(statsSigned, genCol("clock_ms", arrow.FixedWidthTypes.Time32ms, true, 0.1, true, func(r *rand.Rand) arrow.Time32 { return arrow.Time32(r.IntN(86400000)) })),
		sc(statsSigned, genCol("clock_us", arrow.FixedWidthTypes.Time64us, true, 0.1, true, func(r *rand.Rand) arrow.Time64 { return arrow.Time64(r.Int64N(86400e6)) })),
		sc(statsSigned, genCol("clock_ns", arrow.FixedWidthTypes.Time64ns, false, 0, true, func(r *rand.Rand) arrow.Time64 { return arrow.Time64(r.Int64N(86400e9)) })),
		sc(statsSigned, genCol("ts_ms", arrow.FixedWidthTypes.Timestamp_ms, true, 0.1, true, func(r *rand.Rand) arrow.Timestamp { return arrow.Timestamp(r.Int64N(4e12) - 2e12) })),
		sc(statsSigned, genCol("ts_us_paris", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"}, true, 0.1, true,
			func(r *rand.Rand) arrow.Timestamp { return arrow.Timestamp(r.Int64N(4e15)) })),
		sc(statsSigned, genCol("ts_ns", &arrow.TimestampType{Unit: arrow.Nanosecond}, true, 0.1, true, func(r *rand.Rand) arrow.Timestamp { return arrow.Timestamp(r.Int64()) })),
		sc(statsDecimal, genCol("price", &arrow.Decimal128Type{Precision: 9, Scale: 2}, true, 0.1, false, func(r *rand.Rand) decimal128.Num {
			return decimal128.FromI64(r.Int64N(2e8) - 1e8)
		})),
		sc(statsDecimal, genCol("big_price", &arrow.Decimal128Type{Precision: 18, Scale: 4}, false, 0, false, func(r *rand.Rand) decimal128.Num {
			return decimal128.FromI64(r.Int64N(2e17) - 1e17)
		})),
		sc(statsSigned, genCol("yes", arrow.FixedWidthTypes.Boolean, true, 0.2, false, func(r *rand.Rand) bool { return true })),
		sc(statsSigned, genCol("no", arrow.FixedWidthTypes.Boolean, false, 0, false, func(r *rand.Rand) bool { return false })),
		sc(statsSigned, genCol("flag_all_null", arrow.FixedWidthTypes.Boolean, true, 1, false, func(r *rand.Rand) bool { return true })),
		{pqCol{field: arrow.Field{Name: "point", Type: pqStruct, Nullable: true}, nulls: 0.2, fill: fillStruct}, statsSigned, []string{"point.b"}},
		sc(statsSigned, pqCol{field: arrow.Field{Name: "st", Type: pqStructReq, Nullable: true}, nulls: 0.3, fill: func(b array.Builder, r *rand.Rand) {
			sb := b.(*array.StructBuilder)
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Int64Builder).Append(r.Int64N(1000) - 500)
		}}),
		sc(statsRejected, genCol("flag", arrow.FixedWidthTypes.Boolean, true, 0.1, false, func(r *rand.Rand) bool { return r.IntN(3) == 0 })),
		sc(statsNever, genCol("f64", arrow.PrimitiveTypes.Float64, true, 0.1, true, dyadic)),
		sc(statsNever, genCol("f32", arrow.PrimitiveTypes.Float32, false, 0, true, func(r *rand.Rand) float32 { return float32(dyadic(r)) })),
		sc(statsNever, genCol("word", arrow.BinaryTypes.String, true, 0.1, false, func(r *rand.Rand) string { return fmt.Sprint(r.IntN(500)) })),
	}
}

// statsConfig is how a file of the statistics tests is written.
type statsConfig struct {
	name  string
	props []parquet.WriterProperty
	// stats: the file has statistics; unsigned: of unsigned columns too (a
	// writer without arrow-go's bug); decimals: decimals stored as integers.
	stats, unsigned, decimals bool
	// coarser are the columns the file holds in a coarser unit than the
	// arrays it was written from.
	coarser []string
}

func statsConfigs() []statsConfig {
	small := []parquet.WriterProperty{parquet.WithMaxRowGroupLength(700), parquet.WithDataPageSize(1 << 10), parquet.WithBatchSize(128)}
	with := func(p ...parquet.WriterProperty) []parquet.WriterProperty {
		return append(append([]parquet.WriterProperty(nil), small...), p...)
	}
	// arrow-go's statistics of unsigned columns are right when no batch it
	// wrote had nulls, which is the case of the unsigned columns here: a
	// file that says another writer made it has them used.
	other := parquet.WithCreatedBy("parquet-cpp-arrow version 16.1.0")
	return []statsConfig{
		{name: "stats", props: with(parquet.WithCompression(compress.Codecs.Snappy)), stats: true},
		{name: "no-stats", props: with(parquet.WithStats(false)), stats: false},
		{name: "stats-other-writer-v2-plain", props: with(other, parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV2)),
			stats: true, unsigned: true},
		{name: "stats-decimal-as-int", props: with(other, parquet.WithStoreDecimalAsInteger(true)), stats: true, unsigned: true, decimals: true},
		{name: "stats-format-1.0", props: with(other, parquet.WithVersion(parquet.V1_0)), stats: true, unsigned: true, coarser: []string{"ts_ns"}},
		{name: "no-stats-decimal-as-int", props: with(parquet.WithStats(false), parquet.WithStoreDecimalAsInteger(true))},
	}
}

// answeredIn reports whether the statistics of file cfg answer leaf name
// of column c.
func (c statsCol) answeredIn(cfg statsConfig, name string) bool {
	switch c.answered {
	case statsSigned:
		return cfg.stats && !slices.Contains(c.floats, name)
	case statsUnsigned:
		return cfg.stats && cfg.unsigned
	case statsDecimal:
		return cfg.stats && cfg.decimals
	}
	return false
}

// leafNames are the names of the leaves of column c.
func (c statsCol) leafNames() []string {
	st, ok := c.field.Type.(*arrow.StructType)
	if !ok {
		return []string{c.field.Name}
	}
	var out []string
	for _, f := range st.Fields() {
		out = append(out, c.field.Name+"."+f.Name)
	}
	return out
}

// statsAggSets are the sets of aggregates statistics answer, and some they
// do not.
var statsAggSets = []agg.Set{
	statsAggs, agg.Count, agg.Min | agg.Max, agg.NullCount, agg.Max | agg.Count,
	agg.Default, statsAggs | agg.First, agg.Sum | agg.Min,
}

// aggregateWith aggregates every column of the files with the aggregates.
func aggregateWith(t testing.TB, mem memory.Allocator, paths []string, opts Options, aopts AggregateOptions) ([]string, *Summary, error) {
	t.Helper()
	srcs, err := Expand(paths)
	require.NoError(t, err)
	opts.Mem = mem
	d, err := Open(context.Background(), srcs, opts)
	require.NoError(t, err)
	defer d.Close()
	sel, err := d.Select(nil)
	require.NoError(t, err)
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithAllocator(mem), engine.WithThreads(2))
	require.NoError(t, err)
	defer eng.Close()
	sum, err := d.Aggregate(context.Background(), eng, sel, aopts)
	if err != nil {
		return nil, nil, err
	}
	out := make([]string, len(sum.Results))
	for i, r := range sum.Results {
		out[i] = render(r)
	}
	return out, sum, nil
}

// inMemoryResults aggregates rec with the CPU engine, by leaf name.
func inMemoryResults(t *testing.T, mem memory.Allocator, rec arrow.Record, aggs agg.Set) map[string]string {
	t.Helper()
	eng := newEngine(t, mem)
	acc, err := eng.NewAccumulator(rec.Schema(), engine.Request{Aggs: aggs})
	require.NoError(t, err)
	require.NoError(t, acc.Add(context.Background(), rec))
	out := map[string]string{}
	for _, r := range acc.Results() {
		out[r.Name] = render(r)
	}
	return out
}

// Statistics give the answers reading the values gives, to the last bit:
// those of the pages, of pqarrow's arrays and of the engine on the arrays
// the file was written from; for every type they answer, with nulls or
// without, over several row groups, and for the files and aggregates they
// do not answer. The plan says which columns they answered, with no bytes
// read.
func TestStatisticsMatchDecoding(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	cols := statsCols()
	pcols := make([]pqCol, len(cols))
	for i, c := range cols {
		pcols[i] = c.pqCol
	}
	rec := pqRecord(mem, pcols, 2500, 5)
	defer rec.Release()
	const rowGroups = 4 // 2500 rows, 700 a row group
	var paths []string
	for _, cfg := range statsConfigs() {
		path := filepath.Join(dir, cfg.name+".parquet")
		writePQ(t, path, rec, pqConfig{props: cfg.props})
		paths = append(paths, path)
	}
	for ci, cfg := range statsConfigs() {
		t.Run(cfg.name, func(t *testing.T) {
			for _, aggs := range statsAggSets {
				arrays := inMemoryResults(t, mem, rec, aggs)
				decoded, _, err := aggregateWith(t, mem, paths[ci:ci+1], Options{ArrowDecode: true}, AggregateOptions{Aggs: aggs, IgnoreStatistics: true})
				require.NoError(t, err)
				ignored, _, err := aggregateWith(t, mem, paths[ci:ci+1], Options{Workers: 3}, AggregateOptions{Aggs: aggs, IgnoreStatistics: true})
				require.NoError(t, err)
				require.Equal(t, decoded, ignored, "aggs %s", aggs)
				usesStats := aggs&^statsAggs == 0
				for _, workers := range []int{1, 3} {
					got, sum, err := aggregateWith(t, mem, paths[ci:ci+1], Options{Workers: workers}, AggregateOptions{Aggs: aggs})
					require.NoError(t, err)
					require.Equal(t, decoded, got, "aggs %s, %d workers", aggs, workers)
					byName := map[string]int{}
					for i, r := range sum.Results {
						byName[r.Name] = i
						if !slices.Contains(cfg.coarser, r.Name) {
							assert.Equal(t, arrays[r.Name], got[i], "aggs %s: the engine on the arrays", aggs)
						}
					}
					for _, c := range cols {
						for _, name := range c.leafNames() {
							i, ok := byName[name]
							require.True(t, ok, name)
							p := sum.Plan[i]
							if usesStats && c.answeredIn(cfg, name) {
								assert.Equal(t, statsBackend, p.BackendName(), "%s: %s", name, p.Reason)
								assert.Equal(t, statsLocation, p.LocationName(), name)
								assert.Equal(t, statsReason(rowGroups, rowGroups), p.Reason, name)
								assert.Zero(t, p.Bytes, name)
							} else {
								assert.NotContains(t, p.BackendName(), statsBackend, "%s: %s", name, p.Reason)
								if usesStats && c.answered != statsNever && !slices.Contains(c.floats, name) {
									assert.Contains(t, p.Reason, "; row-group statistics not used: ", name)
								} else {
									assert.NotContains(t, p.Reason, "statistics", name)
								}
								assert.Positive(t, p.Bytes, name)
							}
						}
					}
				}
			}
		})
	}
	// The files as one dataset (but the one of another type): some answered
	// from statistics, some not.
	paths = slices.DeleteFunc(paths, func(p string) bool { return strings.Contains(p, "format-1.0") })
	for _, aggs := range statsAggSets[:3] {
		want, _, err := aggregateWith(t, mem, paths, Options{ArrowDecode: true}, AggregateOptions{Aggs: aggs, IgnoreStatistics: true})
		require.NoError(t, err)
		got, sum, err := aggregateWith(t, mem, paths, Options{Workers: 2}, AggregateOptions{Aggs: aggs})
		require.NoError(t, err)
		assert.Equal(t, want, got, "aggs %s", aggs)
		assert.Equal(t, int64(len(paths)*2500), sum.Rows)
	}
}

// Statistics do not hide a corrupt column chunk: one whose value count is
// not its row group's is read, and that is an error.
func TestStatisticsOfACorruptChunk(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	rec := pqRecord(mem, []pqCol{genCol("i64", arrow.PrimitiveTypes.Int64, true, 0.1, true, func(r *rand.Rand) int64 { return r.Int64() })}, 2000, 1)
	path := filepath.Join(dir, "good.parquet")
	writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(500)}})
	rec.Release()
	bad := filepath.Join(dir, "bad.parquet")
	rewriteFooter(t, path, bad, func(md *metadata.FileMetaData) { md.RowGroups[2].Columns[0].MetaData.NumValues-- })
	_, _, err := aggregateWith(t, mem, []string{bad}, Options{}, AggregateOptions{Aggs: statsAggs})
	assert.ErrorContains(t, err, "row group 2: column \"i64\": the column chunk has 499 values, the row group 500 rows")
}

// footer returns the offset of the Parquet footer of data and the decoded
// metadata.
func footer(t *testing.T, data []byte) (int, *metadata.FileMetaData) {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	at := len(data) - 8 - n
	md, err := metadata.NewFileMetaData(data[at:len(data)-8], nil)
	require.NoError(t, err)
	return at, md
}

// rewriteFooter rewrites the footer of the Parquet file at path after edit
// changed its metadata, into a new file.
func rewriteFooter(t *testing.T, path, out string, edit func(md *metadata.FileMetaData)) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	at, md := footer(t, data)
	edit(md)
	meta, err := md.Serialize(context.Background())
	require.NoError(t, err)
	var b bytes.Buffer
	b.Write(data[:at])
	b.Write(meta)
	require.NoError(t, binary.Write(&b, binary.LittleEndian, uint32(len(meta))))
	b.WriteString("PAR1")
	require.NoError(t, os.WriteFile(out, b.Bytes(), 0o644))
}

// columnIndex is the Parquet leaf column of a dotted name.
func columnIndex(t *testing.T, md *metadata.FileMetaData, name string) int {
	t.Helper()
	i := md.Schema.ColumnIndexByName(name)
	require.GreaterOrEqual(t, i, 0, name)
	return i
}

// Statistics that cannot be right, or of writers known to get them wrong,
// are not used: the chunks are read, and the answers are those of the
// values.
func TestStatisticsUntrusted(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	cols := statsCols()
	pcols := make([]pqCol, len(cols))
	for i, c := range cols {
		pcols[i] = c.pqCol
	}
	rec := pqRecord(mem, pcols, 2500, 9)
	path := filepath.Join(dir, "good.parquet")
	writePQ(t, path, rec, pqConfig{props: statsConfigs()[3].props})
	rec.Release()
	aggs := AggregateOptions{Aggs: statsAggs}
	want, _, err := aggregateWith(t, mem, []string{path}, Options{}, AggregateOptions{Aggs: statsAggs, IgnoreStatistics: true})
	require.NoError(t, err)

	i64 := func(v int64) *int64 { return &v }
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	cases := []struct {
		name   string
		column string
		edit   func(md *metadata.FileMetaData, col int)
		// why the column, or one of its row groups, is not answered from
		// statistics
		why string
		// some: the column is still answered from the other row groups
		// (false: from none).
		some bool
	}{
		{"min above max", "i32", func(md *metadata.FileMetaData, col int) {
			s := md.RowGroups[1].Columns[col].MetaData.Statistics
			s.MinValue, s.MaxValue = s.MaxValue, s.MinValue
		}, "row group 1: min_value 2133611924 above max_value -2131405049", true},
		{"more nulls than rows", "i64", func(md *metadata.FileMetaData, col int) {
			md.RowGroups[0].Columns[col].MetaData.Statistics.NullCount = i64(701)
		}, "row group 0: null count 701 of 700 rows", true},
		{"negative null count", "day", func(md *metadata.FileMetaData, col int) {
			md.RowGroups[2].Columns[col].MetaData.Statistics.NullCount = i64(-1)
		}, "row group 2: null count -1 of 700 rows", true},
		{"no null count", "ts_ms", func(md *metadata.FileMetaData, col int) {
			md.RowGroups[3].Columns[col].MetaData.Statistics.NullCount = nil
		}, "row group 3: no null count", true},
		{"nulls in a required column", "i16", func(md *metadata.FileMetaData, col int) {
			md.RowGroups[0].Columns[col].MetaData.Statistics.NullCount = i64(1)
		}, "row group 0: null count 1 in a required column", true},
		{"no statistics", "st.c", func(md *metadata.FileMetaData, col int) {
			md.RowGroups[2].Columns[col].MetaData.Statistics = nil
		}, "row group 2: no statistics", true},
		{"no min", "clock_us", func(md *metadata.FileMetaData, col int) {
			md.RowGroups[1].Columns[col].MetaData.Statistics.MinValue = nil
		}, "row group 1: no min_value and max_value", true},
		{"short max", "clock_ms", func(md *metadata.FileMetaData, col int) {
			s := md.RowGroups[1].Columns[col].MetaData.Statistics
			s.MaxValue = s.MaxValue[:3]
		}, "are not INT32 values", true},
		{"out of range", "i8", func(md *metadata.FileMetaData, col int) {
			md.RowGroups[2].Columns[col].MetaData.Statistics.MaxValue = le32(200)
		}, "row group 2: min_value -128 or max_value 200 outside the range of the column type", true},
		{"unsigned above the maximum", "u16", func(md *metadata.FileMetaData, col int) {
			md.RowGroups[0].Columns[col].MetaData.Statistics.MaxValue = le32(1 << 16)
		}, "row group 0: min_value 58 or max_value 65536 outside the range of the column type", true},
		{"boolean min above max", "yes", func(md *metadata.FileMetaData, col int) {
			md.RowGroups[0].Columns[col].MetaData.Statistics.MinValue = []byte{1}
			md.RowGroups[0].Columns[col].MetaData.Statistics.MaxValue = []byte{0}
		}, "row group 0: min_value 1 above max_value 0", true},
		{"boolean not 0 or 1", "no", func(md *metadata.FileMetaData, col int) {
			md.RowGroups[3].Columns[col].MetaData.Statistics.MinValue = []byte{2}
		}, "row group 3: min_value 02 and max_value 00 are not BOOLEAN values", true},
		{"boolean of both values", "no", func(md *metadata.FileMetaData, col int) {
			md.RowGroups[1].Columns[col].MetaData.Statistics.MaxValue = []byte{1}
		}, "row group 1: false and true values", true},
		{"only the deprecated min and max", "ts_ns", func(md *metadata.FileMetaData, col int) {
			s := md.RowGroups[0].Columns[col].MetaData.Statistics
			s.Min, s.Max, s.MinValue, s.MaxValue = s.MinValue, s.MaxValue, nil, nil
		}, "row group 0: no min_value and max_value", true},
		{"undefined column order", "i64", func(md *metadata.FileMetaData, col int) {
			md.ColumnOrders = nil
		}, "no type-defined column order", false},
		{"unsigned of parquet-mr before 1.10", "u64", func(md *metadata.FileMetaData, col int) {
			s := "parquet-mr version 1.9.0"
			md.CreatedBy = &s
		}, `unsigned statistics of "parquet-mr version 1.9.0", not known to be right`, false},
		{"unsigned of arrow-go 18.0", "u64", func(md *metadata.FileMetaData, col int) {
			s := "parquet-go version 18.0.0-SNAPSHOT"
			md.CreatedBy = &s
		}, `unsigned statistics of "parquet-go version 18.0.0-SNAPSHOT", not known to be right`, false},
		{"unsigned of an unknown writer", "u32", func(md *metadata.FileMetaData, col int) {
			s := "arrowagg tests"
			md.CreatedBy = &s
		}, `unsigned statistics of "arrowagg tests", not known to be right`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".parquet")
			rewriteFooter(t, path, bad, func(md *metadata.FileMetaData) { c.edit(md, columnIndex(t, md, c.column)) })
			got, sum, err := aggregateWith(t, mem, []string{bad}, Options{Workers: 2}, aggs)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			for i, r := range sum.Results {
				p := sum.Plan[i]
				if r.Name != c.column {
					continue
				}
				assert.Positive(t, p.Bytes)
				if c.some {
					assert.Equal(t, statsBackend+"+cpu", p.BackendName())
					assert.True(t, strings.HasPrefix(p.Reason, "from row-group statistics (3 of 4 row groups; not "), p.Reason)
					assert.Contains(t, p.Reason, "; not row group ")
					assert.Contains(t, p.Reason, c.why)
					assert.Contains(t, p.Reason, "); the others: ")
				} else {
					assert.Equal(t, "cpu", p.BackendName(), p.Reason)
					assert.Contains(t, p.Reason, "; row-group statistics not used: "+c.why)
				}
			}
		})
	}
}

// A column answered from statistics is not read: with its pages
// overwritten, the answers stay; read, they are an error.
func TestStatisticsReadNoPages(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	cols := []pqCol{
		genCol("i64", arrow.PrimitiveTypes.Int64, true, 0.1, true, func(r *rand.Rand) int64 { return int64(r.Uint64()) }),
		genCol("i8", arrow.PrimitiveTypes.Int8, true, 0.1, false, func(r *rand.Rand) int8 { return int8(r.Uint32()) }),
		genCol("ts", arrow.FixedWidthTypes.Timestamp_us, false, 0, true, func(r *rand.Rand) arrow.Timestamp { return arrow.Timestamp(r.Int64()) }),
	}
	rec := pqRecord(mem, cols, 5000, 3)
	path := filepath.Join(dir, "good.parquet")
	writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(1000), parquet.WithCompression(compress.Codecs.Snappy)}})
	rec.Release()
	want, _, err := aggregateWith(t, mem, []string{path}, Options{}, AggregateOptions{Aggs: statsAggs, IgnoreStatistics: true})
	require.NoError(t, err)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	at, _ := footer(t, data)
	for i := 4; i < at; i++ { // every page, after the magic number
		data[i] = 0xff
	}
	wiped := filepath.Join(dir, "wiped.parquet")
	require.NoError(t, os.WriteFile(wiped, data, 0o644))
	got, sum, err := aggregateWith(t, mem, []string{wiped}, Options{}, AggregateOptions{Aggs: statsAggs})
	require.NoError(t, err)
	assert.Equal(t, want, got)
	for _, p := range sum.Plan {
		assert.Equal(t, statsBackend, p.BackendName(), p.Name)
		assert.Zero(t, p.Bytes, p.Name)
		assert.Equal(t, statsReason(5, 5), p.Reason)
	}
	_, _, err = aggregateWith(t, mem, []string{wiped}, Options{}, AggregateOptions{Aggs: statsAggs, IgnoreStatistics: true})
	assert.Error(t, err, "the pages are read without statistics")
	_, _, err = aggregateWith(t, mem, []string{wiped}, Options{}, AggregateOptions{Aggs: statsAggs | agg.Sum})
	assert.Error(t, err, "the pages are read for sums")
}

// BenchmarkStatistics aggregates count, null_count, min and max of a file
// of integer and timestamp columns from its row-group statistics and from
// its chunks, read (from their pages, or through pqarrow for int16).
func BenchmarkStatistics(b *testing.B) {
	cols := []pqCol{
		genCol("i64", arrow.PrimitiveTypes.Int64, true, 0.1, true, func(r *rand.Rand) int64 { return int64(r.Uint64()) }),
		genCol("i32", arrow.PrimitiveTypes.Int32, true, 0.1, true, func(r *rand.Rand) int32 { return int32(r.Uint32()) }),
		genCol("i16", arrow.PrimitiveTypes.Int16, true, 0.1, false, func(r *rand.Rand) int16 { return int16(r.Uint32()) }),
		genCol("ts", arrow.FixedWidthTypes.Timestamp_us, false, 0, true, func(r *rand.Rand) arrow.Timestamp { return arrow.Timestamp(r.Int64()) }),
	}
	const rows = 4_000_000
	rec := pqRecord(memory.DefaultAllocator, cols, rows, 1)
	path := filepath.Join(b.TempDir(), "bench.parquet")
	f, err := os.Create(path)
	require.NoError(b, err)
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(256<<10)), pqarrow.DefaultWriterProps())
	require.NoError(b, err)
	require.NoError(b, w.Write(rec))
	require.NoError(b, w.Close())
	rec.Release()
	fi, err := os.Stat(path)
	require.NoError(b, err)
	for _, ignore := range []bool{false, true} {
		b.Run(map[bool]string{false: "statistics", true: "read"}[ignore], func(b *testing.B) {
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := aggregateWith(b, memory.DefaultAllocator, []string{path}, Options{}, AggregateOptions{Aggs: statsAggs, IgnoreStatistics: ignore}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
