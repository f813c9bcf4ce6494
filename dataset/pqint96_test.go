package dataset

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
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
)

func int96Of(t time.Time) []byte {
	days := floorDiv(t.Unix(), 86400) + julianUnixEpoch
	nanos := t.UnixNano() - (days-julianUnixEpoch)*86400*int64(time.Second)
	b := binary.LittleEndian.AppendUint64(nil, uint64(nanos))
	return binary.LittleEndian.AppendUint32(b, uint32(days))
}

// INT96 timestamps convert to counts of a unit since the epoch (a finer
// part rounded down); one outside the unit's range is an error naming its
// instant, not a wrapped value.
func TestInt96Convert(t *testing.T) {
	in := time.Date(2024, 1, 1, 12, 34, 56, 123456789, time.UTC)
	old := time.Date(1700, 6, 1, 0, 0, 1, 5, time.UTC)
	before := time.Date(1969, 12, 31, 23, 59, 59, 999999500, time.UTC) // -500 ns
	src := append(append(int96Of(in), int96Of(old)...), int96Of(before)...)
	out := make([]byte, 24)
	get := func(i int) int64 { return int64(binary.LittleEndian.Uint64(out[8*i:])) }
	require.NoError(t, int96Convert(out, src, 3, arrow.Nanosecond))
	assert.Equal(t, []int64{in.UnixNano(), old.UnixNano(), -500}, []int64{get(0), get(1), get(2)})
	require.NoError(t, int96Convert(out, src, 3, arrow.Microsecond))
	assert.Equal(t, []int64{in.UnixMicro(), old.UnixMicro(), -1}, []int64{get(0), get(1), get(2)})
	require.NoError(t, int96Convert(out, src, 3, arrow.Millisecond))
	assert.Equal(t, []int64{in.UnixMilli(), old.UnixMilli(), -1}, []int64{get(0), get(1), get(2)})
	require.NoError(t, int96Convert(out, src, 3, arrow.Second))
	assert.Equal(t, []int64{in.Unix(), old.Unix(), -1}, []int64{get(0), get(1), get(2)})

	// 290000-12-30T23:00:00Z (Spark: 9089380393200000000 µs): days past any
	// int64 of nanoseconds, within microseconds
	far := binary.LittleEndian.AppendUint64(nil, uint64(23*time.Hour))
	far = binary.LittleEndian.AppendUint32(far, uint32(105201161+julianUnixEpoch))
	err := int96Convert(out, far, 1, arrow.Nanosecond)
	assert.EqualError(t, err, "INT96 timestamp 290000-12-30T23:00:00Z does not fit timestamp[ns] (1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z), which arrow-go reads INT96 as; read INT96 in microseconds to reach it (the command's --int96-unit us, the library's Options.Int96)")
	require.NoError(t, int96Convert(out, far, 1, arrow.Microsecond))
	assert.Equal(t, int64(9089380393200000000), get(0))
	edge := binary.LittleEndian.AppendUint64(nil, uint64(time.Hour))
	edge = binary.LittleEndian.AppendUint32(edge, uint32(106752+julianUnixEpoch)) // 2262-04-12T01:00
	assert.ErrorContains(t, int96Convert(out, edge, 1, arrow.Nanosecond), "INT96 timestamp 2262-04-12T01:00:00Z does not fit")
	// Spark's encoding of 290000-12-31T01:00:00+02:00: its microseconds
	// since the Julian epoch wrapped around (a negative day and negative
	// nanoseconds); read back modulo 2^64, as Spark and Arrow C++ read it.
	sparkNanos, sparkDay := int64(-32509551616000), int32(-105862232)
	spark := binary.LittleEndian.AppendUint64(nil, uint64(sparkNanos))
	spark = binary.LittleEndian.AppendUint32(spark, uint32(sparkDay))
	require.NoError(t, int96Convert(out, spark, 1, arrow.Microsecond))
	assert.Equal(t, int64(9089380393200000000), get(0))
	require.NoError(t, int96Convert(out, spark, 1, arrow.Second))
	assert.Equal(t, int64(9089380393200), get(0))
	assert.ErrorContains(t, int96Convert(out, spark, 1, arrow.Nanosecond), "does not fit timestamp[ns]")
	// The largest Julian day (5.9 million years): its microseconds since
	// the Julian epoch overflow, in every unit.
	top := binary.LittleEndian.AppendUint64(nil, 0)
	top = binary.LittleEndian.AppendUint32(top, math.MaxInt32)
	for _, u := range []arrow.TimeUnit{arrow.Microsecond, arrow.Second} {
		assert.ErrorContains(t, int96Convert(out, top, 1, u), fmt.Sprintf("INT96 timestamp of Julian day 2147483647 does not fit timestamp[%s]", u))
	}
}

