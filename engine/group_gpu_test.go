package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
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

// fakeGroupGPU is a GPU backend that groups (backend.GroupGPU) as the grouped
// kernels do, with the CPU's fold: a row's group is its key less kmin, a
// null key's the last; rows whose selection is not true are skipped. Its
// domain is small, so that tests meet batches it does not take; floats may
// have a smaller one (floatDomain, when not 0), as the CUDA backend's.
type fakeGroupGPU struct {
	*fakeResidentGPU
	domain, floatDomain int
	calls               atomic.Int64
}

func (f *fakeGroupGPU) GroupDomain(val column.Kind, _ int) int {
	if f.floatDomain > 0 && val.Family() == column.FamilyFloat {
		return f.floatDomain
	}
	return f.domain
}

func (f *fakeGroupGPU) HandlesGroup(key, val column.Kind, set agg.Set) bool {
	integer := func(k column.Kind) bool {
		return k.Family() == column.FamilySigned || k.Family() == column.FamilyUnsigned
	}
	return integer(key) && (integer(val) || val.Family() == column.FamilyFloat) &&
		!agg.Normalize(set).Any(agg.Ordered|agg.Moments|agg.ApproxDistinct)
}

func (f *fakeGroupGPU) GroupDevice(ctx context.Context, key backend.DeviceColumn, kmin uint64, groups int, sel backend.DeviceColumn,
	vals []backend.DeviceColumn, set agg.Set) ([]*agg.Groups, error) {
	f.calls.Add(1)
	if groups < 1 || groups > f.domain {
		return nil, fmt.Errorf("fake device: a domain of %d keys", groups)
	}
	kv := &key.(*fakeDeviceColumn).view
	var sv *column.View
	if sel != nil {
		sv = &sel.(*fakeDeviceColumn).view
	}
	bit := func(b []byte, i int) bool { return b[i>>3]>>(i&7)&1 != 0 }
	w := kv.Kind.Width()
	var rows, ids []int32
	for i := range kv.Len {
		if sv != nil && (!bit(sv.Values, sv.Offset+i) || sv.Validity != nil && !bit(sv.Validity, sv.ValidityOffset+i)) {
			continue
		}
		g := groups
		if kv.Validity == nil || bit(kv.Validity, kv.ValidityOffset+i) {
			var word [8]byte
			copy(word[:], kv.Values[(kv.Offset+i)*w:(kv.Offset+i+1)*w])
			x := binary.LittleEndian.Uint64(word[:])
			if kv.Kind.Family() == column.FamilySigned { // (sign-extended)
				x = uint64(int64(x<<(64-8*w)) >> (64 - 8*w))
			}
			if x-kmin >= uint64(groups) {
				return nil, fmt.Errorf("fake device: key %d outside [%d, %d)", int64(x), int64(kmin), int64(kmin)+int64(groups))
			}
			g = int(x - kmin)
		}
		rows, ids = append(rows, int32(i)), append(ids, int32(g))
	}
	out := make([]*agg.Groups, len(vals))
	for c, v := range vals {
		view := &v.(*fakeDeviceColumn).view
		gs, err := agg.NewGroups(view.Kind.Family(), set)
		if err != nil {
			return nil, err
		}
		gs.Grow(groups + 1)
		if err := cpu.FoldGroups(gs, view, rows, ids); err != nil {
			return nil, err
		}
		out[c] = gs
	}
	return out, nil
}

