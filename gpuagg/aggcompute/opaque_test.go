package aggcompute_test

import (
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/compute"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/gpuagg/aggcompute"
)

// count counts a list (and a run-end encoded array, by the nulls of its
// runs' values) as Arrow's count does; sum of a list has no kernel, as in
// Arrow.
func TestCountOfLists(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)
	for _, c := range []struct {
		dt          arrow.DataType
		js          string
		valid, null int64
	}{
		{arrow.ListOf(arrow.PrimitiveTypes.Int32), `[[1], null, [], [null]]`, 3, 1},
		{arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64), `[1, 1, null, null, null, 2]`, 3, 3},
	} {
		arr, _, err := array.FromJSON(mem, c.dt, strings.NewReader(c.js))
		require.NoError(t, err)
		require.Equal(t, c.valid, call(t, ctx, "count", nil, arr).(*scalar.Int64).Value, c.dt)
		require.Equal(t, c.null, call(t, ctx, "count", aggcompute.CountOptions{Mode: aggcompute.CountOnlyNull}, arr).(*scalar.Int64).Value, c.dt)
		in := compute.NewDatum(arr)
		_, err = compute.CallFunction(ctx, "sum", nil, in)
		require.ErrorIs(t, err, arrow.ErrNotImplemented, c.dt)
		in.Release()
		arr.Release()
	}
}
