package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/compute"
	"github.com/apache/arrow/go/v17/arrow/decimal256"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine/core"
	"github.com/arrowagg/arrowagg/filter"
	"github.com/arrowagg/arrowagg/internal/startup"
)

// GroupRequest names a grouped aggregation (SQL's GROUP BY) of record
// batches, and the filter of its rows (WHERE).
type GroupRequest struct {
	// Keys are the key columns (leaf names, dotted for struct fields): the
	// groups are their distinct combinations of values, a null a value of
	// its own (as in SQL). No key: one group of every row kept, which is
	// there even when no row is (SQL's aggregate without GROUP BY).
	Keys []string
	// Columns are the value columns aggregated in every group; empty means
	// every supported leaf of the rows that is not a key (lists' elements
	// are not grouped).
	Columns []string
	// Aggs are the aggregates of every value column (0: the default set);
	// the statistics (stddev, variance, approx_distinct) are not grouped.
	Aggs agg.Set
	// CountRows adds the column count_all: the rows of each group (SQL's
	// count(*)), nulls or not.
	CountRows bool
	// Filter keeps the rows for which it holds; nil keeps every row. It
	// reads the columns it names (Filter.Columns).
	Filter RowFilter
	// MemoryLimit bounds the memory the groups hold (0: none), named
	// MemoryLimitName in its error. Past it, the groups spill to files in
	// SpillDir, read back a partition at a time by Result; without
	// SpillDir, the batch that takes them past it fails with a
	// *GroupMemoryError. Spilled or not, the answers are the same (float
	// sums to their compensated error bound: core's group_spill.go).
	MemoryLimit     int64
	MemoryLimitName string
	SpillDir        string
}

// GroupMemoryError is the error of groups that outgrow GroupRequest's
// MemoryLimit.
type GroupMemoryError = core.GroupMemoryError

// RowFilter is a predicate over rows, bound to the leaves it reads when a
// Grouper starts (package filter's expressions are RowFilters).
type RowFilter interface {
	// Columns are the columns it reads.
	Columns() []string
	// Bind makes the predicate over those columns, of the given kinds
	// and types, in Columns' order.
	Bind(cols []core.Column) (core.Filter, error)
}

// Grouper folds record batches of one schema into the groups of a
// GroupRequest. It is not safe for concurrent use; the Engine behind it is.
type Grouper struct {
	e      *Engine
	c      *core.Grouper
	req    GroupRequest
	schema *arrow.Schema // of the last batch added
	keys   []arrow17.Leaf
	vals   []arrow17.Leaf
	fils   []arrow17.Leaf
	// first and bound are the schema of the first batch and its leaves
	// (keys, values, filters): what Prepare binds the batches to, on any
	// goroutine (never changed once the grouper starts).
	first *arrow.Schema
	bound [3][]arrow17.Leaf
}

// NewGrouper starts a grouped aggregation of record batches of schema.
func (e *Engine) NewGrouper(schema *arrow.Schema, req GroupRequest) (*Grouper, error) {
	all := arrow17.Leaves(schema)
	resolve := func(names []string, what string) ([]arrow17.Leaf, error) {
		out := make([]arrow17.Leaf, len(names))
		for i, n := range names {
			l, ok := arrow17.Find(all, n)
			if !ok {
				return nil, fmt.Errorf("%s: %w %q (columns: %s)", what, ErrUnknownColumn, n, arrow17.Names(all))
			}
			if !l.Supported() {
				return nil, fmt.Errorf("%s %q: %w", what, n, l.Err)
			}
			out[i] = l
		}
		return out, nil
	}
	keys, err := resolve(req.Keys, "key column")
	if err != nil {
		return nil, err
	}
	var vals []arrow17.Leaf
	if len(req.Columns) > 0 {
		if vals, err = resolve(req.Columns, "column"); err != nil {
			return nil, err
		}
	} else {
		isKey := map[string]bool{}
		for _, k := range keys {
			isKey[k.Name] = true
		}
		for _, l := range all {
			if l.Supported() && !isKey[l.Name] && l.Repeated == 0 {
				vals = append(vals, l)
			}
		}
	}
	g := &Grouper{e: e, req: req, schema: schema, keys: keys, vals: vals}
	creq := core.GroupRequest{Keys: coreColumns(keys), Values: coreColumns(vals), Aggs: make([]agg.Set, len(vals)),
		MemoryLimit: req.MemoryLimit, MemoryLimitName: req.MemoryLimitName, SpillDir: req.SpillDir}
	for i, v := range vals {
		creq.Aggs[i] = req.Aggs
		if v.Kind.Family() == column.FamilyCounts {
			creq.Aggs[i] = agg.Normalize(req.Aggs) & agg.Answers(column.FamilyCounts)
			if creq.Aggs[i] == 0 {
				creq.Aggs[i] = agg.Count | agg.NullCount
			}
		}
	}
	if req.Filter != nil {
		if g.fils, err = resolve(req.Filter.Columns(), "filter column"); err != nil {
			return nil, err
		}
		creq.Filters = coreColumns(g.fils)
		if creq.Filter, err = req.Filter.Bind(creq.Filters); err != nil {
			return nil, err // (the filter's errors say "where:")
		}
	}
	if g.c, err = e.Engine.NewGrouper(creq); err != nil {
		return nil, err
	}
	g.first, g.bound = schema, [3][]arrow17.Leaf{g.keys, g.vals, g.fils}
	return g, nil
}

