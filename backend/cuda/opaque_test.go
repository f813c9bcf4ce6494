//go:build cuda

package cuda

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
)

// Opaque views (lists, maps, ...: validity only) are never the GPU's: the
// backend refuses them, and an engine that must use the GPU counts them on
// the CPU.
func TestOpaqueStaysOnCPU(t *testing.T) {
	v := &column.View{Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Kind: column.Opaque, Len: 100}
	require.False(t, testBackend.Handles(v))
	s := agg.New(column.FamilyCounts, 0)
	require.ErrorContains(t, testBackend.Update(context.Background(), []*column.View{v}, []*agg.State{&s}), "does not aggregate")

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	arr, _, err := array.FromJSON(mem, arrow.ListOf(arrow.PrimitiveTypes.Int32), strings.NewReader(`[[1], null, [], [null], null]`))
	require.NoError(t, err)
	defer arr.Release()
	e, err := engine.New(engine.WithGPU(testBackend), engine.WithDevice(engine.DeviceGPU), engine.WithAllocator(mem))
	require.NoError(t, err)
	defer e.Close()
	r, err := e.AggregateArray(context.Background(), arr, agg.All)
	require.NoError(t, err)
	require.EqualValues(t, 3, r.Count)
	require.EqualValues(t, 2, r.NullCount)
	require.Nil(t, r.Sum)
	require.Nil(t, r.First)
}

// float16, fixed_size_binary, decimal32 and decimal64 have no kernel: the
// backend refuses them, and an engine that must use the GPU folds them on
// the CPU, with the CPU's results.
func TestNarrowKindsStayOnCPU(t *testing.T) {
	d32, err := arrow17.NewNarrowDecimalType(32, 9, 2)
	require.NoError(t, err)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	fsb4, _, err := array.FromJSON(mem, &arrow.FixedSizeBinaryType{ByteWidth: 4}, strings.NewReader(`["AAAAAQ==", null, "AAAAAg==", "/////w=="]`))
	require.NoError(t, err)
	defer fsb4.Release()
	dec := array.NewExtensionArrayWithStorage(d32, fsb4)
	defer dec.Release()
	half, _, err := array.FromJSON(mem, arrow.FixedWidthTypes.Float16, strings.NewReader(`[1.5, null, -2, 0.25]`))
	require.NoError(t, err)
	defer half.Release()
	gpu, err := engine.New(engine.WithGPU(testBackend), engine.WithDevice(engine.DeviceGPU), engine.WithAllocator(mem))
	require.NoError(t, err)
	defer gpu.Close()
	cpu, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithAllocator(mem))
	require.NoError(t, err)
	defer cpu.Close()
	for _, arr := range []arrow.Array{half, fsb4, dec} {
		v, err := arrow17.ViewOf(arr)
		require.NoError(t, err)
		require.False(t, testBackend.Handles(&v), "%s", arr.DataType())
		got, err := gpu.AggregateArray(context.Background(), arr, agg.All)
		require.NoError(t, err)
		want, err := cpu.AggregateArray(context.Background(), arr, agg.All)
		require.NoError(t, err)
		require.EqualValues(t, 3, got.Count)
		require.Equal(t, want.Min.String(), got.Min.String(), "%s", arr.DataType())
		require.Equal(t, want.Max.String(), got.Max.String(), "%s", arr.DataType())
		if want.Sum != nil {
			require.Equal(t, want.Sum.String(), got.Sum.String(), "%s", arr.DataType())
		}
	}
}
