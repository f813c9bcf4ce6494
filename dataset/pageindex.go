package dataset

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"unsafe"

	"github.com/apache/arrow/go/v17/parquet/metadata"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/budget"
)

// Page indexes. A Parquet writer may store, for a column chunk, a
// ColumnIndex (parquet.thrift): for each data page, whether it holds nulls
// only, the least and greatest of its values and its null count. Grouping
// with a filter (Group) tests each page of the filter's columns as it tests
// row groups' statistics (engine.Pruner): rows that no page of theirs can
// keep are neither decoded by the page path nor grouped.
//
// A page's rows are those the page walk finds (the data pages' value counts
// of the chunk, flat columns only), not those the OffsetIndex says: a
// column index is used only when it has an entry for each data page the
// walk found. Its values answer as row-group statistics do (statsLeaf.
// extremes: the same types, writers and checks); a page whose entry does
// not is one that may keep every row.

// chunkIndex is the ColumnIndex of a column chunk: per data page, whether
// it is all nulls, its plain-encoded extremes and its null count.
type chunkIndex struct {
	nullPages  []bool
	mins, maxs [][]byte
	nullCounts []int64 // nil: not written
}

// maxColumnIndexBytes bounds the bytes of a column chunk's column index
// that are read (a writer's is a few dozen bytes a page).
const maxColumnIndexBytes = 16 << 20

// columnIndexAt returns where the column index of the chunk of column col
// in row group rg of a file of size bytes lies: n bytes at off; n 0 when
// the chunk has none.
func columnIndexAt(md *metadata.FileMetaData, size int64, rg, col int) (off, n int64, err error) {
	defer recoverTo(&err) // (corrupt metadata)
	g := md.RowGroups[rg]
	if col >= len(g.Columns) || g.Columns[col] == nil {
		return 0, 0, errors.New("no column chunk metadata")
	}
	cc := g.Columns[col]
	if !cc.IsSetColumnIndexOffset() || !cc.IsSetColumnIndexLength() {
		return 0, 0, nil
	}
	if cc.IsSetCryptoMetadata() {
		return 0, 0, errors.New("an encrypted column chunk")
	}
	off, n = cc.GetColumnIndexOffset(), int64(cc.GetColumnIndexLength())
	if off < 0 || n <= 0 || n > maxColumnIndexBytes || off > size-n {
		return 0, 0, fmt.Errorf("a column index of %d bytes at %d, in a file of %d", n, off, size)
	}
	return off, n, nil
}

// pageIndexBytes bounds what a data page's entry of a column index takes
// once read (chunkIndex's, its state's, its first row's and a range of
// keptRanges), besides the index's bytes and the copies of its extremes.
const pageIndexBytes = 1 + 2*24 + 8 + 8 + int64(unsafe.Sizeof(agg.State{})) + 8 + 16

// readColumnIndex reads and decodes the column index of n bytes at off of
// src, of a chunk of pages data pages, charged to c (with what its pages'
// states take: pageIndexBytes each, and the copies of the byte arrays'
// extremes, fewer bytes than the index): busy is the charge's error when
// the budget is busy (the unit runs again), err why the index is not used
// (past the whole budget, say).
func readColumnIndex(c *budget.Charge, src io.ReaderAt, off, n int64, pages int) (ci *chunkIndex, busy, err error) {
	if err := c.Grow("a column index", 2*n+int64(pages)*pageIndexBytes); err != nil {
		if past := (*budget.Error)(nil); errors.As(err, &past) {
			return nil, nil, err
		}
		return nil, err, nil
	}
	b := make([]byte, n)
	if _, err := src.ReadAt(b, off); err != nil {
		return nil, nil, fmt.Errorf("reading the column index: %w", err)
	}
	ci, err = parseColumnIndex(b, pages)
	return ci, nil, err
}