// Add folds one record batch into the groups. It is Prepare, then
// AddPrepared.
func (g *Grouper) Add(ctx context.Context, rec arrow.Record) error {
	p, err := g.Prepare(ctx, rec)
	if err != nil {
		return err
	}
	return g.AddPrepared(ctx, p)
}

// Prepared is a record batch whose grouping has begun (Grouper.Prepare).
type Prepared struct {
	c      *core.Prepared
	schema *arrow.Schema
	leaves [3][]arrow17.Leaf
	cols   [][]arrow17.Column
}

// Release releases what the batch's columns hold, once; AddPrepared
// releases the batches it adds, so only a batch never added needs it.
func (p *Prepared) Release() {
	for _, cols := range p.cols {
		for i := range cols {
			cols[i].Release()
		}
	}
	p.cols = nil
}

// Prepare begins the grouping of rec with what depends on rec alone (its
// columns checked and extracted, and, for a batch of few keys, its rows
// pre-aggregated a part at a time: core.Grouper.Prepare). It may run on
// any goroutine, for several batches at once and while AddPrepared runs.
// AddPrepared then adds the prepared batches one at a time, in the order
// of their rows; the groups are the same bytes as Add's.
func (g *Grouper) Prepare(ctx context.Context, rec arrow.Record) (*Prepared, error) {
	leaves, err := g.bind(rec.Schema())
	if err != nil {
		return nil, err
	}
	p := &Prepared{schema: rec.Schema(), leaves: leaves}
	var views [3][]*column.View
	for i, ls := range leaves {
		cols := make([]arrow17.Column, len(ls))
		p.cols = append(p.cols, cols)
		views[i] = make([]*column.View, len(ls))
		for k, l := range ls {
			if err := arrow17.Extract(&cols[k], rec, l, g.e.mem); err != nil {
				p.Release()
				return nil, err
			}
			views[i][k] = &cols[k].View
		}
	}
	if p.c, err = g.c.Prepare(ctx, int(rec.NumRows()), views[0], views[1], views[2]); err != nil {
		p.Release()
		return nil, err
	}
	return p, nil
}

// AddPrepared folds a prepared batch into the groups: its rows follow
// those added before. It releases the batch.
func (g *Grouper) AddPrepared(ctx context.Context, p *Prepared) error {
	defer p.Release()
	if p.schema != g.schema && !p.schema.Equal(g.schema) {
		g.schema = p.schema
		g.keys, g.vals, g.fils = p.leaves[0], p.leaves[1], p.leaves[2]
	}
	return g.c.Commit(ctx, p.c)
}

// AddResident groups the rows of resident data (Residency.Upload): each
// batch whose key and value columns the GPU keeps, and whose key the GPU
// groups (one integer key whose range in the batch is at most the backend's
// domain; values and aggregates its grouped kernels take), is grouped on
// the device at device speed, the key's range found there too; the other
// batches are grouped on the host as Add groups them. Columns are matched
// by name, of the same types as the grouper's.
func (g *Grouper) AddResident(ctx context.Context, res *Resident) error {
	types := make(map[string]arrow.DataType, len(res.leaves))
	for _, l := range res.leaves {
		types[l.Name] = l.Type
	}
	for _, l := range append(append(append([]arrow17.Leaf(nil), g.keys...), g.vals...), g.fils...) {
		dt, ok := types[l.Name]
		if !ok {
			return fmt.Errorf("column %q: not in the resident data", l.Name)
		}
		if !arrow.TypeEqual(dt, l.Type) {
			return fmt.Errorf("column %q: %s in the resident data, %s in the grouper", l.Name, dt, l.Type)
		}
	}
	return g.c.AddResident(ctx, res.Resident)
}

