package engine

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine/core"
)

// ErrResidencyClosed is returned by uploads to, and aggregations of data
// uploaded by, a closed Residency.
var ErrResidencyClosed = core.ErrResidencyClosed

// ResidencyStats are the counters of a Residency (the core's).
type ResidencyStats = core.ResidencyStats

// Residency keeps the columns of record batches in GPU memory, so that data
// aggregated many times is read at device-memory speed instead of crossing
// the host link at every call: the core's Residency (core.Residency, which
// documents the budget, eviction and planning) for Arrow Go v17 record
// batches. Upload, UploadRecord and UploadTable make record batches
// resident; Resident.Aggregate (or Accumulator.AddResident) aggregates them.
// A Residency is safe for concurrent use by many goroutines; Close it to free
// the device memory.
type Residency struct {
	*core.Residency
	e *Engine
}

// NewResidency returns a Residency of the engine's GPU backend that keeps at
// most budget bytes of columns in device memory. It fails, with an error
// wrapping backend.ErrNoGPU, when the engine has no GPU backend that keeps
// columns resident.
func (e *Engine) NewResidency(budget int64) (*Residency, error) {
	r, err := e.Engine.NewResidency(budget)
	if err != nil {
		return nil, err
	}
	return &Residency{Residency: r, e: e}, nil
}

// Resident is record batches of one schema uploaded by a Residency: their
// columns the GPU handles are kept in device memory (within the budget),
// the others on the host. Rows count from 0 at the first row of the first
// batch. It retains the record batches until released; it is safe for
// concurrent use.
type Resident struct {
	*core.Resident
	r      *Residency
	schema *arrow.Schema
	leaves []arrow17.Leaf
}

// UploadRecord makes a record batch resident (see Upload).
func (r *Residency) UploadRecord(ctx context.Context, rec arrow.Record) (*Resident, error) {
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.Record{rec})
	if err != nil {
		return nil, fmt.Errorf("reading the record batch: %w", err)
	}
	defer rdr.Release()
	return r.Upload(ctx, rdr)
}

// UploadTable makes the record batches of a table resident, cut as
// array.NewTableReader cuts them (see Upload).
func (r *Residency) UploadTable(ctx context.Context, tbl arrow.Table) (*Resident, error) {
	rdr := array.NewTableReader(tbl, -1)
	defer rdr.Release()
	return r.Upload(ctx, rdr)
}

// Upload reads every record batch of rdr, retains them, and copies the
// columns the GPU handles to device memory, evicting least recently used
// columns of other data when the budget requires it; columns that do not fit
// are uploaded at a later use if there is room then. It does not release
// rdr. Release the Resident when done.
func (r *Residency) Upload(ctx context.Context, rdr array.RecordReader) (*Resident, error) {
	schema := rdr.Schema()
	leaves := arrow17.Leaves(schema)
	var (
		recs []arrow.Record
		cols [][]arrow17.Column // per batch, per leaf
	)
	free := func() {
		for _, b := range cols {
			for i := range b {
				b[i].Release()
			}
		}
		for _, rec := range recs {
			rec.Release()
		}
	}
	cr, err := r.Residency.NewResident(coreColumns(leaves), free)
	if err != nil {
		return nil, err
	}
	res := &Resident{Resident: cr, r: r, schema: schema, leaves: leaves}
	views := make([]*column.View, len(leaves))
	for rdr.Next() {
		rec := rdr.Record()
		if !rec.Schema().Equal(schema) {
			res.Release()
			return nil, fmt.Errorf("record batch schema %s does not match %s", rec.Schema(), schema)
		}
		rec.Retain()
		recs = append(recs, rec)
		b := make([]arrow17.Column, len(leaves))
		cols = append(cols, b)
		for i, l := range leaves {
			views[i] = nil
			if !l.Supported() {
				continue
			}
			if err := arrow17.Extract(&b[i], rec, l, r.e.mem); err != nil {
				res.Release()
				return nil, err
			}
			views[i] = &b[i].View
		}
		if err := cr.AddBatch(ctx, rec.NumRows(), views); err != nil {
			res.Release()
			return nil, err
		}
	}
	if err := rdr.Err(); err != nil {
		res.Release()
		return nil, fmt.Errorf("reading record batches: %w", err)
	}
	if err := cr.Load(ctx); err != nil {
		res.Release()
		return nil, err
	}
	return res, nil
}

// Schema is the schema of the record batches.
func (res *Resident) Schema() *arrow.Schema { return res.schema }

// Aggregate aggregates the requested columns of the record batches: resident
// columns on the device, the others where the engine's planner puts them.
// The plan says, per column, where the data was and why (a resident column's
// Location is "device"). Results equal those of Engine.Aggregate on the same
// batches with the same backends: integer, decimal and ordered aggregates
// exactly, float sums within the GPU backend's documented bound. Writing
// the plan's reasons costs about a microsecond per column: Results skips
// them.
func (res *Resident) Aggregate(ctx context.Context, req Request) ([]Result, []ColumnPlan, error) {
	acc, err := res.accumulate(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	return acc.Results(), acc.Plan(), nil
}

// Results is Aggregate without the plan.
func (res *Resident) Results(ctx context.Context, req Request) ([]Result, error) {
	acc, err := res.accumulate(ctx, req)
	if err != nil {
		return nil, err
	}
	return acc.Results(), nil
}

func (res *Resident) accumulate(ctx context.Context, req Request) (*Accumulator, error) {
	acc, err := res.r.e.NewAccumulator(res.schema, req)
	if err != nil {
		return nil, err
	}
	if err := acc.AddResident(ctx, res); err != nil {
		return nil, err
	}
	return acc, nil
}

// AddResident folds the record batches of res into the states, after the
// rows added so far, like Add of each batch: resident columns are aggregated
// on the device; the others go where the planner puts them. res must come
// from a Residency of the accumulator's engine.
func (a *Accumulator) AddResident(ctx context.Context, res *Resident) error {
	if !res.schema.Equal(a.schema) {
		return fmt.Errorf("resident schema %s does not match %s", res.schema, a.schema)
	}
	for _, l := range a.leaves {
		if l.Supported() && l.Repeated > 0 {
			return fmt.Errorf("column %q: %w: the elements of lists and maps are not kept resident (aggregate the batches with Add)", l.Name, arrow.ErrNotImplemented)
		}
	}
	return a.c.AddResident(ctx, res.Resident)
}
