package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine/core"
)

// groupKeyTypes are the key types the grouped property test covers.
var groupKeyTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Uint32, arrow.FixedWidthTypes.Boolean,
	arrow.FixedWidthTypes.Date32, &arrow.TimestampType{Unit: arrow.Millisecond}, arrow.PrimitiveTypes.Float64,
	&arrow.Decimal128Type{Precision: 20, Scale: 2}, arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString,
	arrow.BinaryTypes.Binary,
	&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String},
	&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Int32},
}

// keyArray makes n keys of type dt drawn from a domain of about card
// values, with nulls (and for floats -0 beside +0, and NaNs).
func keyArray(mem memory.Allocator, r *rand.Rand, dt arrow.DataType, n, card int) arrow.Array {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		// A dictionary with repeated values: keys are values, not indices.
		dict := keyArray(mem, r, d.ValueType, min(2*card+1, 120), card)
		defer dict.Release()
		ib := array.NewBuilder(mem, d.IndexType)
		defer ib.Release()
		for range n {
			if r.IntN(10) == 0 {
				ib.AppendNull()
				continue
			}
			j := r.IntN(dict.Len())
			switch b := ib.(type) {
			case *array.Int16Builder:
				b.Append(int16(j))
			case *array.Int8Builder:
				b.Append(int8(j))
			}
		}
		idx := ib.NewArray()
		defer idx.Release()
		return array.NewDictionaryArray(d, idx, dict)
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for range n {
		if r.IntN(12) == 0 {
			b.AppendNull()
			continue
		}
		k := r.IntN(card)
		switch b := b.(type) {
		case *array.Int64Builder:
			b.Append(int64(k) - int64(card/2))
		case *array.Int8Builder:
			b.Append(int8(k - card/2))
		case *array.Int32Builder:
			b.Append(int32(k % 7))
		case *array.Uint32Builder:
			b.Append(uint32(k) * 1000003)
		case *array.BooleanBuilder:
			b.Append(k%2 == 0)
		case *array.Date32Builder:
			b.Append(arrow.Date32(k))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(k * 86400000))
		case *array.Float64Builder:
			switch k % 5 {
			case 0:
				b.Append(math.Copysign(0, -1))
			case 1:
				b.Append(0)
			case 2:
				b.Append(math.NaN())
			default:
				b.Append(float64(k) / 4)
			}
		case *array.Decimal128Builder:
			b.Append(decimal128.FromI64(int64(k) * 12345))
		case *array.StringBuilder:
			b.Append(strings.Repeat("k", k%4) + fmt.Sprint(k))
		case *array.LargeStringBuilder:
			b.Append(fmt.Sprint(k))
		case *array.BinaryBuilder:
			if k == 0 {
				b.Append([]byte{})
			} else {
				b.Append([]byte{byte(k), 0, byte(k >> 8)})
			}
		default:
			panic(fmt.Sprintf("no keys of %T", b))
		}
	}
	return b.NewArray()
}

// keyString is the oracle's identity of a key value (floats: -0 is 0 and
// NaNs are one).
func keyString(arr arrow.Array, i int) string {
	if arr.IsNull(i) {
		return "∅"
	}
	if d, ok := arr.(*array.Dictionary); ok {
		return keyString(d.Dictionary(), d.GetValueIndex(i))
	}
	switch a := arr.(type) {
	case *array.Float64:
		x := a.Value(i)
		if x == 0 {
			x = 0
		}
		if math.IsNaN(x) {
			return "NaN"
		}
		return fmt.Sprint(x)
	case *array.Binary:
		return fmt.Sprintf("%q", a.Value(i))
	}
	return fmt.Sprintf("%q", arr.ValueStr(i))
}

// evenFilter keeps the rows whose column is valid and even: a RowFilter of
// the test.
type evenFilter struct{ col string }

func (f evenFilter) Columns() []string { return []string{f.col} }
func (f evenFilter) Bind(cols []core.Column) (core.Filter, error) {
	if cols[0].Kind != column.Int32 {
		return nil, fmt.Errorf("evenFilter of %s", cols[0].Type)
	}
	return evenFilter{}, nil
}
func (evenFilter) Select(views []*column.View, lo, hi int, out []uint64) (int, error) {
	v := views[0]
	vals := column.Slice[int32](v.Values)
	clear(out[:(hi-lo+63)/64])
	n := 0
	for i := lo; i < hi; i++ {
		if v.Valid(i) && vals[v.Offset+i]%2 == 0 {
			out[(i-lo)>>6] |= 1 << ((i - lo) & 63)
			n++
		}
	}
	return n, nil
}

