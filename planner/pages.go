package planner

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
)

// The costs of Parquet pages, which the page path decodes on the CPU and the
// GPU's page kernels on the device. The page kernels' rates are calibrated
// (Calibration.PageRates); the rest are constants measured on the GPU
// hosts (BENCHMARKS.md, "Parquet pages decoded on the GPU" on the H100, and
// later sections on the H200).
const (
	// PageCPURate is the CPU page path's rate per goroutine on snappy
	// Parquet, in bytes of decompressed pages per second (16 goroutines
	// read pyarrow's 8.5 GB snappy file in 0.535 s: 15.9 GB/s).
	PageCPURate = 1.0e9
	// PageUploadRate is the GPU page route's host side, in stored bytes per
	// second: the chunks copied from the mapped file through the staging
	// ring to the device (8.5 GB from the end of the pages' walk to the last
	// launch in 0.77 s on the H100 host).
	PageUploadRate = 11e9
	// DeviceStart is what a process pays on the GPU page route beyond the
	// pages' copies and kernels when the GPU is not open yet: the driver's
	// initialization, the primary context and the module (the pages' walk
	// overlaps them), and the route's first copies and launches. On the
	// H200 host (2026-11-29, scripts/bench-pages.sh's kinds step) the cuda
	// build under --device gpu took 0.52–0.70 s on columns of 10 MB to
	// 586 MB of pages, 0.36–0.39 s on one of 134 KB; the CPU build read the
	// last in 0.07–0.11 s.
	DeviceStart = 450 * time.Millisecond
	// ViewFoldRate and ViewFoldMax are what PagesWorthAsking takes the
	// CPU backend's fused pass over Arrow buffers in memory to reach, a
	// goroutine and in all, before a calibration measures it: about half
	// of what it measured on the H100 and H200 hosts (6–7.7 GB/s a
	// goroutine, 94–123 GB/s on 16), and a total that a host of two
	// memory channels reaches.
	ViewFoldRate = 3e9
	ViewFoldMax  = 40e9
	// HostLinkRate bounds any upload from host memory to a GPU: PCIe 5.0
	// x16's raw rate (the H200 host's pinned copies: 55 GB/s).
	HostLinkRate = 64e9
	// PageWalkRate is one goroutine's rate of the GPU page route's walk,
	// in stored bytes per second: every chunk's page headers read and its
	// mapped pages populated for the copies (pyarrow's 8.5 GB snappy file
	// in 397 ms on 16 goroutines of the H200 host, 2026-11-30: 1.34 GB/s
	// each). The walk runs while the device starts: a device not open yet
	// costs the longer of the two.
	PageWalkRate = 1.34e9
)

// PageClass is a class of the pages the GPU's page kernels decode, by what
// their cost depends on: their codec (snappy, or stored as they are) and
// their values' encoding (PLAIN, or dictionary indices).
type PageClass int

// The page classes.
const (
	PagesPlain      PageClass = iota // stored as they are, PLAIN values
	PagesSnappy                      // snappy-compressed, PLAIN values
	PagesDict                        // stored as they are, dictionary indices
	PagesSnappyDict                  // snappy-compressed, dictionary indices
	NumPageClasses
)

// ClassOf is the class of pages snappy-compressed or not, of dictionary
// indices or not.
func ClassOf(snappy, dictionary bool) PageClass {
	c := PagesPlain
	if snappy {
		c |= PagesSnappy
	}
	if dictionary {
		c |= PagesDict
	}
	return c
}

// Snappy and Dictionary say what the pages of c are.
func (c PageClass) Snappy() bool     { return c&PagesSnappy != 0 }
func (c PageClass) Dictionary() bool { return c&PagesDict != 0 }

func (c PageClass) String() string {
	codec, enc := "uncompressed", "plain"
	if c.Snappy() {
		codec = "snappy"
	}
	if c.Dictionary() {
		enc = "dictionary"
	}
	return codec + " " + enc
}

