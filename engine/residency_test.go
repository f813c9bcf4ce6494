package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

// fakeResidentGPU is a GPU backend that keeps "device" columns in host
// memory: copies of the uploaded spans, aggregated with the CPU code. It
// counts uploads, frees and the bytes it holds, and can fail uploads or hold
// an update until released.
type fakeResidentGPU struct {
	fakeGPU
	uploads, frees atomic.Int64
	inUse, peak    atomic.Int64
	failUploads    atomic.Bool
	// hold, when set, is received from by every device update: the update
	// waits until the test sends; entered gets a value first.
	hold, entered chan struct{}
	// delay is added to every device update (nanoseconds).
	delay atomic.Int64
	// holdFree, when set, makes the next Free send to freeEntered, then
	// wait for freeHold (both set with it) before it frees.
	holdFree              atomic.Bool
	freeHold, freeEntered chan struct{}
}

func newFakeResident() *fakeResidentGPU {
	return &fakeResidentGPU{fakeGPU: fakeGPU{cpu: cpu.CPU{Threads: 1}}}
}

// fakeSpan is the byte range of a buffer that elements [off, off+n) of bits
// bits each occupy, and the offset of element off in it.
func fakeSpan(off, n, bits int) (lo, hi, rel int) {
	if bits == 1 {
		return off / 8, (off + n + 7) / 8, off % 8
	}
	w := bits / 8
	return off * w, (off + n) * w, 0
}

func valueBits(v *column.View) int {
	if v.Kind == column.Bool {
		return 1
	}
	return 8 * v.Kind.Width()
}

func (f *fakeResidentGPU) DeviceBytes(v *column.View) int64 {
	lo, hi, _ := fakeSpan(v.Offset, v.Len, valueBits(v))
	n := hi - lo
	if v.Validity != nil {
		lo, hi, _ := fakeSpan(v.ValidityOffset, v.Len, 1)
		n += hi - lo
	}
	return int64(n)
}

func (f *fakeResidentGPU) UploadView(ctx context.Context, v *column.View) (backend.DeviceColumn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f.failUploads.Load() {
		return nil, errors.New("fake device: out of memory")
	}
	if !f.Handles(v) {
		return nil, fmt.Errorf("fake device: no %s columns", v.Type)
	}
	d := &fakeDeviceColumn{f: f, view: *v, bytes: f.DeviceBytes(v)}
	lo, hi, rel := fakeSpan(v.Offset, v.Len, valueBits(v))
	d.view.Values, d.view.Offset = append([]byte(nil), v.Values[lo:hi]...), rel
	if v.Validity != nil {
		lo, hi, rel := fakeSpan(v.ValidityOffset, v.Len, 1)
		d.view.Validity, d.view.ValidityOffset = append([]byte(nil), v.Validity[lo:hi]...), rel
	}
	f.uploads.Add(1)
	n := f.inUse.Add(d.bytes)
	for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
	}
	return d, nil
}

type fakeDeviceColumn struct {
	f     *fakeResidentGPU
	view  column.View
	bytes int64
	freed bool // unguarded: the race detector reports a Free during an Update
}

func (d *fakeDeviceColumn) Update(ctx context.Context, s *agg.State, row int64) error {
	if d.freed {
		return errors.New("fake device: aggregating a freed column")
	}
	if d.f.hold != nil {
		d.f.entered <- struct{}{}
		<-d.f.hold
	}
	time.Sleep(time.Duration(d.f.delay.Load()))
	v := d.view
	v.Row = row
	return d.f.cpu.Update(ctx, []*column.View{&v}, []*agg.State{s})
}

func (d *fakeDeviceColumn) Free() {
	if d.freed {
		return
	}
	if d.f.holdFree.CompareAndSwap(true, false) {
		d.f.freeEntered <- struct{}{}
		<-d.f.freeHold
	}
	d.freed = true
	d.view.Values, d.view.Validity = nil, nil
	d.f.frees.Add(1)
	d.f.inUse.Add(-d.bytes)
}

