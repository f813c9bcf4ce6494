package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"

	"github.com/zeebo/xxh3"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// Grouped aggregation on the CPU: a KeyTable numbers the distinct keys of
// rows (the values of the key columns, a null key a key of its own), and
// FoldGroups folds a value column's rows into the agg.Groups of their
// groups. The engine partitions rows by their key's hash, so that each
// partition's table and groups belong to one goroutine at a time and every
// group sees its rows in row order.

// KeyTable assigns dense group ids, from 0 in order of first appearance, to
// the distinct keys of rows of one or more key columns: an open-addressing
// hash table over the keys, which it owns (copies). A key column's values
// are keyed by value (a dictionary's by its values, not its indices); a
// float key's -0 and +0 are one key, as are its NaNs. It is not safe for
// concurrent use.
type KeyTable struct {
	fixed bool // one key column of a 64-bit encoding: keys in k64, knull
	// slots are the open-addressing table: group g+1 in the low 32 bits,
	// the high 32 bits of its hash in the high ones (0: empty), so that a
	// probe compares hashes without reading the group's.
	slots []uint64
	mask  uint64
	hash  []uint64 // per group
	k64   []uint64
	knull []bool
	null  int32 // the group of the null fixed key, -1 before it is found
	// mem holds the large per-group arrays (hash, k64, knull, offs),
	// grown in place (column.Arena).
	mem   *column.Arena
	arena []byte  // general: the encoded keys, one after another
	offs  []int64 // general: group i's key is arena[offs[i]:offs[i+1]]
	enc   []byte  // scratch of a row's encoded key

	// The groups of the values of a dictionary key (dictKey), -1 for those
	// not looked up yet, while the dictionary is the same.
	dict    dictHashes
	dictIDs []int32
}

// FixedKey reports whether rows keyed by views (one per key column) take
// the table's fast path: one key column whose values fit one 64-bit word
// (integers, booleans, the temporal types, floats).
func FixedKey(views []*column.View) bool {
	if len(views) != 1 {
		return false
	}
	switch views[0].Kind.Family() {
	case column.FamilySigned, column.FamilyUnsigned, column.FamilyBool, column.FamilyFloat:
		return true
	}
	return false
}

// KeyKindSupported reports whether a column of kind k can be a key.
func KeyKindSupported(k column.Kind) bool {
	switch k.Family() {
	case column.FamilySigned, column.FamilyUnsigned, column.FamilyBool, column.FamilyFloat, column.FamilyDecimal, column.FamilyBytes:
		return true
	}
	return false
}

// NewKeyTable returns an empty table for keys of the fast path (FixedKey) or
// not.
func NewKeyTable(fixed bool) *KeyTable {
	t := &KeyTable{fixed: fixed, mem: new(column.Arena)}
	runtime.AddCleanup(t, (*column.Arena).Free, t.mem)
	t.empty()
	return t
}

// empty makes t a table of no key, its arena kept.
func (t *KeyTable) empty() {
	*t = KeyTable{fixed: t.fixed, slots: make([]uint64, 64), mask: 63, null: -1, mem: t.mem}
	if !t.fixed {
		t.offs = []int64{0}
	}
}

// Release empties the table (no key) and frees its arrays now, rather than
// when t is collected. No array of t's may be in use.
func (t *KeyTable) Release() {
	t.empty()
	t.mem.Free()
}

// slot is the slot of group g of hash h.
func slot(h uint64, g int32) uint64 { return h&^0xffffffff | uint64(uint32(g+1)) }

// Len is the number of groups (distinct keys).
func (t *KeyTable) Len() int { return len(t.hash) }

// Bytes is the memory the table holds, about.
func (t *KeyTable) Bytes() int64 {
	return int64(len(t.slots))*8 + int64(len(t.hash))*8 + int64(len(t.k64))*9 + int64(len(t.arena)) + int64(len(t.offs))*8
}

func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// nullHash is the hash of a null fixed key.
const nullHash = 0x9e3779b97f4a7c15

// keyWord is element i of a fixed key view as one word, canonical for
// floats (-0 as +0, one NaN); ok is false for a null.
func keyWord(v *column.View, i int) (w uint64, ok bool, err error) {
	e, ok, err := elementAt(v, i)
	if !ok || err != nil {
		return 0, ok, err
	}
	w = e.enc[0]
	if v.Kind.Family() == column.FamilyFloat {
		f := math.Float64frombits(w)
		switch {
		case f == 0:
			w = 0
		case f != f:
			w = 0x7ff8000000000001
		}
	}
	return w, true, nil
}

