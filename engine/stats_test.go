package engine

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
)

const statsAggs = agg.Count | agg.Stddev | agg.Variance | agg.ApproxDistinct

// validValues are the valid values of arr in the oracle's terms (valueOf),
// dictionaries resolved; a valid index to a null dictionary value is a null.
func validValues(arr arrow.Array) []any {
	var out []any
	d, isDict := arr.(*array.Dictionary)
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			continue
		}
		if isDict {
			j := d.GetValueIndex(i)
			if d.Dictionary().IsNull(j) {
				continue
			}
			out = append(out, valueOf(d.Dictionary(), j))
			continue
		}
		out = append(out, valueOf(arr, i))
	}
	return out
}

// ratOf is a value as an exact rational (decimals unscaled); ok false for
// strings.
func ratOf(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case int64:
		return new(big.Rat).SetInt64(x), true
	case uint64:
		return new(big.Rat).SetInt(new(big.Int).SetUint64(x)), true
	case float64:
		return new(big.Rat).SetFloat64(x), true
	case bool:
		if x {
			return big.NewRat(1, 1), true
		}
		return new(big.Rat), true
	case *big.Int:
		return new(big.Rat).SetInt(x), true
	}
	return nil, false
}

// distinctKey is the key under which equal values count once (-0 as +0,
// every NaN as one).
func distinctKey(v any) string {
	switch x := v.(type) {
	case float64:
		switch {
		case x == 0:
			x = 0
		case math.IsNaN(x):
			return "NaN"
		}
		return fmt.Sprintf("f%x", math.Float64bits(x))
	case *big.Int:
		return "d" + x.String()
	}
	return fmt.Sprintf("%T:%v", v, v)
}

// statsOracle is the exact sample variance (nil with fewer than two values,
// or for floats with a value whose square overflows or is not finite) and
// the exact number of distinct values, with sum|x²| for the float bound.
type statsOracle struct {
	variance *big.Rat
	special  float64 // NaN or +Inf: the expected float variance where not finite
	sumSq    float64
	n        int64
	distinct int64
}

func oracleStats(vals []any, scale int32) statsOracle {
	o := statsOracle{n: int64(len(vals))}
	keys := map[string]bool{}
	var xs []*big.Rat
	for _, v := range vals {
		keys[distinctKey(v)] = true
		if f, ok := v.(float64); ok {
			switch {
			case math.IsNaN(f) || math.IsInf(f, 0):
				o.special = math.NaN()
			case math.Abs(f) >= 1e154 && !math.IsNaN(o.special):
				o.special = math.Inf(1)
			}
			o.sumSq += f * f
		}
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			continue // no exact variance: the special value answers
		}
		if r, ok := ratOf(v); ok {
			xs = append(xs, r)
		}
	}
	o.distinct = int64(len(keys))
	if len(xs) >= 2 && len(xs) == len(vals) {
		o.variance = exactVariance(xs)
		if scale != 0 {
			p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(2*scale)), nil))
			o.variance.Quo(o.variance, p)
		}
	}
	return o
}

// exactVariance is the sample variance of xs, exact: (n·Σx² − (Σx)²) /
// (n(n−1)). When every denominator is a power of two (floats, integers),
// the sums are of integers over the largest denominator D (x·D exact), with
// no reduction a term; otherwise of rationals.
func exactVariance(xs []*big.Rat) *big.Rat {
	n := int64(len(xs))
	shift := 0 // D = 2^shift
	for _, x := range xs {
		d := x.Denom()
		if d.TrailingZeroBits() != uint(d.BitLen()-1) { // not a power of two
			shift = -1
			break
		}
		shift = max(shift, d.BitLen()-1)
	}
	if shift < 0 {
		return ratVariance(xs)
	}
	s, q, t, sq := new(big.Int), new(big.Int), new(big.Int), new(big.Int)
	for _, x := range xs {
		t.Lsh(x.Num(), uint(shift-(x.Denom().BitLen()-1)))
		s.Add(s, t)
		q.Add(q, sq.Mul(t, t))
	}
	num := new(big.Int).Mul(big.NewInt(n), q)
	num.Sub(num, sq.Mul(s, s))
	den := new(big.Int).Lsh(big.NewInt(n*(n-1)), uint(2*shift))
	return new(big.Rat).SetFrac(num, den)
}

