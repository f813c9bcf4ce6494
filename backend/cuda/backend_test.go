//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
)

var (
	testSizes     = []int{0, 1, 31, 33, 4097, 1<<20 + 3}
	testOffsets   = []int{0, 3, 77}
	testNullFracs = []float64{0, 0.01, 0.5, 1}
)

// TestMatchesCPU compares the GPU with the CPU backend on every type × null
// density × offset × size, through three pipelines: the default one (one
// chunk per column here), 64 KiB chunks on two streams (many chunks in
// flight, state slots recycled), and 1 MiB chunks on four streams (staging
// filled through the cache); and through resident columns.
func TestMatchesCPU(t *testing.T) { matchesCPU(t, false) }

// matchesCPU runs TestMatchesCPU's matrix, with states that track the
// ordered aggregates when ordered is set (and views that start at a row past
// 2^32, so that rows are the view's Row plus the element index).
func matchesCPU(t *testing.T, ordered bool) {
	small, err := Open(WithChunkBytes(64<<10), WithStreams(2))
	require.NoError(t, err)
	defer func() { require.NoError(t, small.Close()) }()
	cached, err := Open(WithChunkBytes(1<<20), WithStreams(4))
	require.NoError(t, err)
	defer func() { require.NoError(t, cached.Close()) }()
	backends := []struct {
		name string
		b    *Backend
	}{{"default", testBackend}, {"chunks64k", small}, {"chunks1m", cached}}

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(4, 2))
	maxLen := testSizes[len(testSizes)-1] + testOffsets[len(testOffsets)-1]
	for _, dt := range gpuTypes {
		for _, nf := range testNullFracs {
			base := randomArray(t, mem, r, dt, maxLen, nf)
			for _, off := range testOffsets {
				for _, n := range testSizes {
					arr := array.NewSlice(base, int64(off), int64(off+n))
					v := viewOf(t, arr)
					if ordered {
						v.Row = 1<<35 + int64(off)
					}
					want := newState(v, ordered)
					cpu := &cpu.CPU{Threads: 4}
					require.NoError(t, cpu.Update(t.Context(), []*column.View{v}, []*agg.State{&want}))
					name := fmt.Sprintf("%s nulls=%v offset=%d len=%d ordered=%v", dt, nf, off, n, ordered)
					check := func(got agg.State, how string) {
						t.Helper()
						requireSame(t, v, want, got, "%s (%s)", name, how)
						if ordered {
							requireSameOrdered(t, want, got, "%s (%s)", name, how)
						}
					}
					for _, be := range backends {
						got := newState(v, ordered)
						require.NoError(t, be.b.Update(t.Context(), []*column.View{v}, []*agg.State{&got}), name)
						check(got, be.name)
					}
					col, err := testBackend.Upload(t.Context(), v)
					require.NoError(t, err, name)
					got := newState(v, ordered)
					require.NoError(t, col.Update(t.Context(), &got, v.Row), name)
					col.Free()
					check(got, "resident")
					arr.Release()
				}
			}
			base.Release()
		}
	}
}

// TestSeveralViews updates several columns of different kinds in one call,
// into states that already hold partials (merged, not overwritten).
func TestSeveralViews(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(7, 7))
	var views []*column.View
	var want, got []agg.State
	for i, dt := range gpuTypes {
		arr := randomArray(t, mem, r, dt, 100_000+i, 0.1)
		defer arr.Release()
		v := viewOf(t, arr)
		views = append(views, v)
		// Both start from the state of the first 1000 values.
		head := array.NewSlice(arr, 0, 1000)
		s := cpuState(t, viewOf(t, head))
		head.Release()
		w := s
		cpu := &cpu.CPU{Threads: 2}
		require.NoError(t, cpu.Update(t.Context(), []*column.View{v}, []*agg.State{&w}))
		want = append(want, w)
		got = append(got, s)
	}
	ptrs := make([]*agg.State, len(got))
	for i := range got {
		ptrs[i] = &got[i]
	}
	require.NoError(t, testBackend.Update(t.Context(), views, ptrs))
	for i, v := range views {
		requireSame(t, v, want[i], got[i], "%s", v.Type)
	}
}