// bind resolves the grouper's columns (keys, values, filters) in the
// schema of a batch: those of the first batch for its schema, otherwise by
// name, each of the same value type as in the first batch (another file of
// a dataset). It reads only what never changes once the grouper starts.
func (g *Grouper) bind(schema *arrow.Schema) ([3][]arrow17.Leaf, error) {
	if schema == g.first || schema.Equal(g.first) {
		return g.bound, nil
	}
	all := arrow17.Leaves(schema)
	var out [3][]arrow17.Leaf
	for k, set := range g.bound {
		out[k] = make([]arrow17.Leaf, len(set))
		for i, was := range set {
			l, ok := arrow17.Find(all, was.Name)
			if !ok {
				return out, fmt.Errorf("%w %q in a batch of schema %s", ErrUnknownColumn, was.Name, schema)
			}
			if !l.Supported() || l.Repeated > 0 {
				return out, fmt.Errorf("column %q is %s in a batch, %s before (unsupported)", was.Name, l.Type, was.Type)
			}
			if !arrow.TypeEqual(ValueType(l.Type), ValueType(was.Type)) || l.Kind != was.Kind {
				return out, fmt.Errorf("column %q is %s in a batch, %s before: grouping columns whose type changes is unsupported", was.Name, l.Type, was.Type)
			}
			out[k][i] = l
		}
	}
	return out, nil
}

// Rows is the number of rows added (or skipped: SkipRows) so far, Kept
// those the filter kept.
func (g *Grouper) Rows() int64 { return g.c.Rows() }

// SkipRows counts n rows of the input that are not added because the
// request's filter keeps none of them (rows whose statistics exclude it,
// say): the rows added next are numbered after them, as the rows that
// first, last, arg_min and arg_max give are those of the input.
func (g *Grouper) SkipRows(n int64) { g.c.SkipRows(n) }

// Kept is the number of rows the filter kept so far.
func (g *Grouper) Kept() int64 { return g.c.Kept() }

// Groups is the number of groups so far.
func (g *Grouper) Groups() int { return g.c.Groups() }

// GPUBatches is the number of batches grouped on the GPU so far (a batch
// whose one key is an integer of a small range, or a dictionary of few
// entries, and whose values and aggregates the GPU backend's grouped
// kernels take; the others are grouped on the CPU).
func (g *Grouper) GPUBatches() int { return g.c.GPUBatches() }

// Schema is the schema of the result: the key columns (a dictionary key's
// value type), count_all when asked for, then per value column its
// aggregates named as pyarrow's group_by().aggregate() names them
// ("x_sum", "x_min"), in agg's order, those that apply to its type.
func (g *Grouper) Schema() *arrow.Schema {
	fields, _ := g.layout(nil)
	return arrow.NewSchema(fields, nil)
}

// IntegerSumKey is the key of the field metadata of a grouped result's
// sum column that is decimal256(76, 0) because the exact sum of an integer
// column does not fit its type in some group: its values are integers.
const IntegerSumKey = "arrowagg.integer_sum"

// outCol is one aggregate column of the result.
type outCol struct {
	val int     // the value column
	a   agg.Set // the aggregate
	dt  arrow.DataType
}

