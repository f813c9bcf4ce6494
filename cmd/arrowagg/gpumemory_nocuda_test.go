//go:build !cuda

package main

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/column"
)

// recordingGPU is a GPU backend that takes no column.
type recordingGPU struct{}

func (recordingGPU) Name() string              { return "gpu" }
func (recordingGPU) Handles(*column.View) bool { return false }
func (recordingGPU) Close() error              { return nil }
func (recordingGPU) Update(context.Context, []*column.View, []*agg.State) error {
	return errors.New("recordingGPU takes no column")
}

// --gpu-memory reaches the GPU backend the engine opens. The default build
// has none, so a stand-in is registered for the test.
func TestGPUMemoryReachesTheBackend(t *testing.T) {
	require.False(t, backend.GPUBuiltIn())
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the planner's calibration cache
	var got []backend.GPUConfig
	backend.RegisterGPU(func(cfg backend.GPUConfig) (backend.GPUBackend, error) {
		got = append(got, cfg)
		return recordingGPU{}, nil
	})
	defer backend.RegisterGPU(nil)

	pq := testdata + "/sample.parquet"
	for _, args := range [][]string{
		{"--gpu-memory", "1GiB", pq},
		{"--device", "gpu", "--gpu-memory", "512MiB", pq},
		{pq},
	} {
		res := runIn(t, context.Background(), env{}, append([]string{"-f", "json"}, args...)...)
		require.Equal(t, exitOK, res.code, res.stderr)
	}
	assert.Equal(t, []backend.GPUConfig{{MemoryLimit: 1 << 30}, {MemoryLimit: 512 << 20}, {}}, got)
}
