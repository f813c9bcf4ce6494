package report

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/planner"
)

// TestPlanShowsResidency: the JSON plan carries a resident column's location
// and reason as the engine wrote them.
func TestPlanShowsResidency(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a := build(t, mem, arrow.PrimitiveTypes.Int64, []int64{1, 2, 3}, nil)
	defer a.Release()
	b := build(t, mem, arrow.PrimitiveTypes.Int64, []int64{4, 5, 6}, nil)
	defer b.Release()
	plan := []engine.ColumnPlan{
		{Name: "c0", Source: engine.SourceArrow, Backend: planner.GPU, Location: planner.Device, Bytes: 24, GPUFraction: 1, Estimated: 20 * time.Microsecond,
			Measured: 31 * time.Microsecond, Reason: "resident on the GPU (uploaded 3 calls ago), read at 3000 GB/s"},
		{Name: "c1", Source: engine.SourceArrow, Backend: planner.GPU, Location: planner.Device, Bytes: 24, GPUFraction: 1,
			Reason: "evicted: uploaded again, resident on the GPU from now on"},
	}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, JSON, Report{Rows: 3, Files: 1, Columns: aggregate(t, mem, agg.Default, a, b), Plan: plan}))
	var doc struct {
		Plan []struct {
			Name, Backend, Location, Reason string
			Bytes                           int64
			GPUFraction                     float64 `json:"gpu_fraction"`
			Estimated                       float64 `json:"estimated_s"`
		} `json:"plan"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc), buf.String())
	require.Len(t, doc.Plan, 2)
	for i, p := range plan {
		got := doc.Plan[i]
		require.Equal(t, []string{p.Name, p.BackendName(), p.LocationName(), p.Reason}, []string{got.Name, got.Backend, got.Location, got.Reason})
		require.Equal(t, p.Bytes, got.Bytes)
		require.Equal(t, p.GPUFraction, got.GPUFraction)
		require.Equal(t, p.Estimated.Seconds(), got.Estimated)
	}
}
