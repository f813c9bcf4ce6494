//go:build cuda

package cuda

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/cudrv"
)

// installFaults makes f b's fault injector (nil: none) on the device
// thread; reading f after removing it is race-free (do orders them).
func installFaults(t testing.TB, b *Backend, f *faults) {
	t.Helper()
	require.NoError(t, b.d.do(func() error { b.d.pool.faults = f; return nil }))
}

// withFaults runs call with f installed and removes it.
func withFaults[T any](t testing.TB, b *Backend, f *faults, call func() (T, error)) (T, error) {
	t.Helper()
	installFaults(t, b, f)
	defer installFaults(t, b, nil)
	return call()
}

// faultContext is what the error of a failure at each point says failed.
var faultContext = [numFaultPoints]string{
	faultDeviceAlloc: "allocating",
	faultHostAlloc:   "page-locked staging",
	faultLaunch:      "launching arrowagg_",
	faultCopyHtoD:    "to the device",
	faultCopyDtoH:    "to the host",
	faultSync:        "waiting for|running arrowagg_",
}

// requireFailure checks the error of a call with a fault injected at p: it
// wraps the driver's error and says what failed.
func requireFailure(t testing.TB, err error, p faultPoint, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	require.ErrorIs(t, err, faultErrs[p], msgAndArgs...)
	require.True(t, strings.HasPrefix(err.Error(), "cuda: "), err.Error())
	require.Regexp(t, faultContext[p], err.Error(), msgAndArgs...)
	if p == faultDeviceAlloc || p == faultHostAlloc {
		require.ErrorIs(t, err, ErrOutOfMemory, msgAndArgs...)
	}
}

// requireIdle checks that b is ready for the next call after a failure:
// no lane waits for an upload, every launch ticket is zero again, and the
// pool holds no more than the baseline plus the stream buffers.
func requireIdle(t testing.TB, b *Backend, msgAndArgs ...any) {
	t.Helper()
	var busy []bool
	var tickets []uint32
	require.NoError(t, b.d.do(func() error {
		for i := range b.lanes {
			ln := &b.lanes[i]
			busy = append(busy, ln.busy)
			var ticket uint32
			if err := ln.stream.Synchronize(); err != nil {
				return err
			}
			if err := cudrv.MemcpyDtoH(unsafe.Pointer(&ticket), ln.sc.ticket.ptr, 4); err != nil {
				return err
			}
			tickets = append(tickets, ticket)
		}
		return nil
	}), msgAndArgs...)
	require.Equal(t, make([]bool, len(b.lanes)), busy, msgAndArgs...)
	require.Equal(t, make([]uint32, len(b.lanes)), tickets, msgAndArgs...)
}

// requireBaseline checks that after Trim b holds its scratch alone (the
// baseline), caches nothing, and that the process holds as much page-locked
// memory as before (pinned0).
func requireBaseline(t testing.TB, b *Backend, baseline, pinned0 int64, msgAndArgs ...any) {
	t.Helper()
	require.NoError(t, b.Trim(), msgAndArgs...)
	require.Equal(t, baseline, b.MemoryInUse(), msgAndArgs...)
	var cached int64
	require.NoError(t, b.d.do(func() error { cached = b.d.pool.cached; return nil }))
	require.Zero(t, cached, msgAndArgs...)
	require.Equal(t, pinned0, pinnedBytes.Load(), msgAndArgs...)
}

// requireStatesIdentical checks that states are identical, float bits and
// the ordered aggregates included.
func requireStatesIdentical(t testing.TB, want, got []agg.State, msgAndArgs ...any) {
	t.Helper()
	require.Len(t, got, len(want), msgAndArgs...)
	for i := range want {
		requireIdentical(t, want[i], got[i], msgAndArgs...)
		require.Equal(t, want[i].Ordered(), got[i].Ordered(), msgAndArgs...)
		if want[i].Ordered() {
			requireSameOrdered(t, want[i], got[i], msgAndArgs...)
		}
	}
}

// faultView is one column of the fault tests: a slice of a random array
// (offset 3), its states tracking the ordered aggregates or not.
type faultView struct {
	dt       arrow.DataType
	n        int
	nullFrac float64
	ordered  bool
}

// faultViews are host columns of several kinds, with and without nulls and
// the ordered aggregates, each several 128 KiB chunks long.
var faultViews = []faultView{
	{arrow.PrimitiveTypes.Int32, 300_001, 0.3, false},
	{arrow.PrimitiveTypes.Float64, 100_003, 0.1, true},
	{&arrow.Decimal128Type{Precision: 38, Scale: 2}, 20_011, 0.2, true},
	{arrow.FixedWidthTypes.Boolean, 500_000, 0.5, true},
	{arrow.PrimitiveTypes.Uint16, 70_000, 0, false},
}