// ratVariance is exactVariance with sums of rationals.
func ratVariance(xs []*big.Rat) *big.Rat {
	n := int64(len(xs))
	s, q := new(big.Rat), new(big.Rat)
	for _, x := range xs {
		s.Add(s, x)
		q.Add(q, new(big.Rat).Mul(x, x))
	}
	num := new(big.Rat).Mul(big.NewRat(n, 1), q)
	num.Sub(num, new(big.Rat).Mul(s, s))
	return num.Quo(num, big.NewRat(n*(n-1), 1))
}

// TestExactVarianceForms: the oracle's sums of integers over a power of two
// give the variance its sums of rationals give, for floats of every
// magnitude, integers and their mixes.
func TestExactVarianceForms(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	for _, spread := range []float64{1, 1e-3, 1e100, 1e-150, 1e300} {
		for _, n := range []int{2, 3, 17, 500} {
			xs := make([]*big.Rat, n)
			for i := range xs {
				f := statsFloat(r, float64(r.IntN(3)-1)*spread, spread)
				if r.IntN(7) == 0 {
					f = math.Ldexp(float64(r.Int64N(1<<53)), -1074) // subnormal
				}
				xs[i] = new(big.Rat).SetFloat64(f)
				if r.IntN(5) == 0 {
					xs[i] = new(big.Rat).SetInt64(r.Int64() >> r.IntN(60))
				}
			}
			require.Zero(t, ratVariance(xs).Cmp(exactVariance(xs)), "spread %g, n %d", spread, n)
		}
	}
	third := []*big.Rat{big.NewRat(1, 3), big.NewRat(2, 1), big.NewRat(5, 7)} // not powers of two
	require.Zero(t, ratVariance(third).Cmp(exactVariance(third)))
}

// varianceBound is the documented error bound of a float column's variance:
// 2^-52·|exact| + 2^-70·Σx²/(n-1) + n·2^-1070 (squares below the smallest
// normal lose their rounding error).
func varianceBound(exact float64, sumSq float64, n int64) float64 {
	return math.Ldexp(math.Abs(exact), -52) + math.Ldexp(sumSq, -70)/float64(n-1) + float64(n)*math.Ldexp(1, -1070)
}

// checkStats compares the statistics of a result with the oracle: integer,
// decimal and boolean variances bit for bit (exact, rounded once), float
// ones within varianceBound, stddev as the square root, and approx_distinct
// within 2% of the exact count.
func checkStats(t *testing.T, got Result, o statsOracle, dt arrow.DataType, msg string) {
	t.Helper()
	require.NoError(t, got.Err, msg)
	require.NotNil(t, got.ApproxDistinct, msg)
	d := scalarValue(got.ApproxDistinct).(int64)
	require.InDelta(t, float64(o.distinct), float64(d), 0.02*float64(o.distinct), "approx_distinct %s", msg)
	vt := resultType(dt)
	if !meanApplies(vt) {
		require.Nil(t, got.Variance, "variance does not apply: %s", msg)
		require.Nil(t, got.Stddev, "stddev does not apply: %s", msg)
		return
	}
	if o.n < 2 {
		require.Nil(t, scalarValue(got.Variance), "variance of %d values %s", o.n, msg)
		require.Nil(t, scalarValue(got.Stddev), "stddev of %d values %s", o.n, msg)
		return
	}
	v := scalarValue(got.Variance).(float64)
	sd := scalarValue(got.Stddev).(float64)
	switch {
	case math.IsNaN(o.special):
		require.True(t, math.IsNaN(v), "variance %s: want NaN got %v", msg, v)
		require.True(t, math.IsNaN(sd), "stddev %s", msg)
		return
	case o.special != 0:
		require.True(t, math.IsInf(v, 1), "variance %s: want +Inf got %v", msg, v)
		return
	}
	want, _ := o.variance.Float64()
	wantSD := ratSqrt(o.variance)
	if vt.ID() == arrow.FLOAT16 || vt.ID() == arrow.FLOAT32 || vt.ID() == arrow.FLOAT64 {
		bound := varianceBound(want, o.sumSq, o.n)
		require.InDelta(t, want, v, bound, "variance %s", msg)
		// |sd - exact sd| <= |v - exact| / (sd + exact sd), and a rounding
		require.InDelta(t, wantSD, sd, bound/(wantSD+sd+math.SmallestNonzeroFloat64)+math.Ldexp(wantSD, -52), "stddev %s", msg)
		return
	}
	require.Equal(t, want, v, "variance %s", msg)
	require.Equal(t, wantSD, sd, "stddev %s", msg)
}

