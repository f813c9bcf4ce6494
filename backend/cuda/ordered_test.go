//go:build cuda

package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/planner"
)

// TestOrderedMatchesCPU: first, last, arg_min and arg_max on the GPU equal
// the CPU backend's on TestMatchesCPU's matrix (every type × null density ×
// offset × size, three pipelines and resident columns).
func TestOrderedMatchesCPU(t *testing.T) { matchesCPU(t, true) }

// gpuPaths are the ways a view reaches the GPU in the tests of the ordered
// aggregates and the statistics: one chunk, 64 KiB chunks (many chunks and
// launches: ties, partial sums and one device sketch across them),
// resident.
func gpuPaths(t *testing.T) (small *Backend, names []string) {
	small, err := Open(WithChunkBytes(64<<10), WithStreams(2))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, small.Close()) })
	return small, []string{"default", "chunks64k", "resident"}
}

// gpuOrdered aggregates v into a fresh ordered state (gpuStateVia).
func gpuOrdered(t *testing.T, small *Backend, how string, v *column.View) agg.State {
	t.Helper()
	return gpuStateVia(t, small, how, v, agg.Default|agg.Ordered)
}

// gpuStateVia aggregates v into a fresh state of the aggregates set: through
// the pipeline of testBackend ("default"), of small ("chunks64k"), or
// resident.
func gpuStateVia(t *testing.T, small *Backend, how string, v *column.View, set agg.Set) agg.State {
	t.Helper()
	s := agg.New(v.Kind.Family(), set)
	switch how {
	case "resident":
		col, err := testBackend.Upload(t.Context(), v)
		require.NoError(t, err)
		defer col.Free()
		require.NoError(t, col.Update(t.Context(), &s, v.Row))
	case "chunks64k":
		require.NoError(t, small.Update(t.Context(), []*column.View{v}, []*agg.State{&s}))
	default:
		require.NoError(t, testBackend.Update(t.Context(), []*column.View{v}, []*agg.State{&s}))
	}
	return s
}

func cpuOrdered(t *testing.T, v *column.View) agg.State {
	s := newState(v, true)
	cpu := &cpu.CPU{Threads: 4}
	require.NoError(t, cpu.Update(t.Context(), []*column.View{v}, []*agg.State{&s}))
	return s
}

// levelArray makes an array of type dt whose element i has level levels[i]
// (null where valid[i] is false): the integer itself for integer, temporal
// and decimal types (decimals with their high word set too, so that both
// words take part), as a float for floats, true from level 5 up for bools.
// It is sliced by off elements, so that buffers start unaligned.
func levelArray(t *testing.T, mem memory.Allocator, dt arrow.DataType, levels []int64, valid []bool, off int) arrow.Array {
	k := kindOf(t, dt)
	n := len(levels) + off
	vals := memory.NewResizableBuffer(mem)
	defer vals.Release()
	if k == column.Bool {
		vals.Resize(int(bitutil.BytesForBits(int64(n))))
	} else {
		vals.Resize(n * k.Width())
	}
	b := vals.Bytes()
	clear(b)
	vb := memory.NewResizableBuffer(mem)
	defer vb.Release()
	vb.Resize(int(bitutil.BytesForBits(int64(n))))
	clear(vb.Bytes())
	nulls := 0
	for j := 0; j < n; j++ {
		x, ok := int64(3), true
		if j >= off {
			x, ok = levels[j-off], valid[j-off]
		}
		bitutil.SetBitTo(vb.Bytes(), j, ok)
		if !ok {
			nulls++
		}
		switch w := k.Width(); {
		case k == column.Bool:
			bitutil.SetBitTo(b, j, x >= 5)
		case k == column.Float32:
			binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(float32(x)))
		case k == column.Float64:
			binary.LittleEndian.PutUint64(b[8*j:], math.Float64bits(float64(x)))
		case k == column.Decimal128:
			binary.LittleEndian.PutUint64(b[16*j:], uint64(x))
			binary.LittleEndian.PutUint64(b[16*j+8:], uint64(x)) // x·2^64 + x
		default:
			var le [8]byte
			binary.LittleEndian.PutUint64(le[:], uint64(x))
			copy(b[w*j:w*(j+1)], le[:w])
		}
	}
	data := array.NewData(dt, n, []*memory.Buffer{vb, vals}, nil, nulls, 0)
	defer data.Release()
	whole := array.MakeFromData(data)
	defer whole.Release()
	return array.NewSlice(whole, int64(off), int64(n))
}

