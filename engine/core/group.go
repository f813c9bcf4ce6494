package core

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/filter"
)

// Grouped aggregation (GROUP BY) and filters (WHERE), on the CPU.
//
// A batch is folded in two parallel phases. First its rows are cut into
// morsels (cpu.MorselSize), and for each morsel the filter selects rows,
// their keys are hashed (cpu.Hasher) and the selected rows are sorted by
// partition (the hash's top bits: groupPartitions of them). Then each
// partition, a task of its own, looks its rows' keys up in its own table
// (cpu.KeyTable), morsel after morsel in row order, and folds their values
// into its groups' states (agg.Groups, cpu.FoldGroups). A group lives in
// one partition, whose rows it sees in row order whatever the number of
// threads: every result, float sums included, is the same for every
// thread count. Partitions persist across batches, so that a stream of
// batches, files and row groups groups as one table.
//
// A batch whose first rows hold few distinct keys (fewKeys) is instead
// pre-aggregated morsel by morsel, each morsel in a table of its own
// (localMorsels), and the morsels' groups are merged into the partitions'
// in morsel order (mergeLocal). The first is Prepare, which depends on the
// batch alone and may run ahead, several batches at once; the second is
// Commit, batch after batch in row order.

// groupPartitions is the number of partitions of the keys' hash space.
const groupPartitions = 64

// Filter selects the rows of a batch that a request keeps: a predicate
// bound to the request's filter columns. It is called from several
// goroutines at once, on distinct row ranges.
type Filter interface {
	// Select sets bit i-lo of out for each row i in [lo, hi) of views
	// (the filter columns' views of the batch) that it keeps, clears the
	// others, and returns how many it keeps.
	Select(views []*column.View, lo, hi int, out []uint64) (int, error)
}

// GroupRequest is a grouped aggregation: the key columns (none: one group
// of every row kept, SQL's aggregate without GROUP BY), the value columns
// with the aggregates of each, and an optional filter over its own
// columns.
type GroupRequest struct {
	Keys    []Column
	Values  []Column
	Aggs    []agg.Set // per value column (Normalize: the default when empty)
	Filters []Column  // the columns Filter reads
	Filter  Filter    // nil: every row
	// MemoryLimit bounds the memory of the groups (their keys and
	// states; 0: none): after a batch that leaves them holding more, they
	// spill to SpillDir (group_spill.go), or without one the batch is an
	// error (*GroupMemoryError).
	MemoryLimit     int64
	MemoryLimitName string
	// SpillDir is the directory of the spill files ("": no spilling).
	SpillDir string
}

// GroupMemoryError is the error of a grouping whose groups outgrow its
// memory limit.
type GroupMemoryError struct {
	Groups    int
	Bytes     int64
	Limit     int64
	LimitName string // the limit's name for the user ("--memory")
}

func (e *GroupMemoryError) Error() string {
	return fmt.Sprintf("%d groups take %d MiB, over the %d MiB of %s, and no spill directory is set: raise %s or set one",
		e.Groups, e.Bytes>>20, e.Limit>>20, e.LimitName, e.LimitName)
}

// Bytes is about the memory the groups hold: their tables of keys and
// their states.
func (g *Grouper) Bytes() int64 {
	var n int64
	for _, gp := range g.parts {
		n += gp.t.Bytes() + int64(cap(gp.rows))*8
		for _, gs := range gp.groups {
			n += gs.Bytes()
		}
	}
	return n
}

// Grouper folds batches of rows into the groups of a GroupRequest. It is not
// safe for concurrent use; the Engine behind it is.
type Grouper struct {
	e     *Engine
	req   GroupRequest
	fixed bool
	parts []*groupPart
	rows  int64 // rows added so far
	kept  int64 // rows the filter kept
	ms    []morselRows
	// gpuBatches are the batches grouped on the GPU (group_gpu.go).
	gpuBatches int
	sp         *spillFiles // nil: never spilled (group_spill.go)
	dropped    atomic.Bool // some partition's states dropped (DropStates, on any goroutine)
	closed     atomic.Bool // Close was called
}

// GPUBatches is the number of batches grouped on the GPU so far.
func (g *Grouper) GPUBatches() int { return g.gpuBatches }

// groupPart is one partition: its table of keys and its groups' states, one
// agg.Groups per value column.
type groupPart struct {
	t      *cpu.KeyTable
	rows   []int64 // per group: its rows (count(*))
	groups []*agg.Groups
	mem    *column.Arena // rows, when large (column.Arena)
}

// growRows adds d groups of no row to gp.rows.
func (gp *groupPart) growRows(d int) {
	n := len(gp.rows)
	gp.rows = column.Grow(gp.mem, gp.rows, d)[:n+d]
	clear(gp.rows[n:])
}