// PageRates are the page kernels' rates by class, in bytes of decompressed
// pages per second.
type PageRates [NumPageClasses]float64

// DefaultPageRates stand in for a calibration without page rates: what
// the calibration measured on the H200 host (2026-11-30; BENCHMARKS.md,
// "The page kernels' rates calibrated"). The sample's snappy pages are of
// the slowest kind measured (int64 values in short copies): other columns'
// run several times faster (float64 values, mostly literals: 250 GB/s).
// Its pages have no nulls: a column's scattered nulls (bit-packed
// definition levels) cost more (float64 uncompressed, 5% nulls: 315 GB/s).
var DefaultPageRates = PageRates{PagesPlain: 3.1e12, PagesSnappy: 73e9, PagesDict: 293e9, PagesSnappyDict: 226e9}

// PageRate is the page kernels' rate on pages of class c: the calibrated
// one, else DefaultPageRates's.
func (cal Calibration) PageRate(c PageClass) float64 {
	if r := cal.PageRates[c]; r > 0 {
		return r
	}
	return DefaultPageRates[c]
}

// PageWork is what the CPU does instead of the GPU's page kernels on the
// Parquet pages of a file's columns that the GPU could read.
type PageWork struct {
	// Stored and Decoded are the bytes as stored and decompressed of the
	// pages that the kernels decompress themselves (snappy, uncompressed),
	// every column's, which the CPU page path decodes on Threads goroutines
	// (at PageCPURate each), or on as many as CPUTasks, the segments of the
	// columns' chunks (Segments), when fewer (a segment is one goroutine's;
	// 0: PageTasks). PageTasks are the chunks, which the GPU route's walk
	// reads a goroutine each (0: not known).
	Stored, Decoded              int64
	Threads, PageTasks, CPUTasks int
	// Kernel is Decoded by the pages' class (AddKernel); the part of
	// Decoded not classed here is taken at the slowest class's rate.
	Kernel [NumPageClasses]int64
	// Host is the pages of the codecs that the host decompresses on
	// either route (HostCodecRates), a total per codec.
	Host []CodecWork
	// Views is the bytes of Arrow buffers that the CPU folds where they
	// lie (an IPC file's uncompressed bodies), at ViewFoldRate a goroutine
	// up to ViewFoldMax; a GPU would upload them over the host's link
	// first, at HostLinkRate at best.
	Views int64
}

// Codec is a Parquet codec, named as the format's thrift enum names it
// ("ZSTD", "GZIP", "BROTLI", "LZ4", "LZ4_RAW").
type Codec string

// CodecWork is pages of one codec: their bytes as stored and decompressed.
type CodecWork struct {
	Codec           Codec
	Stored, Decoded int64
}

// DeviceBytes estimates the device memory that the page route needs for
// w alone (a chunk in a batch of its own): its pages as stored, with their
// bodies decompressed beside them (counted whole, though only snappy
// bodies are: the estimate errs on the side of room), and of the pages
// that the host decompresses, a piece at most (PageHostPieceBytes).
func (w PageWork) DeviceBytes() int64 {
	var host int64
	for _, h := range w.Host {
		host += h.Decoded
	}
	return w.Stored + w.Decoded + min(host, PageHostPieceBytes)
}

// AddKernel adds to w pages of class c that the kernels decompress
// themselves: their bytes as stored and decompressed.
func (w *PageWork) AddKernel(c PageClass, stored, decoded int64) {
	w.Stored += stored
	w.Decoded += decoded
	w.Kernel[c] += decoded
}

// AddHost adds to w pages of codec c that the host decompresses.
func (w *PageWork) AddHost(c Codec, stored, decoded int64) {
	for i := range w.Host {
		if w.Host[i].Codec == c {
			w.Host[i].Stored += stored
			w.Host[i].Decoded += decoded
			return
		}
	}
	w.Host = append(w.Host, CodecWork{Codec: c, Stored: stored, Decoded: decoded})
}