// layout is the result's fields and aggregate columns; wide marks the sum
// columns that must be decimal256 (a group's exact sum does not fit the
// sum's type).
func (g *Grouper) layout(wide map[int]bool) ([]arrow.Field, []outCol) {
	var fields []arrow.Field
	for _, k := range g.keys {
		fields = append(fields, arrow.Field{Name: k.Name, Type: ValueType(k.Type), Nullable: true})
	}
	if g.req.CountRows {
		fields = append(fields, arrow.Field{Name: "count_all", Type: arrow.PrimitiveTypes.Int64})
	}
	var cols []outCol
	aggs := agg.Normalize(g.req.Aggs)
	for i, v := range g.vals {
		vt := ValueType(v.Type)
		tracks := agg.Tracking(aggs) & agg.Answers(v.Kind.Family())
		for _, a := range agg.Each() {
			if !aggs.Has(a) || !tracks.Has(a) {
				continue
			}
			var dt arrow.DataType
			switch a {
			case agg.Count, agg.NullCount, agg.ArgMin, agg.ArgMax:
				dt = arrow.PrimitiveTypes.Int64
			case agg.Sum:
				if dt = sumType(vt); dt != nil && wide[len(cols)] {
					var scale int32
					if d, ok := vt.(*arrow.Decimal128Type); ok {
						scale = d.Scale
					}
					dt = &arrow.Decimal256Type{Precision: 76, Scale: scale}
				}
			case agg.Mean:
				if meanApplies(vt) {
					dt = arrow.PrimitiveTypes.Float64
				}
			default:
				dt = vt
			}
			if dt == nil {
				continue
			}
			field := arrow.Field{Name: v.Name + "_" + a.Name(), Type: dt, Nullable: true}
			if a == agg.Sum && dt.ID() == arrow.DECIMAL256 && sumType(vt).ID() != arrow.DECIMAL128 {
				// An integer column's sum, too large for its type.
				field.Metadata = arrow.NewMetadata([]string{IntegerSumKey}, []string{"true"})
			}
			fields = append(fields, field)
			cols = append(cols, outCol{val: i, a: a, dt: dt})
		}
	}
	return fields, cols
}

// Result is the groups as one record batch (Schema), sorted by key (core's
// Grouper.Sorted: nulls last). Release it when done. Groups that spilled to
// disk are read back a partition at a time (resultByParts), after which the
// grouper is spent: a second Result is an error.
func (g *Grouper) Result(mem memory.Allocator) (arrow.Record, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if err := g.c.Spent(); err != nil {
		return nil, err
	}
	if g.c.Spilled() {
		defer startup.Trace("result built by partition", time.Now(), nil)
		return g.resultByParts(mem)
	}
	start := time.Now()
	refs, err := g.c.Sorted()
	startup.Trace("groups sorted", start, err)
	if err != nil {
		return nil, err
	}
	defer startup.Trace("result built", time.Now(), nil)
	empty := len(g.keys) == 0 && len(refs) == 0 // (one group, of no row)
	wide := map[int]bool{}
	if !empty {
		wide = g.wideSums(g.c.AnySum)
	}
	schema, arrs, err := g.columns(mem, refs, empty, wide)
	if err != nil {
		return nil, err
	}
	defer releaseAll(arrs)
	n := len(refs)
	if empty {
		n = 1
	}
	return array.NewRecord(schema, arrs, int64(n)), nil
}

// wideSums are the output columns of sums that overflow their type in
// some group (anySum, of a value column), which are decimal256 columns.
func (g *Grouper) wideSums(anySum func(val int, pred func(agg.Int192) bool) bool) map[int]bool {
	_, cols := g.layout(nil)
	wide := map[int]bool{}
	for c, oc := range cols {
		if oc.a != agg.Sum || oc.dt.ID() == arrow.FLOAT64 {
			continue
		}
		wide[c] = anySum(oc.val, func(s agg.Int192) bool { return !sumFits(s, oc.dt) })
	}
	return wide
}

// releaseAll releases the arrays of arrs that are not nil.
func releaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}

