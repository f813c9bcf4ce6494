package core

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/bytesize"
	"github.com/arrowagg/arrowagg/planner"
)

// PageColumn is a column whose Parquet chunks the GPU's page kernels could
// decode (PagesOnGPU): the kind of its pages' values, the aggregates its
// states track, and each chunk's pages (their bytes and class; Threads and
// PageTasks are the engine's to set).
type PageColumn struct {
	Kind   column.Kind
	Tracks agg.Set
	Chunks []planner.PageWork
	// Refused, when not "", says why the source cannot give this column's
	// pages to the GPU's page kernels (its chunks' work is then only
	// counted): the column is not weighed, and its chunks' CPUWhy say so
	// when the engine has a page GPU it could otherwise have used.
	Refused string
}

// PageRoute is where PagesOnGPU sends a column's chunks: GPU says, chunk by
// chunk, whether the GPU's page kernels decode it; Plan is the plan of
// those chunks (its reason why; its bytes and time the caller's to add);
// CPUWhy, per chunk, why one that stays on the CPU does, when the GPU was
// weighed for it ("" otherwise).
type PageRoute struct {
	GPU    []bool
	Plan   ColumnPlan
	CPUWhy []string
}

// OnGPU reports whether any of the column's chunks go to the GPU.
func (r *PageRoute) OnGPU() bool {
	for _, g := range r.GPU {
		if g {
			return true
		}
	}
	return false
}

// PagesOnGPU decides, chunk by chunk, which Parquet chunks of the columns
// cols the engine aggregates with the GPU's page kernels
// (backend.PageGPU): under DeviceGPU every chunk of a column whose kind
// and aggregates the backend takes; under DeviceAuto those that the
// calibration says end the file first on the GPU while the CPU reads the
// others, the device's start counted unless it is open already
// (backend.DeviceOpener; planner.Calibration.SplitPages). A small job
// (WithSmallJob) asks no calibration and keeps every chunk on the CPU; so
// does a file whose chunks the CPU reads before the GPU could start
// (planner.PagesWorthAsking), and, while the engine has no calibration and
// none is cached, a file that the stand-in's figures
// (planner.PageStandIn) keep on the CPU.
func (e *Engine) PagesOnGPU(ctx context.Context, cols []PageColumn) []PageRoute {
	routes := make([]PageRoute, len(cols))
	for i, c := range cols {
		routes[i] = PageRoute{GPU: make([]bool, len(c.Chunks)), CPUWhy: make([]string, len(c.Chunks))}
	}
	if e.gpu == nil || e.device == DeviceCPU || e.gpuFailed.Load() {
		return routes
	}
	pg, ok := e.gpu.(backend.PageGPU)
	if !ok {
		return routes
	}
	var mine []int // the columns the kernels take
	var chunks []planner.PageWork
	for i, c := range cols {
		if c.Refused != "" {
			for k := range routes[i].CPUWhy {
				routes[i].CPUWhy[k] = "not for the gpu's page kernels: " + c.Refused
			}
			continue
		}
		if pg.HandlesPages(c.Kind, c.Tracks) {
			mine = append(mine, i)
			chunks = append(chunks, c.Chunks...)
		}
	}
	if len(mine) == 0 {
		return routes
	}
	plan := ColumnPlan{Source: SourcePages, Backend: planner.GPU, Location: planner.Host}
	// decide routes the chunks of mine as split says, in their order.
	decide := func(split planner.PageSplit) {
		k := 0
		for _, i := range mine {
			r := &routes[i]
			r.Plan = plan
			r.Plan.Reason = split.GPUWhy
			n := len(r.GPU)
			copy(r.GPU, split.GPU[k:k+n])
			copy(r.CPUWhy, split.CPUWhy[k:k+n])
			k += n
		}
	}
	every := func(gpu bool, why string) planner.PageSplit { return planner.SplitAll(len(chunks), gpu, why) }
	if e.device == DeviceGPU {
		decide(every(true, "parquet pages decoded and aggregated on the gpu (--device gpu)"))
		e.fitPages(routes, cols, mine)
		return routes
	}
	if !e.deviceOpen() {
		w := planner.PageWork{Threads: e.threads}
		for _, c := range chunks {
			c.OneChunk()
			w.Add(c)
		}
		if worth, why := planner.PagesWorthAsking(w); !worth {
			decide(every(false, why))
			return routes
		}
		if e.smallJobFirst(ctx) {
			decide(every(false, fmt.Sprintf("parquet pages decoded on the cpu: the file is estimated to take less there than the gpu's start (%v)", planner.DeviceStart)))
			return routes
		}
		if e.uncalibrated() {
			if _, cached := e.cachedCalibration(); !cached {
				// (None to read: weighed with the stand-in's figures first,
				// a calibration measured only if they give the GPU chunks.)
				split := planner.PageStandIn(e.threads).SplitPages(chunks, e.threads, false)
				if !slices.Contains(split.GPU, true) {
					for i := range split.CPUWhy {
						split.CPUWhy[i] += "; at the default rates, with no calibration yet"
					}
					decide(split)
					return routes
				}
			}
		}
	}
	cal := e.calibration(ctx)
	if e.gpuFailed.Load() {
		decide(every(false, "parquet pages decoded on the cpu: the gpu failed"))
		return routes
	}
	// (A calibration measured just now opened the device: its start is
	// paid either way.)
	decide(cal.SplitPages(chunks, e.threads, e.deviceOpen()))
	e.fitPages(routes, cols, mine)
	return routes
}

