package core

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
)

// Grouping on the GPU: a batch whose one key is an integer of a dense range
// (at most the backend's GroupDomain values in the batch, for each value
// column) or a dictionary of as few values is grouped by the backend's
// grouped kernels (GroupGPU: the key's value less its smallest is the row's
// group; few groups' states in shared memory, a block's each, merged by the
// last block; many groups' in one table in device memory). The groups' states
// come back and are merged into the grouper's partitions as those of another
// grouper are (mergeGroup), so the result, its order and its merges are the
// same whichever backend grouped a batch; float sums are the GPU's own
// order's, the same bits run after run.

// groupGPU is the GPU backend that groups a batch of rows of keys and
// values (nil: the CPU groups it), with the key's domain: kmin and the
// number of groups, and the key's view as the kernels read it (a
// dictionary's indices).
func (g *Grouper) groupGPU(ctx context.Context, keys, vals []*column.View) (gg backend.GroupGPU, key *column.View, kmin uint64, groups int) {
	var ok bool
	e := g.e
	// Under DeviceAuto a batch in host memory is grouped on the CPU: on the
	// 16-core H100 host, a 100M-row Parquet file grouped by 10 or 1,000
	// keys took 1.10-1.23 s on the CPU and 1.41-1.66 s with every batch
	// uploaded and grouped on the GPU (the device's start-up, about 0.3 s,
	// is the difference: the host decodes the pages either way). Resident
	// data is grouped on the device under DeviceAuto too (AddResident).
	if e.device != DeviceGPU || !e.HasGPU() || len(keys) != 1 {
		return nil, nil, 0, 0
	}
	if gg, ok = e.gpu.(backend.GroupGPU); !ok {
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
	limit := domainLimit(gg, key.Kind, vals, k.Len)
	if k.Dict != nil {
		if k.Dict.Len < 1 || k.Dict.Len > limit {
			return nil, nil, 0, 0
		}
		return gg, key, 0, k.Dict.Len
	}
	// The key's range, from its minimum and maximum (the CPU's fold).
	kmin, groups, ok = keyDomain(limit, k.Kind, func(st *agg.State) error {
		return e.cpu.Update(ctx, []*column.View{k}, []*agg.State{st})
	})
	if !ok {
		return nil, nil, 0, 0
	}
	return gg, key, kmin, groups
}

// domainLimit is the largest key domain gg groups in one call over n rows
// of the values vals (without values, the key's counts: the key's kind).
func domainLimit(gg backend.GroupGPU, key column.Kind, vals []*column.View, n int) int {
	if len(vals) == 0 {
		return gg.GroupDomain(key, n)
	}
	limit := math.MaxInt
	for _, v := range vals {
		limit = min(limit, gg.GroupDomain(v.Kind, n))
	}
	return limit
}

// keyDomain is the domain of an integer key of kind k from its minimum and
// maximum, which fold folds into a state: its smallest value and its number
// of values, and whether it is within limit keys (a key of no valid value
// is left to the CPU).
func keyDomain(limit int, k column.Kind, fold func(*agg.State) error) (kmin uint64, groups int, ok bool) {
	f := k.Family()
	if f != column.FamilySigned && f != column.FamilyUnsigned {
		return 0, 0, false
	}
	st := agg.New(f, agg.Min|agg.Max)
	if err := fold(&st); err != nil || st.Count == 0 {
		return 0, 0, false
	}
	lo, hi := st.Min[0], st.Max[0]
	span := hi - lo // (two's complement: right for signed keys too)
	if f == column.FamilySigned && int64(hi) < int64(lo) || span >= uint64(limit) {
		return 0, 0, false
	}
	return lo, int(span) + 1, true
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
	valCols := make([]backend.DeviceColumn, len(vals))
	for i, v := range vals {
		if valCols[i], err = upload(v); err != nil {
			return 0, err
		}
	}
	return kept, g.groupDevice(ctx, gg, keys[0], keyCol, kmin, groups, selCol, valCols)
}

// groupDevice groups device columns on gg: key (of view kv's rows; for a
// dictionary key its indices) in the domain of groups keys from kmin, the
// values vals of the request's value columns, the rows whose selection sel
// is true (all when nil); it merges the groups' states into the
// partitions.
func (g *Grouper) groupDevice(ctx context.Context, gg backend.GroupGPU, kv *column.View, key backend.DeviceColumn, kmin uint64, groups int,
	sel backend.DeviceColumn, vals []backend.DeviceColumn) error {
	// Each value column with its own aggregates (a launch each anyway);
	// without values, the key's counts give the groups' rows.
	states := make([]*agg.Groups, len(vals))
	for i, v := range vals {
		res, err := gg.GroupDevice(ctx, key, kmin, groups, sel, []backend.DeviceColumn{v}, g.req.Aggs[i])
		if err != nil {
			return fmt.Errorf("column %q: %w", g.req.Values[i].Name, err)
		}
		states[i] = res[0]
	}
	rows := states
	if len(vals) == 0 {
		var err error
		if rows, err = gg.GroupDevice(ctx, key, kmin, groups, sel, []backend.DeviceColumn{key}, agg.Count); err != nil {
			return err
		}
	}
	// The groups' keys, as a batch of groups+1 rows (the last one null),
	// numbered by a table of their own for their encoded keys and hashes.
	kg, err := groupKeys(kv, kmin, groups)
	if err != nil {
		return err
	}
	t := cpu.NewKeyTable(g.fixed)
	h := make([]uint64, groups+1)
	x := cpu.Hasher{Fixed: g.fixed}
	if err := x.Hash([]*column.View{kg}, 0, groups+1, h); err != nil {
		return err
	}
	at := make([]int32, groups+1)
	ids := make([]int32, groups+1)
	for i := range at {
		at[i] = int32(i)
	}
	if err := t.Find([]*column.View{kg}, at, h, ids); err != nil {
		return err
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
			return err
		}
	}
	g.gpuBatches++
	return nil
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

// AddResident groups the rows of resident data res: a batch whose key and
// value columns are on the device, and which the GPU groups (one integer
// key whose range, from the device's own minimum and maximum of it, fits
// the domain; values and aggregates the grouped kernels take), is grouped
// there without a transfer but of the filter's selection; the other
// batches are grouped as Add groups their host views.
func (g *Grouper) AddResident(ctx context.Context, res *Resident) error {
	if err := g.Spent(); err != nil {
		return err
	}
	r := res.r
	if r.e != g.e {
		return errors.New("resident data of another engine's residency")
	}
	call, err := res.begin()
	if err != nil {
		return err
	}
	var pinned []*residentColumn
	defer func() { res.end(pinned) }()
	index := func(cols []Column) ([]int, error) {
		out := make([]int, len(cols))
		for i, c := range cols {
			k, ok := res.index[c.Name]
			if !ok {
				return nil, fmt.Errorf("column %q: not in the resident data", c.Name)
			}
			out[i] = k
		}
		return out, nil
	}
	var idx [3][]int
	for i, cols := range [][]Column{g.req.Keys, g.req.Values, g.req.Filters} {
		if idx[i], err = index(cols); err != nil {
			return err
		}
	}
	for bi := range res.batches {
		b := &res.batches[bi]
		var views [3][]*column.View
		n := -1
		for i, ks := range idx {
			for _, k := range ks {
				v := b.views[k]
				if v == nil {
					return fmt.Errorf("column %q: unsupported in resident data", res.cols[k].Name)
				}
				views[i] = append(views[i], v)
				n = v.Len
			}
		}
		if n < 0 { // (no column at all: the batch's rows are not known)
			return errors.New("grouping resident data by no column")
		}
		done, err := g.addResidentBatch(ctx, b, call, &pinned, n, idx, views)
		if err != nil {
			return err
		}
		if !done {
			if err := g.Add(ctx, n, views[0], views[1], views[2]); err != nil {
				return err
			}
		}
	}
	return nil
}

// addResidentBatch groups resident batch b, of n rows, on the GPU if it
// can (AddResident): idx are the request's key, value and filter columns'
// indices in the batch, views their host views. The columns it uses are
// pinned (appended to pinned) until the call ends.
func (g *Grouper) addResidentBatch(ctx context.Context, b *residentBatch, call int64, pinned *[]*residentColumn, n int,
	idx [3][]int, views [3][]*column.View) (bool, error) {
	e := g.e
	gg, ok := e.gpu.(backend.GroupGPU)
	if !ok || e.device == DeviceCPU || !e.HasGPU() || len(idx[0]) != 1 || views[0][0].Dict != nil {
		return false, nil
	}
	kc := b.dev[idx[0][0]]
	if kc == nil {
		return false, nil
	}
	for i, k := range idx[1] {
		if b.dev[k] == nil || views[1][i].Dict != nil || !gg.HandlesGroup(kc.view.Kind, views[1][i].Kind, g.req.Aggs[i]) {
			return false, nil
		}
	}
	if len(idx[1]) == 0 && !gg.HandlesGroup(kc.view.Kind, kc.view.Kind, agg.Count) {
		return false, nil
	}
	r := kc.owner.r
	acquire := func(c *residentColumn) (backend.DeviceColumn, error) {
		u, err := r.acquire(ctx, c, call)
		if err != nil || u.kind == useHost {
			return nil, err
		}
		*pinned = append(*pinned, c)
		return u.dev, nil
	}
	key, err := acquire(kc)
	if err != nil || key == nil {
		return false, err
	}
	limit := domainLimit(gg, kc.view.Kind, views[1], n)
	kmin, groups, ok := keyDomain(limit, kc.view.Kind, func(st *agg.State) error { return key.Update(ctx, st, 0) })
	if !ok {
		return false, nil
	}
	vals := make([]backend.DeviceColumn, len(idx[1]))
	for i, k := range idx[1] {
		if vals[i], err = acquire(b.dev[k]); err != nil || vals[i] == nil {
			return false, err
		}
	}
	kept := int64(n)
	var sel backend.DeviceColumn
	if g.req.Filter != nil {
		bits, k, err := g.selection(ctx, n, views[2])
		if err != nil {
			return false, err
		}
		kept = k
		if sel, err = gg.UploadView(ctx, &column.View{Kind: column.Bool, Len: n, Values: bits}); err != nil {
			return false, err
		}
		defer sel.Free()
	}
	if err := g.groupDevice(ctx, gg, views[0][0], key, kmin, groups, sel, vals); err != nil {
		return false, fmt.Errorf("grouping on the GPU: %w", err)
	}
	g.rows += int64(n)
	g.kept += kept
	return true, g.afterBatch(ctx)
}