// TestGroupByProperty groups random batches by one or two random keys of
// every key type, aggregates value columns of every type with every
// aggregate, with and without a filter, and compares each group with the
// exact oracle over the group's rows; results are the same for 1 and 3
// threads, bit for bit.
func TestGroupByProperty(t *testing.T) {
	r, seed := seeded(t)
	ctx := context.Background()
	valueTypes := oracleTypes
	rounds := 12
	if raceEnabled || testing.Short() {
		rounds = 5
	}
	for round := range rounds {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		nkeys := 1 + r.IntN(2)
		var fields []arrow.Field
		var keyNames []string
		for k := range nkeys {
			dt := groupKeyTypes[r.IntN(len(groupKeyTypes))]
			name := fmt.Sprintf("k%d", k)
			keyNames = append(keyNames, name)
			fields = append(fields, arrow.Field{Name: name, Type: dt, Nullable: true})
		}
		var valNames []string
		for v := range 3 {
			dt := valueTypes[r.IntN(len(valueTypes))]
			name := fmt.Sprintf("v%d", v)
			valNames = append(valNames, name)
			fields = append(fields, arrow.Field{Name: name, Type: dt, Nullable: true})
		}
		fields = append(fields, arrow.Field{Name: "f", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
		schema := arrow.NewSchema(fields, nil)
		card := []int{1, 3, 17, 200}[r.IntN(4)]
		var recs []arrow.Record
		for range 1 + r.IntN(3) {
			n := r.IntN(3000)
			if r.IntN(4) == 0 && !raceEnabled {
				n = 70000 + r.IntN(10000) // more than a morsel
			}
			cols := make([]arrow.Array, len(fields))
			for i, f := range fields {
				switch {
				case i < nkeys:
					cols[i] = keyArray(mem, r, f.Type, n, card)
				case f.Name == "f":
					cols[i] = randArray(mem, r, f.Type, n, 0.1)
				default:
					cols[i] = randArray(mem, r, f.Type, n, []float64{0, 0.05, 0.5}[r.IntN(3)])
				}
			}
			recs = append(recs, array.NewRecord(schema, cols, int64(n)))
			for _, c := range cols {
				c.Release()
			}
		}
		useFilter := r.IntN(2) == 0
		aggs := agg.Default | agg.Ordered
		req := GroupRequest{Keys: keyNames, Columns: valNames, Aggs: aggs, CountRows: true}
		if useFilter {
			req.Filter = evenFilter{"f"}
		}
		name := fmt.Sprintf("round %d seed %d keys %v card %d filter %v", round, seed, schema.Fields()[:nkeys], card, useFilter)

		// The oracle: each group's rows, in row order, across batches.
		type group struct {
			rows []int64  // stream rows
			at   [][2]int // (batch, row in batch)
		}
		groups := map[string]*group{}
		var base int64
		for b, rec := range recs {
			f := rec.Column(len(fields) - 1).(*array.Int32)
			for i := range int(rec.NumRows()) {
				if useFilter && (f.IsNull(i) || f.Value(i)%2 != 0) {
					continue
				}
				var ks []string
				for k := range nkeys {
					ks = append(ks, keyString(rec.Column(k), i))
				}
				key := strings.Join(ks, "|")
				gr := groups[key]
				if gr == nil {
					gr = &group{}
					groups[key] = gr
				}
				gr.rows = append(gr.rows, base+int64(i))
				gr.at = append(gr.at, [2]int{b, i})
			}
			base += rec.NumRows()
		}

		var first *Grouper
		for _, threads := range []int{1, 3} {
			e := cpuEngine(t, mem, threads)
			g, err := e.NewGrouper(schema, req)
			require.NoError(t, err, name)
			if threads == 1 {
				for _, rec := range recs {
					require.NoError(t, g.Add(ctx, rec), name)
				}
			} else {
				// Every batch prepared at once, each on a goroutine of
				// its own, then added in order: the same bits as Add's
				// (checked below against the first run's).
				preps := make([]*Prepared, len(recs))
				errs := make([]error, len(recs))
				var wg sync.WaitGroup
				for b, rec := range recs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						preps[b], errs[b] = g.Prepare(ctx, rec)
					}()
				}
				wg.Wait()
				for b := range recs {
					require.NoError(t, errs[b], name)
					require.NoError(t, g.AddPrepared(ctx, preps[b]), name)
				}
			}
			require.Equal(t, len(groups), g.Groups(), name)
			refs, err := g.c.Sorted()
			require.NoError(t, err, name)
			results := make([][]Result, len(refs)) // per group, per value column
			for gi, ref := range refs {
				key := groupKey(t, mem, g, ref, schema, nkeys)
				match := groups[key]
				require.NotNil(t, match, "%s: group %d (%s) has no oracle group", name, gi, key)
				matchKey := key
				require.Equal(t, int64(len(match.rows)), g.c.GroupRows(ref), "%s: count_all of %s", name, key)
				for vi := range valNames {
					dt := schema.Field(nkeys + vi).Type
					var parts []arrow.Array
					for _, at := range match.at {
						parts = append(parts, array.NewSlice(recs[at[0]].Column(nkeys+vi), int64(at[1]), int64(at[1]+1)))
					}
					ga, err := array.Concatenate(parts, mem)
					require.NoError(t, err)
					for _, p := range parts {
						p.Release()
					}
					want := runOracle(true, []arrow.Array{ga})
					// The oracle's rows are the group's; the result's the stream's.
					for _, p := range []*int64{&want.argMin, &want.argMax} {
						if *p >= 0 {
							*p = match.rows[*p]
						}
					}
					st := g.c.State(ref, vi)
					got := Finalize(&st, valNames[vi], dt, aggs)
					msg := fmt.Sprintf("%s group %s column %s (%s)", name, matchKey, valNames[vi], dt)
					checkResult(t, got, want, dt, msg)
					checkOrdered(t, got, want, msg)
					ga.Release()
					results[gi] = append(results[gi], got)
				}
			}
			// Sorted: each key after the one before.
			out, err := g.Result(mem)
			require.NoError(t, err, name)
			require.Equal(t, int64(len(groups)), out.NumRows(), name)
			require.Equal(t, "count_all", out.Schema().Field(nkeys).Name)
			require.Equal(t, "v0_count", out.Schema().Field(nkeys+1).Name)
			// The record holds the results, as Finalize's scalars.
			for k := range refs {
				for vi, v := range valNames {
					r := results[k][vi]
					for _, a := range agg.Each() {
						idx := out.Schema().FieldIndices(v + "_" + a.Name())
						if len(idx) == 0 {
							continue
						}
						s, err := scalar.GetScalar(out.Column(idx[0]), k)
						require.NoError(t, err)
						release := func() {
							if r, ok := s.(interface{ Release() }); ok { // (arrow-go v18's scalars of binaries hold the array's buffers)
								r.Release()
							}
						}
						want := map[agg.Set]scalar.Scalar{agg.Count: scalar.NewInt64Scalar(r.Count), agg.NullCount: scalar.NewInt64Scalar(r.NullCount),
							agg.Sum: r.Sum, agg.Min: r.Min, agg.Max: r.Max, agg.Mean: r.Mean, agg.First: r.First, agg.Last: r.Last,
							agg.ArgMin: r.ArgMin, agg.ArgMax: r.ArgMax}[a]
						if a == agg.Sum && (r.SumOverflow || s.DataType().ID() == arrow.DECIMAL256) { // (this or another group's sum overflowed)
							require.Equal(t, r.SumExact.String(), s.(*scalar.Decimal256).Value.BigInt().String(), "%s: %s of group %d", name, v, k)
						} else {
							require.Equal(t, fmt.Sprint(want), fmt.Sprint(s), "%s: %s_%s of group %d", name, v, a.Name(), k)
						}
						release()
					}
				}
			}
			if first == nil {
				first = g
			} else {
				// The same bits whatever the threads.
				fr, err := first.c.Sorted()
				require.NoError(t, err, name)
				for k, ref := range refs {
					for vi := range valNames {
						a, b := first.c.State(fr[k], vi), g.c.State(ref, vi)
						ab, err := a.MarshalBinary()
						require.NoError(t, err)
						bb, err := b.MarshalBinary()
						require.NoError(t, err)
						require.Equal(t, ab, bb, "%s: group %d column %d, 1 and 3 threads", name, k, vi)
					}
				}
			}
			out.Release()
		}
		for _, rec := range recs {
			rec.Release()
		}
		mem.AssertSize(t, 0)
	}
}

