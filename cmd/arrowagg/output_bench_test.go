package main

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// groupsRecord is a grouped result of rows groups as --group-by builds it
// for -c i32,i64,f64 -a count,sum,min,max: a distinct int64 key, then per
// column its count, sum, min and max (sums of int32 as int64, of floats as
// float64).
func groupsRecord(rows int) arrow.Record {
	r := rand.New(rand.NewPCG(1, 2))
	mem := memory.NewGoAllocator()
	fields := []arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}
	var cols []arrow.Array
	keys := array.NewInt64Builder(mem)
	for i := 0; i < rows; i++ {
		keys.Append(int64(i)*7919 + r.Int64N(7919))
	}
	cols = append(cols, keys.NewArray())
	for _, c := range []string{"i32", "i64", "f64"} {
		count := array.NewInt64Builder(mem)
		for i := 0; i < rows; i++ {
			count.Append(1 + r.Int64N(3))
		}
		fields = append(fields, arrow.Field{Name: c + "_count", Type: arrow.PrimitiveTypes.Int64})
		cols = append(cols, count.NewArray())
		for _, a := range []string{"sum", "min", "max"} {
			fields = append(fields, arrow.Field{Name: c + "_" + a, Nullable: true})
			f := &fields[len(fields)-1]
			if c == "f64" {
				f.Type = arrow.PrimitiveTypes.Float64
				b := array.NewFloat64Builder(mem)
				for i := 0; i < rows; i++ {
					b.Append(r.NormFloat64() * 1e6)
				}
				cols = append(cols, b.NewArray())
				continue
			}
			f.Type = arrow.PrimitiveTypes.Int64
			b := array.NewInt64Builder(mem)
			for i := 0; i < rows; i++ {
				b.Append(r.Int64N(1 << 40))
			}
			cols = append(cols, b.NewArray())
		}
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), cols, int64(rows))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// BenchmarkWriteGroups writes a grouped result of a million groups with
// --output, as Parquet and as an Arrow IPC file.
func BenchmarkWriteGroups(b *testing.B) {
	const rows = 1 << 20
	rec := groupsRecord(rows)
	defer rec.Release()
	for _, ext := range []string{"parquet", "arrow"} {
		b.Run(ext, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "groups."+ext)
			for range b.N {
				if err := writeRecord(path, rec, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows*int(rec.NumCols())), "ns/cell")
		})
	}
}
