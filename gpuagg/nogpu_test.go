//go:build !cuda

package gpuagg

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoGPUInDefaultBuild: without the cuda tag no GPU backend is compiled in;
// asking for the GPU is a clear error and auto falls back to the CPU.
func TestNoGPUInDefaultBuild(t *testing.T) {
	require.False(t, GPUBuiltIn())
	_, err := New(WithDevice(DeviceGPU))
	require.ErrorIs(t, err, ErrNoGPU)
	require.ErrorContains(t, err, "-tags cuda")
	e, err := New(WithDevice(DeviceAuto))
	require.NoError(t, err)
	require.NoError(t, e.Close())
}
