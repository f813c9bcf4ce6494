package dataset

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
)

// writeTruncationParquet writes rowGroups row groups of n rows of an int64
// column with nulls and a float64 column, PLAIN (no dictionary), in codec.
func writeTruncationParquet(t *testing.T, path string, codec compress.Compression, rowGroups, n int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithCompression(codec),
		parquet.WithDictionaryDefault(false), parquet.WithMaxRowGroupLength(int64(n))), pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	mem := memory.NewGoAllocator()
	for g := 0; g < rowGroups; g++ {
		ib := array.NewInt64Builder(mem)
		fb := array.NewFloat64Builder(mem)
		for i := 0; i < n; i++ {
			x := int64(g*n + i)
			if x%7 == 0 {
				ib.AppendNull()
			} else {
				ib.Append(x * 31)
			}
			fb.Append(float64(x) / 4)
		}
		cols := []arrow.Array{ib.NewArray(), fb.NewArray()}
		rec := array.NewRecord(schema, cols, int64(n))
		require.NoError(t, w.Write(rec))
		rec.Release()
		cols[0].Release()
		cols[1].Release()
		ib.Release()
		fb.Release()
	}
	require.NoError(t, w.Close())
}

// A Parquet file truncated while it is read (its pages read in place from
// the mapping, or with ReadAt) gives an error naming it, or the right
// answer if the read was over, never a crash (a SIGBUS of the mapping):
// the truncation comes from another goroutine at several points of the
// read, the pages uncompressed (folded where they lie in the mapping) and
// compressed.
func TestParquetTruncatedWhileRead(t *testing.T) {
	dir := t.TempDir()
	for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy} {
		orig := filepath.Join(dir, "orig.parquet")
		writeTruncationParquet(t, orig, codec, 8, 100_000)
		data, err := os.ReadFile(orig)
		require.NoError(t, err)
		want, err := aggregateIPCWith(t, orig, agg.Default, 2, nil)
		require.NoError(t, err)
		size := int64(len(data))
		for _, mapped := range []bool{true, false} {
			withMmap(t, mapped, func(t *testing.T) {
				errs := truncatedWhileRead(t, filepath.Join(dir, "cut.parquet"), data, want,
					[]int64{size / 8, size / 3, size / 2, 3 * size / 4}, []int64{0, size / 4, size / 2, size - 4096}, true)
				assert.Positive(t, errs)
			})
		}
	}
}
