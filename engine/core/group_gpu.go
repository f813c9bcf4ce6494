package core

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
)

// Grouping on the GPU: a batch whose one key is an integer of a small range
// (at most the backend's GroupDomain values in the batch) or a dictionary of
// as few values is grouped by the backend's grouped kernels (GroupGPU: the
// key's value less its smallest is the row's group, a block's groups'
// states in shared memory, merged by the last block). The groups' states
// come back and are merged into the grouper's partitions as those of another
// grouper are (mergeGroup), so the result, its order and its merges are the
// same whichever backend grouped a batch; float sums are the GPU's own
// order's, the same bits run after run.

// gpuGroupRows is the fewest rows of a batch grouped on the GPU under
// DeviceAuto: a launch, its transfers and the merge of up to GroupDomain
// groups cost tens of microseconds, a 16-core CPU groups about 10^8 rows a
// second. (A fixed threshold: the planner has no calibrated rate of the
// grouped kernels yet.)
const gpuGroupRows = 1 << 20

// groupGPU is the GPU backend that groups a batch of n rows of keys and
// values (nil: the CPU groups it), with the key's domain: kmin and the
// number of groups, and the key's view as the kernels read it (a
// dictionary's indices).
func (g *Grouper) groupGPU(ctx context.Context, n int, keys, vals []*column.View) (gg backend.GroupGPU, key *column.View, kmin uint64, groups int) {
	e := g.e
	if e.device == DeviceCPU || !e.HasGPU() || len(keys) != 1 || (e.device == DeviceAuto && n < gpuGroupRows) {
		return nil, nil, 0, 0
	}
	gg, ok := e.gpu.(backend.GroupGPU)
	if !ok {
		return nil, nil, 0, 0
	}
	k := keys[0]
	key = k
	if k.Dict != nil {
		// The indices, as a column of their own; groups: the dictionary's
		// entries (equal values of distinct entries merge as one group).
		key = &column.View{Type: k.Type, Kind: k.IndexKind, Len: k.Len, NullCount: k.NullCount, Values: k.Values,
			Offset: k.Offset, Validity: k.Validity, ValidityOffset: k.ValidityOffset}
	}
	for i, v := range vals {
		if v.Dict != nil || !gg.HandlesGroup(key.Kind, v.Kind, g.req.Aggs[i]) {
			return nil, nil, 0, 0
		}
	}
	if len(vals) == 0 && !gg.HandlesGroup(key.Kind, key.Kind, agg.Count) {
		return nil, nil, 0, 0
	}
	if k.Dict != nil {
		if k.Dict.Len < 1 || k.Dict.Len > gg.GroupDomain() {
			return nil, nil, 0, 0
		}
		return gg, key, 0, k.Dict.Len
	}
	f := k.Kind.Family()
	if f != column.FamilySigned && f != column.FamilyUnsigned {
		return nil, nil, 0, 0
	}
	// The key's range, from its minimum and maximum (the CPU's fold).
	st := agg.New(f, agg.Min|agg.Max)
	if err := e.cpu.Update(ctx, []*column.View{k}, []*agg.State{&st}); err != nil || st.Count == 0 {
		return nil, nil, 0, 0
	}
	lo, hi := st.Min[0], st.Max[0]
	span := hi - lo // (two's complement: right for signed keys too)
	if f == column.FamilySigned && int64(hi) < int64(lo) || span >= uint64(gg.GroupDomain()) {
		return nil, nil, 0, 0
	}
	return gg, key, lo, int(span) + 1
}

