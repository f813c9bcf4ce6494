//go:build emu

package dataset

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/emugpu"
)

// TestGPUPagesShortOfDevice: a GPU with too little memory for a column's
// pages, even a chunk at a time, leaves that column to the CPU, whose
// answers it gives, the plan saying why; the columns whose chunks fit (a
// batch of them, or one at a time) stay on the GPU. Emulated devices of
// no memory at all, and of room for the small chunks only.
func TestGPUPagesShortOfDevice(t *testing.T) {
	ctx := context.Background()
	path := gpuPagesFile(t, t.TempDir(), parquet.DataPageV1, compress.Codecs.Snappy, true, 1200)
	cpu := aggregateOn(t, ctx, path, engine.DeviceCPU, nil)
	for _, c := range []struct {
		name        string
		deviceBytes int64
		someGPU     bool // some columns fit
	}{{"no memory", 1, false}, {"room for small chunks", 3 << 10, true}} {
		t.Run(c.name, func(t *testing.T) {
			gpu := aggregateOn(t, ctx, path, engine.DeviceGPU, &emugpu.Backend{DeviceBytes: c.deviceBytes})
			require.Len(t, gpu.Results, len(cpu.Results))
			onGPU, short := 0, 0
			for i, want := range cpu.Results {
				assertSameColumn(t, want.Name, want, gpu.Results[i])
				p := gpu.Plan[i]
				switch {
				case p.BackendName() == "gpu":
					onGPU++
					assert.NotContains(t, p.Reason, deviceShortReason, want.Name)
				case strings.Contains(p.Reason, deviceShortReason):
					short++
					assert.Equal(t, "cpu", p.BackendName(), want.Name)
					assert.Equal(t, cpu.Plan[i].Bytes, p.Bytes, "%s: the bytes read once", want.Name)
				default:
					t.Errorf("%s: read by %s, not the GPU, and the plan does not say the device was short: %q",
						want.Name, p.BackendName(), p.Reason)
				}
			}
			assert.Positive(t, short, "columns left to the CPU")
			assert.Equal(t, c.someGPU, onGPU > 0, "columns on the GPU: %d", onGPU)
		})
	}
}