// parseColumnIndex decodes a ColumnIndex (the thrift compact protocol) of
// at most pages pages: a longer list is an error before it is allocated.
func parseColumnIndex(b []byte, pages int) (*chunkIndex, error) {
	c := &compact{b: b}
	ci := &chunkIndex{}
	var has [4]bool // null_pages, min_values, max_values, boundary_order
	// list reads a list's header, its elements of type want (or of
	// either boolean type); n < 0: not such a list, skipped.
	list := func(typ byte, want ...byte) int64 {
		if typ != ctList {
			c.skip(typ, false, 1)
			return -1
		}
		n, et := c.listHeader()
		if n > int64(pages) {
			c.fail(fmt.Errorf("a list of %d pages in the column index of a column chunk of %d", n, pages))
			return -1
		}
		if n > int64(len(c.b)-c.pos) { // (each element takes a byte at least)
			c.fail(errHeaderShort)
			return -1
		}
		for _, w := range want {
			if et == w {
				return n
			}
		}
		for i := int64(0); i < n && c.err == nil; i++ {
			c.skip(et, true, 2)
		}
		return -1
	}
	binaries := func(typ byte) [][]byte {
		n := list(typ, ctBinary)
		if n < 0 {
			return nil
		}
		out := make([][]byte, n)
		for i := range out {
			k := int64(int32(c.varint()))
			at := c.pos
			c.skipBytes(k)
			if c.err != nil {
				return nil
			}
			out[i] = c.b[at:c.pos:c.pos]
		}
		return out
	}
	c.fields(func(id int16, typ byte) {
		switch id {
		case 1:
			n := list(typ, ctTrue, ctFalse)
			if n < 0 {
				return
			}
			ci.nullPages = make([]bool, n)
			for i := range ci.nullPages {
				switch v := c.byte(); v {
				case ctTrue:
					ci.nullPages[i] = true
				case 0, ctFalse:
				default:
					c.fail(fmt.Errorf("a boolean of value %d", v))
				}
			}
			has[0] = true
		case 2:
			ci.mins = binaries(typ)
			has[1] = ci.mins != nil
		case 3:
			ci.maxs = binaries(typ)
			has[2] = ci.maxs != nil
		case 4:
			var order int32
			has[3] = c.int32Field(typ, &order)
		case 5:
			n := list(typ, ctI64)
			if n < 0 {
				return
			}
			ci.nullCounts = make([]int64, n)
			for i := range ci.nullCounts {
				v := c.varint()
				ci.nullCounts[i] = int64(v>>1) ^ -int64(v&1)
			}
		default:
			c.skip(typ, false, 1)
		}
	})
	if c.err != nil {
		return nil, fmt.Errorf("corrupt column index: %w", c.err)
	}
	if has != [4]bool{true, true, true, true} {
		return nil, errors.New("corrupt column index (a required field is missing)")
	}
	n := len(ci.nullPages)
	if len(ci.mins) != n || len(ci.maxs) != n || ci.nullCounts != nil && len(ci.nullCounts) != n {
		return nil, fmt.Errorf("corrupt column index: %d pages, %d least and %d greatest values, %d null counts",
			n, len(ci.mins), len(ci.maxs), len(ci.nullCounts))
	}
	return ci, nil
}

// pageStates are the states of a chunk's data pages from its column index
// (nil where an entry does not answer exactly), and the pages' first rows.
type pageStates struct {
	starts []int64
	states []*agg.State
}

// pageStatesOf returns the states of the data pages of a chunk of rows rows
// whose pages begin at rows starts (the walk's), from its column index ci
// read as sl says; an error when the index does not describe those pages.
func pageStatesOf(md *metadata.FileMetaData, sl *statsLeaf, ci *chunkIndex, starts []int64, rows int64) (pageStates, error) {
	n := len(starts)
	if n == 0 || starts[0] != 0 || starts[n-1] > rows {
		return pageStates{}, fmt.Errorf("%d data pages in %d rows", n, rows)
	}
	if len(ci.nullPages) != n {
		return pageStates{}, fmt.Errorf("the column index has %d pages, the column chunk %d data pages", len(ci.nullPages), n)
	}
	ps := pageStates{starts: starts, states: make([]*agg.State, n)}
	for p := range n {
		end := rows
		if p+1 < n {
			end = starts[p+1]
		}
		m := end - starts[p]
		nulls, hasNulls := int64(0), ci.nullCounts != nil
		if hasNulls {
			nulls = ci.nullCounts[p]
		}
		var st agg.State
		var err error
		switch {
		case ci.nullPages[p] && hasNulls && nulls != m:
			err = fmt.Errorf("a page of nulls only with a null count of %d of %d rows", nulls, m)
		case ci.nullPages[p]:
			st, err = sl.extremes(md, m, m, true, nil, nil)
		default:
			st, err = sl.extremes(md, m, nulls, hasNulls, ci.mins[p], ci.maxs[p])
			if err == nil && st.Count == 0 {
				err = errors.New("a page of nulls only not marked so")
			}
		}
		if err == nil {
			ps.states[p] = &st
		}
	}
	return ps, nil
}

// rowRange is the rows [lo, hi) of a row group.
type rowRange struct{ lo, hi int64 }