// faultFixture builds the views of faultViews and their starting states:
// each the CPU's state of the view's first 1000 values, so that a failed
// call that touched them would show. The arrays are released by t.Cleanup.
func faultFixture(t *testing.T, mem memory.Allocator) (views []*column.View, start []agg.State) {
	r := rand.New(rand.NewPCG(21, 21))
	for _, fv := range faultViews {
		base := randomArray(t, mem, r, fv.dt, fv.n+3, fv.nullFrac)
		arr := array.NewSlice(base, 3, int64(fv.n+3))
		base.Release()
		t.Cleanup(arr.Release)
		v := viewOf(t, arr)
		v.Row = 1 << 33
		head := array.NewSlice(arr, 0, 1000)
		hv := viewOf(t, head)
		hv.Row = v.Row
		s := newState(v, fv.ordered)
		cpu := &cpu.CPU{Threads: 4}
		require.NoError(t, cpu.Update(t.Context(), []*column.View{hv}, []*agg.State{&s}))
		head.Release()
		views = append(views, v)
		start = append(start, s)
	}
	return views, start
}

// cpuStates folds views into copies of start with the CPU backend.
func cpuStates(t *testing.T, views []*column.View, start []agg.State) []agg.State {
	out := slices.Clone(start)
	cpu := &cpu.CPU{Threads: 4}
	require.NoError(t, cpu.Update(t.Context(), views, statePtrs(out)))
	return out
}

func statePtrs(s []agg.State) []*agg.State {
	p := make([]*agg.State, len(s))
	for i := range s {
		p[i] = &s[i]
	}
	return p
}

// requireMatchesCPU checks GPU states against the CPU's, view by view: bit
// for bit but for float sums (within the documented bound), ordered
// aggregates exactly; a failure names the column.
func requireMatchesCPU(t testing.TB, views []*column.View, want, got []agg.State, name string) {
	t.Helper()
	for i, v := range views {
		msg := fmt.Sprintf("%s: column %d (%s, %d values, %d nulls)", name, i, v.Type, v.Len, v.NullCount)
		requireSame(t, v, want[i], got[i], msg)
		if want[i].Ordered() {
			requireSameOrdered(t, want[i], got[i], msg)
		}
	}
}

func isAllocPoint(p faultPoint) bool { return p == faultDeviceAlloc || p == faultHostAlloc }

// eachFault calls try with every fault a call that made count.calls can
// meet: the nth call at every point for every n, and for allocations also
// every call from the nth on (sticky).
func eachFault(count *faults, try func(p faultPoint, n int, sticky bool)) {
	for p := range numFaultPoints {
		for _, sticky := range []bool{false, true} {
			if sticky && !isAllocPoint(p) {
				continue
			}
			for n := 1; n <= count.calls[p]; n++ {
				try(p, n, sticky)
			}
		}
	}
}

// faultSweep injects, one by one, every fault that eachFault lists for
// count into run, an Update on b from states start whose fault-free result
// is ref (want: the CPU's), and checks what each did: an allocation that
// fails once shrinks the chunks (the results still match the CPU's, no
// warning; shrunk may check more); failing every time, it hands the
// columns to the CPU with one warning (fellBack may check more); any other
// failure is returned with the states untouched and the lanes idle. The
// next fault-free call then gives ref (or, after shrinking, the CPU's
// results), and after Trim the device and page-locked memory are back to
// their baseline.
type faultSweep struct {
	b                 *Backend
	warnings          *[]string
	run               func() ([]agg.State, error)
	views             []*column.View
	start, want, ref  []agg.State
	baseline, pinned0 int64
	shrunk, fellBack  func(name string)
}