// encodeKey appends the key of row i of views to dst: per key column a tag
// byte (0 null, 1 valid) and the value (8 or 16 bytes of its encoding, or
// a length and the bytes).
func encodeKey(dst []byte, views []*column.View, i int) ([]byte, error) {
	for _, v := range views {
		if v.Kind.Family() == column.FamilyFloat || (v.Kind.Family() != column.FamilyDecimal && v.Kind.Family() != column.FamilyBytes) {
			w, ok, err := keyWord(v, i)
			if err != nil {
				return dst, err
			}
			if !ok {
				dst = append(dst, 0)
				continue
			}
			dst = append(dst, 1)
			dst = binary.LittleEndian.AppendUint64(dst, w)
			continue
		}
		e, ok, err := elementAt(v, i)
		if err != nil {
			return dst, err
		}
		if !ok {
			dst = append(dst, 0)
			continue
		}
		dst = append(dst, 1)
		if v.Kind.Family() == column.FamilyDecimal {
			dst = binary.LittleEndian.AppendUint64(dst, e.enc[0])
			dst = binary.LittleEndian.AppendUint64(dst, e.enc[1])
			continue
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e.bytes)))
		dst = append(dst, e.bytes...)
	}
	return dst, nil
}

// Hasher hashes the keys of rows. Rows of equal keys have equal hashes,
// whoever hashes them: the engine partitions rows by them, and a KeyTable
// finds keys by them. A Hasher is not safe for concurrent use: each
// goroutine has its own.
type Hasher struct {
	Fixed bool // the keys take the fast path (FixedKey)
	enc   []byte
	dict  dictHashes
}

// dictHashes are the hashes of the values of a key's dictionary, kept
// while the dictionary is the same (the morsels of a batch).
type dictHashes struct {
	of     *column.View
	values []byte
	hashes []uint64
}

// maxDictKeys is the largest dictionary whose values' hashes and groups
// are kept (dictKey): past it, keys are read value by value.
const maxDictKeys = 1 << 16

// dictKey reports whether the key views are one dictionary view of at
// most maxDictKeys values.
func dictKey(views []*column.View) bool {
	return len(views) == 1 && views[0].Dict != nil && views[0].Dict.Len <= maxDictKeys
}

// same reports whether d is of dictionary v (the same view of the same
// memory).
func (d *dictHashes) same(v *column.View) bool {
	o := d.of
	if o == nil || o.Kind != v.Kind || o.Len != v.Len || o.Offset != v.Offset || o.ValidityOffset != v.ValidityOffset ||
		len(o.Values) != len(v.Values) || len(o.Offsets) != len(v.Offsets) || len(o.Validity) != len(v.Validity) {
		return false
	}
	first := func(a, b []byte) bool { return len(a) == 0 || &a[0] == &b[0] }
	return first(o.Values, v.Values) && first(o.Offsets, v.Offsets) && first(o.Validity, v.Validity)
}

// hashDict hashes the values of dictionary v (of a key of views' kind)
// into x.dict, unless it holds them already.
func (x *Hasher) hashDict(v *column.View) error {
	if x.dict.same(v) {
		return nil
	}
	x.dict = dictHashes{}
	h := make([]uint64, v.Len)
	if x.Fixed {
		for j := range v.Len {
			w, ok, err := keyWord(v, j)
			if err != nil {
				return err
			}
			if !ok {
				h[j] = nullHash
				continue
			}
			h[j] = mix64(w)
		}
	} else {
		one := []*column.View{v}
		var err error
		for j := range v.Len {
			if x.enc, err = encodeKey(x.enc[:0], one, j); err != nil {
				return err
			}
			h[j] = xxh3.Hash(x.enc)
		}
	}
	d := *v
	x.dict = dictHashes{of: &d, values: v.Values, hashes: h}
	return nil
}

// NewBatch tells the hasher that the next rows are of another batch: the
// hashes of a dictionary it keeps are forgotten (the next may lie in the
// same memory).
func (x *Hasher) NewBatch() { x.dict = dictHashes{} }

