package dataset

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/metadata"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/planner"
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
// not depend on the number of workers or on timing. A chunk's data pages
// are folded a segment at a time (aggregateChunk), which the run's idle
// workers take: a file of few row groups is read by every core.

// pageWindow is the most values of a page folded at once, and the most rows
// when the page path needs buffers (dictionary indices, values spread out
// for the ordered aggregates): the buffers of a worker stay this size
// whatever the pages, and each window is one morsel of the CPU backend,
// which folds it in the worker's goroutine (the workers are the page path's
// parallelism).
const pageWindow = engine.MorselSize

// pageReason is the plan's reason for columns aggregated from pages; their
// bytes are those of the decompressed pages, their time that of reading them
// (decompression included).
const pageReason = "parquet pages aggregated in place on the cpu"

// pageGPUReason and pageSplitReason are the plan's reason when the engine
// gave the GPU the values that the CPU page path decoded, all or some.
const (
	pageGPUReason   = "parquet pages decoded on the cpu, their values aggregated on the gpu"
	pageSplitReason = "parquet pages decoded on the cpu, their values aggregated on the cpu and the gpu"
)

// pageLeaf is how a leaf is aggregated from its Parquet pages.
type pageLeaf struct {
	col    int // Parquet leaf column
	typ    arrow.DataType
	kind   column.Kind
	maxDef int16
	// flba, for a Decimal128 leaf, is the bytes of its big-endian
	// FIXED_LEN_BYTE_ARRAY values, widened to Decimal128 a window at a time.
	// (An Opaque leaf is counted from its levels: its values are not read.)
	flba int
	// le: the flba bytes are a little-endian INT32 or INT64 (a decimal
	// stored as an integer).
	le bool
	// int96: the values are INT96 timestamps, converted to the int64 of
	// the unit of the leaf's timestamp type a window at a time, refusing
	// those outside its range (pqint96.go).
	int96 bool
	// exists, for a leaf in lists (an element column), is the definition
	// level from which an element exists (the leaf's innermost list is
	// defined: file.LevelInfo.RepeatedAncestorDefLevel); 0 for a leaf of
	// the rows. Levels below it are no element; those from it on are one,
	// null below maxDef. maxRep is the leaf's repetition level (its
	// levels are skipped: elements need none).
	exists, maxRep int16
	// dictKey: a leaf whose rows are taken as dictionary indices, int32,
	// into a dictionary of each chunk: the grouped route's keys of strings
	// and binaries (dictKeyPageLeaf) and of integers (asDictKey), in the
	// chunks whose data pages are all dictionary-encoded.
	dictKey bool
}

// width is the bytes of a value of l in the pages (0 for an Opaque leaf,
// whose values are not read).
func (l *pageLeaf) width() int {
	if l.flba > 0 {
		return l.flba
	}
	if l.int96 {
		return 12
	}
	if l.kind == column.FixedSizeBinary {
		return l.viewWidth()
	}
	return l.kind.Width()
}

// viewWidth is the Width of l's views: a FixedSizeBinary leaf's byte width,
// 0 for the other kinds.
func (l *pageLeaf) viewWidth() int {
	if l.kind == column.FixedSizeBinary {
		return arrow17.FixedSizeWidth(l.typ)
	}
	return 0
}

// pageEncodings are the encodings the page path decodes: values PLAIN,
// dictionary-encoded or BYTE_STREAM_SPLIT, levels RLE or BIT_PACKED.
var pageEncodings = map[parquet.Encoding]bool{
	parquet.Encodings.Plain:     true,
	parquet.Encodings.PlainDict: true,
	parquet.Encodings.RLEDict:   true,
	parquet.Encodings.RLE:       true,
	parquet.Encodings.BitPacked: true,
	encByteStreamSplit:          true,
}

// encByteStreamSplit is the BYTE_STREAM_SPLIT encoding (the thrift enum's
// 9; arrow-go v17's Encodings has no name for it, nor a decoder).
const encByteStreamSplit = parquet.Encoding(9)

// pageKinds are, per physical type, the Arrow types pqarrow reads from it as
// the very same bits (timestamps whatever their time zone).
var pageKinds = map[parquet.Type][]arrow.Type{
	parquet.Types.Int32:  {arrow.INT32, arrow.UINT32, arrow.DATE32, arrow.TIME32},
	parquet.Types.Int64:  {arrow.INT64, arrow.UINT64, arrow.TIME64, arrow.TIMESTAMP},
	parquet.Types.Float:  {arrow.FLOAT32},
	parquet.Types.Double: {arrow.FLOAT64},
	// Booleans: PLAIN (bit-packed) or RLE values, a window of bits at a
	// time as Bool views.
	parquet.Types.Boolean: {arrow.BOOL},
}

// errNotPaged is wrapped by the reasons a column is not aggregated from its
// pages.
var errNotPaged = errors.New("not aggregated from pages")

// pageLeafOf returns the page path of Parquet leaf column col, of Arrow type
// dt in the file's manifest, or why there is none (wrapping errNotPaged).
func pageLeafOf(md *metadata.FileMetaData, col int, dt arrow.DataType) (pageLeaf, error) {
	return pageLeafOfLevels(md, col, dt, 0)
}

// elemPageLeafOf is pageLeafOf for the leaf column col of an element column
// (in lists), whose elements exist from definition level exists on. Its
// values are those of a flat column (Opaque ones are left to pqarrow).
func elemPageLeafOf(md *metadata.FileMetaData, col int, dt arrow.DataType, exists int16) (pageLeaf, error) {
	if exists <= 0 {
		return pageLeaf{}, fmt.Errorf("%w: no repeated ancestor", errNotPaged)
	}
	pl, err := pageLeafOfLevels(md, col, dt, exists)
	if err == nil && pl.kind == column.Opaque {
		return pageLeaf{}, fmt.Errorf("%w: elements only counted", errNotPaged)
	}
	if err == nil && pl.kind == column.Bool {
		return pageLeaf{}, fmt.Errorf("%w: boolean elements", errNotPaged)
	}
	return pl, err
}

// notPaged is why a column has no page path, wrapping errNotPaged.
func notPaged(format string, args ...any) (pageLeaf, error) {
	return pageLeaf{}, fmt.Errorf("%w: %s", errNotPaged, fmt.Sprintf(format, args...))
}

// recoverNotPaged, deferred, turns a panic of arrow-go's metadata accessors
// (corrupt metadata) into a column without a page path: left to pqarrow,
// which says what is wrong.
func recoverNotPaged(pl *pageLeaf, err *error) {
	if p := recover(); p != nil {
		*pl, *err = notPaged("%v", panicError(p))
	}
}

