package dataset

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/metadata"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/gpuagg"
)

// The page path aggregates a Parquet column from its decompressed pages,
// without decoding it into Arrow arrays: PLAIN values are folded where they
// lie in the page buffer, dictionary-encoded pages as dictionary views
// (indices decoded into a reused buffer, the dictionary page's values never
// expanded), and nulls are counted from the encoded definition levels. It
// takes the flat columns whose Parquet values are their Arrow values bit for
// bit; every other column goes through pqarrow.
//
// Column chunks are independent tasks spread over the workers; the state of
// each chunk is merged into its column's in row group order, so results do
// not depend on the number of workers or on timing.

// pageWindow is the most rows of a page folded at once when the page path
// needs buffers (dictionary indices, values spread out for the ordered
// aggregates): the buffers of a worker stay this size whatever the pages.
const pageWindow = gpuagg.MorselSize

// pageReason is the plan's reason for columns aggregated from pages; their
// bytes are those of the decompressed pages, their time that of reading them
// (decompression included).
const pageReason = "parquet pages aggregated in place on the cpu"

// pageLeaf is how a leaf is aggregated from its Parquet pages.
type pageLeaf struct {
	col    int // Parquet leaf column
	typ    arrow.DataType
	kind   column.Kind
	maxDef int16
}

// pageEncodings are the encodings the page path decodes: values PLAIN or
// dictionary-encoded, levels RLE or BIT_PACKED.
var pageEncodings = map[parquet.Encoding]bool{
	parquet.Encodings.Plain:     true,
	parquet.Encodings.PlainDict: true,
	parquet.Encodings.RLEDict:   true,
	parquet.Encodings.RLE:       true,
	parquet.Encodings.BitPacked: true,
}

// pageKinds are, per physical type, the Arrow types pqarrow reads from it as
// the very same bits (timestamps whatever their time zone).
var pageKinds = map[parquet.Type][]arrow.Type{
	parquet.Types.Int32:  {arrow.INT32, arrow.UINT32, arrow.DATE32, arrow.TIME32},
	parquet.Types.Int64:  {arrow.INT64, arrow.UINT64, arrow.TIME64, arrow.TIMESTAMP},
	parquet.Types.Float:  {arrow.FLOAT32},
	parquet.Types.Double: {arrow.FLOAT64},
}

// errNotPaged is wrapped by the reasons a column is not aggregated from its
// pages.
var errNotPaged = errors.New("not aggregated from pages")

// pageLeafOf returns the page path of Parquet leaf column col, of Arrow type
// dt in the file's manifest, or why there is none (wrapping errNotPaged).
func pageLeafOf(md *metadata.FileMetaData, col int, dt arrow.DataType) (pl pageLeaf, err error) {
	notPaged := func(format string, args ...any) (pageLeaf, error) {
		return pageLeaf{}, fmt.Errorf("%w: %s", errNotPaged, fmt.Sprintf(format, args...))
	}
	defer func() { // corrupt metadata: left to pqarrow, which says what is wrong
		if p := recover(); p != nil {
			pl, err = notPaged("%v", panicError(p))
		}
	}()
	if col < 0 || col >= md.Schema.NumColumns() {
		return notPaged("no Parquet column %d", col)
	}
	descr := md.Schema.Column(col)
	if descr.MaxRepetitionLevel() != 0 {
		return notPaged("repeated column")
	}
	phys := descr.PhysicalType()
	found := false
	for _, id := range pageKinds[phys] {
		found = found || dt.ID() == id
	}
	if !found {
		return notPaged("%s read as %s", phys, dt)
	}
	kind, err := column.KindOf(dt)
	if err != nil || kind.Width() != phys.ByteSize() {
		return notPaged("%s read as %s", phys, dt)
	}
	for rg := 0; rg < len(md.RowGroups); rg++ {
		rgm := md.RowGroup(rg)
		if col >= rgm.NumColumns() {
			return notPaged("row group %d has %d columns", rg, rgm.NumColumns())
		}
		cc, err := rgm.ColumnChunk(col)
		if err != nil {
			return notPaged("row group %d: %v", rg, err)
		}
		if cc.CryptoMetadata() != nil {
			return notPaged("encrypted column")
		}
		for _, e := range cc.Encodings() {
			if !pageEncodings[e] {
				return notPaged("encoding %s", e)
			}
		}
	}
	return pageLeaf{col: col, typ: dt, kind: kind, maxDef: descr.MaxDefinitionLevel()}, nil
}