// Hash computes the hash of the key of each row i in [lo, hi) of views
// into h[i-lo].
func (x *Hasher) Hash(views []*column.View, lo, hi int, h []uint64) error {
	if dictKey(views) {
		v := views[0]
		if err := x.hashDict(v.Dict); err != nil {
			return err
		}
		var hn uint64 = nullHash
		if !x.Fixed {
			hn = xxh3.Hash([]byte{0})
		}
		for i := lo; i < hi; i++ {
			if !v.Valid(i) {
				h[i-lo] = hn
				continue
			}
			j, err := dictIndex(v, i)
			if err != nil {
				return err
			}
			h[i-lo] = x.dict.hashes[j]
		}
		return nil
	}
	if x.Fixed {
		v := views[0]
		if fixedKeyFast(v, lo, hi, h) {
			return nil
		}
		for i := lo; i < hi; i++ {
			w, ok, err := keyWord(v, i)
			if err != nil {
				return err
			}
			if !ok {
				h[i-lo] = nullHash
				continue
			}
			h[i-lo] = mix64(w)
		}
		return nil
	}
	if len(views) == 1 && bytesKey(views[0]) {
		v := views[0]
		var err error
		for i := lo; i < hi; i++ {
			if x.enc, err = appendBytesKey(x.enc[:0], v, i); err != nil {
				return err
			}
			h[i-lo] = xxh3.Hash(x.enc)
		}
		return nil
	}
	var err error
	for i := lo; i < hi; i++ {
		x.enc, err = encodeKey(x.enc[:0], views, i)
		if err != nil {
			return err
		}
		h[i-lo] = xxh3.Hash(x.enc)
	}
	return nil
}

// fixedKeyFast hashes rows [lo, hi) of a plain (not dictionary) integer
// view in a typed loop; false when v is of another kind.
func fixedKeyFast(v *column.View, lo, hi int, h []uint64) bool {
	if v.Dict != nil {
		return false
	}
	switch v.Kind {
	case column.Int32:
		hashInts(column.Values[int32](v), v, lo, hi, h)
	case column.Int64:
		hashInts(column.Values[int64](v), v, lo, hi, h)
	case column.Int16:
		hashInts(column.Values[int16](v), v, lo, hi, h)
	case column.Int8:
		hashInts(column.Values[int8](v), v, lo, hi, h)
	case column.Uint32:
		hashUints(column.Values[uint32](v), v, lo, hi, h)
	case column.Uint64:
		hashUints(column.Values[uint64](v), v, lo, hi, h)
	case column.Uint16:
		hashUints(column.Values[uint16](v), v, lo, hi, h)
	case column.Uint8:
		hashUints(column.Values[uint8](v), v, lo, hi, h)
	default:
		return false
	}
	return true
}

func hashInts[T int8 | int16 | int32 | int64](vals []T, v *column.View, lo, hi int, h []uint64) {
	for i := lo; i < hi; i++ {
		if v.Validity != nil && !column.BitIsSet(v.Validity, v.ValidityOffset+i) {
			h[i-lo] = nullHash
			continue
		}
		h[i-lo] = mix64(uint64(int64(vals[i])))
	}
}

func hashUints[T uint8 | uint16 | uint32 | uint64](vals []T, v *column.View, lo, hi int, h []uint64) {
	for i := lo; i < hi; i++ {
		if v.Validity != nil && !column.BitIsSet(v.Validity, v.ValidityOffset+i) {
			h[i-lo] = nullHash
			continue
		}
		h[i-lo] = mix64(uint64(vals[i]))
	}
}

// bytesKey reports whether v is a plain (not dictionary) string or binary
// view, whose keys appendBytesKey encodes.
func bytesKey(v *column.View) bool {
	return v.Dict == nil && (v.Kind == column.Binary || v.Kind == column.LargeBinary)
}

