package main

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/arrowagg/arrowagg/bench/internal/gen"
)

// The data of the file set: four columns whose row i is a function of i
// alone, so that every writer (this command, scripts/bench_files.py with
// numpy) writes the very same values and every reader must give the very
// same answers. Row i draws r_c = gen.Mix(4i + c) for columns c = 0..3
// (splitmix64's finalizer over the golden-ratio increment) and takes
//
//	i32 = int32(low 32 bits of r_0)
//	i64 = int64(r_1) >> 27           (|i64| < 2^36: sums of 10^8 rows fit int64)
//	f64 = null when (r_2 & 0xffff) < 3277 (5%), else
//	      float64(int64(r_2 >> 11) - 2^52) / 2^20
//	f32 = float32(int32(r_3 >> 40) - 2^23) / 2^10
//
// Every float is exact (an integer of at most 53 or 24 bits over a power of
// two), so no rounding mode or fused multiply can make two writers differ.

// nullBelow: f64 is null when the low 16 bits of r_2 are below it (5%).
const nullBelow = 3277

// row returns the values of row i (valid: f64 is not null).
func row(i uint64) (i32 int32, i64 int64, f64 float64, valid bool, f32 float32) {
	r0, r1, r2, r3 := gen.Mix(4*i), gen.Mix(4*i+1), gen.Mix(4*i+2), gen.Mix(4*i+3)
	i32 = int32(uint32(r0))
	i64 = int64(r1) >> 27
	valid = r2&0xffff >= nullBelow
	f64 = float64(int64(r2>>11)-1<<52) / (1 << 20)
	f32 = float32(int32(r3>>40)-1<<23) / (1 << 10)
	return
}

var dataSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
}, nil)

// batch returns rows [lo, hi) as a record batch.
func batch(mem memory.Allocator, lo, hi uint64) arrow.Record {
	n := int(hi - lo)
	a := array.NewInt32Builder(mem)
	b := array.NewInt64Builder(mem)
	c := array.NewFloat64Builder(mem)
	d := array.NewFloat32Builder(mem)
	a.Reserve(n)
	b.Reserve(n)
	c.Reserve(n)
	d.Reserve(n)
	for i := lo; i < hi; i++ {
		i32, i64, f64, ok, f32 := row(i)
		a.UnsafeAppend(i32)
		b.UnsafeAppend(i64)
		if ok {
			c.UnsafeAppend(f64)
		} else {
			c.UnsafeAppendBoolToBitmap(false)
		}
		d.UnsafeAppend(f32)
	}
	cols := []arrow.Array{a.NewArray(), b.NewArray(), c.NewArray(), d.NewArray()}
	rec := array.NewRecord(dataSchema, cols, int64(n))
	for _, col := range cols {
		col.Release()
	}
	a.Release()
	b.Release()
	c.Release()
	d.Release()
	return rec
}

// genRows is the rows of one generated batch (and row group of the
// generated Parquet file).
const genRows = 1 << 20

// writeGenerated writes rows rows of the data as an uncompressed Parquet
// file (PLAIN, no dictionary, row groups of genRows rows), for DuckDB to
// read and write again as it writes Parquet.
func writeGenerated(ctx context.Context, path string, rows int64, workers int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Uncompressed),
		parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(genRows),
		parquet.WithStats(false),
	)
	w, err := pqarrow.NewFileWriter(dataSchema, f, props, pqarrow.NewArrowWriterProperties())
	if err != nil {
		f.Close()
		return err
	}
	n := int((rows + genRows - 1) / genRows)
	err = gen.Ordered(ctx, workers, n, func(i int) arrow.Record {
		lo := uint64(i) * genRows
		return batch(memory.DefaultAllocator, lo, min(lo+genRows, uint64(rows)))
	}, func(i int, rec arrow.Record) (bool, error) {
		defer rec.Release()
		if err := w.Write(rec); err != nil {
			return false, fmt.Errorf("writing rows %d..: %w", int64(i)*genRows, err)
		}
		return false, nil
	})
	if cerr := w.Close(); err == nil { // (closes f)
		err = cerr
	}
	return err
}