// addGPU groups a batch of n rows on gg (groupGPU's): it uploads the key,
// the values and the filter's selection, has the device group them, and
// merges the groups' states into the partitions. It returns the rows the
// filter kept.
func (g *Grouper) addGPU(ctx context.Context, gg backend.GroupGPU, n int, kv *column.View, kmin uint64, groups int,
	keys, vals, filters []*column.View) (int64, error) {
	var cols []backend.DeviceColumn
	defer func() {
		for _, c := range cols {
			c.Free()
		}
	}()
	upload := func(v *column.View) (backend.DeviceColumn, error) {
		c, err := gg.UploadView(ctx, v)
		if err == nil {
			cols = append(cols, c)
		}
		return c, err
	}
	keyCol, err := upload(kv)
	if err != nil {
		return 0, err
	}
	kept := int64(n)
	var selCol backend.DeviceColumn
	if g.req.Filter != nil {
		sel, k, err := g.selection(ctx, n, filters)
		if err != nil {
			return 0, err
		}
		kept = k
		if selCol, err = upload(&column.View{Kind: column.Bool, Len: n, Values: sel}); err != nil {
			return 0, err
		}
	}
	// Each value column with its own aggregates (a launch each anyway);
	// without values, the key's counts give the groups' rows.
	states := make([]*agg.Groups, len(vals))
	for i, v := range vals {
		vc, err := upload(v)
		if err != nil {
			return 0, err
		}
		res, err := gg.GroupDevice(ctx, keyCol, kmin, groups, selCol, []backend.DeviceColumn{vc}, g.req.Aggs[i])
		if err != nil {
			return 0, fmt.Errorf("column %q: %w", g.req.Values[i].Name, err)
		}
		states[i] = res[0]
	}
	rows := states
	if len(vals) == 0 {
		if rows, err = gg.GroupDevice(ctx, keyCol, kmin, groups, selCol, []backend.DeviceColumn{keyCol}, agg.Count); err != nil {
			return 0, err
		}
	}
	// The groups' keys, as a batch of groups+1 rows (the last one null),
	// numbered by a table of their own for their encoded keys and hashes.
	kg, err := groupKeys(keys[0], kmin, groups)
	if err != nil {
		return 0, err
	}
	t := cpu.NewKeyTable(g.fixed)
	h := make([]uint64, groups+1)
	x := cpu.Hasher{Fixed: g.fixed}
	if err := x.Hash([]*column.View{kg}, 0, groups+1, h); err != nil {
		return 0, err
	}
	at := make([]int32, groups+1)
	ids := make([]int32, groups+1)
	for i := range at {
		at[i] = int32(i)
	}
	if err := t.Find([]*column.View{kg}, at, h, ids); err != nil {
		return 0, err
	}
	st := make([]agg.State, len(vals))
	for gi := range groups + 1 {
		r := rows[0].State(int32(gi))
		n := r.Count + r.NullCount
		if n == 0 {
			continue
		}
		for i := range vals {
			st[i] = states[i].State(int32(gi))
		}
		if err := g.mergeGroup(t.KeyBytes(ids[gi]), t.Hash(ids[gi]), n, st); err != nil {
			return 0, err
		}
	}
	g.gpuBatches++
	return kept, nil
}

// selection is the filter's selection of a batch of n rows: a bitmap, and
// the rows it keeps, morsel by morsel in parallel.
func (g *Grouper) selection(ctx context.Context, n int, filters []*column.View) ([]byte, int64, error) {
	words := make([]uint64, (n+63)/64)
	morsels := (n + cpu.MorselSize - 1) / cpu.MorselSize
	var kept atomic.Int64
	err := g.e.parallel(ctx, morsels, func(m int, _ *groupScratch) error {
		lo, hi := m*cpu.MorselSize, min(n, (m+1)*cpu.MorselSize)
		k, err := g.req.Filter.Select(filters, lo, hi, words[lo/64:(hi+63)/64])
		kept.Add(int64(k))
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("filter: %w", err)
	}
	b := make([]byte, 8*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	return b[:column.BytesForBits(int64(n))], kept.Load(), nil
}

// groupKeys is the keys of groups kmin+g (g < groups) and the null key, as
// a view of groups+1 rows of key k's type: a dictionary's entries for a
// dictionary key.
func groupKeys(k *column.View, kmin uint64, groups int) (*column.View, error) {
	valid := make([]byte, column.BytesForBits(int64(groups+1)))
	for i := range groups {
		valid[i>>3] |= 1 << (i & 7)
	}
	v := &column.View{Type: k.Type, Kind: k.Kind, Len: groups + 1, NullCount: 1, Validity: valid}
	if k.Dict != nil {
		idx := make([]byte, 4*(groups+1))
		for i := range groups {
			binary.LittleEndian.PutUint32(idx[4*i:], uint32(i))
		}
		v.IndexKind, v.Values, v.Dict = column.Int32, idx, k.Dict
		return v, nil
	}
	w := k.Kind.Width()
	if w <= 0 || w > 8 {
		return nil, fmt.Errorf("grouping keys of %s on the GPU", k.Kind)
	}
	v.Values = make([]byte, w*(groups+1))
	var word [8]byte
	for i := range groups {
		binary.LittleEndian.PutUint64(word[:], kmin+uint64(i))
		copy(v.Values[w*i:], word[:w])
	}
	return v, nil
}
