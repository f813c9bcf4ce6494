//go:build emu || cuda

package dataset

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/stretchr/testify/assert"

	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/planner"
)

// TestPageViewsOnGPU: the values that the CPU page path decodes go where
// the engine puts them, and the plan says where: under --device gpu, a
// decimal column stored as FIXED_LEN_BYTE_ARRAY (which the GPU's page
// kernels do not decode) is decoded on the CPU and aggregated by the GPU
// backend, its plan saying both; under --device cpu it is the CPU's. The
// answers are the same.
func TestPageViewsOnGPU(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: &arrow.Decimal128Type{Precision: 38, Scale: 2}, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for r := 0; r < 5000; r++ {
		if r%7 == 0 {
			b.Field(0).AppendNull()
			continue
		}
		b.Field(0).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(r)*1_000_003 - 2_000_000_000))
	}
	rec := b.NewRecord()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "d.parquet")
	writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(2000), parquet.WithDictionaryDefault(false)}})

	ctx := context.Background()
	want := aggregateOn(t, ctx, path, engine.DeviceCPU, nil)
	assert.Equal(t, "cpu", want.Plan[0].BackendName())
	assert.Equal(t, pageReason, want.Plan[0].Reason)
	gpu := &lazyPageGPU{cpu: cpu.CPU{Threads: 1}}
	cal := planner.Defaults(2)
	cal.GPU = "test"
	cal.H2DPinned, cal.HostStaged, cal.DeviceRead = 50e9, 45e9, 4e12
	got := aggregateOn(t, ctx, path, engine.DeviceGPU, gpu, engine.WithCalibration(cal))
	assertSameColumn(t, "d", want.Results[0], got.Results[0])
	p := got.Plan[0]
	assert.Positive(t, gpu.calls.Load(), "views given to the GPU backend")
	assert.Equal(t, "gpu", p.BackendName())
	assert.Equal(t, 1.0, p.GPUFraction)
	assert.Equal(t, pageGPUReason+" (not for the gpu's page kernels: decimals stored as FIXED_LEN_BYTE_ARRAY of 16 bytes)", p.Reason)
}
