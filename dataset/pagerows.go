package dataset

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/column"
)

// pageRows is where the page path puts a flat leaf's rows instead of
// folding them (pageScratch.rows): the values of a column chunk at their
// rows, and its validity, from which an Arrow array of the chunk is made
// (the grouped route's: grouping needs every column's value of a row
// together). Dictionary-encoded values are gathered from the dictionary.
type pageRows struct {
	typ    arrow.DataType
	width  int    // bytes of a value
	values []byte // rows * width
	valid  []byte // a bit per row; nil while no null was met
	nulls  int64
	// rows are the rows held: rows [lo, lo+rows) of the chunk's chunk
	// (a window of them; the others are dropped as they are decoded).
	rows, lo, chunk int64
	// dictKey: values are int32 indices into dict (pageLeaf.dictKey), the
	// chunk's dictionary (nil: none met, an empty one); typ is then the
	// dictionary type.
	dictKey bool
	dict    arrow.Array
	// bufs holds values and valid (from mem), until array or release.
	mem  memory.Allocator
	bufs [2]*memory.Buffer
}

// newPageRows is the rows buffer of rows [lo, hi) of a chunk of chunk
// values of leaf l, its buffers from mem (not zeroed: a value under a null
// is any value, as Arrow allows).
func newPageRows(l *pageLeaf, lo, hi, chunk int64, mem memory.Allocator) *pageRows {
	w := pageRowWidth(l)
	rows := hi - lo
	p := &pageRows{typ: l.typ, width: w, rows: rows, lo: lo, chunk: chunk, mem: mem, dictKey: l.dictKey}
	if l.dictKey {
		p.typ = dictKeyType(l.typ)
	}
	p.values = p.buffer(1, int(rows)*w)
	return p
}

// buffer makes buffer k of n bytes.
func (p *pageRows) buffer(k, n int) []byte {
	b := memory.NewResizableBuffer(p.mem)
	b.Resize(n)
	p.bufs[k] = b
	return b.Bytes()
}

// release releases the buffers and the dictionary (once array has taken
// them, its own).
func (p *pageRows) release() {
	for k, b := range p.bufs {
		if b != nil {
			b.Release()
			p.bufs[k] = nil
		}
	}
	if p.dict != nil {
		p.dict.Release()
		p.dict = nil
	}
}

// dictKeyType is the type of the arrays of a dictKey leaf of value type
// dt: as pqarrow reads a column as a dictionary.
func dictKeyType(dt arrow.DataType) arrow.DataType {
	return &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: dt}
}

// setFixedDict makes the n entries of a dictionary of fixed-width values,
// data, the dictionary of the rows (of a dictKey leaf), a copy.
func (p *pageRows) setFixedDict(data []byte, n int) {
	values := memory.NewResizableBuffer(p.mem)
	defer values.Release()
	values.Resize(len(data))
	copy(values.Bytes(), data)
	d := array.NewData(p.typ.(*arrow.DictionaryType).ValueType, n, []*memory.Buffer{nil, values}, nil, 0, 0)
	defer d.Release()
	p.dict = array.MakeFromData(d) // (one dictionary page a chunk: checkDictPage)
}

// setDict makes the n entries of a PLAIN BYTE_ARRAY dictionary page, data,
// the dictionary of the rows (of a dictKey leaf; one dictionary page a
// chunk: checkDictPage).
func (p *pageRows) setDict(data []byte, n int) error {
	vt := p.typ.(*arrow.DictionaryType).ValueType
	large := vt.ID() == arrow.LARGE_STRING || vt.ID() == arrow.LARGE_BINARY
	ow := 4
	if large {
		ow = 8
	}
	offsets := memory.NewResizableBuffer(p.mem)
	defer offsets.Release()
	offsets.Resize((n + 1) * ow)
	values := memory.NewResizableBuffer(p.mem)
	defer values.Release()
	values.Resize(len(data)) // (the entries are fewer bytes than the page)
	ob, vb := offsets.Bytes(), values.Bytes()
	pos, end := 0, 0
	for i := 0; i <= n; i++ {
		if large {
			binary.LittleEndian.PutUint64(ob[8*i:], uint64(end))
		} else {
			binary.LittleEndian.PutUint32(ob[4*i:], uint32(end))
		}
		if i == n {
			break
		}
		if len(data)-pos < 4 {
			return fmt.Errorf("dictionary entry %d of %d: %d bytes left for its length", i, n, len(data)-pos)
		}
		k := binary.LittleEndian.Uint32(data[pos:])
		pos += 4
		if uint64(k) > uint64(len(data)-pos) {
			return fmt.Errorf("dictionary entry %d of %d: %d bytes where %d are left", i, n, k, len(data)-pos)
		}
		end += copy(vb[end:], data[pos:pos+int(k)])
		pos += int(k)
	}
	values.Resize(end)
	d := array.NewData(vt, n, []*memory.Buffer{nil, offsets, values}, nil, 0, 0)
	defer d.Release()
	p.dict = array.MakeFromData(d)
	return nil
}

