package core

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
)

// Grouped partial states travel and merge like a column's: Merge folds
// another grouper's groups into g, MarshalBinary writes g's, MergeBinary
// folds written ones. The groups of the other follow g's rows (the ordered
// aggregates' rows of the other are moved past g's), as Accumulator.Merge
// does.

// groupsMagic starts a grouper's binary form (version 1).
const groupsMagic = "arrowagg.groups.1"

// shape is what must agree for two groupers to merge: the key columns'
// and value columns' kinds and the value columns' aggregates.
func (g *Grouper) shape() []byte {
	b := binary.AppendUvarint(nil, uint64(len(g.req.Keys)))
	for _, k := range g.req.Keys {
		b = append(b, byte(k.Kind))
	}
	b = binary.AppendUvarint(b, uint64(len(g.req.Values)))
	for i, v := range g.req.Values {
		b = append(b, byte(v.Kind))
		b = binary.AppendUvarint(b, uint64(agg.Normalize(g.req.Aggs[i])))
	}
	return b
}

// Merge folds the groups of o, a grouper of the same request, into g: o's
// rows follow g's. Spilled groups of o are loaded first (LoadAll); g's
// stay spilled.
func (g *Grouper) Merge(o *Grouper) error {
	if string(g.shape()) != string(o.shape()) {
		return errors.New("merging the groups of another request")
	}
	if err := errors.Join(g.Spent(), o.Spent()); err != nil {
		return err
	}
	if err := o.LoadAll(context.Background()); err != nil {
		return err
	}
	for _, op := range o.parts {
		for id := range op.t.Len() {
			states := make([]agg.State, len(op.groups))
			for c, gs := range op.groups {
				states[c] = gs.State(int32(id))
			}
			if err := g.mergeGroup(op.t.KeyBytes(int32(id)), op.t.Hash(int32(id)), op.rows[id], states); err != nil {
				return err
			}
		}
	}
	g.rows += o.rows
	g.kept += o.kept
	return nil
}

// mergeGroup folds a group of another grouper (its encoded key of hash h,
// its rows, its states, rows counted from its first) into g, its rows
// moved past g's.
func (g *Grouper) mergeGroup(key []byte, h uint64, rows int64, states []agg.State) error {
	gp := g.parts[h>>(64-bits.TrailingZeros(groupPartitions))]
	id := gp.add(key, h, rows)
	for c, gs := range gp.groups {
		st := states[c]
		st.ShiftRows(g.rows)
		if err := gs.MergeState(id, &st); err != nil {
			return fmt.Errorf("column %q: %w", g.req.Values[c].Name, err)
		}
	}
	return nil
}

// add is the group of an encoded key (KeyBytes) of hash h in gp, added
// with its empty states when new, its rows counted.
func (gp *groupPart) add(key []byte, h uint64, rows int64) int32 {
	id := gp.t.FindKey(h, key)
	if d := gp.t.Len() - len(gp.rows); d > 0 {
		gp.growRows(d)
		for _, gs := range gp.groups {
			gs.Grow(d)
		}
	}
	gp.rows[id] += rows
	return id
}

// appendGroup appends group id of partition gp in the binary form of
// MarshalBinary's groups: its encoded key, its rows and its states.
func appendGroup(b []byte, gp *groupPart, id int32) ([]byte, error) {
	key := gp.t.KeyBytes(id)
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(gp.rows[id]))
	for _, gs := range gp.groups {
		st := gs.State(id)
		sb, err := st.MarshalBinary()
		if err != nil {
			return nil, err
		}
		b = binary.AppendUvarint(b, uint64(len(sb)))
		b = append(b, sb...)
	}
	return b, nil
}