// TestOrderedTies: in a column of one repeated value with its minimum and
// maximum each placed at rows far apart (other chunks, other blocks, and
// next to each other), the earliest row wins; the first and last rows are
// null. Checked against the rows written out, and against the CPU.
func TestOrderedTies(t *testing.T) {
	small, hows := gpuPaths(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 1<<20 + 3
	const row0 = 1 << 40
	minRows := []int{n - 100, 300_001, n - 99, 700_000} // earliest: 300_001
	maxRows := []int{n - 7, 600_000, 200_003, 200_004}  // earliest: 200_003
	levels := make([]int64, n)
	valid := make([]bool, n)
	for i := range levels {
		levels[i], valid[i] = 5, true
	}
	valid[0], valid[n-1] = false, false
	for _, r := range minRows {
		levels[r] = 1
	}
	for _, r := range maxRows {
		levels[r] = 9
	}
	for _, dt := range gpuTypes {
		for _, off := range []int{0, 5} {
			arr := levelArray(t, mem, dt, levels, valid, off)
			v := viewOf(t, arr)
			v.Row = row0
			want := cpuOrdered(t, v)
			wantMax := int64(row0 + 200_003)
			if v.Kind == column.Bool { // min false (level 1), max true: the first valid row
				wantMax = row0 + 1
			}
			require.Equal(t, []int64{row0 + 1, row0 + n - 2, row0 + 300_001, wantMax},
				[]int64{want.FirstRow, want.LastRow, want.MinRow, want.MaxRow}, "cpu %s", dt)
			for _, how := range hows {
				got := gpuOrdered(t, small, how, v)
				name := fmt.Sprintf("%s offset=%d (%s)", dt, off, how)
				requireSame(t, v, want, got, name)
				requireSameOrdered(t, want, got, name)
			}
			arr.Release()
		}
	}
}

// TestOrderedFloats: signed zeros (-0 is the minimum, +0 the maximum), NaN
// (never the min or max unless every value is NaN, then the first NaN is
// both; a NaN first or last value is reported as is), infinities and NaN
// under nulls, small and across chunks, against rows written out and the
// CPU's values bit for bit.
func TestOrderedFloats(t *testing.T) {
	small, hows := gpuPaths(t)
	nan, inf, negZero := math.NaN(), math.Inf(1), math.Copysign(0, -1)
	type rows struct{ first, last, min, max int64 }
	type floatCase struct {
		name  string
		vals  []float64
		valid []bool // nil: all valid
		want  rows
	}
	cases := []floatCase{
		{"zeros", []float64{0, negZero, 0, negZero}, nil, rows{0, 3, 1, 0}},
		{"negative zeros", []float64{negZero, negZero}, nil, rows{0, 1, 0, 0}},
		{"NaN skipped", []float64{nan, 1, nan}, nil, rows{0, 2, 1, 1}},
		{"all NaN", []float64{nan, nan, nan}, []bool{false, true, true}, rows{1, 2, 1, 1}},
		{"infinities", []float64{nan, -inf, 3, inf, -inf, inf}, nil, rows{0, 5, 1, 3}},
		{"NaN under nulls", []float64{nan, 2, inf, 2, -inf}, []bool{false, true, false, true, false}, rows{1, 3, 1, 1}},
		{"all null", []float64{1, 2}, []bool{false, false}, rows{-1, -1, -1, -1}},
	}
	// The same far apart: zeros with -0 three times, and NaN everywhere,
	// over many chunks and blocks, the first three rows null.
	const n = 1<<20 + 3
	zeros, nans, valid := make([]float64, n), make([]float64, n), make([]bool, n)
	for i := range zeros {
		nans[i], valid[i] = nan, i > 2
	}
	zeros[n-50], zeros[400_000], zeros[900_000] = negZero, negZero, negZero
	cases = append(cases,
		floatCase{"zeros far apart", zeros, valid, rows{3, n - 1, 400_000, 3}},
		floatCase{"all NaN far apart", nans, valid, rows{3, n - 1, 3, 3}})

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range cases {
		for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32} {
			arr := floatArray(mem, dt, tc.vals, tc.valid)
			v := viewOf(t, arr)
			want := cpuOrdered(t, v)
			require.Equal(t, tc.want, rows{want.FirstRow, want.LastRow, want.MinRow, want.MaxRow}, "cpu %s %s", tc.name, dt)
			for _, how := range hows {
				got := gpuOrdered(t, small, how, v)
				name := fmt.Sprintf("%s %s (%s)", tc.name, dt, how)
				require.Equal(t, tc.want, rows{got.FirstRow, got.LastRow, got.MinRow, got.MaxRow}, name)
				requireSameOrdered(t, want, got, name)
				requireSame(t, v, want, got, name)
			}
			arr.Release()
		}
	}
}

