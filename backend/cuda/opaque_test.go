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