// groupKey is the oracle's identity (keyString) of group ref's key.
func groupKey(t *testing.T, mem memory.Allocator, g *Grouper, ref core.GroupRef, schema *arrow.Schema, nkeys int) string {
	kv := make([]core.KeyValue, nkeys)
	g.c.Key(ref, kv)
	var ks []string
	for k := range nkeys {
		dt := ValueType(schema.Field(k).Type)
		b := array.NewBuilder(mem, dt)
		require.NoError(t, scalar.Append(b, valueScalar(dt, kv[k].Valid, kv[k].Value)))
		arr := b.NewArray()
		ks = append(ks, keyString(arr, 0))
		arr.Release()
		b.Release()
	}
	return strings.Join(ks, "|")
}

// Grouped partial states merge and travel: batches grouped by two
// groupers, one merged into the other directly and one through its binary
// form, give the groups of one grouper of every batch (integers exactly;
// the float sums differ only by where the partials were cut).
func TestGroupMergeAndSerialize(t *testing.T) {
	r, seed := seeded(t)
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "j", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "d", Type: &arrow.Decimal128Type{Precision: 30, Scale: 2}, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	var recs []arrow.Record
	for range 4 {
		n := 500 + r.IntN(2000)
		cols := []arrow.Array{keyArray(mem, r, schema.Field(0).Type, n, 40), keyArray(mem, r, schema.Field(1).Type, n, 5),
			randArray(mem, r, schema.Field(2).Type, n, 0.1), randArray(mem, r, schema.Field(3).Type, n, 0.1), randArray(mem, r, schema.Field(4).Type, n, 0.1)}
		recs = append(recs, array.NewRecord(schema, cols, int64(n)))
		for _, c := range cols {
			c.Release()
		}
	}
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	req := GroupRequest{Keys: []string{"k", "j"}, Aggs: agg.Default | agg.Ordered, CountRows: true}
	e := cpuEngine(t, mem, 2)
	newGrouper := func(recs ...arrow.Record) *Grouper {
		g, err := e.NewGrouper(schema, req)
		require.NoError(t, err)
		for _, rec := range recs {
			require.NoError(t, g.Add(ctx, rec))
		}
		return g
	}
	whole := newGrouper(recs...)
	want, err := whole.Result(mem)
	require.NoError(t, err)
	defer want.Release()

	a, b := newGrouper(recs[:2]...), newGrouper(recs[2:]...)
	require.NoError(t, a.Merge(b))
	c := newGrouper(recs[:1]...)
	bin, err := newGrouper(recs[1:]...).MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, c.MergeBinary(bin))
	for _, g := range []*Grouper{a, c} {
		got, err := g.Result(mem)
		require.NoError(t, err)
		require.True(t, array.RecordEqual(want, got), "seed %d:\nwant %v\ngot  %v", seed, want, got)
		got.Release()
	}

	// Bytes that are not groups are errors, never a panic.
	for range 200 {
		i := r.IntN(len(bin))
		g := newGrouper()
		_ = g.MergeBinary(bin[:i]) // truncated
		flipped := append([]byte(nil), bin...)
		flipped[i] ^= byte(1 + r.IntN(255))
		_ = g.MergeBinary(flipped)
		if i < 40 { // (the header)
			require.Error(t, newGrouper().MergeBinary(bin[:i]))
		}
	}
	other, err := e.NewGrouper(schema, GroupRequest{Keys: []string{"k"}, Aggs: agg.Default})
	require.NoError(t, err)
	require.ErrorContains(t, other.MergeBinary(bin), "of another request")
}