func (s *faultSweep) each(t *testing.T, count *faults) {
	eachFault(count, func(p faultPoint, n int, sticky bool) {
		name := faultName(p, n, sticky)
		require.NoError(t, s.b.Trim(), name)
		*s.warnings = nil
		f := &faults{point: p, nth: n, sticky: sticky}
		got, err := withFaults(t, s.b, f, s.run)
		require.Positive(t, f.injected, name)
		switch {
		case isAllocPoint(p) && !sticky: // smaller chunks
			require.NoError(t, err, name)
			require.Empty(t, *s.warnings, name)
			if s.shrunk != nil {
				s.shrunk(name)
			}
			requireMatchesCPU(t, s.views, s.want, got, name)
		case isAllocPoint(p): // the CPU
			require.NoError(t, err, name)
			require.Len(t, *s.warnings, 1, name)
			if s.fellBack != nil {
				s.fellBack(name)
			}
			requireStatesIdentical(t, s.want, got, name)
		default:
			requireFailure(t, err, p, name)
			require.Empty(t, *s.warnings, name)
			requireStatesIdentical(t, s.start, got, name) // untouched
			requireIdle(t, s.b, name)
		}
		// The next call has no fault, and the same result as before
		// (at the smaller chunk size: the CPU's).
		again, err := s.run()
		require.NoError(t, err, name)
		if isAllocPoint(p) && !sticky {
			requireMatchesCPU(t, s.views, s.want, again, name)
		} else {
			requireStatesIdentical(t, s.ref, again, name)
		}
		requireBaseline(t, s.b, s.baseline, s.pinned0, name)
	})
}

// TestFaultsUpdate injects a driver failure into Update of several host
// columns (128 KiB chunks on two streams, the ordered aggregates on some) at
// every point and every occurrence of a fault-free call: the Nth device or
// page-locked allocation of the stream buffers (alone: the chunks shrink;
// and every one from it on: the CPU takes over, with a warning), the Nth
// launch, copy to the device, copy to the host and synchronization (an error
// wrapping the driver's, the states untouched). After each, the lanes are
// idle with zero tickets, the next fault-free call gives the same states as
// before the fault, and after Trim the device and page-locked memory are
// back to their baseline.
func TestFaultsUpdate(t *testing.T) {
	var warnings []string
	b, err := Open(WithChunkBytes(128<<10), WithStreams(2), WithWarnings(func(m string) { warnings = append(warnings, m) }))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) }) // after the fixture's cleanups
	views, start := faultFixture(t, mem)
	want := cpuStates(t, views, start)

	baseline, pinned0 := b.MemoryInUse(), pinnedBytes.Load()
	run := func() ([]agg.State, error) {
		got := slices.Clone(start)
		return got, b.Update(t.Context(), views, statePtrs(got))
	}
	ref, err := run()
	require.NoError(t, err)
	requireMatchesCPU(t, views, want, ref, "fault-free")
	require.Equal(t, int64(128<<10), b.laneBytesForTest())

	// The calls of a fault-free run from a trimmed backend (the stream
	// buffers allocated again), counted.
	require.NoError(t, b.Trim())
	count := &faults{}
	got, err := withFaults(t, b, count, run)
	require.NoError(t, err)
	requireStatesIdentical(t, ref, got, "counting")
	for p := range numFaultPoints {
		require.Positive(t, count.calls[p], "calls at %s", p)
	}
	t.Logf("calls of one Update: %v", count.calls)

	sweep := faultSweep{b: b, warnings: &warnings, run: run, views: views, start: start, want: want, ref: ref,
		baseline: baseline, pinned0: pinned0,
		shrunk: func(name string) { require.Equal(t, int64(minChunkBytes), b.laneBytesForTest(), name) },
		fellBack: func(name string) {
			require.Contains(t, warnings[0], "on the CPU", name)
			require.Zero(t, b.laneBytesForTest(), name)
		},
	}
	sweep.each(t, count)
}

// faultName names the injection of the nth failure at p (and every later
// one with sticky).
func faultName(p faultPoint, n int, sticky bool) string {
	if sticky {
		return fmt.Sprintf("%s from #%d", p, n)
	}
	return fmt.Sprintf("%s #%d", p, n)
}

