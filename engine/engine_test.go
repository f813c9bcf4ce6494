package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/arrowagg/arrowagg/agg"
	"github.com/stretchr/testify/require"
)

// nestedRecord builds a record with a struct column whose struct-level nulls
// hide child values, a list column, a plain column and a union (whose
// nulls are its child's).
func nestedRecord(t *testing.T, mem memory.Allocator) arrow.Record {
	t.Helper()
	const n = 10
	ab := array.NewInt64Builder(mem)
	cb := array.NewStringBuilder(mem)
	lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
	xb := array.NewFloat32Builder(mem)
	defer ab.Release()
	defer cb.Release()
	defer lb.Release()
	defer xb.Release()
	for i := 0; i < n; i++ {
		ab.Append(int64(i * 10))
		cb.Append(fmt.Sprintf("v%d", 9-i))
		if i%4 == 1 { // rows 1, 5 and 9
			lb.AppendNull()
		} else {
			lb.Append(true)
			lb.ValueBuilder().(*array.Int32Builder).Append(int32(i))
		}
		xb.Append(float32(i) / 2)
	}
	a, c, l, x := ab.NewArray(), cb.NewArray(), lb.NewArray(), xb.NewArray()
	defer a.Release()
	defer c.Release()
	defer l.Release()
	defer x.Release()
	bitmap := func(nulls ...int) *memory.Buffer {
		buf := memory.NewResizableBuffer(mem)
		buf.Resize(2)
		bitutil.SetBitsTo(buf.Bytes(), 0, n, true)
		for _, i := range nulls {
			bitutil.ClearBit(buf.Bytes(), i)
		}
		return buf
	}
	// The inner struct is null at row 5, the outer one at rows 3 and 7; the
	// children hold values there that must not count.
	innerBits, outerBits := bitmap(5), bitmap(3, 7)
	defer innerBits.Release()
	defer outerBits.Release()
	inner, err := array.NewStructArrayWithNulls([]arrow.Array{c}, []string{"c"}, innerBits, 1, 0)
	require.NoError(t, err)
	defer inner.Release()
	outer, err := array.NewStructArrayWithNulls([]arrow.Array{a, inner}, []string{"a", "b"}, outerBits, 2, 0)
	require.NoError(t, err)
	defer outer.Release()
	u, _, err := array.FromJSON(mem, arrow.SparseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int8, Nullable: true}}, []arrow.UnionTypeCode{0}),
		strings.NewReader(`[[0, 1], [0, null], [0, 2], [0, 3], [0, 4], [0, 5], [0, 6], [0, 7], [0, 8], [0, 9]]`))
	require.NoError(t, err)
	defer u.Release()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: outer.DataType(), Nullable: true},
		{Name: "l", Type: l.DataType(), Nullable: true},
		{Name: "x", Type: x.DataType(), Nullable: true},
		{Name: "u", Type: u.DataType(), Nullable: true},
	}, nil)
	return array.NewRecord(schema, []arrow.Array{outer, l, x, u}, n)
}

func TestStructLeavesAndUnsupported(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := nestedRecord(t, mem)
	defer rec.Release()
	e := cpuEngine(t, mem, 2)
	res, err := e.AggregateRecord(context.Background(), rec, Request{})
	require.NoError(t, err)
	require.Len(t, res, 5)
	require.Equal(t, []string{"s.a", "s.b.c", "l", "x", "u"}, []string{res[0].Name, res[1].Name, res[2].Name, res[3].Name, res[4].Name})

	// s.a: rows 3 and 7 are null through the struct.
	require.NoError(t, res[0].Err)
	require.Equal(t, int64(8), res[0].Count)
	require.Equal(t, int64(2), res[0].NullCount)
	require.Equal(t, int64(0+10+20+40+50+60+80+90), scalarValue(res[0].Sum))
	require.Equal(t, int64(90), scalarValue(res[0].Max))

	// s.b.c: rows 3, 5, 7 are null.
	require.Equal(t, int64(7), res[1].Count)
	require.Equal(t, "v0", scalarValue(res[1].Min))
	require.Equal(t, "v9", scalarValue(res[1].Max))

	// The list column is counted; its other aggregates are not known.
	require.NoError(t, res[2].Err)
	require.Equal(t, int64(7), res[2].Count)
	require.Equal(t, int64(3), res[2].NullCount)
	require.Nil(t, res[2].Sum)
	require.Nil(t, res[2].Min)
	require.Nil(t, res[2].Mean)

	require.Equal(t, float64(45)/2, scalarValue(res[3].Sum))

	// The union is counted by the child values it selects: one null.
	require.NoError(t, res[4].Err)
	require.Equal(t, int64(9), res[4].Count)
	require.Equal(t, int64(1), res[4].NullCount)
	require.Nil(t, res[4].Sum)

	// Asking for unknown columns is an error naming the columns there are.
	_, err = e.AggregateRecord(context.Background(), rec, Request{Columns: []string{"s.zz"}})
	require.True(t, errors.Is(err, ErrUnknownColumn))
	require.Contains(t, err.Error(), "s.b.c")
}

