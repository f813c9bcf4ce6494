//go:build cuda

package dataset

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/engine"
)

// BenchmarkPagesDeviceOpen times a Parquet file's aggregation by an engine
// whose device is open already (an engine that embeds the library and used
// the GPU before; here its calibration, measured with no cache, opened
// it), under
// --device auto, beside the CPU's: the planner splits the file's chunks
// between the GPU page route and the CPU page path, both at once. The file
// is bench_files.py split's in Go: 24 row groups of 8M int64 rows (64 MiB
// decompressed each), snappy, no dictionary, 1 MiB pages, the even ones the
// file benchmark's random values, the odd ones runs of 4,096 alike. Its
// bytes are the pages' decompressed bytes; gpu-share is the GPU's share of
// them (the plan's GPUFraction).
func BenchmarkPagesDeviceOpen(b *testing.B) {
	const groups, rows = 24, 8 << 20
	path := filepath.Join(b.TempDir(), "split.parquet")
	f, err := os.Create(path)
	require.NoError(b, err)
	schema := arrow.NewSchema([]arrow.Field{{Name: "i64", Type: arrow.PrimitiveTypes.Int64}}, nil)
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(1<<20), parquet.WithMaxRowGroupLength(rows),
		parquet.WithStats(false)), pqarrow.DefaultWriterProps())
	require.NoError(b, err)
	vals := make([]int64, rows)
	for g := 0; g < groups; g++ {
		for r := range vals {
			i := uint64(g*rows + r)
			if g%2 == 0 {
				vals[r] = int64(agg.HashInt(4*i+1)) >> 27
			} else {
				vals[r] = int64(i >> 12)
			}
		}
		bld := array.NewInt64Builder(memory.DefaultAllocator)
		bld.AppendValues(vals, nil)
		col := bld.NewArray()
		rec := array.NewRecord(schema, []arrow.Array{col}, int64(rows))
		require.NoError(b, w.Write(rec))
		rec.Release()
		col.Release()
		bld.Release()
	}
	require.NoError(b, w.Close())
	decoded := decompressedBytes(b, path)
	ctx := context.Background()
	for _, dev := range []engine.Device{engine.DeviceCPU, engine.DeviceAuto} {
		b.Run(dev.String(), func(b *testing.B) {
			b.Setenv("XDG_CACHE_HOME", b.TempDir()) // (no calibration cached: the auto engine's is measured, which opens its device)
			eng, err := engine.New(engine.WithDevice(dev))
			require.NoError(b, err)
			defer eng.Close()
			eng.Calibration(ctx)
			srcs, err := Expand([]string{path})
			require.NoError(b, err)
			ds, err := Open(ctx, srcs, Options{})
			require.NoError(b, err)
			defer ds.Close()
			sel, err := ds.Select(nil)
			require.NoError(b, err)
			b.SetBytes(decoded)
			var share float64
			for b.Loop() {
				sum, err := ds.Aggregate(ctx, eng, sel, AggregateOptions{})
				require.NoError(b, err)
				share = sum.Plan[0].GPUFraction
			}
			b.ReportMetric(share, "gpu-share")
		})
	}
}