// TestFaultsResident injects a driver failure at every point and occurrence
// of Upload followed by DeviceColumn.Update, for each column of faultViews: an
// allocation fails the Upload with ErrOutOfMemory, a copy or synchronization
// the Upload or the Update, a launch the Update (or the Upload, a float
// column's, whose scale it finds), each with the driver's error, keeping
// no device memory and leaving the state untouched. A column
// whose Update failed is still there: aggregated again without the fault,
// it gives the fault-free result.
func TestFaultsResident(t *testing.T) {
	b, err := Open(WithStreams(2))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) }) // after the fixture's cleanups
	views, start := faultFixture(t, mem)
	want := cpuStates(t, views, start)
	baseline, pinned0 := b.MemoryInUse(), pinnedBytes.Load()

	for i, v := range views {
		// run uploads v, aggregates it into a copy of its start state and
		// frees it; retry aggregates the column again, without faults, when
		// the Update failed.
		type outcome struct {
			s, retry  agg.State
			uploadErr bool
			// uploaded are the calls at each point made by the Upload.
			uploaded [numFaultPoints]int
		}
		run := func(f *faults) (outcome, error) {
			var o outcome
			require.NoError(t, b.Trim()) // every allocation reaches the driver
			installFaults(t, b, f)
			defer installFaults(t, b, nil)
			col, err := b.Upload(t.Context(), v)
			if err != nil {
				require.Nil(t, col)
				o.s, o.uploadErr = start[i], true
				return o, err
			}
			defer col.Free()
			if f != nil {
				o.uploaded = f.calls
			}
			o.s = start[i]
			if err = col.Update(t.Context(), &o.s, v.Row); err != nil {
				installFaults(t, b, nil)
				o.retry = start[i]
				require.NoError(t, col.Update(t.Context(), &o.retry, v.Row), "retry")
			}
			return o, err
		}
		count := &faults{}
		ref, err := run(count)
		require.NoError(t, err)
		requireMatchesCPU(t, views[i:i+1], want[i:i+1], []agg.State{ref.s}, fmt.Sprintf("%s fault-free", v.Type))
		require.Zero(t, count.calls[faultHostAlloc])
		t.Logf("%s: calls of Upload and Update: %v", v.Type, count.calls)

		eachFault(count, func(p faultPoint, n int, sticky bool) {
			name := v.Type.String() + ": " + faultName(p, n, sticky)
			f := &faults{point: p, nth: n, sticky: sticky}
			o, err := run(f)
			require.Positive(t, f.injected, name)
			requireFailure(t, err, p, name)
			requireStatesIdentical(t, start[i:i+1], []agg.State{o.s}, name) // untouched
			switch p {
			case faultDeviceAlloc, faultCopyHtoD:
				require.True(t, o.uploadErr, name)
				require.ErrorContains(t, err, "cuda: uploading", name)
			case faultLaunch, faultCopyDtoH:
				// Those of a float column's Upload (its scale) fail it.
				atUpload := n <= ref.uploaded[p]
				require.Equal(t, atUpload, o.uploadErr, name)
				if atUpload {
					require.ErrorContains(t, err, "cuda: uploading", name)
				} else {
					require.ErrorContains(t, err, "cuda: aggregating a resident", name)
				}
			}
			if !o.uploadErr {
				requireStatesIdentical(t, []agg.State{ref.s}, []agg.State{o.retry}, name+" (retry)")
			}
			requireIdle(t, b, name)
			require.Equal(t, baseline, b.MemoryInUse(), name)
			again, err := run(nil)
			require.NoError(t, err, name)
			requireStatesIdentical(t, []agg.State{ref.s}, []agg.State{again.s}, name+" (next)")
			requireBaseline(t, b, baseline, pinned0, name)
		})
	}
}

// TestFaultsEngine: through engine.Engine (the GPU forced), device memory
// running out leaves the answer the CPU engine's, with a warning; a failed
// launch or copy fails the aggregation with an error that wraps the
// driver's, and the next aggregation is right.
func TestFaultsEngine(t *testing.T) {
	var warnings []string
	b, err := Open(WithChunkBytes(128<<10), WithStreams(2), WithWarnings(func(m string) { warnings = append(warnings, m) }))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(22, 22))
	var fields []arrow.Field
	var cols []arrow.Array
	for i, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint8, &arrow.Decimal128Type{Precision: 30, Scale: 4}} {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%d", i), Type: dt, Nullable: true})
		cols = append(cols, randomArray(t, mem, r, dt, 200_003, 0.2))
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), cols, 200_003)
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	cpuEng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithAllocator(mem))
	require.NoError(t, err)
	eng, err := engine.New(engine.WithGPU(b), engine.WithDevice(engine.DeviceGPU), engine.WithAllocator(mem),
		engine.WithCalibration(testCalibration()))
	require.NoError(t, err)
	req := engine.Request{Aggs: agg.Default | agg.Ordered}
	want, err := cpuEng.AggregateRecord(t.Context(), rec, req)
	require.NoError(t, err)
	baseline, pinned0 := b.MemoryInUse(), pinnedBytes.Load()
	requireWant := func(got []engine.Result, name string) {
		t.Helper()
		require.Len(t, got, len(want), name)
		for i := range want {
			require.Equal(t, want[i].State, got[i].State, "%s: %s", name, want[i].Name) // no floats: bit for bit
		}
	}
	for _, tc := range []struct {
		point  faultPoint
		sticky bool
	}{{faultDeviceAlloc, true}, {faultHostAlloc, true}, {faultLaunch, false}, {faultCopyHtoD, false}, {faultCopyDtoH, false}, {faultSync, false}} {
		name := faultName(tc.point, 2, tc.sticky)
		require.NoError(t, b.Trim())
		warnings = nil
		f := &faults{point: tc.point, nth: 2, sticky: tc.sticky}
		got, err := withFaults(t, b, f, func() ([]engine.Result, error) { return eng.AggregateRecord(t.Context(), rec, req) })
		require.Positive(t, f.injected, name)
		if tc.sticky {
			require.NoError(t, err, name)
			require.Len(t, warnings, 1, name)
			requireWant(got, name)
		} else {
			require.ErrorIs(t, err, faultErrs[tc.point], name)
			require.ErrorContains(t, err, "on the gpu: cuda: ", name)
		}
		got, err = eng.AggregateRecord(t.Context(), rec, req)
		require.NoError(t, err, name)
		requireWant(got, name+" (next)")
		requireBaseline(t, b, baseline, pinned0, name)
	}
}