// A batch whose key has a small range (or is a dictionary of few entries)
// is grouped on the GPU, the others on the CPU, and every result is the
// CPU's: the same groups in the same order, integers exactly, floats
// within 1e-12 relative; with null keys, nulls in values, a filter, a
// dictionary with repeated values, and no value column.
func TestGroupOnGPUMatchesCPU(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(5, 8))
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	cases := []struct {
		name  string
		key   arrow.DataType
		card  int // distinct keys (integer keys: their range)
		where string
		vals  bool
		gpu   bool     // the batches go to the GPU
		fdom  int      // the fake's domain of float values (0: its domain)
		cols  []string // the value columns, when not those vals says
	}{
		{"int32 key", arrow.PrimitiveTypes.Int32, 40, "", true, true, 0, nil},
		{"int64 key, filter", arrow.PrimitiveTypes.Int64, 50, "x > 0 or y is null", true, true, 0, nil},
		{"uint8 key", arrow.PrimitiveTypes.Uint8, 30, "", true, true, 0, nil},
		{"int64 key past the domain", arrow.PrimitiveTypes.Int64, 1000, "", true, false, 0, nil},
		{"dictionary key", dict, 20, "", true, true, 0, nil},
		{"count(*) only", arrow.PrimitiveTypes.Int32, 40, "", false, true, 0, nil},
		{"float values past their domain", arrow.PrimitiveTypes.Int32, 50, "", true, false, 32, nil},
		{"integer values past the floats' domain", arrow.PrimitiveTypes.Int32, 50, "", true, true, 32, []string{"x", "z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fields := []arrow.Field{{Name: "k", Type: c.key, Nullable: true}, {Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
				{Name: "y", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, {Name: "z", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}
			schema := arrow.NewSchema(fields, nil)
			var recs []arrow.Record
			for range 3 {
				recs = append(recs, groupGPURecord(mem, r, schema, 5000+r.IntN(3000), c.card))
			}
			defer func() {
				for _, rec := range recs {
					rec.Release()
				}
			}()
			req := GroupRequest{Keys: []string{"k"}, Aggs: agg.Count | agg.NullCount | agg.Sum | agg.Min | agg.Max | agg.Mean, CountRows: true}
			switch {
			case c.cols != nil:
				req.Columns = c.cols
			case c.vals:
				req.Columns = []string{"x", "y", "z"}
			default:
				req.Columns = []string{}
			}
			if c.where != "" {
				f, err := Where(c.where)
				require.NoError(t, err)
				req.Filter = f
			}
			group := func(e *Engine) (arrow.Record, int) {
				g, err := e.NewGrouper(schema, req)
				require.NoError(t, err)
				for _, rec := range recs {
					require.NoError(t, g.Add(context.Background(), rec))
				}
				res, err := g.Result(mem)
				require.NoError(t, err)
				return res, g.GPUBatches()
			}
			f := &fakeGroupGPU{fakeResidentGPU: newFakeResident(), domain: 64, floatDomain: c.fdom}
			want, _ := group(cpuEngine(t, mem, 2))
			defer want.Release()
			e, err := New(WithGPU(f), WithDevice(DeviceGPU), WithCalibration(splitCalibration()), WithThreads(2), WithAllocator(mem))
			require.NoError(t, err)
			got, batches := group(e)
			defer got.Release()
			if c.gpu {
				require.Equal(t, len(recs), batches, "batches grouped on the GPU")
			} else {
				require.Zero(t, batches, "batches grouped on the GPU")
				require.Zero(t, f.calls.Load())
			}
			requireSameGroups(t, want, got)
			require.Zero(t, f.inUse.Load(), "device columns left")
		})
	}
}

// groupGPURecord is a batch of n rows of schema (k, x int64, y float64, z
// int32): keys of card values (a range of card integers around 0, or card
// dictionary entries of card/2 distinct strings), a tenth of each column
// null.
func groupGPURecord(mem memory.Allocator, r *rand.Rand, schema *arrow.Schema, n, card int) arrow.Record {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	kb := b.Field(0)
	for range n {
		if r.IntN(10) == 0 {
			kb.AppendNull()
			continue
		}
		k := r.IntN(card)
		switch kb := kb.(type) {
		case *array.Int32Builder:
			kb.Append(int32(k - card/2))
		case *array.Int64Builder:
			kb.Append(int64(k) - int64(card/2) + math.MaxInt32)
		case *array.Uint8Builder:
			kb.Append(uint8(k + 7))
		case *array.BinaryDictionaryBuilder:
			if err := kb.AppendString(fmt.Sprintf("s%d", k/2)); err != nil {
				panic(err)
			}
		}
	}
	for range n {
		for c := 1; c < 4; c++ {
			if r.IntN(10) == 0 {
				b.Field(c).AppendNull()
				continue
			}
			switch fb := b.Field(c).(type) {
			case *array.Int64Builder:
				fb.Append(r.Int64N(1<<40) - 1<<39)
			case *array.Float64Builder:
				fb.Append(r.NormFloat64() * 1e3)
			case *array.Int32Builder:
				fb.Append(r.Int32())
			}
		}
	}
	return b.NewRecord()
}