// keptRanges returns the rows of a row group of rows rows that the pages
// of the filter's columns (cols, one per column of the filter; nil starts:
// no page index) may keep, by test (engine.Pruner's, of the columns'
// states; nil: unknown), in order and apart; nil when every row may be
// kept. skipped are the pages of cols none of whose rows are kept.
func keptRanges(rows int64, cols []pageStates, test func([]*agg.State) bool) (keep []rowRange, skipped int) {
	at := make([]int, len(cols)) // each column's page at the row
	ptrs := make([]*agg.State, len(cols))
	keep = []rowRange{}
	for lo := int64(0); lo < rows; {
		hi := rows
		for k, c := range cols {
			ptrs[k] = nil
			if len(c.starts) == 0 {
				continue
			}
			for at[k]+1 < len(c.starts) && c.starts[at[k]+1] <= lo {
				at[k]++
			}
			ptrs[k] = c.states[at[k]]
			if at[k]+1 < len(c.starts) {
				hi = min(hi, c.starts[at[k]+1])
			}
		}
		if test(ptrs) {
			if n := len(keep); n > 0 && keep[n-1].hi == lo {
				keep[n-1].hi = hi
			} else {
				keep = append(keep, rowRange{lo, hi})
			}
		}
		lo = hi
	}
	if len(keep) == 1 && keep[0] == (rowRange{0, rows}) {
		return nil, 0
	}
	for _, c := range cols {
		for p, start := range c.starts {
			end := rows
			if p+1 < len(c.starts) {
				end = c.starts[p+1]
			}
			if end > start && !overlaps(keep, start, end) {
				skipped++
			}
		}
	}
	return keep, skipped
}

// overlaps reports whether rows [lo, hi) meet one of the ranges keep.
func overlaps(keep []rowRange, lo, hi int64) bool {
	i := sort.Search(len(keep), func(i int) bool { return keep[i].hi > lo })
	return i < len(keep) && keep[i].lo < hi
}

// keptRows are the rows of the ranges.
func keptRows(keep []rowRange) int64 {
	var n int64
	for _, r := range keep {
		n += r.hi - r.lo
	}
	return n
}

// pageFilter tests the pages of the columns of a grouping's filter by
// their column indexes, row group by row group (keep).
type pageFilter struct {
	leaf  []int        // per column of the filter, its leaf of the run; -1: none, or its statistics answer nothing
	stats []*statsLeaf // per column of the filter
	test  func([]*agg.State) bool
	skips PageSkips // of the row groups grouped so far (add)
}

// filters reports whether leaf k of the run is a column of the filter
// whose pages are tested (false for a nil filter).
func (f *pageFilter) filters(k int) bool {
	return f != nil && slices.Contains(f.leaf, k)
}

// add counts what was skipped of a row group grouped.
func (f *pageFilter) add(s PageSkips) {
	f.skips.RowGroups += s.RowGroups
	f.skips.Pages += s.Pages
	f.skips.Rows += s.Rows
	if f.skips.NotUsed == "" {
		f.skips.NotUsed = s.NotUsed
	}
}

// keep returns the rows of row group rg (of md, read from src) that the
// column indexes of the filter's columns may keep (keptRanges; nil: every
// row), given the first rows of the data pages of the run's leaves (starts,
// from their walk), and counts in skips what it skips, or why a column
// index is not used. What the column indexes take is charged to c
// (readColumnIndex); an error is the charge's: the budget is busy.
func (f *pageFilter) keep(c *budget.Charge, src *sourceBytes, md *metadata.FileMetaData, rg int, leaves []parquetLeaf, starts [][]int64, skips *PageSkips) ([]rowRange, error) {
	rows := md.RowGroups[rg].NumRows
	cols := make([]pageStates, len(f.leaf))
	indexed := false
	for k, j := range f.leaf {
		if j < 0 {
			continue
		}
		off, n, err := columnIndexAt(md, src.Size(), rg, leaves[j].col)
		if err == nil && n == 0 { // (none)
			continue
		}
		var ps pageStates
		if err == nil {
			var ci *chunkIndex
			var busy error
			if ci, busy, err = readColumnIndex(c, src, off, n, len(starts[j])); busy != nil {
				return nil, busy
			}
			if err == nil {
				ps, err = pageStatesOf(md, f.stats[k], ci, starts[j], rows)
			}
		}
		if err != nil {
			if skips.NotUsed == "" {
				skips.NotUsed = fmt.Sprintf("row group %d: column %q: %v", rg, leaves[j].name, err)
			}
			continue
		}
		cols[k], indexed = ps, true
	}
	if !indexed {
		return nil, nil
	}
	skips.RowGroups++
	keep, pages := keptRanges(rows, cols, f.test)
	if keep != nil {
		skips.Pages += pages
		skips.Rows += rows - keptRows(keep)
	}
	return keep, nil
}
