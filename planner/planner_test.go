package planner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/backend/cpu"
)

// h100Host is the calibration measured on the H100 host (16 cores): pinned
// uploads 55 GB/s, pageable 8, staged 45, device read 3 TB/s, 24 µs launch,
// Go 4.3 GB/s per goroutine up to 51.3 GB/s.
func h100Host() Calibration {
	return Calibration{Host: "h100-host", CPUPerThread: 4.3e9, CPUMax: 51.3e9, MaxThreads: 16, CPUOverhead: 3 * time.Microsecond,
		GPU: "H100", H2DPinned: 55e9, H2DPageable: 8e9, HostStaged: 45e9, DeviceRead: 3e12, Launch: 24 * time.Microsecond}
}

func TestPlanDecisions(t *testing.T) {
	cal := h100Host()
	require.NoError(t, cal.Validate())
	plan := Plan([]Column{
		{Name: "small", Bytes: 4 << 10, GPUCapable: true},
		{Name: "resident", Bytes: 4 << 10, Location: Device, GPUCapable: true},
		{Name: "big", Bytes: 1 << 30, GPUCapable: true},
		{Name: "strings", Bytes: 1 << 30},
		{Name: "pinned", Bytes: 1 << 30, Location: Pinned, GPUCapable: true},
	}, cal, Options{})
	require.Equal(t, CPU, plan[0].Backend, plan[0].Reason())
	require.Contains(t, plan[0].Reason(), "launch latency dominates")
	require.Equal(t, GPU, plan[1].Backend, plan[1].Reason())
	// 16 cores read host memory about as fast as it goes: staging a share
	// through the GPU would only add memory traffic.
	require.Equal(t, CPU, plan[2].Backend, plan[2].Reason())
	require.Greater(t, plan[2].SplitTime, plan[2].CPUTime)
	require.Equal(t, CPU, plan[3].Backend)
	require.Contains(t, plan[3].Reason(), "does not handle")
	// Pinned memory goes to the GPU by DMA at 55 GB/s, faster than the CPU.
	require.Equal(t, GPU, plan[4].Backend, plan[4].Reason())
	for _, d := range plan {
		require.Equal(t, d.Estimate, map[Backend]time.Duration{CPU: d.CPUTime, GPU: d.GPUTime, Split: d.SplitTime}[d.Backend])
	}
}

// TestSplitPays: on a host whose memory is much faster than both its cores
// and its PCIe link, both at once beats either alone, in proportion to their
// rates.
func TestSplitPays(t *testing.T) {
	cal := Calibration{Host: "desktop", CPUPerThread: 4e9, CPUMax: 30e9, MaxThreads: 8, HostMemory: 150e9, CPUOverhead: 3 * time.Microsecond,
		GPU: "x", H2DPinned: 25e9, H2DPageable: 6e9, HostStaged: 20e9, DeviceRead: 1e12, Launch: 20 * time.Microsecond}
	d := Plan([]Column{{Name: "big", Bytes: 1 << 30, GPUCapable: true}}, cal, Options{})[0]
	require.Equal(t, Split, d.Backend, d.Reason())
	require.InDelta(t, 20.0/50, d.GPUFraction, 1e-9)
	require.Less(t, float64(d.SplitTime), 0.65*float64(min(d.CPUTime, d.GPUTime)))
	// With the memory no faster than the cores, the split does not pay.
	cal.HostMemory = 0
	d = Plan([]Column{{Name: "big", Bytes: 1 << 30, GPUCapable: true}}, cal, Options{})[0]
	require.NotEqual(t, Split, d.Backend, d.Reason())
}

// TestCrossover: as a host column grows, the choice moves from the CPU to
// the GPU (one goroutine) and never back; with 16 goroutines the CPU keeps it.
func TestCrossover(t *testing.T) {
	cal := h100Host()
	for _, tc := range []struct {
		threads int
		flips   bool
	}{{1, true}, {16, false}} {
		prev := CPU
		var flip int64
		for b := int64(1 << 10); b <= 8<<30; b *= 2 {
			d := Plan([]Column{{Name: "x", Bytes: b, GPUCapable: true}}, cal, Options{Threads: tc.threads})[0]
			if d.Backend != prev {
				require.NotEqual(t, CPU, d.Backend, "threads=%d bytes=%d went back to the cpu", tc.threads, b)
				if flip == 0 {
					flip = b
				}
			}
			prev = d.Backend
		}
		require.Equal(t, tc.flips, flip != 0, "threads=%d", tc.threads)
		t.Logf("threads=%d: the GPU path pays from %d bytes", tc.threads, flip)
	}
}