// appendBytesKey appends the key of element i of a bytesKey view to dst,
// as encodeKey does; offsets out of order or out of the data are an
// error.
func appendBytesKey(dst []byte, v *column.View, i int) ([]byte, error) {
	if v.Validity != nil && !column.BitIsSet(v.Validity, v.ValidityOffset+i) {
		return append(dst, 0), nil
	}
	var lo, hi int64
	if v.Kind == column.LargeBinary {
		offs := column.Slice[int64](v.Offsets)
		lo, hi = offs[v.Offset+i], offs[v.Offset+i+1]
	} else {
		offs := column.Slice[int32](v.Offsets)
		lo, hi = int64(offs[v.Offset+i]), int64(offs[v.Offset+i+1])
	}
	if lo < 0 || hi < lo || hi > int64(len(v.Values)) {
		return dst, fmt.Errorf("offsets [%d, %d] of element %d outside the %d bytes of data", lo, hi, i, len(v.Values))
	}
	dst = append(dst, 1)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(hi-lo))
	return append(dst, v.Values[lo:hi]...), nil
}

// Find sets ids[k] to the group of the key of row rows[k] of views, whose
// hash (Hasher.Hash) is hashes[k], adding a group for each key not seen before.
func (t *KeyTable) Find(views []*column.View, rows []int32, hashes []uint64, ids []int32) error {
	if t.fixed && findFixedFast(t, views[0], rows, hashes, ids) {
		return nil
	}
	if dictKey(views) {
		return t.findDict(views[0], rows, hashes, ids)
	}
	if !t.fixed && len(views) == 1 && bytesKey(views[0]) {
		v := views[0]
		var err error
		for k, r := range rows {
			if t.enc, err = appendBytesKey(t.enc[:0], v, int(r)); err != nil {
				return err
			}
			ids[k] = t.find(hashes[k], 0, false)
		}
		return nil
	}
	for k, r := range rows {
		h := hashes[k]
		var (
			w    uint64
			null bool
			err  error
		)
		if t.fixed {
			var ok bool
			w, ok, err = keyWord(views[0], int(r))
			null = !ok
		} else {
			t.enc, err = encodeKey(t.enc[:0], views, int(r))
		}
		if err != nil {
			return fmt.Errorf("key of row %d: %w", r, err)
		}
		ids[k] = t.find(h, w, null)
	}
	return nil
}

// NewBatch tells the table that the rows of the next Find calls are of
// another batch: what it keeps of a batch's dictionary is forgotten (the
// next may lie in the same memory).
func (t *KeyTable) NewBatch() { t.dict = dictHashes{} }

// findDict is Find for a dictionary key: each dictionary value's group is
// looked up once, and the rows take their index's.
func (t *KeyTable) findDict(v *column.View, rows []int32, hashes []uint64, ids []int32) error {
	if !t.dict.same(v.Dict) {
		d := *v.Dict
		t.dict = dictHashes{of: &d, values: v.Dict.Values}
		t.dictIDs = slices.Grow(t.dictIDs[:0], v.Dict.Len)[:v.Dict.Len]
		for j := range t.dictIDs {
			t.dictIDs[j] = -1
		}
	}
	one := []*column.View{v.Dict}
	for k, r := range rows {
		if !v.Valid(int(r)) { // a null index: the null key
			var err error
			if err = t.findRow(one, -1, hashes[k], &ids[k]); err != nil {
				return err
			}
			continue
		}
		j, err := dictIndex(v, int(r))
		if err != nil {
			return fmt.Errorf("key of row %d: %w", r, err)
		}
		if id := t.dictIDs[j]; id >= 0 {
			ids[k] = id
			continue
		}
		if err := t.findRow(one, j, hashes[k], &ids[k]); err != nil {
			return err
		}
		t.dictIDs[j] = ids[k]
	}
	return nil
}

// findRow sets *id to the group of element i of the key views (-1: the
// null key), of hash h.
func (t *KeyTable) findRow(views []*column.View, i int, h uint64, id *int32) error {
	var (
		w    uint64
		null bool
		err  error
	)
	switch {
	case i < 0 && t.fixed:
		null = true
	case i < 0:
		t.enc = append(t.enc[:0], 0)
	case t.fixed:
		var ok bool
		w, ok, err = keyWord(views[0], i)
		null = !ok
	default:
		t.enc, err = encodeKey(t.enc[:0], views, i)
	}
	if err != nil {
		return err
	}
	*id = t.find(h, w, null)
	return nil
}