func ratSqrt(r *big.Rat) float64 {
	f := new(big.Float).SetPrec(256).SetRat(r)
	sd, _ := f.Sqrt(f).Float64()
	return sd
}

// statsTypes are the types of the statistics' property test: the oracle's
// less the float types (whose random values reach 1e300, checked apart),
// plus floats of a moderate range (statsFloats).
var statsTypes = func() []arrow.DataType {
	var out []arrow.DataType
	for _, dt := range oracleTypes {
		if dt.ID() == arrow.FLOAT32 || dt.ID() == arrow.FLOAT64 {
			continue
		}
		out = append(out, dt)
	}
	return out
}()

// TestStatsAgainstOracle aggregates random arrays of every supported type,
// null density and size, whole and in random chunks, on 1 to 4 threads,
// asking for stddev, variance and approx_distinct, and compares with the
// exact oracle. The seed is fixed: approx_distinct's 2% bound is a
// statistical one.
func TestStatsAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 20261125))
	ctx := context.Background()
	for ti, dt := range statsTypes {
		for _, n := range propertySizes {
			for _, nf := range nullDensities {
				if n > 100000 && (testing.Short() || nf != 0.5 || raceEnabled && ti > 0) {
					continue
				}
				name := fmt.Sprintf("%s/n=%d/nulls=%g", dt, n, nf)
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				off := r.IntN(71)
				parent := randArray(mem, r, dt, off+n+r.IntN(3), nf)
				arr := array.NewSlice(parent, int64(off), int64(off+n))
				var scale int32
				if d, ok := dt.(*arrow.Decimal128Type); ok {
					scale = d.Scale
				}
				want := oracleStats(validValues(arr), scale)
				e := cpuEngine(t, mem, 1+r.IntN(4))
				got, err := e.AggregateArray(ctx, arr, statsAggs)
				require.NoError(t, err, name)
				checkStats(t, got, want, dt, name)

				chunks := randomChunks(r, parent, off, n)
				ch := arrow.NewChunked(dt, chunks)
				gotc, err := e.AggregateChunked(ctx, ch, statsAggs)
				require.NoError(t, err, name)
				checkStats(t, gotc, want, dt, name+" chunked")
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

// statsFloat draws floats for the variance bound: large means with small
// spreads (the cancellation that a naive sum of squares loses), wide
// spreads, zeros, subnormals and repeated values.
func statsFloat(r *rand.Rand, mean, spread float64) float64 {
	switch r.IntN(20) {
	case 0:
		return 0
	case 1:
		return math.Float64frombits(r.Uint64N(1 << 52)) // subnormal
	case 2:
		return mean // repeated
	}
	return mean + spread*r.NormFloat64()
}

// TestFloatVarianceBound checks float variance and stddev against the exact
// variance of the float64 values (math/big) within the documented bound,
// for float64 and float32 columns, dictionaries of floats, every thread
// count and chunkings, and non-finite values.
func TestFloatVarianceBound(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	ctx := context.Background()
	type dist struct{ mean, spread float64 }
	dists := []dist{{0, 1}, {1e9, 1e-3}, {-3e6, 1}, {1e15, 1e3}, {1, 1e100}, {0, 1e-150}}
	types := []arrow.DataType{arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32,
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.PrimitiveTypes.Float64}}
	for ti, dt := range types {
		for di, ds := range dists {
			for _, n := range []int{2, 3, 64, 65, 1000, 70000, 300007} {
				if n > 70000 && (testing.Short() || raceEnabled && ti+di > 0) {
					continue
				}
				name := fmt.Sprintf("%s/mean=%g/spread=%g/n=%d", dt, ds.mean, ds.spread, n)
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				arr := floatArray(mem, r, dt, n, func() float64 { return statsFloat(r, ds.mean, ds.spread) })
				want := oracleStats(validValues(arr), 0)
				e := cpuEngine(t, mem, 1+r.IntN(4))
				got, err := e.AggregateArray(ctx, arr, statsAggs)
				require.NoError(t, err, name)
				checkStats(t, got, want, dt, name)
				arr.Release()
				mem.AssertSize(t, 0)
			}
		}
	}
	// non-finite values: NaN variance; squares past float64: +Inf
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	e := cpuEngine(t, mem, 2)
	for _, c := range []struct {
		vals []float64
		want float64
	}{
		{[]float64{1, math.Inf(1), 3}, math.NaN()},
		{[]float64{1, math.NaN(), 3}, math.NaN()},
		{[]float64{1e200, 1e200, 2}, math.Inf(1)},
		{[]float64{1, 2, 3, 4}, 5.0 / 3},
	} {
		b := array.NewFloat64Builder(mem)
		b.AppendValues(c.vals, nil)
		arr := b.NewArray()
		b.Release()
		got, err := e.AggregateArray(ctx, arr, statsAggs)
		require.NoError(t, err)
		v := scalarValue(got.Variance).(float64)
		if math.IsNaN(c.want) {
			require.True(t, math.IsNaN(v), "%v: %v", c.vals, v)
		} else {
			require.Equal(t, c.want, v, "%v", c.vals)
		}
		arr.Release()
	}
	mem.AssertSize(t, 0)
}

// floatArray is an array of type dt (float32, float64 or a dictionary of
// float64) of n values from draw, 5% of them null.
func floatArray(mem memory.Allocator, r *rand.Rand, dt arrow.DataType, n int, draw func() float64) arrow.Array {
	switch dt.ID() {
	case arrow.FLOAT32:
		b := array.NewFloat32Builder(mem)
		defer b.Release()
		for range n {
			if r.IntN(20) == 0 {
				b.AppendNull()
				continue
			}
			b.Append(float32(draw()))
		}
		return b.NewArray()
	case arrow.DICTIONARY:
		b := array.NewDictionaryBuilder(mem, dt.(*arrow.DictionaryType)).(*array.Float64DictionaryBuilder)
		defer b.Release()
		pool := make([]float64, 1+r.IntN(300))
		for i := range pool {
			pool[i] = draw()
		}
		for range n {
			if r.IntN(20) == 0 {
				b.AppendNull()
				continue
			}
			if err := b.Append(pool[r.IntN(len(pool))]); err != nil {
				panic(err)
			}
		}
		return b.NewArray()
	}
	b := array.NewFloat64Builder(mem)
	defer b.Release()
	for range n {
		if r.IntN(20) == 0 {
			b.AppendNull()
			continue
		}
		b.Append(draw())
	}
	return b.NewArray()
}

// The statistics are asked for by name: the default request leaves them
// unset, and a request for approx_distinct alone reads the values.
func TestStatsOptIn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := cpuEngine(t, mem, 2)
	b := array.NewInt64Builder(mem)
	b.AppendValues([]int64{3, 1, 4, 1, 5}, []bool{true, true, false, true, true})
	arr := b.NewArray()
	b.Release()
	defer arr.Release()
	got, err := e.AggregateArray(context.Background(), arr, 0)
	require.NoError(t, err)
	require.Nil(t, got.Stddev)
	require.Nil(t, got.Variance)
	require.Nil(t, got.ApproxDistinct)
	got, err = e.AggregateArray(context.Background(), arr, agg.ApproxDistinct)
	require.NoError(t, err)
	require.Equal(t, int64(3), scalarValue(got.ApproxDistinct))
	require.Nil(t, got.Sum)
	got, err = e.AggregateArray(context.Background(), arr, agg.Stddev)
	require.NoError(t, err)
	require.Nil(t, got.Variance, "not asked for")
	require.Equal(t, ratSqrt(big.NewRat(11, 3)), scalarValue(got.Stddev)) // 3, 1, 1, 5
}

// statsGPU is a fake GPU backend that computes the statistics as the CUDA
// backend does: stddev, variance and approx_distinct but for decimals.
type statsGPU struct{ fakeGPU }

func (f *statsGPU) SupportsStats(k column.Kind, tracks agg.Set) bool {
	return k != column.Decimal128 || !tracks.Any(agg.Moments|agg.ApproxDistinct)
}

// The planner gives a column to the CPU when the GPU backend does not
// compute an aggregate asked for, and says so; the others go to the GPU.
func TestStatsRouting(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(1, 1))
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, &arrow.Decimal128Type{Precision: 38, Scale: 2},
		arrow.FixedWidthTypes.Boolean}
	n := 200000
	cols := make([]arrow.Array, len(types))
	fields := make([]arrow.Field, len(types))
	for i, dt := range types {
		cols[i] = randArray(mem, r, dt, n, 0.1)
		defer cols[i].Release()
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: dt, Nullable: true}
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), cols, int64(n))
	defer rec.Release()
	const cpuOnly = "does not compute an aggregate asked for"
	for _, tc := range []struct {
		name  string
		gpu   backend.GPUBackend
		aggs  agg.Set
		onGPU []bool
	}{
		{"moments", &statsGPU{fakeGPU{cpu: cpu.CPU{Threads: 1}}}, agg.Stddev | agg.Variance, []bool{true, false, true}},
		{"sketch", &statsGPU{fakeGPU{cpu: cpu.CPU{Threads: 1}}}, agg.ApproxDistinct | agg.Sum, []bool{true, false, true}},
		{"no stats on the gpu", &fakeGPU{cpu: cpu.CPU{Threads: 1}}, agg.Variance, []bool{false, false, false}},
		{"default", &fakeGPU{cpu: cpu.CPU{Threads: 1}}, agg.Default, []bool{true, true, true}},
	} {
		e, err := New(WithGPU(tc.gpu), WithDevice(DeviceGPU), WithCalibration(splitCalibration()), WithAllocator(mem))
		require.NoError(t, err)
		acc, err := e.NewAccumulator(rec.Schema(), Request{Aggs: tc.aggs})
		require.NoError(t, err)
		require.NoError(t, acc.Add(context.Background(), rec))
		plan := acc.Plan()
		for i, res := range acc.Results() {
			msg := fmt.Sprintf("%s: %s", tc.name, types[i])
			if tc.onGPU[i] {
				require.Equal(t, "gpu", plan[i].BackendName(), msg+": "+plan[i].Reason)
			} else {
				require.Equal(t, "cpu", plan[i].BackendName(), msg)
				if _, ok := tc.gpu.(*statsGPU); ok {
					require.Contains(t, plan[i].Reason, cpuOnly, msg)
				}
			}
			var scale int32
			if d, ok := types[i].(*arrow.Decimal128Type); ok {
				scale = d.Scale
			}
			if tc.aggs.Any(agg.Moments | agg.ApproxDistinct) {
				o := oracleStats(validValues(rec.Column(i)), scale)
				if tc.aggs.Has(agg.ApproxDistinct) {
					require.InDelta(t, float64(o.distinct), float64(scalarValue(res.ApproxDistinct).(int64)), 0.02*float64(o.distinct), msg)
				}
				if tc.aggs.Has(agg.Variance) {
					want, _ := o.variance.Float64()
					require.Equal(t, want, scalarValue(res.Variance), msg)
				}
			}
		}
		require.NoError(t, e.Close())
	}
}