// FuzzGroupStates: grouped partial states from outside are merged or
// refused, never a panic, and what merges gives a result.
func FuzzGroupStates(f *testing.F) {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	r := rand.New(rand.NewPCG(1, 2))
	req := GroupRequest{Keys: []string{"k"}, Aggs: agg.Default | agg.Ordered, CountRows: true}
	e, err := New(WithDevice(DeviceCPU), WithThreads(1), WithAllocator(mem))
	require.NoError(f, err)
	for _, n := range []int{0, 1, 50} {
		cols := []arrow.Array{keyArray(mem, r, schema.Field(0).Type, n, 7), randArray(mem, r, schema.Field(1).Type, n, 0.2),
			randArray(mem, r, schema.Field(2).Type, n, 0.2)}
		rec := array.NewRecord(schema, cols, int64(n))
		g, err := e.NewGrouper(schema, req)
		require.NoError(f, err)
		require.NoError(f, g.Add(context.Background(), rec))
		b, err := g.MarshalBinary()
		require.NoError(f, err)
		f.Add(b)
		rec.Release()
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := e.NewGrouper(schema, req)
		require.NoError(t, err)
		if g.MergeBinary(b) != nil {
			return
		}
		out, err := g.Result(mem)
		require.NoError(t, err)
		out.Release()
	})
}