// findFixedFast is Find for a plain (not dictionary) integer key view, in
// a typed loop; false, having done nothing, for the other kinds.
func findFixedFast(t *KeyTable, v *column.View, rows []int32, hashes []uint64, ids []int32) bool {
	if v.Dict != nil {
		return false
	}
	switch v.Kind {
	case column.Int64:
		findInts(t, column.Values[int64](v), v, rows, hashes, ids)
	case column.Int32:
		findInts(t, column.Values[int32](v), v, rows, hashes, ids)
	case column.Int16:
		findInts(t, column.Values[int16](v), v, rows, hashes, ids)
	case column.Int8:
		findInts(t, column.Values[int8](v), v, rows, hashes, ids)
	case column.Uint64:
		findUints(t, column.Values[uint64](v), v, rows, hashes, ids)
	case column.Uint32:
		findUints(t, column.Values[uint32](v), v, rows, hashes, ids)
	case column.Uint16:
		findUints(t, column.Values[uint16](v), v, rows, hashes, ids)
	case column.Uint8:
		findUints(t, column.Values[uint8](v), v, rows, hashes, ids)
	default:
		return false
	}
	return true
}

func findInts[T int8 | int16 | int32 | int64](t *KeyTable, vals []T, v *column.View, rows []int32, hashes []uint64, ids []int32) {
	for k, r := range rows {
		if v.Validity != nil && !column.BitIsSet(v.Validity, v.ValidityOffset+int(r)) {
			ids[k] = t.find(hashes[k], 0, true)
			continue
		}
		ids[k] = t.findWord(hashes[k], uint64(int64(vals[r])))
	}
}

func findUints[T uint8 | uint16 | uint32 | uint64](t *KeyTable, vals []T, v *column.View, rows []int32, hashes []uint64, ids []int32) {
	for k, r := range rows {
		if v.Validity != nil && !column.BitIsSet(v.Validity, v.ValidityOffset+int(r)) {
			ids[k] = t.find(hashes[k], 0, true)
			continue
		}
		ids[k] = t.findWord(hashes[k], uint64(vals[r]))
	}
}

// findWord is find of a valid fixed key w, its probe inlined.
func (t *KeyTable) findWord(h, w uint64) int32 {
	i := h & t.mask
	for {
		s := t.slots[i]
		if s == 0 {
			return t.find(h, w, false)
		}
		g := int32(uint32(s)) - 1
		if (s^h)>>32 == 0 && t.k64[g] == w && g != t.null {
			return g
		}
		i = (i + 1) & t.mask
	}
}

// Hash is the hash of group g's key.
func (t *KeyTable) Hash(g int32) uint64 { return t.hash[g] }

// FindFrom is the group of the key of group og of table o (of the same
// key columns), added when new.
func (t *KeyTable) FindFrom(o *KeyTable, og int32) int32 {
	if t.fixed {
		if o.knull[og] {
			return t.find(o.hash[og], 0, true)
		}
		return t.findWord(o.hash[og], o.k64[og])
	}
	t.enc = append(t.enc[:0], o.arena[o.offs[og]:o.offs[og+1]]...)
	return t.find(o.hash[og], 0, false)
}

// find is the group of a key of hash h (w and null for the fast path, t.enc
// otherwise), added when new.
func (t *KeyTable) find(h, w uint64, null bool) int32 {
	i := h & t.mask
	for {
		s := t.slots[i]
		if s == 0 {
			break
		}
		g := int32(uint32(s)) - 1
		if (s^h)>>32 == 0 && t.equal(g, w, null) {
			return g
		}
		i = (i + 1) & t.mask
	}
	g := int32(len(t.hash))
	t.hash = append(column.Grow(t.mem, t.hash, 1), h)
	if t.fixed {
		t.k64 = append(column.Grow(t.mem, t.k64, 1), w)
		t.knull = append(column.Grow(t.mem, t.knull, 1), null)
		if null {
			t.null = g
		}
	} else {
		t.arena = append(t.arena, t.enc...)
		t.offs = append(column.Grow(t.mem, t.offs, 1), int64(len(t.arena)))
	}
	t.slots[i] = slot(h, g)
	if 2*len(t.hash) > len(t.slots) {
		t.rehash()
	}
	return g
}

func (t *KeyTable) equal(g int32, w uint64, null bool) bool {
	if t.fixed {
		return t.knull[g] == null && (null || t.k64[g] == w)
	}
	return string(t.arena[t.offs[g]:t.offs[g+1]]) == string(t.enc)
}