func TestForceAndNoGPU(t *testing.T) {
	cal := h100Host()
	cols := []Column{{Name: "x", Bytes: 1 << 30, GPUCapable: true}, {Name: "s", Bytes: 10}}
	for _, d := range Plan(cols, cal, Options{Force: ForceCPU}) {
		require.Equal(t, CPU, d.Backend)
	}
	forced := Plan(cols, cal, Options{Force: ForceGPU})
	require.Equal(t, GPU, forced[0].Backend)
	require.Equal(t, CPU, forced[1].Backend, "strings stay on the cpu even when the gpu is forced")
	for _, d := range Plan(cols, Defaults(2), Options{}) {
		require.Equal(t, CPU, d.Backend)
		require.NotZero(t, d.CPUTime)
		require.Zero(t, d.GPUTime)
	}
}

func TestCalibrationCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	path, err := CachePath("my host/1", "NVIDIA H100 80GB HBM3")
	require.NoError(t, err)
	require.Equal(t, "calibration-my_host_1-NVIDIA_H100_80GB_HBM3.json", filepath.Base(path))
	_, err = Load(path)
	require.ErrorIs(t, err, ErrNoCache)
	cal := h100Host()
	cal.MeasuredAt = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	require.NoError(t, Save(path, cal))
	got, err := Load(path)
	require.NoError(t, err)
	want := cal
	want.Version = Version
	require.Equal(t, want, got)

	// A calibration of an older layout is measured again.
	old := strings.Replace(string(must(os.ReadFile(path))), fmt.Sprintf(`"version": %d`, Version), `"version": 1`, 1)
	require.NoError(t, os.WriteFile(path, []byte(old), 0o644))
	_, err = Load(path)
	require.ErrorIs(t, err, ErrNoCache)

	bad := cal
	bad.CPUMax = 1
	require.Error(t, Save(path, bad))
	bad = cal
	bad.DeviceRead = 0
	require.ErrorContains(t, bad.Validate(), "GPU")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestCPUTime: spreading a column over goroutines costs its share of the
// fan-out (one per morsel, up to the threads), floats cost their own rate.
func TestCPUTime(t *testing.T) {
	cal := h100Host()
	cal.CPUFanout, cal.CPUFloat = 32*time.Microsecond, 0.8
	one := Column{Bytes: 64 << 10, Values: 16 << 10}
	require.Equal(t, cal.CPUOverhead+seconds(float64(one.Bytes)/cal.CPURate(16)), cal.CPUTime(one, 16), "one morsel: no fan-out")
	four := Column{Bytes: 2 << 20, Values: 4 * cpu.MorselSize}
	require.Equal(t, cal.CPUOverhead+cal.CPUFanout/4+seconds(float64(four.Bytes)/cal.CPURate(16)), cal.CPUTime(four, 16))
	many := Column{Bytes: 64 << 20, Values: 16 << 20}
	require.Equal(t, cal.CPUOverhead+cal.CPUFanout+seconds(float64(many.Bytes)/cal.CPURate(16)), cal.CPUTime(many, 16))
	require.Equal(t, cal.CPUOverhead+seconds(float64(many.Bytes)/cal.CPURate(1)), cal.CPUTime(many, 1), "one thread")
	few := cal
	few.CPUFanoutFew = 8 * time.Microsecond
	require.Equal(t, cal.CPUOverhead+few.CPUFanoutFew+seconds(float64(four.Bytes)/cal.CPURate(16)), few.CPUTime(four, 16),
		"four goroutines: the measured fan-out of four")
	ten := Column{Bytes: 10 << 20, Values: 10 * cpu.MorselSize}
	require.Equal(t, cal.CPUOverhead+few.CPUFanoutFew+(cal.CPUFanout-few.CPUFanoutFew)*6/12+seconds(float64(ten.Bytes)/cal.CPURate(16)),
		few.CPUTime(ten, 16), "ten goroutines: interpolated")
	require.Equal(t, cal.CPUOverhead+few.CPUFanout+seconds(float64(many.Bytes)/cal.CPURate(16)), few.CPUTime(many, 16))
	f := many
	f.Float = true
	require.Equal(t, cal.CPUOverhead+cal.CPUFanout+seconds(float64(f.Bytes)/cal.CPURate(16)), cal.CPUTime(f, 16),
		"16 goroutines: memory-bound, floats as fast")
	require.Equal(t, cal.CPUOverhead+cal.CPUFanout/4+seconds(float64(f.Bytes)/(0.8*cal.CPURate(4))), cal.CPUTime(f, 4),
		"4 goroutines: floats at their own rate")
}