// rowBuffers is an allocator that keeps the buffers freed to it for those
// of the same size allocated next (the chunks of a file's row groups have
// the same rows, but the last), up to rowBuffersKept bytes; the others go
// to the garbage collector. Its buffers are not zeroed. It is safe for
// concurrent use. What it keeps is not charged to the memory budget (a
// buffer is charged with its row group while in use): rowBuffersKept is
// small beside the row groups decoded at once.
type rowBuffers struct {
	mu   sync.Mutex
	free map[int][][]byte
	kept int
}

const rowBuffersKept = 64 << 20

func (a *rowBuffers) Allocate(n int) []byte {
	a.mu.Lock()
	if bs := a.free[n]; len(bs) > 0 {
		b := bs[len(bs)-1]
		a.free[n] = bs[:len(bs)-1]
		a.kept -= n
		a.mu.Unlock()
		return b
	}
	a.mu.Unlock()
	return make([]byte, n)
}

func (a *rowBuffers) Reallocate(n int, b []byte) []byte {
	if n <= cap(b) {
		return b[:n]
	}
	nb := a.Allocate(n)
	copy(nb, b)
	a.Free(b)
	return nb
}

func (a *rowBuffers) Free(b []byte) {
	n := len(b)
	if n == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kept+n > rowBuffersKept {
		return
	}
	if a.free == nil {
		a.free = map[int][][]byte{}
	}
	a.free[n] = append(a.free[n], b)
	a.kept += n
}

// pageRowWidth is the bytes of a value of l at its row: those of its views
// (decimals widened to 16 bytes, INT96 converted to 8).
func pageRowWidth(l *pageLeaf) int {
	switch {
	case l.flba > 0:
		return 16
	case l.int96:
		return 8
	case l.kind == column.FixedSizeBinary:
		return l.viewWidth()
	case l.dictKey:
		return 4 // (int32 indices)
	}
	return l.kind.Width()
}

// pageRowsBytes is what the rows buffer of a chunk of rows values of l
// takes.
func pageRowsBytes(l *pageLeaf, rows int64) int64 {
	return rows*int64(pageRowWidth(l)) + (rows+7)/8
}

// held is the rows of [at, at+n) of the chunk that p holds, from its own
// row at on; ok is false when it holds none of them.
func (p *pageRows) held(at, n int64) (from, m int64, ok bool) {
	a, b := max(at, p.lo), min(at+n, p.lo+p.rows)
	return a - p.lo, b - a, a < b
}

// nullRows records rows [at, at+n) of the chunk as null.
func (p *pageRows) nullRows(at, n int64) error {
	if at < 0 || n < 0 || at+n > p.chunk {
		return fmt.Errorf("rows [%d, %d) of a column chunk of %d", at, at+n, p.chunk)
	}
	at, n, ok := p.held(at, n)
	if !ok {
		return nil
	}
	p.needValidity()
	column.SetBits(p.valid, int(at), int(n), false)
	p.nulls += n
	if p.dictKey { // (indices under nulls are 0, in the dictionary if any)
		clear(p.values[int(at)*p.width : int(at+n)*p.width])
	}
	return nil
}

