package gpuagg

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	amath "github.com/apache/arrow/go/v17/arrow/math"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/column"
)

const benchN = 16 << 20

func benchInt64(nullFrac float64) *array.Int64 {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	r := rand.New(rand.NewPCG(1, 2))
	b.Reserve(benchN)
	for i := 0; i < benchN; i++ {
		if nullFrac > 0 && r.Float64() < nullFrac {
			b.UnsafeAppendBoolToBitmap(false)
			continue
		}
		b.UnsafeAppend(r.Int64N(1<<40) - 1<<39)
	}
	return b.NewInt64Array()
}

func benchFloat64(nullFrac float64) *array.Float64 {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	defer b.Release()
	r := rand.New(rand.NewPCG(1, 2))
	b.Reserve(benchN)
	for i := 0; i < benchN; i++ {
		if nullFrac > 0 && r.Float64() < nullFrac {
			b.UnsafeAppendBoolToBitmap(false)
			continue
		}
		b.UnsafeAppend(r.NormFloat64() * 1e6)
	}
	return b.NewFloat64Array()
}

// BenchmarkFused compares the fused sum+min+max+count pass with arrow/math's
// SIMD sum (sum only) on the same data, one goroutine and all of them.
func BenchmarkFused(b *testing.B) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		arr  arrow.Array
	}{
		{"int64", benchInt64(0)}, {"int64-nulls10", benchInt64(0.1)},
		{"float64", benchFloat64(0)}, {"float64-nulls10", benchFloat64(0.1)},
	} {
		bytes := int64(tc.arr.Len() * 8)
		b.Run(tc.name+"/arrow-math-sum", func(b *testing.B) {
			b.SetBytes(bytes)
			var sink float64
			for i := 0; i < b.N; i++ {
				switch a := tc.arr.(type) {
				case *array.Int64:
					sink += float64(amath.Int64.Sum(a))
				case *array.Float64:
					sink += amath.Float64.Sum(a)
				}
			}
			_ = sink
		})
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/fused-threads%d", tc.name, threads), func(b *testing.B) {
				e, err := New(WithThreads(threads), WithDevice(DeviceCPU))
				if err != nil {
					b.Fatal(err)
				}
				v, err := column.ViewOf(tc.arr)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(v.ByteSize())
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					s := NewState(v.Kind.Family())
					if err := e.UpdateView(ctx, &v, &s); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