// TestConcurrentEngine: one Engine used by 32 goroutines at once gives every
// goroutine the answer a lone call gives.
func TestConcurrentEngine(t *testing.T) {
	r, _ := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := cpuEngine(t, mem, 3)
	ctx := context.Background()
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String,
		arrow.PrimitiveTypes.Uint16, &arrow.Decimal128Type{Precision: 30, Scale: 2}}
	arrs := make([]arrow.Array, 8)
	want := make([]agg.State, len(arrs))
	for i := range arrs {
		arrs[i] = randArray(mem, r, types[i%len(types)], 200000+i, 0.1)
		res, err := e.AggregateArray(ctx, arrs[i], agg.Default)
		require.NoError(t, err)
		want[i] = res.State
	}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; k < 4; k++ {
				i := (g + k) % len(arrs)
				res, err := e.AggregateArray(ctx, arrs[i], agg.Default)
				if err != nil {
					errs <- err
					return
				}
				if fmt.Sprint(res.State) != fmt.Sprint(want[i]) {
					errs <- fmt.Errorf("goroutine %d array %d: state differs", g, i)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, a := range arrs {
		a.Release()
	}
}

// TestStatesRoundTrip: partial states serialized to a record batch and merged
// elsewhere give the answer of aggregating everything in one place.
func TestStatesRoundTrip(t *testing.T) {
	r, _ := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := cpuEngine(t, mem, 2)
	ctx := context.Background()
	var fields []arrow.Field
	for i, dt := range oracleTypes {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%d", i), Type: dt, Nullable: true})
	}
	schema := arrow.NewSchema(fields, nil)
	mkRec := func(n int) arrow.Record {
		cols := make([]arrow.Array, len(fields))
		for i, f := range fields {
			cols[i] = randArray(mem, r, f.Type, n, 0.2)
		}
		rec := array.NewRecord(schema, cols, int64(n))
		for _, c := range cols {
			c.Release()
		}
		return rec
	}
	r1, r2 := mkRec(5000), mkRec(7001)
	defer r1.Release()
	defer r2.Release()

	whole, err := e.NewAccumulator(schema, Request{})
	require.NoError(t, err)
	require.NoError(t, whole.Add(ctx, r1))
	require.NoError(t, whole.Add(ctx, r2))

	a1, _ := e.NewAccumulator(schema, Request{})
	a2, _ := e.NewAccumulator(schema, Request{})
	require.NoError(t, a1.Add(ctx, r1))
	require.NoError(t, a2.Add(ctx, r2))
	wire, err := a2.StatesRecord(mem)
	require.NoError(t, err)
	defer wire.Release()
	require.NoError(t, a1.MergeRecord(wire))

	got, want := a1.Results(), whole.Results()
	for i := range want {
		require.Equal(t, want[i].Count, got[i].Count, want[i].Name)
		require.Equal(t, fmt.Sprint(scalarValue(want[i].Min)), fmt.Sprint(scalarValue(got[i].Min)), want[i].Name)
		require.Equal(t, fmt.Sprint(scalarValue(want[i].Max)), fmt.Sprint(scalarValue(got[i].Max)), want[i].Name)
		if want[i].State.Family != 3 { // floats: same value up to the merge order's rounding
			require.Equal(t, fmt.Sprint(scalarValue(want[i].Sum)), fmt.Sprint(scalarValue(got[i].Sum)), want[i].Name)
		}
	}

	// Corrupt input is an error, never a panic.
	var s agg.State
	require.Error(t, s.UnmarshalBinary(nil))
	require.Error(t, s.UnmarshalBinary([]byte{9, 1}))
	enc, _ := whole.States()[0].MarshalBinary()
	require.Error(t, s.UnmarshalBinary(enc[:len(enc)-1]))
	require.NoError(t, s.UnmarshalBinary(enc))
	require.Equal(t, whole.States()[0], s)
}

func TestCancellation(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r, _ := seeded(t)
	arr := randArray(mem, r, arrow.PrimitiveTypes.Int32, 3_000_000, 0)
	defer arr.Release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := cpuEngine(t, mem, 2).AggregateArray(ctx, arr, agg.Default)
	require.ErrorIs(t, err, context.Canceled)
}

func TestParse(t *testing.T) {
	a, err := agg.Parse("sum, MIN,max,count,null_count,mean")
	require.NoError(t, err)
	require.Equal(t, agg.Default, a)
	_, err = agg.Parse("median")
	require.ErrorContains(t, err, "median")
	_, err = agg.Parse(" , ")
	require.Error(t, err)
	d, err := ParseDevice("GPU")
	require.NoError(t, err)
	require.Equal(t, DeviceGPU, d)
	_, err = ParseDevice("tpu")
	require.Error(t, err)
	require.True(t, strings.Contains(agg.Default.String(), "null_count"))
}