// NewGrouper starts a grouped aggregation. The keys take the table's fast
// path when there is one key of a one-word kind (cpu.FixedKey).
func (e *Engine) NewGrouper(req GroupRequest) (*Grouper, error) {
	if len(req.Aggs) != len(req.Values) {
		return nil, fmt.Errorf("%d aggregate sets for %d value columns", len(req.Aggs), len(req.Values))
	}
	if req.Filter != nil && len(req.Filters) == 0 {
		req.Filters = nil
	}
	for _, k := range req.Keys {
		if k.Err != nil {
			return nil, fmt.Errorf("key column %q: %w", k.Name, k.Err)
		}
		if !cpu.KeyKindSupported(k.Kind) {
			return nil, fmt.Errorf("key column %q: grouping by %s is unsupported", k.Name, k.Type)
		}
	}
	for i, v := range req.Values {
		if v.Err != nil {
			return nil, fmt.Errorf("column %q: %w", v.Name, v.Err)
		}
		if _, err := agg.NewGroups(v.Kind.Family(), req.Aggs[i]); err != nil {
			return nil, fmt.Errorf("column %q: %w", v.Name, err)
		}
	}
	g := &Grouper{e: e, req: req, parts: make([]*groupPart, groupPartitions)}
	g.fixed = len(req.Keys) == 1 && cpu.FixedKey([]*column.View{{Kind: req.Keys[0].Kind}})
	for p := range g.parts {
		g.parts[p] = g.newPart()
	}
	return g, nil
}

// Request is the grouper's request.
func (g *Grouper) Request() GroupRequest { return g.req }

// Rows is the number of rows added (or skipped: SkipRows) so far, and Kept
// those the filter kept.
func (g *Grouper) Rows() int64 { return g.rows }

// SkipRows counts n rows of the input that are not added because no filter
// keeps them (rows whose statistics exclude the filter, say): the rows
// added next are numbered after them, as the rows of first, last, arg_min
// and arg_max are those of the input.
func (g *Grouper) SkipRows(n int64) { g.rows += n }

// Kept is the number of rows the filter kept so far (every row without a
// filter).
func (g *Grouper) Kept() int64 { return g.kept }

// morselRows is one morsel's selected rows sorted by partition: the rows of
// partition p are rows[off[p]:off[p+1]], with their hashes.
type morselRows struct {
	rows   []int32
	hashes []uint64
	off    [groupPartitions + 1]int32
}

// Add folds one batch of n rows: keys, values and filters are the views of
// the request's key, value and filter columns over the batch's rows (their
// Row counted from the batch's first row). It is Prepare, then Commit.
func (g *Grouper) Add(ctx context.Context, n int, keys, values, filters []*column.View) error {
	p, err := g.Prepare(ctx, n, keys, values, filters)
	if err != nil {
		return err
	}
	return g.Commit(ctx, p)
}

// Prepared is a batch whose grouping has begun (Prepare), to be finished
// by Commit.
type Prepared struct {
	n                   int
	keys, vals, filters []*column.View
	gpu                 bool           // grouped on the GPU, all in Commit
	local               []morselGroups // its morsels pre-aggregated (localMorsels); nil: not
	kept                int64          // with local: the rows the filter kept
}