// needValidity makes the validity bitmap, every row valid, once a null is
// met.
func (p *pageRows) needValidity() {
	if p.valid != nil {
		return
	}
	p.valid = p.buffer(0, int(bitutil.BytesForBits(p.rows)))
	bitutil.SetBitsTo(p.valid, 0, p.rows, true)
}

// indicesAt is where the k dictionary indices of the window of e rows at
// row at of the chunk are decoded when they are the rows themselves: those
// of a dictKey leaf (p not nil) of no null in the window (k == e), all of
// whose rows p holds, in place; nil otherwise (decoded elsewhere, then
// placed). place leaves them there.
func (p *pageRows) indicesAt(l *pageLeaf, at int64, k, e int) []byte {
	if p == nil || !l.dictKey || !p.dictKey || k != e || at < p.lo || at+int64(e) > p.lo+p.rows {
		return nil
	}
	at -= p.lo
	return p.values[int(at)*4 : (int(at)+e)*4]
}

// place puts the rows [at, at+m) of the chunk, a window's, at their rows:
// v's k dense values (or their indices into v.Dict), valid the rows'
// validity (nil: none is null, k == m); those p does not hold are dropped.
func (p *pageRows) place(v *column.View, valid []byte, at int64, m int) error {
	k := v.Len
	if at < 0 || at+int64(m) > p.chunk || k > m {
		return fmt.Errorf("rows [%d, %d) of a column chunk of %d", at, at+int64(m), p.chunk)
	}
	from, n, ok := p.held(at, int64(m))
	if !ok {
		return nil
	}
	if skip := from + p.lo - at; skip > 0 || n < int64(m) {
		// Some rows held: their dense values (or indices), and their
		// validity from bit 0.
		ew := p.width
		if v.Dict != nil {
			ew = 4
		}
		first, kept := int(skip), int(n)
		var held []byte
		if valid != nil {
			first = bitutil.CountSetBits(valid, 0, int(skip))
			kept = bitutil.CountSetBits(valid, int(skip), int(n))
			held = make([]byte, bitutil.BytesForBits(n))
			column.CopyBits(valid, int(skip), int(n), held, 0)
		}
		if len(v.Values) < (first+kept)*ew {
			return fmt.Errorf("%d bytes of values for %d values of %d bytes", len(v.Values), first+kept, ew)
		}
		sub := *v
		sub.Values, sub.Len = v.Values[first*ew:(first+kept)*ew], kept
		return p.place(&sub, held, at+skip, int(n))
	}
	at = from
	w := p.width
	out := p.values[int(at)*w : (int(at)+m)*w]
	if valid != nil {
		p.needValidity()
		column.CopyBits(valid, 0, m, p.valid, int(at))
		p.nulls += int64(m - k)
	}
	if v.Dict != nil {
		return gatherRows(v.Dict.Values, v.Dict.Len, column.Slice[int32](v.Values)[:k], w, valid, m, out)
	}
	if len(v.Values) < k*w {
		return fmt.Errorf("%d bytes of values for %d values of %d bytes", len(v.Values), k, w)
	}
	if valid == nil {
		if k > 0 && &out[0] != &v.Values[0] { // (indicesAt's are there)
			copy(out, v.Values[:k*w])
		}
		return nil
	}
	if p.dictKey {
		clear(out) // (indices under nulls are 0)
	}
	switch w {
	case 2:
		spreadValues(column.Slice[uint16](v.Values)[:k], valid, m, column.Slice[uint16](out))
	case 4:
		spreadValues(column.Slice[uint32](v.Values)[:k], valid, m, column.Slice[uint32](out))
	case 8:
		spreadValues(column.Slice[uint64](v.Values)[:k], valid, m, column.Slice[uint64](out))
	default:
		spreadBytes(v.Values, w, valid, m, out)
	}
	return nil
}