// fitPages leaves to the CPU the chunks of the columns mine that routes
// give the GPU but whose pages alone need more device memory than the
// GPU's limit (WithGPUMemoryLimit; planner.PageWork.DeviceBytes, a
// quarter more for the device pool's rounding): UpdatePages would find no
// room for them.
func (e *Engine) fitPages(routes []PageRoute, cols []PageColumn, mine []int) {
	limit := e.gpuCfg.MemoryLimit
	if limit <= 0 {
		return
	}
	for _, i := range mine {
		r := &routes[i]
		for k, w := range cols[i].Chunks {
			if need := w.DeviceBytes() / 4 * 5; r.GPU[k] && need > limit {
				r.GPU[k] = false
				r.CPUWhy[k] = fmt.Sprintf("parquet pages decoded on the cpu: their chunk needs more device memory than the GPU's limit (%s)",
					bytesize.Format(limit)) // (the same words for every such chunk: one reason for the column)
			}
		}
	}
}

// deviceOpen reports whether the GPU backend's device is open already
// (backend.DeviceOpener): then a route that uses it pays no start. A
// backend that does not say is taken as not open.
func (e *Engine) deviceOpen() bool {
	o, ok := e.gpu.(backend.DeviceOpener)
	return ok && o.DeviceOpen()
}

// WarmPages opens the GPU of the page kernels in the background, while the
// caller reads the pages' headers (PagesOnGPU said yes): a failure is the
// later UpdatePages's to report.
func (e *Engine) WarmPages() {
	if pg, ok := e.gpu.(backend.PageGPU); ok && !e.gpuFailed.Load() {
		go pg.Warm() //nolint:errcheck // (UpdatePages meets the same error)
	}
}

// ErrDeviceMemory is matched by the error of an UpdatePages that found
// too little device memory for even the smallest batch of its chunks
// (backend.ErrDeviceMemory): s is untouched, and the pages can be read on
// the CPU instead.
var ErrDeviceMemory = backend.ErrDeviceMemory

// UpdatePages folds Parquet pages into s with the GPU's page kernels; the
// caller asked PagesOnGPU first. An error matching ErrDeviceMemory leaves s
// untouched and says that the device had too little memory for them.
func (e *Engine) UpdatePages(ctx context.Context, p *column.Pages, s *agg.State) error {
	pg, ok := e.gpu.(backend.PageGPU)
	if !ok || e.gpuFailed.Load() {
		return errors.New("the engine has no GPU backend that decodes Parquet pages")
	}
	return pg.UpdatePages(ctx, p, s)
}