// pageScratch is the reader and buffers of one worker, reused chunk after
// chunk.
type pageScratch struct {
	stream chunkStream
	pages  pageBuffers
	pr     file.PageReader

	valid  []byte // validity bits of a window
	idx    []byte // dictionary indices of a window (int32)
	spread []byte // a window's values (or indices) at their rows
	dict   []byte // the dictionary page's values
	legacy []byte // BIT_PACKED levels in the hybrid's bit order
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// pageValues is where a page's non-null values are: PLAIN bytes, or the
// hybrid-encoded indices of a dictionary.
type pageValues struct {
	plain []byte
	dict  *hybrid
}

// aggregateChunk folds the pages of one column chunk of rows rows.
func (s *pageScratch) aggregateChunk(ctx context.Context, eng *gpuagg.Engine, pr file.PageReader, l *pageLeaf, rows int64, ordered bool) (res chunkResult, err error) {
	start := time.Now()
	defer func() { res.plan.Measured = time.Since(start) }()
	set := agg.Default
	if ordered {
		set = agg.All
	}
	res.state = agg.New(l.kind.Family(), set)
	res.plan = gpuagg.ColumnPlan{Source: gpuagg.SourcePages, Reason: pageReason} // on the CPU, in host memory
	width := l.kind.Width()
	var dict column.View
	hasDict := false
	var seen int64 // rows of the pages so far
	for pages := 0; pr.Next(); pages++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		var (
			n    int    // rows of the page
			defs hybrid // its definition levels (when maxDef > 0)
			vals []byte
			enc  parquet.Encoding
		)
		w := levelBitWidth(l.maxDef)
		switch p := pr.Page().(type) {
		case *file.DictionaryPage:
			if hasDict {
				return res, fmt.Errorf("page %d: a second dictionary page", pages)
			}
			if pages > 0 {
				return res, fmt.Errorf("page %d: a dictionary page after data pages", pages)
			}
			if e := parquet.Encoding(p.Encoding()); e != parquet.Encodings.Plain && e != parquet.Encodings.PlainDict {
				return res, fmt.Errorf("dictionary page of encoding %s", e)
			}
			nd, data := int(p.NumValues()), p.Data()
			res.plan.Bytes += int64(len(data))
			if nd < 0 || nd > len(data)/width {
				return res, fmt.Errorf("dictionary page of %d values in %d bytes", nd, len(data))
			}
			s.dict = append(s.dict[:0], data[:nd*width]...)
			dict = column.View{Type: l.typ, Kind: l.kind, Len: nd, Values: s.dict}
			hasDict = true
			continue
		case *file.DataPageV1:
			n, vals, enc = int(p.NumValues()), p.Data(), parquet.Encoding(p.Encoding())
			if l.maxDef > 0 {
				var err error
				if vals, err = splitV1Levels(vals, p.DefinitionLevelEncoding(), n, w, &defs, &s.legacy); err != nil {
					return res, fmt.Errorf("page %d: definition levels: %w", pages, err)
				}
			}
		case *file.DataPageV2:
			n, vals, enc = int(p.NumValues()), p.Data(), parquet.Encoding(p.Encoding())
			rl, dl := int(p.RepetitionLevelByteLen()), int(p.DefinitionLevelByteLen())
			if rl < 0 || dl < 0 || rl > len(vals) || dl > len(vals)-rl {
				return res, fmt.Errorf("page %d: levels of %d+%d bytes in a page of %d", pages, rl, dl, len(vals))
			}
			defs.reset(vals[rl:rl+dl], w)
			vals = vals[rl+dl:]
		default:
			return res, fmt.Errorf("page %d: unexpected page type", pages)
		}
		res.plan.Bytes += int64(len(pr.Page().Data()))
		if n < 0 || int64(n) > rows-seen {
			return res, fmt.Errorf("page %d: %d values, but the column chunk has %d rows left", pages, n, rows-seen)
		}
		var pv pageValues
		switch enc {
		case parquet.Encodings.Plain:
			pv.plain = vals
		case parquet.Encodings.PlainDict, parquet.Encodings.RLEDict:
			if !hasDict {
				return res, fmt.Errorf("page %d: dictionary-encoded without a dictionary page", pages)
			}
			pv.dict = &hybrid{}
			if n > 0 {
				if len(vals) == 0 {
					return res, fmt.Errorf("page %d: no bit width for the dictionary indices", pages)
				}
				pv.dict.reset(vals[1:], int(vals[0]))
			}
		default:
			return res, fmt.Errorf("page %d: encoding %s (the column chunk metadata does not list it)", pages, enc)
		}
		if err := s.aggregatePage(ctx, eng, l, &res, &pv, &defs, n, seen, &dict, ordered); err != nil {
			return res, fmt.Errorf("page %d: %w", pages, err)
		}
		seen += int64(n)
	}
	if err := pr.Err(); err != nil {
		return res, err
	}
	if seen != rows {
		return res, fmt.Errorf("the pages have %d values, the column chunk metadata says %d", seen, rows)
	}
	return res, nil
}