// gatherRows puts dictionary entries idx (of dict, of n entries of w bytes)
// at the rows [0, m) of out whose bit is set in valid (every row when valid
// is nil), in order.
func gatherRows(dict []byte, n int, idx []int32, w int, valid []byte, m int, out []byte) error {
	if len(dict) < n*w {
		return fmt.Errorf("a dictionary of %d bytes for %d values of %d bytes", len(dict), n, w)
	}
	for _, j := range idx {
		if j < 0 || int(j) >= n {
			return fmt.Errorf("dictionary index %d of a dictionary of %d values", j, n)
		}
	}
	row := func(i, j int) { copy(out[i*w:(i+1)*w], dict[int(idx[j])*w:(int(idx[j])+1)*w]) }
	switch {
	case valid == nil && w == 8:
		d, o := column.Slice[uint64](dict), column.Slice[uint64](out)
		for i, j := range idx {
			o[i] = d[j]
		}
	case valid == nil && w == 4:
		d, o := column.Slice[uint32](dict), column.Slice[uint32](out)
		for i, j := range idx {
			o[i] = d[j]
		}
	case valid == nil:
		for i := range idx {
			row(i, i)
		}
	case w == 8:
		gatherValid(column.Slice[uint64](dict), idx, valid, m, column.Slice[uint64](out))
	case w == 4:
		gatherValid(column.Slice[uint32](dict), idx, valid, m, column.Slice[uint32](out))
	default:
		j := 0
		for i := range m {
			if bitutil.BitIsSet(valid, i) {
				row(i, j)
				j++
			}
		}
	}
	return nil
}

// gatherValid puts dict[idx[j]] at the j-th row of [0, m) whose bit is set
// in valid, in order (spreadValues' walk of the validity, a word at a
// time); idx are checked.
func gatherValid[T uint32 | uint64](dict []T, idx []int32, valid []byte, m int, out []T) {
	j := 0
	for w := 0; w*64 < m; w++ {
		base := w * 64
		for word := validWord(valid, w, m); word != 0; word &= word - 1 {
			out[base+bits.TrailingZeros64(word)] = dict[idx[j]]
			j++
		}
	}
}

// array is the chunk's rows as an Arrow array of its type (the buffers
// shared, not copied).
func (p *pageRows) array() arrow.Array {
	defer p.release()
	valid := p.bufs[0]
	if p.nulls == 0 {
		valid = nil
	}
	if !p.dictKey {
		data := array.NewData(p.typ, int(p.rows), []*memory.Buffer{valid, p.bufs[1]}, nil, int(p.nulls), 0)
		defer data.Release()
		return array.MakeFromData(data)
	}
	data := array.NewData(arrow.PrimitiveTypes.Int32, int(p.rows), []*memory.Buffer{valid, p.bufs[1]}, nil, int(p.nulls), 0)
	defer data.Release()
	idx := array.MakeFromData(data)
	defer idx.Release()
	if p.dict == nil { // (no dictionary page: every row null)
		p.dict = array.MakeArrayOfNull(p.mem, p.typ.(*arrow.DictionaryType).ValueType, 0)
	}
	return array.NewDictionaryArray(p.typ, idx, p.dict)
}

// decodeRows decodes rows [lo, hi) of the chunk c of page leaf l, rows
// rows, into its rows (pageRows) through the page path: the pages walked
// and checked by g as they are read, and decoded as when they are
// aggregated; but a data page none of whose rows is in keep (nil: every
// row) and in [lo, hi) is not read, its rows null.
func (s *pageScratch) decodeRows(ctx context.Context, g *pageGuard, c *guardChunk, l *pageLeaf, rows int64, keep []rowRange, lo, hi int64, mem memory.Allocator) (*pageRows, error) {
	s.rows = newPageRows(l, lo, hi, rows, mem)
	s.stats = 0
	s.keep = clipRanges(keep, rows, lo, hi)
	defer func() { s.rows, s.keep = nil, nil }()
	rs := s.rows
	if _, err := s.aggregateChunk(ctx, nil, g, c, l, rows, true); err != nil {
		rs.release()
		return nil, err
	}
	return rs, nil
}

// clipRanges is keep (nil: every row of rows) within [lo, hi): nil when
// that is every row.
func clipRanges(keep []rowRange, rows, lo, hi int64) []rowRange {
	if keep == nil {
		if lo <= 0 && hi >= rows {
			return nil
		}
		keep = []rowRange{{0, rows}}
	}
	out := []rowRange{}
	for _, r := range keep {
		if a, b := max(r.lo, lo), min(r.hi, hi); a < b {
			out = append(out, rowRange{a, b})
		}
	}
	return out
}
