package core

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
)

// Spilling. When the groups outgrow GroupRequest.MemoryLimit and
// GroupRequest.SpillDir names a directory, every partition's groups are
// written as a run at the end of that partition's file, and the partitions
// start again empty. A run is the partition's keys (KeyBytes), its groups'
// rows and each value column's agg.Groups in their spill form (AppendSpill:
// the arrays as they lie in memory). A group may then be in several runs
// and in memory.
// Load merges a partition's runs, in the order they were written, then its
// groups in memory, into one table again: one partition at a time, so the
// memory it needs is a partition's, about a 64th of the groups. Every
// partition must be loaded before the groups are read (Sorted, Key, State,
// GroupRows); LoadAll loads them all.
//
// A spilled group's states are merged from runs where, unspilled, its rows
// would have been folded in one sequence: counts, integer and decimal sums,
// extremes and the ordered aggregates are the same; float sums are
// compensated both ways and agree to their error bound, not always to the
// last bit. For a given budget the spills, and so the results, depend on
// the data alone, never on the threads.

// spillFiles are a grouper's spilled runs: a file per partition.
type spillFiles struct {
	dir   string
	files [groupPartitions]*os.File
	names [groupPartitions]string // a file's name where it could not be removed while open
	runs  [groupPartitions][]spillRun
	count int   // spills so far
	bytes int64 // bytes written
}

// spillRun is one spill's groups of a partition: size bytes at off of its
// file, groups of them.
type spillRun struct {
	off, size int64
	groups    int
}

// Spills reports how many times the groups were spilled to disk and the
// bytes written.
func (g *Grouper) Spills() (times int, bytes int64) {
	if g.sp == nil {
		return 0, 0
	}
	return g.sp.count, g.sp.bytes
}

// afterBatch checks the groups' memory after a batch: over the limit, they
// spill (GroupRequest.SpillDir) or are an error (*GroupMemoryError).
func (g *Grouper) afterBatch(ctx context.Context) error {
	if g.req.MemoryLimit <= 0 {
		return nil
	}
	b := g.Bytes()
	if b <= g.req.MemoryLimit {
		return nil
	}
	if g.req.SpillDir != "" {
		return g.spill(ctx)
	}
	name := g.req.MemoryLimitName
	if name == "" {
		name = "the memory limit"
	}
	return &GroupMemoryError{Groups: g.Groups(), Bytes: b, Limit: g.req.MemoryLimit, LimitName: name}
}

// newPart is an empty partition of g's request.
func (g *Grouper) newPart() *groupPart {
	gp := &groupPart{t: cpu.NewKeyTable(g.fixed), groups: make([]*agg.Groups, len(g.req.Values)), mem: new(column.Arena)}
	runtime.AddCleanup(gp, (*column.Arena).Free, gp.mem)
	for i, v := range g.req.Values {
		gp.groups[i], _ = agg.NewGroups(v.Kind.Family(), g.req.Aggs[i]) // (checked by NewGrouper)
	}
	return gp
}

// spill writes every partition's groups as a run of its file and empties
// the partitions.
func (g *Grouper) spill(ctx context.Context) error {
	if g.sp == nil {
		g.sp = &spillFiles{dir: g.req.SpillDir}
	}
	s := g.sp
	written := make([]int64, groupPartitions)
	err := g.e.parallel(ctx, groupPartitions, func(p int, _ *groupScratch) error {
		gp := g.parts[p]
		if gp.t.Len() == 0 {
			return nil
		}
		if s.files[p] == nil {
			f, err := os.CreateTemp(s.dir, "arrowagg-groups-*.spill")
			if err != nil {
				return err
			}
			// Removed at once where an open file can be (its space is
			// freed when it is closed, also if the process dies),
			// else when the grouper is closed.
			if os.Remove(f.Name()) != nil {
				s.names[p] = f.Name()
			}
			s.files[p] = f
		}
		var off int64
		if rs := s.runs[p]; len(rs) > 0 {
			off = rs[len(rs)-1].off + rs[len(rs)-1].size
		}
		size := int64(gp.t.Len()) * 24
		for _, gs := range gp.groups {
			size += gs.Bytes()
		}
		buf := appendRun(make([]byte, 0, size), gp)
		if _, err := s.files[p].WriteAt(buf, off); err != nil {
			return err
		}
		at := off + int64(len(buf))
		s.runs[p] = append(s.runs[p], spillRun{off: off, size: at - off, groups: gp.t.Len()})
		written[p] = at - off
		g.parts[p] = g.newPart()
		gp.release()
		gp.t.Release()
		return nil
	})
	for _, w := range written {
		s.bytes += w
	}
	s.count++
	if err != nil {
		return fmt.Errorf("spilling the groups to %s: %w", s.dir, err)
	}
	return nil
}