// aggregatePage folds the n rows of one data page, whose first row is row
// base of the chunk.
func (s *pageScratch) aggregatePage(ctx context.Context, eng *gpuagg.Engine, l *pageLeaf, res *chunkResult, pv *pageValues, defs *hybrid, n int, base int64, dict *column.View, ordered bool) error {
	width := l.kind.Width()
	// Without buffers to fill (PLAIN values, no rows to keep), the whole
	// page is one view.
	window := pageWindow
	if pv.plain != nil && !ordered {
		window = max(n, 1)
	}
	for lo := 0; lo < n; lo += window {
		m := min(window, n-lo)
		// k: the non-null values of rows [lo, lo+m); spread: whether the
		// view has them at their rows, with a validity bitmap.
		k, spread := m, false
		if l.maxDef > 0 {
			var err error
			if ordered {
				s.valid = grow(s.valid, int(bitutil.BytesForBits(int64(m))))
				k, err = defs.bitmap(l.maxDef, m, s.valid)
				spread = k < m
			} else {
				k, err = defs.count(l.maxDef, m)
			}
			if err != nil {
				return fmt.Errorf("definition levels: %w", err)
			}
		}
		if k == 0 {
			res.state.AddNulls(int64(m))
			continue
		}
		v := column.View{Type: l.typ, Kind: l.kind, Len: k, Row: base + int64(lo)}
		ew := width // element width of v.Values
		if pv.dict != nil {
			s.idx = grow(s.idx, 4*k)
			if err := pv.dict.indices(dict.Len, column.Slice[int32](s.idx)); err != nil {
				return fmt.Errorf("dictionary indices: %w", err)
			}
			v.Values, v.IndexKind, v.Dict, ew = s.idx, column.Int32, dict, 4
		} else {
			if len(pv.plain) < k*width {
				return fmt.Errorf("%d bytes of values left for %d values of %d bytes", len(pv.plain), k, width)
			}
			v.Values, pv.plain = pv.plain[:k*width], pv.plain[k*width:]
		}
		if spread {
			s.spread = grow(s.spread, m*ew)
			if ew == 4 {
				spreadValues(column.Slice[uint32](v.Values), s.valid, m, column.Slice[uint32](s.spread))
			} else {
				spreadValues(column.Slice[uint64](v.Values), s.valid, m, column.Slice[uint64](s.spread))
			}
			v.Values, v.Len, v.Validity, v.NullCount = s.spread, m, s.valid, m-k
		} else {
			res.state.AddNulls(int64(m - k))
		}
		if err := eng.UpdateView(ctx, &v, &res.state); err != nil {
			return err
		}
	}
	return nil
}

// spreadValues places the dense values at the rows whose bit is set in valid
// (rows [0, m)); the other rows of out are left as they were.
func spreadValues[T uint32 | uint64](dense []T, valid []byte, m int, out []T) {
	j := 0
	for w := 0; w*64 < m; w++ {
		var word uint64
		for b := 0; b < 8 && w*8+b < len(valid); b++ {
			word |= uint64(valid[w*8+b]) << (8 * b)
		}
		if rest := m - w*64; rest < 64 {
			word &= 1<<rest - 1
		}
		base := w * 64
		if word == ^uint64(0) {
			copy(out[base:base+64], dense[j:j+64])
			j += 64
			continue
		}
		for ; word != 0; word &= word - 1 {
			out[base+bits.TrailingZeros64(word)] = dense[j]
			j++
		}
	}
}