// readGroup reads a group that appendGroup wrote from the start of b, of
// at most most rows, into states (one per value column), and returns its
// key, the key's hash, its rows and the bytes after it. The key and the
// states are checked against g's request.
func (g *Grouper) readGroup(b []byte, most uint64, fams []column.Family, states []agg.State) (key []byte, h uint64, rows int64, rest []byte, err error) {
	key, b, err = uvarintBytes(b)
	if err != nil {
		return nil, 0, 0, nil, fmt.Errorf("key: %v", err)
	}
	if err := cpu.CheckKey(g.fixed, fams, key); err != nil {
		return nil, 0, 0, nil, fmt.Errorf("key: %v", err)
	}
	gr, n := binary.Uvarint(b)
	if n <= 0 || gr > most {
		return nil, 0, 0, nil, errors.New("group rows")
	}
	b = b[n:]
	for c, v := range g.req.Values {
		sb, after, err := uvarintBytes(b)
		if err != nil {
			return nil, 0, 0, nil, fmt.Errorf("column %q: %v", v.Name, err)
		}
		b = after
		states[c] = agg.State{}
		if err := states[c].UnmarshalBinary(sb); err != nil {
			return nil, 0, 0, nil, fmt.Errorf("column %q: %v", v.Name, err)
		}
		if states[c].Family != v.Kind.Family() || states[c].Count+states[c].NullCount != int64(gr) {
			return nil, 0, 0, nil, fmt.Errorf("column %q: a state of %s of %d values in a group of %d rows", v.Name, states[c].Family, states[c].Count+states[c].NullCount, gr)
		}
	}
	if h, err = cpu.KeyHash(g.fixed, key); err != nil {
		return nil, 0, 0, nil, fmt.Errorf("key: %v", err)
	}
	return key, h, int64(gr), b, nil
}

// MarshalBinary writes g's groups, with what they are of, for MergeBinary;
// spilled groups are loaded first (LoadAll).
func (g *Grouper) MarshalBinary() ([]byte, error) {
	if err := g.Spent(); err != nil {
		return nil, err
	}
	if err := g.LoadAll(context.Background()); err != nil {
		return nil, err
	}
	b := append([]byte(groupsMagic), g.shape()...)
	b = binary.AppendUvarint(b, uint64(g.rows))
	b = binary.AppendUvarint(b, uint64(g.kept))
	b = binary.AppendUvarint(b, uint64(g.Groups()))
	for _, gp := range g.parts {
		for id := range gp.t.Len() {
			var err error
			if b, err = appendGroup(b, gp, int32(id)); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// MergeBinary folds groups that MarshalBinary wrote, of a grouper of the
// same request, into g: their rows follow g's. Bytes that are not such
// groups are an error, and g is then left as it was only if the error is
// found before a group is merged (a header's): merge into a fresh grouper
// first where that matters.
func (g *Grouper) MergeBinary(data []byte) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("grouped partial states: "+format, args...)
	}
	if err := g.Spent(); err != nil {
		return err
	}
	b, ok := cutPrefix(data, groupsMagic)
	if !ok {
		return bad("not arrowagg's grouped partial states")
	}
	shape := g.shape()
	if len(b) < len(shape) || string(b[:len(shape)]) != string(shape) {
		return bad("of another request (other key or value columns, or aggregates)")
	}
	b = b[len(shape):]
	var nums [3]uint64
	for i := range nums {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return bad("truncated header")
		}
		nums[i], b = v, b[n:]
	}
	rows, kept, groups := nums[0], nums[1], nums[2]
	if rows > 1<<62 || kept > rows || groups > kept || groups > uint64(len(b)) {
		return bad("%d rows, %d kept, %d groups: impossible", rows, kept, groups)
	}
	fams := g.keyFamilies()
	states := make([]agg.State, len(g.req.Values))
	for range groups {
		key, h, gr, rest, err := g.readGroup(b, kept, fams, states)
		if err != nil {
			return bad("%v", err)
		}
		b = rest
		if err := g.mergeGroup(key, h, gr, states); err != nil {
			return bad("%v", err)
		}
	}
	if len(b) != 0 {
		return bad("%d bytes after the groups", len(b))
	}
	g.rows += int64(rows)
	g.kept += int64(kept)
	return nil
}

func cutPrefix(b []byte, p string) ([]byte, bool) {
	if len(b) < len(p) || string(b[:len(p)]) != p {
		return nil, false
	}
	return b[len(p):], true
}

// uvarintBytes reads a length (uvarint) and that many bytes.
func uvarintBytes(b []byte) (v, rest []byte, err error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, nil, errors.New("truncated length")
	}
	b = b[k:]
	if n > uint64(len(b)) {
		return nil, nil, fmt.Errorf("%d bytes where %d are left", n, len(b))
	}
	return b[:n], b[n:], nil
}