func TestParseInt96Unit(t *testing.T) {
	for _, c := range []struct {
		s    string
		u    Int96Unit
		unit arrow.TimeUnit
	}{{"ns", Int96Nanoseconds, arrow.Nanosecond}, {"us", Int96Microseconds, arrow.Microsecond}, {"ms", Int96Milliseconds, arrow.Millisecond}, {"s", Int96Seconds, arrow.Second}} {
		u, err := ParseInt96Unit(c.s)
		require.NoError(t, err)
		assert.Equal(t, c.u, u)
		assert.Equal(t, c.unit, u.TimeUnit())
		assert.Equal(t, c.s, u.String())
	}
	_, err := ParseInt96Unit("µs")
	assert.EqualError(t, err, `INT96 unit "µs": want ns, us, ms or s`)
	assert.Equal(t, arrow.Nanosecond, Int96Unit(0).TimeUnit(), "the zero value")
}

// INT96 columns are aggregated from their pages as pqarrow decodes them
// (in range), PLAIN and dictionary-encoded.
func TestInt96PagePath(t *testing.T) {
	mem := memory.DefaultAllocator
	dt := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	b := array.NewTimestampBuilder(mem, dt)
	defer b.Release()
	base := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	for i := 0; i < 5000; i++ {
		if i%7 == 3 {
			b.AppendNull()
			continue
		}
		b.Append(arrow.Timestamp(base + int64(i%50)*int64(time.Hour)*24*365 + int64(i)))
	}
	arr := b.NewArray()
	defer arr.Release()
	rec := oneColumn("ts", arr)
	defer rec.Release()
	dir := t.TempDir()
	for _, dict := range []bool{false, true} {
		path := filepath.Join(dir, "int96.parquet")
		f, err := os.Create(path)
		require.NoError(t, err)
		w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(parquet.WithDictionaryDefault(dict)),
			pqarrow.NewArrowWriterProperties(pqarrow.WithDeprecatedInt96Timestamps(true)))
		require.NoError(t, err)
		require.NoError(t, w.Write(rec))
		require.NoError(t, w.Close())
		_, pqf, err := probeParquet(pathSource(t, path))
		require.NoError(t, err)
		pl, err := pageLeafOf(pqf.meta, 0, dt)
		require.NoError(t, err)
		assert.True(t, pl.int96)
		paged, _ := aggregateFile(t, mem, []string{path}, Options{}, agg.All)
		decoded, _ := aggregateFile(t, mem, []string{path}, Options{ArrowDecode: true}, agg.All)
		assert.Equal(t, decoded, paged, "dictionary %v", dict)
	}
}

// int96_from_spark.parquet: its values past 2262 are refused in
// nanoseconds, naming the column and the first such instant
// (9999-12-31T01:00:00-02:00), instead of wrapping around to 1816 and 2147;
// read in microseconds, they are the instants its README gives.
func TestInt96FromSpark(t *testing.T) {
	path := parquetTesting(t, "int96_from_spark.parquet")
	srcs, err := Expand([]string{path})
	require.NoError(t, err)
	_, _, err = aggregatePaths(t.Context(), t, memory.DefaultAllocator, []string{srcs[0].Path}, nil, Options{})
	require.Error(t, err)
	assert.ErrorContains(t, err, `column "a": page 0: the dictionary: INT96 timestamp 9999-12-31T03:00:00Z does not fit timestamp[ns]`)

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, aggs := range []agg.Set{agg.Default, agg.All} {
		sum, _, err := aggregatePathsAggs(t, mem, []string{srcs[0].Path}, nil, Options{Int96: Int96Microseconds}, aggs)
		require.NoError(t, err)
		require.Len(t, sum.Results, 1)
		r := sum.Results[0]
		assert.Equal(t, "timestamp[us, tz=UTC]", r.Type.String())
		assert.Equal(t, int64(5), r.Count)
		assert.Equal(t, int64(1), r.NullCount)
		// 1704141296123456, 1704070800000000, 253402225200000000,
		// 1735599600000000, null, 9089380393200000000 (README)
		assert.Equal(t, int64(1704070800000000), int64(r.Min.(*scalar.Timestamp).Value))
		assert.Equal(t, int64(9089380393200000000), int64(r.Max.(*scalar.Timestamp).Value))
	}
	// pqarrow decodes INT96 as nanoseconds only: Options.ArrowDecode with
	// another unit is refused, not wrapped.
	_, _, err = aggregatePaths(t.Context(), t, memory.DefaultAllocator, []string{srcs[0].Path}, nil, Options{Int96: Int96Microseconds, ArrowDecode: true})
	assert.ErrorIs(t, err, arrow.ErrNotImplemented)
	assert.ErrorContains(t, err, "INT96 timestamps read as timestamp[us, tz=UTC] through pqarrow")
}

