package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
)

// BenchmarkGroupBy groups 4M rows by an int64 key of 10 to 1M distinct
// values, summing an int64 and a float64 column (5% nulls) with count,
// sum, min and max: rows per second of the whole grouping, result
// included.
func BenchmarkGroupBy(b *testing.B) {
	const n = 1 << 22
	mem := memory.NewGoAllocator()
	for _, card := range []int{10, 1000, 1 << 20} {
		kb := array.NewInt64Builder(mem)
		ib := array.NewInt64Builder(mem)
		fb := array.NewFloat64Builder(mem)
		x := uint64(1)
		for i := range n {
			x = x*6364136223846793005 + 1442695040888963407
			kb.Append(int64((x >> 20) % uint64(card)))
			if i%20 == 7 {
				ib.AppendNull()
				fb.AppendNull()
				continue
			}
			ib.Append(int64(x >> 40))
			fb.Append(float64(x>>44) / 8)
		}
		schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
		cols := []arrow.Array{kb.NewArray(), ib.NewArray(), fb.NewArray()}
		rec := array.NewRecord(schema, cols, n)
		b.Run(fmt.Sprintf("groups=%d", card), func(b *testing.B) {
			e := cpuEngine(b, mem, 0)
			req := GroupRequest{Keys: []string{"k"}, Aggs: agg.Count | agg.Sum | agg.Min | agg.Max, CountRows: true}
			b.SetBytes(n * 24)
			for b.Loop() {
				g, err := e.NewGrouper(schema, req)
				require.NoError(b, err)
				// As a file's row groups: batches of 1M rows.
				for lo := int64(0); lo < n; lo += 1 << 20 {
					s := rec.NewSlice(lo, lo+1<<20)
					require.NoError(b, g.Add(context.Background(), s))
					s.Release()
				}
				out, err := g.Result(mem)
				require.NoError(b, err)
				out.Release()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
		rec.Release()
		for _, c := range cols {
			c.Release()
		}
	}
}