// PageSegmentBytes is the decompressed bytes of the data pages of a
// segment of a column chunk, the CPU page path's unit of work: a chunk's
// pages are folded a segment at a time, by as many goroutines as are idle.
const PageSegmentBytes = 8 << 20

// Segments is the CPU page path's tasks for the pages of w, one column
// chunk's: its segments (PageSegmentBytes of its pages decompressed each),
// at least one.
func (w PageWork) Segments() int {
	n := w.Decoded
	for _, h := range w.Host {
		n += h.Decoded
	}
	return int(max(1, (n+PageSegmentBytes-1)/PageSegmentBytes))
}

// Add adds o's pages and chunks to w (its Threads are w's).
func (w *PageWork) Add(o PageWork) {
	w.Stored += o.Stored
	w.Decoded += o.Decoded
	w.Views += o.Views
	w.PageTasks += o.PageTasks
	w.CPUTasks += o.CPUTasks
	for c, n := range o.Kernel {
		w.Kernel[c] += n
	}
	for _, h := range o.Host {
		w.AddHost(h.Codec, h.Stored, h.Decoded)
	}
}

// HostCodecRates are one goroutine's rates of decompressing pages of the
// codecs the host decompresses, in decompressed bytes per second: the work
// both routes do on the host for such pages (the GPU route then uploads
// them; the CPU page path decodes and folds them, at PageFoldRate). The
// means of two runs on the H200 host's CPU (2026-11-30, dataset's
// BenchmarkPageCodecs, "inflate": pages of the file benchmark's int64 and
// float64 columns, 1 MiB, PLAIN; the runs differed by up to 15%). LZ4
// (Hadoop's framing) is taken at LZ4_RAW's rate; a codec not named here at
// the slowest.
var HostCodecRates = map[Codec]float64{
	"ZSTD":    0.47e9,
	"GZIP":    0.24e9,
	"BROTLI":  0.074e9,
	"LZ4_RAW": 3.2e9,
	"LZ4":     3.2e9,
}

// PageFoldRate is one goroutine's rate of the CPU page path on pages
// decompressed already (decoding their levels and values and folding
// them), in bytes per second: 5.5–7.9 GB/s on uncompressed PLAIN pages on
// the H200 host (BenchmarkPageCodecs, "path/UNCOMPRESSED"). What the GPU
// route saves of the CPU's work on the host codecs' pages.
const PageFoldRate = 6.6e9

// PageHostCallCost is the GPU's fixed cost of a piece of the host's
// decompressed pages (its buffers, copies and two launches, serialized on
// the device): about 0.55 ms a call on the H200 host, pieces of
// PageHostPieceBytes.
const (
	PageHostCallCost   = 550 * time.Microsecond
	PageHostPieceBytes = 16 << 20
)

// hostRate is HostCodecRates's rate of c.
func hostRate(c Codec) float64 {
	if r, ok := HostCodecRates[c]; ok {
		return r
	}
	slow := math.Inf(1)
	for _, r := range HostCodecRates {
		slow = min(slow, r)
	}
	return slow
}

// PageHostUploadRate is the GPU page route's rate for pages the host
// decompressed, in decompressed bytes per second, when the calibration has
// no staged upload rate.
const PageHostUploadRate = 20e9

// cpuTime is the CPU's time for w.
func (w PageWork) cpuTime() time.Duration {
	t := pageCPUTime(w.Decoded, w.cpuThreads())
	n := float64(w.cpuThreads())
	t += rateTime(w.Views, min(ViewFoldRate*n, ViewFoldMax))
	for _, h := range w.Host {
		t += rateTime(h.Decoded, hostRate(h.Codec)*n) + rateTime(h.Decoded, PageFoldRate*n)
	}
	return t
}