// pageLeafOfLevels is pageLeafOf, of an element column's leaf when exists
// is above 0.
func pageLeafOfLevels(md *metadata.FileMetaData, col int, dt arrow.DataType, exists int16) (pl pageLeaf, err error) {
	defer func() {
		if err == nil && exists > 0 {
			pl.exists, pl.maxRep = exists, md.Schema.Column(col).MaxRepetitionLevel()
		}
	}()
	defer recoverNotPaged(&pl, &err)
	if col < 0 || col >= md.Schema.NumColumns() {
		return notPaged("no Parquet column %d", col)
	}
	descr := md.Schema.Column(col)
	if (descr.MaxRepetitionLevel() != 0) != (exists > 0) || exists > descr.MaxDefinitionLevel() {
		return notPaged("repeated column")
	}
	phys := descr.PhysicalType()
	if phys == parquet.Types.FixedLenByteArray || dt.ID() == arrow.DECIMAL128 && (phys == parquet.Types.Int32 || phys == parquet.Types.Int64) {
		return flbaPageLeaf(md, col, dt)
	}
	int96 := false
	if _, ok := dt.(*arrow.TimestampType); ok && phys == parquet.Types.Int96 {
		phys, int96 = parquet.Types.Int64, true // (read as the int64 of its unit: int96Convert)
	}
	_, opaque := dt.(*logicalType) // (counted from the levels, of any physical type)
	found := opaque
	for _, id := range pageKinds[phys] {
		found = found || dt.ID() == id
	}
	if _, ok := dt.(*arrow17.NarrowDecimalType); ok {
		// decimal32 and decimal64: INT32 and INT64 values as they are
		// (the kind's width and the physical size are checked below).
		found = phys == parquet.Types.Int32 || phys == parquet.Types.Int64
	}
	if !found {
		return notPaged("%s read as %s", phys, dt)
	}
	kind, err := arrow17.KindOf(dt)
	if err != nil || !opaque && kind != column.Bool && kind.Width() != phys.ByteSize() {
		return notPaged("%s read as %s", phys, dt)
	}
	for rg := 0; rg < len(md.RowGroups); rg++ {
		rgm := md.RowGroup(rg)
		if col >= rgm.NumColumns() {
			return notPaged("row group %d has %d columns", rg, rgm.NumColumns())
		}
		if chunkEncrypted(md, rg, col) { // (before arrow-go decrypts its metadata)
			return notPaged("encrypted column")
		}
		cc, err := rgm.ColumnChunk(col)
		if err != nil {
			return notPaged("row group %d: %v", rg, err)
		}
		for _, e := range cc.Encodings() {
			if !pageEncodings[e] {
				return notPaged("encoding %s", e)
			}
			if kind == column.Bool && e != parquet.Encodings.Plain && e != parquet.Encodings.RLE && e != parquet.Encodings.BitPacked {
				return notPaged("encoding %s of booleans", e)
			}
		}
	}
	return pageLeaf{col: col, typ: dt, kind: kind, maxDef: descr.MaxDefinitionLevel(), int96: int96}, nil
}

// dictKeyPageLeaf returns the page path of BYTE_ARRAY leaf column col, of
// Arrow type dt (string, binary and their large forms), whose chunks the
// grouped route takes as dictionary indices (pageLeaf.dictKey): those of its
// chunks whose data pages are all dictionary-encoded, as writers store
// strings of few values (a dictionary dt: its value type's); the walk of a
// chunk says so (chunkWalk.undict), and the others are left to pqarrow.
// Repeated and encrypted columns have none.
func dictKeyPageLeaf(md *metadata.FileMetaData, col int, dt arrow.DataType) (pl pageLeaf, err error) {
	defer recoverNotPaged(&pl, &err)
	if col < 0 || col >= md.Schema.NumColumns() {
		return notPaged("no Parquet column %d", col)
	}
	descr := md.Schema.Column(col)
	if descr.MaxRepetitionLevel() != 0 {
		return notPaged("repeated column")
	}
	if descr.PhysicalType() != parquet.Types.ByteArray {
		return notPaged("%s read as %s", descr.PhysicalType(), dt)
	}
	if d, ok := dt.(*arrow.DictionaryType); ok { // (as the file's Arrow schema types it)
		dt = d.ValueType
	}
	var kind column.Kind
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		kind = column.Binary
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		kind = column.LargeBinary
	default:
		return notPaged("%s read as %s", descr.PhysicalType(), dt)
	}
	for rg := 0; rg < len(md.RowGroups); rg++ {
		if col >= md.RowGroup(rg).NumColumns() {
			return notPaged("row group %d has %d columns", rg, md.RowGroup(rg).NumColumns())
		}
		if chunkEncrypted(md, rg, col) {
			return notPaged("encrypted column")
		}
	}
	return pageLeaf{col: col, typ: dt, kind: kind, maxDef: descr.MaxDefinitionLevel(), dictKey: true}, nil
}

// chunkLeaf is l as a chunk of it is decoded: as values, a copy of l
// without dictKey, when undict (a page of the chunk is not
// dictionary-encoded: groupCost); l itself otherwise.
func (l *pageLeaf) chunkLeaf(undict bool) *pageLeaf {
	if !undict || !l.dictKey {
		return l
	}
	values := *l
	values.dictKey = false
	return &values
}

// asDictKey is page leaf l of a key column, taken as dictionary indices
// (pageLeaf.dictKey) when its values are integers (temporal types among
// them) read as they are; ok is false for the others.
func asDictKey(l pageLeaf) (pageLeaf, bool) {
	switch l.kind {
	case column.Int8, column.Int16, column.Int32, column.Int64, column.Uint8, column.Uint16, column.Uint32, column.Uint64:
	default:
		return l, false
	}
	if l.flba > 0 || l.int96 || l.exists > 0 || l.maxRep > 0 {
		return l, false
	}
	if _, ok := l.typ.(*logicalType); ok {
		return l, false
	}
	l.dictKey = true
	return l, true
}

