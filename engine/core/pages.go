package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/planner"
)

// PagesOnGPU says whether the engine aggregates Parquet pages of kind k,
// for states that track tracks, with the GPU's page kernels
// (backend.PageGPU): always under DeviceGPU when the backend takes them,
// under DeviceAuto when the calibration says the GPU is faster than the
// CPU's work w (its Threads the engine's; never for a small job,
// WithSmallJob, before the engine has a calibration; the device's start
// counted unless it is open already, backend.DeviceOpener),
// all the file's columns that could go together. When it
// says yes, plan is the columns' plan (its reason why; its bytes and time
// the caller's to add).
func (e *Engine) PagesOnGPU(ctx context.Context, k column.Kind, tracks agg.Set, w planner.PageWork) (ok bool, plan ColumnPlan) {
	if e.gpu == nil || e.device == DeviceCPU || e.gpuFailed.Load() {
		return false, plan
	}
	pg, ok := e.gpu.(backend.PageGPU)
	if !ok || !pg.HandlesPages(k, tracks) {
		return false, plan
	}
	plan = ColumnPlan{Source: SourcePages, Backend: planner.GPU, Location: planner.Host,
		Reason: "parquet pages decoded and aggregated on the gpu (--device gpu)"}
	if e.device == DeviceGPU {
		return true, plan
	}
	w.Threads = e.threads
	if !e.deviceOpen() {
		if worth, why := planner.PagesWorthAsking(w); !worth {
			plan.Reason = why
			return false, plan
		}
		if e.smallJobFirst(ctx) {
			plan.Reason = fmt.Sprintf("parquet pages decoded on the cpu: the file is estimated to take less there than the gpu's start (%v)", planner.DeviceStart)
			return false, plan
		}
	}
	cal := e.calibration(ctx)
	if e.gpuFailed.Load() {
		plan.Reason = "parquet pages decoded on the cpu: the gpu failed"
		return false, plan
	}
	// (A calibration measured just now opened the device: its start is
	// paid either way.)
	ok, plan.Reason = cal.PagesOnGPU(w, e.deviceOpen())
	return ok, plan
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

// UpdatePages folds Parquet pages into s with the GPU's page kernels; the
// caller asked PagesOnGPU first.
func (e *Engine) UpdatePages(ctx context.Context, p *column.Pages, s *agg.State) error {
	pg, ok := e.gpu.(backend.PageGPU)
	if !ok || e.gpuFailed.Load() {
		return errors.New("the engine has no GPU backend that decodes Parquet pages")
	}
	return pg.UpdatePages(ctx, p, s)
}