// TestCPUCertainBytes: one-morsel columns below the size are done on the CPU
// before a launch returns, those above not.
func TestCPUCertainBytes(t *testing.T) {
	cal := h100Host()
	cal.CPUFloat = 0.5
	for _, float := range []bool{false, true} {
		n := cal.CPUCertainBytes(float, 16)
		require.Positive(t, n)
		below := Column{Bytes: n - 64, Values: 1000, Float: float}
		above := Column{Bytes: n + 64, Values: 1000, Float: float}
		require.Less(t, cal.CPUTime(below, 16), cal.Launch, "float=%v", float)
		require.Greater(t, cal.CPUTime(above, 16), cal.Launch, "float=%v", float)
	}
	require.Less(t, cal.CPUCertainBytes(true, 16), cal.CPUCertainBytes(false, 16))
	cal.Launch = 0
	require.Zero(t, cal.CPUCertainBytes(false, 16))
}

func TestCPURate(t *testing.T) {
	cal := h100Host()
	require.Equal(t, 4.3e9, cal.CPURate(0))
	require.InDelta(t, 8*4.3e9, cal.CPURate(8), 1)
	require.Equal(t, 51.3e9, cal.CPURate(64))
}

// TestCPUWherever: the shortcut agrees with Plan. Whenever it says the CPU,
// Plan gives the column to the CPU both in ordinary and in page-locked
// memory; and when Plan gives it to the CPU in both and it is too small to
// split, the shortcut says so too.
func TestCPUWherever(t *testing.T) {
	h100 := h100Host()
	h100.HostStaged, h100.H2DPinned, h100.HostMemory = 45e9, 55e9, 150e9
	h100.CPUFanout, h100.CPUFanoutFew = 68*time.Microsecond, 40*time.Microsecond
	desktop := Calibration{Host: "desktop", CPUPerThread: 4e9, CPUMax: 30e9, MaxThreads: 8, HostMemory: 150e9,
		CPUOverhead: 3 * time.Microsecond, GPU: "rtx", H2DPinned: 25e9, H2DPageable: 10e9, HostStaged: 20e9,
		DeviceRead: 900e9, Launch: 10 * time.Microsecond}
	for _, cal := range []Calibration{h100, desktop, Defaults(4)} {
		for _, float := range []bool{false, true} {
			for lg := 10; lg <= 31; lg++ {
				c := Column{Bytes: 1 << lg, Values: 1 << (lg - 2), Float: float, GPUCapable: true}
				opt := Options{Threads: cal.MaxThreads}
				host, pinned := c, c
				host.Location, pinned.Location = Host, Pinned
				both := Plan([]Column{host, pinned}, cal, opt)
				onCPU := both[0].Backend == CPU && both[1].Backend == CPU
				got := cal.CPUWherever(c, cal.MaxThreads, 0)
				if got {
					require.True(t, onCPU, "%s, 2^%d bytes, float %v: the shortcut says the CPU, Plan %s / %s",
						cal.Host, lg, float, both[0].Backend, both[1].Backend)
				}
				if onCPU && c.Bytes < DefaultMinSplitBytes && cal.HasGPU() {
					require.True(t, got, "%s, 2^%d bytes, float %v: Plan says the CPU, the shortcut does not", cal.Host, lg, float)
				}
			}
		}
	}
}

// A column whose type the GPU handles but not an aggregate asked for
// (approx_distinct of decimals) goes to the CPU, resident or pinned or forced, and says
// why; tiny ones too, without a calibration.
func TestPlanCPUAggs(t *testing.T) {
	cal := h100Host()
	cols := []Column{
		{Name: "resident", Bytes: 1 << 30, Location: Device, GPUCapable: true, CPUAggs: true},
		{Name: "pinned", Bytes: 1 << 30, Location: Pinned, GPUCapable: true, CPUAggs: true},
	}
	for _, force := range []Force{Auto, ForceGPU} {
		for i, d := range Plan(cols, cal, Options{Force: force}) {
			require.Equal(t, CPU, d.Backend, "%s: %s", cols[i].Name, d.Reason())
			require.Contains(t, d.Reason(), "does not compute an aggregate asked for")
		}
	}
	plan, ok := PlanTiny([]Column{{Name: "tiny", Bytes: 64, GPUCapable: true, CPUAggs: true}}, 4)
	require.True(t, ok)
	require.Contains(t, plan[0].Reason(), "does not compute an aggregate asked for")
}
