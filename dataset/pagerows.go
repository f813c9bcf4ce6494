package dataset

import (
	"context"
	"fmt"

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
	rows   int64
}

// newPageRows is the rows buffer of a chunk of rows values of leaf l.
func newPageRows(l *pageLeaf, rows int64) *pageRows {
	w := pageRowWidth(l)
	return &pageRows{typ: l.typ, width: w, values: make([]byte, rows*int64(w)), rows: rows}
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
	}
	return l.kind.Width()
}

// pageRowsBytes is what the rows buffer of a chunk of rows values of l
// takes.
func pageRowsBytes(l *pageLeaf, rows int64) int64 {
	return rows*int64(pageRowWidth(l)) + (rows+7)/8
}

// nullRows records rows [at, at+n) as null.
func (p *pageRows) nullRows(at, n int64) error {
	if at < 0 || n < 0 || at+n > p.rows {
		return fmt.Errorf("rows [%d, %d) of a column chunk of %d", at, at+n, p.rows)
	}
	p.needValidity()
	bitutil.SetBitsTo(p.valid, at, n, false)
	p.nulls += n
	return nil
}

// needValidity makes the validity bitmap, every row valid, once a null is
// met.
func (p *pageRows) needValidity() {
	if p.valid != nil {
		return
	}
	p.valid = make([]byte, bitutil.BytesForBits(p.rows))
	bitutil.SetBitsTo(p.valid, 0, p.rows, true)
}

// place puts the rows [at, at+m) of a window at their rows: v's k dense
// values (or their indices into v.Dict), valid the rows' validity (nil:
// none is null, k == m).
func (p *pageRows) place(v *column.View, valid []byte, at int64, m int) error {
	k := v.Len
	if at < 0 || at+int64(m) > p.rows || k > m {
		return fmt.Errorf("rows [%d, %d) of a column chunk of %d", at, at+int64(m), p.rows)
	}
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
		copy(out, v.Values[:k*w])
		return nil
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

// array is the chunk's rows as an Arrow array of its type (the buffers
// shared, not copied).
func (p *pageRows) array() arrow.Array {
	var valid *memory.Buffer
	if p.nulls > 0 {
		valid = memory.NewBufferBytes(p.valid)
	}
	data := array.NewData(p.typ, int(p.rows), []*memory.Buffer{valid, memory.NewBufferBytes(p.values)}, nil, int(p.nulls), 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// decodeRows decodes the chunk c of page leaf l, rows rows, into its rows
// (pageRows) through the page path: the pages walked and checked by g as
// they are read, and decoded as when they are aggregated.
func (s *pageScratch) decodeRows(ctx context.Context, g *pageGuard, c *guardChunk, l *pageLeaf, rows int64) (*pageRows, error) {
	s.rows = newPageRows(l, rows)
	s.stats = 0
	defer func() { s.rows = nil }()
	rs := s.rows
	if _, err := s.aggregateChunk(ctx, nil, g, c, l, rows, true); err != nil {
		return nil, err
	}
	return rs, nil
}
