package dataset

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
)

// The keys of Hive-partitioned paths (data/year=2024/part-0.parquet) are
// columns of the dataset whose value is constant in each file: int64 when
// every value of the key that is not null (__HIVE_DEFAULT_PARTITION__)
// reads as one, else utf8. A file that has a column of a key's name is an
// error. A key's state over a file of n rows is that of one window of the
// value, doubled by merges: its cost does not grow with n.

// partitionReason is the plan's reason for a partition key.
const partitionReason = "hive partition key: a constant of the file's path"

// partitionValue is the value of a partition key in one source.
type partitionValue struct {
	value string
	null  bool
}

// addPartitions types the sources' partition keys and adds them to each
// source's leaves.
func (d *Dataset) addPartitions() error {
	types := map[string]arrow.DataType{}
	for _, s := range d.sources {
		for _, p := range s.Partitions {
			if _, ok := types[p.Key]; !ok {
				types[p.Key] = arrow.PrimitiveTypes.Int64
			}
			if p.Value == hiveNull {
				continue
			}
			if _, err := strconv.ParseInt(p.Value, 10, 64); err != nil {
				types[p.Key] = arrow.BinaryTypes.String
			}
		}
	}
	if len(types) == 0 {
		return nil
	}
	for i, s := range d.sources {
		fi := &d.files[i]
		for _, p := range s.Partitions {
			if _, ok := fi.partitions[p.Key]; ok {
				continue // the same key twice in the path: the first wins
			}
			if _, ok := fi.leaf(p.Key); ok {
				return &Error{Path: s.Name(), Err: fmt.Errorf("column %q is both a key of the path's partitions and a column of the file", p.Key)}
			}
			if fi.partitions == nil {
				fi.partitions = map[string]partitionValue{}
			}
			fi.partitions[p.Key] = partitionValue{value: p.Value, null: p.Value == hiveNull}
			t := types[p.Key]
			kind, err := arrow17.KindOf(t)
			if err != nil {
				return err
			}
			fi.leaves = append(fi.leaves, arrow17.Leaf{Name: p.Key, Type: t, Kind: kind}) // (no path: not in the file)
		}
		fi.index = arrow17.NewIndex(fi.leaves)
	}
	return nil
}

// partitionState is the state of leaf l, a partition key of value v, over a
// file of rows rows.
func (d *Dataset) partitionState(ctx context.Context, eng *engine.Engine, l arrow17.Leaf, v partitionValue, rows int64, aggs agg.Set) (agg.State, error) {
	st := agg.New(l.Kind.Family(), aggs)
	if v.null || rows == 0 {
		st.AddNulls(rows)
		return st, nil
	}
	m := min(rows, int64(engine.MorselSize))
	window, err := d.constantWindow(ctx, eng, l, v.value, m, aggs)
	if err != nil {
		return st, err
	}
	// rows = q*m + r: q windows by doubling, then the rest.
	done := int64(0)
	p, pRows := window, m
	for q := rows / m; q > 0; q >>= 1 {
		if q&1 != 0 {
			t := p
			t.ShiftRows(done)
			st.Merge(&t)
			done += pRows
		}
		if q > 1 {
			t := p
			t.ShiftRows(pRows)
			p.Merge(&t)
			pRows *= 2
		}
	}
	if r := rows - done; r > 0 {
		rest, err := d.constantWindow(ctx, eng, l, v.value, r, aggs)
		if err != nil {
			return st, err
		}
		rest.ShiftRows(done)
		st.Merge(&rest)
	}
	return st, nil
}

// constantWindow folds n rows (at most a morsel) of the value s of leaf l.
func (d *Dataset) constantWindow(ctx context.Context, eng *engine.Engine, l arrow17.Leaf, s string, n int64, aggs agg.Set) (agg.State, error) {
	st := agg.New(l.Kind.Family(), aggs)
	var arr arrow.Array
	switch l.Type.ID() {
	case arrow.INT64:
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return st, err
		}
		b := array.NewInt64Builder(d.opts.Mem)
		defer b.Release()
		b.Reserve(int(n))
		for i := int64(0); i < n; i++ {
			b.UnsafeAppend(v)
		}
		arr = b.NewArray()
	default:
		b := array.NewStringBuilder(d.opts.Mem)
		defer b.Release()
		b.Reserve(int(n))
		b.ReserveData(int(n) * len(s))
		for i := int64(0); i < n; i++ {
			b.Append(s)
		}
		arr = b.NewArray()
	}
	rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: l.Name, Type: l.Type}}, nil), []arrow.Array{arr}, n)
	arr.Release()
	defer rec.Release()
	var c arrow17.Column
	if err := arrow17.Extract(&c, rec, arrow17.Leaf{Name: l.Name, Type: l.Type, Kind: l.Kind, Path: []int{0}}, d.opts.Mem); err != nil {
		return st, err
	}
	defer c.Release()
	err := eng.UpdateView(ctx, &c.View, &st)
	return st, err
}