// int96Schema retypes the INT96 columns at the top and in structs, keeps
// those in lists in nanoseconds, and the page path reads each in its unit.
func TestInt96Schema(t *testing.T) {
	ns := &arrow.TimestampType{Unit: arrow.Nanosecond}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: ns, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "t", Type: ns, Nullable: true}), Nullable: true},
		{Name: "l", Type: arrow.ListOf(ns), Nullable: true},
		{Name: "z", Type: ns, Nullable: true},
	}, nil)
	at := time.Date(2024, 1, 1, 12, 34, 56, 123456789, time.UTC)
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := 0; i < 3; i++ {
		ts := arrow.Timestamp(at.UnixNano() + int64(i)*int64(time.Hour))
		b.Field(0).(*array.TimestampBuilder).Append(ts)
		b.Field(1).(*array.Int64Builder).Append(int64(i))
		sb := b.Field(2).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i))
		sb.FieldBuilder(1).(*array.TimestampBuilder).Append(ts + 1000)
		lb := b.Field(3).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.TimestampBuilder).Append(ts)
		b.Field(4).(*array.TimestampBuilder).Append(ts + 2000)
	}
	rec := b.NewRecord()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "int96.parquet")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(),
		pqarrow.NewArrowWriterProperties(pqarrow.WithDeprecatedInt96Timestamps(true)))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())

	src := pathSource(t, path)
	got, _, err := probeParquetFixed(src, nil, nil, Int96Milliseconds)
	require.NoError(t, err)
	const ms, nsUTC = "timestamp[ms, tz=UTC]", "timestamp[ns, tz=UTC]" // (INT96 is UTC)
	assert.Equal(t, ms, got.Field(0).Type.String())
	assert.Equal(t, arrow.PrimitiveTypes.Int64, got.Field(1).Type)
	assert.Equal(t, ms, got.Field(2).Type.(*arrow.StructType).Field(1).Type.String())
	assert.Equal(t, nsUTC, got.Field(3).Type.(*arrow.ListType).Elem().String(), "in a list: nanoseconds")
	assert.Equal(t, ms, got.Field(4).Type.String())
	plain, _, err := probeParquetFixed(src, nil, nil, Int96Nanoseconds)
	require.NoError(t, err)
	assert.Equal(t, nsUTC, plain.Field(0).Type.String())

	sum, _, err := aggregatePaths(t.Context(), t, mem, []string{path}, []string{"a", "s.t", "z"}, Options{Int96: Int96Milliseconds})
	require.NoError(t, err)
	for i, off := range []int64{0, 0, 0} {
		r := sum.Results[i]
		assert.Equal(t, ms, r.Type.String(), r.Name)
		assert.Equal(t, at.UnixMilli()+off, int64(r.Min.(*scalar.Timestamp).Value), r.Name)
		assert.Equal(t, at.UnixMilli()+2*3600*1000+off, int64(r.Max.(*scalar.Timestamp).Value), r.Name)
	}
}

// The INT96 values of an encrypted chunk, which pqarrow decodes as
// nanoseconds only, are read in another unit from arrow-go's column reader
// (encryptedInt96): the same answers as the plaintext file's page path,
// nulls included, over several row groups; an instant outside the unit is
// an error there too.
func TestEncryptedInt96(t *testing.T) {
	dt := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	mem := memory.NewGoAllocator()
	b := array.NewTimestampBuilder(mem, dt)
	defer b.Release()
	base := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	for i := 0; i < 700; i++ {
		if i%9 == 4 {
			b.AppendNull()
			continue
		}
		b.Append(arrow.Timestamp(base + int64(i%50)*int64(time.Hour)*24*365 + int64(i)*1001))
	}
	arr := b.NewArray()
	defer arr.Release()
	cb := array.NewInt32Builder(mem)
	defer cb.Release()
	for i := 0; i < arr.Len(); i++ {
		cb.Append(int32(i))
	}
	c := cb.NewArray()
	defer c.Release()
	// (arrow-go's writer needs the first column's metadata in the footer:
	// a plaintext one first)
	rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "c", Type: arrow.PrimitiveTypes.Int32}, {Name: "ts", Type: dt, Nullable: true}}, nil),
		[]arrow.Array{c, arr}, int64(arr.Len()))
	defer rec.Release()
	dir := t.TempDir()
	write := func(name string, encrypted bool) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		require.NoError(t, err)
		props := []parquet.WriterProperty{parquet.WithMaxRowGroupLength(300)}
		if encrypted {
			enc := parquet.ColumnPathToEncryptionPropsMap{"ts": parquet.NewColumnEncryptionProperties("ts", parquet.WithKey(string(testKeyA)))}
			props = append(props, parquet.WithEncryptionProperties(parquet.NewFileEncryptionProperties(string(testFooterKey), parquet.WithEncryptedColumns(enc))))
		}
		w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(props...),
			pqarrow.NewArrowWriterProperties(pqarrow.WithDeprecatedInt96Timestamps(true)))
		require.NoError(t, err)
		require.NoError(t, w.Write(rec))
		require.NoError(t, w.Close())
		return path
	}
	plain, encrypted := write("plain.parquet", false), write("enc.parquet", true)
	keys := &Keys{Footer: testFooterKey, Columns: map[string][]byte{"ts": testKeyA}}
	for _, u := range []Int96Unit{Int96Nanoseconds, Int96Microseconds, Int96Milliseconds, Int96Seconds} {
		want, _ := aggregateFile(t, mem, []string{plain}, Options{Int96: u}, agg.All)
		got, sum := aggregateFile(t, mem, []string{encrypted}, Options{Int96: u, Keys: keys}, agg.All)
		assert.Equal(t, want, got, "%s", u)
		assert.Equal(t, int96Reason, sum.Plan[1].Reason, "%s", u)
	}
}
