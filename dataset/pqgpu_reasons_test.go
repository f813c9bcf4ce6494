package dataset

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/planner"
)

// TestCPUReasons: the reasons of a leaf's chunks on the CPU, by row group.
func TestCPUReasons(t *testing.T) {
	why, walk := "parquet pages decoded on the cpu: 1ms estimated, 2ms on the gpu", "parquet pages decoded on the cpu: not a page of the GPU page kernels: encoding X"
	l := parquetLeaf{cpuWhy: []string{why, why, why}}
	assert.Equal(t, why, l.cpuReasons(), "one reason for every chunk")
	l.cpuWhy[1] = walk
	assert.Equal(t, "row groups 0, 2: "+why+"; row groups 1: "+walk, l.cpuReasons())
	l = parquetLeaf{cpuWhy: []string{"", walk, "", ""}, gpu: []bool{true, false, false, true}}
	assert.Equal(t, "row groups 2: "+pageReason+"; row groups 1: "+walk, l.cpuReasons())
	p := l.splitPlan(engine.ColumnPlan{Source: engine.SourcePages, Backend: planner.GPU, Reason: "on the gpu"})
	assert.Equal(t, "cpu+gpu", p.BackendName())
	assert.Equal(t, "row groups 0, 3: on the gpu; row groups 2: "+pageReason+"; row groups 1: "+walk, p.Reason)
	assert.Empty(t, (&parquetLeaf{cpuWhy: []string{"", ""}}).cpuReasons(), "the GPU weighed for none")
	l.gpu = []bool{true, true, true, true}
	assert.Equal(t, "on the gpu", l.splitPlan(engine.ColumnPlan{Reason: "on the gpu"}).Reason)
}

func TestRowGroups(t *testing.T) {
	assert.Equal(t, "", rowGroups(nil))
	assert.Equal(t, "0-2, 4, 6-7", rowGroups([]bool{true, true, true, false, true, false, true, true}))
	assert.Equal(t, "1", rowGroups([]bool{false, true, false}))
	alternate := make([]bool, 334)
	for i := range alternate {
		alternate[i] = i%2 == 0 || i == 301
	}
	assert.Equal(t, "0, 2, 4, 6, 8, 10, 12, …, 332 (168 of 334)", rowGroups(alternate))
	eight := []bool{true, false, true, false, true, false, true, false, true, false, true, false, true, false, true}
	assert.Equal(t, "0, 2, 4, 6, 8, 10, 12, 14", rowGroups(eight), "eight ranges are all listed")
}
