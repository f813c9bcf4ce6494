//go:build cuda

package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

// testBackend is the backend with the default options, shared by the tests
// and the benchmarks.
var testBackend *Backend

func TestMain(m *testing.M) {
	b, err := Open()
	if err != nil {
		fmt.Fprintln(os.Stderr, "opening the CUDA backend:", err)
		os.Exit(1)
	}
	testBackend = b
	fmt.Printf("device: %s\n", b.Info())
	code := m.Run()
	if err := b.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "closing the CUDA backend:", err)
		code = 1
	}
	os.Exit(code)
}

// gpuTypes are the types the GPU aggregates: every fixed-width storage kind
// and the temporal types on top of them.
var gpuTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
	arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Boolean,
	arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64, arrow.FixedWidthTypes.Time32ms,
	arrow.FixedWidthTypes.Time64ns, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
	arrow.FixedWidthTypes.Duration_ns, &arrow.Decimal128Type{Precision: 38, Scale: 2},
}

func kindOf(t testing.TB, dt arrow.DataType) column.Kind {
	k, err := arrow17.KindOf(dt)
	require.NoError(t, err)
	return k
}

// randomArray makes n values of type dt, about nullFrac of them null. Integer
// and decimal values cover the whole range of their type (sums far beyond 64
// bits); floats mix magnitudes, with ±0 now and then; the values under
// nulls are garbage (NaN for floats), which the aggregates must skip.
func randomArray(t testing.TB, mem memory.Allocator, r *rand.Rand, dt arrow.DataType, n int, nullFrac float64) arrow.Array {
	k := kindOf(t, dt)
	nbytes := n * k.Width()
	if k == column.Bool {
		nbytes = int(bitutil.BytesForBits(int64(n)))
	}
	vals := memory.NewResizableBuffer(mem)
	defer vals.Release()
	vals.Resize(nbytes)
	b := vals.Bytes()
	fillRandom(r, b)
	var validity *memory.Buffer
	nulls := 0
	if nullFrac > 0 {
		validity = memory.NewResizableBuffer(mem)
		defer validity.Release()
		validity.Resize(int(bitutil.BytesForBits(int64(n))))
		vb := validity.Bytes()
		clear(vb)
		for i := 0; i < n; i++ {
			if nullFrac < 1 && r.Float64() >= nullFrac {
				bitutil.SetBit(vb, i)
			}
		}
		nulls = n - bitutil.CountSetBits(vb, 0, n)
	}
	switch k {
	case column.Float32:
		f := column.Slice[float32](b)
		for i := range f {
			f[i] = float32(randFloat(r))
			if validity != nil && !bitutil.BitIsSet(validity.Bytes(), i) {
				f[i] = float32(math.NaN())
			}
		}
	case column.Float64:
		f := column.Slice[float64](b)
		for i := range f {
			f[i] = randFloat(r)
			if validity != nil && !bitutil.BitIsSet(validity.Bytes(), i) {
				f[i] = math.NaN()
			}
		}
	}
	data := array.NewData(dt, n, []*memory.Buffer{validity, vals}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

func fillRandom(r *rand.Rand, b []byte) {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	for ; i < len(b); i++ {
		b[i] = byte(r.Uint32())
	}
}

func randFloat(r *rand.Rand) float64 {
	switch r.IntN(100) {
	case 0:
		return 0
	case 1:
		return math.Copysign(0, -1)
	}
	return r.NormFloat64() * math.Pow(10, float64(r.IntN(13)-6))
}

// cpuState aggregates v with the CPU backend.
func cpuState(t testing.TB, v *column.View) agg.State {
	s := agg.New(v.Kind.Family(), 0)
	cpu := &cpu.CPU{Threads: 4}
	require.NoError(t, cpu.Update(t.Context(), []*column.View{v}, []*agg.State{&s}))
	return s
}

// newState is an empty state for v, tracking the ordered aggregates when
// ordered is set.
func newState(v *column.View, ordered bool) agg.State {
	if ordered {
		return agg.New(v.Kind.Family(), agg.Default|agg.Ordered)
	}
	return agg.New(v.Kind.Family(), 0)
}

// requireSameOrdered checks the ordered aggregates of a GPU state against
// the CPU's: rows and values bit for bit (NaN payloads included).
func requireSameOrdered(t testing.TB, cpu, gpu agg.State, msgAndArgs ...any) {
	t.Helper()
	require.True(t, gpu.Ordered(), msgAndArgs...)
	type ordered struct {
		FirstRow, LastRow, MinRow, MaxRow int64
		First, Last                       [2]uint64
	}
	of := func(s agg.State) ordered {
		return ordered{s.FirstRow, s.LastRow, s.MinRow, s.MaxRow, s.First, s.Last}
	}
	require.Equal(t, of(cpu), of(gpu), msgAndArgs...)
}

// absSum is the sum of |x| over the valid finite values of a float view, and
// how many there are.
func absSum(v *column.View) (float64, int) {
	var s float64
	var n int
	for i := 0; i < v.Len; i++ {
		if !v.Valid(i) {
			continue
		}
		var x float64
		if v.Kind == column.Float32 {
			x = float64(column.Values[float32](v)[i])
		} else {
			x = column.Values[float64](v)[i]
		}
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			s += math.Abs(x)
			n++
		}
	}
	return s, n
}

// floatBound is the documented bound on |gpu - cpu| for float sums: both are
// compensated, each within 2^-53·|sum| + (n·2^-53)²·Σ|x| of the exact sum.
func floatBound(sum, abs float64, n int) float64 {
	const eps = 0x1p-53
	ne := float64(n) * eps
	return 2*eps*math.Abs(sum) + 2*ne*ne*abs
}

// requireSame checks a GPU state against the CPU's: bit for bit, except
// float sums, which must agree within floatBound (non-finite ones exactly).
func requireSame(t testing.TB, v *column.View, cpu, gpu agg.State, msgAndArgs ...any) {
	t.Helper()
	if v.Kind.Family() != column.FamilyFloat {
		require.Equal(t, cpu, gpu, msgAndArgs...)
		return
	}
	require.Equal(t, cpu.Count, gpu.Count, msgAndArgs...)
	require.Equal(t, cpu.NullCount, gpu.NullCount, msgAndArgs...)
	require.Equal(t, math.Float64frombits(cpu.Min[0]), math.Float64frombits(gpu.Min[0]), msgAndArgs...)
	require.Equal(t, cpu.Min, gpu.Min, msgAndArgs...) // the sign of zero too
	require.Equal(t, cpu.Max, gpu.Max, msgAndArgs...)
	cs, gs := cpu.FloatSum(), gpu.FloatSum()
	if math.IsNaN(cs) || math.IsInf(cs, 0) {
		require.Equal(t, math.IsNaN(cs), math.IsNaN(gs), msgAndArgs...)
		if !math.IsNaN(cs) {
			require.Equal(t, cs, gs, msgAndArgs...)
		}
		return
	}
	abs, n := absSum(v)
	require.InDelta(t, cs, gs, floatBound(cs, abs, n), msgAndArgs...)
}

// requireIdentical checks that two states are identical, float bits
// included (NaN payloads too).
func requireIdentical(t testing.TB, a, b agg.State, msgAndArgs ...any) {
	t.Helper()
	require.Equal(t, a.Count, b.Count, msgAndArgs...)
	require.Equal(t, a.NullCount, b.NullCount, msgAndArgs...)
	require.Equal(t, a.Sum, b.Sum, msgAndArgs...)
	require.Equal(t, a.Min, b.Min, msgAndArgs...)
	require.Equal(t, a.Max, b.Max, msgAndArgs...)
	require.Equal(t, math.Float64bits(a.FSum), math.Float64bits(b.FSum), msgAndArgs...)
	require.Equal(t, math.Float64bits(a.FComp), math.Float64bits(b.FComp), msgAndArgs...)
	require.Equal(t, math.Float64bits(a.FSpecial), math.Float64bits(b.FSpecial), msgAndArgs...)
}

// viewOf returns the view of arr.
func viewOf(t testing.TB, arr arrow.Array) *column.View {
	v, err := arrow17.ViewOf(arr)
	require.NoError(t, err)
	return &v
}