// columns builds the result's columns (layout(wide)) of the groups refs, in
// their order (empty: one group of no row).
func (g *Grouper) columns(mem memory.Allocator, refs []core.GroupRef, empty bool, wide map[int]bool) (*arrow.Schema, []arrow.Array, error) {
	n := len(refs)
	if empty {
		n = 1
	}
	fields, cols := g.layout(wide)
	schema := arrow.NewSchema(fields, nil)
	// The groups are built in ranges of resultRange, each range's keys
	// with count_all, and each value column's aggregates, by a task of its
	// own (each group's state finalized once per value column), on up to
	// GOMAXPROCS goroutines; each column's ranges are then concatenated.
	first := len(g.keys)
	if g.req.CountRows {
		first++
	}
	aggs := agg.Normalize(g.req.Aggs)
	ranges := max(1, (n+resultRange-1)/resultRange)
	parts := make([][]arrow.Array, len(fields)) // per column, its ranges' arrays
	for c := range parts {
		parts[c] = make([]arrow.Array, ranges)
	}
	defer func() {
		for _, ps := range parts {
			for _, p := range ps {
				if p != nil {
					p.Release()
				}
			}
		}
	}()
	mine := make([][]int, len(g.vals)) // per value column, its output columns
	for c, oc := range cols {
		mine[oc.val] = append(mine[oc.val], c)
	}
	// The columns of 4- and 8-byte values are written in place (direct),
	// the others through a builder per range.
	direct := make([]*directColumn, len(fields))
	defer func() {
		for _, d := range direct {
			if d != nil {
				d.release()
			}
		}
	}()
	for c, f := range fields {
		switch {
		case !directResult:
			continue
		case c < len(g.keys) && directWidth(f.Type) == 0:
			continue
		case c >= first && !directAggregate(cols[c-first].a, f.Type, wide[c-first]):
			continue
		}
		direct[c] = newDirectColumn(mem, f.Type, n, ranges)
	}
	build := func(task int) error {
		r, what := task%ranges, task/ranges // what: 0 the keys, 1+v value column v
		lo, hi := r*resultRange, min(n, (r+1)*resultRange)
		var outs []int // the output columns the task builds
		if what == 0 {
			for c := range first {
				outs = append(outs, c)
			}
		} else {
			for _, c := range mine[what-1] {
				outs = append(outs, first+c)
			}
		}
		bs := make([]array.Builder, len(outs)) // (nil: direct)
		for i, c := range outs {
			if direct[c] != nil {
				// (the range's validity bytes, as a builder's start)
				clear(direct[c].valid[lo/8 : (hi+7)/8])
				continue
			}
			bs[i] = array.NewBuilder(mem, fields[c].Type)
			defer bs[i].Release()
			bs[i].Reserve(hi - lo)
		}
		if what == 0 {
			if !empty {
				key := make([]core.KeyValue, len(g.keys))
				for k, ref := range refs[lo:hi] {
					g.c.Key(ref, key)
					for i := range g.keys {
						if d := direct[i]; d != nil {
							d.value(lo+k, r, key[i].Valid, key[i].Value)
						} else if err := appendValue(bs[i], fields[i].Type, key[i].Valid, key[i].Value); err != nil {
							return fmt.Errorf("key column %q: %w", g.keys[i].Name, err)
						}
					}
				}
			}
			if g.req.CountRows {
				f := len(g.keys)
				for k := lo; k < hi; k++ {
					var rows int64
					if !empty {
						rows = g.c.GroupRows(refs[k])
					}
					if d := direct[f]; d != nil {
						d.set(k, uint64(rows))
					} else {
						bs[f].(*array.Int64Builder).Append(rows)
					}
				}
			}
		} else {
			val := what - 1
			vt := ValueType(g.vals[val].Type)
			// The states of a batch of groups at a time (core.States: their
			// reads in flight together), each finalized once; the one group
			// of an empty result has the empty state.
			var (
				gs  []*agg.Groups
				idx []int32
			)
			states := make([]agg.State, min(resultBatch, hi-lo))
			for b := lo; b < hi; b += resultBatch {
				e := min(hi, b+resultBatch)
				if empty {
					states[0] = agg.New(g.vals[val].Kind.Family(), g.req.Aggs)
				} else {
					g.c.States(refs[b:e], val, states, &gs, &idx)
				}
				for k := b; k < e; k++ {
					fin := states[k-b].Finalize(aggs)
					for i, c := range mine[val] {
						if d := direct[first+c]; d != nil {
							d.aggregate(k, r, cols[c].a, &fin, vt)
						} else if err := appendAggregate(bs[i], cols[c].a, &fin, vt, fields[first+c].Type, wide[c]); err != nil {
							return fmt.Errorf("column %q: %w", fields[first+c].Name, err)
						}
					}
				}
			}
		}
		for i, c := range outs {
			if bs[i] != nil {
				parts[c][r] = bs[i].NewArray()
			}
		}
		return nil
	}
	if err := forEach(ranges*(1+len(g.vals)), 0, build); err != nil {
		return nil, nil, err
	}
	// The columns' ranges concatenated, a column per task.
	arrs := make([]arrow.Array, len(fields))
	err := forEach(len(fields), 0, func(c int) (err error) {
		if d := direct[c]; d != nil {
			arrs[c], direct[c] = d.array(n), nil
			return nil
		}
		if ranges == 1 {
			arrs[c] = parts[c][0]
			arrs[c].Retain()
			return nil
		}
		if arrs[c], err = array.Concatenate(parts[c], mem); err != nil {
			return fmt.Errorf("column %q: %w", fields[c].Name, err)
		}
		return nil
	})
	if err != nil {
		releaseAll(arrs)
		return nil, nil, err
	}
	return schema, arrs, nil
}