// TestFloatSemantics checks NaN, infinities, signed zeros, overflow and
// compensation against expected values written out (not the CPU backend).
func TestFloatSemantics(t *testing.T) {
	nan, inf, negZero := math.NaN(), math.Inf(1), math.Copysign(0, -1)
	cases := []struct {
		name          string
		vals          []float64
		valid         []bool // nil: all valid
		sum, min, max float64
	}{
		{"plain", []float64{1, 2.5, -4}, nil, -0.5, -4, 2.5},
		{"zeros", []float64{1, negZero, 0, 2}, nil, 3, negZero, 2},
		{"zeros reversed", []float64{0, negZero}, nil, 0, negZero, 0},
		{"only negative zero", []float64{negZero, negZero}, nil, 0, negZero, negZero},
		{"NaN skipped by min/max", []float64{nan, 1, nan}, nil, nan, 1, 1},
		{"all NaN", []float64{nan, nan}, nil, nan, nan, nan},
		{"infinity", []float64{1, inf}, nil, inf, 1, inf},
		{"both infinities", []float64{-inf, 3, inf}, nil, nan, -inf, inf},
		{"overflow", []float64{math.MaxFloat64, math.MaxFloat64}, nil, inf, math.MaxFloat64, math.MaxFloat64},
		{"NaN under nulls", []float64{nan, 2, inf, 3}, []bool{false, true, false, true}, 5, 2, 3},
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range cases {
		for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32} {
			if dt.ID() == arrow.FLOAT32 && tc.name == "overflow" {
				continue // float32 values cannot overflow a float64 sum
			}
			arr := floatArray(mem, dt, tc.vals, tc.valid)
			v := viewOf(t, arr)
			for _, resident := range []bool{false, true} {
				s := gpuState(t, testBackend, v, resident)
				name := fmt.Sprintf("%s %s resident=%v", tc.name, dt, resident)
				want := tc.sum
				sum := s.FloatSum()
				if math.IsNaN(want) {
					require.True(t, math.IsNaN(sum), "%s: sum %v", name, sum)
				} else {
					require.Equal(t, want, sum, name)
				}
				r := engine.Finalize(&s, "x", dt, agg.Default)
				if math.IsNaN(tc.min) {
					require.True(t, math.Float64frombits(s.Min[0]) > math.Float64frombits(s.Max[0]), "%s: all NaN must leave Min > Max", name)
				} else {
					require.Equal(t, math.Float64bits(tc.min), s.Min[0], "%s: min %v", name, r.Min)
					require.Equal(t, math.Float64bits(tc.max), s.Max[0], "%s: max %v", name, r.Max)
				}
			}
			arr.Release()
		}
	}
}

// TestCompensatedSum: [1e16, 1, -1e16] repeated 300001 times sums to exactly
// 300001 (a plain float sum gives 0), whatever the threads' shares.
func TestCompensatedSum(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	vals := make([]float64, 0, 3*300001)
	for range 300001 {
		vals = append(vals, 1e16, 1, -1e16)
	}
	arr := floatArray(mem, arrow.PrimitiveTypes.Float64, vals, nil)
	defer arr.Release()
	v := viewOf(t, arr)
	for _, resident := range []bool{false, true} {
		s := gpuState(t, testBackend, v, resident)
		require.Equal(t, 300001.0, s.FloatSum(), "resident=%v", resident)
	}
}

// TestDeterministic: float states are identical, bit for bit, run after run.
func TestDeterministic(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(1, 9))
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64} {
		arr := randomArray(t, mem, r, dt, 3<<20+5, 0.2)
		v := viewOf(t, arr)
		for _, resident := range []bool{false, true} {
			first := gpuState(t, testBackend, v, resident)
			for i := 0; i < 4; i++ {
				requireIdentical(t, first, gpuState(t, testBackend, v, resident), "%s resident=%v run %d", dt, resident, i)
			}
		}
		arr.Release()
	}
}

