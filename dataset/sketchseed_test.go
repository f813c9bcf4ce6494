package dataset

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
)

// approx_distinct of a file of many row groups, read from its pages by one
// worker or several (each chunk's state seeded by the worker's previous
// chunk of the leaf: pageScratch.sketches), is the estimate of the sketch
// of all its values hash by hash (agg.Sketch.Add), for a column of many
// distinct values, one of about 3000 and one of a few.
func TestApproxDistinctSeededChunks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(7, 11))
	const rows = 240_000
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "many", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "some", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "few", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	refs := [3]*agg.Sketch{new(agg.Sketch), new(agg.Sketch), new(agg.Sketch)}
	valid := [3]int64{0, rows, rows} // (the estimate is at most the count of valid values)
	for range rows {
		if r.IntN(10) == 0 {
			b.Field(0).AppendNull()
		} else {
			valid[0]++
			x := r.Int64N(400_000)<<24 - 1<<40 // (about 166,000 distinct: the estimate not capped by the count)
			b.Field(0).(*array.Int64Builder).Append(x)
			refs[0].Add(agg.HashInt(uint64(x)))
		}
		y := float64(r.IntN(3000)) / 4
		b.Field(1).(*array.Float64Builder).Append(y)
		refs[1].Add(agg.HashFloat(y))
		z := int32(r.IntN(5))
		b.Field(2).(*array.Int32Builder).Append(z)
		refs[2].Add(agg.HashInt(uint64(int64(z))))
	}
	rec := b.NewRecord()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "distinct.parquet")
	writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(20_000), parquet.WithDictionaryDefault(false)}})
	want := make([]int64, len(refs))
	for i, k := range refs {
		s := agg.Counts(column.FamilySigned, valid[i], rows-valid[i])
		s.SetSketch(k)
		want[i] = engine.Finalize(&s, "", arrow.PrimitiveTypes.Int64, agg.ApproxDistinct).ApproxDistinct.(*scalar.Int64).Value
	}
	require.Equal(t, int64(5), want[2])
	require.Less(t, want[0], valid[0]-10_000, "the estimate of many is its sketch's, not the count")
	for _, workers := range []int{1, 3} {
		_, sum := aggregateFile(t, mem, []string{path}, Options{Workers: workers}, agg.Default|agg.ApproxDistinct)
		for i, res := range sum.Results {
			require.Equal(t, engine.SourcePages, sum.Plan[i].Source, "%s is read from its pages", res.Name)
			require.Equal(t, want[i], res.ApproxDistinct.(*scalar.Int64).Value, "%s, %d workers", res.Name, workers)
		}
	}
}
