package planner

import (
	"fmt"
	"time"

	"github.com/arrowagg/arrowagg/backend"
)

// Location is where a column's memory lives (backend.Location: a GPU
// backend's Locator tells it).
type Location = backend.Location

// The locations.
const (
	Host   = backend.Host   // ordinary (pageable) host memory, e.g. Go's heap
	Pinned = backend.Pinned // page-locked host memory
	Device = backend.Device // already in GPU memory
)

// Column is what the planner knows of one column.
type Column struct {
	Name     string
	Bytes    int64 // bytes a backend reads: values and validity
	Location Location
	// GPUCapable: the GPU backend handles the column's type (not strings).
	GPUCapable bool
	// CPUAggs: the GPU backend handles the type but not an aggregate asked
	// for (stddev, variance and approx_distinct of decimals), so the CPU
	// takes the column.
	CPUAggs bool
	// Values is the number of values (0: unknown); Float marks floating
	// point values. They refine the CPU's estimate.
	Values int64
	Float  bool
}

// gpuTakes reports whether the GPU backend can take the column at all.
func (c Column) gpuTakes() bool { return c.GPUCapable && !c.CPUAggs }

// Backend is a planner's choice.
type Backend uint8

// The choices.
const (
	CPU   Backend = iota
	GPU           // the whole column on the GPU
	Split         // part on the GPU, the rest on the CPU at the same time
)

func (b Backend) String() string {
	switch b {
	case GPU:
		return "gpu"
	case Split:
		return "cpu+gpu"
	}
	return "cpu"
}

// Force overrides the planner's choice.
type Force uint8

// The overrides.
const (
	Auto Force = iota
	ForceCPU
	ForceGPU
)

// Options tune a plan.
type Options struct {
	Threads int   // CPU goroutines; default the calibration's MaxThreads
	Force   Force // Auto: the fastest estimate
	// MinSplitBytes is the smallest column worth splitting (default 256
	// MiB): below it a split's fixed costs (two pipelines started, both
	// backends' goroutines on the host's cores at once) outweigh what it
	// saves — measured on a 16-core host at 32 MiB: 2.3 times the CPU alone.
	MinSplitBytes int64
}

// Decision is the plan of one column.
type Decision struct {
	Column  string
	Backend Backend
	// GPUFraction is the share of the column's elements that go to the GPU (1
	// for GPU, 0 for CPU).
	GPUFraction float64
	// Estimates of each choice; zero where a choice is impossible.
	CPUTime, GPUTime, SplitTime time.Duration
	// Estimate is the chosen choice's estimate.
	Estimate time.Duration

	// What Reason formats (on demand: planning is on the path of every
	// batch, explaining only on the path of explain).
	why              reason
	loc              Location
	gpuRate, cpuRate float64 // bytes per second
	threads          int
	launch           time.Duration
}

// launchDominates: the GPU's fixed cost alone exceeds the CPU's time.
func (d Decision) launchDominates() bool { return d.launch > d.CPUTime }

// reason is why a Decision chose its backend.
type reason uint8

const (
	cpuForced reason = iota
	cpuNoGPU
	cpuUnhandled
	gpuForced
	gpuResident
	splitFaster
	gpuFaster
	cpuFaster
	cpuTiny
	cpuAggs
	cpuSmallJob
)

// Reason explains the decision in a line.
func (d Decision) Reason() string {
	var s string
	switch d.why {
	case cpuForced, cpuNoGPU, cpuUnhandled:
		s = [...]string{"cpu forced", "cpu: no GPU", "cpu: the GPU backend does not handle this type"}[d.why]
		if d.loc == Device {
			s += " (column resident on the GPU is read back)"
		}
	case cpuTiny:
		s = fmt.Sprintf("cpu: at most %d bytes, done before any GPU launch returns (not calibrated)", TinyBytes)
	case cpuSmallJob:
		s = fmt.Sprintf("cpu: part of a job estimated to take less on the cpu than the gpu's start (%v; not calibrated)", DeviceStart)
	case cpuAggs:
		s = "cpu: the GPU backend does not compute an aggregate asked for (stddev, variance and approx_distinct of decimals)"
		if d.loc == Device {
			s += " (column resident on the GPU is read back)"
		}
	case gpuForced:
		s = "gpu forced"
	case gpuResident:
		s = fmt.Sprintf("gpu: resident on the device, read at %s", rate(d.gpuRate))
	case splitFaster:
		s = fmt.Sprintf("split %.0f%% gpu (%s from %s memory) / %.0f%% cpu (%s on %d threads): %s vs cpu %s, gpu %s",
			100*d.GPUFraction, rate(d.gpuRate), d.loc, 100*(1-d.GPUFraction), rate(d.cpuRate), d.threads,
			d.SplitTime, d.CPUTime, d.GPUTime)
	case gpuFaster:
		s = fmt.Sprintf("gpu: %s vs cpu %s (%s from %s memory vs %s on %d threads)",
			d.GPUTime, d.CPUTime, rate(d.gpuRate), d.loc, rate(d.cpuRate), d.threads)
	default:
		why := "faster"
		if d.launchDominates() {
			why = "launch latency dominates"
		}
		s = fmt.Sprintf("cpu: %s vs gpu %s (%s)", d.CPUTime, d.GPUTime, why)
	}
	return s
}