// residentEngine is an engine on f with the test calibration, forcing the
// GPU (unless device says otherwise) so that host-path columns the fake
// handles go through its Update too.
func residentEngine(t testing.TB, f *fakeResidentGPU, mem memory.Allocator, device Device) *Engine {
	e, err := New(WithGPU(f), WithDevice(device), WithCalibration(splitCalibration()), WithThreads(2), WithAllocator(mem))
	require.NoError(t, err)
	return e
}

// oracleSchema has a column of every type of the property tests.
func oracleSchema() *arrow.Schema {
	fields := make([]arrow.Field, len(oracleTypes))
	for i, dt := range oracleTypes {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: dt, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// oracleRecord makes a record batch of schema with n random rows, every
// column a slice at an odd offset (bit offsets in bitmaps).
func oracleRecord(mem memory.Allocator, r *rand.Rand, schema *arrow.Schema, n int) arrow.Record {
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		off := 1 + r.IntN(13)
		parent := randArray(mem, r, f.Type, off+n, 0.2)
		cols[i] = array.NewSlice(parent, int64(off), int64(off+n))
		parent.Release()
	}
	rec := array.NewRecord(schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// int64Record is a record batch of one int64 column "x" of n values.
func int64Record(mem memory.Allocator, r *rand.Rand, n int) arrow.Record {
	arr := randArray(mem, r, arrow.PrimitiveTypes.Int64, n, 0)
	defer arr.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return array.NewRecord(schema, []arrow.Array{arr}, int64(n))
}

// requireSameResults checks that two aggregations agree exactly: states and
// every scalar.
func requireSameResults(t testing.TB, want, got []Result, msg string) {
	t.Helper()
	if d := resultsDiff(want, got); d != "" {
		require.Fail(t, msg, d)
	}
}

// resultsDiff is requireSameResults' check for any goroutine: "" when the
// aggregations agree, else how they differ.
func resultsDiff(want, got []Result) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d results, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		switch {
		case w.Name != g.Name:
			return fmt.Sprintf("column %d is %q, want %q", i, g.Name, w.Name)
		case w.Err != nil || g.Err != nil:
			if fmt.Sprint(w.Err) != fmt.Sprint(g.Err) {
				return fmt.Sprintf("column %s: error %v, want %v", w.Name, g.Err, w.Err)
			}
			continue
		}
		if ws, gs := fmt.Sprint(w.State), fmt.Sprint(g.State); ws != gs {
			return fmt.Sprintf("column %s: state %s, want %s", w.Name, gs, ws)
		}
		ws := fmt.Sprint(w.Count, w.NullCount, w.Sum, w.Min, w.Max, w.Mean, w.First, w.Last, w.ArgMin, w.ArgMax)
		gs := fmt.Sprint(g.Count, g.NullCount, g.Sum, g.Min, g.Max, g.Mean, g.First, g.Last, g.ArgMin, g.ArgMax)
		if ws != gs {
			return fmt.Sprintf("column %s: %s, want %s", w.Name, gs, ws)
		}
	}
	return ""
}

// fakeHandles reports whether the fake GPU takes columns of type dt.
func fakeHandles(dt arrow.DataType) bool {
	if _, ok := dt.(*arrow.DictionaryType); ok {
		return false
	}
	k, err := arrow17.KindOf(dt)
	return err == nil && k.Family() != column.FamilyBytes
}

// TestResidencyMatchesEngine: resident tables and records of every type
// family give exactly the CPU engine's results (ordered aggregates with rows
// across batches included), call after call; the plan shows the resident
// columns on the device and the others on the host.
func TestResidencyMatchesEngine(t *testing.T) {
	r, seed := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	f := newFakeResident()
	e := residentEngine(t, f, mem, DeviceGPU)
	cpu := cpuEngine(t, mem, 2)
	rz, err := e.NewResidency(1 << 30)
	require.NoError(t, err)

	schema := oracleSchema()
	var recs []arrow.Record
	for _, n := range []int{70_001, 5, 130_017} {
		recs = append(recs, oracleRecord(mem, r, schema, n))
	}
	tbl := array.NewTableFromRecords(schema, recs)
	res, err := rz.UploadTable(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, tbl.NumRows(), res.Rows())
	handled := 0
	for _, dt := range oracleTypes {
		if fakeHandles(dt) {
			handled++
		}
	}
	chunks := int64(handled * len(recs))
	require.Equal(t, chunks, f.uploads.Load(), "every chunk the GPU handles is uploaded once")
	require.Equal(t, f.inUse.Load(), rz.Stats().Resident)

	all := Request{Aggs: agg.Default | agg.Ordered}
	want, err := cpu.AggregateTable(ctx, tbl, all)
	require.NoError(t, err)
	for call := 1; call <= 2; call++ {
		got, plan, err := res.Aggregate(ctx, all)
		require.NoError(t, err)
		msg := fmt.Sprintf("call %d seed %d", call, seed)
		requireSameResults(t, want, got, msg)
		for i, dt := range oracleTypes {
			p := plan[i]
			if fakeHandles(dt) {
				require.Equal(t, "device", p.LocationName(), "%s %s", msg, dt)
				require.Equal(t, "gpu", p.BackendName(), msg)
				ago := "1 call ago"
				if call == 2 {
					ago = "2 calls ago"
				}
				require.Contains(t, p.Reason, "resident on the GPU (uploaded "+ago+")", msg)
				require.Contains(t, p.Reason, "read at 1000 GB/s", msg)
				require.Positive(t, p.Estimated, msg)
			} else {
				require.Equal(t, "host", p.LocationName(), "%s %s", msg, dt)
				require.Equal(t, "cpu", p.BackendName(), msg)
				require.Contains(t, p.Reason, "does not handle", msg)
			}
			require.Positive(t, p.Bytes, msg)
		}
	}
	require.Equal(t, chunks, f.uploads.Load(), "nothing uploaded again")

	// A subset of the columns, and an accumulator with rows before the
	// resident ones: rows of the ordered aggregates move with them.
	sub := Request{Columns: []string{"c17", "c3", "c9", "c18"}, Aggs: agg.Sum | agg.ArgMax | agg.First}
	want, err = cpu.AggregateTable(ctx, tbl, sub)
	require.NoError(t, err)
	got, _, err := res.Aggregate(ctx, sub)
	require.NoError(t, err)
	requireSameResults(t, want, got, "subset")

	head := oracleRecord(mem, r, schema, 1001)
	defer head.Release()
	wantAcc, err := cpu.NewAccumulator(schema, all)
	require.NoError(t, err)
	require.NoError(t, wantAcc.Add(ctx, head))
	for _, rec := range recs {
		require.NoError(t, wantAcc.Add(ctx, rec))
	}
	require.NoError(t, wantAcc.Add(ctx, head))
	acc, err := e.NewAccumulator(schema, all)
	require.NoError(t, err)
	require.NoError(t, acc.Add(ctx, head))
	require.NoError(t, acc.AddResident(ctx, res))
	require.NoError(t, acc.Add(ctx, head))
	require.Equal(t, wantAcc.Rows(), acc.Rows())
	requireSameResults(t, wantAcc.Results(), acc.Results(), "accumulator with rows before and after")

	st := rz.Stats()
	require.Equal(t, ResidencyStats{Budget: 1 << 30, Resident: f.inUse.Load(), Columns: int(chunks), Uploads: chunks,
		Hits: 3*chunks + int64(3*len(recs)) /* c3, c9, c17 */}, st)

	// Struct leaves (nulls of the structs folded in), a list and a union.
	nested := nestedRecord(t, mem)
	defer nested.Release()
	nres, err := rz.UploadRecord(ctx, nested)
	require.NoError(t, err)
	want, err = cpu.AggregateRecord(ctx, nested, all)
	require.NoError(t, err)
	got, plan, err := nres.Aggregate(ctx, all)
	require.NoError(t, err)
	requireSameResults(t, want, got, "nested")
	require.Equal(t, "device", plan[0].LocationName())
	require.Equal(t, "host", plan[2].LocationName(), "a list is counted on the CPU")
	require.Equal(t, "host", plan[4].LocationName(), "a union is counted on the CPU")

	tbl.Release()
	for _, rec := range recs {
		rec.Release()
	}
	res.Release()
	nres.Release()
	require.Zero(t, f.inUse.Load(), "releasing frees the device columns")
	require.Equal(t, f.uploads.Load(), f.frees.Load())
	require.Equal(t, ResidencyStats{Budget: 1 << 30, Uploads: st.Uploads + 2, Hits: st.Hits + 2}, rz.Stats())
	require.NoError(t, rz.Close())
	require.NoError(t, rz.Close(), "second Close")
}

// TestResidencyEvictsLeastRecentlyUsed: uploads beyond the budget evict the
// columns used least recently; an evicted column is uploaded again at its
// next use and says so; a column larger than the budget is never uploaded.
func TestResidencyEvictsLeastRecentlyUsed(t *testing.T) {
	r, _ := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	f := newFakeResident()
	e := residentEngine(t, f, mem, DeviceGPU)
	cpu := cpuEngine(t, mem, 1)
	const n = 1000 // 8000 bytes on the device
	rz, err := e.NewResidency(2*8*n + 100)
	require.NoError(t, err)
	defer func() { require.NoError(t, rz.Close()) }()

	upload := func() (arrow.Record, *Resident) {
		rec := int64Record(mem, r, n)
		res, err := rz.UploadRecord(ctx, rec)
		require.NoError(t, err)
		return rec, res
	}
	check := func(rec arrow.Record, res *Resident, reason string) {
		t.Helper()
		req := Request{Aggs: agg.Default | agg.Ordered}
		want, err := cpu.AggregateRecord(ctx, rec, req)
		require.NoError(t, err)
		got, plan, err := res.Aggregate(ctx, req)
		require.NoError(t, err)
		requireSameResults(t, want, got, reason)
		require.Contains(t, plan[0].Reason, reason)
	}
	recA, a := upload()
	recB, b := upload()
	require.Equal(t, ResidencyStats{Budget: rz.Stats().Budget, Resident: 16000, Columns: 2, Uploads: 2}, rz.Stats())
	recC, c := upload() // evicts A
	require.Equal(t, int64(1), f.frees.Load())
	require.Equal(t, ResidencyStats{Budget: rz.Stats().Budget, Resident: 16000, Columns: 2, Uploads: 3, Evictions: 1}, rz.Stats())

	check(recB, b, "resident on the GPU (uploaded 1 call ago)") // B is now the most recently used
	check(recA, a, "evicted: uploaded again")                   // evicts C, the least recently used
	check(recB, b, "resident on the GPU (uploaded 2 calls ago)")
	check(recC, c, "evicted: uploaded again") // evicts A
	check(recA, a, "evicted: uploaded again") // evicts B
	check(recC, c, "resident on the GPU (uploaded 1 call ago)")
	require.Equal(t, ResidencyStats{Budget: rz.Stats().Budget, Resident: 16000, Columns: 2, Uploads: 6, Reuploads: 3,
		Evictions: 4, Hits: 3}, rz.Stats())
	require.Equal(t, int64(16000), f.inUse.Load())
	require.LessOrEqual(t, f.peak.Load(), rz.Stats().Budget)

	// Larger than the whole budget: aggregated through the host path.
	big := int64Record(mem, r, 3*n)
	bigRes, err := rz.UploadRecord(ctx, big)
	require.NoError(t, err)
	require.Equal(t, int64(6), f.uploads.Load(), "never uploaded")
	check(big, bigRes, "not resident: 23.4 KiB on the device is more than the budget of 15.7 KiB")
	require.Equal(t, int64(1), rz.Stats().HostUses)

	for _, x := range []*Resident{a, b, c, bigRes} {
		x.Release()
	}
	for _, rec := range []arrow.Record{recA, recB, recC, big} {
		rec.Release()
	}
	require.Zero(t, f.inUse.Load())
	require.Equal(t, f.uploads.Load(), f.frees.Load())
}

// TestResidencyCountsFreesInProgress: a column taken off the books is
// freed outside the residency's lock; until the free ends its bytes still
// count against the budget, so an upload meanwhile evicts other columns (or
// waits) rather than exceed the budget.
func TestResidencyCountsFreesInProgress(t *testing.T) {
	r, _ := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	f := newFakeResident()
	e := residentEngine(t, f, mem, DeviceGPU)
	const n = 1000 // 8,000 bytes a column
	rz, err := e.NewResidency(2 * 8 * n)
	require.NoError(t, err)
	defer rz.Close()
	var recs []arrow.Record
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	upload := func() *Resident {
		rec := int64Record(mem, r, n)
		recs = append(recs, rec)
		res, err := rz.UploadRecord(ctx, rec)
		require.NoError(t, err)
		return res
	}
	a, b := upload(), upload()
	require.Equal(t, int64(16000), f.peak.Load())

	// B's release frees its column, held in the free.
	f.freeHold, f.freeEntered = make(chan struct{}), make(chan struct{})
	f.holdFree.Store(true)
	released := make(chan struct{})
	go func() { b.Release(); close(released) }()
	<-f.freeEntered
	require.Equal(t, int64(16000), rz.Stats().Resident, "B's bytes are being freed")

	c := upload() // evicts A: B's bytes are still on the device
	require.Equal(t, int64(1), rz.Stats().Evictions)
	require.Equal(t, int64(16000), f.peak.Load(), "B (being freed) and C, not A, B and C")
	close(f.freeHold)
	<-released
	require.Equal(t, int64(8000), rz.Stats().Resident)
	require.Equal(t, f.inUse.Load(), rz.Stats().Resident)

	// With every other column pinned or being freed, the upload waits for
	// the free to end.
	f.freeHold, f.freeEntered = make(chan struct{}), make(chan struct{})
	f.holdFree.Store(true)
	released = make(chan struct{})
	go func() { c.Release(); close(released) }()
	<-f.freeEntered
	uploaded := make(chan *Resident)
	go func() {
		rec := int64Record(mem, r, 2*n)
		recs = append(recs, rec)
		res, err := rz.UploadRecord(ctx, rec)
		assert.NoError(t, err)
		uploaded <- res
	}()
	select {
	case <-uploaded:
		t.Fatal("an upload of the whole budget did not wait for the free in progress")
	case <-time.After(50 * time.Millisecond):
	}
	close(f.freeHold)
	<-released
	d := <-uploaded
	require.Equal(t, int64(16000), f.inUse.Load())
	require.Equal(t, int64(16000), f.peak.Load())
	for _, x := range []*Resident{a, d} {
		x.Release()
	}
	require.Zero(t, f.inUse.Load())
	require.Equal(t, f.uploads.Load(), f.frees.Load())
}

// TestResidencyKeepsColumnsInUse: a record larger than the budget keeps the
// columns that fit resident and aggregates the others on the host, call
// after call, without evicting its own columns (no thrashing); other data
// evicts its columns only between calls.
func TestResidencyKeepsColumnsInUse(t *testing.T) {
	r, _ := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	f := newFakeResident()
	e := residentEngine(t, f, mem, DeviceGPU)
	cpu := cpuEngine(t, mem, 1)
	const n = 1000
	rz, err := e.NewResidency(2 * 8 * n)
	require.NoError(t, err)
	defer func() { require.NoError(t, rz.Close()) }()

	cols := make([]arrow.Array, 3)
	fields := make([]arrow.Field, 3)
	for i := range cols {
		cols[i] = randArray(mem, r, arrow.PrimitiveTypes.Int64, n, 0)
		defer cols[i].Release()
		fields[i] = arrow.Field{Name: fmt.Sprintf("x%d", i), Type: arrow.PrimitiveTypes.Int64}
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), cols, n)
	defer rec.Release()
	res, err := rz.UploadRecord(ctx, rec)
	require.NoError(t, err)
	defer res.Release()
	require.Equal(t, int64(2), f.uploads.Load(), "the third column finds the budget held by the first two")
	want, err := cpu.AggregateRecord(ctx, rec, Request{})
	require.NoError(t, err)
	for call := 0; call < 3; call++ {
		got, plan, err := res.Aggregate(ctx, Request{})
		require.NoError(t, err)
		requireSameResults(t, want, got, "record larger than the budget")
		require.Equal(t, []string{"device", "device", "host"}, []string{plan[0].LocationName(), plan[1].LocationName(), plan[2].LocationName()})
		require.Contains(t, plan[2].Reason, "not resident: no room for 7.8 KiB in the budget of 15.6 KiB, held by columns in use")
		require.Equal(t, "gpu", plan[2].BackendName(), "the host path (forced to the GPU here)")
	}
	require.Equal(t, int64(2), f.uploads.Load(), "no thrashing")
	require.Equal(t, int64(3), rz.Stats().HostUses)

	// Another record evicts the least recently used column between calls;
	// the next call uploads it again and keeps the other two resident.
	other := int64Record(mem, r, n)
	defer other.Release()
	ores, err := rz.UploadRecord(ctx, other)
	require.NoError(t, err)
	defer ores.Release()
	require.Equal(t, int64(1), rz.Stats().Evictions)
	got, plan, err := res.Aggregate(ctx, Request{})
	require.NoError(t, err)
	requireSameResults(t, want, got, "after an eviction")
	require.Contains(t, plan[0].Reason, "evicted: uploaded again", "evicting the other record's column")
	require.Contains(t, plan[1].Reason, "resident on the GPU", "not evicted for the column before it")
	require.Equal(t, "host", plan[2].LocationName())
	require.Equal(t, int64(2), rz.Stats().Evictions)
}

