//go:build !cuda

package engine

import (
	"testing"

	"github.com/arrowagg/arrowagg/backend"
	"github.com/stretchr/testify/require"
)

// TestNoGPUInDefaultBuild: without the cuda tag no GPU backend is compiled in;
// asking for the GPU is a clear error and auto falls back to the CPU.
func TestNoGPUInDefaultBuild(t *testing.T) {
	require.False(t, backend.GPUBuiltIn())
	_, err := New(WithDevice(DeviceGPU))
	require.ErrorIs(t, err, backend.ErrNoGPU)
	require.ErrorContains(t, err, "-tags cuda")
	e, err := New(WithDevice(DeviceAuto))
	require.NoError(t, err)
	require.NoError(t, e.Close())
}