// Groups that outgrow the memory limit are an error that says so.
func TestGroupMemoryLimit(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewInt64Builder(mem)
	for i := range 100000 {
		b.Append(int64(i))
	}
	arr := b.NewArray()
	b.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{arr}, int64(arr.Len()))
	arr.Release()
	defer rec.Release()
	g, err := cpuEngine(t, mem, 2).NewGrouper(schema, GroupRequest{Keys: []string{"k"}, CountRows: true, MemoryLimit: 1 << 20, MemoryLimitName: "--memory"})
	require.NoError(t, err)
	err = g.Add(context.Background(), rec)
	var me *GroupMemoryError
	require.ErrorAs(t, err, &me)
	require.Equal(t, 100000, me.Groups)
	require.ErrorContains(t, err, "no spill directory is set: raise --memory or set one")
}

// A fixed_size_binary value column's extremes and ends per group come out as
// fixed_size_binary (arrow-go's scalar.Append of one writes past its
// builder: group_result.go appends them itself).
func TestGroupFixedSizeBinaryValues(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	fsb := &arrow.FixedSizeBinaryType{ByteWidth: 3}
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: fsb, Nullable: true}}, nil)
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	rb.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 1, 2, 1}, nil)
	vb := rb.Field(1).(*array.FixedSizeBinaryBuilder)
	vb.Append([]byte("bbb"))
	vb.Append([]byte("aaa"))
	vb.AppendNull()
	vb.Append([]byte("ccc"))
	rec := rb.NewRecord()
	defer rec.Release()
	g, err := cpuEngine(t, mem, 2).NewGrouper(schema, GroupRequest{Keys: []string{"k"}, Columns: []string{"v"},
		Aggs: agg.Count | agg.Min | agg.Max | agg.Ordered})
	require.NoError(t, err)
	require.NoError(t, g.Add(context.Background(), rec))
	res, err := g.Result(mem)
	require.NoError(t, err)
	defer res.Release()
	col := func(name string) arrow.Array {
		idx := res.Schema().FieldIndices(name)
		require.Len(t, idx, 1, name)
		return res.Column(idx[0])
	}
	require.Equal(t, `["aaa" (null)]`, fmt.Sprint(col("v_min")))
	require.Equal(t, `["ccc" (null)]`, fmt.Sprint(col("v_max")))
	require.Equal(t, `["bbb" (null)]`, fmt.Sprint(col("v_first")))
	require.Equal(t, `["ccc" (null)]`, fmt.Sprint(col("v_last")))
	require.True(t, arrow.TypeEqual(fsb, col("v_min").DataType()))
}

// A result of more groups than a task of Result builds (resultRange) comes
// out whole and in key order: its ranges, built in parallel, concatenated.
func TestGroupResultRanges(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	n := 3*resultRange + 123
	r := rand.New(rand.NewPCG(7, 11))
	perm := r.Perm(n)
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	for _, p := range perm {
		rb.Field(0).(*array.Int64Builder).Append(int64(p))
		if p%5 == 0 {
			rb.Field(1).(*array.Int32Builder).AppendNull()
		} else {
			rb.Field(1).(*array.Int32Builder).Append(int32(2 * p))
		}
	}
	rec := rb.NewRecord()
	defer rec.Release()
	g, err := cpuEngine(t, mem, 3).NewGrouper(schema, GroupRequest{Keys: []string{"k"}, Columns: []string{"x"}, Aggs: agg.Sum | agg.Count, CountRows: true})
	require.NoError(t, err)
	require.NoError(t, g.Add(context.Background(), rec))
	res, err := g.Result(mem)
	require.NoError(t, err)
	defer res.Release()
	require.Equal(t, int64(n), res.NumRows())
	keys := res.Column(0).(*array.Int64)
	rows := res.Column(1).(*array.Int64)
	count := res.Column(2).(*array.Int64)
	sum := res.Column(3).(*array.Int64)
	for i := range n {
		require.Equal(t, int64(i), keys.Value(i))
		require.Equal(t, int64(1), rows.Value(i))
		if i%5 == 0 {
			require.Equal(t, int64(0), count.Value(i), "group %d", i)
			require.True(t, sum.IsNull(i), "group %d", i)
		} else {
			require.Equal(t, int64(1), count.Value(i), "group %d", i)
			require.Equal(t, int64(2*i), sum.Value(i), "group %d", i)
		}
	}
}

