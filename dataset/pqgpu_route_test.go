//go:build emu || cuda

package dataset

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/engine"
)

// gpuPagesFile writes a Parquet file of every kind the page kernels decode,
// each at several null densities (and required), with small pages and row
// groups, in the page version, codec and dictionary setting given.
func gpuPagesFile(t testing.TB, dir string, v parquet.DataPageVersion, codec compress.Compression, dict bool, rows int) string {
	t.Helper()
	types := []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint32,
		arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
		arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Timestamp_us,
		&arrow.Decimal128Type{Precision: 9, Scale: 2}, &arrow.Decimal128Type{Precision: 18, Scale: 4}, // (INT32, INT64)
		arrow.FixedWidthTypes.Boolean}
	densities := []float64{-1, 0, 0.01, 0.5, 1} // -1: a required column
	var fields []arrow.Field
	for _, dt := range types {
		for _, d := range densities {
			name := fmt.Sprintf("%s_%v", dt, d)
			if d < 0 {
				name = dt.String() + "_req"
			}
			fields = append(fields, arrow.Field{Name: name, Type: dt, Nullable: d >= 0})
		}
	}
	schema := arrow.NewSchema(fields, nil)
	rng := rand.New(rand.NewSource(int64(rows) + int64(v) + int64(codec)))
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range fields {
		d := densities[i%len(densities)]
		distinct := 1 + rng.Intn(3)*500 // few values (dictionaries kept), or many
		for r := 0; r < rows; r++ {
			if d > 0 && rng.Float64() < d {
				b.Field(i).AppendNull()
				continue
			}
			x := rng.Int63n(int64(distinct)) - int64(distinct)/2
			if rng.Intn(50) == 0 {
				x = rng.Int63() // extremes now and then
			}
			switch fb := b.Field(i).(type) {
			case *array.Int32Builder:
				fb.Append(int32(x))
			case *array.Int64Builder:
				fb.Append(x)
			case *array.Uint32Builder:
				fb.Append(uint32(x))
			case *array.Uint64Builder:
				fb.Append(uint64(x))
			case *array.Float32Builder:
				fb.Append(float32(x) / 7)
			case *array.Float64Builder:
				fb.Append(float64(x) / 3)
			case *array.Date32Builder:
				fb.Append(arrow.Date32(int32(x)))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(x))
			case *array.BooleanBuilder: // (few distinct values: long runs of one)
				fb.Append(x&1 == 0)
			case *array.Decimal128Builder: // (within the precision, extremes included)
				lim := int64(1e18)
				if fb.Type().(*arrow.Decimal128Type).Precision == 9 {
					lim = 1e9
				}
				fb.Append(decimal128.FromI64(x % lim))
			}
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	path := filepath.Join(dir, fmt.Sprintf("v%d-%s-dict%v.parquet", v, codec, dict))
	f, err := os.Create(path)
	require.NoError(t, err)
	opts := []parquet.WriterProperty{parquet.WithDataPageVersion(v), parquet.WithCompression(codec),
		parquet.WithDictionaryDefault(dict), parquet.WithDataPageSize(1 << 10), parquet.WithBatchSize(128), parquet.WithMaxRowGroupLength(int64(rows/3 + 1)),
		parquet.WithStats(false), parquet.WithStoreDecimalAsInteger(true)}
	if !dict { // booleans RLE-encoded (else PLAIN: booleans have no dictionary)
		for _, f := range fields {
			if f.Type.ID() == arrow.BOOL {
				opts = append(opts, parquet.WithEncodingFor(f.Name, parquet.Encodings.RLE))
			}
		}
	}
	props := parquet.NewWriterProperties(opts...)
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return path
}

// aggregateOn aggregates every column of path with an engine of device d
// (and GPU backend gpu; nil: the one the engine opens), 2 threads, and
// the options more (after those).
func aggregateOn(t *testing.T, ctx context.Context, path string, d engine.Device, gpu backend.GPUBackend, more ...engine.Option) *Summary {
	t.Helper()
	opts := []engine.Option{engine.WithDevice(d), engine.WithThreads(2)}
	if gpu != nil {
		opts = append(opts, engine.WithGPU(gpu))
	}
	opts = append(opts, more...)
	eng, err := engine.New(opts...)
	require.NoError(t, err)
	defer eng.Close()
	srcs, err := Expand([]string{path})
	require.NoError(t, err)
	ds, err := Open(ctx, srcs, Options{})
	require.NoError(t, err)
	defer ds.Close()
	sel, err := ds.Select(nil)
	require.NoError(t, err)
	sum, err := ds.Aggregate(ctx, eng, sel, AggregateOptions{})
	require.NoError(t, err)
	return sum
}

// checkGPUPages aggregates files of every page version, codec (snappy and
// none, which the kernels read; zstd, gzip and brotli, which the host
// decompresses) and dictionary setting through the GPU page route of backend gpu
// (nil: the one the engine opens) and checks every column against the CPU
// page path: integers (and temporal types) bit for bit, floats' sums within
// a relative 1e-12, counts, minima and maxima exactly.
func checkGPUPages(t *testing.T, gpu backend.GPUBackend) {
	dir := t.TempDir()
	ctx := context.Background()
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		for _, codec := range []compress.Compression{compress.Codecs.Snappy, compress.Codecs.Uncompressed,
			compress.Codecs.Zstd, compress.Codecs.Gzip, compress.Codecs.Brotli} {
			for _, dict := range []bool{true, false} {
				path := gpuPagesFile(t, dir, v, codec, dict, 1200)
				t.Run(filepath.Base(path), func(t *testing.T) {
					cpu := aggregateOn(t, ctx, path, engine.DeviceCPU, nil)
					gpu := aggregateOn(t, ctx, path, engine.DeviceGPU, gpu)
					require.Len(t, gpu.Results, len(cpu.Results))
					for i, c := range cpu.Results {
						g := gpu.Results[i]
						assert.Equal(t, "gpu", gpu.Plan[i].BackendName(), "%s: the GPU page route", c.Name)
						assert.Equal(t, cpu.Plan[i].Bytes, gpu.Plan[i].Bytes, "%s: the pages' bytes decompressed", c.Name)
						assert.Equal(t, 1.0, gpu.Plan[i].GPUFraction, c.Name)
						if hostCodec(codec) {
							assert.Contains(t, gpu.Plan[i].Reason, "its "+codec.String()+" pages decompressed on the cpu first", c.Name)
						} else {
							assert.NotContains(t, gpu.Plan[i].Reason, "decompressed on the cpu", c.Name)
						}
						assert.Equal(t, c.Count, g.Count, c.Name)
						assert.Equal(t, c.NullCount, g.NullCount, c.Name)
						assert.Equal(t, fmt.Sprint(c.Min), fmt.Sprint(g.Min), c.Name)
						assert.Equal(t, fmt.Sprint(c.Max), fmt.Sprint(g.Max), c.Name)
						if cs, ok := c.Sum.(*scalar.Float64); ok && cs.Valid {
							gs := g.Sum.(*scalar.Float64)
							assert.InDelta(t, cs.Value, gs.Value, 1e-12*math.Max(1, math.Abs(cs.Value)), c.Name)
						} else {
							assert.Equal(t, fmt.Sprint(c.Sum), fmt.Sprint(g.Sum), c.Name)
						}
					}
				})
			}
		}
	}
}
