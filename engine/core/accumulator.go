package core

import (
	"context"
	"fmt"
	"time"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// Column is one column an Accumulator aggregates, as a front end describes
// it (a leaf of its Arrow schema).
type Column struct {
	Name string
	Type column.Type // the front end's type, for messages
	Kind column.Kind // column.Unsupported when Err is set
	// Repeated is, for an element column (the values inside lists and
	// maps), the number of lists and maps it lies in: its ordered
	// aggregates number elements, not rows. 0 for a column of the rows.
	Repeated int
	// Err is why the column cannot be aggregated (nil when it can): it is
	// skipped, its state stays empty.
	Err error
}

// Supported reports whether the column can be aggregated.
func (c Column) Supported() bool { return c.Err == nil }

// Part is one column's views in one record batch, as a front end extracts
// them: View, and for an element column whose elements are not contiguous
// in the batch the Rest, Elements in all. Their Row counts from 0 at the
// batch's first row (an element column's: its first element); Add moves
// them to the stream's positions.
type Part struct {
	View     *column.View
	Rest     []column.View
	Elements int64
}

// Accumulator aggregates a stream of record batches, as views, into one
// partial state per column. Batches are folded in the order they are
// added. It is not safe for concurrent use; the Engine behind it is.
type Accumulator struct {
	e      *Engine
	cols   []Column
	aggs   agg.Set
	states []agg.State

	views  []*column.View
	ptrs   []*agg.State
	active []int
	took   []time.Duration
	plans  []ColumnPlan // per column, summed over batches
	rows   int64        // rows added so far: the row of the next batch's first row
	// elems, per element column (Column.Repeated), is the elements added
	// so far: the position of the next batch's first element.
	elems []int64
}

// NewAccumulator starts aggregating aggs (normalized: agg.Normalize) of
// cols.
func (e *Engine) NewAccumulator(cols []Column, aggs agg.Set) *Accumulator {
	a := &Accumulator{e: e, cols: cols, aggs: agg.Normalize(aggs), states: make([]agg.State, len(cols)),
		plans: make([]ColumnPlan, len(cols)), elems: make([]int64, len(cols))}
	for i, c := range cols {
		a.states[i] = agg.New(c.Kind.Family(), a.aggs)
	}
	return a
}

// Columns are the columns the accumulator aggregates, in result order.
func (a *Accumulator) Columns() []Column { return a.cols }

// Aggs is the set of aggregates.
func (a *Accumulator) Aggs() agg.Set { return a.aggs }

// States are the partial states so far, one per column (unsupported columns
// keep an empty state).
func (a *Accumulator) States() []agg.State { return a.states }

// Rows is the number of rows added so far (merged accumulators' included).
func (a *Accumulator) Rows() int64 { return a.rows }

// Add folds one record batch of rows rows into the states: parts[i] is
// column i's (ignored for an unsupported column).
func (a *Accumulator) Add(ctx context.Context, rows int64, parts []Part) error {
	if len(parts) != len(a.cols) {
		return fmt.Errorf("a batch of %d columns for an accumulator of %d", len(parts), len(a.cols))
	}
	a.views, a.ptrs, a.active = a.views[:0], a.ptrs[:0], a.active[:0]
	for i, c := range a.cols {
		if !c.Supported() {
			continue
		}
		p := &parts[i]
		if p.View == nil {
			return fmt.Errorf("column %q: no view in the batch", c.Name)
		}
		at := a.rows
		if c.Repeated > 0 {
			at = a.elems[i]
			a.elems[i] += p.Elements
		}
		p.View.Row += at
		for k := range p.Rest {
			p.Rest[k].Row += at
		}
		a.views = append(a.views, p.View)
		a.ptrs = append(a.ptrs, &a.states[i])
		a.active = append(a.active, i)
	}
	if len(a.views) == 0 {
		a.rows += rows
		return nil
	}
	plan := a.e.planBatch(ctx, a.views, a.ptrs)
	a.took = append(a.took[:0], make([]time.Duration, len(a.views))...)
	if err := a.e.execute(ctx, a.views, a.ptrs, plan, a.took); err != nil {
		return fmt.Errorf("aggregating %s: %w", a.names(), err)
	}
	for k, i := range a.active {
		a.plans[i].Add(decided(plan[k], a.e.locate(a.views[k]), a.views[k].ByteSize(), a.took[k], ""))
	}
	// The elements of an element column that are not contiguous in its
	// leaf array (under null lists): a view each, after the first.
	for _, i := range a.active {
		for k := range parts[i].Rest {
			v := &parts[i].Rest[k]
			start := time.Now()
			if err := a.e.UpdateView(ctx, v, &a.states[i]); err != nil {
				return fmt.Errorf("aggregating column %q: %w", a.cols[i].Name, err)
			}
			a.plans[i].Add(decided(a.e.PlanView(ctx, v, &a.states[i]), a.e.locate(v), v.ByteSize(), time.Since(start), ""))
		}
	}
	a.rows += rows
	return nil
}

func (a *Accumulator) names() string {
	if len(a.active) == 1 {
		return fmt.Sprintf("column %q", a.cols[a.active[0]].Name)
	}
	return fmt.Sprintf("%d columns", len(a.active))
}

// Merge folds the states of another accumulator of the same columns into
// a, after a's own (for example a later file of the same dataset): o's rows
// follow a's. Columns match by name and kind (a front end compares their
// types first, with its Arrow version's equality).
func (a *Accumulator) Merge(o *Accumulator) error {
	if len(o.states) != len(a.states) {
		return fmt.Errorf("merging accumulators of %d and %d columns", len(a.states), len(o.states))
	}
	for i := range a.states {
		if a.cols[i].Name != o.cols[i].Name || a.cols[i].Kind != o.cols[i].Kind {
			return fmt.Errorf("merging column %q (%s) with %q (%s)", a.cols[i].Name, a.cols[i].Type, o.cols[i].Name, o.cols[i].Type)
		}
	}
	a.MergeStates(o.states, o.rows)
	for i := range a.plans {
		a.plans[i].Add(o.plans[i])
	}
	return nil
}

// MergeStates merges partial states, one per column, of rows more rows
// after a's (their rows, or elements, counted from their own first).
func (a *Accumulator) MergeStates(states []agg.State, rows int64) {
	for i := range a.states {
		o := states[i]
		if a.cols[i].Repeated > 0 { // positions of elements
			o.ShiftRows(a.elems[i])
			a.elems[i] += o.Count + o.NullCount
		} else {
			o.ShiftRows(a.rows)
		}
		a.states[i].Merge(&o)
	}
	a.rows += rows
}