// resultByParts is Result of groups that spilled to disk (of groups in
// memory too: the test compares the two routes). Each partition's groups are built into columns in the order of
// their ids, reading their states in the order they lie, and the columns
// of every partition are then concatenated and taken in the order of the
// keys (core.Grouper.Sorted, on the keys alone). Spilled partitions are
// loaded (core.Grouper.Load) a few at a time, as many as the memory limit
// holds by their size on disk, and their states are dropped once built
// (the grouper is then spent): what is held at once is the partitions
// being loaded, the keys and the result.
func (g *Grouper) resultByParts(mem memory.Allocator) (arrow.Record, error) {
	ctx := context.Background()
	if len(g.keys) == 0 { // (one group: Results reads its states too)
		if err := g.c.LoadAll(ctx); err != nil {
			return nil, err
		}
		return g.Result(mem)
	}
	spilled := g.c.Spilled()
	var all map[int]bool // the wide sums, when every partition is in memory
	if !spilled {
		all = g.wideSums(g.c.AnySum)
	}
	parts := g.c.Partitions()
	per := make([][]arrow.Array, parts) // per partition, its columns
	perWide := make([]map[int]bool, parts)
	defer func() {
		for _, arrs := range per {
			releaseAll(arrs)
		}
	}()
	var most int64
	for p := range parts {
		most = max(most, g.c.SpilledBytes(p))
	}
	// A partition loaded takes about twice its bytes on disk.
	workers := runtime.GOMAXPROCS(0)
	if lim := g.req.MemoryLimit; lim > 0 && most > 0 {
		workers = int(max(1, min(int64(workers), lim/(2*most))))
	}
	err := forEach(parts, workers, func(p int) error {
		if err := g.c.Load(p); err != nil {
			return err
		}
		if perWide[p] = all; spilled {
			perWide[p] = g.wideSums(func(val int, pred func(agg.Int192) bool) bool { return g.c.AnySumIn(p, val, pred) })
		}
		var err error
		_, per[p], err = g.columns(mem, g.c.PartGroups(p), false, perWide[p])
		if spilled {
			g.c.DropStates(p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	wide := map[int]bool{}
	for _, w := range perWide {
		for c, yes := range w {
			wide[c] = wide[c] || yes
		}
	}
	fields, cols := g.layout(wide)
	first := len(fields) - len(cols)
	for p, arrs := range per {
		for c := range cols {
			if wide[c] && !perWide[p][c] {
				w, err := widenSum(mem, arrs[first+c], fields[first+c].Type)
				if err != nil {
					return nil, fmt.Errorf("column %q: %w", fields[first+c].Name, err)
				}
				arrs[first+c].Release()
				arrs[first+c] = w
			}
		}
	}
	refs, err := g.c.Sorted()
	if err != nil {
		return nil, err
	}
	// The position of each group, in key order, among the partitions'
	// columns one after the other.
	off := make([]int64, parts+1)
	for p := range parts {
		off[p+1] = off[p] + int64(g.c.PartLen(p))
	}
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	ib.Reserve(len(refs))
	for _, r := range refs {
		p, id := r.Index()
		ib.UnsafeAppend(off[p] + int64(id))
	}
	idx := ib.NewInt64Array()
	defer idx.Release()
	// A column at a time (its ranges of takeRange groups gathered in
	// parallel), so that what is held besides the columns of the
	// partitions and the result is one column's copies, not the result's.
	tctx := compute.WithAllocator(ctx, mem)
	arrs := make([]arrow.Array, len(fields))
	for c := range fields {
		col := make([]arrow.Array, parts)
		for p := range parts {
			col[p], per[p][c] = per[p][c], nil
		}
		var err error
		if arrs[c], err = gatherColumn(tctx, mem, col, idx); err != nil {
			releaseAll(arrs)
			return nil, fmt.Errorf("column %q: %w", fields[c].Name, err)
		}
	}
	defer releaseAll(arrs)
	return array.NewRecord(arrow.NewSchema(fields, nil), arrs, int64(len(refs))), nil
}

// gatherColumn is the column whose pieces are parts (a partition's each,
// one after the other), its rows taken in the order of idx: the pieces
// concatenated (and released), then taken in ranges of takeRange rows in
// parallel, then the ranges concatenated.
func gatherColumn(ctx context.Context, mem memory.Allocator, parts []arrow.Array, idx *array.Int64) (arrow.Array, error) {
	all, err := array.Concatenate(parts, mem)
	releaseAll(parts)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	n := idx.Len()
	ranges := max(1, (n+takeRange-1)/takeRange)
	pieces := make([]arrow.Array, ranges)
	defer releaseAll(pieces)
	err = forEach(ranges, 0, func(k int) error {
		sl := array.NewSlice(idx, int64(k*takeRange), int64(min(n, (k+1)*takeRange)))
		defer sl.Release()
		var err error
		pieces[k], err = compute.TakeArray(ctx, all, sl)
		return err
	})
	if err != nil {
		return nil, err
	}
	if ranges == 1 {
		pieces[0].Retain()
		return pieces[0], nil
	}
	return array.Concatenate(pieces, mem)
}

// widenSum is a column of sums (int64, uint64 or decimal128) as the
// decimal256 column dt, where another partition's sums overflow.
func widenSum(mem memory.Allocator, a arrow.Array, dt arrow.DataType) (arrow.Array, error) {
	b := array.NewDecimal256Builder(mem, dt.(*arrow.Decimal256Type))
	defer b.Release()
	b.Reserve(a.Len())
	for i := range a.Len() {
		if a.IsNull(i) {
			b.AppendNull()
			continue
		}
		switch a := a.(type) {
		case *array.Int64:
			b.Append(decimal256.FromI64(a.Value(i)))
		case *array.Uint64:
			b.Append(decimal256.FromU64(a.Value(i)))
		case *array.Decimal128:
			v := a.Value(i)
			b.Append(decimal256.FromDecimal128(v))
		default:
			return nil, fmt.Errorf("a sum of %s does not widen to %s", a.DataType(), dt)
		}
	}
	return b.NewArray(), nil
}

// Close frees what the grouper holds: its spill files (spilled groups are
// lost) and its groups' keys and states, at once rather than when the
// grouper is collected (large arrays live outside the Go heap, in
// mappings). Records Result returned stay valid. After Close, adding,
// merging and Result are errors. Safe to call twice.
func (g *Grouper) Close() error { return g.c.Close() }

// Spills reports how many times the groups spilled to disk, and the bytes
// written (GroupRequest.SpillDir).
func (g *Grouper) Spills() (times int, bytes int64) { return g.c.Spills() }

// takeRange is the groups of a task gathering the result in key order (a
// variable for the tests).
var takeRange = 1 << 20

// forEach runs f(i) for every i in [0, n) on up to workers goroutines
// (0: GOMAXPROCS) and returns their errors, joined.
func forEach(n, workers int, f func(i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				errs[i] = f(i)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// directResult writes the result's columns of 4- and 8-byte values in
// place (directColumn); tests turn it off to compare with the builders.
var directResult = true

// resultRange is the groups of a task building the result (a variable:
// tests make it small, so that small results have several ranges).
var resultRange = 1 << 16

// resultBatch is the groups whose states a task reads at once
// (core.Grouper.States).
const resultBatch = 512

// Results are, for a request without keys, the aggregates of its one group
// (of the rows kept) as Aggregate's: a Result per value column; nil with
// keys.
func (g *Grouper) Results() []Result {
	if len(g.keys) > 0 {
		return nil
	}
	out := make([]Result, len(g.vals))
	err := g.c.Spent()
	if err == nil {
		err = g.c.LoadAll(context.Background())
	}
	var refs []core.GroupRef
	if err == nil {
		refs, err = g.c.Sorted()
	}
	if err != nil {
		for i, v := range g.vals {
			out[i] = Result{Name: v.Name, Type: v.Type, Err: err}
		}
		return out
	}
	for i, v := range g.vals {
		st := agg.New(v.Kind.Family(), g.req.Aggs)
		if len(refs) > 0 {
			st = g.c.State(refs[0], i)
		}
		out[i] = Finalize(&st, v.Name, v.Type, g.req.Aggs)
	}
	return out
}

// Merge folds the groups of o, a grouper of the same request (the same
// key and value columns, of the same types, and aggregates), into g: o's
// rows follow g's, as Accumulator.Merge's do.
func (g *Grouper) Merge(o *Grouper) error {
	if err := g.sameColumns(o.keys, o.vals); err != nil {
		return err
	}
	return g.c.Merge(o.c)
}

func (g *Grouper) sameColumns(keys, vals []arrow17.Leaf) error {
	for _, p := range [][2][]arrow17.Leaf{{g.keys, keys}, {g.vals, vals}} {
		if len(p[0]) != len(p[1]) {
			return fmt.Errorf("merging the groups of %d columns with those of %d", len(p[1]), len(p[0]))
		}
		for i := range p[0] {
			a, b := p[0][i], p[1][i]
			if a.Name != b.Name || !arrow.TypeEqual(ValueType(a.Type), ValueType(b.Type)) {
				return fmt.Errorf("merging column %q (%s) with %q (%s)", b.Name, b.Type, a.Name, a.Type)
			}
		}
	}
	return nil
}

// MarshalBinary writes the groups' partial states (keys, rows and each
// value column's agg.State), for MergeBinary: grouped partial states travel
// between processes and machines.
func (g *Grouper) MarshalBinary() ([]byte, error) { return g.c.MarshalBinary() }

// MergeBinary folds the groups MarshalBinary wrote, of a grouper of the same
// request, into g (their rows after g's). The columns are checked by kind
// and aggregates; bytes that are not such groups are an error, which may
// come after some groups were merged: merge into a fresh grouper where
// that matters.
func (g *Grouper) MergeBinary(b []byte) error { return g.c.MergeBinary(b) }

// GroupBy reads every record batch of rdr and returns its groups (Grouper's
// Result). It does not release rdr.
func (e *Engine) GroupBy(ctx context.Context, rdr array.RecordReader, req GroupRequest, mem memory.Allocator) (arrow.Record, error) {
	g, err := e.NewGrouper(rdr.Schema(), req)
	if err != nil {
		return nil, err
	}
	defer g.Close() //nolint:errcheck // (its spill files and states, the record built or not; a failed close changes no answer)
	for rdr.Next() {
		if err := g.Add(ctx, rdr.Record()); err != nil {
			return nil, err
		}
	}
	if err := rdr.Err(); err != nil {
		return nil, err
	}
	return g.Result(mem)
}

// Where is the filter of a predicate in package filter's language (SQL's
// WHERE: comparisons of columns with literals, IN, IS [NOT] NULL, AND, OR,
// NOT): a syntax error is a *filter.SyntaxError saying where.
func Where(src string) (RowFilter, error) {
	e, err := filter.Parse(src)
	if err != nil {
		return nil, err
	}
	return WhereExpr(e), nil
}

// WhereExpr is the filter of a parsed predicate.
func WhereExpr(e filter.Expr) RowFilter { return whereFilter{e} }

type whereFilter struct{ e filter.Expr }

func (w whereFilter) Columns() []string { return filter.Columns(w.e) }

func (w whereFilter) Bind(cols []core.Column) (core.Filter, error) {
	scales := make([]int32, len(cols))
	for i, c := range cols {
		if dt, ok := c.Type.(arrow.DataType); ok {
			if d, ok := ValueType(dt).(arrow.DecimalType); ok {
				scales[i] = d.GetScale()
			}
		}
	}
	return core.Where(w.e, cols, scales)
}

// Pruner is the test of row groups that f can skip: given the partial
// states of f's columns (Columns order, leaves in that order; nil where
// unknown) over a row group, such as its statistics give, it reports
// whether a row of it may be kept. A filter that cannot say keeps every
// row group.
func Pruner(f RowFilter, leaves []arrow17.Leaf) (func(stats []*agg.State) bool, error) {
	bound, err := f.Bind(coreColumns(leaves))
	if err != nil {
		return nil, err
	}
	if p, ok := bound.(interface{ MayMatch([]*agg.State) bool }); ok {
		return p.MayMatch, nil
	}
	return func([]*agg.State) bool { return true }, nil
}
