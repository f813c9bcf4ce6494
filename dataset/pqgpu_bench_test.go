package dataset

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
)

// BenchmarkPageCodecs measures, on one goroutine, the rates of the codecs
// the host decompresses (LZ4_RAW's pages written by an encoder of the
// test's): inflate, the GPU page route's host side, the pages decompressed
// into pieces (by a backend whose kernels fold nothing: the device's share
// left out), which planner.HostCodecRates holds; path, the CPU page path
// aggregating the file, whose rate on uncompressed pages is
// planner.PageFoldRate. Its bytes are the pages' decompressed bytes. The
// file has the file benchmark's int64 and float64 columns (row i from
// splitmix64's mix of 4i+1 and 4i+2, the floats 5% null), 4M rows, PLAIN
// pages of 1 MiB.
func BenchmarkPageCodecs(b *testing.B) {
	dir := b.TempDir()
	rec := codecBenchRecord(4 << 20)
	defer rec.Release()
	for _, codec := range []compress.Compression{compress.Codecs.Snappy, compress.Codecs.Zstd, compress.Codecs.Gzip,
		compress.Codecs.Brotli, lz4Raw, compress.Codecs.Uncompressed} {
		path := filepath.Join(dir, codec.String()+".parquet")
		f, err := os.Create(path)
		require.NoError(b, err)
		if codec == lz4Raw { // (arrowagg's LZ4 codec only decodes: an encoder for the writer, then it again)
			compress.RegisterCodec(lz4Raw, lz4RawWriter{})
		}
		w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(parquet.WithCompression(codec),
			parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(1<<20), parquet.WithMaxRowGroupLength(1<<20),
			parquet.WithStats(false)), pqarrow.DefaultWriterProps())
		require.NoError(b, err)
		require.NoError(b, w.Write(rec))
		require.NoError(b, w.Close())
		compress.RegisterCodec(lz4Raw, lz4Codec{hadoop: false})
		decoded := decompressedBytes(b, path)
		srcs, err := Expand([]string{path})
		require.NoError(b, err)
		for _, route := range []string{"path", "inflate"} {
			opts := []engine.Option{engine.WithDevice(engine.DeviceCPU), engine.WithThreads(1)}
			if route == "inflate" {
				opts = []engine.Option{engine.WithDevice(engine.DeviceGPU), engine.WithThreads(1), engine.WithGPU(foldNothing{})}
			}
			// (one goroutine: the engine's thread and the file's one worker)
			eng, err := engine.New(opts...)
			require.NoError(b, err)
			b.Run(route+"/"+codec.String(), func(b *testing.B) {
				d, err := Open(context.Background(), srcs, Options{Workers: 1})
				require.NoError(b, err)
				defer d.Close()
				sel, err := d.Select(nil)
				require.NoError(b, err)
				b.SetBytes(decoded)
				for i := 0; i < b.N; i++ {
					if _, err := d.Aggregate(context.Background(), eng, sel, AggregateOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
			eng.Close()
		}
	}
}

// codecBenchRecord is n rows of the file benchmark's int64 and float64
// columns (bench/cmd/duckfiles/data.go says how they are drawn).
func codecBenchRecord(n int) arrow.Record {
	mix := func(x uint64) uint64 { // splitmix64's mix of x + its gamma, as gen.Mix
		z := x + 0x9e3779b97f4a7c15
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return z ^ z>>31
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	ib, fb := bld.Field(0).(*array.Int64Builder), bld.Field(1).(*array.Float64Builder)
	for i := uint64(0); i < uint64(n); i++ {
		ib.Append(int64(mix(4*i+1)) >> 27)
		r2 := mix(4*i + 2)
		if r2&0xffff < 3277 {
			fb.AppendNull()
			continue
		}
		fb.Append(float64(int64(r2>>11)-1<<52) / math.Exp2(20))
	}
	return bld.NewRecord()
}

// decompressedBytes is the data pages' decompressed bytes of the file at
// path, every column's.
func decompressedBytes(b *testing.B, path string) int64 {
	r, err := file.OpenParquetFile(path, false)
	require.NoError(b, err)
	defer r.Close()
	var n int64
	for rg := 0; rg < r.NumRowGroups(); rg++ {
		md := r.MetaData().RowGroup(rg)
		for c := 0; c < md.NumColumns(); c++ {
			cc, err := md.ColumnChunk(c)
			require.NoError(b, err)
			n += cc.TotalUncompressedSize()
		}
	}
	return n
}

// lz4RawWriter is arrowagg's LZ4_RAW codec with an encoder
// (github.com/pierrec/lz4/v4's block compressor), for writing files.
type lz4RawWriter struct{ lz4Codec }

func (lz4RawWriter) Encode(dst, src []byte) []byte {
	out := make([]byte, lz4.CompressBlockBound(len(src)))
	var c lz4.Compressor
	n, err := c.CompressBlock(src, out)
	if err != nil {
		panic(err)
	}
	return out[:n]
}

func (w lz4RawWriter) EncodeLevel(dst, src []byte, _ int) []byte { return w.Encode(dst, src) }

// foldNothing is a GPU backend whose page kernels fold nothing and take no
// time: the GPU page route's host side alone.
type foldNothing struct{}

func (foldNothing) Name() string                                                 { return "gpu" }
func (foldNothing) Handles(*column.View) bool                                    { return false }
func (foldNothing) Close() error                                                 { return nil }
func (foldNothing) Warm() error                                                  { return nil }
func (foldNothing) HandlesPages(k column.Kind, tracks agg.Set) bool              { return column.PageKind(k) }
func (foldNothing) Update(context.Context, []*column.View, []*agg.State) error   { return nil }
func (foldNothing) UpdatePages(context.Context, *column.Pages, *agg.State) error { return nil }
