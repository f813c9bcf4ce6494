package engine

import (
	"context"
	"math"
	"math/big"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
)

// TestSumHasOneTypePerColumnType: Sum is of the same Go type whatever the
// data, an overflowed sum included (null then); the exact value of an
// overflowed sum is SumWide.
func TestSumHasOneTypePerColumnType(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := cpuEngine(t, mem, 2)
	ctx := context.Background()

	ib := array.NewInt64Builder(mem)
	ib.AppendValues([]int64{math.MaxInt64, math.MaxInt64}, nil)
	ints := ib.NewArray()
	ib.Release()
	defer ints.Release()
	ub := array.NewUint64Builder(mem)
	ub.AppendValues([]uint64{math.MaxUint64, 2}, nil)
	uints := ub.NewArray()
	ub.Release()
	defer uints.Release()
	dt := &arrow.Decimal128Type{Precision: 38, Scale: 3}
	nines, ok := new(big.Int).SetString("99999999999999999999999999999999999999", 10)
	require.True(t, ok)
	db := array.NewDecimal128Builder(mem, dt)
	db.Append(decimal128.FromBigInt(nines))
	db.Append(decimal128.FromBigInt(nines))
	decs := db.NewArray()
	db.Release()
	defer decs.Release()
	small := array.NewInt64Builder(mem)
	small.AppendValues([]int64{1, 2}, nil)
	fits := small.NewArray()
	small.Release()
	defer fits.Release()

	for _, tc := range []struct {
		arr  arrow.Array
		want *big.Int
		over bool
	}{
		{ints, new(big.Int).Mul(big.NewInt(math.MaxInt64), big.NewInt(2)), true},
		{uints, new(big.Int).Add(new(big.Int).SetUint64(math.MaxUint64), big.NewInt(2)), true},
		{decs, new(big.Int).Mul(nines, big.NewInt(2)), true},
		{fits, big.NewInt(3), false},
	} {
		r, err := e.AggregateArray(ctx, tc.arr, agg.Sum)
		require.NoError(t, err)
		what := tc.arr.DataType().String()
		switch tc.arr.DataType().ID() {
		case arrow.INT64:
			_, ok = r.Sum.(*scalar.Int64)
		case arrow.UINT64:
			_, ok = r.Sum.(*scalar.Uint64)
		case arrow.DECIMAL128:
			_, ok = r.Sum.(*scalar.Decimal128)
		}
		require.True(t, ok, "%s: sum is %T", what, r.Sum)
		require.Equal(t, tc.over, r.SumOverflow, what)
		require.Equal(t, !tc.over, r.Sum.IsValid(), what)
		require.Zero(t, tc.want.Cmp(r.SumExact), what)
		if !tc.over {
			require.Nil(t, r.SumWide, what)
			continue
		}
		var wide *big.Int
		switch w := r.SumWide.(type) {
		case *scalar.Decimal128:
			wide = w.Value.BigInt()
			require.Equal(t, int32(0), w.Type.(*arrow.Decimal128Type).Scale, what)
		case *scalar.Decimal256:
			wide = w.Value.BigInt()
			require.Equal(t, dt.Scale, w.Type.(*arrow.Decimal256Type).Scale, what)
		default:
			t.Fatalf("%s: wide sum is %T", what, r.SumWide)
		}
		require.Zero(t, tc.want.Cmp(wide), what)
	}
}

// TestUnsupportedColumnIsOneError: an unsupported column named by the caller,
// as an array or in Request.Columns, is the same error, one errors.Is finds
// as arrow.ErrNotImplemented; unnamed, it is the column's Err.
func TestUnsupportedColumnIsOneError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	nested := nestedRecord(t, mem)
	defer nested.Release()
	// x, and e: a struct without fields, nothing to aggregate.
	emptyData := array.NewData(arrow.StructOf(), int(nested.NumRows()), []*memory.Buffer{nil}, nil, 0, 0)
	defer emptyData.Release()
	empty := array.NewStructData(emptyData)
	defer empty.Release()
	rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "x", Type: nested.Column(2).DataType(), Nullable: true},
		{Name: "e", Type: empty.DataType(), Nullable: true}}, nil), []arrow.Array{nested.Column(2), empty}, nested.NumRows())
	defer rec.Release()
	e := cpuEngine(t, mem, 2)
	ctx := context.Background()

	_, arrErr := e.AggregateArray(ctx, empty, agg.Sum)
	require.ErrorIs(t, arrErr, arrow.ErrNotImplemented)
	res, err := e.AggregateRecord(ctx, rec, Request{Columns: []string{"x", "e"}})
	require.ErrorIs(t, err, arrow.ErrNotImplemented)
	require.Nil(t, res)
	require.ErrorContains(t, err, `column "e"`)

	res, err = e.AggregateRecord(ctx, rec, Request{})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	require.ErrorIs(t, res[1].Err, arrow.ErrNotImplemented)

	// A struct of several leaves is not one column.
	_, err = e.AggregateArray(ctx, nested.Column(0), agg.Sum)
	require.ErrorIs(t, err, arrow.ErrNotImplemented)
}