// CPUWherever reports that Plan gives host column c to the CPU wherever on
// the host it lives (ordinary or page-locked memory), without planning: it
// is too small to split and the CPU's estimate is below the GPU's at the
// faster of the two host paths. minSplit is Options.MinSplitBytes.
func (cal Calibration) CPUWherever(c Column, threads int, minSplit int64) bool {
	if !cal.HasGPU() || c.Bytes >= SplitFrom(minSplit) {
		return !cal.HasGPU()
	}
	rate := max(cal.HostStaged, min(cal.H2DPinned, cal.DeviceRead))
	if rate <= 0 {
		return false
	}
	return cal.CPUTime(c, threads) <= cal.Launch+seconds(float64(c.Bytes)/rate)
}

// TinyBytes is the size up to which a column is aggregated on the CPU
// whatever the calibration says (Tiny): one goroutine aggregates 4 KiB in
// a few microseconds even at 1 GB/s (floats, a slow core), and no GPU
// launch with the read-back of its state takes less than about 10 µs
// (53.8 µs measured on the H100 host; the PCIe round trip alone is several
// µs). It lets an engine answer small inputs without the calibration,
// hence without initializing the GPU's driver (about 100 ms) or creating a
// context.
const TinyBytes = 4 << 10

// Tiny reports whether column c is at most TinyBytes: any calibration
// would give it to the CPU.
func Tiny(c Column) bool { return c.Bytes <= TinyBytes }

// PlanTiny plans a batch without a calibration when every column the GPU
// could take (GPUCapable) is Tiny: those go to the CPU for being tiny, the
// others for being unhandled, all estimated with Defaults(threads). It
// returns false, and no plan, when some GPU-capable column is larger.
func PlanTiny(cols []Column, threads int) ([]Decision, bool) {
	for _, c := range cols {
		if c.gpuTakes() && !Tiny(c) {
			return nil, false
		}
	}
	return planCPU(cols, threads, cpuTiny), true
}

// PlanSmallJob plans without a calibration a batch of a job whose whole
// work the caller estimated at less than DeviceStart on the CPU (a Parquet
// file's pages: PagesWorthAsking): every column goes to the CPU, those the
// GPU could take for the job's size, the others for being unhandled, all
// estimated with Defaults(threads).
func PlanSmallJob(cols []Column, threads int) []Decision {
	return planCPU(cols, threads, cpuSmallJob)
}

// planCPU plans every column on the CPU without a calibration: why is the
// reason of those the GPU could take.
func planCPU(cols []Column, threads int, why reason) []Decision {
	cal := Defaults(threads)
	out := make([]Decision, len(cols))
	for i, c := range cols {
		d := Decision{Column: c.Name, Backend: CPU, CPUTime: cal.CPUTime(c, threads), why: cpuUnhandled,
			loc: c.Location, cpuRate: cal.cpuRateOf(c, threads), threads: threads}
		switch {
		case c.CPUAggs:
			d.why = cpuAggs
		case c.GPUCapable:
			d.why = why
		}
		d.Estimate = d.CPUTime
		out[i] = d
	}
	return out
}

// DefaultMinSplitBytes is Options.MinSplitBytes when it is not set.
const DefaultMinSplitBytes = 256 << 20

// SplitFrom is the smallest column split for an Options.MinSplitBytes of
// minSplit: DefaultMinSplitBytes when it is not set (0 or less).
func SplitFrom(minSplit int64) int64 {
	if minSplit <= 0 {
		return DefaultMinSplitBytes
	}
	return minSplit
}