// TestLargeInt8 aggregates an int8 column of more than 2^31 values (with an
// offset and nulls) in one resident launch (64-bit indexing) and through the
// pipeline, against the CPU.
func TestLargeInt8(t *testing.T) {
	const n, off = 1<<31 + 33, 5
	vals := make([]byte, n+off)
	valid := make([]byte, (n+off+7)/8)
	var wg sync.WaitGroup
	parts := runtime.GOMAXPROCS(0)
	for p := 0; p < parts; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(p), 3))
			lo, hi := len(vals)*p/parts, len(vals)*(p+1)/parts
			fillRandom(r, vals[lo:hi])
			lo, hi = len(valid)*p/parts, len(valid)*(p+1)/parts
			fillRandom(r, valid[lo:hi])
		}()
	}
	wg.Wait()
	nulls := n + off - bitutil.CountSetBits(valid, 0, n+off)
	data := array.NewData(arrow.PrimitiveTypes.Int8, n+off,
		[]*memory.Buffer{memory.NewBufferBytes(valid), memory.NewBufferBytes(vals)}, nil, nulls, 0)
	base := array.MakeFromData(data)
	data.Release()
	defer base.Release()
	arr := array.NewSlice(base, off, off+n)
	defer arr.Release()
	v := viewOf(t, arr)
	require.Equal(t, n, v.Len)

	want := agg.New(column.FamilySigned, 0)
	cpu := &cpu.CPU{Threads: runtime.GOMAXPROCS(0)}
	require.NoError(t, cpu.Update(t.Context(), []*column.View{v}, []*agg.State{&want}))
	require.Positive(t, want.Count)
	require.Positive(t, want.NullCount)

	got := agg.New(column.FamilySigned, 0)
	require.NoError(t, testBackend.Update(t.Context(), []*column.View{v}, []*agg.State{&got}))
	require.Equal(t, want, got, "pipeline")

	before := testBackend.MemoryInUse()
	col, err := testBackend.Upload(t.Context(), v)
	require.NoError(t, err)
	require.Greater(t, uint64(testBackend.d.maxLaunch(column.Int8)), uint64(n), "one launch")
	got, err = col.Aggregate(t.Context())
	require.NoError(t, err)
	col.Free()
	require.Equal(t, want, got, "resident")
	require.Equal(t, before, testBackend.MemoryInUse())
}

// TestMemoryReturnsToBaseline: updates hold no device memory beyond the
// stream buffers; resident columns return theirs when freed; Trim and Close
// release everything.
func TestMemoryReturnsToBaseline(t *testing.T) {
	b, err := Open()
	require.NoError(t, err)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	arr := randomArray(t, mem, rand.New(rand.NewPCG(2, 2)), arrow.PrimitiveTypes.Int64, 5<<20, 0.1)
	defer arr.Release()
	v := viewOf(t, arr)
	scratch := b.MemoryInUse()
	require.Positive(t, scratch)
	gpuState(t, b, v, false) // allocates the stream buffers
	withLanes := b.MemoryInUse()
	require.Greater(t, withLanes, scratch)
	for i := 0; i < 3; i++ {
		gpuState(t, b, v, false)
		require.Equal(t, withLanes, b.MemoryInUse())
	}
	col, err := b.Upload(t.Context(), v)
	require.NoError(t, err)
	require.GreaterOrEqual(t, b.MemoryInUse()-withLanes, v.ByteSize())
	col.Free()
	col.Free() // no-op
	require.Equal(t, withLanes, b.MemoryInUse())
	_, err = col.Aggregate(t.Context())
	require.Error(t, err, "a freed column")
	require.NoError(t, b.Trim())
	require.Equal(t, scratch, b.MemoryInUse())
	var cached int64
	require.NoError(t, b.d.do(func() error { cached = b.d.pool.cached; return nil }))
	require.Zero(t, cached)

	// A column left resident is freed by Close.
	_, err = b.Upload(t.Context(), v)
	require.NoError(t, err)
	require.NoError(t, b.Close())
	require.ErrorIs(t, b.Update(t.Context(), []*column.View{v}, []*agg.State{new(agg.State)}), ErrClosed)
	require.NoError(t, b.Close(), "second Close")
}

