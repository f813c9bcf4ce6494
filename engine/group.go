package engine

import (
	"context"
	"fmt"
	"math/big"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal256"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine/core"
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
}

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
	schema *arrow.Schema
	keys   []arrow17.Leaf
	vals   []arrow17.Leaf
	fils   []arrow17.Leaf
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
	creq := core.GroupRequest{Keys: coreColumns(keys), Values: coreColumns(vals), Aggs: make([]agg.Set, len(vals))}
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
			return nil, fmt.Errorf("filter: %w", err)
		}
	}
	if g.c, err = e.Engine.NewGrouper(creq); err != nil {
		return nil, err
	}
	return g, nil
}

// Add folds one record batch into the groups.
func (g *Grouper) Add(ctx context.Context, rec arrow.Record) error {
	if !rec.Schema().Equal(g.schema) {
		if err := g.rebind(rec.Schema()); err != nil {
			return err
		}
	}
	extract := func(leaves []arrow17.Leaf) ([]arrow17.Column, []*column.View, error) {
		cols := make([]arrow17.Column, len(leaves))
		views := make([]*column.View, len(leaves))
		for i, l := range leaves {
			if err := arrow17.Extract(&cols[i], rec, l, g.e.mem); err != nil {
				return cols, nil, err
			}
			views[i] = &cols[i].View
		}
		return cols, views, nil
	}
	var all [][]arrow17.Column
	defer func() {
		for _, cols := range all {
			for i := range cols {
				cols[i].Release()
			}
		}
	}()
	var views [3][]*column.View
	for i, leaves := range [][]arrow17.Leaf{g.keys, g.vals, g.fils} {
		cols, v, err := extract(leaves)
		all = append(all, cols)
		if err != nil {
			return err
		}
		views[i] = v
	}
	return g.c.Add(ctx, int(rec.NumRows()), views[0], views[1], views[2])
}

// rebind resolves the grouper's columns in the schema of a batch whose
// schema is not the grouper's (another file of a dataset): by name, each
// of the same value type as before.
func (g *Grouper) rebind(schema *arrow.Schema) error {
	all := arrow17.Leaves(schema)
	for _, set := range []*[]arrow17.Leaf{&g.keys, &g.vals, &g.fils} {
		out := make([]arrow17.Leaf, len(*set))
		for i, was := range *set {
			l, ok := arrow17.Find(all, was.Name)
			if !ok {
				return fmt.Errorf("%w %q in a batch of schema %s", ErrUnknownColumn, was.Name, schema)
			}
			if !l.Supported() || l.Repeated > 0 {
				return fmt.Errorf("column %q is %s in a batch, %s before (unsupported)", was.Name, l.Type, was.Type)
			}
			if !arrow.TypeEqual(ValueType(l.Type), ValueType(was.Type)) || l.Kind != was.Kind {
				return fmt.Errorf("column %q is %s in a batch, %s before: grouping columns whose type changes is unsupported", was.Name, l.Type, was.Type)
			}
			out[i] = l
		}
		*set = out
	}
	g.schema = schema
	return nil
}

// Rows is the number of rows added so far, Kept those the filter kept.
func (g *Grouper) Rows() int64 { return g.c.Rows() }

// Kept is the number of rows the filter kept so far.
func (g *Grouper) Kept() int64 { return g.c.Kept() }

// Groups is the number of groups so far.
func (g *Grouper) Groups() int { return g.c.Groups() }

// Schema is the schema of the result: the key columns (a dictionary key's
// value type), count_all when asked for, then per value column its
// aggregates named as pyarrow's group_by().aggregate() names them
// ("x_sum", "x_min"), in agg's order, those that apply to its type.
func (g *Grouper) Schema() *arrow.Schema {
	fields, _ := g.layout(nil)
	return arrow.NewSchema(fields, nil)
}

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
			fields = append(fields, arrow.Field{Name: v.Name + "_" + a.Name(), Type: dt, Nullable: true})
			cols = append(cols, outCol{val: i, a: a, dt: dt})
		}
	}
	return fields, cols
}

// Result is the groups as one record batch (Schema), sorted by key (core's
// Grouper.Sorted: nulls last). Release it when done.
func (g *Grouper) Result(mem memory.Allocator) (arrow.Record, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	refs := g.c.Sorted()
	_, cols := g.layout(nil)
	// Finalize every group's value columns once.
	results := make([][]Result, len(g.vals))
	empty := len(g.keys) == 0 && len(refs) == 0
	for i, v := range g.vals {
		results[i] = make([]Result, max(len(refs), 1))
		for k, r := range refs {
			st := g.c.State(r, i)
			results[i][k] = Finalize(&st, v.Name, v.Type, g.req.Aggs)
		}
		if empty {
			st := agg.New(v.Kind.Family(), g.req.Aggs)
			results[i][0] = Finalize(&st, v.Name, v.Type, g.req.Aggs)
		}
	}
	wide := map[int]bool{}
	for c, oc := range cols {
		if oc.a != agg.Sum {
			continue
		}
		for _, r := range results[oc.val] {
			if r.SumOverflow {
				wide[c] = true
				break
			}
		}
	}
	fields, cols := g.layout(wide)
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	n := len(refs)
	if empty {
		n = 1
	}
	key := make([]core.KeyValue, len(g.keys))
	for k := range n {
		f := 0
		if !empty {
			g.c.Key(refs[k], key)
			for i := range g.keys {
				if err := scalar.Append(b.Field(f), valueScalar(fields[f].Type, key[i].Valid, key[i].Value)); err != nil {
					return nil, fmt.Errorf("key column %q: %w", g.keys[i].Name, err)
				}
				f++
			}
		}
		if g.req.CountRows {
			var rows int64
			if !empty {
				rows = g.c.GroupRows(refs[k])
			}
			b.Field(f).(*array.Int64Builder).Append(rows)
			f++
		}
		for c, oc := range cols {
			s := aggScalar(&results[oc.val][k], oc.a, fields[f+c].Type, wide[c])
			if err := scalar.Append(b.Field(f+c), s); err != nil {
				return nil, fmt.Errorf("column %q: %w", fields[f+c].Name, err)
			}
		}
	}
	return b.NewRecord(), nil
}

// aggScalar is aggregate a of a result as a scalar of type dt (a sum of
// decimal256, wide, where some group's sum overflows its type).
func aggScalar(r *Result, a agg.Set, dt arrow.DataType, wide bool) scalar.Scalar {
	switch a {
	case agg.Count:
		return scalar.NewInt64Scalar(r.Count)
	case agg.NullCount:
		return scalar.NewInt64Scalar(r.NullCount)
	case agg.Sum:
		if wide {
			if r.Count == 0 || r.SumExact == nil {
				return scalar.MakeNullScalar(dt)
			}
			return scalar.NewDecimal256Scalar(decimal256.FromBigInt(new(big.Int).Set(r.SumExact)), dt)
		}
		return r.Sum
	case agg.Min:
		return r.Min
	case agg.Max:
		return r.Max
	case agg.Mean:
		return r.Mean
	case agg.First:
		return r.First
	case agg.Last:
		return r.Last
	case agg.ArgMin:
		return r.ArgMin
	case agg.ArgMax:
		return r.ArgMax
	}
	return scalar.MakeNullScalar(dt)
}

// GroupBy reads every record batch of rdr and returns its groups (Grouper's
// Result). It does not release rdr.
func (e *Engine) GroupBy(ctx context.Context, rdr array.RecordReader, req GroupRequest, mem memory.Allocator) (arrow.Record, error) {
	g, err := e.NewGrouper(rdr.Schema(), req)
	if err != nil {
		return nil, err
	}
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