// Plan decides where each column is aggregated.
func Plan(cols []Column, cal Calibration, opt Options) []Decision {
	threads := opt.Threads
	if threads < 1 {
		threads = cal.MaxThreads
	}
	opt.MinSplitBytes = SplitFrom(opt.MinSplitBytes)
	out := make([]Decision, len(cols))
	for i, c := range cols {
		out[i] = decide(c, cal, threads, opt)
	}
	return out
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// splitGain: a split must be estimated at least 10% faster than the better
// single backend, since it puts two backends' fixed costs and variance on
// the path.
const splitGain = 0.9

// hostTraffic is the host memory traffic, per byte, of sending a column
// from loc to the GPU, in bytes read (the calibration's HostMemory is a read
// rate): pinned memory is read once by the DMA engine; ordinary memory is
// read, written into pinned staging, and read again by the DMA engine, and a
// written byte costs about two read ones (on the H100 host 16 goroutines
// read 150-200 GB/s but copy 40-45 GB/s, 80-90 GB/s of reads and writes).
// With 3 instead, the planner split 8 GiB float64 columns 20% to the GPU
// at 1.4 times the CPU's time alone.
func hostTraffic(loc Location) float64 {
	if loc == Pinned {
		return 1
	}
	return 4
}

// gpuRate is the rate the GPU path reads a column at, by where it lives.
func gpuRate(c Column, cal Calibration) float64 {
	switch c.Location {
	case Device:
		return cal.DeviceRead
	case Pinned:
		return min(cal.H2DPinned, cal.DeviceRead)
	}
	return cal.HostStaged
}

func decide(c Column, cal Calibration, threads int, opt Options) Decision {
	d := Decision{Column: c.Name}
	b := float64(c.Bytes)
	cpuRate := cal.cpuRateOf(c, threads)
	d.CPUTime = cal.CPUTime(c, threads)
	gpuOK := cal.HasGPU() && c.gpuTakes()
	if gpuOK {
		g := gpuRate(c, cal)
		d.GPUTime = cal.Launch + seconds(b/g)
		if c.Location != Device && c.Bytes >= opt.MinSplitBytes {
			// Split in proportion to the two rates; both run at once, but
			// they share the host's memory bandwidth: the CPU reads each of
			// its bytes once, the GPU path costs hostTraffic bytes of host
			// memory traffic per byte (staging copies it, then DMA reads it).
			f := g / (g + cpuRate)
			d.GPUFraction = f
			cpuPart := c
			cpuPart.Bytes, cpuPart.Values = int64((1-f)*b), int64((1-f)*float64(c.Values))
			d.SplitTime = max(cal.Launch+seconds(f*b/g), cal.CPUTime(cpuPart, threads))
			if mem := cal.memory(); mem > 0 {
				d.SplitTime = max(d.SplitTime, seconds(b*(f*hostTraffic(c.Location)+1-f)/mem))
			}
		}
	}

	d.loc, d.cpuRate, d.threads = c.Location, cpuRate, threads
	if gpuOK {
		d.gpuRate = gpuRate(c, cal)
	}
	switch {
	case opt.Force == ForceCPU || !gpuOK:
		d.Backend, d.GPUFraction, d.Estimate = CPU, 0, d.CPUTime
		switch {
		case opt.Force == ForceCPU:
			d.why = cpuForced
		case !cal.HasGPU():
			d.why = cpuNoGPU
		case c.CPUAggs:
			d.why = cpuAggs
		default:
			d.why = cpuUnhandled
		}
	case opt.Force == ForceGPU || c.Location == Device:
		d.Backend, d.GPUFraction, d.Estimate = GPU, 1, d.GPUTime
		d.why = gpuResident
		if opt.Force == ForceGPU {
			d.why = gpuForced
		}
	case d.SplitTime > 0 && float64(d.SplitTime) < splitGain*float64(min(d.CPUTime, d.GPUTime)):
		d.Backend, d.Estimate, d.why = Split, d.SplitTime, splitFaster
	case d.GPUTime < d.CPUTime:
		d.Backend, d.GPUFraction, d.Estimate, d.why = GPU, 1, d.GPUTime, gpuFaster
	default:
		d.Backend, d.GPUFraction, d.Estimate, d.why = CPU, 0, d.CPUTime, cpuFaster
		d.launch = cal.Launch
	}
	return d
}

// rate formats bytes per second.
func rate(bps float64) string {
	switch {
	case bps >= 1e12:
		return fmt.Sprintf("%.2f TB/s", bps/1e12)
	case bps >= 1e9:
		return fmt.Sprintf("%.1f GB/s", bps/1e9)
	}
	return fmt.Sprintf("%.0f MB/s", bps/1e6)
}