// TestOutOfMemory: with too little device memory for its stream buffers the
// backend shrinks its chunks, or warns and aggregates on the CPU; an upload
// beyond the memory fails with ErrOutOfMemory. Results stay exact.
func TestOutOfMemory(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	arr := randomArray(t, mem, rand.New(rand.NewPCG(3, 3)), arrow.PrimitiveTypes.Int32, 3<<20+1, 0.3)
	defer arr.Release()
	v := viewOf(t, arr)
	want := cpuState(t, v)

	probe, err := Open()
	require.NoError(t, err)
	scratch := probe.MemoryInUse()
	require.NoError(t, probe.Close())

	for _, tc := range []struct {
		name     string
		limit    int64
		fallback bool
	}{
		{"shrunk chunks", scratch + 3*(1<<20), false},
		{"cpu fallback", scratch + 16<<10, true},
	} {
		var warnings []string
		b, err := Open(WithMemoryLimit(tc.limit), WithWarnings(func(m string) { warnings = append(warnings, m) }))
		require.NoError(t, err, tc.name)
		got := gpuState(t, b, v, false)
		require.Equal(t, want, got, tc.name)
		if tc.fallback {
			require.Len(t, warnings, 1, tc.name)
			require.Contains(t, warnings[0], "on the CPU")
		} else {
			require.Empty(t, warnings, tc.name)
			require.Less(t, b.laneBytesForTest(), int64(defaultChunkBytes), tc.name)
		}
		_, err = b.Upload(t.Context(), v)
		require.ErrorIs(t, err, ErrOutOfMemory, tc.name)
		require.NoError(t, b.Close(), tc.name)
	}
}

// TestCancel: a cancelled context stops Update, which leaves the states as
// they were.
func TestCancel(t *testing.T) {
	b, err := Open(WithChunkBytes(64 << 10))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	arr := randomArray(t, mem, rand.New(rand.NewPCG(5, 5)), arrow.PrimitiveTypes.Int64, 1<<20, 0)
	defer arr.Release()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s := agg.New(column.FamilySigned, 0)
	err = b.Update(ctx, []*column.View{viewOf(t, arr)}, []*agg.State{&s})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, agg.New(column.FamilySigned, 0), s)
}

// TestHostAllocator: columns built in page-locked memory are copied by DMA
// directly (no staging) and give the same results.
func TestHostAllocator(t *testing.T) {
	var asArrow memory.Allocator = testBackend.HostAllocator() // an Arrow Go allocator
	pin := asArrow.(*HostAllocator)
	mem := memory.NewCheckedAllocator(pin)
	r := rand.New(rand.NewPCG(6, 6))
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Boolean} {
		arr := randomArray(t, mem, r, dt, 1<<20+17, 0.05)
		sliced := array.NewSlice(arr, 9, int64(arr.Len()))
		v := viewOf(t, sliced)
		require.True(t, pinnedForTest(v.Values), "%s values in page-locked memory", dt)
		requireSame(t, v, cpuState(t, v), gpuState(t, testBackend, v, false), "%s", dt)
		sliced.Release()
		arr.Release()
	}
	mem.AssertSize(t, 0)
	require.Zero(t, pin.Allocated())
	require.False(t, pinnedForTest(make([]byte, 1<<20)), "Go memory is pageable")
}

