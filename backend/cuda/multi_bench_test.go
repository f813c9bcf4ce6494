//go:build cuda

package cuda

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
)

// BenchmarkColumns500x1000: one Update of a record batch of 500 columns of
// 1000 rows in Go memory, int64 without nulls and the GPU's types in turn
// with 10% nulls: "multi" packs the columns into one launch (the default),
// "per-column" takes the chunk pipeline, one launch and two copies per
// column (packing off). Each on a backend of its own with the default
// options; the states are checked against the CPU's first. Reports ns/op
// and launches/op.
//
//	./cuda.test -test.run '^$' -test.bench Columns500x1000 -test.benchtime 200x
func BenchmarkColumns500x1000(b *testing.B) {
	const ncols, rows = 500, 1000
	for _, set := range []struct {
		name     string
		types    []arrow.DataType
		nullFrac float64
	}{
		{"int64", []arrow.DataType{arrow.PrimitiveTypes.Int64}, 0},
		{"mixed", gpuTypes, 0.1},
	} {
		r := rand.New(rand.NewPCG(500, 1000))
		views := make([]*column.View, ncols)
		for i := range views {
			arr := randomArray(b, memory.DefaultAllocator, r, set.types[i%len(set.types)], rows, set.nullFrac)
			defer arr.Release()
			views[i] = viewOf(b, arr)
		}
		want := multiStates(views, nil)
		if err := (&cpu.CPU{Threads: 4}).Update(context.Background(), views, statePtrs(want)); err != nil {
			b.Fatal(err)
		}
		for _, mode := range []string{"multi", "per-column"} {
			b.Run(set.name+"/"+mode, func(b *testing.B) {
				be, err := Open()
				if err != nil {
					b.Fatal(err)
				}
				defer be.Close() //nolint:errcheck
				if mode == "per-column" {
					if err := be.d.do(func() error { be.multi.off = true; return nil }); err != nil {
						b.Fatal(err)
					}
				}
				fresh := multiStates(views, nil)
				states := multiStates(views, nil)
				ptrs := statePtrs(states)
				update := func() {
					copy(states, fresh)
					if err := be.Update(context.Background(), views, ptrs); err != nil {
						b.Fatal(err)
					}
				}
				update() // warm-up: stream buffers, the kernel's first use
				for i, v := range views {
					requireSame(b, v, want[i], states[i], "%s column %d", v.Type, i)
				}
				before := launches.Load()
				b.ResetTimer()
				for range b.N {
					update()
				}
				b.StopTimer()
				b.ReportMetric(float64(launches.Load()-before)/float64(b.N), "launches/op")
			})
		}
	}
}
