package engine

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/stretchr/testify/require"
)

var propertySizes = []int{0, 1, 2, 7, 8, 9, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000003}

var nullDensities = []float64{0, 0.01, 0.5, 1}

// bigSizes reports whether a property test runs its sizes above 100,000
// values for its type of index ti: always without the race detector, and
// under it for the first type only (every access is ten times slower there,
// and one type's large arrays share out over goroutines as every type's
// do). `make test` runs these tests again without the race detector, at
// every size; -short keeps the large sizes of one null density.
func bigSizes(ti int) bool { return !raceEnabled || ti == 0 }

// seeded returns a fresh random source and logs its seed, so a failure can be
// replayed.
func seeded(t testing.TB) (*rand.Rand, uint64) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), seed
}

// newState is the empty state of a family without the ordered aggregates.
func newState(f column.Family) agg.State { return agg.New(f, 0) }

func cpuEngine(t testing.TB, mem memory.Allocator, threads int) *Engine {
	e, err := New(WithDevice(DeviceCPU), WithThreads(threads), WithAllocator(mem))
	require.NoError(t, err)
	return e
}

// TestPropertyAgainstOracle aggregates random arrays of every supported type,
// null density, size and slice offset, whole and in random chunks, and
// compares with the exact oracle.
func TestPropertyAgainstOracle(t *testing.T) {
	r, seed := seeded(t)
	ctx := context.Background()
	for ti, dt := range oracleTypes {
		for _, n := range propertySizes {
			for _, nf := range nullDensities {
				if n > 100000 && (testing.Short() && nf != 0.5 || !bigSizes(ti)) {
					continue
				}
				name := fmt.Sprintf("%s/n=%d/nulls=%g", dt, n, nf)
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				off := r.IntN(71)
				parent := randArray(mem, r, dt, off+n+r.IntN(3), nf)
				arr := array.NewSlice(parent, int64(off), int64(off+n))
				want := oracle(arr)
				e := cpuEngine(t, mem, 1+r.IntN(4))

				got, err := e.AggregateArray(ctx, arr, agg.Default)
				require.NoError(t, err, name)
				checkResult(t, got, want, dt, fmt.Sprintf("%s off=%d seed=%d", name, off, seed))

				// The same column in random chunks gives the same integers and
				// floats within the same bound.
				chunks := randomChunks(r, parent, off, n)
				ch := arrow.NewChunked(dt, chunks)
				gotc, err := e.AggregateChunked(ctx, ch, agg.Default)
				require.NoError(t, err, name)
				checkResult(t, gotc, want, dt, fmt.Sprintf("%s chunked off=%d seed=%d", name, off, seed))
				ch.Release()
				for _, c := range chunks {
					c.Release()
				}
				arr.Release()
				parent.Release()
				mem.AssertSize(t, 0)
			}
		}
	}
}

// randomChunks cuts parent[off:off+n] into 1..5 slices.
func randomChunks(r *rand.Rand, parent arrow.Array, off, n int) []arrow.Array {
	k := 1 + r.IntN(5)
	cuts := []int{0, n}
	for i := 1; i < k && n > 0; i++ {
		cuts = append(cuts, r.IntN(n+1))
	}
	sortInts(cuts)
	var out []arrow.Array
	for i := 0; i+1 < len(cuts); i++ {
		out = append(out, array.NewSlice(parent, int64(off+cuts[i]), int64(off+cuts[i+1])))
	}
	return out
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// TestOffsetsAndBitOffsets sweeps every slice offset 0..70 (validity and
// boolean bitmaps at every bit offset) for a few representative types.
func TestOffsetsAndBitOffsets(t *testing.T) {
	r, seed := seeded(t)
	ctx := context.Background()
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64,
		arrow.FixedWidthTypes.Boolean, arrow.BinaryTypes.String, &arrow.Decimal128Type{Precision: 38, Scale: 0}} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		e := cpuEngine(t, mem, 2)
		parent := randArray(mem, r, dt, 400, 0.3)
		for off := 0; off <= 70; off++ {
			for _, n := range []int{0, 1, 63, 64, 65, 129, 300} {
				arr := array.NewSlice(parent, int64(off), int64(off+n))
				got, err := e.AggregateArray(ctx, arr, agg.Default)
				require.NoError(t, err)
				checkResult(t, got, oracle(arr), dt, fmt.Sprintf("%s off=%d n=%d seed=%d", dt, off, n, seed))
				arr.Release()
			}
		}
		parent.Release()
		mem.AssertSize(t, 0)
	}
}