// TestEngine runs the backend under engine.Engine on a record with columns
// the GPU handles and columns it leaves to the CPU (strings, dictionaries).
func TestEngine(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(8, 8))
	fields := []arrow.Field{}
	var cols []arrow.Array
	for i, dt := range gpuTypes {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%d", i), Type: dt, Nullable: true})
		cols = append(cols, randomArray(t, mem, r, dt, 70_001, 0.1))
	}
	sb := array.NewStringBuilder(mem)
	db := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.PrimitiveTypes.Float64})
	for i := 0; i < 70_001; i++ {
		sb.Append(fmt.Sprintf("s%05d", r.IntN(100000)))
		require.NoError(t, db.(*array.Float64DictionaryBuilder).Append(float64(r.IntN(50))))
	}
	fields = append(fields, arrow.Field{Name: "str", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "dict", Type: db.Type()})
	cols = append(cols, sb.NewArray(), db.NewArray())
	sb.Release()
	db.Release()
	rec := array.NewRecord(arrow.NewSchema(fields, nil), cols, 70_001)
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	require.False(t, testBackend.Handles(viewOf(t, rec.Column(len(cols)-2))), "strings stay on the CPU")
	require.False(t, testBackend.Handles(viewOf(t, rec.Column(len(cols)-1))), "dictionaries stay on the CPU")

	cpuEng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithAllocator(mem))
	require.NoError(t, err)
	gpuEng, err := engine.New(engine.WithGPU(testBackend), engine.WithAllocator(mem))
	require.NoError(t, err)
	regEng, err := engine.New(engine.WithDevice(engine.DeviceGPU), engine.WithAllocator(mem))
	require.NoError(t, err, "the registered backend opens")
	defer func() { require.NoError(t, regEng.Close()) }()
	want, err := cpuEng.AggregateRecord(t.Context(), rec, engine.Request{})
	require.NoError(t, err)
	for _, e := range []*engine.Engine{gpuEng, regEng} {
		got, err := e.AggregateRecord(t.Context(), rec, engine.Request{})
		require.NoError(t, err)
		require.Len(t, got, len(want))
		for i := range want {
			v := viewOf(t, rec.Column(i))
			if !testBackend.Handles(v) {
				require.Equal(t, want[i].State, got[i].State, want[i].Name) // the CPU's both times
				continue
			}
			requireSame(t, v, want[i].State, got[i].State, want[i].Name)
			require.Equal(t, want[i].Count, got[i].Count)
			if want[i].State.Family != column.FamilyFloat {
				for _, p := range [][2]any{{want[i].Sum, got[i].Sum}, {want[i].Min, got[i].Min}, {want[i].Max, got[i].Max}} {
					require.Equal(t, fmt.Sprint(p[0]), fmt.Sprint(p[1]), want[i].Name)
				}
			}
		}
	}
}

// gpuState aggregates v on b into a fresh state, through the pipeline or as
// a resident column.
func gpuState(t testing.TB, b *Backend, v *column.View, resident bool) agg.State {
	t.Helper()
	if resident {
		col, err := b.Upload(t.Context(), v)
		require.NoError(t, err)
		defer col.Free()
		s, err := col.Aggregate(t.Context())
		require.NoError(t, err)
		return s
	}
	s := agg.New(v.Kind.Family(), 0)
	require.NoError(t, b.Update(t.Context(), []*column.View{v}, []*agg.State{&s}))
	return s
}

// floatArray makes a float32 or float64 array of vals (valid: nil for all).
func floatArray(mem memory.Allocator, dt arrow.DataType, vals []float64, valid []bool) arrow.Array {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	// Values under nulls are kept (NaN, Inf): the kernels must skip them.
	for _, x := range vals {
		switch fb := b.(type) {
		case *array.Float64Builder:
			fb.Append(x)
		case *array.Float32Builder:
			fb.Append(float32(x))
		}
	}
	arr := b.NewArray()
	if valid == nil {
		return arr
	}
	defer arr.Release()
	vb := make([]byte, bitutil.BytesForBits(int64(len(vals))))
	nulls := 0
	for i, ok := range valid {
		bitutil.SetBitTo(vb, i, ok)
		if !ok {
			nulls++
		}
	}
	data := array.NewData(dt, len(vals), []*memory.Buffer{memory.NewBufferBytes(vb), arr.Data().Buffers()[1]}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

func (b *Backend) laneBytesForTest() int64 {
	var n int64
	b.d.do(func() error { n = b.laneBytes; return nil }) //nolint:errcheck
	return n
}

// pinnedForTest runs pinned on the device thread (it needs the context).
func pinnedForTest(b []byte) bool {
	var ok bool
	testBackend.d.do(func() error { ok = pinned(b); return nil }) //nolint:errcheck
	return ok
}