// TestOrderedEngine: the engine sends columns whose states track the
// ordered aggregates to the GPU (SupportsOrdered), and first, last, arg_min
// and arg_max over several record batches (rows counted across them) equal
// the CPU engine's.
func TestOrderedEngine(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(11, 11))
	const n = 300_007
	var fields []arrow.Field
	var cols []arrow.Array
	for i, dt := range gpuTypes {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%d", i), Type: dt, Nullable: true})
		cols = append(cols, randomArray(t, mem, r, dt, n, 0.1))
	}
	sb := array.NewStringBuilder(mem)
	for i := 0; i < n; i++ {
		sb.Append(fmt.Sprintf("s%05d", r.IntN(100000)))
	}
	fields = append(fields, arrow.Field{Name: "str", Type: arrow.BinaryTypes.String})
	cols = append(cols, sb.NewArray())
	sb.Release()
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecord(schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()

	cal := planner.Defaults(runtime.GOMAXPROCS(0))
	cal.GPU, cal.HostStaged, cal.H2DPinned, cal.H2DPageable, cal.DeviceRead = testBackend.DeviceName(), 20e9, 25e9, 10e9, 2e12
	cal.Launch = 20 * time.Microsecond
	cpuEng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithAllocator(mem))
	require.NoError(t, err)
	gpuEng, err := engine.New(engine.WithGPU(testBackend), engine.WithDevice(engine.DeviceGPU),
		engine.WithAllocator(mem), engine.WithCalibration(cal))
	require.NoError(t, err)

	req := engine.Request{Aggs: agg.Default | agg.Ordered}
	run := func(e *engine.Engine) *engine.Accumulator {
		acc, err := e.NewAccumulator(schema, req)
		require.NoError(t, err)
		for _, cut := range [][2]int64{{0, 1000}, {1000, 150_001}, {150_001, n}} {
			part := rec.NewSlice(cut[0], cut[1])
			require.NoError(t, acc.Add(t.Context(), part))
			part.Release()
		}
		return acc
	}
	want, got := run(cpuEng).Results(), run(gpuEng)
	plans := got.Plan()
	for i, res := range got.Results() {
		w := want[i]
		if i < len(gpuTypes) {
			require.Equal(t, "gpu", plans[i].BackendName(), "%s: %s", w.Name, plans[i].Reason)
		}
		requireSameOrdered(t, w.State, res.State, w.Name)
		require.Positive(t, res.State.Count, w.Name)
		for _, p := range [][2]any{{w.First, res.First}, {w.Last, res.Last}, {w.ArgMin, res.ArgMin}, {w.ArgMax, res.ArgMax}} {
			require.Equal(t, fmt.Sprint(p[0]), fmt.Sprint(p[1]), w.Name)
		}
	}
}
