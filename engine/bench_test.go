package engine

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"
)

// BenchmarkAggregateRecord is the CPU engine over one record batch of 4M
// rows as this front end's arrays (int64, float64 and int32 with 10% nulls,
// and a 16-bit dictionary of strings): the bytes it reads a second. The
// Arrow Go v18 front end runs the same benchmark (it is generated from this
// file) on the same core: their rates compare the two paths.
func BenchmarkAggregateRecord(b *testing.B) {
	const n = 4 << 20
	mem := memory.DefaultAllocator
	i64 := array.NewInt64Builder(mem)
	f64 := array.NewFloat64Builder(mem)
	i32 := array.NewInt32Builder(mem)
	dict := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	for i := range n {
		h := uint64(i) * 0x9e3779b97f4a7c15
		if i%10 == 3 {
			i64.AppendNull()
			f64.AppendNull()
			i32.AppendNull()
		} else {
			i64.Append(int64(h >> 1))
			f64.Append(float64(h>>11) * 0x1p-53)
			i32.Append(int32(h >> 33))
		}
		require.NoError(b, dict.AppendString([]string{"EU", "US", "APAC", "LATAM"}[h>>62]))
	}
	cols := []arrow.Array{i64.NewArray(), f64.NewArray(), i32.NewArray(), dict.NewArray()}
	for _, bld := range []array.Builder{i64, f64, i32, dict} {
		bld.Release()
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "region", Type: cols[3].DataType(), Nullable: true},
	}, nil)
	rec := array.NewRecord(schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	e, err := New(WithDevice(DeviceCPU))
	require.NoError(b, err)
	defer e.Close()
	acc, err := e.NewAccumulator(schema, Request{})
	require.NoError(b, err)
	require.NoError(b, acc.Add(context.Background(), rec))
	var bytes int64
	for _, p := range acc.Plan() {
		bytes += p.Bytes
	}
	b.SetBytes(bytes)
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.AggregateRecord(context.Background(), rec, Request{}); err != nil {
			b.Fatal(err)
		}
	}
}