// gpuTime is the GPU route's time for w on the GPU of cal after its walk
// (walkTime), the device started: the kernels' pages copied and decoded (each class at its rate);
// the host codecs' pages decompressed by w's goroutines while the GPU
// takes the pieces decompressed before, one at a time (the slower of the
// two), those pieces uploaded at cal's staged rate and decoded at the
// uncompressed pages' (the slower of PLAIN and dictionary: their encoding
// is not known here).
func (w PageWork) gpuTime(cal Calibration) time.Duration {
	t := rateTime(w.Stored, PageUploadRate)
	slowest, classed := math.Inf(1), int64(0)
	for c, n := range w.Kernel {
		r := cal.PageRate(PageClass(c))
		t += rateTime(n, r)
		slowest, classed = min(slowest, r), classed+n
	}
	if rest := w.Decoded - classed; rest > 0 {
		t += rateTime(rest, slowest)
	}
	staged := cal.HostStaged
	if staged <= 0 {
		staged = PageHostUploadRate
	}
	plain := min(cal.PageRate(PagesPlain), cal.PageRate(PagesDict))
	for _, h := range w.Host {
		inflate := rateTime(h.Decoded, hostRate(h.Codec)*float64(w.threads()))
		pieces := float64(h.Decoded) / PageHostPieceBytes // (pieces run across chunks: a chunk's share)
		device := rateTime(h.Decoded, staged) + rateTime(h.Decoded, plain) + time.Duration(pieces*float64(PageHostCallCost))
		t += max(inflate, device)
	}
	return t
}

// walkTime is the GPU page route's walk of w's chunks (every codec's) on
// w's goroutines.
func (w PageWork) walkTime() time.Duration {
	stored := w.Stored
	for _, h := range w.Host {
		stored += h.Stored
	}
	return rateTime(stored, PageWalkRate*float64(w.threads()))
}