// flbaPageLeaf returns the page path of a decimal128 column stored as INT32,
// INT64 or FIXED_LEN_BYTE_ARRAY (its values widened to Decimal128 a window
// at a time, where pqarrow converts them a value at a time: 18-26M values a
// second a goroutine measured), or of another FIXED_LEN_BYTE_ARRAY leaf
// column col (of Arrow type dt) in the chunks that arrow-go v17 cannot
// decode: those of BYTE_STREAM_SPLIT pages. Decimal32 and decimal64 (INT32
// and INT64 values), float16 and fixed_size_binary values are the page's
// bytes as they are; those of an Opaque type are counted from the levels,
// their values not read.
func flbaPageLeaf(md *metadata.FileMetaData, col int, dt arrow.DataType) (pageLeaf, error) {
	descr := md.Schema.Column(col)
	phys := descr.PhysicalType()
	kind, err := arrow17.KindOf(dt)
	if err != nil {
		return pageLeaf{}, fmt.Errorf("%w: %v", errNotPaged, err)
	}
	pl := pageLeaf{col: col, typ: dt, kind: kind, maxDef: descr.MaxDefinitionLevel()}
	switch {
	case phys == parquet.Types.Int32 || phys == parquet.Types.Int64:
		if kind != column.Decimal128 {
			return pageLeaf{}, fmt.Errorf("%w: %s read as %s", errNotPaged, phys, dt)
		}
		pl.flba, pl.le = phys.ByteSize(), true
	case kind == column.Opaque:
	case kind == column.Decimal128 && descr.TypeLength() >= 1 && descr.TypeLength() <= 16:
		pl.flba = descr.TypeLength()
	case kind == column.Float16 && descr.TypeLength() == 2:
	case kind == column.FixedSizeBinary && descr.TypeLength() == arrow17.FixedSizeWidth(dt) && descr.TypeLength() > 0:
	default:
		return pageLeaf{}, fmt.Errorf("%w: FIXED_LEN_BYTE_ARRAY read as %s", errNotPaged, dt)
	}
	split := false
	for rg := 0; rg < len(md.RowGroups); rg++ {
		rgm := md.RowGroup(rg)
		if col >= rgm.NumColumns() {
			return pageLeaf{}, fmt.Errorf("%w: row group %d has %d columns", errNotPaged, rg, rgm.NumColumns())
		}
		if chunkEncrypted(md, rg, col) { // (before arrow-go decrypts its metadata)
			return pageLeaf{}, fmt.Errorf("%w: encrypted column", errNotPaged)
		}
		cc, err := rgm.ColumnChunk(col)
		if err != nil {
			return pageLeaf{}, fmt.Errorf("%w: row group %d: %v", errNotPaged, rg, err)
		}
		for _, e := range cc.Encodings() {
			if !pageEncodings[e] {
				return pageLeaf{}, fmt.Errorf("%w: encoding %s", errNotPaged, e)
			}
			split = split || e == encByteStreamSplit
		}
	}
	if !split && kind != column.Decimal128 {
		return pageLeaf{}, fmt.Errorf("%w: %s read as %s without BYTE_STREAM_SPLIT pages (pqarrow decodes it)", errNotPaged, phys, dt)
	}
	return pl, nil
}

// widen writes the k decimals of leaf l in src (flba bytes each) as
// little-endian Decimal128 values (16 bytes each) into dst.
func (l *pageLeaf) widen(dst, src []byte, k int) {
	if !l.le {
		widenDecimals(dst, src, l.flba, k)
		return
	}
	out := column.Slice[uint64](dst[:16*k])
	if l.flba == 4 {
		for i, x := range column.Slice[int32](src[:4*k]) {
			out[2*i], out[2*i+1] = uint64(int64(x)), uint64(int64(x)>>63)
		}
		return
	}
	for i, x := range column.Slice[int64](src[:8*k]) {
		out[2*i], out[2*i+1] = uint64(x), uint64(x>>63)
	}
}

// widenDecimals writes the k big-endian two's complement values of w bytes
// of src as little-endian Decimal128 values (16 bytes each) into dst.
func widenDecimals(dst, src []byte, w, k int) {
	out := column.Slice[uint64](dst[:16*k])
	for i := 0; i < k; i++ {
		v := src[i*w : (i+1)*w]
		var lo, hi uint64
		if w <= 8 {
			lo = bigEndianSigned(v)
			hi = uint64(int64(lo) >> 63)
		} else {
			lo = binary.BigEndian.Uint64(v[w-8:])
			hi = bigEndianSigned(v[:w-8])
		}
		out[2*i], out[2*i+1] = lo, hi
	}
}

// bigEndianSigned is the big-endian two's complement integer of the 1 to 8
// bytes of v, sign-extended to 64 bits.
func bigEndianSigned(v []byte) uint64 {
	var x uint64
	for _, b := range v {
		x = x<<8 | uint64(b)
	}
	sh := 64 - 8*uint(len(v))
	return uint64(int64(x<<sh) >> sh)
}