// Spilled reports whether some partition has runs on disk that Load has
// not merged yet.
func (g *Grouper) Spilled() bool {
	if g.sp == nil {
		return false
	}
	for _, rs := range g.sp.runs {
		if len(rs) > 0 {
			return true
		}
	}
	return false
}

// Partitions is the number of partitions of the groups (Load's p).
func (g *Grouper) Partitions() int { return groupPartitions }

// SpilledBytes is the size of partition p's runs on disk (what Load reads).
func (g *Grouper) SpilledBytes(p int) int64 {
	if g.sp == nil {
		return 0
	}
	var n int64
	for _, r := range g.sp.runs[p] {
		n += r.size
	}
	return n
}

// Load merges partition p's spilled runs, in the order they were written,
// and then its groups in memory into one table, and closes its file.
// Partitions without runs are left as they are. Load of distinct
// partitions may run at once.
func (g *Grouper) Load(p int) error {
	if g.sp == nil || len(g.sp.runs[p]) == 0 {
		return nil
	}
	s := g.sp
	fresh := g.newPart()
	// Room for the largest run's groups (or those in memory), fewer than
	// the partition's: each a group of its own.
	most := g.parts[p].t.Len()
	for _, r := range s.runs[p] {
		most = max(most, r.groups)
	}
	fresh.rows = column.Grow(fresh.mem, fresh.rows, most)
	for _, gs := range fresh.groups {
		gs.Reserve(most)
	}
	fams := g.keyFamilies()
	var buf []byte
	for i, r := range s.runs[p] {
		if int64(cap(buf)) < r.size {
			buf = make([]byte, r.size)
		}
		buf = buf[:r.size]
		if _, err := s.files[p].ReadAt(buf, r.off); err != nil {
			return fmt.Errorf("reading the groups spilled to %s: %w", s.dir, err)
		}
		run, err := g.readRun(buf, r.groups, fams)
		if err != nil {
			return fmt.Errorf("the groups spilled to %s (run %d of partition %d) are corrupt: %v", s.dir, i, p, err)
		}
		if err := g.mergePart(fresh, run); err != nil {
			return err
		}
	}
	old := g.parts[p]
	hashes := make([]uint64, old.t.Len())
	keys := make([][]byte, old.t.Len())
	for id := range keys {
		keys[id], hashes[id] = old.t.KeyBytes(int32(id)), old.t.Hash(int32(id))
	}
	if err := g.mergePart(fresh, &spillRunData{keys: keys, hashes: hashes, rows: old.rows, groups: old.groups}); err != nil {
		return err
	}
	g.parts[p] = fresh
	old.release()
	old.t.Release()
	s.runs[p] = nil
	return s.close(p)
}

// LoadAll loads every partition (Load), in parallel: all the groups are
// then in memory.
func (g *Grouper) LoadAll(ctx context.Context) error {
	if !g.Spilled() {
		return nil
	}
	return g.e.parallel(ctx, groupPartitions, func(p int, _ *groupScratch) error { return g.Load(p) })
}

// DropStates frees partition p's states and rows, keeping its keys (Key and
// Sorted still answer; State and GroupRows no longer do): for a caller that
// has read them already. The grouper is then spent: adding, merging and
// writing its groups are errors (Spent).
func (g *Grouper) DropStates(p int) {
	g.dropped.Store(true)
	gp := g.parts[p]
	gp.release()
	gp.groups = g.newPart().groups
}

// release frees the states and rows of gp's groups now (agg.Groups.Release),
// which no one reads any more.
func (gp *groupPart) release() {
	for _, gs := range gp.groups {
		gs.Release()
	}
	gp.rows = nil
	gp.mem.Free()
}

// PartGroups is partition p's groups, in the order of their ids.
func (g *Grouper) PartGroups(p int) []GroupRef {
	refs := make([]GroupRef, g.parts[p].t.Len())
	for id := range refs {
		refs[id] = GroupRef{int32(p), int32(id)}
	}
	return refs
}

// PartLen is the number of partition p's groups.
func (g *Grouper) PartLen(p int) int { return g.parts[p].t.Len() }

// Index is r's position among PartGroups of its partition, and its
// partition.
func (r GroupRef) Index() (part, id int) { return int(r.part), int(r.id) }