// requireSameGroups compares two results of a grouping: the same schema and
// keys, integers exactly, floats within 1e-12 relative.
func requireSameGroups(t *testing.T, want, got arrow.Record) {
	t.Helper()
	require.True(t, want.Schema().Equal(got.Schema()), "%s\n%s", want.Schema(), got.Schema())
	require.Equal(t, want.NumRows(), got.NumRows())
	for c := range int(want.NumCols()) {
		wc, gc := want.Column(c), got.Column(c)
		name := want.Schema().Field(c).Name
		if wf, ok := wc.(*array.Float64); ok {
			gf := gc.(*array.Float64)
			for i := range wf.Len() {
				require.Equal(t, wf.IsNull(i), gf.IsNull(i), "%s[%d]", name, i)
				if wf.IsValid(i) {
					require.InDelta(t, wf.Value(i), gf.Value(i), 1e-12*math.Max(1, math.Abs(wf.Value(i))), "%s[%d]", name, i)
				}
			}
			continue
		}
		require.True(t, array.Equal(wc, gc), "%s: %v\n%v", name, wc, gc)
	}
}

// Resident data is grouped on the device where the key's range fits the
// domain (found on the device), on the host where it does not, and the
// groups are the CPU's either way; the device columns stay resident.
func TestGroupResidentMatchesCPU(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(9, 2))
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "y", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "z", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	for _, card := range []int{30, 500} {
		t.Run(fmt.Sprintf("%d keys", card), func(t *testing.T) {
			var recs []arrow.Record
			for range 3 {
				recs = append(recs, groupGPURecord(mem, r, schema, 4000+r.IntN(2000), card))
			}
			defer func() {
				for _, rec := range recs {
					rec.Release()
				}
			}()
			where, err := Where("z > 0 or x is null")
			require.NoError(t, err)
			req := GroupRequest{Keys: []string{"k"}, Columns: []string{"x", "y"}, Aggs: agg.Default | agg.Mean, CountRows: true, Filter: where}
			cpuE := cpuEngine(t, mem, 2)
			g, err := cpuE.NewGrouper(schema, req)
			require.NoError(t, err)
			for _, rec := range recs {
				require.NoError(t, g.Add(context.Background(), rec))
			}
			want, err := g.Result(mem)
			require.NoError(t, err)
			defer want.Release()

			f := &fakeGroupGPU{fakeResidentGPU: newFakeResident(), domain: 64}
			// (DeviceGPU: under DeviceAuto columns this small are kept on
			// the host, which aggregates them before a launch returns.)
			e, err := New(WithGPU(f), WithDevice(DeviceGPU), WithCalibration(splitCalibration()), WithThreads(2), WithAllocator(mem))
			require.NoError(t, err)
			resy, err := e.NewResidency(1 << 30)
			require.NoError(t, err)
			defer resy.Close()
			rdr, err := array.NewRecordReader(schema, recs)
			require.NoError(t, err)
			res, err := resy.Upload(context.Background(), rdr)
			rdr.Release()
			require.NoError(t, err)
			defer res.Release()
			require.NoError(t, res.Load(context.Background()))
			uploads := f.uploads.Load()
			for range 2 { // (twice: the columns stay resident)
				gg, err := e.NewGrouper(schema, req)
				require.NoError(t, err)
				require.NoError(t, gg.AddResident(context.Background(), res))
				got, err := gg.Result(mem)
				require.NoError(t, err)
				requireSameGroups(t, want, got)
				got.Release()
				if card <= 64 {
					require.Equal(t, len(recs), gg.GPUBatches())
				} else {
					require.Zero(t, gg.GPUBatches())
				}
			}
			// Only the selections went up (a batch each, once grouped
			// on the device), not the resident columns again.
			if card <= 64 {
				require.Equal(t, uploads+int64(2*len(recs)), f.uploads.Load())
			} else {
				require.Equal(t, uploads, f.uploads.Load())
			}
		})
	}
}