// pageScratch is the buffers of one worker's page path, reused chunk after
// chunk.
type pageScratch struct {
	page   []byte // a page's decompressed bytes
	valid  []byte // validity bits of a window
	idx    []byte // dictionary indices of a window (int32)
	spread []byte // a window's values (or indices) at their rows
	bools  []byte // a window of RLE booleans, unpacked
	dict   []byte // the dictionary page's values
	legacy []byte // BIT_PACKED levels in the hybrid's bit order
	levels []byte // the levels of a page read as a stream
	values []byte // a window's values of a page read as a stream
	wide   []byte // a window's decimals widened to 16 bytes
	valid2 []byte // a window's validity, each bit twice (16-byte values as pairs of words)
	stream pageStream
	// mapped is the mapped file whose pages are read (nil: none): a view
	// of values that lie in it goes to the GPU as a copy (mapped.go).
	mapped []byte
	// stats are the statistics asked for by name (stddev, variance,
	// approx_distinct), folded with the default aggregates.
	stats agg.Set
	// rows, when set, takes the rows of the chunk decoded instead of
	// folding them (pageRows: the grouped route's).
	rows *pageRows
	// keep, with rows, are the rows whose data pages are read (decodeRows).
	keep []rowRange
	// helpers, when set, takes the segments of a chunk that idle workers of
	// the run fold (aggregateChunk).
	helpers chan<- func(*worker)
	// sketches: per leaf, the sketch of the last chunk of it this worker
	// folded (one file's chunks: the scratch is a run's). It seeds the
	// state of the leaf's next chunk (agg.State.SeedSketch: every chunk of
	// a leaf is merged into the same state), so that the CPU backend skips
	// the hashes that cannot raise a register, or, before the sketch has
	// overflowed its exact hashes, takes it as the sketch of a morsel
	// whose hashes it keeps all.
	sketches map[*pageLeaf]*agg.Sketch
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// pageValues is where a page's non-null values are: PLAIN bytes, the
// stream of a large PLAIN page, the hybrid-encoded indices of a
// dictionary, or the byte streams of BYTE_STREAM_SPLIT values.
type pageValues struct {
	plain []byte
	// bit is the bit of plain[0] where a boolean page's next PLAIN value
	// is; rle, a page's RLE-encoded booleans.
	bit    int
	rle    *hybrid
	stream *pageStream
	left   int64 // the bytes of the stream's values left
	dict   *hybrid
	split  *byteStreams
}

// byteStreams are the values of a BYTE_STREAM_SPLIT page: byte b of value i
// is at b*n+i, n the page's values (its bytes over the value's width).
type byteStreams struct {
	b    []byte
	n    int // values of the page
	next int // the next value to read
}

// read gathers the next len(out)/width values into out, PLAIN-laid.
func (bs *byteStreams) read(out []byte, width int) error {
	k := len(out) / width
	if k > bs.n-bs.next {
		return fmt.Errorf("%d BYTE_STREAM_SPLIT values left for %d values", bs.n-bs.next, k)
	}
	for b := 0; b < width; b++ {
		src := bs.b[b*bs.n+bs.next : b*bs.n+bs.next+k]
		for i, v := range src {
			out[i*width+b] = v
		}
	}
	bs.next += k
	return nil
}

// pageData returns the bytes of page p of the chunk the walk of g is on,
// decompressed with codec: those arrow-go's page reader would return (for a
// data page v2, its levels as they are, then its values). The walk checked
// the page's sizes (pqwalk.go): the buffer is the page's uncompressed size,
// and the bytes are valid until the walk or the page path reads the next.
// A large page is decompressed as a stream, a piece at a time, stopping with
// ctx's error when ctx is done.
func (s *pageScratch) pageData(ctx context.Context, g *pageGuard, codec compress.Codec, p *chunkPage) ([]byte, error) {
	c := g.walk.c
	unc, comp := int64(p.uncompressed), int64(p.compressed)
	if p.typ == pageTypeDataV2 && !p.isCompressed {
		return g.pageBytes(p.at, unc) // arrow-go reads the uncompressed size
	}
	levels := 0
	if p.typ == pageTypeDataV2 {
		levels = int(p.defBytes) + int(p.repBytes) // (checked: at most comp and unc)
	}
	if streamedCodec(c.codec, unc, g.zstdWindow) {
		if comp > c.end-p.at { // (as pageBytes says it)
			return nil, fmt.Errorf("a page of %d bytes where the column chunk has %d left", comp, c.end-p.at)
		}
		var err error
		if s.page, err = growCharged(c.charge, "a page decompressed", s.page, int(unc)); err != nil {
			return nil, err
		}
		if err := g.streams.decodeInPieces(ctx, c.codec, s.page, g.streams.input(c, p.at, comp), levels, g.zstdWindow); err != nil {
			return nil, err
		}
		return s.page, nil
	}
	src, err := g.pageBytes(p.at, comp)
	if err != nil {
		return nil, err
	}
	if c.codec == compress.Codecs.Uncompressed {
		if comp != unc { // (the walk checked it)
			return nil, fmt.Errorf("an uncompressed page of %d bytes said to hold %d", comp, unc)
		}
		return src, nil
	}
	var err2 error
	if s.page, err2 = growCharged(c.charge, "a page decompressed", s.page, int(unc)); err2 != nil {
		return nil, err2
	}
	if err := decodeOneShot(ctx, codec, c.codec, &g.zstd, s.page, src, levels, func() { s.page, g.win, g.body = nil, nil, nil }); err != nil {
		return nil, err
	}
	return s.page, nil
}

// checkDictPage checks dictionary page p, the read-th page of its chunk
// (hasDict: the chunk had one already), whose decompressed bytes are data,
// of values of width bytes (0: not read): what the page path and the GPU
// page route require of it before they read its values.
func checkDictPage(p *chunkPage, read int, hasDict bool, data []byte, width int) error {
	if hasDict {
		return fmt.Errorf("page %d: a second dictionary page", p.index)
	}
	if read > 0 {
		return fmt.Errorf("page %d: a dictionary page after data pages", p.index)
	}
	if enc := parquet.Encoding(p.encoding); enc != parquet.Encodings.Plain && enc != parquet.Encodings.PlainDict {
		return fmt.Errorf("dictionary page of encoding %s", enc)
	}
	if n := int(p.numValues); n < 0 || (width > 0 && n > len(data)/width) {
		return fmt.Errorf("dictionary page of %d values in %d bytes", n, len(data))
	}
	return nil
}

// aggregateChunk folds the pages of column chunk c, of rows rows, reading
// them as the walk of g checks them: one page header read per page.
//
// The data pages of a chunk of the plain aggregation (eng set, no rows kept,
// a leaf of the rows) are folded a segment at a time: consecutive pages of
// at least segmentBytes decompressed (the last segment fewer), each into a
// state of its own, the states merged in page order. The segments depend on
// the pages alone, so the answer does not depend on who folds them: each is
// offered to an idle worker of the run (s.helpers), and folded by the walk's
// goroutine when none takes it. A chunk's pages are thus read by as many
// cores as are idle, as at the end of a file, or in a file of few row
// groups.
func (s *pageScratch) aggregateChunk(ctx context.Context, eng *engine.Engine, g *pageGuard, c *guardChunk, l *pageLeaf, rows int64, ordered bool) (res chunkResult, err error) {
	start := time.Now()
	defer func() {
		res.plan.Measured = time.Since(start)
		res.onDevice(pageGPUReason, pageSplitReason)
	}()
	// The default aggregates always (the pages are read anyway), and the
	// ordered ones and the statistics (s.stats) when asked for.
	set := agg.Default | s.stats&(agg.Moments|agg.ApproxDistinct)
	if ordered {
		set |= agg.Ordered
	}
	fold := chunkFold{eng: eng, l: l, c: c, set: set, ordered: ordered, stats: s.stats}
	res.state = fold.newState(s)
	defer func() {
		if k := res.state.Sketch; err == nil && k != nil {
			s.keepSketch(l, k)
		}
	}()
	res.plan = engine.ColumnPlan{Source: engine.SourcePages, Reason: pageReason} // on the CPU, in host memory
	if fold.codec, err = compress.GetCodec(c.codec); err != nil {
		return res, err
	}
	width := l.width()
	var dict column.View
	hasDict := false
	var seen int64  // rows of the pages so far (levels, of an element column)
	var elems int64 // an element column's elements so far
	g.begin(c)
	defer g.end()
	s.mapped = c.mapped
	defer func() { // the large buffers are not kept (charge.go)
		s.page = dropCharged(c.charge, s.page)
		s.dict = dropCharged(c.charge, s.dict)
		s.levels = dropCharged(c.charge, s.levels)
	}()
	// The segments (segmented), in page order, cur the one being made;
	// helping waits for the helpers folding some of them.
	segmented := eng != nil && s.rows == nil && s.keep == nil && l.exists == 0 && !l.dictKey
	var (
		segs    []*chunkSegment
		cur     *chunkSegment
		helping sync.WaitGroup
	)
	defer helping.Wait()
	// settle returns the error of the earliest segment that failed, or
	// else err, once every helper is done: the error of the first page
	// that fails, as if the pages were folded one after the other.
	settle := func(err error) error {
		helping.Wait()
		for _, seg := range segs {
			if seg.err != nil {
				return seg.err
			}
		}
		return err
	}
	// dispatch offers segment cur to an idle worker, or folds it.
	dispatch := func() error {
		seg := cur
		cur = nil
		segs = append(segs, seg)
		seg.dict, seg.hasDict = dict, hasDict
		if s.helpers != nil {
			helping.Add(1)
			select {
			case s.helpers <- func(wk *worker) {
				defer helping.Done()
				fold.help(ctx, wk, seg)
			}:
				return nil
			default:
				helping.Done()
			}
		}
		seg.res.state = fold.newState(s)
		seg.err = s.foldSegment(ctx, g, &fold, seg)
		return seg.err
	}
	for read := 0; ; read++ { // read: the pages read so far
		p, err := g.next(ctx)
		if err != nil {
			return res, settle(err)
		}
		if p == nil {
			break
		}
		if p.typ != pageTypeDict && p.typ != pageTypeData && p.typ != pageTypeDataV2 {
			read-- // skipped, as arrow-go's page reader does
			continue
		}
		if s.keep != nil && p.typ != pageTypeDict && s.rows != nil {
			n := int64(p.numValues)
			if n < 0 || n > rows-seen {
				return res, fmt.Errorf("page %d: %d values, but the column chunk has %d rows left", p.index, n, rows-seen)
			}
			if !overlaps(s.keep, seen, seen+n) { // (its rows are not grouped: decodeRowGroup)
				if err := s.rows.nullRows(seen, n); err != nil {
					return res, fmt.Errorf("page %d: %w", p.index, err)
				}
				seen += n
				continue
			}
		}
		if p.typ == pageTypeDict {
			data, err := s.pageData(ctx, g, fold.codec, p)
			if err != nil {
				return res, settle(fmt.Errorf("page %d: %w", p.index, err))
			}
			res.plan.Bytes += int64(len(data))
			if err := s.dictPage(c, l, p, read, hasDict, data, width, &dict); err != nil {
				return res, settle(err)
			}
			hasDict = true
			continue
		}
		sp := segPage{chunkPage: *p, zstdWindow: g.zstdWindow, base: seen, left: rows - seen}
		if !segmented {
			if l.exists > 0 {
				sp.base = elems
			}
			got, err := s.foldPage(ctx, g, &fold, &res, &sp, &dict, hasDict)
			if err != nil {
				return res, err
			}
			elems += got
			seen += int64(p.numValues)
			continue
		}
		if cur == nil {
			cur = &chunkSegment{}
		}
		cur.pages = append(cur.pages, sp)
		cur.bytes += int64(p.uncompressed)
		seen += int64(p.numValues)
		if cur.bytes >= segmentBytes {
			if err := dispatch(); err != nil {
				return res, settle(err)
			}
		}
	}
	if cur != nil {
		if err := dispatch(); err != nil {
			return res, settle(err)
		}
	}
	if err := settle(nil); err != nil {
		return res, err
	}
	for i, seg := range segs {
		if i == 0 {
			res.state = seg.res.state
		} else {
			res.state.Merge(&seg.res.state)
		}
		res.plan.Bytes += seg.res.plan.Bytes
		res.viewBytes += seg.res.viewBytes
		res.gpuBytes += seg.res.gpuBytes
	}
	if seen != rows {
		return res, fmt.Errorf("the pages have %d values, the column chunk metadata says %d", seen, rows)
	}
	return res, nil
}

// segmentBytes is the decompressed bytes of the data pages of a segment of
// a chunk (aggregateChunk), its last pages excepted
// (planner.PageSegmentBytes, which the planner counts the CPU's tasks by:
// about 8 ms of a core's decompressing and folding, and a state merged).
// (A variable for the tests.)
var segmentBytes int64 = planner.PageSegmentBytes

// segmentsHelped counts the segments that helpers folded (for the tests).
var segmentsHelped atomic.Int64

// chunkFold is what folding a chunk's pages needs, shared by the walk's
// goroutine and the helpers folding its segments.
type chunkFold struct {
	eng     *engine.Engine
	l       *pageLeaf
	c       *guardChunk
	codec   compress.Codec
	set     agg.Set
	ordered bool
	stats   agg.Set // the scratch's (pageScratch.stats)
}

// newState is a fresh state of the chunk, its sketch seeded by scratch s.
func (f *chunkFold) newState(s *pageScratch) agg.State {
	st := agg.New(f.l.kind.Family(), f.set)
	st.SeedSketch(s.sketches[f.l])
	return st
}

// keepSketch keeps sketch k, of a state of leaf l, to seed the next.
func (s *pageScratch) keepSketch(l *pageLeaf, k *agg.Sketch) {
	if s.sketches == nil {
		s.sketches = make(map[*pageLeaf]*agg.Sketch)
	}
	s.sketches[l] = k
}

// chunkSegment is consecutive data pages of a chunk folded into a state of
// their own (aggregateChunk).
type chunkSegment struct {
	pages   []segPage
	bytes   int64       // their decompressed bytes
	dict    column.View // the chunk's dictionary, when hasDict
	hasDict bool
	res     chunkResult
	err     error
}

// segPage is a data page as the walk recorded it, with the window its zstd
// frames need, its first row (element) in the chunk, and the chunk's rows
// left from it.
type segPage struct {
	chunkPage
	zstdWindow int64
	base, left int64
}

// help folds segment seg in worker wk's goroutine, with its scratch and its
// page guard (a fault of the mapped file is the segment's error).
func (f *chunkFold) help(ctx context.Context, wk *worker, seg *chunkSegment) {
	s, g := &wk.pages, &wk.guard
	defer func() {
		if p := recover(); p != nil {
			seg.err = faultError(p)
		}
	}()
	rows, keep, stats, mapped := s.rows, s.keep, s.stats, s.mapped
	defer func() { s.rows, s.keep, s.stats, s.mapped = rows, keep, stats, mapped }()
	s.rows, s.keep, s.stats, s.mapped = nil, nil, f.stats, f.c.mapped
	c := *f.c
	g.begin(&c)
	defer g.end()
	defer func() {
		s.page = dropCharged(c.charge, s.page)
		s.levels = dropCharged(c.charge, s.levels)
	}()
	seg.res.state = f.newState(s)
	segmentsHelped.Add(1)
	if seg.err = s.foldSegment(ctx, g, f, seg); seg.err == nil && seg.res.state.Sketch != nil {
		s.keepSketch(f.l, seg.res.state.Sketch)
	}
}

// foldSegment folds the pages of seg into its result, with scratch s and
// guard g (begun on the segment's chunk), then drops the mapping of their
// bytes (releaseMapped): a chunk's pages are not all resident at once.
func (s *pageScratch) foldSegment(ctx context.Context, g *pageGuard, f *chunkFold, seg *chunkSegment) error {
	if n := len(seg.pages); n > 0 {
		first, last := &seg.pages[0], &seg.pages[n-1]
		defer releaseMapped(f.c.mapped, first.at, last.at+int64(last.compressed)-first.at)
	}
	for i := range seg.pages {
		if _, err := s.foldPage(ctx, g, f, &seg.res, &seg.pages[i], &seg.dict, seg.hasDict); err != nil {
			return err
		}
	}
	return nil
}

// dictPage takes dictionary page p, the read-th page of chunk c of leaf l,
// whose decompressed bytes are data, as the chunk's dictionary dict.
func (s *pageScratch) dictPage(c *guardChunk, l *pageLeaf, p *chunkPage, read int, hasDict bool, data []byte, width int, dict *column.View) error {
	if err := checkDictPage(p, read, hasDict, data, width); err != nil {
		return err
	}
	n := int(p.numValues)
	ew := width // the bytes of a value of the view
	if l.flba > 0 {
		ew = 16
	}
	if l.int96 {
		ew = 8
	}
	var err error
	if s.dict, err = growCharged(c.charge, "a dictionary page", s.dict, n*ew); err != nil {
		return err
	}
	if l.dictKey && s.rows == nil {
		return errors.New("a key's dictionary indices, not aggregated")
	}
	if l.dictKey && width == 0 { // (BYTE_ARRAY entries)
		if err := s.rows.setDict(data, n); err != nil {
			return fmt.Errorf("page %d: %w", p.index, err)
		}
	} else if l.flba > 0 {
		l.widen(s.dict, data, n)
	} else if l.int96 {
		if err := int96Convert(s.dict, data, n, l.typ.(*arrow.TimestampType).Unit); err != nil {
			return fmt.Errorf("page %d: the dictionary: %w", p.index, err)
		}
	} else {
		copy(s.dict, data[:n*width])
		if l.dictKey {
			s.rows.setFixedDict(s.dict[:n*width], n)
		}
	}
	*dict = column.View{Type: l.typ, Kind: l.kind, Width: l.viewWidth(), Len: n, Values: s.dict}
	return nil
}

// foldPage folds data page p into res with scratch s and guard g (on the
// page's chunk), and returns the elements it folded (its rows, but for an
// element column). dict is the chunk's dictionary, when hasDict.
func (s *pageScratch) foldPage(ctx context.Context, g *pageGuard, f *chunkFold, res *chunkResult, p *segPage, dict *column.View, hasDict bool) (got int64, err error) {
	l, c := f.l, f.c
	width := l.width()
	g.zstdWindow = p.zstdWindow // (the walk's, for this page)
	var (
		data []byte
		st   *pageStream // a large PLAIN page read as a stream (data: its v2 levels)
		size int64       // the page's bytes
	)
	if streamedPlain(c.codec, &p.chunkPage, g.zstdWindow) && l.kind != column.Bool { // (booleans: a bit a value)
		if st, data, err = s.openPage(g, &p.chunkPage); err != nil {
			return 0, fmt.Errorf("page %d: %w", p.index, err)
		}
		defer func() {
			// A page read as a stream fails as it would decompressed
			// whole: with the error of its decompression, if any, first.
			if err != nil && ctx.Err() == nil {
				if serr := st.finish(ctx); serr != nil && ctx.Err() == nil {
					err = fmt.Errorf("page %d: %w", p.index, serr)
				}
			}
			st.close()
		}()
		size = int64(p.uncompressed)
	} else {
		if data, err = s.pageData(ctx, g, f.codec, &p.chunkPage); err != nil {
			return 0, fmt.Errorf("page %d: %w", p.index, err)
		}
		size = int64(len(data))
	}
	res.plan.Bytes += size
	var (
		n    = int(p.numValues) // rows of the page
		defs hybrid             // its definition levels (when maxDef > 0)
		vals []byte
		left = size // the bytes of a stream's values
		enc  = parquet.Encoding(p.encoding)
	)
	w := levelBitWidth(l.maxDef)
	switch p.typ {
	case pageTypeData:
		vals = data
		// The repetition levels, before the definition levels, are
		// not read (repBytes: their bytes in a stream).
		var repBytes int64
		if l.maxRep > 0 {
			var reps hybrid
			var err error
			if st != nil {
				var after int64
				after, err = s.streamV1Levels(ctx, st, parquet.Encoding(p.repEncoding), n, levelBitWidth(l.maxRep), &reps)
				repBytes = size - after
			} else {
				vals, err = splitV1Levels(vals, parquet.Encoding(p.repEncoding), n, levelBitWidth(l.maxRep), &reps, &s.legacy)
			}
			if err != nil {
				return 0, fmt.Errorf("page %d: repetition levels: %w", p.index, err)
			}
		}
		if l.maxDef > 0 {
			var err error
			if st != nil {
				left, err = s.streamV1Levels(ctx, st, parquet.Encoding(p.defEncoding), n, w, &defs)
				left -= repBytes
			} else {
				vals, err = splitV1Levels(vals, parquet.Encoding(p.defEncoding), n, w, &defs, &s.legacy)
			}
			if err != nil {
				return 0, fmt.Errorf("page %d: definition levels: %w", p.index, err)
			}
		}
	default: // pageTypeDataV2
		rl, dl := int(p.repBytes), int(p.defBytes)
		if rl < 0 || dl < 0 || int64(rl) > size || int64(dl) > size-int64(rl) {
			return 0, fmt.Errorf("page %d: levels of %d+%d bytes in a page of %d", p.index, rl, dl, size)
		}
		defs.reset(data[rl:rl+dl], w)
		vals = data[rl+dl:]
		left = size - int64(rl+dl)
	}
	if n < 0 || int64(n) > p.left {
		return 0, fmt.Errorf("page %d: %d values, but the column chunk has %d rows left", p.index, n, p.left)
	}
	if l.dictKey && !dictEncoded(enc) {
		return 0, fmt.Errorf("page %d: encoding %s in a column chunk read as dictionary indices", p.index, enc)
	}
	var pv pageValues
	switch enc {
	case parquet.Encodings.Plain:
		if st != nil {
			pv.stream, pv.left = st, left
		} else {
			pv.plain = vals
		}
	case encByteStreamSplit:
		if width == 0 { // values not read
			break
		}
		if st != nil || len(vals)%width != 0 {
			return 0, fmt.Errorf("page %d: BYTE_STREAM_SPLIT values of %d bytes, not a multiple of %d", p.index, len(vals), width)
		}
		pv.split = &byteStreams{b: vals, n: len(vals) / width}
	case parquet.Encodings.RLE:
		if l.kind != column.Bool {
			return 0, fmt.Errorf("page %d: RLE values of a %s column", p.index, l.typ)
		}
		// A 4-byte length, then the RLE/bit-packed hybrid of bit width
		// 1 (none: no values to read, or an error when some are).
		pv.rle = &hybrid{}
		pv.rle.reset(nil, 1)
		if len(vals) >= 4 {
			n := binary.LittleEndian.Uint32(vals)
			if uint64(n) > uint64(len(vals)-4) {
				return 0, fmt.Errorf("page %d: RLE booleans of %d bytes in %d", p.index, n, len(vals)-4)
			}
			pv.rle.reset(vals[4:4+n], 1)
		}
	case parquet.Encodings.PlainDict, parquet.Encodings.RLEDict:
		if !hasDict {
			return 0, fmt.Errorf("page %d: dictionary-encoded without a dictionary page", p.index)
		}
		if l.kind == column.Bool {
			return 0, fmt.Errorf("page %d: %w: dictionary-encoded booleans", p.index, arrow.ErrNotImplemented)
		}
		pv.dict = &hybrid{}
		if n > 0 {
			if len(vals) == 0 {
				return 0, fmt.Errorf("page %d: no bit width for the dictionary indices", p.index)
			}
			pv.dict.reset(vals[1:], int(vals[0]))
		}
	default:
		return 0, fmt.Errorf("page %d: encoding %s (the column chunk metadata does not list it)", p.index, enc)
	}
	got, err = s.aggregatePage(ctx, f.eng, l, res, &pv, &defs, n, p.base, dict, f.ordered)
	if err != nil {
		return 0, fmt.Errorf("page %d: %w", p.index, err)
	}
	if st != nil {
		if err := st.finish(ctx); err != nil {
			return 0, fmt.Errorf("page %d: %w", p.index, err)
		}
	}
	return got, nil
}

// aggregatePage folds the n rows of one data page, whose first row is row
// base of the chunk, and returns how many it folded. The rows of an element
// column (l.exists) are its elements: its n levels hold them, base is the
// elements before the page.
func (s *pageScratch) aggregatePage(ctx context.Context, eng *engine.Engine, l *pageLeaf, res *chunkResult, pv *pageValues, defs *hybrid, n int, base int64, dict *column.View, ordered bool) (int64, error) {
	width := l.width()
	if l.kind == column.Opaque {
		return int64(n), s.countPage(ctx, eng, l, res, defs, n, base)
	}
	row := base // the row (element) of the next window
	// Windows of PLAIN values, when no rows are kept, are cut by their
	// values: a view of pageWindow non-null values each (the CPU backend's
	// morsels of the page's values, as a view of the whole page would have),
	// however many nulls lie between them.
	byValues := (pv.plain != nil || pv.stream != nil) && !ordered && l.exists == 0
	for lo := 0; lo < n; {
		m := min(pageWindow, n-lo)
		// k: the non-null values of rows [lo, lo+m); spread: whether the
		// view has them at their rows, with a validity bitmap. e: the rows
		// (elements) of the levels [lo, lo+m).
		k, spread := m, false
		e := m
		if l.maxDef > 0 {
			var err error
			switch {
			case l.exists > 0:
				var valid []byte
				if ordered {
					s.valid = grow(s.valid, int(bitutil.BytesForBits(int64(m))))
					valid = s.valid
				}
				e, k, err = defs.elements(l.maxDef, l.exists, m, valid)
				spread = ordered && k < e
			case ordered:
				s.valid = grow(s.valid, int(bitutil.BytesForBits(int64(m))))
				k, err = defs.bitmap(l.maxDef, m, s.valid)
				spread = k < m
			case byValues:
				m, k, err = defs.countUpTo(l.maxDef, n-lo, pageWindow)
			default:
				k, err = defs.count(l.maxDef, m)
			}
			if err != nil {
				return 0, fmt.Errorf("definition levels: %w", err)
			}
			if l.exists == 0 {
				e = m // (countUpTo sets m)
			}
		}
		lo += m
		at := row
		row += int64(e)
		if k == 0 {
			if s.rows != nil {
				if err := s.rows.nullRows(at, int64(e)); err != nil {
					return 0, err
				}
				continue
			}
			res.state.AddNulls(int64(e))
			continue
		}
		v := column.View{Type: l.typ, Kind: l.kind, Width: l.viewWidth(), Len: k, Row: at}
		ew := width // element width of v.Values
		if l.kind == column.Bool {
			if err := s.boolValues(pv, &v); err != nil {
				return 0, err
			}
		} else if pv.dict != nil {
			idx := s.rows.indicesAt(l, at, k, e) // (a dictKey leaf's window without nulls: in place)
			if idx == nil {
				s.idx = grow(s.idx, 4*k)
				idx = s.idx
			}
			if err := pv.dict.indices(dict.Len, column.Slice[int32](idx)); err != nil {
				return 0, fmt.Errorf("dictionary indices: %w", err)
			}
			v.Values, ew = idx, 4
			if !l.dictKey { // (a dictKey leaf's rows are the indices: pageRows)
				v.IndexKind, v.Dict = column.Int32, dict
			}
		} else if pv.split != nil {
			s.values = grow(s.values, k*width)
			if err := pv.split.read(s.values, width); err != nil {
				return 0, err
			}
			v.Values = s.values
		} else if pv.stream != nil {
			// A window of values at a time from the stream, into a buffer
			// of a window.
			if pv.left < int64(k*width) {
				return 0, fmt.Errorf("%d bytes of values left for %d values of %d bytes", pv.left, k, width)
			}
			s.values = grow(s.values, k*width)
			if err := pv.stream.read(ctx, s.values); err != nil {
				return 0, err
			}
			v.Values = s.values
			pv.left -= int64(k * width)
		} else {
			if len(pv.plain) < k*width {
				return 0, fmt.Errorf("%d bytes of values left for %d values of %d bytes", len(pv.plain), k, width)
			}
			v.Values, pv.plain = pv.plain[:k*width], pv.plain[k*width:]
		}
		if l.flba > 0 && pv.dict == nil {
			s.wide = grow(s.wide, 16*k)
			l.widen(s.wide, v.Values, k)
			v.Values, ew = s.wide, 16
		}
		if l.int96 && pv.dict == nil {
			s.wide = grow(s.wide, 8*k)
			if err := int96Convert(s.wide, v.Values, k, l.typ.(*arrow.TimestampType).Unit); err != nil {
				return 0, err
			}
			v.Values, ew = s.wide, 8
		}
		if s.rows != nil { // (placed at their rows, not spread)
			var valid []byte
			if spread {
				valid = s.valid
			}
			if err := s.rows.place(&v, valid, at, e); err != nil {
				return 0, err
			}
			continue
		}
		if spread && l.kind == column.Bool {
			s.spread = grow(s.spread, int(bitutil.BytesForBits(int64(e))))
			spreadBits(v.Values, v.Offset, s.valid, e, s.spread)
			v.Values, v.Offset, v.Len, v.Validity, v.NullCount = s.spread, 0, e, s.valid, e-k
		} else if spread {
			s.spread = grow(s.spread, e*ew)
			switch ew {
			case 2:
				spreadValues(column.Slice[uint16](v.Values), s.valid, e, column.Slice[uint16](s.spread))
			case 4:
				spreadValues(column.Slice[uint32](v.Values), s.valid, e, column.Slice[uint32](s.spread))
			case 16:
				s.valid2 = grow(s.valid2, int(bitutil.BytesForBits(int64(2*e))))
				for i := 0; i < e; i++ {
					set := bitutil.BitIsSet(s.valid, i)
					bitutil.SetBitTo(s.valid2, 2*i, set)
					bitutil.SetBitTo(s.valid2, 2*i+1, set)
				}
				spreadValues(column.Slice[uint64](v.Values), s.valid2, 2*e, column.Slice[uint64](s.spread))
			case 8:
				spreadValues(column.Slice[uint64](v.Values), s.valid, e, column.Slice[uint64](s.spread))
			default: // fixed_size_binary of any width
				spreadBytes(v.Values, ew, s.valid, e, s.spread)
			}
			v.Values, v.Len, v.Validity, v.NullCount = s.spread, e, s.valid, e-k
		} else {
			res.state.AddNulls(int64(e - k))
		}
		if s.mapped != nil && within(v.Values, s.mapped) && eng.PlanView(ctx, &v, &res.state).GPUFraction > 0 {
			s.values = grow(s.values, len(v.Values))
			copy(s.values, v.Values)
			v.Values = s.values
		}
		if err := res.foldView(ctx, eng, &v); err != nil {
			return 0, err
		}
	}
	return row - base, nil
}

// boolValues makes v (a Bool view of v.Len values) the next v.Len booleans
// of the page: PLAIN bits where they lie, RLE ones unpacked into s.bools.
func (s *pageScratch) boolValues(pv *pageValues, v *column.View) error {
	k := v.Len
	if pv.rle != nil {
		s.bools = grow(s.bools, int(bitutil.BytesForBits(int64(k))))
		clear(s.bools)
		if _, err := pv.rle.bitmap(1, k, s.bools); err != nil {
			return fmt.Errorf("RLE booleans: %w", err)
		}
		v.Values = s.bools
		return nil
	}
	if int64(len(pv.plain))*8-int64(pv.bit) < int64(k) {
		return fmt.Errorf("%d bits of values left for %d booleans", len(pv.plain)*8-pv.bit, k)
	}
	end := pv.bit + k
	v.Values, v.Offset = pv.plain[:(end+7)/8], pv.bit
	pv.plain, pv.bit = pv.plain[end/8:], end%8
	return nil
}

// spreadBits writes the m bits of rows [0, m) to out: bit i is the next of
// the dense bits of src from bit off when valid's bit i is set, else 0.
func spreadBits(src []byte, off int, valid []byte, m int, out []byte) {
	j := off
	for i := 0; i < m; i++ {
		set := false
		if bitutil.BitIsSet(valid, i) {
			set = bitutil.BitIsSet(src, j)
			j++
		}
		bitutil.SetBitTo(out, i, set)
	}
}

// countPage counts the n rows of one data page of an Opaque leaf, whose
// first row is row base of the chunk, from its definition levels: its values
// are not read.
func (s *pageScratch) countPage(ctx context.Context, eng *engine.Engine, l *pageLeaf, res *chunkResult, defs *hybrid, n int, base int64) error {
	for lo := 0; lo < n; {
		m := min(pageWindow, n-lo)
		v := column.View{Type: l.typ, Kind: column.Opaque, Len: m, Row: base + int64(lo)}
		if l.maxDef > 0 {
			s.valid = grow(s.valid, int(bitutil.BytesForBits(int64(m))))
			k, err := defs.bitmap(l.maxDef, m, s.valid)
			if err != nil {
				return fmt.Errorf("definition levels: %w", err)
			}
			if k < m {
				v.Validity, v.NullCount = s.valid, m-k
			}
		}
		lo += m
		if err := res.foldView(ctx, eng, &v); err != nil {
			return err
		}
	}
	return nil
}

// spreadValues places the dense values at the rows whose bit is set in valid
// (rows [0, m)); the other rows of out are left as they were.
//
// A word of 64 rows without a null goes in one copy. Where nulls are few
// (at most one row in 8 of all), the valid rows of the others go in a copy
// per run (a column of 5% nulls has about 3 in a word: 4 copies, not 61
// stores each behind a bit scan); otherwise a row at a time. Where the CPU
// has AVX-512, the whole words of 32- and 64-bit values are spread by
// masked expansions first (spreadWords), 8 or 16 rows a step.
func spreadValues[T uint16 | uint32 | uint64](dense []T, valid []byte, m int, out []T) {
	runs := 8*len(dense) >= 7*m
	w0, j := spreadWords(dense, valid, m, out)
	for w := w0; w*64 < m; w++ {
		word := validWord(valid, w, m)
		base := w * 64
		switch {
		case word == ^uint64(0):
			copy(out[base:base+64], dense[j:j+64])
			j += 64
		case runs:
			for word != 0 {
				s := bits.TrailingZeros64(word)
				r := bits.TrailingZeros64(^(word >> s)) // the run's rows: < 64, as a bit of the word is clear
				copy(out[base+s:base+s+r], dense[j:j+r])
				j += r
				word &^= (1<<r - 1) << s
			}
		default:
			for ; word != 0; word &= word - 1 {
				out[base+bits.TrailingZeros64(word)] = dense[j]
				j++
			}
		}
	}
}

// validWord is word w of validity bitmap valid of m bits (the bits past m
// clear).
func validWord(valid []byte, w, m int) uint64 {
	var word uint64
	for b := 0; b < 8 && w*8+b < len(valid); b++ {
		word |= uint64(valid[w*8+b]) << (8 * b)
	}
	if rest := m - w*64; rest < 64 {
		word &= 1<<rest - 1
	}
	return word
}

// spreadBytes is spreadValues for values of w bytes.
func spreadBytes(dense []byte, w int, valid []byte, m int, out []byte) {
	j := 0
	for i := 0; i < m; i++ {
		if bitutil.BitIsSet(valid, i) {
			copy(out[i*w:(i+1)*w], dense[j*w:(j+1)*w])
			j++
		}
	}
}