func (t *KeyTable) rehash() {
	t.slots = make([]uint64, 2*len(t.slots))
	t.mask = uint64(len(t.slots) - 1)
	for g, h := range t.hash {
		i := h & t.mask
		for t.slots[i] != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = slot(h, int32(g))
	}
}

// Key is the key of group g: per key column, whether it is null and its
// value (agg.Value: the encoding of the State's extremes, a float, a
// boolean or bytes, which are the table's).
func (t *KeyTable) Key(g int32, fams []column.Family, out []KeyValue) {
	if t.fixed {
		out[0] = wordValue(fams[0], t.k64[g], !t.knull[g])
		return
	}
	b := t.arena[t.offs[g]:t.offs[g+1]]
	for c, f := range fams {
		tag := b[0]
		b = b[1:]
		if tag == 0 {
			out[c] = KeyValue{}
			continue
		}
		switch f {
		case column.FamilyDecimal:
			out[c] = KeyValue{Valid: true, Value: agg.Value{Bits: [2]uint64{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])}}}
			b = b[16:]
		case column.FamilyBytes:
			n := binary.LittleEndian.Uint32(b)
			out[c] = KeyValue{Valid: true, Value: agg.Value{Bytes: b[4 : 4+n]}}
			b = b[4+n:]
		default:
			out[c] = wordValue(f, binary.LittleEndian.Uint64(b), true)
			b = b[8:]
		}
	}
}

// KeyValue is one key column's value of a group.
type KeyValue struct {
	Valid bool
	Value agg.Value
}

func wordValue(f column.Family, w uint64, valid bool) KeyValue {
	if !valid {
		return KeyValue{}
	}
	switch f {
	case column.FamilyFloat:
		return KeyValue{Valid: true, Value: agg.Value{Float: math.Float64frombits(w), Bits: [2]uint64{w}}}
	case column.FamilyBool:
		return KeyValue{Valid: true, Value: agg.Value{Bool: w == 1, Bits: [2]uint64{w}}}
	}
	return KeyValue{Valid: true, Value: agg.Value{Bits: [2]uint64{w}}}
}

// FoldGroups folds rows rows[k] of v (element indices) into group ids[k]
// of g; a row's number is v.Row plus its index.
func FoldGroups(g *agg.Groups, v *column.View, rows, ids []int32) error {
	if v.Dict == nil {
		switch v.Kind {
		case column.Int8:
			foldSigned(g, column.Slice[int8](v.Values), v, rows, ids)
			return nil
		case column.Int16:
			foldSigned(g, column.Slice[int16](v.Values), v, rows, ids)
			return nil
		case column.Int32:
			foldSigned(g, column.Slice[int32](v.Values), v, rows, ids)
			return nil
		case column.Int64:
			foldSigned(g, column.Slice[int64](v.Values), v, rows, ids)
			return nil
		case column.Uint8:
			foldUnsigned(g, column.Slice[uint8](v.Values), v, rows, ids)
			return nil
		case column.Uint16:
			foldUnsigned(g, column.Slice[uint16](v.Values), v, rows, ids)
			return nil
		case column.Uint32:
			foldUnsigned(g, column.Slice[uint32](v.Values), v, rows, ids)
			return nil
		case column.Uint64:
			foldUnsigned(g, column.Slice[uint64](v.Values), v, rows, ids)
			return nil
		case column.Float32:
			foldFloat(g, column.Slice[float32](v.Values), v, rows, ids)
			return nil
		case column.Float64:
			foldFloat(g, column.Slice[float64](v.Values), v, rows, ids)
			return nil
		case column.Opaque:
			for k, r := range rows {
				if v.Valid(int(r)) {
					g.AddCount(ids[k])
				} else {
					g.AddNull(ids[k])
				}
			}
			return nil
		}
	}
	// The other kinds, and dictionaries: a value at a time.
	fam := v.Kind.Family()
	for k, r := range rows {
		e, ok, err := elementAt(v, int(r))
		if err != nil {
			return err
		}
		id := ids[k]
		if !ok {
			g.AddNull(id)
			continue
		}
		row := v.Row + int64(r)
		switch fam {
		case column.FamilySigned:
			g.AddSigned(id, int64(e.enc[0]), row)
		case column.FamilyUnsigned:
			g.AddUnsigned(id, e.enc[0], row)
		case column.FamilyFloat:
			g.AddFloat(id, math.Float64frombits(e.enc[0]), row)
		case column.FamilyDecimal:
			g.AddDecimal(id, e.enc[0], e.enc[1], row)
		case column.FamilyBool:
			g.AddBool(id, e.enc[0] == 1, row)
		case column.FamilyBytes:
			g.AddBytes(id, e.bytes, row)
		default:
			return fmt.Errorf("grouped aggregation of %s: unsupported", v.Type)
		}
	}
	return nil
}