// TestResidencyConcurrent: 32 goroutines aggregate, upload and release data
// that does not fit the budget at once: every result is exact, the budget
// is never exceeded, no column is freed while in use (the fake's unguarded
// flag makes that a data race), and everything is freed in the end.
func TestResidencyConcurrent(t *testing.T) {
	r, seed := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	f := newFakeResident()
	e := residentEngine(t, f, mem, DeviceGPU)
	cpu := cpuEngine(t, mem, 2)

	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Boolean,
		&arrow.Decimal128Type{Precision: 38, Scale: 3}, arrow.PrimitiveTypes.Uint16, arrow.BinaryTypes.String}
	fields := make([]arrow.Field, len(types))
	for i, dt := range types {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: dt, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	all := Request{Aggs: agg.Default | agg.Ordered}
	recs := make([]arrow.Record, 6)
	want := make([][]Result, len(recs))
	var total int64
	for i := range recs {
		recs[i] = oracleRecord(mem, r, schema, 20_000+i*977)
		want[i], _ = cpu.AggregateRecord(ctx, recs[i], all)
		for j := range types[:5] {
			v, err := arrow17.ViewOf(recs[i].Column(j))
			require.NoError(t, err)
			total += f.DeviceBytes(&v)
		}
	}
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	rz, err := e.NewResidency(total / 3)
	require.NoError(t, err)
	res := make([]*Resident, len(recs))
	defer func() { // a failure leaks nothing more than it reports
		for _, x := range res {
			if x != nil {
				x.Release()
			}
		}
		rz.Close()
	}()
	for i, rec := range recs {
		res[i], err = rz.UploadRecord(ctx, rec)
		require.NoError(t, err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; k < 6; k++ {
				i := (g*7 + k) % len(recs)
				x := res[i]
				if g%4 == 0 { // a fresh upload of its own, released after use
					var err error
					if x, err = rz.UploadRecord(ctx, recs[i]); err != nil {
						errs <- err
						return
					}
				} else {
					x.Retain()
				}
				got, _, err := x.Aggregate(ctx, all)
				x.Release()
				if err != nil {
					errs <- err
					return
				}
				for c := range got {
					if fmt.Sprint(got[c].State) != fmt.Sprint(want[i][c].State) {
						errs <- fmt.Errorf("goroutine %d record %d column %s: state differs (seed %d)", g, i, got[c].Name, seed)
						return
					}
				}
				_ = rz.Stats()
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	st := rz.Stats()
	require.Positive(t, st.Evictions)
	require.Positive(t, st.Hits)
	require.Equal(t, f.inUse.Load(), st.Resident)
	require.LessOrEqual(t, f.peak.Load(), rz.Stats().Budget)
	require.Equal(t, st.Uploads, f.uploads.Load())
	require.LessOrEqual(t, st.Reuploads, st.Uploads)

	for i, x := range res {
		x.Release()
		res[i] = nil
	}
	require.NoError(t, rz.Close())
	require.Zero(t, f.inUse.Load())
	require.Equal(t, f.uploads.Load(), f.frees.Load())
}

// TestResidencyLifecycle: who can make a Residency; Close frees the device
// memory at once, except columns a call is using, which go when it ends;
// Release releases the record batches; use after either is an error.
func TestResidencyLifecycle(t *testing.T) {
	r, _ := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()

	_, err := cpuEngine(t, mem, 1).NewResidency(1 << 20)
	require.ErrorIs(t, err, backend.ErrNoGPU)
	plain, err := New(WithGPU(&fakeGPU{}), WithCalibration(splitCalibration()))
	require.NoError(t, err)
	_, err = plain.NewResidency(1 << 20)
	require.ErrorIs(t, err, backend.ErrNoGPU, "a GPU backend without resident columns")
	f := newFakeResident()
	e := residentEngine(t, f, mem, DeviceGPU)
	_, err = e.NewResidency(0)
	require.ErrorContains(t, err, "positive")

	rz, err := e.NewResidency(1 << 20)
	require.NoError(t, err)
	rec := int64Record(mem, r, 5000)
	defer rec.Release()
	a, err := rz.UploadRecord(ctx, rec)
	require.NoError(t, err)
	b, err := rz.UploadRecord(ctx, rec)
	require.NoError(t, err)
	require.Equal(t, int64(80000), f.inUse.Load())

	// Close while a call uses b's column: a's goes at once, b's when the
	// call ends; the call's result is right.
	f.hold, f.entered = make(chan struct{}), make(chan struct{})
	done := make(chan error)
	var got []Result
	go func() {
		var err error
		got, _, err = b.Aggregate(ctx, Request{})
		done <- err
	}()
	<-f.entered
	require.NoError(t, rz.Close())
	require.Equal(t, int64(40000), f.inUse.Load(), "the column in use stays")
	f.hold <- struct{}{}
	require.NoError(t, <-done)
	f.hold = nil
	want, err := cpuEngine(t, mem, 1).AggregateRecord(ctx, rec, Request{})
	require.NoError(t, err)
	requireSameResults(t, want, got, "aggregated across Close")
	require.Zero(t, f.inUse.Load())
	require.Equal(t, int64(2), f.frees.Load())

	_, _, err = a.Aggregate(ctx, Request{})
	require.ErrorIs(t, err, ErrResidencyClosed)
	_, err = rz.UploadRecord(ctx, rec)
	require.ErrorIs(t, err, ErrResidencyClosed)
	require.Zero(t, rz.Stats().Resident)

	a.Release()
	b.Retain()
	b.Release()
	b.Release()
	b.Release() // one too many: nothing happens
	_, _, err = b.Aggregate(ctx, Request{})
	require.ErrorContains(t, err, "released")
	require.Equal(t, int64(2), f.frees.Load())

	// Data of another engine is refused.
	rz2, err := e.NewResidency(1 << 20)
	require.NoError(t, err)
	defer rz2.Close()
	c, err := rz2.UploadRecord(ctx, rec)
	require.NoError(t, err)
	defer c.Release()
	e2 := residentEngine(t, newFakeResident(), mem, DeviceGPU)
	acc, err := e2.NewAccumulator(rec.Schema(), Request{})
	require.NoError(t, err)
	require.ErrorContains(t, acc.AddResident(ctx, c), "another engine")
	other, err := e.NewAccumulator(arrow.NewSchema([]arrow.Field{{Name: "y", Type: arrow.PrimitiveTypes.Int64}}, nil), Request{})
	require.NoError(t, err)
	require.ErrorContains(t, other.AddResident(ctx, c), "does not match")
}

// TestResidencyHostFallbacks: failed uploads and columns too small to gain
// from the GPU are aggregated on the host with the reason in the plan; a
// cancelled upload leaks nothing.
func TestResidencyHostFallbacks(t *testing.T) {
	r, _ := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	rec := int64Record(mem, r, 5000)
	defer rec.Release()
	want, err := cpuEngine(t, mem, 1).AggregateRecord(ctx, rec, Request{})
	require.NoError(t, err)

	f := newFakeResident()
	e := residentEngine(t, f, mem, DeviceGPU)
	rz, err := e.NewResidency(1 << 20)
	require.NoError(t, err)
	defer rz.Close()
	f.failUploads.Store(true)
	res, err := rz.UploadRecord(ctx, rec)
	require.NoError(t, err, "a failed upload leaves the column on the host")
	defer res.Release()
	got, plan, err := res.Aggregate(ctx, Request{})
	require.NoError(t, err)
	requireSameResults(t, want, got, "failed upload")
	require.Equal(t, "host", plan[0].LocationName())
	require.Contains(t, plan[0].Reason, "not resident: the upload failed (fake device: out of memory); gpu forced")
	f.failUploads.Store(false)
	got, plan, err = res.Aggregate(ctx, Request{})
	require.NoError(t, err)
	requireSameResults(t, want, got, "upload at use")
	require.Equal(t, "device", plan[0].LocationName())
	require.Contains(t, plan[0].Reason, "uploaded now, resident on the GPU from now on")
	require.Zero(t, rz.Stats().Resident-f.inUse.Load())

	inUse, uploads := f.inUse.Load(), f.uploads.Load()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = rz.UploadRecord(cancelled, rec)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, inUse, f.inUse.Load())
	require.Equal(t, uploads, f.uploads.Load())
	require.Equal(t, inUse, rz.Stats().Resident)

	// The planner's rule on auto: the CPU is done before a launch returns.
	slow := splitCalibration()
	slow.Launch = 10 * time.Millisecond
	fa := newFakeResident()
	ea, err := New(WithGPU(fa), WithCalibration(slow), WithAllocator(mem))
	require.NoError(t, err)
	rza, err := ea.NewResidency(1 << 20)
	require.NoError(t, err)
	defer rza.Close()
	small, err := rza.UploadRecord(ctx, rec)
	require.NoError(t, err)
	defer small.Release()
	got, plan, err = small.Aggregate(ctx, Request{})
	require.NoError(t, err)
	requireSameResults(t, want, got, "small column")
	require.Zero(t, fa.uploads.Load())
	require.Equal(t, "cpu", plan[0].BackendName())
	require.Contains(t, plan[0].Reason, "not resident: the CPU is done before a GPU launch returns")
}
