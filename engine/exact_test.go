package engine

import (
	"context"
	"math"
	"math/big"
	"runtime"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/arrowagg/arrowagg/agg"
	"github.com/stretchr/testify/require"
)

func float64Array(mem memory.Allocator, vals []float64, valid []bool) *array.Float64 {
	b := array.NewFloat64Builder(mem)
	defer b.Release()
	b.AppendValues(vals, valid)
	return b.NewFloat64Array()
}

func aggFloats(t *testing.T, vals []float64, threads int) Result {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	arr := float64Array(mem, vals, nil)
	defer arr.Release()
	r, err := cpuEngine(t, mem, threads).AggregateArray(context.Background(), arr, agg.Default)
	require.NoError(t, err)
	return r
}

func f64(s scalar.Scalar) float64 { return s.(*scalar.Float64).Value }

// TestCompensatedSumCancellation: [1e16, 1, -1e16] repeated 300,001 times sums
// to exactly 300001 (plain summation gives 0, Kahan's gives 4).
func TestCompensatedSumCancellation(t *testing.T) {
	const reps = 300001
	vals := make([]float64, 0, 3*reps)
	for i := 0; i < reps; i++ {
		vals = append(vals, 1e16, 1, -1e16)
	}
	for _, threads := range []int{1, 2, 3, 8} {
		r := aggFloats(t, vals, threads)
		require.Equal(t, float64(reps), f64(r.Sum), "threads=%d", threads)
		require.Equal(t, float64(reps)/float64(3*reps), f64(r.Mean))
		require.Equal(t, -1e16, f64(r.Min))
		require.Equal(t, 1e16, f64(r.Max))
	}
}

func TestFloatSpecialValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	negZero := math.Copysign(0, -1)
	for _, tc := range []struct {
		name          string
		vals          []float64
		sum, min, max float64
	}{
		{"nan makes sum nan, min/max skip it", []float64{1, nan, 3}, nan, 1, 3},
		{"inf", []float64{1, inf, 3}, inf, 1, inf},
		{"-inf", []float64{1, -inf, 3}, -inf, -inf, 3},
		{"inf and -inf", []float64{inf, 2, -inf}, nan, -inf, inf},
		{"all nan", []float64{nan, nan}, nan, nan, nan},
		{"signed zeros", []float64{0, negZero, 0}, 0, negZero, 0},
		{"signed zeros reversed", []float64{negZero, 0, negZero}, 0, negZero, 0},
		{"only negative zero (sums start at +0, as Arrow C++)", []float64{negZero}, 0, negZero, negZero},
		{"subnormals", []float64{5e-324, 5e-324, -1e-323, 5e-324}, 5e-324, -1e-323, 5e-324},
		{"overflow of finite values", []float64{math.MaxFloat64, math.MaxFloat64}, inf, math.MaxFloat64, math.MaxFloat64},
		{"huge cancel", []float64{math.MaxFloat64, -math.MaxFloat64, 1}, 1, -math.MaxFloat64, math.MaxFloat64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Long enough to take the lane loops, padded with values that
			// change nothing, and short.
			for _, pad := range []int{0, 1000} {
				vals := append([]float64(nil), tc.vals...)
				for i := 0; i < pad; i++ {
					vals = append(vals, tc.vals[i%len(tc.vals)])
				}
				if pad > 0 && tc.name != "nan makes sum nan, min/max skip it" && tc.name != "inf and -inf" && tc.name != "all nan" {
					continue // only the cases whose answer repetition does not change
				}
				r := aggFloats(t, vals, 2)
				checkBits(t, tc.sum, f64(r.Sum), "sum")
				checkBits(t, tc.min, f64(r.Min), "min")
				checkBits(t, tc.max, f64(r.Max), "max")
			}
		})
	}
}

func checkBits(t *testing.T, want, got float64, what string) {
	t.Helper()
	if math.IsNaN(want) {
		require.True(t, math.IsNaN(got), "%s: want NaN, got %v", what, got)
		return
	}
	require.Equal(t, math.Float64bits(want), math.Float64bits(got), "%s: want %v, got %v", what, want, got)
}

// TestIntegerSumsBeyond64Bits: int64 and uint64 sums past 64 bits are exact,
// flagged, and returned as decimal128(38, 0) in SumWide.
func TestIntegerSumsBeyond64Bits(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := cpuEngine(t, mem, 2)
	ctx := context.Background()

	ib := array.NewInt64Builder(mem)
	ub := array.NewUint64Builder(mem)
	const n = 100003
	wantI, wantU := new(big.Int), new(big.Int)
	for i := 0; i < n; i++ {
		v := int64(math.MaxInt64 - i)
		ib.Append(v)
		wantI.Add(wantI, big.NewInt(v))
		u := uint64(math.MaxUint64 - uint64(i))
		ub.Append(u)
		wantU.Add(wantU, new(big.Int).SetUint64(u))
	}
	ia, ua := ib.NewArray(), ub.NewArray()
	ib.Release()
	ub.Release()
	defer ia.Release()
	defer ua.Release()

	for _, tc := range []struct {
		arr  arrow.Array
		want *big.Int
	}{{ia, wantI}, {ua, wantU}} {
		r, err := e.AggregateArray(ctx, tc.arr, agg.Default)
		require.NoError(t, err)
		require.True(t, r.SumOverflow)
		require.Zero(t, tc.want.Cmp(r.SumExact), "want %s got %s", tc.want, r.SumExact)
		require.False(t, r.Sum.IsValid())
		d, ok := r.SumWide.(*scalar.Decimal128)
		require.True(t, ok, "wide sum is %T", r.SumWide)
		require.Zero(t, tc.want.Cmp(d.Value.BigInt()))
		require.Equal(t, int32(0), d.Type.(*arrow.Decimal128Type).Scale)
	}

	// A negative overflow too.
	nb := array.NewInt64Builder(mem)
	for i := 0; i < 3; i++ {
		nb.Append(math.MinInt64)
	}
	na := nb.NewArray()
	nb.Release()
	defer na.Release()
	r, err := e.AggregateArray(ctx, na, agg.Default)
	require.NoError(t, err)
	require.True(t, r.SumOverflow)
	want := new(big.Int).Mul(big.NewInt(math.MinInt64), big.NewInt(3))
	require.Zero(t, want.Cmp(r.SumExact))
}

// TestDeterministicAcrossThreads: float results are bit-identical for every
// thread count and GOMAXPROCS, run after run.
func TestDeterministicAcrossThreads(t *testing.T) {
	r, _ := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	arr := randArray(mem, r, arrow.PrimitiveTypes.Float64, 1_500_000, 0.05)
	defer arr.Release()
	ctx := context.Background()
	var first *agg.State
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		for _, threads := range []int{1, 2, 3, 7, 16} {
			for rep := 0; rep < 2; rep++ {
				res, err := cpuEngine(t, mem, threads).AggregateArray(ctx, arr, agg.Default)
				require.NoError(t, err)
				if first == nil {
					first = &res.State
					continue
				}
				require.Equal(t, *first, res.State, "procs=%d threads=%d", procs, threads)
			}
		}
	}
}