// A dictionary key's index outside its dictionary is an error naming it,
// whether the morsel's keys are numbered by index (few) or hashed.
func TestGroupDictionaryIndexOutside(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	dict, _, err := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["a", "b", "c"]`))
	require.NoError(t, err)
	defer dict.Release()
	for _, bad := range []int32{3, -1, 5000} {
		ib := array.NewInt32Builder(mem)
		for i := range 10000 {
			ib.Append(int32(i % 3))
		}
		ib.Append(bad)
		idx := ib.NewArray()
		ib.Release()
		keys := array.NewDictionaryArray(dt, idx, dict)
		idx.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: dt, Nullable: true}}, nil)
		rec := array.NewRecord(schema, []arrow.Array{keys}, int64(keys.Len()))
		keys.Release()
		g, err := cpuEngine(t, mem, 2).NewGrouper(schema, GroupRequest{Keys: []string{"k"}, CountRows: true})
		require.NoError(t, err)
		err = g.Add(context.Background(), rec)
		require.ErrorContains(t, err, fmt.Sprintf("dictionary index %d", bad))
		rec.Release()
	}
}

// The result's columns written in place (directColumn) are those the
// builders make, to the last bit, for keys and values of every type, every
// aggregate, nulls, several ranges of groups and a sum past int64.
func TestGroupResultDirectColumns(t *testing.T) {
	r, seed := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	if raceEnabled { // (ranges of fewer groups: the test runs in full without the race detector too)
		defer func(n int) { resultRange = n }(resultRange)
		resultRange = 1 << 13
	}
	n := 2*resultRange + 777
	fields := []arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, {Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true}}
	var cols []arrow.Array
	kb, fb := array.NewInt32Builder(mem), array.NewFloat32Builder(mem)
	for i := range n {
		if i%1000 == 0 {
			kb.AppendNull()
		} else {
			kb.Append(int32(r.IntN(n)))
		}
		fb.Append(float32(r.IntN(3)))
	}
	cols = append(cols, kb.NewArray(), fb.NewArray())
	kb.Release()
	fb.Release()
	var names []string
	for i, dt := range oracleTypes {
		// (under the race detector, a 32- and a 64-bit integer, an
		// unsigned one, both floats, a decimal and a string: `make test`
		// runs every type without it)
		if raceEnabled && !slices.Contains([]arrow.Type{arrow.INT32, arrow.INT64, arrow.UINT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.STRING}, dt.ID()) {
			continue
		}
		name := fmt.Sprintf("v%d", i)
		fields = append(fields, arrow.Field{Name: name, Type: dt, Nullable: true})
		cols = append(cols, randArray(mem, r, dt, n, 0.3))
		names = append(names, name)
	}
	big := array.NewInt64Builder(mem) // (sums past int64: decimal256)
	for range n {
		big.Append(math.MaxInt64 - int64(r.IntN(10)))
	}
	fields = append(fields, arrow.Field{Name: "big", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	cols = append(cols, big.NewArray())
	big.Release()
	names = append(names, "big")
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecord(schema, cols, int64(n))
	defer rec.Release()
	for _, c := range cols {
		c.Release()
	}
	results := make([]arrow.Record, 2)
	for k, direct := range []bool{true, false} {
		directResult = direct
		g, err := cpuEngine(t, mem, 3).NewGrouper(schema, GroupRequest{Keys: []string{"k", "f"}, Columns: names, Aggs: agg.Default | agg.Ordered, CountRows: true})
		require.NoError(t, err)
		require.NoError(t, g.Add(context.Background(), rec))
		results[k], err = g.Result(mem)
		require.NoError(t, err)
		require.NoError(t, g.Close())
	}
	directResult = true
	defer results[0].Release()
	defer results[1].Release()
	require.Greater(t, results[0].NumRows(), int64(resultRange), "seed %d", seed)
	require.True(t, results[1].Schema().Equal(results[0].Schema()))
	for c := range int(results[0].NumCols()) {
		want, got := results[1].Column(c), results[0].Column(c)
		name := fmt.Sprintf("seed %d: column %q", seed, results[0].Schema().Field(c).Name)
		if want.DataType().ID() == arrow.FLOAT64 || want.DataType().ID() == arrow.FLOAT32 { // (NaN: the same bits, not equal values)
			require.Equal(t, want.NullN(), got.NullN(), name)
			w, g := want.Data().Buffers()[1].Bytes(), got.Data().Buffers()[1].Bytes()
			width := want.DataType().(arrow.FixedWidthDataType).Bytes()
			for i := range want.Len() {
				require.Equal(t, want.IsNull(i), got.IsNull(i), name)
				if want.IsValid(i) {
					require.Equal(t, w[i*width:(i+1)*width], g[i*width:(i+1)*width], "%s: group %d", name, i)
				}
			}
			continue
		}
		require.True(t, array.Equal(want, got), name)
	}
}

// Groups come out in key order (nulls last, NaN after every number, -0
// before +0) whatever the keys' spread: a wide range, a narrow one, keys
// crowded in a few of the sort's buckets, unsigned keys past 2^63, floats'
// special values; the same order for 1 and 3 threads.
func TestGroupSortedWordKeys(t *testing.T) {
	r, seed := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 200_000
	cases := map[string]func(b array.Builder, i int){
		"int64 wide": func(b array.Builder, i int) {
			b.(*array.Int64Builder).Append(int64(r.Uint64()))
		},
		"int64 crowded": func(b array.Builder, i int) {
			switch {
			case i%50_000 == 0:
				b.(*array.Int64Builder).Append(math.MaxInt64 - int64(i))
			case i%40_000 == 1:
				b.(*array.Int64Builder).Append(math.MinInt64 + int64(i))
			default:
				b.(*array.Int64Builder).Append(int64(r.IntN(150_000)))
			}
		},
		"int8": func(b array.Builder, i int) {
			if i%777 == 0 {
				b.AppendNull()
			} else {
				b.(*array.Int8Builder).Append(int8(r.IntN(256) - 128))
			}
		},
		"uint64": func(b array.Builder, i int) {
			b.(*array.Uint64Builder).Append(r.Uint64() | uint64(i%2)<<63)
		},
		"float64": func(b array.Builder, i int) {
			specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, math.SmallestNonzeroFloat64, -math.MaxFloat64}
			switch {
			case i%1000 == 0:
				b.AppendNull()
			case i%100 < len(specials):
				b.(*array.Float64Builder).Append(specials[i%100])
			default:
				b.(*array.Float64Builder).Append(r.NormFloat64() * 1e6)
			}
		},
	}
	types := map[string]arrow.DataType{"int64 wide": arrow.PrimitiveTypes.Int64, "int64 crowded": arrow.PrimitiveTypes.Int64,
		"int8": arrow.PrimitiveTypes.Int8, "uint64": arrow.PrimitiveTypes.Uint64, "float64": arrow.PrimitiveTypes.Float64}
	for name, fill := range cases {
		schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: types[name], Nullable: true}}, nil)
		b := array.NewBuilder(mem, types[name])
		for i := range n {
			fill(b, i)
		}
		keys := b.NewArray()
		b.Release()
		rec := array.NewRecord(schema, []arrow.Array{keys}, n)
		keys.Release()
		var first arrow.Record
		for _, threads := range []int{1, 3} {
			g, err := cpuEngine(t, mem, threads).NewGrouper(schema, GroupRequest{Keys: []string{"k"}, CountRows: true})
			require.NoError(t, err)
			require.NoError(t, g.Add(context.Background(), rec))
			res, err := g.Result(mem)
			require.NoError(t, err)
			require.NoError(t, g.Close())
			col := res.Column(0)
			// less: the documented order of two keys at rows i < j.
			before := func(i, j int) bool {
				if col.IsNull(j) {
					return !col.IsNull(i)
				}
				if col.IsNull(i) {
					return false
				}
				switch c := col.(type) {
				case *array.Int64:
					return c.Value(i) < c.Value(j)
				case *array.Int8:
					return c.Value(i) < c.Value(j)
				case *array.Uint64:
					return c.Value(i) < c.Value(j)
				case *array.Float64:
					x, y := c.Value(i), c.Value(j)
					switch {
					case x != x:
						return false
					case y != y:
						return true
					case x == y:
						return math.Signbit(x) && !math.Signbit(y)
					}
					return x < y
				}
				return false
			}
			for i := 1; i < col.Len(); i++ {
				require.True(t, before(i-1, i), "seed %d, %s, %d threads: groups %d and %d out of order", seed, name, threads, i-1, i)
			}
			var rows int64
			for _, v := range res.Column(1).(*array.Int64).Int64Values() {
				rows += v
			}
			require.Equal(t, int64(n), rows, "%s: every row in a group", name)
			if first == nil {
				first = res
			} else {
				// (the keys' bits: NaN is not equal to itself)
				require.Equal(t, first.Column(0).Data().Buffers()[1].Bytes(), res.Column(0).Data().Buffers()[1].Bytes(), "%s: 1 and 3 threads", name)
				require.True(t, array.Equal(first.Column(1), res.Column(1)), "%s: 1 and 3 threads", name)
				res.Release()
			}
		}
		first.Release()
		rec.Release()
	}
}

// Keys without a null numbered by their value or dictionary index
// (denseIDs: every row of a morsel, one after the other, and the rows of
// each group counted as they are numbered), with and without a filter:
// each group's count_all, count and sum are those of its rows, for 1 and
// 3 threads.
func TestGroupDenseKeysWithoutNulls(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n, card = 300_000, 1000 // (more than a morsel of a thousand keys)
	db := array.NewInt64Builder(mem)
	for i := range card {
		db.Append(int64(7*i - 3000))
	}
	dvals := db.NewArray()
	db.Release()
	defer dvals.Release()
	kb, ib, vb, fb := array.NewInt64Builder(mem), array.NewInt32Builder(mem), array.NewInt64Builder(mem), array.NewInt32Builder(mem)
	type sums struct{ rows, count, sum int64 }
	want := [2]map[int64]*sums{{}, {}} // without the filter, and with it
	for i := range n {
		j := int64((i * 7919) % card)
		key := 7*j - 3000
		kb.Append(key)
		ib.Append(int32(j))
		fb.Append(int32(i))
		for k, w := range want {
			if k == 1 && i%2 != 0 {
				continue
			}
			if w[key] == nil {
				w[key] = &sums{}
			}
			w[key].rows++
			if i%10 != 0 {
				w[key].count++
				w[key].sum += int64(i)
			}
		}
		if i%10 == 0 {
			vb.AppendNull()
		} else {
			vb.Append(int64(i))
		}
	}
	keys, idx, vals, f := kb.NewArray(), ib.NewArray(), vb.NewArray(), fb.NewArray()
	for _, b := range []array.Builder{kb, ib, vb, fb} {
		b.Release()
	}
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.PrimitiveTypes.Int64}
	dkeys := array.NewDictionaryArray(dt, idx, dvals)
	idx.Release()
	for _, key := range []arrow.Array{keys, dkeys} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: key.DataType()}, {Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "f", Type: arrow.PrimitiveTypes.Int32}}, nil)
		rec := array.NewRecord(schema, []arrow.Array{key, vals, f}, n)
		for fi, filter := range []bool{false, true} {
			for _, threads := range []int{1, 3} {
				req := GroupRequest{Keys: []string{"k"}, Columns: []string{"v"}, Aggs: agg.Count | agg.Sum, CountRows: true}
				if filter {
					req.Filter = evenFilter{"f"}
				}
				g, err := cpuEngine(t, mem, threads).NewGrouper(schema, req)
				require.NoError(t, err)
				require.NoError(t, g.Add(context.Background(), rec))
				res, err := g.Result(mem)
				require.NoError(t, err)
				require.Equal(t, int64(len(want[fi])), res.NumRows())
				cols := map[string]arrow.Array{}
				for i, fld := range res.Schema().Fields() {
					cols[fld.Name] = res.Column(i)
				}
				for i := range int(res.NumRows()) {
					k := cols["k"].(*array.Int64).Value(i)
					w := want[fi][k]
					require.NotNil(t, w, "key %d", k)
					got := sums{cols["count_all"].(*array.Int64).Value(i), cols["v_count"].(*array.Int64).Value(i), cols["v_sum"].(*array.Int64).Value(i)}
					require.Equal(t, *w, got, "key %d, filter %v, threads %d", k, filter, threads)
				}
				res.Release()
			}
		}
		rec.Release()
	}
	for _, a := range []arrow.Array{keys, dkeys, vals, f} {
		a.Release()
	}
}