func foldSigned[T int8 | int16 | int32 | int64](g *agg.Groups, vals []T, v *column.View, rows, ids []int32) {
	agg.FoldSigned(g, vals[v.Offset:], v.Validity, v.ValidityOffset, rows, ids, v.Row)
}

func foldUnsigned[T uint8 | uint16 | uint32 | uint64](g *agg.Groups, vals []T, v *column.View, rows, ids []int32) {
	agg.FoldUnsigned(g, vals[v.Offset:], v.Validity, v.ValidityOffset, rows, ids, v.Row)
}

func foldFloat[T float32 | float64](g *agg.Groups, vals []T, v *column.View, rows, ids []int32) {
	agg.FoldFloat(g, vals[v.Offset:], v.Validity, v.ValidityOffset, rows, ids, v.Row)
}

// KeyBytes is group g's key in the table's encoding (the key columns'
// tags and values; for the fast path a tag and the word), which FindKey
// reads back: a key as it travels, with its groups' partial states.
func (t *KeyTable) KeyBytes(g int32) []byte {
	if t.fixed {
		if t.knull[g] {
			return []byte{0}
		}
		return binary.LittleEndian.AppendUint64([]byte{1}, t.k64[g])
	}
	return t.arena[t.offs[g]:t.offs[g+1]]
}

// KeyHash is the hash of an encoded key (KeyBytes) of a table of the fast
// path or not: the hash Hasher gives the row it came from.
func KeyHash(fixed bool, key []byte) (uint64, error) {
	if !fixed {
		return xxh3.Hash(key), nil
	}
	switch {
	case len(key) == 1 && key[0] == 0:
		return nullHash, nil
	case len(key) == 9 && key[0] == 1:
		return mix64(binary.LittleEndian.Uint64(key[1:])), nil
	}
	return 0, fmt.Errorf("a key of %d bytes is not a one-word key", len(key))
}

// FindKey is the group of an encoded key (KeyBytes) of hash h (KeyHash),
// added when new. The bytes of a key of several columns are not checked:
// they are the encoding's.
func (t *KeyTable) FindKey(h uint64, key []byte) int32 {
	if t.fixed {
		if key[0] == 0 {
			return t.find(h, 0, true)
		}
		return t.findWord(h, binary.LittleEndian.Uint64(key[1:]))
	}
	t.enc = append(t.enc[:0], key...)
	return t.find(h, 0, false)
}

// CheckKey reports whether key is an encoding (KeyBytes) of a key of
// columns of families fams, for the fast path or not: keys from outside are
// checked before a table holds them.
func CheckKey(fixed bool, fams []column.Family, key []byte) error {
	if fixed {
		_, err := KeyHash(true, key)
		return err
	}
	b := key
	for c, f := range fams {
		if len(b) == 0 {
			return fmt.Errorf("key ends before column %d", c)
		}
		tag := b[0]
		b = b[1:]
		switch {
		case tag == 0:
			continue
		case tag != 1:
			return fmt.Errorf("key column %d has tag %d", c, tag)
		}
		n := 8
		switch f {
		case column.FamilyDecimal:
			n = 16
		case column.FamilyBytes:
			if len(b) < 4 {
				return fmt.Errorf("key column %d: no length", c)
			}
			n = 4 + int(binary.LittleEndian.Uint32(b))
			if n < 4 {
				return fmt.Errorf("key column %d: length overflows", c)
			}
		}
		if len(b) < n {
			return fmt.Errorf("key column %d: %d bytes where %d are needed", c, len(b), n)
		}
		b = b[n:]
	}
	if len(b) != 0 {
		return fmt.Errorf("%d bytes after the key", len(b))
	}
	return nil
}