// Prepare begins the grouping of a batch (as Add takes it) with what
// depends on the batch alone: the checks, and, for a batch of few keys,
// each morsel's rows pre-aggregated in a table of its own. Prepare may run
// on any goroutine, for several batches at once and while Commit runs;
// the views must stay valid until the batch is committed. Commit then
// folds the batches into the groups, one at a time, in the order of their
// rows: the groups are the same bytes as Add's (the order in which each
// group sees its rows, and what is merged, depend on the data alone).
func (g *Grouper) Prepare(ctx context.Context, n int, keys, values, filters []*column.View) (*Prepared, error) {
	if err := g.Spent(); err != nil {
		return nil, err
	}
	if len(keys) != len(g.req.Keys) || len(values) != len(g.req.Values) || len(filters) != len(g.req.Filters) {
		return nil, fmt.Errorf("a batch of %d keys, %d values and %d filter columns for a request of %d, %d and %d",
			len(keys), len(values), len(filters), len(g.req.Keys), len(g.req.Values), len(g.req.Filters))
	}
	for _, set := range [][]*column.View{keys, values, filters} {
		for _, v := range set {
			if v.Len != n {
				return nil, fmt.Errorf("a view of %d rows in a batch of %d", v.Len, n)
			}
		}
	}
	p := &Prepared{n: n, keys: keys, vals: values, filters: filters}
	if gg, _, _, _ := g.groupGPU(ctx, keys, values); gg != nil {
		p.gpu = true
		return p, nil
	}
	if distinct, few := g.fewKeys(keys, n); few {
		var err error
		if p.local, p.kept, err = g.localMorsels(ctx, n, localMorselRows(distinct), keys, values, filters); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Commit finishes the grouping of a prepared batch: its rows follow those
// committed before.
func (g *Grouper) Commit(ctx context.Context, p *Prepared) error {
	if err := g.Spent(); err != nil {
		return err
	}
	n, keys, filters := p.n, p.keys, p.filters
	for _, gp := range g.parts {
		gp.t.NewBatch()
	}
	// Rows count from the stream's first row.
	vals := make([]*column.View, len(p.vals))
	for i, v := range p.vals {
		c := *v
		c.Row += g.rows
		vals[i] = &c
	}
	if p.gpu {
		gg, kv, kmin, groups := g.groupGPU(ctx, keys, vals)
		if gg == nil {
			return errors.New("grouping on the GPU: the batch is no longer the GPU's")
		}
		k, err := g.addGPU(ctx, gg, n, kv, kmin, groups, keys, vals, filters)
		if err != nil {
			return fmt.Errorf("grouping on the GPU: %w", err)
		}
		g.rows += int64(n)
		g.kept += k
		return g.afterBatch(ctx)
	}
	if p.local != nil {
		if err := g.mergeLocal(ctx, p.local); err != nil {
			return err
		}
		g.rows += int64(n)
		g.kept += p.kept
		return g.afterBatch(ctx)
	}
	morsels := (n + cpu.MorselSize - 1) / cpu.MorselSize
	if len(g.ms) < morsels {
		g.ms = append(g.ms, make([]morselRows, morsels-len(g.ms))...)
	}
	ms := g.ms[:morsels]
	var kept atomic.Int64
	err := g.e.parallel(ctx, morsels, func(m int, sc *groupScratch) error {
		lo, hi := m*cpu.MorselSize, min(n, (m+1)*cpu.MorselSize)
		k, err := g.selectMorsel(keys, filters, lo, hi, &ms[m], sc)
		kept.Add(int64(k))
		return err
	})
	if err != nil {
		return err
	}
	err = g.e.parallel(ctx, groupPartitions, func(p int, sc *groupScratch) error {
		gp := g.parts[p]
		for m := range ms {
			mr := &ms[m]
			rows := mr.rows[mr.off[p]:mr.off[p+1]]
			if len(rows) == 0 {
				continue
			}
			sc.ids = slices.Grow(sc.ids[:0], len(rows))[:len(rows)]
			if err := gp.t.Find(keys, rows, mr.hashes[mr.off[p]:mr.off[p+1]], sc.ids); err != nil {
				return fmt.Errorf("grouping by %s: %w", g.keyNames(), err)
			}
			if d := gp.t.Len() - len(gp.rows); d > 0 {
				gp.growRows(d)
			}
			for _, id := range sc.ids {
				gp.rows[id]++
			}
			for i, gs := range gp.groups {
				if d := gp.t.Len() - gs.Len(); d > 0 {
					gs.Grow(d)
				}
				if err := cpu.FoldGroups(gs, vals[i], rows, sc.ids); err != nil {
					return fmt.Errorf("column %q: %w", g.req.Values[i].Name, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	g.rows += int64(n)
	g.kept += kept.Load()
	return g.afterBatch(ctx)
}

// fewKeysMax is the most distinct keys among a batch's first rows for
// which its morsels are pre-aggregated (localMorsels): about where merging a
// morsel's groups (a State merge each) costs what partitioning its rows
// does.
const fewKeysMax = 1024

// fewKeys reports whether the first rows of a batch of n rows have few
// distinct keys (fewKeysMax), and how many: whether pre-aggregating its
// morsels (localMorsels) pays. It depends on the data alone.
func (g *Grouper) fewKeys(keys []*column.View, n int) (int, bool) {
	m := min(n, 8192)
	h := make([]uint64, m)
	x := cpu.Hasher{Fixed: g.fixed}
	if err := x.Hash(keys, 0, m, h); err != nil {
		return 0, false // (the partitioned path reports it)
	}
	seen := make(map[uint64]struct{}, 64)
	for _, v := range h {
		seen[v] = struct{}{}
		if len(seen) > fewKeysMax {
			return 0, false
		}
	}
	return len(seen), true
}

// localMorselRows is the rows of a pre-aggregated morsel (localMorsels) of
// a batch whose first rows have distinct keys: cpu.MorselSize, or a
// multiple for more keys, so that a morsel's group folds at least about 256
// rows. Each of a morsel's groups costs a find, a merge a value column and
// its setup: at a thousand keys a morsel of cpu.MorselSize rows took about
// as long to merge as to fold. It depends on the data alone.
func localMorselRows(distinct int) int {
	return cpu.MorselSize * max(1, (distinct*256+cpu.MorselSize-1)/cpu.MorselSize)
}

// morselGroups is one morsel's rows pre-aggregated: its own table of keys,
// the rows of each group, and its groups' states per value column.
type morselGroups struct {
	t      *cpu.KeyTable
	rows   []int64
	groups []*agg.Groups
	byPart [groupPartitions + 1]int32 // its groups sorted by partition: order[byPart[p]:byPart[p+1]]
	order  []int32
}

// localMorsels pre-aggregates a batch whose keys are few (fewKeys): each
// morsel's rows (size of them: localMorselRows) are folded in row order
// into a table of the morsel's own,
// in parallel, their rows counted from the batch's first (the values'
// Row). mergeLocal then merges the morsels' groups into the partitions' in
// morsel order. The merge order depends on the data alone, never on the
// threads.
func (g *Grouper) localMorsels(ctx context.Context, n, size int, keys, vals, filters []*column.View) ([]morselGroups, int64, error) {
	morsels := (n + size - 1) / size
	ms := make([]morselGroups, morsels)
	var kept atomic.Int64
	shift := 64 - bits.TrailingZeros(groupPartitions)
	err := g.e.parallel(ctx, morsels, func(m int, sc *groupScratch) error {
		lo, hi := m*size, min(n, (m+1)*size)
		cnt := hi - lo
		rows := sc.rowsBuf[:0]
		if g.req.Filter != nil {
			sc.sel = slices.Grow(sc.sel[:0], (cnt+63)/64)[:(cnt+63)/64]
			if _, err := g.req.Filter.Select(filters, lo, hi, sc.sel); err != nil {
				return err // (the filter's errors say "where:")
			}
			for i := range cnt {
				if sc.sel[i>>6]&(1<<(i&63)) != 0 {
					rows = append(rows, int32(lo+i))
				}
			}
		} else {
			rows = slices.Grow(rows, cnt)[:cnt]
			for i := range rows {
				rows[i] = int32(lo + i)
			}
		}
		sc.rowsBuf = rows
		kept.Add(int64(len(rows)))
		mg := &ms[m]
		mg.t = cpu.NewKeyTable(g.fixed)
		sc.ids = slices.Grow(sc.ids[:0], len(rows))[:len(rows)]
		sc.hasher.Fixed = g.fixed
		dense, err := denseIDs(keys, rows, mg.t, sc)
		if err != nil {
			return fmt.Errorf("grouping by %s: %w", g.keyNames(), err)
		}
		if !dense {
			sc.hashes = slices.Grow(sc.hashes[:0], cnt)[:cnt]
			if err := sc.hasher.Hash(keys, lo, hi, sc.hashes); err != nil {
				return fmt.Errorf("grouping by %s: %w", g.keyNames(), err)
			}
			hashes := sc.hashBuf[:0]
			for _, r := range rows {
				hashes = append(hashes, sc.hashes[int(r)-lo])
			}
			sc.hashBuf = hashes
			if err := mg.t.Find(keys, rows, hashes, sc.ids); err != nil {
				return fmt.Errorf("grouping by %s: %w", g.keyNames(), err)
			}
		}
		mg.rows = make([]int64, mg.t.Len())
		if dense { // (the rows of each slot, counted as they were numbered)
			for slot, id := range sc.slots {
				if id >= 0 {
					mg.rows[id] += sc.slotRows[slot]
				}
			}
		} else {
			for _, id := range sc.ids {
				mg.rows[id]++
			}
		}
		mg.groups = make([]*agg.Groups, len(vals))
		for i, v := range g.req.Values {
			gs, _ := agg.NewGroups(v.Kind.Family(), g.req.Aggs[i])
			gs.Grow(mg.t.Len())
			if err := cpu.FoldGroups(gs, vals[i], rows, sc.ids); err != nil {
				return fmt.Errorf("column %q: %w", g.req.Values[i].Name, err)
			}
			mg.groups[i] = gs
		}
		// The morsel's groups by partition.
		var count [groupPartitions]int32
		for id := range mg.t.Len() {
			count[mg.t.Hash(int32(id))>>shift]++
		}
		var at int32
		for p := range groupPartitions {
			mg.byPart[p] = at
			at += count[p]
		}
		mg.byPart[groupPartitions] = at
		mg.order = make([]int32, at)
		next := mg.byPart
		for id := range mg.t.Len() {
			p := mg.t.Hash(int32(id)) >> shift
			mg.order[next[p]] = int32(id)
			next[p]++
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return ms, kept.Load(), nil
}

// mergeLocal merges the groups of a batch's pre-aggregated morsels
// (localMorsels) into the partitions' in morsel order, a partition per
// task, their rows moved past those grouped before.
func (g *Grouper) mergeLocal(ctx context.Context, ms []morselGroups) error {
	return g.e.parallel(ctx, groupPartitions, func(p int, sc *groupScratch) error {
		gp := g.parts[p]
		for m := range ms {
			mg := &ms[m]
			for _, lid := range mg.order[mg.byPart[p]:mg.byPart[p+1]] {
				id := gp.t.FindFrom(mg.t, lid)
				if int(id) >= len(gp.rows) {
					gp.growRows(1)
					for _, gs := range gp.groups {
						gs.Grow(1)
					}
				}
				gp.rows[id] += mg.rows[lid]
				for i, gs := range gp.groups {
					var err error
					if mg.groups[i].Tracks().Any(agg.Ordered) {
						st := mg.groups[i].State(lid)
						st.ShiftRows(g.rows)
						err = gs.MergeState(id, &st)
					} else { // (no rows to move)
						err = gs.MergeGroup(id, mg.groups[i], lid)
					}
					if err != nil {
						return fmt.Errorf("column %q: %w", g.req.Values[i].Name, err)
					}
				}
			}
		}
		return nil
	})
}

// denseSpan is the largest range of a morsel's integer keys for which
// denseIDs numbers its rows by their key's offset in the range, not by
// hashing.
const denseSpan = 1 << 12

// denseIDs numbers rows (of a morsel) by their key into sc.ids with t when
// there is one integer key, or one dictionary key (by its indices), whose
// values in the rows span at most denseSpan: a row's value less the
// smallest picks a slot, and only a slot's first row is hashed and found
// in t (which checks it: an index outside its dictionary is an error).
// sc.slots then holds each slot's group (-1: no row) and sc.slotRows its
// rows. It reports false, doing nothing, for other keys.
func denseIDs(keys []*column.View, rows []int32, t *cpu.KeyTable, sc *groupScratch) (bool, error) {
	if len(keys) != 1 || len(rows) == 0 {
		return false, nil
	}
	k, sv := keys[0], keys[0]
	if k.Dict != nil {
		sv = &column.View{Type: k.Type, Kind: k.IndexKind, Len: k.Len, Values: k.Values, Offset: k.Offset,
			Validity: k.Validity, ValidityOffset: k.ValidityOffset}
	} else if !sc.hasher.Fixed {
		return false, nil
	}
	switch sv.Kind {
	case column.Int8:
		return denseIDsOf[int8](sv, k, rows, t, sc)
	case column.Int16:
		return denseIDsOf[int16](sv, k, rows, t, sc)
	case column.Int32:
		return denseIDsOf[int32](sv, k, rows, t, sc)
	case column.Int64:
		return denseIDsOf[int64](sv, k, rows, t, sc)
	case column.Uint8:
		return denseIDsOf[uint8](sv, k, rows, t, sc)
	case column.Uint16:
		return denseIDsOf[uint16](sv, k, rows, t, sc)
	case column.Uint32:
		return denseIDsOf[uint32](sv, k, rows, t, sc)
	case column.Uint64:
		return denseIDsOf[uint64](sv, k, rows, t, sc)
	}
	return false, nil
}

// denseIDsOf is denseIDs of the values of sv, key k's values or indices.
func denseIDsOf[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](sv, k *column.View, rows []int32, t *cpu.KeyTable, sc *groupScratch) (bool, error) {
	vals := column.Slice[T](sv.Values)[sv.Offset:]
	var lo, hi T
	seen := false
	if k.Dict != nil && k.Dict.Len > 0 && k.Dict.Len <= denseSpan {
		// A dictionary's indices span its entries: no pass for their
		// range (an index outside it is refused below).
		hi = T(k.Dict.Len - 1)
	} else if sv.Validity == nil {
		lo, hi, seen = vals[rows[0]], vals[rows[0]], true
		for _, r := range rows {
			x := vals[r]
			lo, hi = min(lo, x), max(hi, x)
		}
	} else {
		for _, r := range rows {
			if !sv.Valid(int(r)) {
				continue
			}
			x := vals[r]
			if !seen {
				lo, hi, seen = x, x, true
			}
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	// The distance in two's complement: for a signed kind, one past T's
	// largest wraps negative, and so to a span past denseSpan.
	span := uint64(hi - lo)
	if span >= denseSpan {
		return false, nil
	}
	null := int(span) + 1 // the null key's slot
	sc.slots = slices.Grow(sc.slots[:0], null+1)[:null+1]
	for i := range sc.slots {
		sc.slots[i] = -1
	}
	views := []*column.View{k}
	// find is a slot's first row: its group found by hash.
	find := func(r int32) (int32, error) {
		var h [1]uint64
		var one [1]int32
		if err := sc.hasher.Hash(views, int(r), int(r)+1, h[:]); err != nil {
			return 0, err
		}
		if err := t.Find(views, []int32{r}, h[:], one[:]); err != nil {
			return 0, err
		}
		return one[0], nil
	}
	sc.slotRows = slices.Grow(sc.slotRows[:0], null+1)[:null+1]
	clear(sc.slotRows)
	slots, ids, counts := sc.slots, sc.ids[:len(rows)], sc.slotRows
	// outside is the error of row r, whose index is outside the dictionary.
	outside := func(r int32) error {
		if _, err := find(r); err != nil {
			return err
		}
		return fmt.Errorf("dictionary index %d outside the dictionary's %d entries", vals[r], k.Dict.Len)
	}
	if first := rows[0]; sv.Validity == nil && int(rows[len(rows)-1])-int(first) == len(rows)-1 {
		// Every row, one after the other (no filter): their values in
		// order, without the rows or a validity test.
		for j, x := range vals[first:][:len(rows)] {
			s := int(x - lo)
			if uint(s) >= uint(null) {
				return false, outside(first + int32(j))
			}
			id := slots[s]
			if id < 0 {
				var err error
				if id, err = find(first + int32(j)); err != nil {
					return false, err
				}
				slots[s] = id
			}
			ids[j] = id
			counts[s]++
		}
		return true, nil
	}
	for j, r := range rows {
		s := null
		if sv.Validity == nil || sv.Valid(int(r)) {
			if s = int(vals[r] - lo); uint(s) >= uint(null) {
				return false, outside(r)
			}
		}
		id := slots[s]
		if id < 0 {
			var err error
			if id, err = find(r); err != nil {
				return false, err
			}
			slots[s] = id
		}
		ids[j] = id
		counts[s]++
	}
	return true, nil
}

// groupScratch is a worker's reusable memory.
type groupScratch struct {
	slots    []int32 // denseIDs's slots
	slotRows []int64 // and their rows
	hasher   cpu.Hasher
	sel      []uint64
	hashes   []uint64
	part     []uint8
	ids      []int32

	rowsBuf []int32
	hashBuf []uint64
}

// selectMorsel selects the rows [lo, hi) the filter keeps, hashes their
// keys and sorts them by partition into mr; it returns how many it kept.
func (g *Grouper) selectMorsel(keys, filters []*column.View, lo, hi int, mr *morselRows, sc *groupScratch) (int, error) {
	n := hi - lo
	sc.hashes = slices.Grow(sc.hashes[:0], n)[:n]
	sc.hasher.Fixed = g.fixed
	if err := sc.hasher.Hash(keys, lo, hi, sc.hashes); err != nil {
		return 0, fmt.Errorf("grouping by %s: %w", g.keyNames(), err)
	}
	var sel []uint64
	if g.req.Filter != nil {
		sc.sel = slices.Grow(sc.sel[:0], (n+63)/64)[:(n+63)/64]
		if _, err := g.req.Filter.Select(filters, lo, hi, sc.sel); err != nil {
			return 0, err // (the filter's errors say "where:")
		}
		sel = sc.sel
	}
	shift := 64 - bits.TrailingZeros(groupPartitions)
	var count [groupPartitions]int32
	sc.part = slices.Grow(sc.part[:0], n)[:n]
	for i := range n {
		if sel != nil && sel[i>>6]&(1<<(i&63)) == 0 {
			continue
		}
		p := uint8(sc.hashes[i] >> shift)
		sc.part[i] = p
		count[p]++
	}
	var at int32
	for p := range groupPartitions {
		mr.off[p] = at
		at += count[p]
	}
	mr.off[groupPartitions] = at
	kept := int(at)
	mr.rows = slices.Grow(mr.rows[:0], kept)[:kept]
	mr.hashes = slices.Grow(mr.hashes[:0], kept)[:kept]
	next := mr.off
	for i := range n {
		if sel != nil && sel[i>>6]&(1<<(i&63)) == 0 {
			continue
		}
		p := sc.part[i]
		mr.rows[next[p]] = int32(lo + i)
		mr.hashes[next[p]] = sc.hashes[i]
		next[p]++
	}
	return kept, nil
}

func (g *Grouper) keyNames() string {
	if len(g.req.Keys) == 1 {
		return fmt.Sprintf("column %q", g.req.Keys[0].Name)
	}
	names := make([]string, len(g.req.Keys))
	for i, k := range g.req.Keys {
		names[i] = fmt.Sprintf("%q", k.Name)
	}
	return fmt.Sprintf("columns %v", names)
}

// parallel runs f(i) for i in [0, n) on the engine's threads, each worker
// with its own scratch, and returns the first error (the others stop at
// their next task).
func (e *Engine) parallel(ctx context.Context, n int, f func(i int, sc *groupScratch) error) error {
	workers := min(e.threads, n)
	var (
		next atomic.Int64
		once sync.Once
		err  error
		wg   sync.WaitGroup
		stop atomic.Bool
	)
	fail := func(e error) {
		once.Do(func() { err = e })
		stop.Store(true)
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc, _ := e.groupScratch.Get().(*groupScratch)
			if sc == nil {
				sc = new(groupScratch)
			}
			sc.hasher.NewBatch() // (each call is of a batch)
			defer e.groupScratch.Put(sc)
			for !stop.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if e := ctx.Err(); e != nil {
					fail(e)
					return
				}
				if e := f(i, sc); e != nil {
					fail(e)
					return
				}
			}
		}()
	}
	wg.Wait()
	return err
}

// Groups is the number of groups so far.
func (g *Grouper) Groups() int {
	n := 0
	for _, gp := range g.parts {
		n += gp.t.Len()
	}
	return n
}

// KeyValue is one key column's value of a group (the CPU table's).
type KeyValue = cpu.KeyValue

// GroupRef names one group: its partition and its id there.
type GroupRef struct{ part, id int32 }

// Sorted returns every group, sorted by key: key column after key column,
// nulls last, numbers by value (NaN after every number), strings and
// binaries bytewise, booleans false first.
func (g *Grouper) Sorted() ([]GroupRef, error) {
	if g.Spilled() {
		return nil, errors.New("the groups are spilled: Load them before they are sorted")
	}
	refs := make([]GroupRef, 0, g.Groups())
	for p, gp := range g.parts {
		for id := range gp.t.Len() {
			refs = append(refs, GroupRef{int32(p), int32(id)})
		}
	}
	fams := g.keyFamilies()
	if g.fixed {
		return g.sortedWords(refs, fams[0]), nil
	}
	a, b := make([]cpu.KeyValue, len(fams)), make([]cpu.KeyValue, len(fams))
	slices.SortFunc(refs, func(x, y GroupRef) int {
		g.parts[x.part].t.Key(x.id, fams, a)
		g.parts[y.part].t.Key(y.id, fams, b)
		for c, f := range fams {
			if r := compareKey(f, a[c], b[c]); r != 0 {
				return r
			}
		}
		return 0
	})
	return refs, nil
}

// sortedWords sorts the groups of one-word keys of family f by key, in
// the order compareKey gives, through order-preserving words: each
// partition's keys made by a task of its own, then a bucket sort on the
// words' leading bits (wordBuckets: counted and scattered a partition per
// task, in partition order), each bucket sorted by a task of its own; the
// null key (one group at most) last.
func (g *Grouper) sortedWords(refs []GroupRef, f column.Family) []GroupRef {
	ks := make([]wordKey, len(refs))
	starts := make([]int, len(g.parts)+1)
	for p, gp := range g.parts {
		starts[p+1] = starts[p] + gp.t.Len()
	}
	ctx := context.Background()
	_ = g.e.parallel(ctx, len(g.parts), func(p int, _ *groupScratch) error {
		kv := make([]cpu.KeyValue, 1)
		fams := []column.Family{f}
		run := ks[starts[p]:starts[p+1]]
		for i := range run {
			r := refs[starts[p]+i]
			g.parts[r.part].t.Key(r.id, fams, kv)
			k := wordKey{ref: r}
			w := kv[0].Value.Bits[0]
			switch {
			case !kv[0].Valid:
				k.null = true
			case f == column.FamilySigned:
				k.ord = w ^ 1<<63
			case f == column.FamilyFloat:
				switch x := kv[0].Value.Float; {
				case x != x:
					k.ord = math.MaxUint64
				case math.Signbit(x):
					k.ord = ^w
				default:
					k.ord = w | 1<<63
				}
			default:
				k.ord = w
			}
			run[i] = k
		}
		return nil
	})
	// The words' range, and the buckets of their leading bits.
	lo, hi := uint64(math.MaxUint64), uint64(0)
	nulls := 0
	for _, k := range ks {
		if k.null {
			nulls++
			continue
		}
		lo, hi = min(lo, k.ord), max(hi, k.ord)
	}
	shift, buckets := 0, 1
	if hi > lo {
		shift = max(0, bits.Len64(hi-lo)-wordBucketBits)
		buckets = int((hi-lo)>>shift) + 1
	}
	bucket := func(k wordKey) int {
		if k.null {
			return buckets // (the last: the null key)
		}
		return int((k.ord - lo) >> shift)
	}
	// counts[p][b]: partition p's keys in bucket b; then where they go.
	counts := make([][]int, len(g.parts))
	_ = g.e.parallel(ctx, len(g.parts), func(p int, _ *groupScratch) error {
		c := make([]int, buckets+1)
		for _, k := range ks[starts[p]:starts[p+1]] {
			c[bucket(k)]++
		}
		counts[p] = c
		return nil
	})
	bstart := make([]int, buckets+2) // where bucket b begins
	at := 0
	for b := range buckets + 1 {
		bstart[b] = at
		for p := range counts {
			n := counts[p][b]
			counts[p][b] = at
			at += n
		}
	}
	bstart[buckets+1] = at
	sorted := make([]wordKey, len(ks))
	_ = g.e.parallel(ctx, len(g.parts), func(p int, _ *groupScratch) error {
		next := counts[p]
		for _, k := range ks[starts[p]:starts[p+1]] {
			b := bucket(k)
			sorted[next[b]] = k
			next[b]++
		}
		return nil
	})
	ks = nil // (its memory, for what follows)
	// Each bucket sorted (few keys each but where the keys crowd), a run
	// of buckets of about wordSortTask keys per task.
	var tasks []int // the first bucket of each task
	for b, n := 0, 0; b < buckets; b++ {
		if n == 0 {
			tasks = append(tasks, b)
		}
		if n += bstart[b+1] - bstart[b]; n >= wordSortTask {
			n = 0
		}
	}
	tasks = append(tasks, buckets)
	_ = g.e.parallel(ctx, len(tasks)-1, func(t int, _ *groupScratch) error {
		for b := tasks[t]; b < tasks[t+1]; b++ {
			if run := sorted[bstart[b]:bstart[b+1]]; len(run) > 1 {
				slices.SortFunc(run, compareWordKeys)
			}
		}
		return nil
	})
	for i, k := range sorted {
		refs[i] = k.ref
	}
	return refs
}

// wordBucketBits are the leading bits of the words' range that bucket
// them (sortedWords): 4,096 buckets.
const wordBucketBits = 12

// wordSortTask is about the keys a task of sortedWords sorts.
const wordSortTask = 1 << 16

// wordKey is a one-word key in an order-preserving form, with its group.
type wordKey struct {
	null bool
	ord  uint64
	ref  GroupRef
}

// compareWordKeys orders keys by word, nulls last (then by group: the
// order of equal words, if any, is the same run after run).
func compareWordKeys(a, b wordKey) int {
	if a.null != b.null {
		return cmp.Compare(boolInt(a.null), boolInt(b.null))
	}
	if c := cmp.Compare(a.ord, b.ord); c != 0 {
		return c
	}
	if c := cmp.Compare(a.ref.part, b.ref.part); c != 0 {
		return c
	}
	return cmp.Compare(a.ref.id, b.ref.id)
}

func (g *Grouper) keyFamilies() []column.Family {
	fams := make([]column.Family, len(g.req.Keys))
	for i, k := range g.req.Keys {
		fams[i] = k.Kind.Family()
	}
	return fams
}

// Key is group r's key, one value per key column.
func (g *Grouper) Key(r GroupRef, out []cpu.KeyValue) {
	g.parts[r.part].t.Key(r.id, g.keyFamilies(), out)
}

// AnySum reports whether the exact sum of value column c in some group
// satisfies pred (agg.Groups.AnySum), which is called from several
// goroutines at once: the partitions are read in parallel (tens of
// millions of groups took seconds on one goroutine), and the first that
// has such a group stops the others.
func (g *Grouper) AnySum(c int, pred func(agg.Int192) bool) bool {
	var found atomic.Bool
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(g.parts), runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := int(next.Add(1) - 1); p < len(g.parts) && !found.Load(); p = int(next.Add(1) - 1) {
				if g.parts[p].groups[c].AnySum(pred) {
					found.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	return found.Load()
}

// AnySumIn is AnySum of partition p's groups.
func (g *Grouper) AnySumIn(p, c int, pred func(agg.Int192) bool) bool {
	return g.parts[p].groups[c].AnySum(pred)
}

// GroupRows is the number of rows of group r (count(*)).
func (g *Grouper) GroupRows(r GroupRef) int64 { return g.parts[r.part].rows[r.id] }

// State is group r's partial state of value column c.
func (g *Grouper) State(r GroupRef, c int) agg.State {
	return g.parts[r.part].groups[c].State(r.id)
}

// States sets out[j] to the state of value column c of group refs[j], as
// State does, for every j: read an array at a time (agg.GatherStates); gs
// and idx are scratch, reused when large enough.
func (g *Grouper) States(refs []GroupRef, c int, out []agg.State, gs *[]*agg.Groups, idx *[]int32) {
	*gs, *idx = slices.Grow((*gs)[:0], len(refs))[:len(refs)], slices.Grow((*idx)[:0], len(refs))[:len(refs)]
	for j, r := range refs {
		(*gs)[j], (*idx)[j] = g.parts[r.part].groups[c], r.id
	}
	agg.GatherStates(*gs, *idx, out)
}

// compareKey orders two values of a key column of family f, nulls last.
func compareKey(f column.Family, a, b cpu.KeyValue) int {
	switch {
	case !a.Valid || !b.Valid:
		return cmp.Compare(boolInt(!a.Valid), boolInt(!b.Valid))
	}
	x, y := a.Value, b.Value
	switch f {
	case column.FamilySigned:
		return cmp.Compare(int64(x.Bits[0]), int64(y.Bits[0]))
	case column.FamilyUnsigned, column.FamilyBool:
		return cmp.Compare(x.Bits[0], y.Bits[0])
	case column.FamilyFloat:
		xn, yn := math.IsNaN(x.Float), math.IsNaN(y.Float)
		if xn || yn {
			return cmp.Compare(boolInt(xn), boolInt(yn))
		}
		return cmp.Compare(x.Float, y.Float)
	case column.FamilyDecimal:
		switch {
		case agg.Decimal128Less(x.Bits, y.Bits):
			return -1
		case agg.Decimal128Less(y.Bits, x.Bits):
			return 1
		}
		return 0
	case column.FamilyBytes:
		return bytes.Compare(x.Bytes, y.Bytes)
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Where is the filter of a predicate (package filter) over the request's
// filter columns, in filter.Columns order; scales are the scales of the
// decimal columns among them (0 for the others).
func Where(e filter.Expr, cols []Column, scales []int32) (Filter, error) {
	in := make([]filter.Input, len(cols))
	for i, c := range cols {
		in[i] = filter.Input{Name: c.Name, Kind: c.Kind, Scale: scales[i]}
	}
	p, err := filter.Bind(e, in)
	if err != nil {
		return nil, err
	}
	return &where{p: p}, nil
}

// where is a bound predicate as a Filter: a scratch per goroutine.
type where struct {
	p       *filter.Program
	scratch sync.Pool
}

func (w *where) Select(views []*column.View, lo, hi int, out []uint64) (int, error) {
	sc, _ := w.scratch.Get().(*filter.Scratch)
	if sc == nil {
		sc = new(filter.Scratch)
	}
	defer w.scratch.Put(sc)
	return w.p.Select(sc, views, lo, hi, out)
}

// MayMatch reports whether a row group whose filter columns have the
// partial states stats (nil: unknown; statistics, say) may hold a row the
// filter keeps: false only when none can be (filter.Program.MayMatch).
func (w *where) MayMatch(stats []*agg.State) bool { return w.p.MayMatch(stats) }
