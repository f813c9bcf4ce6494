package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPagesOnGPU(t *testing.T) {
	cal := Defaults(16)
	ok, why := cal.PagesOnGPU(8<<30, 8<<30, 16, false)
	assert.False(t, ok, "no GPU in the calibration")
	assert.Equal(t, "no GPU calibration", why)
	cal.GPU = "H100"
	cal.H2DPinned, cal.HostStaged, cal.DeviceRead = 50e9, 45e9, 2.9e12
	// The H100 host's snappy files hardly compress: the CPU page path wins
	// at 1 and at 8.5 GB (measured: 0.12 against 0.67 s, 0.54 against 1.43).
	for _, n := range []int64{1 << 30, 8500 << 20} {
		ok, why = cal.PagesOnGPU(n, n+n/20, 16, false)
		assert.False(t, ok, "%d bytes: %s", n, why)
	}
	// Pages that compress fourfold on a CPU of 2 threads: the GPU.
	ok, why = cal.PagesOnGPU(1<<30, 4<<30, 2, false)
	assert.True(t, ok, why)
	assert.Contains(t, why, "parquet pages decoded on the gpu")
	assert.False(t, PagesWorthAsking(1<<30, 16), "1 GiB on 16 threads: the CPU before the device could start")
	assert.True(t, PagesWorthAsking(8<<30, 16))
}
