//go:build cuda

package cuda

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
)

// TestLazyBackend: the backend that engine.New opens sets nothing up until
// it must. Probe, Info, DeviceName, Handles, Locate, MemoryInUse and Trim
// leave it without a device thread (no context, no kernels); the first
// Update opens it and aggregates like an eagerly opened backend; Close
// before any use does nothing, and calls after it fail with ErrClosed.
func TestLazyBackend(t *testing.T) {
	b := newBackend()
	require.NoError(t, b.Probe())
	assert.Equal(t, testBackend.Info(), b.Info())
	assert.Equal(t, testBackend.Info().Name, b.DeviceName())
	v := &column.View{Type: arrow.PrimitiveTypes.Int32, Kind: column.Int32, Len: 4, Values: make([]byte, 16)}
	assert.True(t, b.Handles(v))
	assert.Equal(t, backend.Host, b.Locate(v))
	assert.Zero(t, b.MemoryInUse())
	require.NoError(t, b.Trim())
	assert.Nil(t, b.d.opened(), "opened before any work")

	s := agg.New(column.FamilySigned, 0)
	require.NoError(t, b.Update(context.Background(), []*column.View{v}, []*agg.State{&s}))
	assert.EqualValues(t, 4, s.Count)
	assert.NotNil(t, b.d.opened())
	assert.Positive(t, b.MemoryInUse(), "the launch scratch")
	require.NoError(t, b.Close())
	assert.ErrorIs(t, b.Update(context.Background(), []*column.View{v}, []*agg.State{&s}), ErrClosed)

	idle := newBackend()
	require.NoError(t, idle.Close())
	assert.Nil(t, idle.d.opened())
	assert.ErrorIs(t, idle.Update(context.Background(), []*column.View{v}, []*agg.State{&s}), ErrClosed)
}

// TestEngineOpensNothingForTinyInput: an engine under DeviceAuto, with the
// registered backend, aggregates a tiny column without opening the device.
func TestEngineOpensNothingForTinyInput(t *testing.T) {
	e, err := engine.New(engine.WithDevice(engine.DeviceAuto))
	require.NoError(t, err)
	defer e.Close()
	v := &column.View{Type: arrow.PrimitiveTypes.Int64, Kind: column.Int64, Len: 3, Values: make([]byte, 24)}
	s := agg.New(column.FamilySigned, 0)
	before := launches.Load()
	require.NoError(t, e.UpdateView(context.Background(), v, &s))
	assert.EqualValues(t, 3, s.Count)
	assert.Equal(t, before, launches.Load(), "a tiny column went to the GPU")
	// The engine's backend is the registered one; it stays unopened.
	g, err := backend.OpenGPU(backend.GPUConfig{})
	require.NoError(t, err)
	assert.Nil(t, g.(*Backend).d.opened(), "a fresh registered backend opens nothing")
	require.NoError(t, g.Close())
}