// TestFaultsGroup injects a driver failure at every point and occurrence of
// a grouping of resident columns (GroupResident): integer values in a
// domain of the wide kernel and in windows of the grouped kernels, float
// values in the exact kernels (the column's scale known from its upload,
// and found again in the call by the scale kernel) and in tables per
// thread. A failure of page-locked memory for the states' copy leaves it
// to Go memory (the same groups); any other fails the call with the
// driver's error. Each leaves no device memory behind, and the next
// grouping gives the CPU's groups.
func TestFaultsGroup(t *testing.T) {
	b, err := Open(WithStreams(2))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(8, 8))
	for _, c := range []struct {
		val      arrow.DataType
		groups   int
		anyScale bool // the call finds the column's scale anew
	}{
		{arrow.PrimitiveTypes.Int64, 5_000, false},
		{arrow.PrimitiveTypes.Int64, 1_000, false},
		{arrow.PrimitiveTypes.Float64, 1_000, false},
		{arrow.PrimitiveTypes.Float64, 1_000, true},
		{arrow.PrimitiveTypes.Float64, 10, false},
	} {
		const n, kmin = 60_000, 100
		name := fmt.Sprintf("%s in %d groups", c.val, c.groups)
		if c.anyScale {
			name += ", the scale found in the call"
		}
		kv, vv, release := groupInputs(t, mem, r, arrow.PrimitiveTypes.Int64, c.val, n, kmin, c.groups)
		kc, err := b.Upload(t.Context(), kv)
		require.NoError(t, err)
		vc, err := b.Upload(t.Context(), vv)
		require.NoError(t, err)
		want := cpuGroups(t, kv, nil, vv, kmin, c.groups)
		require.NoError(t, b.Trim())
		baseline, pinned0 := b.MemoryInUse(), pinnedBytes.Load()
		key := GroupKey{Column: kc, Min: kmin, Groups: c.groups}
		run := func(f *faults) ([]*agg.Groups, error) {
			require.NoError(t, b.Trim()) // every allocation reaches the driver
			if c.anyScale {
				vc.scale = nil
			}
			return withFaults(t, b, f, func() ([]*agg.Groups, error) {
				return b.GroupResident(t.Context(), key, nil, []*DeviceColumn{vc}, 0)
			})
		}
		count := &faults{}
		got, err := run(count)
		require.NoError(t, err, name)
		requireSameGroups(t, kv, nil, vv, kmin, c.groups, want, got[0], name+", fault-free")
		t.Logf("%s: calls %v", name, count.calls)
		require.Positive(t, count.calls[faultDeviceAlloc], name)
		require.Positive(t, count.calls[faultLaunch], name)
		require.Equal(t, c.anyScale, count.calls[faultLaunch] > 1, name) // (one window, or one table; the scale's)
		require.Positive(t, count.calls[faultCopyDtoH], name)
		eachFault(count, func(p faultPoint, nth int, sticky bool) {
			what := name + ": " + faultName(p, nth, sticky)
			f := &faults{point: p, nth: nth, sticky: sticky}
			got, err := run(f)
			require.Positive(t, f.injected, what)
			if p == faultHostAlloc {
				require.NoError(t, err, what)
				requireSameGroups(t, kv, nil, vv, kmin, c.groups, want, got[0], what)
			} else {
				requireFailure(t, err, p, what)
				require.Nil(t, got, what)
			}
			requireIdle(t, b, what)
			again, err := run(nil)
			require.NoError(t, err, what)
			requireSameGroups(t, kv, nil, vv, kmin, c.groups, want, again[0], what+" (next)")
			requireBaseline(t, b, baseline, pinned0, what)
		})
		kc.Free()
		vc.Free()
		release()
	}
}