// close closes partition p's file, and removes it where it was kept.
func (s *spillFiles) close(p int) error {
	f := s.files[p]
	if f == nil {
		return nil
	}
	s.files[p] = nil
	err := f.Close()
	if s.names[p] != "" {
		err = errors.Join(err, os.Remove(s.names[p]))
		s.names[p] = ""
	}
	return err
}

// errSpent is the error of a grouper whose states were dropped.
var errSpent = errors.New("the groups were read out once (their states dropped partition by partition as they were read back from disk)")

// errClosed is the error of a grouper that was closed.
var errClosed = errors.New("the grouper was closed (Close freed its groups)")

// Spent is an error once a partition's states were dropped (DropStates) or
// the grouper was closed.
func (g *Grouper) Spent() error {
	if g.closed.Load() {
		return errClosed
	}
	if g.dropped.Load() {
		return errSpent
	}
	return nil
}

// Close frees what the grouper holds: its spill files (its spilled groups
// are lost) and its groups' keys and states in memory, now rather than
// when the grouper is collected. The grouper is then spent (Spent); it is
// safe to call Close twice.
func (g *Grouper) Close() error {
	if g.closed.Swap(true) {
		return nil
	}
	for _, gp := range g.parts {
		gp.release()
		gp.t.Release()
	}
	if g.sp == nil {
		return nil
	}
	var errs []error
	for p := range g.sp.files {
		g.sp.runs[p] = nil
		errs = append(errs, g.sp.close(p))
	}
	return errors.Join(errs...)
}

// appendRun appends partition gp's groups as a run: their count, their
// keys (KeyBytes, length-prefixed), their rows and each value column's
// groups in their spill form.
func appendRun(b []byte, gp *groupPart) []byte {
	n := gp.t.Len()
	b = binary.AppendUvarint(b, uint64(n))
	for id := range n {
		key := gp.t.KeyBytes(int32(id))
		b = binary.AppendUvarint(b, uint64(len(key)))
		b = append(b, key...)
	}
	for _, r := range gp.rows[:n] {
		b = binary.LittleEndian.AppendUint64(b, uint64(r))
	}
	for _, gs := range gp.groups {
		b = gs.AppendSpill(b)
	}
	return b
}

// spillRunData is a run read back (readRun), or a partition's groups in
// memory, to merge (mergePart): per group its key, the key's hash and its
// rows, and the value columns' groups.
type spillRunData struct {
	keys   [][]byte
	hashes []uint64
	rows   []int64
	groups []*agg.Groups
}

// readRun reads a run of n groups that appendRun wrote; its keys are
// checked, and slices of b.
func (g *Grouper) readRun(b []byte, n int, fams []column.Family) (*spillRunData, error) {
	m, k := binary.Uvarint(b)
	if k <= 0 || m != uint64(n) {
		return nil, errors.New("a bad count of groups")
	}
	b = b[k:]
	run := &spillRunData{keys: make([][]byte, n), hashes: make([]uint64, n), rows: make([]int64, n)}
	for j := range n {
		key, rest, err := uvarintBytes(b)
		if err != nil {
			return nil, fmt.Errorf("key: %v", err)
		}
		if err := cpu.CheckKey(g.fixed, fams, key); err != nil {
			return nil, fmt.Errorf("key: %v", err)
		}
		if run.hashes[j], err = cpu.KeyHash(g.fixed, key); err != nil {
			return nil, fmt.Errorf("key: %v", err)
		}
		run.keys[j], b = key, rest
	}
	if len(b) < 8*n {
		return nil, errors.New("truncated rows")
	}
	for j := range n {
		run.rows[j] = int64(binary.LittleEndian.Uint64(b[8*j:]))
	}
	b = b[8*n:]
	run.groups = g.newPart().groups
	for c, gs := range run.groups {
		var err error
		if b, err = gs.ReadSpill(b); err != nil {
			return nil, fmt.Errorf("column %q: %v", g.req.Values[c].Name, err)
		}
		if gs.Len() != n {
			return nil, fmt.Errorf("column %q: %d groups in a run of %d", g.req.Values[c].Name, gs.Len(), n)
		}
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d bytes after the groups", len(b))
	}
	return run, nil
}

// mergePart merges the groups of run into partition gp, in their order
// (agg.Groups.MergeGroup: field by field where the states are words).
func (g *Grouper) mergePart(gp *groupPart, run *spillRunData) error {
	for j, key := range run.keys {
		id := gp.add(key, run.hashes[j], run.rows[j])
		for c, gs := range gp.groups {
			if err := gs.MergeGroup(id, run.groups[c], int32(j)); err != nil {
				return fmt.Errorf("column %q: %w", g.req.Values[c].Name, err)
			}
		}
	}
	return nil
}