// checkResult compares a result with the oracle.
func checkResult(t *testing.T, got Result, want expected, dt arrow.DataType, msg string) {
	t.Helper()
	require.NoError(t, got.Err, msg)
	require.Equal(t, want.count, got.Count, "count %s", msg)
	require.Equal(t, want.nulls, got.NullCount, "null_count %s", msg)
	vt := resultType(dt)
	if want.count == 0 {
		require.Nil(t, scalarValue(got.Min), "min %s", msg)
		require.Nil(t, scalarValue(got.Max), "max %s", msg)
		require.Nil(t, scalarValue(got.Sum), "sum %s", msg)
		require.Nil(t, scalarValue(got.Mean), "mean %s", msg)
		return
	}
	checkExtreme(t, want.min, scalarValue(got.Min), "min "+msg)
	checkExtreme(t, want.max, scalarValue(got.Max), "max "+msg)

	switch vt.ID() {
	case arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP,
		arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.FIXED_SIZE_BINARY:
		require.Nil(t, got.Sum, "sum does not apply: %s", msg)
		require.Nil(t, got.Mean, "mean does not apply: %s", msg)
		return
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		sum := scalarValue(got.Sum).(float64)
		checkFloatSum(t, want, sum, msg)
		mean := scalarValue(got.Mean).(float64)
		if !math.IsNaN(sum) && !math.IsInf(sum, 0) {
			require.Equal(t, sum/float64(want.count), mean, "mean %s", msg)
		}
		return
	}
	// Exact sums: integers, booleans, decimals, durations.
	require.Zero(t, want.sumInt.Cmp(got.SumExact), "exact sum %s: want %s got %s", msg, want.sumInt, got.SumExact)
	sv := scalarValue(got.Sum)
	if got.SumOverflow {
		require.Nil(t, sv, "sum %s: a null of its type when it overflows", msg)
		require.Equal(t, sumType(vt), got.Sum.DataType(), "sum %s", msg)
		sv = scalarValue(got.SumWide)
	} else {
		require.Nil(t, got.SumWide, "sum %s", msg)
	}
	var gotSum *big.Int
	switch v := sv.(type) {
	case int64:
		gotSum = big.NewInt(v)
	case uint64:
		gotSum = new(big.Int).SetUint64(v)
	case *big.Int:
		gotSum = v
	default:
		t.Fatalf("sum %s: unexpected %T", msg, sv)
	}
	require.Zero(t, want.sumInt.Cmp(gotSum), "sum %s: want %s got %s", msg, want.sumInt, gotSum)
	fits := true
	switch vt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DURATION:
		fits = want.sumInt.IsInt64()
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.BOOL:
		fits = want.sumInt.IsUint64()
	case arrow.DECIMAL128:
		fits = new(big.Int).Abs(want.sumInt).Cmp(maxDecimal38) <= 0
	}
	require.Equal(t, !fits, got.SumOverflow, "overflow flag %s", msg)
	// Mean: exact sum / count (scaled for decimals), rounded once; it does
	// not apply to durations.
	if vt.ID() == arrow.DURATION {
		require.Nil(t, got.Mean, "mean does not apply: %s", msg)
		return
	}
	den := big.NewInt(want.count)
	if d, ok := vt.(*arrow.Decimal128Type); ok {
		den.Mul(den, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
	}
	wantMean, _ := new(big.Rat).SetFrac(want.sumInt, den).Float64()
	require.Equal(t, wantMean, scalarValue(got.Mean), "mean %s", msg)
}

// resultType is the type of the values of a column of type dt as its
// results have them: a dictionary's value type, decimal128 for decimal32
// and decimal64.
func resultType(dt arrow.DataType) arrow.DataType {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	if d, ok := dt.(*arrow17.NarrowDecimalType); ok {
		return d.Decimal128()
	}
	return dt
}

func checkExtreme(t *testing.T, want, got any, msg string) {
	t.Helper()
	switch w := want.(type) {
	case float64:
		g, ok := got.(float64)
		require.True(t, ok, "%s: got %T", msg, got)
		if math.IsNaN(w) {
			require.True(t, math.IsNaN(g), "%s: want NaN got %v", msg, g)
			return
		}
		require.Equal(t, math.Float64bits(w), math.Float64bits(g), "%s: want %v got %v", msg, w, g)
	case *big.Int:
		g, ok := got.(*big.Int)
		require.True(t, ok, "%s: got %T", msg, got)
		require.Zero(t, w.Cmp(g), "%s: want %s got %s", msg, w, g)
	default:
		require.Equal(t, want, got, msg)
	}
}

// FloatSumBound is the documented error bound of the compensated float sum:
// |sum - exact| <= 2^-52 * |exact| + n * 2^-100 * sum|x|.
func floatSumBound(exact, absSum float64, n int64) float64 {
	return math.Ldexp(math.Abs(exact), -52) + float64(n)*math.Ldexp(absSum, -100)
}

func checkFloatSum(t *testing.T, want expected, got float64, msg string) {
	t.Helper()
	switch {
	case math.IsNaN(want.special):
		require.True(t, math.IsNaN(got), "sum %s: want NaN got %v", msg, got)
		return
	case want.special != 0:
		require.Equal(t, want.special, got, "sum %s", msg)
		return
	}
	exact, _ := want.sumFloat.Float64()
	require.False(t, math.IsNaN(got), "sum %s: NaN", msg)
	require.InDelta(t, exact, got, floatSumBound(exact, want.absSum(), want.count)+math.SmallestNonzeroFloat64, "sum %s", msg)
}
