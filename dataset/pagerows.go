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

// add places the rows of window v (its Row the chunk's row of its first
// value; values at their rows with a validity bitmap when it has nulls;
// indices into v.Dict when dictionary-encoded).
func (p *pageRows) add(v *column.View) error {
	at, n := v.Row, int64(v.Len)
	if at < 0 || at+n > p.rows {
		return fmt.Errorf("rows [%d, %d) of a column chunk of %d", at, at+n, p.rows)
	}
	w := int64(p.width)
	out := p.values[at*w : (at+n)*w]
	if v.Dict != nil {
		idx := column.Slice[int32](v.Values)[:n]
		d, dl := v.Dict.Values, int32(v.Dict.Len)
		for i, j := range idx {
			if v.Validity != nil && !bitutil.BitIsSet(v.Validity, i) {
				continue
			}
			if j < 0 || j >= dl {
				return fmt.Errorf("dictionary index %d of a dictionary of %d values", j, dl)
			}
			copy(out[int64(i)*w:int64(i+1)*w], d[int64(j)*w:int64(j+1)*w])
		}
	} else {
		if int64(len(v.Values)) < n*w {
			return fmt.Errorf("%d bytes of values for %d values of %d bytes", len(v.Values), n, w)
		}
		copy(out, v.Values[:n*w])
	}
	if v.Validity != nil && v.NullCount > 0 {
		p.needValidity()
		// (bitutil's copy of a bitmap at a bit offset)
		bitutil.CopyBitmap(v.Validity, 0, int(n), p.valid, int(at))
		p.nulls += int64(v.NullCount)
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