// shown is d as the page plans' reasons give it: to the millisecond, or
// to the microsecond below one.
func shown(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// rateTime is the time of n bytes at rate bytes per second.
func rateTime(n int64, rate float64) time.Duration {
	return time.Duration(float64(n) / rate * float64(time.Second))
}

// threads is the goroutines the GPU route's walk reads w's chunks on.
func (w PageWork) threads() int {
	if w.PageTasks > 0 {
		return max(1, min(w.Threads, w.PageTasks))
	}
	return w.Threads
}

// cpuThreads is the goroutines the CPU page path reads w on: its
// segments', or its chunks' when not known.
func (w PageWork) cpuThreads() int {
	if w.CPUTasks > 0 {
		return max(1, min(w.Threads, w.CPUTasks))
	}
	return w.threads()
}

// OneChunk makes w the work of one column chunk: one task of the walk, and
// the CPU page path's tasks of its segments.
func (w *PageWork) OneChunk() {
	w.PageTasks, w.CPUTasks = 1, w.Segments()
}

// PagesOnGPU says whether the Parquet pages of w are aggregated faster by
// the GPU's page kernels (uploaded as stored, decoded on the device) than
// by the CPU, by at least PageGPUGain of the CPU's time; started: the
// device is open already. The reason says why, for the plan.
func (cal Calibration) PagesOnGPU(w PageWork, started bool) (bool, string) {
	if !cal.HasGPU() {
		return false, "no GPU calibration"
	}
	if cal.PageError != "" {
		return false, "parquet pages decoded on the cpu: the gpu's page kernels failed their calibration: " + cal.PageError
	}
	cpu := w.cpuTime()
	gpu := cal.splitTime(w, PageWork{}, started)
	if gains(gpu, cpu) {
		return true, fmt.Sprintf("parquet pages decoded on the gpu: %v estimated there, %v on %d cpu threads", shown(gpu), shown(cpu), w.cpuThreads())
	}
	return false, fmt.Sprintf("parquet pages decoded on the cpu: %v estimated, %v on the gpu", shown(cpu), shown(gpu))
}

// PageGPUGain is the share of the CPU's time that the GPU page route must
// save for the planner to take it: less is within the estimates' error
// (the page path's rates are constants measured on pyarrow's files, off by
// up to half on others), and not worth the device.
const PageGPUGain = 0.1

// gains says whether t saves PageGPUGain of cpu at least.
func gains(t, cpu time.Duration) bool {
	return float64(t) <= float64(cpu)*(1-PageGPUGain)
}

// splitTime is the time of a file's pages with those of g on the GPU route
// and those of c on the CPU page path: the route walks its chunks first
// (on the goroutines the CPU then reads with), then the device (what is
// left of its start after the walk, unless started) copies and decodes
// them while the CPU reads the others.
func (cal Calibration) splitTime(g, c PageWork, started bool) time.Duration {
	if g.Decoded == 0 && len(g.Host) == 0 {
		return c.cpuTime()
	}
	walk := g.walkTime()
	dev := g.gpuTime(cal)
	if !started {
		dev += max(0, DeviceStart-walk)
	}
	return walk + max(dev, c.cpuTime())
}

// PageSplit is where SplitPages sends chunks of Parquet pages.
type PageSplit struct {
	// GPU says, chunk by chunk, whether its pages go to the GPU's page
	// kernels.
	GPU []bool
	// GPUWhy is why the chunks that go to the GPU do; CPUWhy, per chunk,
	// why one that stays on the CPU does ("" for the others).
	GPUWhy string
	CPUWhy []string
}

// SplitAll is the split of n chunks that sends them all to the GPU (gpu)
// or all to the CPU, for the reason why.
func SplitAll(n int, gpu bool, why string) PageSplit {
	s := PageSplit{GPU: make([]bool, n), CPUWhy: make([]string, n)}
	for i := range s.GPU {
		if s.GPU[i] = gpu; !gpu {
			s.CPUWhy[i] = why
		}
	}
	if gpu {
		s.GPUWhy = why
	}
	return s
}

// SplitPages decides, chunk by chunk, which of chunks (each the pages of
// one column chunk: a PageWork whose Threads and PageTasks are ignored) the
// GPU's page kernels decode; the CPU page path reads the others at the
// same time, on threads goroutines; started: the device is open already.
//
// The chunks are ranked by what the GPU route costs for each against what
// the CPU does, at the rates they would run at on the whole file (the CPU
// on as many goroutines as the file's chunks' segments keep busy; the route's walk
// and copies cost a chunk's stored bytes, the kernels and the CPU its
// decompressed ones): a chunk that compresses well, or of a class the
// kernels decode fast, ranks first. The GPU takes the prefix of that
// ranking that ends the file first (splitTime: the two routes run at
// once), if it saves PageGPUGain of the CPU's time alone; else none.
func (cal Calibration) SplitPages(chunks []PageWork, threads int, started bool) PageSplit {
	n := len(chunks)
	all := PageWork{Threads: threads}
	for _, c := range chunks {
		c.OneChunk()
		all.Add(c)
	}
	every := func(ok bool, reason string) PageSplit { return SplitAll(n, ok, reason) }
	if !cal.HasGPU() || cal.PageError != "" || n == 0 {
		return every(cal.PagesOnGPU(all, started))
	}
	// The ranking: each chunk's GPU time over its CPU time, on the whole
	// file's goroutines.
	busy := all.cpuThreads()
	ratio := make([]float64, n)
	order := make([]int, n)
	for i, c := range chunks {
		order[i] = i
		c.Threads, c.PageTasks, c.CPUTasks = busy, 0, 0
		if cpu := c.cpuTime(); cpu > 0 {
			ratio[i] = float64(c.gpuTime(cal)+c.walkTime()) / float64(cpu)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return ratio[order[a]] < ratio[order[b]] })
	cpu := all.cpuTime()
	best, bestT, allT := 0, cpu, time.Duration(0)
	// g: the first k chunks of the ranking, the GPU's; rest: the others.
	g, rest := PageWork{Threads: threads}, all.clone()
	for k := 1; k <= n; k++ {
		c := chunks[order[k-1]]
		c.OneChunk()
		g.Add(c)
		rest.remove(c)
		t := cal.splitTime(g, rest, started)
		if t < bestT {
			best, bestT = k, t
		}
		allT = t
	}
	switch {
	case best == n && gains(bestT, cpu):
		return every(cal.PagesOnGPU(all, started))
	case best == 0 || !gains(bestT, cpu):
		why := fmt.Sprintf("parquet pages decoded on the cpu: %v estimated, %v on the gpu", shown(cpu), shown(allT))
		if best > 0 && best < n {
			why += fmt.Sprintf(", %v with the gpu decoding some of the chunks", shown(bestT))
		}
		return every(false, why)
	}
	s := PageSplit{GPU: make([]bool, n), CPUWhy: make([]string, n)}
	s.GPUWhy = fmt.Sprintf("parquet pages decoded on the gpu, the cpu reading the other chunks at once: %v estimated, %v on %d cpu threads alone",
		shown(bestT), shown(cpu), busy)
	why := fmt.Sprintf("parquet pages decoded on the cpu, the gpu decoding the other chunks at once: %v estimated, %v on the cpu alone",
		shown(bestT), shown(cpu))
	for k, i := range order {
		if s.GPU[i] = k < best; !s.GPU[i] {
			s.CPUWhy[i] = why
		}
	}
	return s
}

// clone is w with a Host of its own (Add and remove change it).
func (w PageWork) clone() PageWork {
	w.Host = slices.Clone(w.Host)
	return w
}

// remove takes o's pages and chunks, added to w before, out of w.
func (w *PageWork) remove(o PageWork) {
	w.Stored -= o.Stored
	w.Decoded -= o.Decoded
	w.Views -= o.Views
	w.PageTasks -= o.PageTasks
	w.CPUTasks -= o.CPUTasks
	for c, n := range o.Kernel {
		w.Kernel[c] -= n
	}
	for _, h := range o.Host {
		for i := range w.Host {
			if w.Host[i].Codec == h.Codec {
				w.Host[i].Stored -= h.Stored
				w.Host[i].Decoded -= h.Decoded
			}
		}
	}
}

// PageStandIn is the calibration the GPU page route is weighed with before
// one is measured (the engine measures one only when these figures give
// the GPU some of a file's chunks: measuring takes about a second, longer
// than a whole file that the CPU would read anyway): Defaults, with the
// page kernels' DefaultPageRates and the staged upload's
// PageHostUploadRate; the GPU's read rate is the H200 host's device copy
// (4.2 TB/s), which the page route's costs do not use.
func PageStandIn(threads int) Calibration {
	cal := Defaults(threads)
	cal.GPU = "default rates"
	cal.HostStaged = PageHostUploadRate
	cal.DeviceRead = 4.2e12
	return cal
}

// PagesWorthAsking says whether the CPU takes long enough on w that the
// GPU might win even from its start (and the upload of w's views, which
// no GPU makes faster than HostLinkRate): if not, the CPU is certain and
// no calibration (which opens the driver) is needed, and the reason says
// why.
func PagesWorthAsking(w PageWork) (bool, string) {
	if t := w.cpuTime(); t <= DeviceStart+rateTime(w.Views, HostLinkRate) {
		if w.Views > 0 {
			return false, fmt.Sprintf("on the cpu: %v estimated, less than the gpu's start (%v) and the upload",
				shown(t), DeviceStart)
		}
		return false, fmt.Sprintf("parquet pages decoded on the cpu: %v estimated, less than the gpu's start (%v)",
			shown(t), DeviceStart)
	}
	return true, ""
}

// pageCPUTime is the CPU page path's time for decoded bytes of pages on
// threads goroutines.
func pageCPUTime(decoded int64, threads int) time.Duration {
	return time.Duration(float64(decoded) / (PageCPURate * float64(max(threads, 1))) * float64(time.Second))
}
