package dataset

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
)

func int96Of(t time.Time) []byte {
	days := t.Unix()/86400 + julianUnixEpoch
	nanos := t.UnixNano() - (days-julianUnixEpoch)*86400*int64(time.Second)
	b := binary.LittleEndian.AppendUint64(nil, uint64(nanos))
	return binary.LittleEndian.AppendUint32(b, uint32(days))
}

// INT96 timestamps convert to nanoseconds since the epoch; one outside
// timestamp[ns]'s range is an error naming its instant, not a wrapped value.
func TestInt96Nanos(t *testing.T) {
	in := time.Date(2024, 1, 1, 12, 34, 56, 123456000, time.UTC)
	old := time.Date(1700, 6, 1, 0, 0, 1, 5, time.UTC)
	out := make([]byte, 16)
	require.NoError(t, int96Nanos(out, append(int96Of(in), int96Of(old)...), 2))
	assert.Equal(t, in.UnixNano(), int64(binary.LittleEndian.Uint64(out)))
	assert.Equal(t, old.UnixNano(), int64(binary.LittleEndian.Uint64(out[8:])))

	// 290000-12-30T23:00:00Z (Spark: 9089380393200000000 µs): days past any
	// int64 of nanoseconds
	far := binary.LittleEndian.AppendUint64(nil, uint64(23*time.Hour))
	far = binary.LittleEndian.AppendUint32(far, uint32(105201161+julianUnixEpoch))
	err := int96Nanos(out, far, 1)
	assert.EqualError(t, err, "INT96 timestamp 290000-12-30T23:00:00Z does not fit timestamp[ns] (1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z), which arrow-go reads INT96 as")
	edge := binary.LittleEndian.AppendUint64(nil, uint64(time.Hour))
	edge = binary.LittleEndian.AppendUint32(edge, uint32(106752+julianUnixEpoch)) // 2262-04-12T01:00
	assert.ErrorContains(t, int96Nanos(out, edge, 1), "INT96 timestamp 2262-04-12T01:00:00Z does not fit")
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

// int96_from_spark.parquet: its values past 2262 are refused, naming the
// column and the first such instant (9999-12-31T01:00:00-02:00), instead of
// wrapping around to 1816 and 2147.
func TestInt96FromSpark(t *testing.T) {
	path := parquetTesting(t, "int96_from_spark.parquet")
	srcs, err := Expand([]string{path})
	require.NoError(t, err)
	_, _, err = aggregatePaths(t.Context(), t, memory.DefaultAllocator, []string{srcs[0].Path}, nil, Options{})
	require.Error(t, err)
	assert.ErrorContains(t, err, `column "a": page 0: the dictionary: INT96 timestamp 9999-12-31T03:00:00Z does not fit timestamp[ns]`)
}
